"""The window-growth rule interface, shared by the fluid model and the simulator.

In the spirit of ns-3's ``TcpCongestionOps``: a rule is a small frozen
object holding its parameters. The packet-level simulator drives it ack by ack
through :meth:`GrowthRule.on_ack`, :meth:`GrowthRule.ssthresh_after_loss`,
:meth:`GrowthRule.on_congestion_event` and the optional hooks :meth:`GrowthRule.on_signal`
and :meth:`GrowthRule.on_rtt_sample`, with per-flow mutable state in a
:class:`CongestionState` that the rule creates. The fluid model reads its
flow-level law: :meth:`GrowthRule.next_round_window` (per-round time model) and,
where the rule has one, the closed-form :meth:`GrowthRule.continuous_law`.

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

__all__ = ["GrowthRule", "CongestionState", "ContinuousLaw"]


@dataclass(slots=True)
class CongestionState:
    """Mutable per-flow congestion state used by the simulator.

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

    cwnd: float
    ssthresh: float
    mss: int
    bytes_acked: float = 0.0

    def __post_init__(self) -> None:
        # Built once per transfer (by GrowthRule.new_state), then only mutated: plain
        # comparisons keep this check cheap. ssthresh may be inf (no threshold).
        for name, low_ok, inf_ok in (("cwnd", False, False), ("ssthresh", False, True),
                                     ("bytes_acked", True, False)):
            v = getattr(self, name)
            if (isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer))
                    or not (v > 0 or (low_ok and v == 0)) or (v == math.inf and not inf_ok) or v != v):
                allowed = ">= 0" if low_ok else "> 0"
                raise ValueError(f"{name} must be a {'' if inf_ok else 'finite '}number {allowed} "
                                 f"(bytes), got {v!r}")
        check_int("mss", self.mss, low=1)

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

    Subclasses set ``name`` and ``source`` and implement :meth:`on_ack` and
    :meth:`slow_start_round` (or override :meth:`next_round_window` entirely).
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
    def new_state(self, cwnd_bytes: float, ssthresh_bytes: float, mss_bytes: int) -> CongestionState:
        """Fresh per-flow state at the start of a transfer."""
        return CongestionState(cwnd=float(cwnd_bytes), ssthresh=float(ssthresh_bytes), mss=mss_bytes)

    @abc.abstractmethod
    def on_ack(self, st: CongestionState, acked_bytes: int) -> None:
        """Grow ``st.cwnd`` for one ACK that newly acknowledges ``acked_bytes`` (> 0) bytes.

        Not called for duplicate ACKs or during fast recovery.
        """

    def ssthresh_after_loss(self, st: CongestionState, flight_bytes: float) -> float:
        """New ssthresh after a loss, bytes: ``max(FlightSize/2, 2 MSS)`` (RFC 5681, Eq. 4)."""
        return max(flight_bytes / 2.0, 2.0 * st.mss)

    def on_congestion_event(self, st: CongestionState, kind: str) -> None:
        """Hook for ``kind`` in {"fast_retransmit", "timeout"} (e.g. B-TCP disables itself)."""

    def on_signal(self, st: CongestionState, signal: str) -> None:
        """Hook for router signals (ICMP source quench, ECN, NGWA stamps); default: ignore."""

    def on_rtt_sample(self, st: CongestionState, rtt_s: float) -> None:
        """Hook for each RTT sample, seconds (RFC 6298 with Karn's rule: none from an
        ACK that covers a retransmitted segment), called just before the :meth:`on_ack` of the same ACK
        (and also during fast recovery, where no ``on_ack`` follows); default: ignore."""

    # Description -------------------------------------------------------------
    def describe(self) -> dict:
        """JSON-serialisable ``{"name": ..., <parameter>: <value>, ...}``."""
        return {"name": self.name, **dataclasses.asdict(self)}
