"""Trace figures drawn from their tidy rows only: Figures 1-3 and 5, and ``trace --plot``.

Two panels over time: above, the model's sending rate (packets per RTT) and the simulated
congestion window (packets); below, what is sent: the model's file offset and every
simulated transmission (first sends, retransmissions, drops). Timeouts and fast recovery
are marked in both halves. Figure 5 shades the two stretches where one loss times out
(the first y_to bytes and the last dup_t packets) and colours each simulated packet by how
its loss alone is repaired. The rows are :data:`~latency_model.studies.trace_figures.TRACE_COLUMNS`.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .export import read_typed_csv
from .plots import draw_with, pyplot, save_figure

__all__ = ["is_trace_csv", "read_trace_rows", "build_trace_figure", "draw_trace_figure", "save_rule_trace_plot"]

_MODEL = "#1f3b73"
_SIM = "#d95f02"
_TIMEOUT = "#c0392b"
_FAST = "#7570b3"
_OK = "#1b9e77"


def is_trace_csv(path) -> bool:
    """True if the CSV at ``path`` has the trace figures' columns (``time_s``, ``unit``)."""
    with open(path, newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh), [])
    return "time_s" in header and "unit" in header


def read_trace_rows(path) -> list[dict]:
    """Rows of a trace CSV, numbers parsed (empty cells as ``None``).

    Raises
    ------
    ValueError
        If a column of the trace schema is missing or there are no rows.
    """
    from .trace_figures import TRACE_COLUMNS

    return read_typed_csv(path, TRACE_COLUMNS, floats=("time_s", "value"), ints=("segment",))


def _pick(rows, source, series, event=None):
    return [r for r in rows if r["source"] == source and r["series"] == series
            and (event is None or r["event"] == event)]


def build_trace_figure(rows: list[dict], title: str | None = None, setting: str | None = None):
    """The matplotlib figure of trace rows (not saved); see the module docstring.

    Parameters
    ----------
    rows : list of dict
        Trace rows (:func:`read_trace_rows`, or
        :func:`~latency_model.studies.trace_figures.trace_rows` directly).
    title : str, optional
    setting : str, optional
        Setting line(s) under the title; clauses separated by ``"; "`` go on separate lines.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = pyplot()
    fig, (top, bot) = plt.subplots(2, 1, sharex=True, figsize=(6.4, 7.4))
    mw = _pick(rows, "model", "window")
    mo = _pick(rows, "model", "offset")
    trace = _pick(rows, "simulation", "trace")
    thresholds = {r["event"]: r for r in _pick(rows, "model", "threshold")}
    notes = _shade_regions(top, mw, thresholds) if thresholds else []
    top.plot([r["time_s"] for r in mw], [r["value"] for r in mw], color=_MODEL, lw=1.6,
             label="model: sending rate (packets per RTT)")
    if trace:
        top.step([r["time_s"] for r in trace], [r["value"] for r in trace], where="post", color=_SIM, lw=1.0,
                 label="simulation: cwnd (packets)")
    bot.plot([r["time_s"] for r in mo], [r["value"] for r in mo], color=_MODEL, lw=1.6,
             label="model: data sent (file offset, packets)")
    for event, marker, color, label, size in (
            ("send", "o", _SIM, "simulation: packet sent (segment + 1)", 3),
            ("retransmit", "D", _SIM, "simulation: retransmission", 4),
            ("drop", "x", _TIMEOUT, "simulation: lost on the path", 7)):
        pts = [r for r in trace if r["event"] == event]
        if pts:
            bot.plot([r["time_s"] for r in pts], [r["segment"] + 1 for r in pts], ls="none", marker=marker,
                     ms=size, color=color, mfc=color if marker != "D" else "white", label=label)
    single = _pick(rows, "simulation", "single_loss")
    for letter, color, label in (("T", _TIMEOUT, "simulation: its loss alone times out (T)"),
                                 ("F", _OK, "simulation: its loss alone is fast-retransmitted (F)")):
        pts = [r for r in single if r["event"] == letter]
        if pts:
            bot.plot([r["time_s"] for r in pts], [r["segment"] + 1 for r in pts], ls="none", marker="s",
                     ms=7, mfc="none", mec=color, mew=1.3, label=label)
    _mark_events(top, bot, rows, trace)
    done_m = [r["time_s"] for r in _pick(rows, "model", "event", "done")]
    done_s = [r["time_s"] for r in trace if r["event"] == "done"]
    done = [f"model: done at {done_m[-1]:.3f} s" if done_m else "",
            f"simulation: last ACK at {done_s[-1]:.3f} s" if done_s else ""]
    if any(done):
        notes.append("; ".join(d for d in done if d))
    if notes:  # above the top panel, never over its curves
        top.text(0.0, 1.02, "\n".join(notes), transform=top.transAxes, ha="left", va="bottom", fontsize=7,
                 color="0.15", linespacing=1.3)
    top.set_ylabel("window (packets; model: rate x RTT / MSS)", fontsize=8)
    bot.set_ylabel("packets sent (file offset / MSS)", fontsize=8)
    bot.set_xlabel("time since the first packet was sent (s)")
    top.set_ylim(bottom=0)
    bot.set_ylim(bottom=0)
    for ax in (top, bot):
        ax.grid(alpha=0.3)
    fig.suptitle(title or "one transfer: model and simulation", fontsize=10, y=0.985)
    if setting:
        fig.text(0.5, 0.95, setting.replace("; ", "\n"), ha="center", va="top", fontsize=7, color="0.25")
    handles, labels = [], []
    for ax in (top, bot):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=6.8, frameon=False)
    # room for the notes between the setting lines and the top panel
    fig.subplots_adjust(left=0.11, right=0.98, top=0.82 - 0.021 * len(notes), bottom=0.19, hspace=0.08)
    return fig


def _mark_events(top, bot, rows, trace) -> None:
    """Model timeouts (RTO wait shaded), model fast recovery, simulated timeouts and fast retransmits."""
    events = _pick(rows, "model", "event")
    losses = [r for r in events if r["event"] == "loss"]
    for loss in losses:
        resume = next((r for r in events if r["event"] == "timeout" and r["segment"] == loss["segment"]
                       and r["time_s"] >= loss["time_s"]), None)
        for ax in (top, bot):
            if resume is not None:
                ax.axvspan(loss["time_s"], resume["time_s"], color="0.85", alpha=0.6, lw=0,
                           label="model: waiting for the RTO after the loss")
            else:
                ax.axvline(loss["time_s"], color=_MODEL, ls=":", lw=1.2,
                           label="model: loss, fast recovery (rate halved)")
    for event, color, ls, label in (("timeout", _TIMEOUT, "--", "simulation: timeout"),
                                    ("fast_retransmit", _FAST, "-.", "simulation: fast retransmit")):
        for r in (r for r in trace if r["event"] == event):
            for ax in (top, bot):
                ax.axvline(r["time_s"], color=color, ls=ls, lw=1.0, label=label)


def _shade_regions(ax, mw, thresholds) -> list[str]:
    """Figure 5: shade the model's rate where one loss times out; the lines saying why."""
    t = [r["time_s"] for r in mw]
    w = [r["value"] for r in mw]
    t_yto = thresholds.get("y_to", {}).get("time_s")
    t_tail = thresholds.get("tail_start", {}).get("time_s")
    end = t[-1] if t else 0.0
    t_yto = end if t_yto is None else t_yto
    t_tail = end if t_tail is None else t_tail
    ax.fill_between(t, w, where=[x <= t_yto for x in t], color=_TIMEOUT, alpha=0.25, lw=0,
                    label="model: a loss here times out (first y_to bytes; last dup_t packets)")
    ax.fill_between(t, w, where=[x >= t_tail for x in t], color=_TIMEOUT, alpha=0.25, lw=0)
    ax.fill_between(t, w, where=[t_yto <= x <= t_tail for x in t], color=_OK, alpha=0.2, lw=0,
                    label="model: a loss here is fast-retransmitted")
    yto = thresholds.get("y_to", {}).get("value")
    fmin = thresholds.get("filesize_min", {}).get("value")
    ftab = thresholds.get("filesize_min_table", {}).get("value")
    if yto is not None and fmin is not None:
        text = (f"y_to = {yto:.0f} B; tail = {fmin - yto:.0f} B (dup_t packets)\n"
                f"FileSize_min = y_to + tail = {fmin:.0f} B (fluid)")
        if ftab is not None:
            text += f"; {ftab:.0f} B in Table 1's count"
        text += "\na smaller file has no green stretch: any single loss times out"
        return text.split("\n")
    return []


def draw_trace_figure(csv_path, out_stem=None, title: str | None = None) -> list[Path]:
    """Draw a trace CSV as ``<stem>.png`` and ``<stem>.svg`` (title and setting from the
    JSON sidecar when there is one; see :func:`latency_model.studies.plots.read_setting`).

    Returns
    -------
    list of Path
        The PNG and SVG paths, written atomically.
    """
    return draw_with(build_trace_figure, read_trace_rows(csv_path), csv_path, out_stem, title)


def save_rule_trace_plot(d: dict, path) -> Path:
    """Draw a ``trace --rtts`` result (:func:`latency_model.cli.sim.rule_trace`) to ``path``:
    the rule's closed-form window and the simulated one at the start of each RTT, packets
    (log scale when they span more than a factor of 50).

    Returns
    -------
    Path
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    cf, sm = d["closed_form"], d["simulated"]
    ax.plot(cf["rtt"], cf["cwnd"], color=_MODEL, lw=1.6, marker="o", ms=3, label="closed form (model)")
    ax.plot(sm["rtt"], sm["cwnd"], color=_SIM, lw=0, marker="s", ms=5, mfc="none", label="simulation")
    values = [v for v in list(cf["cwnd"]) + list(sm["cwnd"]) if v and v > 0]
    if values and max(values) / min(values) > 50:
        ax.set_yscale("log")
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in d["params"].items()
                       if v is not None)
    tcp = d["tcp"]
    limits = ", ".join(f"{name} = {tcp[key]:g}" if tcp[key] < 1e9 else f"{name} none"
                       for name, key in (("W_SS", "w_ss"), ("M", "rwnd")))
    fig.suptitle(f"rule {d['rule']}{' (' + params + ')' if params else ''}: window per RTT", fontsize=10)
    ax.set_title(f"W0 = {tcp['w0']:g}, {limits}, b = {tcp['b']}, RTT = {tcp['rtt_s']:g} s, "
                 f"MSS = {tcp['mss_bytes']} B; loss-free", fontsize=7.5)
    ax.set_xlabel("RTT (round)")
    ax.set_ylabel("cwnd at the start of the RTT (packets)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.subplots_adjust(left=0.12, right=0.97, top=0.85, bottom=0.12)
    out = save_figure(fig, path, dpi=110, close=False)
    plt.close(fig)
    return out
