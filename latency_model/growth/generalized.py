"""Generalized slow start with exponential base beta (Burst TCP, Section 3)."""

from __future__ import annotations

import math
from dataclasses import dataclass


from ..checks import check_int, check_real
from .base import ACK, CWND, LOSS, SSTHRESH, ContinuousLaw, GrowthRule

__all__ = ["GeneralizedRule", "generalized_law"]


@dataclass(frozen=True)
class GeneralizedRule(GrowthRule):
    """Generalized slow start: ``cwnd += (beta - 1)`` per ACK (Burst TCP, Section 3).

    Packet level: in slow start each ACK that acknowledges N new bytes adds
    ``(beta - 1) * min(N, SMSS)`` bytes (the paper's ``cwnd <- cwnd + (b - 1)`` in
    packets, with RFC 5681's per-ACK cap of one SMSS); congestion avoidance is RFC
    5681's ``SMSS*SMSS/cwnd`` per ACK. ``beta = 2`` is standard slow start.

    Flow level: the paper's ``cwnd <- beta^(t/RTT)``. With one ACK per ``b`` packets the
    window is multiplied by ``1 + (beta - 1)/b`` per RTT (``beta`` for ``b = 1``), so the
    continuous law has ``d ln w/dt = ln(1 + (beta - 1)/b)`` per RTT; congestion
    avoidance adds ``1/b`` packet per RTT.

    Deviation: the paper names the base ``b``; here it is ``beta`` because ``b`` is the
    delayed-ACK factor (validation/DEVIATIONS.md).

    Parameters
    ----------
    beta : float
        Exponential base per RTT (without delayed ACKs), in (1, 64]. Default 2.
    """

    name = "generalized"
    source = "Burst TCP (Section 3, generalized slow start)"

    beta: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_real("beta", self.beta, low=1.0, high=64.0, low_open=True))

    def _factor(self, b) -> float:
        return 1.0 + (self.beta - 1.0) / b

    def slow_start_round(self, w, b):
        return w * self._factor(b)

    def continuous_law(self, b):
        b = check_int("b", b, low=1)
        return ContinuousLaw(ss_log_growth=math.log(self._factor(b)), ca_slope=1.0 / b)

    def _pack(self):
        return (self.beta,)


def generalized_law(hook, S, R, mss, x):
    """Generalized slow start on the state vector ``S`` (bytes), ``R = (beta,)``: an
    :data:`~.base.ACK` of ``x`` bytes adds ``(beta - 1) min(x, SMSS)`` in slow start, RFC
    5681's ``SMSS*SMSS/cwnd`` in congestion avoidance; :data:`~.base.LOSS` returns
    ``max(FlightSize/2, 2 SMSS)`` (RFC 5681 Eq. 4)."""
    if hook == ACK:
        if S[CWND] < S[SSTHRESH]:
            S[CWND] += (R[0] - 1.0) * min(x, mss)
        else:
            S[CWND] += mss * mss / S[CWND]
    elif hook == LOSS:
        return max(x / 2.0, 2.0 * mss)
    return 0.0


GeneralizedRule.law = staticmethod(generalized_law)
