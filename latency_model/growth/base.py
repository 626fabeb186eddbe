"""The window-growth rule interface, shared by the fluid model and the simulator.

In the spirit of ns-3's ``TcpCongestionOps``: a rule is a small frozen
object holding its parameters. Each rule writes its packet-level behaviour
once, as a law function over a state vector (:attr:`GrowthRule.law`): the hooks ACK, LOSS,
fast retransmit, timeout, RTT sample and the router's signals, on per-flow state in a
:class:`CongestionState` that the rule creates. The packet-level simulator runs every rule
of the registry (:data:`latency_model.growth.RULES`) through that law, compiled by numba or
interpreted from the same source (:mod:`latency_model.growth.laws`); the methods
:meth:`GrowthRule.on_ack`, :meth:`GrowthRule.ssthresh_after_loss`,
:meth:`GrowthRule.on_congestion_event`, :meth:`GrowthRule.on_signal` and
:meth:`GrowthRule.on_rtt_sample` call it on a :class:`CongestionState` (the flow-level round
law of :mod:`latency_model.growth.flow`, the multi-flow scenarios' router signals).
The fluid model reads its flow-level law: :meth:`GrowthRule.next_round_window` (per-round
time model) and, where the rule has one, the closed-form :meth:`GrowthRule.continuous_law`.

Adding a rule: one module in this package with one frozen-dataclass subclass of
:class:`GrowthRule` (``name``, ``source``, :meth:`GrowthRule.slow_start_round`, ``law``,
``_pack`` and, for state beyond cwnd, ssthresh and bytes_acked, a ``state_class``), and one
line in :data:`latency_model.growth.RULES`. The simulator refuses a rule whose class is not
registered (a subclass of a registered rule included): its law is not in the engine's
dispatch (:func:`latency_model.growth.laws.rule_index`).

Loss recovery (NewReno, Limited Transmit, the paper's proposal, Early
Retransmit) is not part of a rule: any rule combines with any recovery variant.
"""

from __future__ import annotations

import abc
import math
import dataclasses
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ..checks import check_int

__all__ = ["GrowthRule", "CongestionState", "ContinuousLaw", "state_slot", "state_range", "ACK", "LOSS",
           "FAST_RETRANSMIT", "TIMEOUT", "RTT", "ECN", "SOURCE_QUENCH", "CWND", "SSTHRESH",
           "BYTES_ACKED", "FIRST_SLOT"]


# The hooks of a rule's law (:attr:`GrowthRule.law`): what the sender reports.
ACK, LOSS, FAST_RETRANSMIT, TIMEOUT, RTT, ECN, SOURCE_QUENCH = range(7)
"""``hook`` values of a law: an ACK of ``x`` new bytes (:meth:`GrowthRule.on_ack`); a loss
with FlightSize ``x`` bytes, the law returns the new ssthresh (:meth:`GrowthRule.ssthresh_after_loss`);
the congestion events fast retransmit and timeout; an RTT sample of ``x`` seconds; the router
signals ECN and ICMP Source Quench (:meth:`GrowthRule.on_signal`)."""
EVENTS = {"fast_retransmit": FAST_RETRANSMIT, "timeout": TIMEOUT}
SIGNALS = {"ecn": ECN, "source_quench": SOURCE_QUENCH}
CWND, SSTHRESH, BYTES_ACKED = range(3)
"""Slots of a state vector ``S`` that every rule shares: cwnd and ssthresh (bytes) and the
bytes acknowledged since the last byte-counting increment (RFC 3465). A rule's own state
follows from slot :data:`FIRST_SLOT` on."""
FIRST_SLOT = 3


def state_slot(index: int, kind=float, doc: str = ""):
    """Property of a :class:`CongestionState` subclass that names slot ``index`` of its
    state vector ``v``: ``float`` (stored as is), ``int``, ``bool`` (stored as 0.0/1.0) or
    ``"optional"`` (a float, or ``None`` stored as NaN)."""
    if kind is bool:
        def get(st):
            return st.v[index] != 0.0

        def put(st, x):
            st.v[index] = 1.0 if x else 0.0
    elif kind is int:
        def get(st):
            return int(st.v[index])

        def put(st, x):
            st.v[index] = float(x)
    elif kind == "optional":
        def get(st):
            x = st.v[index]
            return None if x != x else x

        def put(st, x):
            st.v[index] = math.nan if x is None else float(x)
    else:
        def get(st):
            return st.v[index]

        def put(st, x):
            st.v[index] = x
    return property(get, put, doc=doc)


class SlotRange:
    """A live view of ``n`` consecutive slots of a state vector (a list-like whose items
    are read from and written to the vector)."""

    __slots__ = ("_v", "_lo", "_n")

    def __init__(self, v, lo: int, n: int) -> None:
        self._v, self._lo, self._n = v, lo, n

    def _at(self, i: int) -> int:
        if not -self._n <= i < self._n:
            raise IndexError(f"slot index {i} out of range for {self._n} slots")
        return self._lo + (i % self._n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(self)[i]
        return self._v[self._at(i)]

    def __setitem__(self, i: int, x: float) -> None:
        self._v[self._at(i)] = x

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        return iter(self._v[self._lo:self._lo + self._n])

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


def state_range(index: int, n: int, doc: str = ""):
    """Property of a :class:`CongestionState` subclass that names ``n`` slots of its state
    vector from ``index`` on: reads give a live :class:`SlotRange`, assignment copies a
    sequence of ``n`` floats in."""
    def get(st):
        return SlotRange(st.v, index, n)

    def put(st, xs):
        xs = list(xs)
        if len(xs) != n:
            raise ValueError(f"expected {n} values, got {len(xs)}")
        st.v[index:index + n] = xs
    return property(get, put, doc=doc)


class CongestionState:
    """Mutable per-flow congestion state used by the simulator: a state vector and the MSS.

    ``v`` is the vector a rule's law (:attr:`GrowthRule.law`) reads and writes: slots
    :data:`CWND`, :data:`SSTHRESH`, :data:`BYTES_ACKED`, then the rule's own
    (``N_SLOTS`` of them, named by the subclass with :func:`state_slot`). The compiled
    engine holds the same vector in its float state, so one law serves both engines.

    Attributes
    ----------
    cwnd : float
        Congestion window, bytes.
    ssthresh : float
        Slow-start threshold, bytes.
    mss : int
        Sender maximum segment size, bytes.
    bytes_acked : float
        Bytes acknowledged since the last congestion-avoidance increment
        (appropriate byte counting, RFC 3465).
    """

    __slots__ = ("v", "mss")
    N_SLOTS = 0
    """Slots of the rule's own state after :data:`FIRST_SLOT`."""

    cwnd = state_slot(CWND)
    ssthresh = state_slot(SSTHRESH)
    bytes_acked = state_slot(BYTES_ACKED)

    def __init__(self, cwnd: float, ssthresh: float, mss: int, bytes_acked: float = 0.0) -> None:
        # Built once per transfer (by GrowthRule.new_state), then only mutated: plain
        # comparisons keep this check cheap. ssthresh may be inf (no threshold).
        for name, v, low_ok, inf_ok in (("cwnd", cwnd, False, False), ("ssthresh", ssthresh, False, True),
                                        ("bytes_acked", bytes_acked, True, False)):
            if (isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer))
                    or not (v > 0 or (low_ok and v == 0)) or (v == math.inf and not inf_ok) or v != v):
                allowed = ">= 0" if low_ok else "> 0"
                raise ValueError(f"{name} must be a {'' if inf_ok else 'finite '}number {allowed} "
                                 f"(bytes), got {v!r}")
        check_int("mss", mss, low=1)
        self.mss = mss
        self.v = [cwnd, ssthresh, bytes_acked] + [0.0] * self.N_SLOTS

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mss={self.mss!r}, v={self.v!r})"

    @property
    def in_slow_start(self) -> bool:
        """True while ``cwnd < ssthresh`` (RFC 5681, Section 3.1)."""
        return self.cwnd < self.ssthresh


class ContinuousLaw(NamedTuple):
    """Closed-form fluid law: exponential slow start, then linear congestion avoidance.

    Attributes
    ----------
    ss_log_growth : float
        d ln(w)/dt in slow start, per RTT (``ln(1 + 1/b)`` for RFC 5681).
    ca_slope : float
        dw/dt in congestion avoidance, packets per RTT per RTT (``1/b`` for RFC 5681).
    """

    ss_log_growth: float
    ca_slope: float


@dataclass(frozen=True)
class GrowthRule(abc.ABC):
    """Base class of the window-growth rules (one subclass per rule, frozen dataclass).

    Subclasses set ``name`` and ``source``, implement :meth:`slow_start_round` (or
    override :meth:`next_round_window` entirely) and give their packet-level law once:
    ``law``, a function ``law(hook, S, R, mss, x) -> float`` that numba can compile (plain
    arithmetic and ``math`` over the float vectors ``S`` and ``R``), with the module
    functions it calls named in ``law_helpers``, the parameters it reads packed by
    ``_pack`` and, for a state beyond cwnd, ssthresh and bytes_acked, a ``state_class``
    whose ``N_SLOTS`` named slots follow :data:`FIRST_SLOT`. The hooks are :data:`ACK`,
    :data:`LOSS` (returns the new ssthresh), :data:`FAST_RETRANSMIT`, :data:`TIMEOUT`,
    :data:`RTT`, :data:`ECN` and
    :data:`SOURCE_QUENCH`; ``law_hooks`` names those of the last five the law acts on. The
    simulator's engine calls the law, compiled or interpreted, on its float state
    (:mod:`latency_model.growth.laws`); the methods :meth:`on_ack`,
    :meth:`ssthresh_after_loss`, :meth:`on_congestion_event`, :meth:`on_signal` and
    :meth:`on_rtt_sample` call it on a :class:`CongestionState`'s vector. A subclass runs in
    the simulator once its class is in :data:`latency_model.growth.RULES` (one line).
    """

    name: ClassVar[str] = "abstract"
    source: ClassVar[str] = ""

    # Flow level (fluid model) -------------------------------------------------
    def next_round_window(self, w: np.ndarray, w_ss: np.ndarray, b: int) -> np.ndarray:
        """Window of the next round given this round's window, packets (before the rwnd cap).

        Below ``w_ss`` the rule's :meth:`slow_start_round`, stopped exactly at ``w_ss`` (no
        overshoot in the per-round law); from ``w_ss`` on, :meth:`congestion_avoidance_round`.

        Parameters
        ----------
        w : ndarray
            Window of the current round, packets.
        w_ss : ndarray
            Slow-start threshold, packets.
        b : int
            Delayed-ACK factor (packets per ACK), >= 1.

        Returns
        -------
        ndarray
            Packets, ``w`` and ``w_ss`` broadcast together.
        """
        b = check_int("b", b, low=1)
        w, w_ss = np.broadcast_arrays(np.asarray(w, dtype=float), np.asarray(w_ss, dtype=float))
        ss = np.minimum(self.slow_start_round(w, b), np.maximum(w_ss, w))
        return np.where(w < w_ss, ss, self.congestion_avoidance_round(w, b))

    @abc.abstractmethod
    def slow_start_round(self, w: np.ndarray, b: int) -> np.ndarray:
        """Window after one round of slow start from ``w`` packets (``w/b`` ACKs), packets."""

    def congestion_avoidance_round(self, w: np.ndarray, b: int) -> np.ndarray:
        """Window after one round of congestion avoidance: ``w + 1/b`` packets (RFC 5681)."""
        return w + 1.0 / b

    def continuous_law(self, b: int) -> ContinuousLaw | None:
        """Closed-form continuous law, or ``None`` if the rule only has a per-round law."""
        return None

    # Packet level (simulator) -------------------------------------------------
    # The per-ACK law, written once: ``law(hook, S, R, mss, x) -> float`` over the state
    # vector S (CongestionState.v; the compiled engine's float state), the packed parameters
    # R (law_params) and the MSS (bytes). numba compiles it for the compiled engine (with the
    # module functions named in law_helpers); the methods below call it interpreted.
    law: ClassVar = None
    law_helpers: ClassVar[tuple[str, ...]] = ()
    law_hooks: ClassVar[frozenset] = frozenset()
    """The hooks besides :data:`ACK` and :data:`LOSS` the law acts on (of :data:`FAST_RETRANSMIT`,
    :data:`TIMEOUT`, :data:`RTT`): the compiled engine makes only those calls."""
    state_class: ClassVar[type] = CongestionState

    @property
    def law_params(self) -> tuple:
        """The rule's parameters as the flat tuple of floats its law reads (``R``)."""
        packed = self.__dict__.get("_law_params")
        if packed is None:
            packed = tuple(float(x) for x in self._pack())
            self.__dict__["_law_params"] = packed  # frozen: cached beside the fields
        return packed

    def _pack(self) -> tuple:
        """The parameters of the law, in the order it reads them."""
        return ()

    def new_state(self, cwnd_bytes: float, ssthresh_bytes: float, mss_bytes: int) -> CongestionState:
        """Fresh per-flow state at the start of a transfer."""
        return self.state_class(cwnd=float(cwnd_bytes), ssthresh=float(ssthresh_bytes), mss=mss_bytes)

    def on_ack(self, st: CongestionState, acked_bytes: int) -> None:
        """Grow ``st.cwnd`` for one ACK that newly acknowledges ``acked_bytes`` (> 0) bytes.

        Not called for duplicate ACKs or during fast recovery. A rule without a law (which
        the simulator cannot run) overrides this for the flow-level round law
        (:mod:`latency_model.growth.flow`).
        """
        if self.law is None:
            raise TypeError(f"{type(self).__name__} has no law: it must override on_ack")
        self.law(ACK, st.v, self.law_params, st.mss, acked_bytes)

    def ssthresh_after_loss(self, st: CongestionState, flight_bytes: float) -> float:
        """New ssthresh after a loss, bytes: by default ``max(FlightSize/2, 2 MSS)`` (RFC 5681, Eq. 4)."""
        if self.law is None:
            return max(flight_bytes / 2.0, 2.0 * st.mss)
        return self.law(LOSS, st.v, self.law_params, st.mss, flight_bytes)

    def on_congestion_event(self, st: CongestionState, kind: str) -> None:
        """Hook for ``kind`` in {"fast_retransmit", "timeout"} (e.g. B-TCP disables itself)."""
        hook = EVENTS.get(kind)
        if hook is None:
            raise ValueError(f"kind must be one of fast_retransmit, timeout, got {kind!r}")
        if self.law is not None:
            self.law(hook, st.v, self.law_params, st.mss, 0.0)

    def on_signal(self, st: CongestionState, signal: str) -> None:
        """Hook for router signals: ``"ecn"`` and ``"source_quench"`` go to the law; others
        (e.g. NGWA stamps) are ignored."""
        hook = SIGNALS.get(signal)
        if hook is not None and self.law is not None:
            self.law(hook, st.v, self.law_params, st.mss, 0.0)

    def on_rtt_sample(self, st: CongestionState, rtt_s: float) -> None:
        """Hook for each RTT sample, seconds (RFC 6298 with Karn's rule: none from an
        ACK that covers a retransmitted segment), called just before the :meth:`on_ack` of the same ACK
        (and also during fast recovery, where no ``on_ack`` follows)."""
        if self.law is not None:
            self.law(RTT, st.v, self.law_params, st.mss, rtt_s)

    # Description -------------------------------------------------------------
    def describe(self) -> dict:
        """JSON-serialisable ``{"name": ..., <parameter>: <value>, ...}``."""
        return {"name": self.name, **dataclasses.asdict(self)}
