"""Figure of the Burst TCP experiment, drawn from its exported data (the JSON dict) only."""

from __future__ import annotations

from pathlib import Path

from ..studies.plots import pyplot, save_figure

__all__ = ["plot_btcp"]

_LABELS = {"newreno": "NewReno", "btcp4": "B-TCP(4)", "btcp8": "B-TCP(8)"}


def plot_btcp(data: dict, path) -> Path:
    """Bar charts of mean mice transfer time and mice loss % with 95% CIs, one bar per variant.

    Parameters
    ----------
    data : dict
        The experiment's exported JSON (``BtcpResult.to_dict()``, NaN as None).
    path : str or Path
        PNG file, written atomically.

    Returns
    -------
    Path
    """
    plt = pyplot()

    rows = data["series"]
    names = [_LABELS.get(r["variant"], r["variant"]) for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, metric, title in ((axes[0], "mice_mean_s", "mean mice transfer time, s"),
                              (axes[1], "mice_loss_pct", "mice packets lost, %")):
        mean = [r[metric] if r[metric] is not None else float("nan") for r in rows]
        err = [[m - (r[f"{metric}_lo"] if r[f"{metric}_lo"] is not None else m) for m, r in zip(mean, rows)],
               [(r[f"{metric}_hi"] if r[f"{metric}_hi"] is not None else m) - m for m, r in zip(mean, rows)]]
        ax.bar(names, mean, yerr=err, capsize=4, color=["#777777", "#1f77b4", "#ff7f0e"][: len(rows)])
        ax.set_title(title, fontsize=10)
    p = data["params"]
    fig.suptitle(f"Burst TCP experiment: {p['n_flows']} flows, queue {p['queue_packets']} packets, "
                 f"{p['seeds']} seeds (95% CI)", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
