"""SmoothTCP's slow start (Vieira & Bauer, SmoothTCP, Section IV.C, Eq. 7-11)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_choice, check_real
from .base import (ACK, CWND, ECN, FAST_RETRANSMIT, FIRST_SLOT, LOSS, SOURCE_QUENCH, TIMEOUT, CongestionState,
                   GrowthRule, state_slot)
from .flow import smooth_a_of_w, smooth_integral, smooth_restart_a_a, smooth_w_limit

__all__ = ["SmoothStartRule", "SmoothState", "PER_ACK_MODES", "smooth_law"]

PER_ACK_MODES = ("euler", "exact")


ACKS, A_A, W_C, WS, ACTIVE, RESYNC = range(FIRST_SLOT, FIRST_SLOT + 6)


class SmoothState(CongestionState):
    """Congestion state plus SmoothTCP's slow-start variables (slots of the state vector).

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

    __slots__ = ()
    N_SLOTS = 6
    acks = state_slot(ACKS)
    a_a = state_slot(A_A)
    w_c = state_slot(W_C)
    ws = state_slot(WS)
    active = state_slot(ACTIVE, bool)
    resync = state_slot(RESYNC, bool)

    def __init__(self, cwnd, ssthresh, mss, bytes_acked=0.0) -> None:
        super().__init__(cwnd, ssthresh, mss, bytes_acked)
        self.a_a, self.w_c, self.ws, self.active = 40.0, math.inf, math.inf, True


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
    state_class = SmoothState
    law_hooks = frozenset((FAST_RETRANSMIT, TIMEOUT))
    law_helpers = ("smooth_acks", "smooth_integral_at", "smooth_d", "smooth_w_limit", "smooth_restart_a_a",
                   "smooth_start_ack", "smooth_restart")

    def _pack(self):
        return (self.a_a, self.b_a, self.t, self.kappa, float(self.per_ack == "exact"))

    def new_state(self, cwnd_bytes, ssthresh_bytes, mss_bytes) -> SmoothState:
        st = self.state_class(cwnd=float(cwnd_bytes), ssthresh=float(ssthresh_bytes), mss=mss_bytes)
        st.a_a, st.w_c, st.ws = self.a_a, self.w_c, float(ssthresh_bytes)
        st.acks = smooth_acks(st.cwnd / mss_bytes, st.a_a, self.b_a, self.t)
        st.active = math.isfinite(st.acks)
        return st


# The packet-level law. R = (A_a, B_a, T, kappa, 1 for per_ack "exact" else 0); scalar
# forms of flow.py's Eq. 8 and 11 with ``math`` (the same functions compiled and interpreted).

def smooth_d(a, a_a, b_a):
    """Eq. 7's increment ``D(a) = A_a - A_a tanh(B_a a)``."""
    return a_a - a_a * math.tanh(b_a * a)


def smooth_integral_at(a, a_a, b_a):
    """``I(a)`` of :func:`~.flow.smooth_integral` for one ``a`` (``math``, no numpy)."""
    return (a_a / b_a) * (math.log(2.0) - math.log1p(math.exp(-2.0 * b_a * a)))


def smooth_acks(w, a_a, b_a, t):
    """Eq. 11 for one window ``w`` (packets): :func:`~.flow.smooth_a_of_w` with ``math``;
    0 for ``w <= 1``, ``inf`` for ``w >= w_c``."""
    u = max(w, 1.0) + math.sqrt(t) - 1.0
    inner = math.exp(-(b_a / (2.0 * a_a)) * (u * u - t) + math.log(2.0)) - 1.0
    if inner <= 0.0:
        return math.inf
    return max(math.log(inner) / (-2.0 * b_a), 0.0)


def smooth_restart(S, R, mss):
    """Eq. 10 on a congestion signal: a new ``A_a`` so that the new limit is the current
    window, and a resynchronisation of ``a`` (Eq. 11) at the next ACK."""
    w = S[CWND] / mss
    if S[ACTIVE] == 0.0 or w <= 1.0:
        return
    if w >= S[W_C]:
        S[ACTIVE] = 0.0
        return
    S[A_A] = smooth_restart_a_a(S[A_A], R[1], R[2], S[W_C] - w)
    S[W_C] = smooth_w_limit(S[A_A], R[1], R[2])
    S[RESYNC] = 1.0


def smooth_start_ack(S, R, mss):
    """One ACK of the smooth start (Eq. 7-8; see :class:`SmoothStartRule`). Returns False
    when the smooth start is over (the ACK is then the caller's congestion avoidance)."""
    if S[ACTIVE] != 0.0 and S[RESYNC] != 0.0:
        S[ACKS] = smooth_acks(S[CWND] / mss, S[A_A], R[1], R[2])
        S[RESYNC] = 0.0
        S[ACTIVE] = 1.0 if math.isfinite(S[ACKS]) else 0.0
    w = S[CWND] / mss
    if S[ACTIVE] != 0.0 and (w >= S[W_C] or S[CWND] >= S[WS] or smooth_d(S[ACKS], S[A_A], R[1]) <= R[3]):
        S[ACTIVE] = 0.0
    if S[ACTIVE] == 0.0:
        return False
    # Eq. 7 holds for w >= 1 packet (w + sqrt(T) - 1 reaches 0 below it): a window under
    # one packet grows as one packet would, as in next_round_window.
    u = max(w, 1.0) + math.sqrt(R[2]) - 1.0
    if R[4] == 0.0:  # euler
        w += smooth_d(S[ACKS], S[A_A], R[1]) / u
    else:
        step = smooth_integral_at(S[ACKS] + 1.0, S[A_A], R[1]) - smooth_integral_at(S[ACKS], S[A_A], R[1])
        w = math.sqrt(u * u + 2.0 * step) - math.sqrt(R[2]) + 1.0 + min(w - 1.0, 0.0)
    S[ACKS] += 1.0
    S[CWND] = w * mss
    return True


def smooth_law(hook, S, R, mss, x):
    """SmoothTCP's smooth start on the state vector ``S`` (:class:`SmoothState`'s slots).

    :data:`~.base.ACK`: :func:`smooth_start_ack`, after it congestion avoidance Eq. 6 with
    ``D = kappa`` (``kappa/w`` packets per ACK, Eq. 3); :data:`~.base.LOSS`: ``max(FlightSize/2,
    2 SMSS)``; a fast retransmit or timeout: the Eq. 10 restart; ECN or Source Quench: the
    restart and a halved window (at least one MSS).
    """
    if hook == ACK:
        if not smooth_start_ack(S, R, mss):
            S[CWND] += R[3] * mss / (S[CWND] / mss)
    elif hook == LOSS:
        return max(x / 2.0, 2.0 * mss)
    elif hook == FAST_RETRANSMIT or hook == TIMEOUT:
        smooth_restart(S, R, mss)
    elif hook == ECN or hook == SOURCE_QUENCH:
        smooth_restart(S, R, mss)
        S[CWND] = max(S[CWND] / 2.0, float(mss))
    return 0.0


SmoothStartRule.law = staticmethod(smooth_law)
