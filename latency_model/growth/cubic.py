"""CUBIC with HyStart, as Linux runs it (``net/ipv4/tcp_cubic.c``, v2.3; RFC 9438).

Linux counts its window in whole packets and its time in jiffies; this rule does the same
arithmetic (integer, ``BICTCP_HZ`` = 10 bits of time fraction, ``hz`` jiffies a second:
250, the kernel's default ``CONFIG_HZ`` and this machine's) so that a hand trace of the
kernel's functions gives the rule's numbers:

- ``on_ack`` is ``cubictcp_cong_avoid``: below ssthresh ``tcp_slow_start`` (cwnd += acked
  packets, capped at ssthresh, no ABC limit), the rest of the ACK through ``bictcp_update``
  (the cubic target ``W(t) = C (t - K)^3 + W_max`` with ``C = bic_scale / 1024 * 10``
  = 0.4 at ``bic_scale = 41``, the first-epoch cap ``cnt <= 20``, TCP friendliness from the
  acknowledged-packet count, ``cnt >= 2``) and ``tcp_cong_avoid_ai``.
- ``ssthresh_after_loss`` is ``cubictcp_recalc_ssthresh``: ``W_max`` with fast convergence,
  ``ssthresh = max(cwnd * beta / 1024, 2)`` packets (beta = 717/1024 ~ 0.7, RFC 9438 4.6).
- ``on_congestion_event("timeout")`` is ``cubictcp_state(TCP_CA_Loss)``: every CUBIC and
  HyStart variable reset (``bictcp_reset``, ``bictcp_hystart_reset``).
- ``on_rtt_sample`` is ``cubictcp_acked``: ``delay_min``, and HyStart's delay detection
  (``hystart_update``, HYSTART_DELAY: the minimum of the first 8 samples of a round above
  ``delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`` ends slow start: ssthresh = cwnd), from
  cwnd >= ``hystart_low_window`` = 16 packets on.

The clock. The rule interface passes no time, and CUBIC's target is a function of the time
since the epoch began. A caller that knows the time sets ``state.now_s`` before each call
and the rule uses it as the kernel uses ``tcp_jiffies32`` / ``tcp_mstamp``. Otherwise the
rule keeps an ACK clock: each ACK advances it by ``srtt * acked / cwnd`` (one smoothed RTT
per window of acknowledged data), which is exact for an ACK-clocked sender with a full
window and no idle time. HyStart's ACK-train detection needs real ACK spacing, so it runs
only with ``now_s``; on a path whose round of ACKs arrives within ``delay_min / 2`` (every
window below ~1,100 packets on 100 Mb/s with 50 ms each way) it cannot fire anyway. Round
boundaries (``end_seq = snd_nxt``) are approximated by one window of acknowledged packets.

Long epochs: the kernel computes ``cube_rtt_scale * offs^3`` in u64, which wraps from
``offs`` ~ 2**21 (346 s after the epoch starts at ``bic_scale`` = 41; the module's comment
designs for "RTT < 100 seconds"); the rule wraps it the same way, in both engines alike.

Not modelled: ``tcp_is_cwnd_limited`` (cwnd grows here even when the sender has nothing
left to send), ``cubictcp_cwnd_event`` (idle restarts), undo (``tcp_reno_undo_cwnd``).

Flow level (the fluid model's per-round law): slow start as Reno's, ``w (1 + 1/b)``; in
congestion avoidance the Reno-friendly floor of RFC 9438 Section 4.3,
``w + 3 (1 - beta) / (1 + beta) / b`` per round (the cubic curve needs the time since the
last loss, which a per-round law does not carry).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import check_int
from .linux_reno import tcp_cong_avoid_ai
from .base import ACK, CWND, FIRST_SLOT, LOSS, RTT, SSTHRESH, TIMEOUT, CongestionState, GrowthRule, state_slot

__all__ = ["CubicRule", "CubicState", "cubic_root", "cubic_law"]

BICTCP_BETA_SCALE = 1024
BICTCP_HZ = 10
HYSTART_MIN_SAMPLES = 8
HYSTART_DELAY_MIN_US = 4000
HYSTART_DELAY_MAX_US = 16000
HYSTART_ACK_DELTA_US = 2000
_U32 = 0xFFFFFFFF
_U24 = 0xFFFFFF  # (u64 >> 40): what bictcp_update's cube leaves for its u32 delta

# cbrt(x) MSB values for x MSB values in [0..63] (tcp_cubic.c cubic_root, Willy Tarreau)
_V = (0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
      157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
      200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
      231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254)


def cubic_root(a: int) -> int:
    """Integer cube root as ``tcp_cubic.c`` ``cubic_root`` computes it: a table lookup on
    the leading bits and one Newton-Raphson step (average error ~0.2%)."""
    a = int(a)
    b = 0  # fls64
    while (a >> b) != 0:
        b += 1
    if b < 7:
        return (_V[a] + 35) >> 6
    b = ((b * 84) >> 8) - 1
    shift = a >> (b * 3)
    x = (((_V[shift] + 10) << b) & _U32) >> 6
    x = 2 * x + a // (x * (x - 1))
    return (((x & _U32) * 341) & _U32) >> 10


(CNT, LAST_MAX_CWND, LAST_CWND, LAST_TIME, BIC_ORIGIN_POINT, BIC_K, DELAY_MIN_US, EPOCH_START, ACK_CNT,
 TCP_CWND, FOUND, SAMPLE_CNT, CURR_RTT_US, ROUND_LEFT, ROUND_START_US, LAST_ACK_US, SND_CWND_CNT, SRTT_S,
 CLOCK_S, NOW_S) = range(FIRST_SLOT, FIRST_SLOT + 20)


class CubicState(CongestionState):
    """Congestion state plus ``struct bictcp`` (``tcp_cubic.c``) as slots of the state
    vector; windows in packets, times in jiffies (of the rule's ``hz``) or microseconds as
    named (integers below 2**53, exact in the float vector).

    ``now_s``: the caller's clock, seconds (``None``: the rule's ACK clock ``clock_s``).
    ``epoch_start`` is jiffies + 1, 0 = no epoch (the kernel's 0 is "unset" too);
    ``round_left`` the packets still to be acknowledged in this HyStart round.
    """

    __slots__ = ()
    N_SLOTS = 20
    cnt = state_slot(CNT, int)
    last_max_cwnd = state_slot(LAST_MAX_CWND, int)
    last_cwnd = state_slot(LAST_CWND, int)
    last_time = state_slot(LAST_TIME, int)
    bic_origin_point = state_slot(BIC_ORIGIN_POINT, int)
    bic_k = state_slot(BIC_K, int)
    delay_min_us = state_slot(DELAY_MIN_US, int)
    epoch_start = state_slot(EPOCH_START, int)
    ack_cnt = state_slot(ACK_CNT, int)
    tcp_cwnd = state_slot(TCP_CWND, int)
    found = state_slot(FOUND, bool)
    sample_cnt = state_slot(SAMPLE_CNT, int)
    curr_rtt_us = state_slot(CURR_RTT_US, int)
    round_left = state_slot(ROUND_LEFT)
    round_start_us = state_slot(ROUND_START_US, int)
    last_ack_us = state_slot(LAST_ACK_US, int)
    snd_cwnd_cnt = state_slot(SND_CWND_CNT, int)
    srtt_s = state_slot(SRTT_S)
    clock_s = state_slot(CLOCK_S)
    now_s = state_slot(NOW_S, "optional")

    def __init__(self, cwnd, ssthresh, mss, bytes_acked=0.0) -> None:
        super().__init__(cwnd, ssthresh, mss, bytes_acked)
        self.v[CURR_RTT_US] = float(_U32)
        self.v[NOW_S] = math.nan


@dataclass(frozen=True)
class CubicRule(GrowthRule):
    """CUBIC with HyStart, following Linux's ``tcp_cubic.c`` (RFC 9438); see the module text.

    Parameters
    ----------
    beta : int
        Multiplicative decrease, in 1/1024 (717: 0.7, RFC 9438 Section 4.6), 1..1023.
    hystart : bool
        HyStart (the module parameter ``hystart``, on by default).
    hz : int
        The kernel's ``CONFIG_HZ``, jiffies per second (100, 250, 300 or 1000): the
        resolution of CUBIC's clock.
    """

    name = "cubic"
    source = "RFC 9438; Linux net/ipv4/tcp_cubic.c (CUBIC v2.3 with HyStart, integer as in the kernel)"

    beta: int = 717
    hystart: bool = True
    hz: int = 250

    # module defaults (tcp_cubic.c), fixed here
    bic_scale = 41
    fast_convergence = True
    tcp_friendliness = True
    hystart_low_window = 16

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_int("beta", self.beta, low=1, high=BICTCP_BETA_SCALE - 1))
        if self.hz not in (100, 250, 300, 1000) or isinstance(self.hz, bool):
            raise ValueError(f"hz must be one of 100, 250, 300, 1000 (CONFIG_HZ), got {self.hz!r}")
        if not isinstance(self.hystart, bool):
            raise ValueError(f"hystart must be one of True, False (a bool), got {self.hystart!r}")

    # constants precomputed by cubictcp_register
    @property
    def beta_scale(self) -> int:
        return 8 * (BICTCP_BETA_SCALE + self.beta) // 3 // (BICTCP_BETA_SCALE - self.beta)

    @property
    def cube_rtt_scale(self) -> int:
        return self.bic_scale * 10

    @property
    def cube_factor(self) -> int:
        return (1 << (10 + 3 * BICTCP_HZ)) // (self.bic_scale * 10)

    # -- flow level -------------------------------------------------------------
    def slow_start_round(self, w, b):
        return w * (1.0 + 1.0 / b)

    def congestion_avoidance_round(self, w, b):
        beta = self.beta / BICTCP_BETA_SCALE
        return w + 3.0 * (1.0 - beta) / (1.0 + beta) / b

    # -- packet level -----------------------------------------------------------
    state_class = CubicState
    law_hooks = frozenset((RTT, TIMEOUT))
    law_helpers = ("cubic_root", "cubic_now_us", "cubic_jiffies", "cubic_hystart_reset", "cubic_cwnd_pkts",
                   "cubic_hystart_update", "tcp_cong_avoid_ai", "cubic_cong_avoid", "bictcp_update")

    def _pack(self):
        return (self.beta, self.hystart, self.hz, self.beta_scale, self.cube_rtt_scale, self.cube_factor,
                self.fast_convergence, self.tcp_friendliness, self.hystart_low_window)

    def new_state(self, cwnd_bytes, ssthresh_bytes, mss_bytes) -> CubicState:
        st = CubicState(cwnd=float(cwnd_bytes), ssthresh=float(ssthresh_bytes), mss=mss_bytes)
        cubic_hystart_reset(st.v, cwnd_bytes / mss_bytes)
        return st


# The packet-level law, the kernel's functions over the state vector S (CubicState's slots).
# R = (beta, hystart, hz, beta_scale, cube_rtt_scale, cube_factor, fast_convergence,
# tcp_friendliness, hystart_low_window), integers as floats.
(R_BETA, R_HYSTART, R_HZ, R_BETA_SCALE, R_CUBE_RTT_SCALE, R_CUBE_FACTOR, R_FAST_CONV, R_FRIENDLY,
 R_LOW_WINDOW) = range(9)


def cubic_now_us(S):
    """The clock, microseconds: the caller's ``now_s`` if set (not NaN), else the ACK clock."""
    now = S[CLOCK_S] if math.isnan(S[NOW_S]) else S[NOW_S]
    return int(now * 1e6)


def cubic_jiffies(S, hz):
    """``tcp_jiffies32`` at ``hz`` jiffies a second."""
    return cubic_now_us(S) * hz // 1_000_000


def cubic_cwnd_pkts(S, mss):
    """``tcp_snd_cwnd``: cwnd in whole packets, at least 1."""
    return max(int(S[CWND] // mss), 1)


def cubic_hystart_reset(S, window_pkts):
    """``bictcp_hystart_reset``: a new round (its end: one window from now)."""
    now = float(cubic_now_us(S))
    S[ROUND_START_US] = now
    S[LAST_ACK_US] = now
    S[ROUND_LEFT] = window_pkts
    S[CURR_RTT_US] = float(_U32)
    S[SAMPLE_CNT] = 0.0


def cubic_hystart_update(S, R, mss, rtt_s):
    """``cubictcp_acked``: the ACK clock's srtt, ``delay_min`` and HyStart (``hystart_update``)."""
    S[SRTT_S] = rtt_s if S[SRTT_S] == 0.0 else 0.875 * S[SRTT_S] + 0.125 * rtt_s
    hz = int(R[R_HZ])
    now_j = cubic_jiffies(S, hz)
    epoch_start = int(S[EPOCH_START])
    if epoch_start != 0 and now_j - (epoch_start - 1) < hz:
        return  # discard delay samples right after fast recovery
    delay = max(int(rtt_s * 1e6), 1)
    delay_min = int(S[DELAY_MIN_US])
    if delay_min == 0 or delay_min > delay:
        delay_min = delay
        S[DELAY_MIN_US] = float(delay)
    cwnd = cubic_cwnd_pkts(S, mss)
    if S[FOUND] != 0.0 or R[R_HYSTART] == 0.0 or not cwnd < S[SSTHRESH] / mss:
        return
    if S[ROUND_LEFT] <= 0:
        cubic_hystart_reset(S, cwnd)
    if cwnd < R[R_LOW_WINDOW]:
        return
    if not math.isnan(S[NOW_S]):  # HYSTART_ACK_TRAIN (needs the ACKs' real spacing)
        now = cubic_now_us(S)
        if now - int(S[LAST_ACK_US]) <= HYSTART_ACK_DELTA_US:
            S[LAST_ACK_US] = float(now)
            if now - int(S[ROUND_START_US]) > delay_min >> 1:  # no pacing: threshold / 2
                S[FOUND] = 1.0
                S[SSTHRESH] = float(cwnd * mss)
    # HYSTART_DELAY
    curr = min(int(S[CURR_RTT_US]), delay)
    S[CURR_RTT_US] = float(curr)
    if S[SAMPLE_CNT] < HYSTART_MIN_SAMPLES:
        S[SAMPLE_CNT] += 1.0
    elif curr > delay_min + min(max(delay_min >> 3, HYSTART_DELAY_MIN_US), HYSTART_DELAY_MAX_US):
        S[FOUND] = 1.0
        S[SSTHRESH] = float(cwnd * mss)


def bictcp_update(S, R, cwnd, acked):
    """``bictcp_update``: ``S[CNT]``, the ACKs per one-packet increase."""
    hz = int(R[R_HZ])
    now = cubic_jiffies(S, hz)
    S[ACK_CNT] += acked
    if int(S[LAST_CWND]) == cwnd and now - int(S[LAST_TIME]) <= hz // 32:
        return
    if not (S[EPOCH_START] != 0.0 and now == int(S[LAST_TIME])):
        S[LAST_CWND] = float(cwnd)
        S[LAST_TIME] = float(now)
        if S[EPOCH_START] == 0.0:
            S[EPOCH_START] = float(now + 1)
            S[ACK_CNT] = float(acked)
            S[TCP_CWND] = float(cwnd)
            last_max = int(S[LAST_MAX_CWND])
            if last_max <= cwnd:
                S[BIC_K] = 0.0
                S[BIC_ORIGIN_POINT] = float(cwnd)
            else:
                S[BIC_K] = float(cubic_root(int(R[R_CUBE_FACTOR]) * (last_max - cwnd)))
                S[BIC_ORIGIN_POINT] = float(last_max)
        bic_k = int(S[BIC_K])
        origin = int(S[BIC_ORIGIN_POINT])
        t = now - (int(S[EPOCH_START]) - 1) + -(-int(S[DELAY_MIN_US]) * hz // 1_000_000)  # usecs_to_jiffies
        t = (t << BICTCP_HZ) // hz
        offs = bic_k - t if t < bic_k else t - bic_k
        # u64 in the kernel: the cube wraps mod 2**64 from ~346 s after the epoch's start
        # (cube_rtt_scale offs**3 >= 2**64) and only its bits 40..63 reach the u32 delta. Those
        # 24 bits are the same in Python's unbounded ints and in the compiled engine's
        # wrapping int64 (whose arithmetic shift would smear the sign into a wider mask).
        delta = ((int(R[R_CUBE_RTT_SCALE]) * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) & _U24
        target = ((origin - delta) if t < bic_k else (origin + delta)) & _U32
        cnt = cwnd // (target - cwnd) if target > cwnd else 100 * cwnd
        if S[LAST_MAX_CWND] == 0.0 and cnt > 20:
            cnt = 20  # the first epoch: at least 5% per RTT
        S[CNT] = float(cnt)
    cnt = int(S[CNT])
    if R[R_FRIENDLY] != 0.0:
        delta = (cwnd * int(R[R_BETA_SCALE])) >> 3
        ack_cnt = int(S[ACK_CNT])
        tcp_cwnd = int(S[TCP_CWND])
        while ack_cnt > delta:
            ack_cnt -= delta
            tcp_cwnd += 1
        S[ACK_CNT] = float(ack_cnt)
        S[TCP_CWND] = float(tcp_cwnd)
        if tcp_cwnd > cwnd:
            cnt = min(cnt, cwnd // (tcp_cwnd - cwnd))
    S[CNT] = float(max(cnt, 2))


def cubic_cong_avoid(S, R, mss, acked_bytes):
    """``cubictcp_cong_avoid`` for one ACK of ``acked_bytes`` new bytes: ``tcp_slow_start``
    below ssthresh, the rest through :func:`bictcp_update` and ``tcp_cong_avoid_ai``."""
    acked = max(-(-int(acked_bytes) // mss), 1)  # packets (a short last segment counts)
    old = cwnd = cubic_cwnd_pkts(S, mss)
    S[ROUND_LEFT] -= acked
    if S[SRTT_S] > 0.0:  # the ACK clock: one srtt per window acknowledged
        S[CLOCK_S] += S[SRTT_S] * acked / cwnd
    if cwnd < S[SSTHRESH] / mss:  # tcp_slow_start
        new = min(cwnd + acked, S[SSTHRESH] / mss)
        grown = int(new) if new > cwnd else cwnd
        acked -= grown - cwnd
        cwnd = grown
        if acked <= 0:
            S[CWND] += (cwnd - old) * mss
            return
    bictcp_update(S, R, cwnd, acked)
    # tcp_cong_avoid_ai(tp, ca->cnt, acked)
    snd_cwnd_cnt, cwnd = tcp_cong_avoid_ai(int(S[SND_CWND_CNT]), cwnd, int(S[CNT]), acked)
    S[SND_CWND_CNT] = float(snd_cwnd_cnt)
    S[CWND] += (cwnd - old) * mss


def cubic_law(hook, S, R, mss, x):
    """CUBIC with HyStart (``tcp_cubic.c``) on the state vector ``S``.

    :data:`~.base.ACK`: :func:`cubic_cong_avoid`. :data:`~.base.LOSS` (``cubictcp_recalc_ssthresh``):
    ``W_max`` with fast convergence, the epoch ends, returns ``max(cwnd beta / 1024, 2)``
    packets in bytes (from cwnd, not FlightSize). :data:`~.base.TIMEOUT`
    (``cubictcp_state(TCP_CA_Loss)``): every CUBIC and HyStart variable reset.
    :data:`~.base.RTT`: :func:`cubic_hystart_update`. Other hooks: nothing.
    """
    if hook == ACK:
        cubic_cong_avoid(S, R, mss, x)
    elif hook == RTT:
        cubic_hystart_update(S, R, mss, x)
    elif hook == LOSS:
        cwnd = cubic_cwnd_pkts(S, mss)
        beta = int(R[R_BETA])
        S[EPOCH_START] = 0.0
        if cwnd < int(S[LAST_MAX_CWND]) and R[R_FAST_CONV] != 0.0:
            S[LAST_MAX_CWND] = float(cwnd * (BICTCP_BETA_SCALE + beta) // (2 * BICTCP_BETA_SCALE))
        else:
            S[LAST_MAX_CWND] = float(cwnd)
        return float(max(cwnd * beta // BICTCP_BETA_SCALE, 2) * mss)
    elif hook == TIMEOUT:
        for k in range(CNT, TCP_CWND + 1):
            S[k] = 0.0
        S[FOUND] = 0.0
        cubic_hystart_reset(S, cubic_cwnd_pkts(S, mss))
    return 0.0


CubicRule.law = staticmethod(cubic_law)
