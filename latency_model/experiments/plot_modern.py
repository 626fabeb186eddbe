"""Figure of the modern-recovery experiment (Figures 9 and 10 for today's TCP), drawn from its
exported data (the JSON dict) only."""

from __future__ import annotations

from pathlib import Path

from ..studies.plots import legend_below, pyplot, save_figure

__all__ = ["plot_modern"]

_STYLE = {"newreno": ("NewReno", "#444444"), "lt": ("LT", "#1f77b4"), "proposal": ("proposal", "#2ca02c"),
          "er": ("ER", "#9467bd"), "sack-rack-tlp": ("SACK+RACK-TLP", "#d62728"),
          "sack-rack-tlp-prr": ("SACK+RACK-TLP+PRR", "#ff7f0e"),
          "size-based": ("size-based (proposal below 10 KB, LT above)", "#8c564b")}
_DASHED = ("size-based",)  # on top of the proposal's and LT's lines: dashed to show both


def _num(x):
    return float("nan") if x is None else float(x)


def plot_modern(data: dict, path) -> Path:
    """One column per initial window: the expected latency at each p (model lines, simulated
    means with 95% CIs as points; Figure 9), then the cut of the latency given one loss
    against NewReno (model lines, exact single-loss simulation as points; Figure 10).

    Parameters
    ----------
    data : dict
        The experiment's exported JSON (``ModernResult.to_dict()``, NaN as None).
    path : str or Path
        PNG file, written atomically.

    Returns
    -------
    Path
    """
    plt = pyplot()
    par = data["params"]
    iws, ps = par["iw_packets"], par["ps"]
    rows = data["series"]
    # every variant of the data, so that the legend matches the CSV (size-based is added to the
    # series when NewReno, LT and the proposal run)
    variants = list(dict.fromkeys([*par["variants"], *(r["variant"] for r in rows)]))
    fig, axes = plt.subplots(len(ps) + 1, len(iws), figsize=(5.2 * len(iws), 2.6 * (len(ps) + 1)),
                             squeeze=False)
    for col, iw in enumerate(iws):
        for row, p in enumerate(ps):
            ax = axes[row][col]
            for v in variants:
                sel = [r for r in rows if r["variant"] == v and r["iw_packets"] == iw and r["p"] == p]
                label, color = _STYLE[v]
                x = [r["size_packets"] for r in sel]
                ax.plot(x, [_num(r["model_expected_s"]) for r in sel], "--" if v in _DASHED else "-", color=color,
                        lw=1.2, label=label if (row, col) == (0, 0) else None)
                mean = [_num(r["sim_mean_s"]) for r in sel]
                err = [[m - _num(r["sim_ci_low_s"]) for m, r in zip(mean, sel)],
                       [_num(r["sim_ci_high_s"]) - m for m, r in zip(mean, sel)]]
                ax.errorbar(x, mean, yerr=err, fmt="o", ms=2.2, color=color, elinewidth=0.6)
            ax.set_title(f"expected latency, IW {iw}, p = {p:g}", fontsize=9)
            ax.set_ylabel("seconds", fontsize=8)
        ax = axes[len(ps)][col]
        for v in variants:
            if v == "newreno":
                continue
            sel = [r for r in rows if r["variant"] == v and r["iw_packets"] == iw and r["p"] == ps[-1]]
            label, color = _STYLE[v]
            x = [r["size_packets"] for r in sel]
            ax.plot(x, [_num(r["model_cut_l1"]) for r in sel], "--" if v in _DASHED else "-", color=color, lw=1.2)
            ax.plot(x, [_num(r["sim_cut_l1"]) for r in sel], "o", ms=2.2, color=color)
        ax.axhline(0.0, color="k", lw=0.5)
        ax.set_title(f"cut of L_1 against NewReno, IW {iw}", fontsize=9)
        ax.set_xlabel("file size, packets", fontsize=8)
        ax.set_ylabel("1 - L_1 / L_1(NewReno)", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.suptitle(f"Figures 9-10 for today's TCP: lines model, points simulation ({par['runs']} runs per "
                 f"point, 95% CI; L_1 exact single-loss runs), stack {par['stack']}", fontsize=9)
    legend_below(fig, handles, labels)
    return save_figure(fig, path, dpi=100)
