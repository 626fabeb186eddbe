"""RFC 5681 slow start and congestion avoidance (optionally RFC 3465 byte counting)."""

from __future__ import annotations

import math
from dataclasses import dataclass


from ..accel import inline
from ..checks import check_int
from .base import ACK, BYTES_ACKED, CWND, LOSS, SSTHRESH, ContinuousLaw, GrowthRule

__all__ = ["StandardRule", "standard_law"]


@dataclass(frozen=True)
class StandardRule(GrowthRule):
    """Standard TCP window growth (RFC 5681).

    Packet level: in slow start ``cwnd += min(N, SMSS)`` per ACK that acknowledges
    N new bytes (``min(N, abc_l * SMSS)`` with appropriate byte counting, RFC 3465);
    in congestion avoidance ``cwnd += SMSS*SMSS/cwnd`` per ACK (RFC 5681, Eq. 3), or
    one SMSS per cwnd of acknowledged bytes with byte counting.

    Flow level: with one ACK per ``b`` packets the window grows by the factor
    ``1 + 1/b`` per RTT in slow start and by ``1/b`` packet per RTT in congestion
    avoidance (the paper's Section 2 fluid law).

    Parameters
    ----------
    abc_l : int or None
        RFC 3465 limit L (segments per ACK in slow start), e.g. 2; ``None`` (default)
        for plain RFC 5681 ACK counting.
    """

    name = "standard"
    source = "RFC 5681 (RFC 3465 byte counting as an option)"

    abc_l: int | None = None

    def __post_init__(self) -> None:
        if self.abc_l is not None:
            object.__setattr__(self, "abc_l", check_int("abc_l", self.abc_l, low=1))

    def slow_start_round(self, w, b):
        return w * (1.0 + 1.0 / b)

    def continuous_law(self, b):
        b = check_int("b", b, low=1)
        return ContinuousLaw(ss_log_growth=math.log1p(1.0 / b), ca_slope=1.0 / b)

    def _pack(self):
        return (0 if self.abc_l is None else self.abc_l,)


@inline  # small: inlined into the compiled dispatch (growth.laws.rule_law), the most used law
def standard_law(hook, S, R, mss, x):
    """RFC 5681 growth on the state vector ``S`` (bytes), ``R = (abc_l or 0,)``.

    :data:`~.base.ACK` of ``x`` bytes: slow start ``cwnd += min(x, SMSS)`` (``min(x, L SMSS)``
    with RFC 3465 byte counting), congestion avoidance ``cwnd += SMSS*SMSS/cwnd`` (RFC 5681
    Eq. 3) or, with byte counting, one SMSS per cwnd of acknowledged bytes. :data:`~.base.LOSS`
    with FlightSize ``x`` bytes: returns ``max(x/2, 2 SMSS)`` (RFC 5681 Eq. 4). Other hooks: nothing.
    """
    if hook == ACK:
        abc = R[0]
        if S[CWND] < S[SSTHRESH]:
            limit = mss if abc == 0.0 else abc * mss
            S[CWND] += min(x, limit)
        elif abc == 0.0:
            S[CWND] += mss * mss / S[CWND]
        else:
            S[BYTES_ACKED] += x
            if S[BYTES_ACKED] >= S[CWND]:
                S[BYTES_ACKED] -= S[CWND]
                S[CWND] += mss
    elif hook == LOSS:
        return max(x / 2.0, 2.0 * mss)
    return 0.0


StandardRule.law = staticmethod(standard_law)
