"""RFC 5681 slow start and congestion avoidance (optionally RFC 3465 byte counting), and
Linux's reno in whole packets (``net/ipv4/tcp_cong.c``)."""

from __future__ import annotations

import math
from dataclasses import dataclass


from ..accel import inline
from ..checks import check_int
from .base import ACK, BYTES_ACKED, CWND, LOSS, SSTHRESH, ContinuousLaw, GrowthRule

__all__ = ["StandardRule", "standard_law", "linux_reno_law", "tcp_cong_avoid_ai"]


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
    packets : bool
        Linux's reno (``net/ipv4/tcp_cong.c`` ``tcp_reno_cong_avoid``, ``tcp_reno_ssthresh``)
        in place of RFC 5681: the window counted in whole packets; per ACK of ``acked``
        packets ``tcp_slow_start`` (cwnd += acked up to ssthresh, no ABC limit, the rest
        carried on) then ``tcp_cong_avoid_ai(w = cwnd)`` (``snd_cwnd_cnt += acked``; each
        ``w`` of it adds one packet, a credit left from a larger ``w`` adds one at once);
        after a loss ``ssthresh = max(cwnd // 2, 2)`` packets, from cwnd, not FlightSize.
        ``snd_cwnd_cnt`` (packets) lives in the ``bytes_acked`` slot, which the sender
        clears on a timeout (``tcp_enter_loss``) and the loss hook on a recovery
        (``tcp_init_cwnd_reduction``). Not modelled: ``tcp_is_cwnd_limited`` (cwnd grows
        here while the sender is application-limited). Incompatible with ``abc_l``.
    """

    name = "standard"
    source = "RFC 5681 (RFC 3465 byte counting as an option)"

    abc_l: int | None = None
    packets: bool = False

    def __post_init__(self) -> None:
        if self.abc_l is not None:
            object.__setattr__(self, "abc_l", check_int("abc_l", self.abc_l, low=1))
        if not isinstance(self.packets, bool):
            raise ValueError(f"packets must be one of True, False (a bool), got {self.packets!r}")
        if self.packets and self.abc_l is not None:
            raise ValueError(f"abc_l must be None with packets=True (Linux counts whole packets, "
                             f"no ABC limit), got {self.abc_l!r}")

    def slow_start_round(self, w, b):
        return w * (1.0 + 1.0 / b)

    def continuous_law(self, b):
        b = check_int("b", b, low=1)
        return ContinuousLaw(ss_log_growth=math.log1p(1.0 / b), ca_slope=1.0 / b)

    def _pack(self):
        return (0 if self.abc_l is None else self.abc_l, self.packets)

    def describe(self) -> dict:
        """:meth:`GrowthRule.describe`, with ``packets`` only when True: the RFC rule keeps the
        description it had before Linux's packet counting was added, and with it every sweep
        table's ``rule_params`` and every cache key made from it."""
        d = super().describe()
        if not self.packets:
            del d["packets"]
        return d


@inline  # small: inlined into the compiled dispatch (growth.laws.rule_law), the most used law
def standard_law(hook, S, R, mss, x):
    """RFC 5681 growth on the state vector ``S`` (bytes), ``R = (abc_l or 0, packets)``.

    :data:`~.base.ACK` of ``x`` bytes: slow start ``cwnd += min(x, SMSS)`` (``min(x, L SMSS)``
    with RFC 3465 byte counting), congestion avoidance ``cwnd += SMSS*SMSS/cwnd`` (RFC 5681
    Eq. 3) or, with byte counting, one SMSS per cwnd of acknowledged bytes. :data:`~.base.LOSS`
    with FlightSize ``x`` bytes: returns ``max(x/2, 2 SMSS)`` (RFC 5681 Eq. 4). Other hooks: nothing.
    With ``packets`` (``R[1]``), Linux's reno instead: :func:`linux_reno_law`.
    """
    if R[1] != 0.0:
        return linux_reno_law(hook, S, mss, x)
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


def tcp_cong_avoid_ai(snd_cwnd_cnt, cwnd, w, acked):
    """``tcp_cong.c`` ``tcp_cong_avoid_ai``: one packet per ``w`` acknowledged packets, in
    whole packets; returns ``(snd_cwnd_cnt, cwnd)``."""
    if snd_cwnd_cnt >= w:  # credits accumulated at a higher w: one packet now
        snd_cwnd_cnt = 0
        cwnd += 1
    snd_cwnd_cnt += acked
    if snd_cwnd_cnt >= w:
        delta = snd_cwnd_cnt // w
        snd_cwnd_cnt -= delta * w
        cwnd += delta
    return snd_cwnd_cnt, cwnd


def linux_reno_law(hook, S, mss, x):
    """Linux's reno (``net/ipv4/tcp_cong.c``) on ``S``, in whole packets.

    :data:`~.base.ACK` of ``x`` bytes (``acked`` = whole packets, a short last one counted):
    ``tcp_reno_cong_avoid``, i.e. ``tcp_slow_start`` while cwnd < ssthresh, then
    ``tcp_cong_avoid_ai(tp, cwnd, acked)`` on what is left, with ``snd_cwnd_cnt`` in the
    ``BYTES_ACKED`` slot. :data:`~.base.LOSS`: ``tcp_reno_ssthresh``, ``max(cwnd >> 1, 2)``
    packets in bytes; ``snd_cwnd_cnt`` cleared (``tcp_init_cwnd_reduction``). Other hooks: nothing.
    """
    cwnd = max(int(S[CWND] // mss), 1)  # tcp_snd_cwnd
    if hook == ACK:
        acked = max(-(-int(x) // mss), 1)
        old = cwnd
        if cwnd < S[SSTHRESH] / mss:  # tcp_in_slow_start -> tcp_slow_start
            new = min(cwnd + acked, S[SSTHRESH] / mss)
            grown = int(new) if new > cwnd else cwnd
            acked -= grown - cwnd
            cwnd = grown
        if acked > 0:  # tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked)
            cnt, cwnd = tcp_cong_avoid_ai(int(S[BYTES_ACKED]), cwnd, cwnd, acked)
            S[BYTES_ACKED] = float(cnt)
        S[CWND] += (cwnd - old) * mss
    elif hook == LOSS:
        S[BYTES_ACKED] = 0.0
        return float(max(cwnd >> 1, 2) * mss)
    return 0.0


StandardRule.law = staticmethod(standard_law)
StandardRule.law_helpers = ("tcp_cong_avoid_ai", "linux_reno_law")
