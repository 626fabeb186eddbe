"""Figure of the SmoothTCP experiment, drawn from its exported data (the JSON dict) only."""

from __future__ import annotations

from pathlib import Path

from ..studies.plots import legend_below, pyplot, save_figure

__all__ = ["plot_smoothtcp"]

_LABELS = {"standard": "Standard TCP", "smoothtcp": "SmoothTCP"}


def _nan(x):
    return float("nan") if x is None else x


def plot_smoothtcp(data: dict, path) -> Path:
    """One column per rule (the paper's Figures 3-8): RTT per flow (bin mean, min-max band),
    cwnd per flow, router queue and cumulative drops, against time.

    Parameters
    ----------
    data : dict
        The experiment's exported JSON (``SmoothTcpResult.to_dict()``, NaN as None).
    path : str or Path
        PNG file, written atomically.

    Returns
    -------
    Path
    """
    plt = pyplot()
    import numpy as np

    rules = [r["rule"] for r in data["series"]]
    fig, axes = plt.subplots(3, len(rules), figsize=(4.2 * len(rules), 7.5), sharex=True, squeeze=False)
    for col, rule in enumerate(rules):
        fs = [r for r in data["flow_series"] if r["rule"] == rule]
        for flow in sorted({r["flow"] for r in fs}):
            rows = [r for r in fs if r["flow"] == flow]
            t = np.array([r["t_s"] for r in rows])
            mean = np.array([_nan(r["rtt_mean_s"]) for r in rows])
            lo = np.array([_nan(r["rtt_min_s"]) for r in rows])
            hi = np.array([_nan(r["rtt_max_s"]) for r in rows])
            line, = axes[0, col].plot(t, mean, lw=1, label=f"flow {flow}")
            axes[0, col].fill_between(t, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
            axes[1, col].plot(t, [_nan(r["cwnd_packets"]) for r in rows], lw=1, label=f"flow {flow}")
        qs = [r for r in data["queue_series"] if r["rule"] == rule]
        t = np.array([r["t_s"] for r in qs])
        axes[2, col].plot(t, [r["queue_packets"] for r in qs], lw=1, color="k", label="queue (mean per bin)")
        ax2 = axes[2, col].twinx()
        ax2.plot(t, np.cumsum([r["drops"] for r in qs]), lw=1, color="tab:red", label="drops (cumulative)")
        ax2.set_ylabel("drops", color="tab:red", fontsize=8)
        ax2.set_ylim(bottom=0)
        axes[0, col].set_title(_LABELS.get(rule, rule), fontsize=10)
        axes[0, col].set_ylabel("RTT, s (bin mean, min-max)", fontsize=8)
        axes[1, col].set_ylabel("cwnd, packets", fontsize=8)
        axes[2, col].set_ylabel("queue, packets", fontsize=8)
        axes[2, col].set_xlabel("time, s", fontsize=8)
    p = data["params"]
    fig.suptitle(f"SmoothTCP experiment: {p['flows']} flows, {p['horizon_s']:g} s, queue {p['queue_packets']}, "
                 f"tau {p['tau']}, kappa {p['kappa']:g}", fontsize=10)
    handles, labels = [], []
    for ax in (axes[0, 0], axes[2, 0], ax2):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    legend_below(fig, handles, labels)
    return save_figure(fig, path, dpi=90)
