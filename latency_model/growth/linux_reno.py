"""Linux's reno (``net/ipv4/tcp_cong.c``): slow start and congestion avoidance in whole
packets, the ``reno`` of ``TCP_CONGESTION``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import check_int
from .base import ACK, BYTES_ACKED, CWND, LOSS, SSTHRESH, ContinuousLaw, GrowthRule

__all__ = ["LinuxRenoRule", "linux_reno_law", "tcp_cong_avoid_ai"]


@dataclass(frozen=True)
class LinuxRenoRule(GrowthRule):
    """Linux's reno (``net/ipv4/tcp_cong.c`` ``tcp_reno_cong_avoid``, ``tcp_reno_ssthresh``).

    Packet level: the window counted in whole packets; per ACK of ``acked`` packets
    ``tcp_slow_start`` (cwnd += acked up to ssthresh, no ABC limit, the rest carried on)
    then ``tcp_cong_avoid_ai(w = cwnd)`` (``snd_cwnd_cnt += acked``; each ``w`` of it adds
    one packet, a credit left from a larger ``w`` adds one at once); after a loss
    ``ssthresh = max(cwnd // 2, 2)`` packets, from cwnd, not FlightSize. ``snd_cwnd_cnt``
    (packets) lives in the ``bytes_acked`` slot, which the sender clears on a timeout
    (``tcp_enter_loss``) and the loss hook on a recovery (``tcp_init_cwnd_reduction``).
    Not modelled: ``tcp_is_cwnd_limited`` (cwnd grows here while the sender is
    application-limited).

    Flow level: acknowledged packets, not ACKs, are counted, so the window doubles per RTT
    in slow start and grows by one packet per RTT in congestion avoidance, whatever ``b``.
    """

    name = "linux-reno"
    source = "Linux net/ipv4/tcp_cong.c (tcp_reno_cong_avoid, tcp_reno_ssthresh)"

    def slow_start_round(self, w, b):
        return w * 2.0

    def congestion_avoidance_round(self, w, b):
        return w + 1.0

    def continuous_law(self, b):
        check_int("b", b, low=1)
        return ContinuousLaw(ss_log_growth=math.log(2.0), ca_slope=1.0)


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


def linux_reno_law(hook, S, R, mss, x):
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


LinuxRenoRule.law = staticmethod(linux_reno_law)
LinuxRenoRule.law_helpers = ("tcp_cong_avoid_ai",)
