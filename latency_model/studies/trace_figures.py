"""Figures 1-3 and 5 of Ayesta & Avrachenkov (Section 2): one transfer over time, the fluid
model beside the packet simulator with the same loss.

Figures 1-3 show the sending rate when one packet is lost before y_to (a timeout), in the
middle (fast retransmit, the rate halved) and among the last dup_t packets (a timeout: too
few duplicate ACKs). Figure 5 illustrates FileSize_min = y_to + dup_t MSS: the bytes sent
before the rate reaches 1 + dup_t packets per RTT and the last dup_t packets are the two
stretches where one loss times out.

The model side is :func:`model_trace`: the sending rate of the fluid law
(:mod:`latency_model.model.fluid`: ``l0`` and ``w_f`` of the bytes sent) through the states
of the paper's recursion for the given losses (the regions and post-loss states of
:mod:`latency_model.model._regions`, the same the solver integrates), so that the curve's
end is the model's latency given those losses. The simulator side is one
:func:`~latency_model.sim.transfer.run_transfer` with a deterministic drop list, its
event trace with every lost transmission marked ``drop``
(:func:`~latency_model.sim.traces.mark_drops`).

Both go into one tidy table (:data:`TRACE_COLUMNS`); :mod:`latency_model.studies.trace_plots`
draws it. Windows are in packets: the model's rate W is ``window * MSS / RTT`` bytes/s
(the paper's rate in units of MSS/RTT, as in :mod:`latency_model.model.fluid`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ..checks import check_int
from ..params import TcpParams, apply_variant, variant_of

__all__ = [
    "TRACE_COLUMNS",
    "TRACE_FIGURES",
    "ModelTrace",
    "model_trace",
    "simulated_trace",
    "trace_rows",
    "trace_setting_text",
    "trace_figure",
]

TRACE_COLUMNS = ["figure", "source", "series", "time_s", "value", "unit", "segment", "event"]
"""Tidy schema of ``figures/fig{1,2,3,5}.csv`` and of ``trace --plot``'s data.

``source`` ``model``: series ``window`` (value: the fluid rate in packets per RTT, i.e.
rate x RTT / MSS) and ``offset`` (value: file offset of the data sent so far in the
model's current state, in packets: bytes / MSS), sampled at ``time_s``; series ``event`` (``event``:
``loss`` with ``value`` = y, the bytes sent in the state before the loss, and ``segment``
the lost packet; ``timeout`` when sending resumes after the RTO; ``fast_recovery``;
``done``); Figure 5: series ``threshold`` (``event`` ``y_to``, ``tail_start``,
``filesize_min``, ``filesize_min_table``; ``value`` in bytes; ``time_s`` when the
loss-free model has sent that much, empty beyond the file).
``source`` ``simulation``: series ``trace``, one row per event of the simulated trace
(``event`` as in :class:`~latency_model.sim.transfer.TraceRow`, plus ``drop``; ``value``:
cwnd after the event, packets); Figure 5: series ``single_loss`` (``segment`` i,
``event`` ``T`` or ``F``: how a loss of packet i alone is repaired, ``time_s`` its
loss-free send time, ``value`` the completion time with that loss, seconds)."""

TRACE_FIGURES = {
    "fig1": {"title": "Figure 1: one loss before y_to (timeout)", "size_packets": 20, "drop": 1},
    "fig2": {"title": "Figure 2: one loss in the middle (fast retransmit)", "size_packets": 20, "drop": 8},
    "fig3": {"title": "Figure 3: one loss among the last dup_t packets (timeout)", "size_packets": 20,
             "drop": 18},
    "fig5": {"title": "Figure 5: FileSize_min = y_to + dup_t MSS", "size_packets": 10, "drop": None},
}
"""Trace figure -> title, file size (packets) and the lost packet (0-based; Figure 5: none).

On the captions' setting (W0 = 2, W_SS = M = 30, MSS = 500 B, RTT 0.1 s, b = 1, NewReno):
y_to = 2 packets (Table 1; 1443 B in the fluid law), the tail is the last dup_t = 3
packets, so of 20 packets 0-1 and 17-19 time out alone (simulated pattern
``TTFFFFFFFFFFFFFFFTTT``): packet 1, 8 and 18 are one of each kind."""

_SAMPLES = 200  # rate samples per loss-free stretch of the model


@dataclass(frozen=True)
class ModelTrace:
    """The fluid model's path through one transfer with losses at given packets.

    Attributes
    ----------
    time_s : ndarray
        Sample times, seconds (non-decreasing; equal times mark a jump).
    window_packets : ndarray
        Sending rate at ``time_s`` in packets per RTT (rate = window MSS / RTT bytes/s);
        0 while waiting for a timeout.
    offset_bytes : ndarray
        File offset reached by the data of the current state, bytes (after a timeout the
        model resends from the lost packet, so it goes back).
    events : tuple of dict
        ``{"time_s", "event", "segment", "y_bytes", "region"}`` for each ``loss``,
        ``timeout`` (sending resumes), ``fast_recovery`` and the final ``done``.
    completion_s : float
        The model's latency given these losses, seconds (the end of the curve).
    sent_bytes : float
        Bytes the model sends (its own accounting: y of each interrupted state plus the
        last state's data); the integral of the rate over time.
    retransmitted_bytes : float
        Bytes sent twice (after a timeout the model resends from the lost packet, one MSS
        more than the data left: the paper's ``y_bar - y + MSS``).
    neglected_bytes : float
        Bytes never sent (a loss in the tail: the model resends only the lost packet,
        ``L_0(y) + RTO + L(MSS)``, and leaves out the data after it).
    time_model : str
        ``"fluid"`` or ``"rounds"`` (rules without a continuous law).
    unmodelled_drops : tuple of int
        Dropped packets the model's states do not reach (e.g. a retransmission lost
        during fast recovery: the fluid model does not resend that packet).
    """

    time_s: np.ndarray
    window_packets: np.ndarray
    offset_bytes: np.ndarray
    events: tuple
    completion_s: float
    sent_bytes: float
    retransmitted_bytes: float
    neglected_bytes: float
    time_model: str
    unmodelled_drops: tuple = field(default=())

    def summary(self) -> dict:
        """JSON-ready summary (no sample arrays)."""
        return {"completion_s": self.completion_s, "sent_bytes": self.sent_bytes,
                "retransmitted_bytes": self.retransmitted_bytes, "neglected_bytes": self.neglected_bytes,
                "time_model": self.time_model, "events": list(self.events),
                "unmodelled_drops": list(self.unmodelled_drops)}


def _stretch(params: TcpParams, nbytes: float, w0: float, wss: float, tm: str, t0: float, off0: float):
    """Samples (t, window, offset) of one loss-free stretch of ``nbytes`` from state (w0, wss)."""
    from ..model.fluid import l0_and_w_f

    if tm == "fluid":
        s = np.linspace(0.0, nbytes, _SAMPLES + 1)
        t, w = l0_and_w_f(params, s, w0, wss, time_model="fluid")
        return t0 + t, np.asarray(w, float), off0 + s
    # Whole windows per RTT (the staircase of the per-round law): round n sends
    # min(w_n MSS, data left) at a constant rate for one RTT.
    mss, rtt = float(params.mss_bytes), params.rtt_s
    ts, ws, offs = [t0], [min(w0, params.rwnd)], [off0]
    w, sent, t = min(w0, params.rwnd), 0.0, t0
    while nbytes - sent > 1e-9 * max(nbytes, 1.0):
        send = min(w * mss, nbytes - sent)
        ts += [t, t + rtt]
        ws += [send / mss, send / mss]
        offs += [off0 + sent, off0 + sent + send]
        sent += send
        t += rtt
        w = float(min(params.rule.next_round_window(np.array([w]), np.array([wss]), params.b)[0], params.rwnd))
    return np.asarray(ts), np.asarray(ws), np.asarray(offs)


def model_trace(params: TcpParams, size_bytes: float, drop_segments=(), *, time_model: str | None = None
                ) -> ModelTrace:
    """The fluid model's sending rate over one transfer with losses at given packets.

    Each loss interrupts the current state after y bytes, where y is the lost packet's
    offset in that state (packet i of a fresh transfer: y = i MSS, the convention under
    which Tables 1-2 count y_to). The recursion's region decides what follows: a timeout
    (rate 0 for the RTO, then from W0 = 1 with W_SS = max(W_f/2, 2)), or fast recovery
    (from W0 = W_SS = max(W_f/2 - 1, 1) at once); see
    :mod:`latency_model.model.recursion`.

    Parameters
    ----------
    params : TcpParams
        Model parameters (``p`` is not used: the losses are given).
    size_bytes : float
        File size, bytes (> 0).
    drop_segments : sequence of int
        Lost packets (0-based file indices), in the order they are lost.
    time_model : {"fluid", "rounds"}, optional
        Default: ``"fluid"`` when the rule has a continuous law, else ``"rounds"``.

    Returns
    -------
    ModelTrace
    """
    from ..model._regions import _after_loss, _family_windows, _region_bounds
    from ..model.fluid import TIME_MODELS, w_f

    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    size = float(size_bytes)
    if not (size > 0 and math.isfinite(size)):
        raise ValueError(f"size_bytes must be > 0, got {size_bytes!r}")
    tm = time_model or ("fluid" if params.rule.continuous_law(params.b) is not None else "rounds")
    if tm not in TIME_MODELS:
        raise ValueError(f"time_model must be one of {', '.join(TIME_MODELS)}, got {tm!r}")
    mss = float(params.mss_bytes)
    r, w0, wss, start, t = size, float(params.w0), float(params.w_ss), 0.0, 0.0
    ts, ws, offs, events, unmodelled = [], [], [], [], []
    sent = retx = neglected = 0.0
    for seg in drop_segments:
        seg = check_int("drop segment", seg, low=0)
        y = seg * mss - start
        if not 0.0 <= y < r:
            unmodelled.append(seg)
            continue
        a, tail = (float(v) for v in _region_bounds(params, np.array(r), np.array(w0), np.array(wss), tm))
        region = 1 if y < a else (2 if y < tail else 3)
        pt, pw, po = _stretch(params, y, w0, wss, tm, t, start)
        ts.append(pt), ws.append(pw), offs.append(po)
        t_loss = float(pt[-1])
        wf = float(w_f(params, y, w0, wss, time_model=tm))
        cost, family, r_next, p_next = _after_loss(params, region, np.array(r), np.array(y), np.array(wf))
        r_next, cost = float(r_next), float(cost)
        new_start = start + y if region in (2, 3) else start + r - r_next
        sent += y
        retx += max(0.0, start + y - new_start)
        neglected += max(0.0, (start + r) - (new_start + r_next))
        recovery = "fast_recovery" if region == 2 else "timeout"
        events.append({"time_s": t_loss, "event": "loss", "segment": seg, "y_bytes": y, "region": region,
                       "recovery": recovery, "window_packets": wf})
        if cost > 0:  # the RTO wait: rate 0, the offset back to where sending resumes
            ts.append(np.array([t_loss, t_loss + cost]))
            ws.append(np.array([0.0, 0.0]))
            offs.append(np.array([start + y, start + y]))
            events.append({"time_s": t_loss + cost, "event": "timeout", "segment": seg, "y_bytes": None,
                           "region": region, "recovery": recovery, "window_packets": None})
        else:
            events.append({"time_s": t_loss, "event": "fast_recovery", "segment": seg, "y_bytes": None,
                           "region": region, "recovery": recovery, "window_packets": float(p_next)})
        nw0, nwss = _family_windows(family, np.asarray(p_next, float))
        w0, wss, start, r, t = float(nw0), float(nwss), new_start, r_next, t_loss + cost
    pt, pw, po = _stretch(params, r, w0, wss, tm, t, start)
    ts.append(pt), ws.append(pw), offs.append(po)
    sent += r
    done = float(pt[-1])
    events.append({"time_s": done, "event": "done", "segment": None, "y_bytes": None, "region": None,
                   "recovery": None, "window_packets": None})
    return ModelTrace(time_s=np.concatenate(ts), window_packets=np.concatenate(ws),
                      offset_bytes=np.concatenate(offs), events=tuple(events), completion_s=done,
                      sent_bytes=sent, retransmitted_bytes=retx, neglected_bytes=neglected,
                      time_model=tm, unmodelled_drops=tuple(unmodelled))


def simulated_trace(params: TcpParams, size_bytes: int, config=None, *, drops=None, rng=None):
    """One simulated transfer and its event trace with ``drop`` events.

    Parameters
    ----------
    params, size_bytes, config, drops, rng
        As :func:`latency_model.sim.transfer.run_transfer` (``size_bytes`` in bytes).

    Returns
    -------
    (TransferResult, list of TraceRow)
        The result exactly as ``run_transfer`` gives it, and the trace with a ``drop`` row
        after each lost transmission (:func:`latency_model.sim.traces.mark_drops`).
    """
    from ..sim.config import SimConfig
    from ..sim.traces import mark_drops
    from ..sim.transfer import run_transfer

    config = SimConfig() if config is None else config
    result, rows = run_transfer(params, size_bytes=size_bytes, config=config, drops=drops, rng=rng, trace=True)
    rows = mark_drops(rows, result.size_bytes, params.mss_bytes, config, config.one_way_delay(params.rtt_s),
                      lost_packets=result.lost_packets)
    return result, rows


def dropped_segments(rows) -> list[int]:
    """Segments of the ``drop`` rows of a trace, in time order (the model's loss list)."""
    return [r.segment for r in rows if r.event == "drop"]


def _num(x):
    """A CSV cell: empty for None or non-finite, an int when whole, else the float itself
    (written in full, so a time read back equals the simulator's bit for bit)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 1e15 else x


def _row(fig, source, series, time_s, value, unit, segment="", event=""):
    return {"figure": fig, "source": source, "series": series, "time_s": _num(time_s), "value": _num(value),
            "unit": unit, "segment": "" if segment is None else segment, "event": event}


def trace_rows(fig: str, model: ModelTrace, sim_rows, mss_bytes: int) -> list[dict]:
    """Tidy rows (:data:`TRACE_COLUMNS`) of a model trace and a simulated event trace.

    Parameters
    ----------
    fig : str
        Value of the ``figure`` column.
    model : ModelTrace
        From :func:`model_trace`.
    sim_rows : list of TraceRow
        From :func:`simulated_trace`.
    mss_bytes : int
        Segment size, bytes (cwnd in packets = cwnd_bytes / MSS).
    """
    rows = []
    for t, w in zip(model.time_s, model.window_packets):
        rows.append(_row(fig, "model", "window", t, w, "packets per RTT"))
    for t, o in zip(model.time_s, model.offset_bytes):
        rows.append(_row(fig, "model", "offset", t, o / mss_bytes, "packets (file offset / MSS)"))
    for e in model.events:
        rows.append(_row(fig, "model", "event", e["time_s"], e["y_bytes"], "bytes" if e["y_bytes"] is not None else "",
                         e["segment"], e["event"]))
    for r in sim_rows:
        rows.append(_row(fig, "simulation", "trace", r.time_s, r.cwnd_bytes / mss_bytes, "packets (cwnd)",
                         r.segment, r.event))
    return rows


def trace_setting_text(params: TcpParams, size_bytes: int, how: str, config=None) -> str:
    """Setting line(s) of a trace figure: W0, W_SS, M, b, RTT, MSS, variant, rule; the loss;
    the simulated path (``"; "`` separates the lines).

    Parameters
    ----------
    params : TcpParams
    size_bytes : int
        File size, bytes.
    how : str
        How losses arise, e.g. ``"p not used: packet 2 of 20 lost (placed)"``.
    config : SimConfig, optional
        Simulated path (default ``SimConfig()``).
    """
    from ..sim.config import SimConfig

    config = SimConfig() if config is None else config

    def n(x):
        return f"{float(x):g}"

    lim = lambda v: "none" if v >= 1e9 else n(v)  # noqa: E731
    win = (f"W_SS = M = {lim(params.w_ss)}" if params.w_ss == params.rwnd
           else f"W_SS = {lim(params.w_ss)}, M = {lim(params.rwnd)}")
    rule = {k: v for k, v in params.rule.describe().items() if v is not None}
    rule_text = rule.pop("name") + (" (" + ", ".join(f"{k}={v}" for k, v in rule.items()) + ")" if rule else "")
    variant = variant_of(params) or "custom recovery"
    packets = size_bytes / params.mss_bytes
    return (f"{size_bytes} B = {packets:g} packets, W0 = {n(params.w0)}, {win} packets, b = {params.b}, "
            f"RTT = {n(params.rtt_s)} s, MSS = {params.mss_bytes} B; {variant}, dup_t = {params.dup_t}, "
            f"rule {rule_text}; {how}; simulation: {n(config.link_rate_bps / 1e6)} Mb/s, "
            f"RTO rule {config.rto_rule}, min RTO {n(config.min_rto_s)} s")


def _base_params() -> TcpParams:
    """The captions' setting, NewReno, b = 1 (:func:`latency_model.studies.figures.base_params`)."""
    return apply_variant(TcpParams(b=1), "newreno")


def trace_figure(fig: str, params: TcpParams | None = None, config=None) -> tuple[list[dict], dict]:
    """Rows and metadata of one of :data:`TRACE_FIGURES`.

    Parameters
    ----------
    fig : {"fig1", "fig2", "fig3", "fig5"}
    params : TcpParams, optional
        Default: the captions' setting (W0 = 2, W_SS = M = 30, MSS = 500 B, RTT 0.1 s,
        b = 1, NewReno).
    config : SimConfig, optional
        Simulated path (default ``SimConfig()``: 100 Mb/s, RFC 6298 RTO with a 1 s minimum).

    Returns
    -------
    (list of dict, dict)
        Tidy rows (:data:`TRACE_COLUMNS`) and a JSON-ready description (title, setting,
        parameters, the model's summary, the simulated result).
    """
    from ..model.thresholds import filesize_min, table_y_to, y_to
    from ..sim.config import SimConfig
    from ..sim.singleloss import single_loss

    if fig not in TRACE_FIGURES:
        raise ValueError(f"fig must be one of {', '.join(TRACE_FIGURES)}, got {fig!r}")
    spec = TRACE_FIGURES[fig]
    params = _base_params() if params is None else params
    config = SimConfig() if config is None else config
    n = spec["size_packets"]
    size = n * params.mss_bytes
    drops = [] if spec["drop"] is None else [spec["drop"]]
    result, sim_rows = simulated_trace(params, size, config, drops=drops)
    model = model_trace(params, size, dropped_segments(sim_rows))
    rows = trace_rows(fig, model, sim_rows, params.mss_bytes)
    tail = 1 if params.tail_retransmit else params.dup_t
    yto = float(y_to(params))
    thresholds = {"y_to_bytes": yto, "tail_start_bytes": float(size - tail * params.mss_bytes),
                  "filesize_min_bytes": float(filesize_min(params)),
                  "filesize_min_table_packets": table_y_to(int(params.w0), params.b, "slow_start",
                                                           params.timeout_threshold) + tail}
    extra = {}
    if spec["drop"] is None:  # Figure 5: the thresholds, and each packet's single-loss outcome
        from ..model.fluid import l0

        marks = (("y_to", yto), ("tail_start", thresholds["tail_start_bytes"]),
                 ("filesize_min", thresholds["filesize_min_bytes"]),
                 ("filesize_min_table", thresholds["filesize_min_table_packets"] * params.mss_bytes))
        for name, value in marks:
            t = float(l0(params, value)) if value <= size else None
            rows.append(_row(fig, "model", "threshold", t, value, "bytes", "", name))
        sl = single_loss(params, size_packets=n, config=config)
        first_send = {r.segment: r.time_s for r in sim_rows if r.event == "send"}
        for i, (letter, done) in enumerate(zip(sl.pattern, sl.completion_s)):
            rows.append(_row(fig, "simulation", "single_loss", first_send[i], done, "seconds", i, letter))
        extra["single_loss"] = sl.to_dict()
        how = "no loss (the single-loss outcome of each packet from the simulator)"
    else:
        how = f"p not used: packet {spec['drop'] + 1} of {n} lost once (placed)"
    meta = {
        "figure": fig,
        "title": spec["title"],
        "setting": trace_setting_text(params, size, how, config),
        "source": "Ayesta & Avrachenkov, Section 2 (Figures 1-3) and Section 3 (Figure 5)",
        "columns": TRACE_COLUMNS,
        "units": {"time_s": "seconds from the first data packet sent",
                  "value": "per row's unit column: window in packets per RTT (model rate x RTT / MSS), "
                           "offset in packets (bytes / MSS), loss position y and thresholds in bytes, "
                           "simulated cwnd in packets, single-loss completion in seconds"},
        "size_bytes": size,
        "size_packets": n,
        "drop_segments": drops,
        "params": params.to_dict(),
        "sim_config": config.to_dict(),
        "thresholds": thresholds,
        "model": model.summary(),
        "simulation": result.to_dict(),
        **extra,
    }
    return rows, meta


def rows_as_dict(rows) -> list[dict]:
    """Plain dicts of trace rows (dataclasses) for JSON."""
    return [asdict(r) for r in rows]
