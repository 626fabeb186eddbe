"""SmoothTCP: smooth start plus congestion avoidance driven by control metrics
(Vieira & Bauer, SmoothTCP, Sections III-IV, Eq. 3-6; slow start Eq. 7-11 from :mod:`.smooth`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import check_choice, check_real
from .base import (ACK, CWND, ECN, FAST_RETRANSMIT, FIRST_SLOT, LOSS, RTT, SOURCE_QUENCH, TIMEOUT, state_range,
                   state_slot)
from .smooth import ACTIVE, SmoothStartRule, SmoothState, smooth_restart, smooth_start_ack

__all__ = ["SmoothTcpRule", "SmoothTcpState", "METRICS", "SS_SIGNALS", "partial", "smoothtcp_law"]

METRICS = ("j", "x", "f", "e", "q")
"""Control metrics of Eq. 4-5, in this order: ``j`` RTT (seconds), ``x`` timeouts, ``f`` fast
retransmits, ``e`` ECN echoes, ``q`` ICMP Source Quench messages."""

SS_SIGNALS = ("loss", "all")
"""What restarts the smooth start (Eq. 10-11): ``"loss"``, packet drops only (fast
retransmit or timeout; Section IV.C: "When any congestion signal (packet drop) is
detected"); ``"all"``, also each ECN echo and Source Quench message, which then halves
the window as :class:`SmoothStartRule` does."""


def partial(u: float, a: float, b: float, c: float, m: float) -> float:
    """Eq. 5 as printed: ``A + C tanh(B (u + M))`` (the magnitude; :class:`SmoothTcpRule`
    applies it with a minus sign).

    Parameters
    ----------
    u : float
        The metric's smoothed value: seconds for ``j``, events per ACK otherwise.
    a, b, c, m : float
        The metric's coefficients ``A, B, C, M``.
    """
    return a + c * math.tanh(b * (u + m))


RATE = FIRST_SLOT + SmoothState.N_SLOTS
PENDING = RATE + len(METRICS)
D_METRICS = PENDING + len(METRICS)
LAST_D = D_METRICS + 1


class SmoothTcpState(SmoothState):
    """:class:`~latency_model.growth.smooth.SmoothState` plus the control metrics.

    Attributes
    ----------
    rate : sequence of float
        Smoothed ``j, x, f, e, q`` (see :data:`METRICS`): the RTT in seconds (NaN until
        the first sample) and the events per ACK of the other four.
    pending : sequence of float
        Samples gathered since the previous new ACK: ``pending[0]`` the latest RTT
        sample, seconds (NaN if none), ``pending[1:]`` the events counted.
    d_metrics : float
        ``sum_i (A_i + C_i tanh(B_i (u_i + M_i))) dp_i`` at the latest ACK (the metric part of D).
    last_d : float
        ``D`` of Eq. 6 at the latest congestion-avoidance ACK (NaN before the first).
    """

    __slots__ = ()
    N_SLOTS = SmoothState.N_SLOTS + 2 * len(METRICS) + 2
    rate = state_range(RATE, len(METRICS))
    pending = state_range(PENDING, len(METRICS))
    d_metrics = state_slot(D_METRICS)
    last_d = state_slot(LAST_D)

    def __init__(self, cwnd, ssthresh, mss, bytes_acked=0.0) -> None:
        super().__init__(cwnd, ssthresh, mss, bytes_acked)
        self.v[RATE] = self.v[PENDING] = self.last_d = math.nan

    @property
    def in_slow_start(self) -> bool:
        """True while SmoothTCP's smooth start is on (the pseudo-code's ``slow_start`` flag)."""
        return self.active


@dataclass(frozen=True)
class SmoothTcpRule(SmoothStartRule):
    """SmoothTCP: the smooth start of :class:`SmoothStartRule`, then congestion avoidance by Eq. 3-6.

    At each new ACK, ``w`` = cwnd in packets:

    1. Metrics. Each control metric has a differential ``dp_i`` and a smoothed value ``u_i``
       (horizontal smoothness, Section III.A: "u is taken to be the smooth average rate",
       footnote 1: ``u <- (1 - alpha) u + alpha sample``). For ``x, f, e, q``: ``dp_i`` = the
       timeouts, fast retransmits, ECN echoes and ICMP Source Quench messages counted since
       the previous new ACK, and ``u_i`` the smooth average of that count (events per ACK,
       this ACK's count included). For ``j``: ``u_j`` the smoothed RTT (seconds; the first
       sample initialises it; unchanged without a sample, Karn's rule) and ``dj`` its change.
    2. ``D`` (Eq. 4-6)::

           D = kappa - sum_i (A_i + C_i tanh(B_i (u_i + M_i))) dp_i

    3. Fairness rule (the second Eq. 3): ``dw = D/w`` if ``D > 0``, ``dw = D w`` otherwise;
       ``w <- max(w + dw, 1)``.

    With the paper's ``C_q = 0.0625, B_q = 0.5493 = atanh(1/2)``: without router signals
    ``D = kappa`` (``kappa/w`` per ACK); one Source Quench per ACK for a while (``u_q -> 1``)
    gives ``D = 0.005 - 0.03125 < 0``, a 2.6% cut of ``w`` per ACK; a lone message after a
    quiet spell (``u_q = 1/8``) costs only ``0.0043``, less than ``kappa``.

    The smooth start (:class:`SmoothStartRule`, unchanged) is restarted by Eq. 10-11 on a
    loss, and also on each ECN / Source Quench signal with ``ss_signal = "all"``; the
    metrics are kept up to date in every phase but act only after the smooth start. Loss
    recovery stays the sender's (NewReno: a loss still sets ssthresh to half the flight;
    a timeout, cwnd to one packet). The flow-level law is the smooth start's (``D = kappa``:
    ``kappa/b`` packets per round after it).

    Readings of the printed formulas (validation/DEVIATIONS.md, "SmoothTCP, Section IV.A-B"):

    * Sign. As printed, Eq. 4-5 with ``A_q = 0, C_q = 0.0625`` give ``dw/dq > 0``: Source
      Quench messages would *raise* the window, against the text ("congestion signals would
      be sent and the sender would start to decrease w by dw = D x w"). Read: each partial is
      the printed expression with a minus sign; the printed coefficients are magnitudes.
    * Metrics. "q is the variation in the number of ICMP-SQ messages": ``dq`` = the new
      messages; the partial's argument is their smooth average rate (the horizontal smooth
      property), so tanh saturates for bursts (the vertical smooth property). A smooth rate
      as both argument and differential (``dq`` = its change) was tried: a steady signal
      rate then gives ``dq = 0``, ``D = kappa > 0``, and the window grows until the queue
      overflows, which contradicts the text. "j is the variation in RTT": ``dj`` = change of
      the smoothed RTT, the partial at the smoothed RTT.
    * Two equations are numbered (3): the fairness rule is the second one.
    * ``w`` never drops below one packet (``D w`` can exceed ``w`` when ``D <= -1``).

    Parameters
    ----------
    a_a, b_a, t, kappa, per_ack
        As :class:`SmoothStartRule` (``kappa``: the fairness factor of Eq. 6, default 0.005;
        ``per_ack``: the smooth start's per-ACK step).
    a_j, b_j, c_j, m_j, a_x, b_x, c_x, m_x, a_f, b_f, c_f, m_f, a_e, b_e, c_e, m_e, a_q, b_q, c_q, m_q : float
        ``A, B, C, M`` of Eq. 5 for each metric. ``A`` and ``C`` in [-1000, 1000] (packets
        per packet of window and per unit of the metric), ``B`` in [0, 1000] (per unit of
        the metric's rate), ``M`` in [-1e6, 1e6] (the rate's unit). Defaults: the paper's
        ``A_q = 0, B_q = 0.5493, C_q = 0.0625, M_q = 0`` (Section V); 0 for the other
        metrics, so Source Quench is the only control metric, as in the paper's runs.
    alpha : float
        Smoothing weight of the rates, in (0, 1]. Default 1/8 (RFC 2988, footnote 1).
    ss_signal : {"loss", "all"}
        What restarts the smooth start (:data:`SS_SIGNALS`). Default ``"loss"``.
    """

    name = "smoothtcp"
    source = ("SmoothTCP (Sections III-IV, Eq. 3-11): smooth start, then D from RTT, timeouts, "
              "fast retransmits, ECN, ICMP-SQ with the fairness rule and factor")

    a_j: float = 0.0
    b_j: float = 0.0
    c_j: float = 0.0
    m_j: float = 0.0
    a_x: float = 0.0
    b_x: float = 0.0
    c_x: float = 0.0
    m_x: float = 0.0
    a_f: float = 0.0
    b_f: float = 0.0
    c_f: float = 0.0
    m_f: float = 0.0
    a_e: float = 0.0
    b_e: float = 0.0
    c_e: float = 0.0
    m_e: float = 0.0
    a_q: float = 0.0
    b_q: float = 0.5493
    c_q: float = 0.0625
    m_q: float = 0.0
    alpha: float = 0.125
    ss_signal: str = "loss"

    def __post_init__(self) -> None:
        SmoothStartRule.__post_init__(self)
        set_ = object.__setattr__
        for m in METRICS:
            set_(self, f"a_{m}", check_real(f"a_{m}", getattr(self, f"a_{m}"), low=-1e3, high=1e3))
            set_(self, f"b_{m}", check_real(f"b_{m}", getattr(self, f"b_{m}"), low=0.0, high=1e3))
            set_(self, f"c_{m}", check_real(f"c_{m}", getattr(self, f"c_{m}"), low=-1e3, high=1e3))
            set_(self, f"m_{m}", check_real(f"m_{m}", getattr(self, f"m_{m}"), low=-1e6, high=1e6))
        set_(self, "alpha", check_real("alpha", self.alpha, low=0.0, high=1.0, low_open=True))
        check_choice("ss_signal", self.ss_signal, SS_SIGNALS)

    def coefficients(self, metric: str) -> tuple[float, float, float, float]:
        """``(A, B, C, M)`` of ``metric`` (one of :data:`METRICS`)."""
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        return tuple(getattr(self, f"{c}_{metric}") for c in "abcm")

    def d(self, rates, deltas) -> float:
        """``D`` of Eq. 4-6: ``kappa - sum_i (A_i + C_i tanh(B_i (u_i + M_i))) dp_i``.

        Parameters
        ----------
        rates : sequence of 5 floats
            ``u_j`` (seconds) and the smoothed events per ACK ``u_x, u_f, u_e, u_q``.
        deltas : sequence of 5 floats
            ``dj`` (seconds) and the events ``dx, df, de, dq`` since the previous ACK.
            A NaN ``dj`` (no RTT yet) counts as 0.
        """
        total = 0.0
        for i, m in enumerate(METRICS):
            dp = float(deltas[i])
            if dp == 0.0 or math.isnan(dp):
                continue
            a, b, c, mm = self.coefficients(m)
            total += partial(float(rates[i]), a, b, c, mm) * dp
        return self.kappa - total

    # Packet level -------------------------------------------------------------
    state_class = SmoothTcpState
    law_hooks = frozenset((FAST_RETRANSMIT, TIMEOUT, RTT))
    law_helpers = (*SmoothStartRule.law_helpers, "partial", "update_metrics")

    def _pack(self):
        coefficients = [getattr(self, f"{c}_{m}") for m in METRICS for c in "abcm"]
        return (*SmoothStartRule._pack(self), *coefficients, self.alpha, float(self.ss_signal == "all"))


# The packet-level law. R: the smooth start's 5 parameters (smooth.py), then A, B, C, M of
# each metric in METRICS order (R[5 + 4 i + k]), alpha and 1 for ss_signal "all" else 0.
_COEF, _ALPHA, _SS_ALL = 5, 5 + 4 * len(METRICS), 6 + 4 * len(METRICS)


def update_metrics(S, R):
    """Step 1 of :class:`SmoothTcpRule` at a new ACK: the smoothed rates from the samples
    pending since the previous ACK, ``d_metrics`` (Eq. 4-5, :meth:`SmoothTcpRule.d`'s sum in
    the same order), the pending samples cleared."""
    alpha = R[_ALPHA]
    total = 0.0
    for i in range(len(METRICS)):
        old = S[RATE + i]
        got = S[PENDING + i]
        if i == 0:
            new = old
            if not math.isnan(got):
                new = got if math.isnan(old) else old + alpha * (got - old)
            dp = 0.0 if math.isnan(old) else new - old
        else:
            new = old + alpha * (got - old)
            dp = got
        if dp != 0.0 and not math.isnan(dp):
            k = _COEF + 4 * i
            total += partial(new, R[k], R[k + 1], R[k + 2], R[k + 3]) * dp
        S[RATE + i] = new
        S[PENDING + i] = math.nan if i == 0 else 0.0
    S[D_METRICS] = R[3] - (R[3] - total)  # kappa - D, as D = kappa - total is formed first


def smoothtcp_law(hook, S, R, mss, x):
    """SmoothTCP on the state vector ``S`` (:class:`SmoothTcpState`'s slots): see
    :class:`SmoothTcpRule`. :data:`~.base.ACK`: :func:`update_metrics`, then the smooth start
    (:func:`~.smooth.smooth_start_ack`) or Eq. 6 with the fairness rule (the second Eq. 3,
    ``w >= 1`` packet); :data:`~.base.LOSS`: ``max(FlightSize/2, 2 SMSS)``; a fast retransmit
    or timeout: the Eq. 10 restart and one more event of its metric; :data:`~.base.RTT`: the
    pending RTT sample; ECN or Source Quench: one more event (and with ``ss_signal = "all"``
    during the smooth start, the restart and a halved window)."""
    if hook == ACK:
        update_metrics(S, R)
        if not smooth_start_ack(S, R, mss):
            w = S[CWND] / mss
            d = R[3] - S[D_METRICS]
            dw = d / w if d > 0.0 else d * w  # fairness rule, the second Eq. 3
            S[CWND] = max(w + dw, 1.0) * mss
            S[LAST_D] = d
    elif hook == LOSS:
        return max(x / 2.0, 2.0 * mss)
    elif hook == FAST_RETRANSMIT or hook == TIMEOUT:
        smooth_restart(S, R, mss)
        S[PENDING + 1 if hook == TIMEOUT else PENDING + 2] += 1.0
    elif hook == RTT:
        S[PENDING] = x
    elif hook == ECN or hook == SOURCE_QUENCH:
        if S[ACTIVE] != 0.0 and R[_SS_ALL] != 0.0:
            smooth_restart(S, R, mss)  # Eq. 10-11 restart and halving
            S[CWND] = max(S[CWND] / 2.0, float(mss))
        S[PENDING + 3 if hook == ECN else PENDING + 4] += 1.0
    return 0.0


SmoothTcpRule.law = staticmethod(smoothtcp_law)
