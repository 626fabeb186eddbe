"""Sender-side time series of one flow: congestion window, ssthresh and acknowledged bytes.

Recorded by :func:`~latency_model.sim.scenario.run` when ``Scenario.record_cwnd`` is set:
one sample after every event that reaches the flow's sender (its start, an ACK, a timer
expiry, a router signal) and changed its ``cwnd``, ``ssthresh`` or cumulative ACK. Between
samples the values hold (a step function), so the series is exact at event granularity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import check_real

__all__ = ["CwndSeries", "CwndLog"]


class CwndLog:
    """Mutable recorder behind :class:`CwndSeries` (one per flow, used by the event loop)."""

    __slots__ = ("time_s", "cwnd", "ssthresh", "acked", "last")

    def __init__(self) -> None:
        self.time_s: list[float] = []
        self.cwnd: list[float] = []
        self.ssthresh: list[float] = []
        self.acked: list[int] = []
        self.last = None

    def note(self, now: float, sender) -> None:
        """Append a sample at ``now`` (seconds) if ``sender``'s window or cumulative ACK moved."""
        st = sender.st
        acked = sender.acked_bytes
        key = (st.cwnd, st.ssthresh, acked)
        if key == self.last:
            return
        self.last = key
        self.time_s.append(now)
        self.cwnd.append(st.cwnd / st.mss)
        self.ssthresh.append(st.ssthresh / st.mss)
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
