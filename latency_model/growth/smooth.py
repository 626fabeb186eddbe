"""SmoothTCP's slow start (Vieira & Bauer, SmoothTCP, Section IV.C, Eq. 7-11)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_choice, check_real
from .base import CongestionState, GrowthRule
from .flow import smooth_a_of_w, smooth_integral, smooth_restart_a_a, smooth_w_limit

__all__ = ["SmoothStartRule", "SmoothState", "PER_ACK_MODES"]

PER_ACK_MODES = ("euler", "exact")
SIGNALS = ("source_quench", "ecn")


@dataclass(slots=True)
class SmoothState(CongestionState):
    """Congestion state plus SmoothTCP's slow-start variables.

    Attributes
    ----------
    acks : float
        ``a`` of Eq. 7-8: ACKs since the (virtual) start of the current curve.
    a_a : float
        Current ``A_a`` (changed by Eq. 10 on each congestion signal).
    w_c : float
        Current limit of Eq. 9, packets.
    ws : float
        The pseudo-code's ``Ws``: the initial ssthresh, bytes.
    active : bool
        The pseudo-code's ``slow_start`` flag.
    resync : bool
        Recompute ``acks`` from the window (Eq. 11) at the next ACK, after the
        recovery has set the reduced window.
    """

    acks: float = 0.0
    a_a: float = 40.0
    w_c: float = math.inf
    ws: float = math.inf
    active: bool = True
    resync: bool = False


@dataclass(frozen=True)
class SmoothStartRule(GrowthRule):
    """SmoothTCP slow start: ``D = A_a - A_a tanh(B_a a)`` per ACK (Eq. 7), w -> w_c (Eq. 9).

    Packet level, ``w`` = cwnd in packets, ``a`` = ACKs so far on the current curve:
    while the slow start is on, each ACK moves the window exactly along Eq. 8 from ``a``
    to ``a + 1`` (``per_ack = "exact"``, default: ``(w + sqrt(T) - 1)^2 += 2 int_a^{a+1}
    D``), or adds ``D(a)/(w + sqrt(T) - 1)`` (``"euler"``: one Euler step of Eq. 7 with
    Section III.B's fairness rule ``D > 0 => dw = D/w`` for T = 1, the pseudo-code's
    per-ACK step); then ``a += 1``. The default is "exact" because one Euler step per ACK
    is far from Eq. 8 while ``D/w`` is large: the first ACK takes the window from 1 to
    41 packets where Eq. 8 gives 9, and the Euler trace reaches ``w_c`` after about six
    RTTs instead of approaching it geometrically. The slow start ends when ``w >= w_c``, when
    ``w >= Ws`` (the initial ssthresh) or when ``D(a) <= kappa`` (the slow-start step has
    fallen below the congestion-avoidance step). Congestion avoidance without router
    signals is Eq. 6 with ``D = kappa``: ``kappa/w`` per ACK (``kappa/b`` per RTT).
    On a congestion event or signal during the slow start (Eq. 10-11): ``d = w_c - w``,
    ``A_a <- A'_a`` (Eq. 10, so the new limit is the window at the signal), the window
    is halved (by the loss recovery for a loss; by the rule for an ECN/source-quench
    signal) and ``a`` is recomputed from the halved window by Eq. 11.

    Flow level, ``a(w)`` of Eq. 11 and ``w(a)`` of Eq. 8 (``M_a = 0``): one RTT brings
    ``w/b`` ACKs, ``w_next = max(w(a(w) + w/b), w + kappa/b)`` in the slow start (clipped
    at ``W_SS``), ``w + kappa/b`` after it. No continuous law of the
    exponential-then-linear kind.

    Undefined constants and misprints (validation/DEVIATIONS.md): the paper never
    defines ``T``. Here ``T`` is Eq. 9-10's constant: ``w(a) = sqrt(2 I(a) + T) -
    sqrt(T) + 1``, the solution of ``dw/da = D/(w + sqrt(T) - 1)``, ``w(0) = 1``; default
    ``T = 1`` makes that the fairness rule ``dw = D/w``. ``M_a = 0`` (Eq. 8 has
    ``cosh(a B_a)``). The pseudo-code's ``w + A_a - C_a tanh(B_a(a + M_a))`` (no
    ``/w``, opposite signs) is not used: it adds 40 packets per ACK and contradicts Eq. 8.

    Parameters
    ----------
    a_a : float
        ``A_a`` (packets per ACK, scaled by the window), in (0, 1e4]. Default 40.
    b_a : float
        ``B_a`` (per ACK), in (0, 10]. Default 0.003038.
    t : float
        Eq. 9's constant ``T``, in (0, 1e6]. Default 1.
    kappa : float
        Fairness factor of Eq. 6 for congestion avoidance, in [0, 1]. Default 0.005
        (the paper's simulations).
    per_ack : str
        ``"exact"`` (default) or ``"euler"``.
    """

    name = "smooth-start"
    source = "SmoothTCP (Section IV.C, Eq. 7-11): smooth slow start"

    a_a: float = 40.0
    b_a: float = 0.003038
    t: float = 1.0
    kappa: float = 0.005
    per_ack: str = "exact"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "a_a", check_real("a_a", self.a_a, low=0.0, high=1e4, low_open=True))
        set_(self, "b_a", check_real("b_a", self.b_a, low=0.0, high=10.0, low_open=True))
        set_(self, "t", check_real("t", self.t, low=0.0, high=1e6, low_open=True))
        set_(self, "kappa", check_real("kappa", self.kappa, low=0.0, high=1.0))
        check_choice("per_ack", self.per_ack, PER_ACK_MODES)

    @property
    def w_c(self) -> float:
        """Limit of the slow start, Eq. 9, packets."""
        return smooth_w_limit(self.a_a, self.b_a, self.t)

    def _d(self, a, a_a):
        return a_a - a_a * np.tanh(self.b_a * np.asarray(a, dtype=float))

    # Flow level ---------------------------------------------------------------
    def slow_start_round(self, w, b):
        """One round (``w/b`` ACKs) along Eq. 8 from a(w) (for w < 1, from the window itself)."""
        w = np.asarray(w, dtype=float)
        a = smooth_a_of_w(w, self.a_a, self.b_a, self.t)
        a0 = np.where(np.isfinite(a), a, 0.0)
        u0 = np.maximum(w, 1.0) + math.sqrt(self.t) - 1.0
        grow = 2.0 * (smooth_integral(a0 + w / b, self.a_a, self.b_a) - smooth_integral(a0, self.a_a, self.b_a))
        return np.sqrt(u0**2 + grow) - math.sqrt(self.t) + 1.0 + np.minimum(w - 1.0, 0.0)

    def congestion_avoidance_round(self, w, b):
        """Without router signals: ``kappa/w`` per ACK, ``w/b`` ACKs a round."""
        return w + self.kappa / b

    def next_round_window(self, w, w_ss, b):
        # Slow start lasts while Eq. 7's increment exceeds the congestion-avoidance one
        # (and the window is below W_SS); a window past Eq. 9's limit has no a(w).
        w, w_ss = np.broadcast_arrays(np.asarray(w, dtype=float), np.asarray(w_ss, dtype=float))
        a = smooth_a_of_w(w, self.a_a, self.b_a, self.t)
        finite = np.isfinite(a)
        ca = self.congestion_avoidance_round(w, b)
        in_ss = finite & (self._d(np.where(finite, a, 0.0), self.a_a) > self.kappa) & (w < w_ss)
        ss = np.minimum(np.maximum(self.slow_start_round(w, b), ca), np.maximum(w_ss, w))
        return np.where(in_ss, ss, ca)

    # Packet level -------------------------------------------------------------
    def new_state(self, cwnd_bytes, ssthresh_bytes, mss_bytes) -> SmoothState:
        st = SmoothState(cwnd=float(cwnd_bytes), ssthresh=float(ssthresh_bytes), mss=mss_bytes)
        st.a_a, st.w_c, st.ws = self.a_a, self.w_c, float(ssthresh_bytes)
        st.acks = float(smooth_a_of_w(st.cwnd / mss_bytes, st.a_a, self.b_a, self.t))
        st.active = math.isfinite(st.acks)
        return st

    def on_ack(self, st: SmoothState, acked_bytes: int) -> None:
        mss = st.mss
        if st.active and st.resync:
            st.acks = float(smooth_a_of_w(st.cwnd / mss, st.a_a, self.b_a, self.t))
            st.resync = False
            st.active = math.isfinite(st.acks)
        w = st.cwnd / mss
        if st.active and (w >= st.w_c or st.cwnd >= st.ws or float(self._d(st.acks, st.a_a)) <= self.kappa):
            st.active = False
        if not st.active:
            self._congestion_avoidance_ack(st, w)
            return
        # Eq. 7 holds for w >= 1 packet (w + sqrt(T) - 1 reaches 0 below it): a window under
        # one packet grows as one packet would, as in next_round_window.
        if self.per_ack == "euler":
            w += float(self._d(st.acks, st.a_a)) / (max(w, 1.0) + math.sqrt(self.t) - 1.0)
        else:
            u = max(w, 1.0) + math.sqrt(self.t) - 1.0
            step = smooth_integral(st.acks + 1.0, st.a_a, self.b_a) - smooth_integral(st.acks, st.a_a, self.b_a)
            w = math.sqrt(u * u + 2.0 * float(step)) - math.sqrt(self.t) + 1.0 + min(w - 1.0, 0.0)
        st.acks += 1.0
        st.cwnd = w * mss

    def _congestion_avoidance_ack(self, st: SmoothState, w: float) -> None:
        """Congestion avoidance per ACK without router signals: Eq. 6 with ``D = kappa``,
        ``dw = kappa/w`` packets (Eq. 3). ``w``: cwnd in packets."""
        st.cwnd += self.kappa * st.mss / w

    def _restart(self, st: SmoothState) -> None:
        """Eq. 10: new A_a so that the new limit is the current window."""
        w = st.cwnd / st.mss
        if not st.active or w <= 1.0:
            return
        if w >= st.w_c:
            st.active = False
            return
        st.a_a = smooth_restart_a_a(st.a_a, self.b_a, self.t, st.w_c - w)
        st.w_c = smooth_w_limit(st.a_a, self.b_a, self.t)
        st.resync = True

    def on_congestion_event(self, st: SmoothState, kind: str) -> None:
        if kind not in ("fast_retransmit", "timeout"):
            raise ValueError(f"kind must be one of fast_retransmit, timeout, got {kind!r}")
        self._restart(st)

    def on_signal(self, st: SmoothState, signal: str) -> None:
        if signal in SIGNALS:
            self._restart(st)
            st.cwnd = max(st.cwnd / 2.0, float(st.mss))
