"""Figure of the NGWA experiment, drawn from its exported data (the JSON dict) only."""

from __future__ import annotations

from pathlib import Path

from ..studies.plots import pyplot, save_figure

__all__ = ["plot_ngwa"]


def plot_ngwa(data: dict, path) -> Path:
    """Bars of mean lost packets and triple dupACKs per variant (ours, with 95% CIs), the
    paper's Table 2 / Section 3.3 numbers as black dots on a second axis (its runs are longer).

    Parameters
    ----------
    data : dict
        The experiment's exported JSON (``NgwaResult.to_dict()``, NaN as None).
    path : str or Path
        PNG file, written atomically.

    Returns
    -------
    Path
    """
    plt = pyplot()

    rows = data["series"]
    names = [r["variant"] for r in rows]
    x = list(range(len(rows)))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for ax, metric, paper, title in ((axes[0], "lost", "paper_lost", "lost packets per round"),
                                     (axes[1], "triple_dupacks", "paper_triple_dupacks",
                                      "triple dupACKs per round")):
        mean = [r[metric] for r in rows]
        lo = [r[f"{metric}_lo"] if r[f"{metric}_lo"] is not None else m for m, r in zip(mean, rows)]
        hi = [r[f"{metric}_hi"] if r[f"{metric}_hi"] is not None else m for m, r in zip(mean, rows)]
        ax.bar(x, mean, yerr=[[m - a for m, a in zip(mean, lo)], [b - m for m, b in zip(mean, hi)]],
               capsize=3, color="#1f77b4", label="ours")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        twin = ax.twinx()
        pts = [(i, r[paper]) for i, r in zip(x, rows) if r[paper] is not None]
        if pts:
            twin.plot([p[0] for p in pts], [p[1] for p in pts], "ko", ms=4, label="paper")
        twin.set_ylabel("paper (600 s, its topology)", fontsize=8)
        twin.set_ylim(bottom=0)
    p = data["params"]
    fig.suptitle(f"NGWA experiment: 4 flows, queue {p['queue_packets']} packets, {p['horizon_s']:g} s runs, "
                 f"{p['rounds']} rounds (95% CI); dots: the paper", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
