"""Figures of the ASS experiment, drawn from its exported data (the JSON dict) only."""

from __future__ import annotations

from pathlib import Path

from ..studies.plots import legend_below, pyplot, save_figure

__all__ = ["plot_ass"]

_COLOURS = {1: "#555555", 2: "#d62728", 3: "#1f77b4", 4: "#2ca02c"}
_KINDS = {"cwnd": ("cwnd_packets", "cwnd, packets"),
          "throughput": ("throughput_series_kbps", "throughput, kb/s")}


def plot_ass(data: dict, path, kind: str = "cwnd") -> Path:
    """A grid of panels over time, one line per algorithm: rows = IFQ, columns = (bottleneck, IW).

    Parameters
    ----------
    data : dict
        The experiment's exported JSON (``AssResult.to_dict()``, NaN as None).
    path : str or Path
        PNG file, written atomically.
    kind : {"cwnd", "throughput"}
        Congestion window at each bin end (packets), or acknowledged payload per bin (kb/s).

    Returns
    -------
    Path
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of cwnd, throughput, got {kind!r}")
    plt = pyplot()

    key, label = _KINDS[kind]
    p = data["params"]
    cols = [(bn, w0) for bn in p["bottlenecks_mbps"] for w0 in p["initial_windows"]]
    rows = list(p["queues"])
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(3.2 * len(cols), 1.9 * len(rows) + 0.6),
                             squeeze=False, sharex=True)
    by = {(r["bottleneck_mbps"], r["iw_packets"], r["queue_packets"], r["algorithm"]): r for r in data["series"]}
    for i, q in enumerate(rows):
        for j, (bn, w0) in enumerate(cols):
            ax = axes[i][j]
            for a in p["algorithms"]:
                r = by.get((bn, w0, q, a))
                if r is None:
                    continue
                y = [float("nan") if v is None else v for v in r[key]]
                ax.step(r["time_s"], y, where="post", lw=0.9, color=_COLOURS.get(a), label=f"Alg {a}")
            ax.set_title(f"{bn:g} Mb/s, IW {w0}, IFQ {q}", fontsize=8)
            ax.tick_params(labelsize=7)
            if j == 0:
                ax.set_ylabel(label, fontsize=7)
            if i == len(rows) - 1:
                ax.set_xlabel("time, s", fontsize=7)
    fig.suptitle(f"ASS experiment ({label}): one flow, {p['horizon_s']:g} s runs (scale {p['scale']:g})",
                 fontsize=9)
    legend_below(fig, *axes[0][0].get_legend_handles_labels(), fontsize=6)
    return save_figure(fig, path, dpi=80)
