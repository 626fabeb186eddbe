"""Multi-flow scenarios on a shared bottleneck: flows, the event loop, per-flow records.

Each flow runs the single-flow simulator's own engine, unchanged: its sender and receiver are
the flat engine's state (:class:`~latency_model.sim.kernel_multi.FlatFlow`), run by the
functions the Monte Carlo runs (the rfc sender: window growth through the flow's
:class:`~latency_model.growth.GrowthRule`, NewReno, Limited Transmit, Early Retransmit, RFC 6298
timer with back-off; the delayed-ACK receiver), compiled with numba or interpreted. Only the
path changes: the flows share the :class:`Dumbbell`'s router queue and bottleneck. All flows
live in one event heap ordered as the engine orders its events (:func:`~latency_model.sim.flat.before`:
nanosecond tick, then scheduling order), with the engine's ``seq`` counter shared.

The run itself is deterministic (drop-tail drops, no random loss): randomness enters only
through the scenario (start times, sizes), which :func:`random_flows` draws from an explicit
seed. Same scenario, same records, bit for bit.

Example
-------
>>> from latency_model.params import TcpParams
>>> from latency_model.sim.scenario import Flow, Scenario, run
>>> tcp = TcpParams(mss_bytes=1024, p=0.0, w0=1, w_ss=64, rwnd=64)
>>> sc = Scenario(flows=[Flow(0.0, 20 * 1024, tcp), Flow(0.05, 10 * 1024, tcp, node=1)])
>>> [round(r.completion_s, 3) for r in run(sc).flows]
[0.51, 0.401]
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ..checks import check_flag, check_int, check_real
from ..growth.laws import rule_index
from ..params import TcpParams
from .config import SimConfig
from .dumbbell import Dumbbell, Port, QueueSeries
from .flat import tick
from .kernel import FLOW_ACK, FLOW_DELACK, FLOW_RTO, FLOW_SEGMENT, FLOW_SEND
from .kernel_multi import FlatFlow, ensure_queues
from .ngwa import NgwaMode, NgwaReceiver, lower_stamp, node_value
from .onoff import OnOffSource
from .sizes import SizeGenerator
from .traces import CwndLog

__all__ = ["Flow", "Scenario", "FlowRecord", "ScenarioResult", "RttLog", "run", "random_flows"]


@dataclass(frozen=True)
class Flow:
    """One TCP transfer of a scenario.

    Parameters
    ----------
    start_s : float
        Time the first segment may leave, seconds (>= 0).
    size_bytes : int
        Transfer size, bytes (>= 1); segments of ``params.mss_bytes``.
    params : TcpParams
        The flow's TCP: MSS, W0, W_SS, M, b, dup_t, dup_lt, recovery flags, growth
        ``rule``. ``params.p`` must be 0: the dumbbell loses packets only at its queue.
        ``params.rtt_s`` is used only by ``SimConfig(rto_rule="paper")``.
    node : int
        Sender node (and receiver node), in [0, topology.nodes).
    ngwa : NgwaMode or None
        NGWA options of the flow (:mod:`latency_model.sim.ngwa`); ``None`` (default): plain TCP.
    """

    start_s: float
    size_bytes: int
    params: TcpParams
    node: int = 0
    ngwa: NgwaMode | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "start_s", check_real("start_s", self.start_s, low=0.0))
        object.__setattr__(self, "size_bytes", check_int("size_bytes", self.size_bytes, low=1))
        if not isinstance(self.params, TcpParams):
            raise ValueError(f"params must be a TcpParams, got {self.params!r}")
        if self.params.p != 0.0:
            raise ValueError(f"params.p must be 0 in a dumbbell scenario (drops come from the queue), "
                             f"got {self.params.p!r}")
        object.__setattr__(self, "node", check_int("node", self.node, low=0))
        if self.ngwa is not None and not isinstance(self.ngwa, NgwaMode):
            raise ValueError(f"ngwa must be an NgwaMode or None, got {self.ngwa!r}")

    @property
    def n_segments(self) -> int:
        """Segments of the transfer."""
        return -(-self.size_bytes // self.params.mss_bytes)


@dataclass(frozen=True)
class Scenario:
    """Flows on a dumbbell, with the timer settings and the recording options.

    Parameters
    ----------
    flows : sequence of Flow
        The transfers (at least one; a list or tuple, not a single Flow).
    topology : Dumbbell
        Links and router queue; default Burst TCP's 5+5-node dumbbell.
    config : SimConfig
        Timer constants (``delack_timeout_s``, ``min_rto_s``, ``initial_rto_s``,
        ``max_rto_s``, ``clock_granularity_s``), ``rto_rule``, ``lt_mode`` and
        ``header_bytes``. Every flow runs the ``rfc`` sender with Karn's RTT sampling and
        a receiver without quick ACKs that acknowledges the FIN at once, over the
        topology's links: ``sender``, ``rtt_sampling``, ``quick_acks``, ``fin``, ``prr``,
        ``rack_tlp``, ``link_rate_bps``, ``delay_s`` and ``queue_packets`` must keep their
        defaults and ``p_ack`` must be 0 (a ValueError otherwise, rather than a setting
        silently ignored).
    horizon_s : float or None
        Stop the run at this time, seconds (> 0); flows not finished are censored.
        ``None``: run until every flow has finished and the network is empty.
    bin_s : float
        Bin width of the queue time series, seconds (> 0).
    sources : sequence of OnOffSource
        Non-TCP constant-rate sources feeding the router queue (default none). A source
        without ``stop_s`` needs ``horizon_s``.
    record_rtt : bool
        Keep every flow's RTT samples (:class:`RttLog`, in ``ScenarioResult.rtt``). Default False.
    record_cwnd : bool
        Record every flow's congestion window over time
        (:class:`~latency_model.sim.traces.CwndSeries` in ``ScenarioResult.cwnd``).
        Default False: it costs a little time and memory per ACK.

    Raises
    ------
    ValueError
        Naming the first parameter that is invalid (``flows`` not a non-empty sequence of
        Flow, a flow's node outside the topology, ``sources`` not a sequence of
        OnOffSource, a config setting the dumbbell does not implement, ...).
    """

    flows: tuple
    topology: Dumbbell = field(default_factory=Dumbbell)
    config: SimConfig = field(default_factory=SimConfig)
    horizon_s: float | None = None
    bin_s: float = 1.0
    sources: tuple = ()
    record_rtt: bool = False
    record_cwnd: bool = False

    def __post_init__(self) -> None:
        flows = _as_tuple("flows", self.flows, "a non-empty sequence of Flow")
        if not flows:
            raise ValueError("flows must hold at least one Flow")
        if not isinstance(self.topology, Dumbbell):
            raise ValueError(f"topology must be a Dumbbell, got {self.topology!r}")
        for i, f in enumerate(flows):
            if not isinstance(f, Flow):
                raise ValueError(f"flows[{i}] must be a Flow, got {f!r}")
            if f.node >= self.topology.nodes:
                raise ValueError(f"flows[{i}].node must be in [0, {self.topology.nodes - 1}], got {f.node}")
        object.__setattr__(self, "flows", flows)
        if not isinstance(self.config, SimConfig):
            raise ValueError(f"config must be a SimConfig, got {self.config!r}")
        if self.config.p_ack != 0.0:
            raise ValueError(f"config.p_ack must be 0 in a dumbbell scenario, got {self.config.p_ack!r}")
        _check_dumbbell_config(self.config)
        if self.horizon_s is not None:
            object.__setattr__(self, "horizon_s",
                               check_real("horizon_s", self.horizon_s, low=0.0, low_open=True))
        object.__setattr__(self, "bin_s", check_real("bin_s", self.bin_s, low=0.0, low_open=True))
        sources = _as_tuple("sources", self.sources, "a sequence of OnOffSource")
        for i, src in enumerate(sources):
            if not isinstance(src, OnOffSource):
                raise ValueError(f"sources[{i}] must be an OnOffSource, got {src!r}")
            if src.stop_s is None and self.horizon_s is None:
                raise ValueError(f"sources[{i}] has no stop_s, so horizon_s must be set")
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "record_rtt", check_flag("record_rtt", self.record_rtt))
        object.__setattr__(self, "record_cwnd", check_flag("record_cwnd", self.record_cwnd))


def _as_tuple(name: str, value, what: str) -> tuple:
    """``value`` (a list, tuple or other iterable, not a string, a mapping or a single
    Flow/source) as a tuple; a ValueError naming ``name`` otherwise."""
    if isinstance(value, (str, bytes, dict, Flow, OnOffSource)) or value is None:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    try:
        return tuple(value)
    except TypeError:
        raise ValueError(f"{name} must be {what}, got {value!r}") from None


_DUMBBELL_RUNS = (
    "the rfc sender (sender 'rfc', no PRR or RACK-TLP settings) with Karn's RTT sampling "
    "(rtt_sampling 'karn'), a receiver without quick ACKs (quick_acks 0) that acknowledges "
    "the FIN segment at once (fin True), and the topology's rates, delays and queues "
    "(link_rate_bps, delay_s and queue_packets left at their defaults; ACKs not serialised, "
    "ack_serialisation False)")
"""What the dumbbell run implements of a :class:`SimConfig`, for the refusal's message."""

_DUMBBELL_FIXED = ("link_rate_bps", "delay_s", "queue_packets", "sender", "rtt_sampling",
                   "quick_acks", "fin", "prr", "rack_tlp", "ack_serialisation")
"""SimConfig fields the dumbbell run does not read (its flows run the engine's rfc sender and
receiver with these defaults, and take the path from the :class:`Dumbbell`): only their
defaults are accepted. ``p_ack`` is refused separately; ``stack`` is a label."""


def _check_dumbbell_config(config: SimConfig) -> None:
    """A ValueError naming every field of ``config`` the dumbbell run would ignore or fail on."""
    default = SimConfig()
    bad = [f"{name}={getattr(config, name)!r}" for name in _DUMBBELL_FIXED
           if getattr(config, name) != getattr(default, name)]
    if bad:
        raise ValueError(f"config sets {', '.join(bad)}, which the dumbbell scenario does not "
                         f"implement: it runs only {_DUMBBELL_RUNS}")


@dataclass(frozen=True)
class FlowRecord:
    """Measures of one flow of a scenario run.

    Attributes
    ----------
    index, node : int
        Position in ``Scenario.flows`` and sender node.
    start_s : float
        Start time, seconds.
    size_bytes, n_segments : int
        Transfer size, bytes and segments.
    completed : bool
        The ACK of the last byte reached the sender before the horizon.
    completion_s : float
        Transfer time: start to the ACK of the last byte at the sender, seconds
        (``nan`` if not completed).
    packets_sent : int
        Data transmissions, retransmissions included.
    packets_lost : int
        Data transmissions dropped by the router queue (or by a full sender access
        buffer, with ``Dumbbell.access_queue_packets``).
    packets_delivered : int
        Data transmissions that reached the receiver (duplicates included).
    retransmissions, timeouts, fast_retransmits : int
        As in :class:`~latency_model.sim.TransferResult`.
    signals : int
        Router signals (Source Quench or ECN echoes) that reached the sender before the
        transfer completed; each was passed to the rule's ``on_signal``.
    triple_dupacks : int
        Times the sender's duplicate-ACK count reached 3 (a "triple dupACK" received,
        whether or not it triggered a fast retransmit).
    bytes_acked : int
        Bytes cumulatively acknowledged at the sender when the run stopped (the goodput of
        a flow the horizon cut off; ``size_bytes`` if completed).
    acks_lost : int
        ACKs dropped by the reverse port's full buffer (0 without ``Dumbbell.reverse_rate_bps``).
    """

    index: int
    node: int
    start_s: float
    size_bytes: int
    n_segments: int
    completed: bool
    completion_s: float
    packets_sent: int
    packets_lost: int
    packets_delivered: int
    retransmissions: int
    timeouts: int
    fast_retransmits: int
    signals: int = 0
    triple_dupacks: int = 0
    bytes_acked: int = 0
    acks_lost: int = 0

    def to_dict(self) -> dict:
        """Plain dict of the measures."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ScenarioResult:
    """Outcome of :func:`run`.

    Attributes
    ----------
    flows : tuple of FlowRecord
        One record per flow, in scenario order.
    queue : QueueSeries
        Router queue time series over ``[0, end_s)``.
    end_s : float
        Time the run stopped, seconds (the horizon, or the last event).
    in_flight : int
        Data packets still travelling when the run stopped (0 without a horizon).
    signals_sent : int
        Source Quench messages sent or packets marked by the router (0 without signals).
    source_sent, source_lost : int
        Packets offered to and dropped by the router queue from the on-off sources.
    rtt : tuple of RttLog
        One per flow with ``Scenario.record_rtt``; empty otherwise.
    ack_queue : QueueSeries or None
        Reverse (ACK) port time series, ACKs counted as packets; ``None`` without
        ``Dumbbell.reverse_rate_bps``.
    cwnd : tuple of CwndSeries or None
        One congestion-window series per flow (``None`` for a flow that never started);
        ``None`` unless ``Scenario.record_cwnd``.
    """

    flows: tuple
    queue: QueueSeries
    end_s: float
    in_flight: int
    signals_sent: int = 0
    source_sent: int = 0
    source_lost: int = 0
    rtt: tuple = ()
    ack_queue: QueueSeries | None = None
    cwnd: tuple | None = None

    def column(self, name: str) -> np.ndarray:
        """One :class:`FlowRecord` field for every flow, as an array.

        Parameters
        ----------
        name : str
            A :class:`FlowRecord` field, e.g. ``"completion_s"`` (seconds),
            ``"packets_lost"`` (packets) or ``"bytes_acked"`` (bytes).

        Returns
        -------
        ndarray, shape (len(flows),)
            The field of each flow in scenario order, in the field's unit (float for
            times, int for counts and sizes, bool for ``completed``).

        Raises
        ------
        ValueError
            If ``name`` is not a FlowRecord field (the message lists them).
        """
        fields = tuple(FlowRecord.__dataclass_fields__)
        try:
            known = name in fields
        except TypeError:
            known = False
        if not isinstance(name, str) or not known:
            raise ValueError(f"name must be a FlowRecord field ({', '.join(fields)}), got {name!r}")
        return np.asarray([getattr(r, name) for r in self.flows])


@dataclass(frozen=True)
class RttLog:
    """RTT samples of one flow (RFC 6298 with Karn's rule: none from an ACK covering a retransmission).

    Attributes
    ----------
    time_s, rtt_s, cwnd_bytes : ndarray of float
        Arrival time of the ACK, its RTT sample and cwnd when it arrived (before its
        growth), seconds, seconds, bytes.
    slow_start : ndarray of bool
        The rule's state ``in_slow_start`` when the ACK arrived.
    """

    time_s: np.ndarray
    rtt_s: np.ndarray
    cwnd_bytes: np.ndarray
    slow_start: np.ndarray

    @classmethod
    def from_samples(cls, samples) -> "RttLog":
        """From ``(time_s, rtt_s, cwnd_bytes, in_slow_start)`` tuples."""
        a = np.asarray(samples, dtype=float).reshape(-1, 4)
        return cls(time_s=a[:, 0], rtt_s=a[:, 1], cwnd_bytes=a[:, 2], slow_start=a[:, 3].astype(bool))


# Events after which a flow's sender may have changed its window (recorded with record_cwnd).
_SENDER_EVENTS = frozenset(("start", "ack", "ngwa_ack", "rto", "signal"))

_SLOTS = 4
"""Heap keys per scheduling ``seq``: a flow's packet (engine ``seq`` s) becomes up to three
events of the path (router arrival, or a Source Quench and a receiver arrival), keyed
``4 s``, ``4 s + 1``, ``4 s + 2``, so they keep their place among the engine's timers."""


class _Clock:
    """The scenario's event heap, ordered by ``(tick, key)`` as the engine orders
    ``(tick, seq)`` (:func:`.flat.before`): ``key`` is ``_SLOTS`` times the scheduling ``seq`` (shared with the
    flows' engines, :mod:`.kernel_multi`) plus the packet's slot."""

    __slots__ = ("heap", "seq", "slot")

    def __init__(self) -> None:
        self.heap: list = []
        self.seq = 0  # the next scheduling seq
        self.slot = -1  # >= 0: the key of the next push (a flow's packet being handed on)

    def push(self, time_s: float, kind: str, payload) -> None:
        """Schedule ``kind`` at ``time_s`` (seconds): the next seq, or the packet's next slot."""
        if self.slot < 0:
            key = _SLOTS * self.seq
            self.seq += 1
        else:
            key = self.slot
            self.slot += 1
        heapq.heappush(self.heap, (tick(time_s), key, time_s, kind, payload))

    def at(self, time_s: float, seq: int, kind: str, payload) -> None:
        """Schedule ``kind`` at ``time_s`` with the engine's ``seq`` (a timer it armed)."""
        heapq.heappush(self.heap, (tick(time_s), _SLOTS * seq, time_s, kind, payload))

    def pop(self):
        """The next event ``(time_s, kind, payload)``, or None."""
        if not self.heap:
            return None
        _, _, time_s, kind, payload = heapq.heappop(self.heap)
        return time_s, kind, payload


class _Network:
    """The dumbbell's ports and the per-flow counters; the ``link`` every flow's ends use."""

    def __init__(self, q: _Clock, topo: Dumbbell, header: int, n_flows: int, ngwa=None) -> None:
        self.q = q
        self.header = header
        self.access_delay = topo.access_delay_s
        self.bn_delay = topo.bottleneck_delay_s
        self.ack_delay = topo.ack_delay_s
        self.senders = [Port(topo.access_rate_bps, topo.access_queue_packets) for _ in range(topo.nodes)]
        self.receivers = [Port(topo.access_rate_bps, None) for _ in range(topo.nodes)]
        self.router = Port(topo.bottleneck_rate_bps, topo.queue_packets, record=True)
        self.signal = topo.signal
        self.tau = topo.signal_threshold_packets
        self.signals_sent = 0
        self.signals_received = [0] * n_flows
        self.ack_wire = topo.ack_bytes
        self.reverse = (None if topo.reverse_rate_bps is None
                        else Port(topo.reverse_rate_bps, topo.reverse_queue_packets, record=True))
        self.acks_lost = [0] * n_flows
        self.sent = [0] * n_flows
        self.lost = [0] * n_flows
        self.delivered = [0] * n_flows
        self.triple = [0] * n_flows
        # NGWA: per-flow options (None: plain TCP), flows active through the router and each node.
        self.ngwa = list(ngwa) if ngwa is not None else [None] * n_flows
        self.active = 0
        self.node_active = [0] * topo.nodes
        self.source_sent = 0
        self.source_lost = 0

    def _port_value(self, port: Port, n_flows: int, wire: int, fd: bool, now: float) -> float:
        """NGWA value of a port that just accepted a packet: free buffer bytes (or FD share)."""
        if port.limit is None:
            return math.inf
        free = max(port.limit - port.waiting(now), 0) * wire
        return node_value(free, n_flows, fd)

    def syn_stamp(self, fid: int, node: int, payload_bytes: int, now: float) -> float:
        """NGWA stamp of a flow's SYN at ``now``: the path's value for a full segment, with the
        flow already counted in ``n_f``. The handshake takes no time in this simulator, so the
        first advertised window is this stamp (not ``W_max``)."""
        wire = payload_bytes + self.header
        fd = self.ngwa[fid].fd
        value = math.inf
        for port, n in ((self.senders[node], self.node_active[node]), (self.router, self.active)):
            if port.limit is not None:
                free = max(port.limit - port.waiting(now), 0) * wire
                value = lower_stamp(value, node_value(free, n, fd))
        return value

    def source_arrival(self, wire_bytes: int, now: float) -> None:
        """A packet of an on-off source reaches the router (no receiver: it only takes queue room)."""
        self.source_sent += 1
        if self.router.offer(now, wire_bytes) is None:
            self.source_lost += 1

    def send(self, fid: int, node: int, seg: int, payload_bytes: int, now: float) -> None:
        self.sent[fid] += 1
        wire = payload_bytes + self.header
        left = self.senders[node].offer(now, wire)
        if left is None:  # full access-link buffer (only with access_queue_packets)
            self.lost[fid] += 1
            return
        mode = self.ngwa[fid]
        stamp = None
        if mode is not None and mode.stamping:  # NGWA: the sender access port stamps first
            stamp = self._port_value(self.senders[node], self.node_active[node], wire, mode.fd, now)
        at_router = left + self.access_delay
        if at_router <= now:  # no access link: enqueue now, as link.Link does
            self.router_arrival(fid, node, seg, payload_bytes, now, stamp)
        elif stamp is None:
            self.q.push(at_router, "router", (fid, node, seg, payload_bytes))
        else:
            self.q.push(at_router, "ngwa_router", (fid, node, seg, payload_bytes, stamp))

    def router_arrival(self, fid: int, node: int, seg: int, payload_bytes: int, now: float,
                       stamp: float | None = None) -> None:
        wire = payload_bytes + self.header
        left = self.router.offer(now, wire)
        flagged = self.signal is not None and self.router.last_seen >= self.tau
        if flagged and self.signal == "source_quench":  # straight back over the access link
            self.signals_sent += 1
            self.q.push(now + self.access_delay, "signal", fid)
        if left is None:
            self.lost[fid] += 1
            return
        marked = flagged and self.signal == "ecn"
        if marked:
            self.signals_sent += 1
        # The receiver port is fed only by the FIFO bottleneck, so offers come in time order.
        at_rcv = self.receivers[node].offer(left + self.bn_delay, wire) + self.access_delay
        if stamp is None:
            self.q.push(at_rcv, "data", (fid, seg, marked))
        else:  # NGWA: the smallest value along the path wins
            stamp = lower_stamp(stamp, self._port_value(self.router, self.active, wire,
                                                        self.ngwa[fid].fd, now))
            self.q.push(at_rcv, "ngwa_data", (fid, seg, marked, stamp))

    def reverse_ack(self, fid: int, ack: int, now: float, window: float | None = None) -> bool:
        """An ACK through the reverse port: at the port one access delay after ``now``
        (``window``: an NGWA receiver's advertised window, bytes)."""
        # ACKs leave in event order with the same access delay, so offers come in time order.
        left = self.reverse.offer(now + self.access_delay, self.ack_wire)
        if left is None:
            self.acks_lost[fid] += 1
            return False
        at = left + self.bn_delay + self.access_delay
        if window is None:
            self.q.push(at, "ack", (fid, ack))
        else:
            self.q.push(at, "ngwa_ack", (fid, ack, window))
        return True

    def send_ack(self, fid: int, ack: int, now: float, window: float | None = None) -> None:
        """A flow's receiver sends a cumulative ACK for ``ack`` segments at ``now`` (with
        ``window``, an NGWA receiver's advertised window, bytes): through the reverse port,
        or ``ack_delay_s`` later at the sender."""
        if self.reverse is not None:
            self.reverse_ack(fid, ack, now, window)
        elif window is None:
            self.q.push(now + self.ack_delay, "ack", (fid, ack))
        else:
            self.q.push(now + self.ack_delay, "ngwa_ack", (fid, ack, window))


def run(scenario: Scenario) -> ScenarioResult:
    """Run every flow of ``scenario`` through the shared dumbbell.

    Each flow's ends are the flat engine's (:class:`~latency_model.sim.kernel_multi.FlatFlow`);
    the dumbbell's ports (:class:`_Network`) carry their packets. Events run in the engine's
    order (:func:`~latency_model.sim.flat.before`): the earliest nanosecond tick, then the
    earliest scheduled.

    Parameters
    ----------
    scenario : Scenario
        Flows, topology, timers, horizon.

    Returns
    -------
    ScenarioResult
        Per-flow records, the router queue's time series and the packets left in flight.

    Raises
    ------
    ValueError
        If ``scenario`` is not a :class:`Scenario`, or a flow's rule is not of a registered
        class (:data:`~latency_model.growth.RULES`).
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {scenario!r}")
    flows = scenario.flows
    cfg = scenario.config
    horizon = scenario.horizon_s
    for i, f in enumerate(flows):
        try:
            rule_index(f.params.rule)
        except ValueError as e:
            raise ValueError(f"flows[{i}].params.{e}") from None
    clock = _Clock()
    net = _Network(clock, scenario.topology, cfg.header_bytes, len(flows), [f.ngwa for f in flows])
    ends: list[FlatFlow | None] = [None] * len(flows)
    windows: list[NgwaReceiver | None] = [None] * len(flows)  # NGWA: the receivers' advertised windows
    for i, f in enumerate(flows):
        clock.push(f.start_s, "start", i)
    sources = scenario.sources
    for k, src in enumerate(sources):
        clock.push(src.start_s, "source", k)
    logs = [CwndLog() for _ in flows] if scenario.record_cwnd else None
    rtt_logs: list[list] = [[] for _ in flows]

    def event(fid: int, end: FlatFlow, kind: int, value: int, now: float, window=None) -> None:
        """Run one event of a flow; what it sent and armed goes to the path and the heap, in
        the engine's seq order."""
        end.event(kind, value, now, clock.seq, window)
        node = flows[fid].node
        for seq, seg, payload_bytes in end.take_data():
            clock.slot = _SLOTS * seq
            net.send(fid, node, seg, payload_bytes, now)
        for seq, ack in end.take_acks():
            clock.slot = _SLOTS * seq
            net.send_ack(fid, ack, now, None if windows[fid] is None else windows[fid].window())
        clock.slot = -1
        for t, seq, timer in end.armed():
            clock.at(t, seq, timer, (fid, seq))
        clock.seq = end.seq

    def on_ack(fid: int, ack: int, now: float, window=None) -> None:
        end = ends[fid]
        if end.done:
            return
        if scenario.record_rtt:
            r = end.rtt_sample(ack, now)
            if r is not None:
                rtt_logs[fid].append((now, r, end.cwnd, end.state().in_slow_start))
        event(fid, end, FLOW_ACK, ack, now, window)
        if end.dupacks == (2, 3):
            net.triple[fid] += 1
        if end.done:  # FIN: the flow leaves the routers' count n_f
            net.active -= 1
            net.node_active[flows[fid].node] -= 1

    def on_data(fid: int, seg: int, marked: bool, now: float, stamp=None) -> None:
        net.delivered[fid] += 1
        if marked:  # ECN echo: reaches the sender one ACK path later
            clock.push(now + net.ack_delay, "signal", fid)
        if windows[fid] is not None:
            windows[fid].on_segment(seg, now, stamp)
        event(fid, ends[fid], FLOW_SEGMENT, seg, now)

    end_s = 0.0
    while True:
        ev = clock.pop()
        if ev is None:
            break
        now, kind, payload = ev
        if (kind == "rto" or kind == "delack") and not ends[payload[0]].live(kind, payload[1]):
            continue  # cancelled or re-armed since: dropped unseen
        if horizon is not None and now > horizon:
            break
        end_s = now
        if kind == "data":
            on_data(*payload, now)
        elif kind == "router":
            net.router_arrival(*payload, now)
        elif kind == "ack":
            on_ack(*payload, now)
        elif kind == "rto" or kind == "delack":
            fid = payload[0]
            event(fid, ends[fid], FLOW_RTO if kind == "rto" else FLOW_DELACK, 0, now)
        elif kind == "signal":
            end = ends[payload]
            if not end.done:
                net.signals_received[payload] += 1
                flows[payload].params.rule.on_signal(end.state(), net.signal)
                event(payload, end, FLOW_SEND, 0, now)  # a rule may also open the window
        elif kind == "ngwa_data":
            fid, seg, marked, stamp = payload
            on_data(fid, seg, marked, now, stamp)
        elif kind == "ngwa_router":
            fid, node, seg, payload_bytes, stamp = payload
            net.router_arrival(fid, node, seg, payload_bytes, now, stamp)
        elif kind == "ngwa_ack":
            fid, ack, window = payload
            on_ack(fid, ack, now, window)
        elif kind == "source":
            src = sources[payload]
            net.source_arrival(src.packet_bytes, now)
            nxt = src.next_send(now)
            if nxt is not None:
                clock.push(nxt, "source", payload)
        else:  # "start"
            f = flows[payload]
            net.active += 1  # SYN: the flow enters the routers' count n_f
            net.node_active[f.node] += 1
            ensure_queues(f.n_segments, int(f.params.rwnd))
            if f.ngwa is None:
                end = FlatFlow(f.params, f.size_bytes, cfg)
            else:
                rcv = windows[payload] = NgwaReceiver(f.ngwa, f.params.rwnd * f.params.mss_bytes)
                if f.ngwa.stamping:  # the SYN's stamp sets the first advertised window
                    rcv.on_syn(net.syn_stamp(payload, f.node, f.params.mss_bytes, now))
                end = FlatFlow(f.params, f.size_bytes, cfg, cwnd_on=f.ngwa.cw, window_bytes=rcv.window())
            ends[payload] = end
            event(payload, end, FLOW_SEND, 0, now)
        if logs is not None and kind in _SENDER_EVENTS:
            fid = payload[0] if kind in ("ack", "ngwa_ack", "rto") else payload
            end = ends[fid]
            logs[fid].note(now, end.cwnd, end.ssthresh, end.acked_bytes, end.mss)
    if horizon is not None:
        end_s = horizon

    records = []
    for i, f in enumerate(flows):
        end = ends[i]
        done = end is not None and end.done
        retx, timeouts, frx = end.counters() if end is not None else (0, 0, 0)
        records.append(FlowRecord(
            index=i,
            node=f.node,
            start_s=f.start_s,
            size_bytes=f.size_bytes,
            n_segments=f.n_segments,
            completed=done,
            completion_s=end.completion_s - f.start_s if done else math.nan,
            packets_sent=net.sent[i],
            packets_lost=net.lost[i],
            packets_delivered=net.delivered[i],
            retransmissions=retx,
            timeouts=timeouts,
            fast_retransmits=frx,
            signals=net.signals_received[i],
            triple_dupacks=net.triple[i],
            bytes_acked=end.acked_bytes if end is not None else 0,
            acks_lost=net.acks_lost[i],
        ))
    in_flight = sum(net.sent) - sum(net.lost) - sum(net.delivered)
    rtt = tuple(RttLog.from_samples(s) for s in rtt_logs) if scenario.record_rtt else ()
    ack_queue = None if net.reverse is None else net.reverse.series(end_s, scenario.bin_s)
    cwnd = None if logs is None else tuple(
        None if ends[i] is None else log.series() for i, log in enumerate(logs))
    return ScenarioResult(flows=tuple(records), queue=net.router.series(end_s, scenario.bin_s),
                          end_s=end_s, in_flight=in_flight, signals_sent=net.signals_sent,
                          source_sent=net.source_sent, source_lost=net.source_lost, rtt=rtt,
                          ack_queue=ack_queue, cwnd=cwnd)


def random_flows(
    n_flows: int,
    sizes: SizeGenerator,
    params,
    *,
    start_window_s: float,
    nodes: int,
    seed,
) -> list[Flow]:
    """Flows with uniform start times and random sizes, spread round-robin over the nodes.

    Burst TCP, Section 4.1: start times uniform on [0, 900 s], Pareto(4, 1.2) sizes in
    packets. Sizes are whole packets of ``params.mss_bytes``.

    Parameters
    ----------
    n_flows : int
        Number of flows, >= 1.
    sizes : SizeGenerator
        File sizes, packets.
    params : TcpParams or sequence of TcpParams
        The TCP of every flow, or one per flow.
    start_window_s : float
        Start times are uniform on ``[0, start_window_s)``, seconds (>= 0).
    nodes : int
        Sender nodes; flow ``i`` uses node ``i mod nodes`` (>= 1).
    seed : int or numpy.random.SeedSequence
        Seed of the draw, an integer >= 0 or a SeedSequence (``None`` is refused: the flows
        could not be drawn again). Sizes and start times come from two independent child
        streams, so the same seed gives the same sizes whatever the TCP variant
        (common random numbers across variants).

    Returns
    -------
    list of Flow
        In index order (not sorted by start time).

    Raises
    ------
    ValueError
        Naming the first invalid parameter (``params`` not TcpParams, ``seed`` not an
        integer >= 0 or a SeedSequence, ...).
    """
    n = check_int("n_flows", n_flows, low=1)
    if not isinstance(sizes, SizeGenerator):
        raise ValueError(f"sizes must be a SizeGenerator, got {sizes!r}")
    window = check_real("start_window_s", start_window_s, low=0.0)
    nodes = check_int("nodes", nodes, low=1)
    if isinstance(params, TcpParams):
        per_flow = [params] * n
    else:
        what = f"params must be one TcpParams or a sequence of {n} of them"
        if isinstance(params, (str, bytes, dict)) or params is None:
            raise ValueError(f"{what}, got {params!r}")
        try:
            per_flow = list(params)
        except TypeError:
            raise ValueError(f"{what}, got {params!r}") from None
        if len(per_flow) != n:
            raise ValueError(f"{what}, got {len(per_flow)} TcpParams")
        for i, prm in enumerate(per_flow):
            if not isinstance(prm, TcpParams):
                raise ValueError(f"params[{i}] must be a TcpParams, got {prm!r}")
    # None (fresh OS entropy) is refused: the flows could not be drawn again.
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(
        check_int("seed", seed, low=0))
    # Children built from the key, not spawn(), so reusing one SeedSequence gives the same flows.
    size_ss, start_ss = (np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (k,)) for k in (0, 1))
    packets = sizes.sample_whole_packets(np.random.default_rng(size_ss), n)
    starts = np.random.default_rng(start_ss).random(n) * window
    return [Flow(float(starts[i]), int(packets[i]) * per_flow[i].mss_bytes, per_flow[i], node=i % nodes)
            for i in range(n)]
