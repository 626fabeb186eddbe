"""B-TCP(f): Burst TCP's window growth for mice flows (Burst TCP, Section 3, Figure 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass


from ..checks import check_int, check_real
from .base import (ACK, CWND, FAST_RETRANSMIT, FIRST_SLOT, LOSS, SSTHRESH, TIMEOUT, CongestionState, GrowthRule,
                   state_slot)
from .flow import btcp_increment

__all__ = ["BtcpRule", "BtcpState", "btcp_law"]


ENABLED = FIRST_SLOT


class BtcpState(CongestionState):
    """Congestion state plus Figure 4's ``btcp_enabled`` flag (False for the rest of the flow)."""

    __slots__ = ()
    N_SLOTS = 1
    enabled = state_slot(ENABLED, bool)

    def __init__(self, cwnd, ssthresh, mss, bytes_acked=0.0) -> None:
        super().__init__(cwnd, ssthresh, mss, bytes_acked)
        self.enabled = True


@dataclass(frozen=True)
class BtcpRule(GrowthRule):
    """B-TCP(f) with mice threshold ``mice_t`` (Burst TCP, Section 3, Figure 4).

    Packet level (Figure 4), per ACK of new data while ``cwnd < ssthresh`` and B-TCP is
    enabled, with ``cwnd`` in packets: ``increment = floor((mice_t - cwnd)/f)``, at least
    1; ``cwnd += increment/cwnd``. Once disabled (3 duplicate ACKs or an RTO, through
    :meth:`on_congestion_event`) slow start is standard (+1 MSS per ACK). Congestion
    avoidance is RFC 5681's.

    Flow level: ``cwnd += floor((mice_t - cwnd)/f)`` per RTT (at least 1), divided by
    ``b`` with delayed ACKs; standard congestion avoidance (``1/b`` per RTT) from
    ``W_SS`` on. B-TCP(4), mice_t = 32, from 1: 1, 8, 14, 18, 21, 23, 25, 26, ...
    No closed-form continuous law (the floor makes it a staircase).

    Deviations (validation/DEVIATIONS.md): Figure 4 only replaces an increment of 0 by
    1, so above ``mice_t`` its floor turns negative and would shrink the window; here
    the increment is ``max(1, floor(...))`` (the issue's "at least 1"), i.e. beyond
    ``mice_t`` one packet per RTT, like congestion avoidance. The paper's "floor of
    mice_t - cwnd" text drops the ``/f``; the formula's ``floor((mice_t - cwnd)/f)`` is used.

    Parameters
    ----------
    f : int
        Smooth-out factor, >= 1. Default 4.
    mice_t : float
        Mice threshold, packets, in [1, 1e6]. Default 32.
    """

    name = "btcp"
    source = "Burst TCP (Section 3, Figure 4: B-TCP(f))"

    f: int = 4
    mice_t: float = 32.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "f", check_int("f", self.f, low=1))
        object.__setattr__(self, "mice_t", check_real("mice_t", self.mice_t, low=1.0, high=1e6))

    state_class = BtcpState
    law_hooks = frozenset((FAST_RETRANSMIT, TIMEOUT))

    def slow_start_round(self, w, b):
        return w + btcp_increment(w, self.f, self.mice_t) / b

    def _pack(self):
        return (self.f, self.mice_t)


def btcp_law(hook, S, R, mss, x):
    """B-TCP(f) (Figure 4) on the state vector ``S`` (bytes; ``S[ENABLED]`` the
    ``btcp_enabled`` flag), ``R = (f, mice_t)``: see :class:`BtcpRule`. A fast retransmit or
    a timeout disables B-TCP; :data:`~.base.LOSS` returns ``max(FlightSize/2, 2 SMSS)``."""
    if hook == ACK:
        if S[CWND] < S[SSTHRESH]:
            if S[ENABLED] != 0.0:
                c = S[CWND] / mss
                inc = max(1, math.floor((R[1] - c) / R[0]))
                S[CWND] += inc * mss / c
            else:
                S[CWND] += min(x, mss)
        else:
            S[CWND] += mss * mss / S[CWND]
    elif hook == LOSS:
        return max(x / 2.0, 2.0 * mss)
    elif hook == FAST_RETRANSMIT or hook == TIMEOUT:
        S[ENABLED] = 0.0
    return 0.0


BtcpRule.law = staticmethod(btcp_law)
