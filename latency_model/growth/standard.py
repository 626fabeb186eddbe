"""RFC 5681 slow start and congestion avoidance (optionally RFC 3465 byte counting)."""

from __future__ import annotations

import math
from dataclasses import dataclass


from ..checks import check_int
from .base import CongestionState, ContinuousLaw, GrowthRule

__all__ = ["StandardRule"]


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

    def on_ack(self, st: CongestionState, acked_bytes: int) -> None:
        mss = st.mss
        if st.cwnd < st.ssthresh:
            limit = mss if self.abc_l is None else self.abc_l * mss
            st.cwnd += min(acked_bytes, limit)
        elif self.abc_l is None:
            st.cwnd += mss * mss / st.cwnd
        else:
            st.bytes_acked += acked_bytes
            if st.bytes_acked >= st.cwnd:
                st.bytes_acked -= st.cwnd
                st.cwnd += mss
