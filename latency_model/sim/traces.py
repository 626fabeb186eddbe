"""Time series and event traces of simulated flows.

:class:`CwndSeries`: the sender-side congestion window, ssthresh and acknowledged bytes of
one flow, recorded by :func:`~latency_model.sim.scenario.run` when ``Scenario.record_cwnd``
is set: one sample after every event that reaches the flow's sender (its start, an ACK, a
timer expiry, a router signal) and changed its ``cwnd``, ``ssthresh`` or cumulative ACK.
Between samples the values hold (a step function), so the series is exact at event
granularity.

:func:`mark_drops`: the event trace of one transfer (:func:`~latency_model.sim.transfer.run_transfer`
with ``trace=True``) with a ``drop`` event after every data transmission the path lost.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from ..checks import check_int, check_real
from .flat import LINK_TIE_S

__all__ = ["CwndSeries", "CwndLog", "mark_drops", "TRANSMIT_EVENTS"]

TRANSMIT_EVENTS = ("send", "retransmit")
"""Trace events that put a data segment on the link (one row per transmission)."""

# A replayed arrival time matches a traced one within this many seconds (both come from the
# same floating-point expressions, so they agree exactly; the slack only guards rounding).
_MATCH_S = 1e-9
_TIE_S = LINK_TIE_S  # the tie rule of the link's drop-tail buffer


def mark_drops(rows: list, size_bytes: int, mss_bytes: int, config, delay_s: float,
               lost_packets: int | None = None) -> list:
    """The trace ``rows`` with a ``drop`` row after each data transmission the path lost.

    The link is FIFO with a fixed delay, so each transmission's arrival time follows from
    the send times alone; this replays the link's timing (:func:`~latency_model.sim.flat.transmit`)
    (serialisation at ``config.link_rate_bps`` with ``config.header_bytes`` of header, after
    the handshake's ACK with ``config.ack_serialisation``, the one-way delay, the drop-tail buffer ``config.queue_packets``) and marks a transmission
    dropped when no ``data_arrival`` of its segment comes at its arrival time. Random and
    scripted losses and buffer overflows are all found this way. A transmission whose
    arrival would come after the transfer ended is marked only when ``lost_packets`` says
    that all such transmissions were lost (the trace alone cannot tell).

    Parameters
    ----------
    rows : list of TraceRow
        Event trace of one transfer, in time order (``run_transfer(..., trace=True)``).
    size_bytes : int
        Transfer size, bytes.
    mss_bytes : int
        Segment size, bytes.
    config : SimConfig
        The path the transfer ran on.
    delay_s : float
        One-way delay, seconds (``config.one_way_delay(params.rtt_s)``).
    lost_packets : int, optional
        The transfer's lost data transmissions (``TransferResult.lost_packets``).

    Returns
    -------
    list of TraceRow
        New list: every row of ``rows``, and after each lost transmission a row with event
        ``drop``, the transmission's time, segment and sender state.
    """
    size_bytes = check_int("size_bytes", size_bytes, low=1)
    mss_bytes = check_int("mss_bytes", mss_bytes, low=1)
    delay_s = check_real("delay_s", delay_s, low=0.0)
    arrivals: dict[int, deque] = {}
    for r in rows:
        if r.event == "data_arrival":
            arrivals.setdefault(r.segment, deque()).append(r.time_s)
    end_s = rows[-1].time_s if rows else 0.0
    rate, header, limit = config.link_rate_bps, config.header_bytes, config.queue_packets
    busy = config.ack_serialisation_s()  # the handshake's ACK ahead of the data, if serialised
    backlog: deque = deque([busy] if limit is not None and busy > 0.0 else [])
    out = []
    marked, unresolved = 0, []
    for r in rows:
        out.append(r)
        if r.event not in TRANSMIT_EVENTS:
            continue
        now, seg = r.time_s, r.segment
        if limit is not None:
            while backlog and backlog[0] <= now + _TIE_S:
                backlog.popleft()
            if len(backlog) > limit:  # refused by the full buffer: no link time used
                out.append(replace(r, event="drop"))
                marked += 1
                continue
        payload = min((seg + 1) * mss_bytes, size_bytes) - seg * mss_bytes
        start = now if now > busy else busy
        busy = start + (payload + header) * 8.0 / rate
        if limit is not None:
            backlog.append(busy)
        arrival = busy + delay_s
        seen = arrivals.get(seg)
        if seen and abs(seen[0] - arrival) <= _MATCH_S:
            seen.popleft()
        elif arrival <= end_s + _MATCH_S:
            out.append(replace(r, event="drop"))
            marked += 1
        else:
            unresolved.append(len(out))  # still in flight at the end: position after its row
    if lost_packets is not None and unresolved and lost_packets - marked == len(unresolved):
        for pos in reversed(unresolved):
            out.insert(pos, replace(out[pos - 1], event="drop"))
    return out


class CwndLog:
    """Mutable recorder behind :class:`CwndSeries` (one per flow, used by the event loop)."""

    __slots__ = ("time_s", "cwnd", "ssthresh", "acked", "last")

    def __init__(self) -> None:
        self.time_s: list[float] = []
        self.cwnd: list[float] = []
        self.ssthresh: list[float] = []
        self.acked: list[int] = []
        self.last = None

    def note(self, now: float, cwnd: float, ssthresh: float, acked: int, mss: int) -> None:
        """Append a sample at ``now`` (seconds) if the window or the cumulative ACK moved:
        ``cwnd`` and ``ssthresh`` (bytes), ``acked`` (bytes acknowledged), ``mss`` (bytes)."""
        key = (cwnd, ssthresh, acked)
        if key == self.last:
            return
        self.last = key
        self.time_s.append(now)
        self.cwnd.append(cwnd / mss)
        self.ssthresh.append(ssthresh / mss)
        self.acked.append(acked)

    def series(self) -> "CwndSeries":
        """The frozen :class:`CwndSeries` of what was recorded."""
        return CwndSeries(time_s=np.asarray(self.time_s, dtype=float),
                          cwnd_packets=np.asarray(self.cwnd, dtype=float),
                          ssthresh_packets=np.asarray(self.ssthresh, dtype=float),
                          acked_bytes=np.asarray(self.acked, dtype=np.int64))


@dataclass(frozen=True)
class CwndSeries:
    """Congestion window of one flow over time, sampled at each change.

    Attributes
    ----------
    time_s : ndarray of float
        Sample times, seconds (absolute simulation time, non-decreasing). The first sample
        is the flow's start.
    cwnd_packets : ndarray of float
        Congestion window after the event, packets (``cwnd / MSS``; fast-recovery inflation
        included, as the sender holds it).
    ssthresh_packets : ndarray of float
        Slow-start threshold after the event, packets.
    acked_bytes : ndarray of int
        Bytes cumulatively acknowledged at the sender (goodput numerator).
    """

    time_s: np.ndarray
    cwnd_packets: np.ndarray
    ssthresh_packets: np.ndarray
    acked_bytes: np.ndarray

    def _index(self, t) -> np.ndarray:
        return np.searchsorted(self.time_s, np.asarray(t, dtype=float), side="right") - 1

    def cwnd_at(self, t) -> np.ndarray:
        """Congestion window at times ``t`` (seconds), packets; ``nan`` before the first sample.

        The value after every event at exactly ``t`` is returned (right-continuous step).
        """
        i = self._index(t)
        if not self.time_s.size:
            return np.full(np.shape(i), np.nan)
        return np.where(i >= 0, self.cwnd_packets[np.maximum(i, 0)], np.nan)

    def acked_at(self, t) -> np.ndarray:
        """Bytes acknowledged by times ``t`` (seconds); 0 before the first sample."""
        i = self._index(t)
        if not self.time_s.size:
            return np.zeros(np.shape(i), dtype=np.int64)
        return np.where(i >= 0, self.acked_bytes[np.maximum(i, 0)], 0)

    def goodput_bps(self, end_s: float, bin_s: float) -> np.ndarray:
        """Acknowledged payload per bin, bit/s, over ``[0, end_s)`` in bins of ``bin_s`` seconds.

        Bin ``k`` covers ``[k bin_s, (k+1) bin_s)``; the last bin may be shorter and is
        divided by its own length.
        """
        end_s = check_real("end_s", end_s, low=0.0, low_open=True)
        bin_s = check_real("bin_s", bin_s, low=0.0, low_open=True)
        n = max(1, int(np.ceil(end_s / bin_s - 1e-9)))
        edges = np.arange(n + 1) * bin_s
        edges[-1] = end_s
        # An ACK exactly at a bin edge counts in the bin it opens (left-closed bins); one at
        # end_s itself (the horizon) in the last bin.
        acked = self.acked_at(np.nextafter(edges, -np.inf))
        acked[-1] = self.acked_at(end_s)
        return 8.0 * np.diff(acked) / np.diff(edges)
