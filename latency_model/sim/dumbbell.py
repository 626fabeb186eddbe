"""Dumbbell topology: sender access links -> router with a drop-tail queue -> bottleneck
link -> receiver access links; ACKs return over the propagation delays only.

Every link is a FIFO *port* (:class:`Port`): a data packet of ``L`` payload bytes is
serialised in ``(L + header) * 8 / rate`` seconds once the packets ahead of it have left
(store and forward), then propagates for the link's delay. Only the router's port in
front of the bottleneck has a finite buffer (ns-2 ``DropTail``, Burst TCP Section 4.1:
"the queues sizes on each router were set ... to 7 packets"); the sender access ports are
unlimited unless ``access_queue_packets`` is set, the receiver access ports always (fed
by the slower bottleneck, they never hold more than one packet). A packet that finds ``B`` packets waiting behind the one being serialised is
dropped at once and uses no link time, exactly as the single-flow link does
(:func:`~latency_model.sim.flat.transmit`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..checks import check_choice, check_int, check_real

__all__ = ["Dumbbell", "Port", "QueueSeries", "SIGNALS"]

SIGNALS = ("source_quench", "ecn")
"""Router signals: ``"source_quench"``, an ICMP Source Quench sent back to the sender for
each packet that arrives while the queue holds >= tau packets (SmoothTCP, Section 4:
"an ICMP-SQ message is sent for each packet arriving in the router queue if the size is
equal or above" tau, dropped arrivals included); ``"ecn"``, the same arrivals are marked
CE (only accepted ones: a dropped packet carries no mark) and the receiver echoes the mark
to the sender."""

# Same tie rule as link.Link: a packet whose last bit leaves within this many seconds
# of an arrival has left the buffer (exact ties are common on paths built from whole
# serialisation times, and float rounding must not decide them).
_TIE_S = 1e-12


@dataclass(frozen=True)
class Dumbbell:
    """A dumbbell: ``nodes`` sender/receiver pairs around one bottleneck.

    A flow of sender node ``i`` goes to receiver node ``i``. Its data crosses sender
    access link ``i``, the router queue, the bottleneck and receiver access link ``i``;
    its ACKs take ``2 * access_delay_s + bottleneck_delay_s`` (no serialisation, no
    queueing, no loss) unless ``reverse_rate_bps`` sends them through a reverse port.

    Parameters
    ----------
    nodes : int
        Sender (and receiver) nodes, >= 1. Burst TCP: 5.
    access_rate_bps : float or None
        Access link rate, bit/s (> 0); ``None``: instantaneous (no serialisation).
        Burst TCP: 10e6.
    access_delay_s : float
        Access link one-way delay, seconds (>= 0). Burst TCP: 0.005.
    bottleneck_rate_bps : float
        Bottleneck rate C, bit/s (> 0). Burst TCP: 1.5e6.
    bottleneck_delay_s : float
        Bottleneck one-way delay, seconds (>= 0). Burst TCP: 0.035.
    queue_packets : int or None
        Router drop-tail buffer, packets waiting for the bottleneck (the one being
        serialised not counted), >= 0; ``None``: unlimited. Burst TCP: 7.
    access_queue_packets : int or None
        Drop-tail buffer of each sender access link, packets (>= 0); ``None`` (default):
        unlimited. A packet it drops never reaches the router (counted as lost by the flow,
        not in the router's series).
    signal : {"source_quench", "ecn"} or None
        Router signal sent for arrivals that find ``signal_threshold_packets`` or more
        packets waiting (see :data:`SIGNALS`); ``None`` (default): no signals. The
        sender's rule receives it through ``GrowthRule.on_signal(state, signal)``.
    signal_threshold_packets : int or None
        Queue threshold tau, packets (>= 0); required with ``signal``. SmoothTCP: 7 (of 20).
    reverse_rate_bps : float or None
        Rate of the reverse bottleneck port, bit/s (> 0); ``None`` (default): ACKs return
        uncongested after ``ack_delay_s``. When set, every ACK (``ack_bytes`` on the wire)
        reaches the receiver-side router one access delay after it leaves the receiver, is
        serialised there through a FIFO port with a drop-tail buffer of
        ``reverse_queue_packets``, then crosses the bottleneck and the sender's access link
        (propagation only; the access links' ACK serialisation is neglected).
    reverse_queue_packets : int or None
        Drop-tail buffer of the reverse port, packets waiting (>= 0); ``None``: unlimited.
        Only with ``reverse_rate_bps``. ns-2's default ``Queue`` limit is 50.
    ack_bytes : int
        Wire size of an ACK on the reverse port, bytes (>= 1). Default 40 (IPv4 + TCP).

    Raises
    ------
    ValueError
        Naming the first parameter outside its range.
    """

    nodes: int = 5
    access_rate_bps: float | None = 10e6
    access_delay_s: float = 0.005
    bottleneck_rate_bps: float = 1.5e6
    bottleneck_delay_s: float = 0.035
    queue_packets: int | None = 7
    access_queue_packets: int | None = None
    signal: str | None = None
    signal_threshold_packets: int | None = None
    reverse_rate_bps: float | None = None
    reverse_queue_packets: int | None = None
    ack_bytes: int = 40

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "nodes", check_int("nodes", self.nodes, low=1))
        if self.access_rate_bps is not None:
            set_(self, "access_rate_bps",
                 check_real("access_rate_bps", self.access_rate_bps, low=0.0, low_open=True))
        set_(self, "access_delay_s", check_real("access_delay_s", self.access_delay_s, low=0.0))
        set_(self, "bottleneck_rate_bps",
             check_real("bottleneck_rate_bps", self.bottleneck_rate_bps, low=0.0, low_open=True))
        set_(self, "bottleneck_delay_s", check_real("bottleneck_delay_s", self.bottleneck_delay_s, low=0.0))
        if self.queue_packets is not None:
            set_(self, "queue_packets", check_int("queue_packets", self.queue_packets, low=0))
        if self.access_queue_packets is not None:
            set_(self, "access_queue_packets",
                 check_int("access_queue_packets", self.access_queue_packets, low=0))
        if self.signal is not None:
            check_choice("signal", self.signal, SIGNALS)
            if self.signal_threshold_packets is None:
                raise ValueError("signal_threshold_packets (tau) must be given with signal")
        if self.signal_threshold_packets is not None:
            if self.signal is None:
                raise ValueError("signal must be one of source_quench, ecn when signal_threshold_packets is set")
            set_(self, "signal_threshold_packets",
                 check_int("signal_threshold_packets", self.signal_threshold_packets, low=0))
        if self.reverse_rate_bps is not None:
            set_(self, "reverse_rate_bps",
                 check_real("reverse_rate_bps", self.reverse_rate_bps, low=0.0, low_open=True))
        if self.reverse_queue_packets is not None:
            if self.reverse_rate_bps is None:
                raise ValueError("reverse_queue_packets needs reverse_rate_bps (the reverse port's rate)")
            set_(self, "reverse_queue_packets",
                 check_int("reverse_queue_packets", self.reverse_queue_packets, low=0))
        set_(self, "ack_bytes", check_int("ack_bytes", self.ack_bytes, low=1))

    @property
    def ack_delay_s(self) -> float:
        """Receiver -> sender propagation time of an ACK, seconds: ``2 access + bottleneck`` delay
        (the whole ACK path without a reverse port; its propagation part with one)."""
        return 2.0 * self.access_delay_s + self.bottleneck_delay_s

    @property
    def round_trip_s(self) -> float:
        """Round-trip propagation time, seconds (no serialisation): ``2 * ack_delay_s``."""
        return 2.0 * self.ack_delay_s

    def bdp_packets(self, packet_bytes: int) -> float:
        """Bottleneck bandwidth-delay product, packets of ``packet_bytes`` wire bytes:
        ``C * round_trip_s / (8 * packet_bytes)`` (Burst TCP: 1.5 Mb/s x 90 ms / 1064 B = 15.9;
        its "BDP of an individual link", 1.5 Mb/s x 35 ms / 1024 B = 6.4, sets B = 7).

        Parameters
        ----------
        packet_bytes : int
            Size of a packet on the wire (payload + headers), bytes (>= 1).

        Returns
        -------
        float
            Packets of ``packet_bytes`` that fill the bottleneck (``bottleneck_rate_bps``,
            bit/s) over one propagation round trip (``round_trip_s``, seconds); not rounded.

        Raises
        ------
        ValueError
            If ``packet_bytes`` is not an integer >= 1.
        """
        packet_bytes = check_int("packet_bytes", packet_bytes, low=1)
        return self.bottleneck_rate_bps * self.round_trip_s / (8.0 * packet_bytes)

    def describe(self) -> dict:
        """JSON-serialisable dict of every parameter."""
        return {
            "nodes": self.nodes,
            "access_rate_bps": self.access_rate_bps,
            "access_delay_s": self.access_delay_s,
            "bottleneck_rate_bps": self.bottleneck_rate_bps,
            "bottleneck_delay_s": self.bottleneck_delay_s,
            "queue_packets": self.queue_packets,
            "access_queue_packets": self.access_queue_packets,
            "signal": self.signal,
            "signal_threshold_packets": self.signal_threshold_packets,
            "reverse_rate_bps": self.reverse_rate_bps,
            "reverse_queue_packets": self.reverse_queue_packets,
            "ack_bytes": self.ack_bytes,
        }


class Port:
    """Output port of a link: FIFO serialisation at ``rate_bps`` with an optional drop-tail buffer.

    Packets must be offered in non-decreasing time order (true for every port of the
    dumbbell: each is fed by one event stream or by one FIFO upstream).

    Parameters
    ----------
    rate_bps : float or None
        Link rate, bit/s; ``None``: instantaneous.
    limit : int or None
        Buffer, packets waiting behind the one being serialised; ``None``: unlimited.
    record : bool
        Keep the per-packet log that :meth:`series` turns into a time series.
    """

    __slots__ = ("rate", "limit", "busy_until", "backlog", "record", "last_seen",
                 "arrival_s", "seen", "dropped", "service_start_s", "service_end_s")

    def __init__(self, rate_bps: float | None, limit: int | None, record: bool = False) -> None:
        self.rate = rate_bps
        self.limit = limit
        self.busy_until = 0.0
        self.backlog: deque = deque()  # end-of-serialisation times of accepted packets
        self.record = record
        self.last_seen = 0  # packets waiting found by the latest arrival (tracked ports)
        self.arrival_s: list[float] = []
        self.seen: list[int] = []  # packets waiting (not in service) found by each arrival
        self.dropped: list[bool] = []
        self.service_start_s: list[float] = []  # accepted packets only
        self.service_end_s: list[float] = []

    def waiting(self, now: float) -> int:
        """Packets waiting at ``now`` (seconds), the one being serialised not counted."""
        backlog = self.backlog
        while backlog and backlog[0] <= now + _TIE_S:
            backlog.popleft()
        return len(backlog) - 1 if backlog else 0

    def offer(self, now: float, wire_bytes: int) -> float | None:
        """Offer a packet of ``wire_bytes`` (payload + header) at ``now`` (seconds).

        Returns
        -------
        float or None
            Time its last bit leaves, seconds; ``None`` if the full buffer dropped it.
        """
        if self.rate is None:
            return now
        tracked = self.limit is not None or self.record
        if tracked:
            waiting = self.waiting(now)
            busy = bool(self.backlog)
            drop = self.limit is not None and waiting + busy > self.limit
            self.last_seen = waiting
            if self.record:
                self.arrival_s.append(now)
                self.seen.append(waiting)
                self.dropped.append(drop)
            if drop:
                return None
        start = now if now > self.busy_until else self.busy_until
        self.busy_until = start + wire_bytes * 8.0 / self.rate
        if tracked:
            self.backlog.append(self.busy_until)
            if self.record:
                self.service_start_s.append(start)
                self.service_end_s.append(self.busy_until)
        return self.busy_until

    def series(self, end_s: float, bin_s: float) -> "QueueSeries":
        """Binned time series of the recorded log over ``[0, end_s)``; see :class:`QueueSeries`."""
        return QueueSeries.from_log(self.arrival_s, self.seen, self.dropped, self.service_start_s,
                                    self.service_end_s, end_s, bin_s)


@dataclass(frozen=True)
class QueueSeries:
    """Per-bin time series of one queue.

    Attributes
    ----------
    bin_s : float
        Bin width, seconds; bin ``k`` covers ``[k bin_s, (k+1) bin_s)``.
    arrivals : ndarray of int
        Packets that reached the queue in each bin (dropped ones included).
    drops : ndarray of int
        Packets dropped in each bin.
    mean_length : ndarray of float
        Time-average number of packets waiting (not in service) over each bin.
    max_seen : ndarray of int
        Largest number of waiting packets found by an arrival in the bin (0 if none arrived).
    busy_fraction : ndarray of float
        Fraction of each bin the outgoing link spent serialising (link utilisation).
    arrival_s : ndarray of float
        Raw log: arrival time of every packet, seconds.
    seen : ndarray of int
        Raw log: packets waiting found by each arrival.
    dropped : ndarray of bool
        Raw log: whether each arrival was dropped.
    """

    bin_s: float
    arrivals: np.ndarray
    drops: np.ndarray
    mean_length: np.ndarray
    max_seen: np.ndarray
    busy_fraction: np.ndarray
    arrival_s: np.ndarray
    seen: np.ndarray
    dropped: np.ndarray

    @property
    def arrivals_per_s(self) -> np.ndarray:
        """Arrival rate in each bin, packets per second."""
        return self.arrivals / self.bin_s

    @classmethod
    def from_log(cls, arrival_s, seen, dropped, service_start_s, service_end_s, end_s: float,
                 bin_s: float) -> "QueueSeries":
        """Bin a per-packet log over ``[0, end_s)`` in bins of ``bin_s`` seconds.

        Parameters
        ----------
        arrival_s, seen, dropped : sequences of equal length
            Arrival time (seconds, non-decreasing), waiting packets found, drop flag of
            every arrival.
        service_start_s, service_end_s : sequences of float
            Time each accepted packet starts and ends serialisation, seconds, in arrival order.
        end_s, bin_s : float
            Span and bin width, seconds.
        """
        bin_s = check_real("bin_s", bin_s, low=0.0, low_open=True)
        end_s = check_real("end_s", end_s, low=0.0)
        n_bins = max(1, int(np.ceil(end_s / bin_s - 1e-9)))
        a = np.asarray(arrival_s, dtype=float)
        dropped = np.asarray(dropped, dtype=bool)
        seen_all = np.asarray(seen, dtype=np.int64)
        if not (a.shape == dropped.shape == seen_all.shape):
            raise ValueError("arrival_s, seen and dropped must have the same length")
        idx = np.minimum((a // bin_s).astype(np.int64), n_bins - 1) if a.size else np.zeros(0, np.int64)
        keep = a <= n_bins * bin_s  # an arrival exactly at the end falls in the last bin
        arrivals = np.bincount(idx[keep], minlength=n_bins)
        drops = np.bincount(idx[keep & dropped], minlength=n_bins)
        # A packet waits over [arrival, service start): the integral of the waiting count
        # up to t is sum_{a<t} (t - a) - sum_{s<t} (t - s); difference it at the bin edges.
        acc = a[~dropped]
        s = np.asarray(service_start_s, dtype=float)
        edges = np.arange(n_bins + 1) * bin_s
        integral = _ramp_sum(np.sort(acc), edges) - _ramp_sum(np.sort(s), edges)
        mean_length = np.diff(integral) / bin_s
        e = np.asarray(service_end_s, dtype=float)
        busy = _ramp_sum(np.sort(s), edges) - _ramp_sum(np.sort(e), edges)
        busy_fraction = np.minimum(np.maximum(np.diff(busy) / bin_s, 0.0), 1.0)
        max_seen = np.zeros(n_bins, dtype=np.int64)
        np.maximum.at(max_seen, idx[keep], seen_all[keep])
        return cls(bin_s=bin_s, arrivals=arrivals, drops=drops,
                   mean_length=np.maximum(mean_length, 0.0), max_seen=max_seen,
                   busy_fraction=busy_fraction,
                   arrival_s=a, seen=seen_all, dropped=dropped)


def _ramp_sum(sorted_x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``sum_i max(t - x_i, 0)`` for each ``t``, with ``sorted_x`` ascending."""
    k = np.searchsorted(sorted_x, t, side="left")
    csum = np.concatenate([[0.0], np.cumsum(sorted_x)])
    return k * t - csum[k]
