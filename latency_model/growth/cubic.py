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

Not modelled: ``tcp_is_cwnd_limited`` (cwnd grows here even when the sender has nothing
left to send), ``cubictcp_cwnd_event`` (idle restarts), undo (``tcp_reno_undo_cwnd``).

Flow level (the fluid model's per-round law): slow start as Reno's, ``w (1 + 1/b)``; in
congestion avoidance the Reno-friendly floor of RFC 9438 Section 4.3,
``w + 3 (1 - beta) / (1 + beta) / b`` per round (the cubic curve needs the time since the
last loss, which a per-round law does not carry).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import check_int
from .base import CongestionState, GrowthRule

__all__ = ["CubicRule", "CubicState", "cubic_root"]

BICTCP_BETA_SCALE = 1024
BICTCP_HZ = 10
HYSTART_MIN_SAMPLES = 8
HYSTART_DELAY_MIN_US = 4000
HYSTART_DELAY_MAX_US = 16000
HYSTART_ACK_DELTA_US = 2000
_U32 = 0xFFFFFFFF

# cbrt(x) MSB values for x MSB values in [0..63] (tcp_cubic.c cubic_root, Willy Tarreau)
_V = (0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
      157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
      200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
      231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254)


def cubic_root(a: int) -> int:
    """Integer cube root as ``tcp_cubic.c`` ``cubic_root`` computes it: a table lookup on
    the leading bits and one Newton-Raphson step (average error ~0.2%)."""
    a = int(a)
    b = a.bit_length()  # fls64
    if b < 7:
        return (_V[a] + 35) >> 6
    b = ((b * 84) >> 8) - 1
    shift = a >> (b * 3)
    x = (((_V[shift] + 10) << b) & _U32) >> 6
    x = 2 * x + a // (x * (x - 1))
    return (((x & _U32) * 341) & _U32) >> 10


@dataclass(slots=True)
class CubicState(CongestionState):
    """Congestion state plus ``struct bictcp`` (``tcp_cubic.c``); windows in packets, times
    in jiffies (of the rule's ``hz``) or microseconds as named.

    ``now_s``: the caller's clock, seconds (``None``: the rule's ACK clock ``clock_s``).
    """

    cnt: int = 0
    last_max_cwnd: int = 0
    last_cwnd: int = 0
    last_time: int = 0
    bic_origin_point: int = 0
    bic_k: int = 0
    delay_min_us: int = 0
    epoch_start: int = 0  # jiffies + 1, 0 = no epoch (the kernel's 0 is "unset" too)
    ack_cnt: int = 0
    tcp_cwnd: int = 0
    found: bool = False
    sample_cnt: int = 0
    curr_rtt_us: int = _U32
    round_left: float = 0.0  # packets still to be acknowledged in this HyStart round
    round_start_us: int = 0
    last_ack_us: int = 0
    snd_cwnd_cnt: int = 0
    srtt_s: float = 0.0
    clock_s: float = 0.0
    now_s: float | None = None


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
    def new_state(self, cwnd_bytes, ssthresh_bytes, mss_bytes) -> CubicState:
        st = CubicState(cwnd=float(cwnd_bytes), ssthresh=float(ssthresh_bytes), mss=mss_bytes)
        self._hystart_reset(st, cwnd_bytes / mss_bytes)
        return st

    @staticmethod
    def _now_us(st: CubicState) -> int:
        return int((st.clock_s if st.now_s is None else st.now_s) * 1e6)

    def _jiffies(self, st: CubicState) -> int:
        return self._now_us(st) * self.hz // 1_000_000

    def _hystart_reset(self, st: CubicState, window_pkts: float) -> None:
        """``bictcp_hystart_reset``: a new round (its end: one window from now)."""
        st.round_start_us = st.last_ack_us = self._now_us(st)
        st.round_left = window_pkts
        st.curr_rtt_us = _U32
        st.sample_cnt = 0

    def on_rtt_sample(self, st: CubicState, rtt_s: float) -> None:
        """``cubictcp_acked``: ``delay_min`` and HyStart (``hystart_update``)."""
        st.srtt_s = rtt_s if st.srtt_s == 0.0 else 0.875 * st.srtt_s + 0.125 * rtt_s
        now_j = self._jiffies(st)
        if st.epoch_start and now_j - (st.epoch_start - 1) < self.hz:
            return  # discard delay samples right after fast recovery
        delay = max(int(rtt_s * 1e6), 1)
        if st.delay_min_us == 0 or st.delay_min_us > delay:
            st.delay_min_us = delay
        cwnd = self._cwnd_pkts(st)
        if st.found or not self.hystart or not cwnd < st.ssthresh / st.mss:
            return
        if st.round_left <= 0:
            self._hystart_reset(st, cwnd)
        if cwnd < self.hystart_low_window:
            return
        if st.now_s is not None:  # HYSTART_ACK_TRAIN (needs the ACKs' real spacing)
            now = self._now_us(st)
            if now - st.last_ack_us <= HYSTART_ACK_DELTA_US:
                st.last_ack_us = now
                if now - st.round_start_us > st.delay_min_us >> 1:  # no pacing: threshold / 2
                    st.found = True
                    st.ssthresh = float(cwnd * st.mss)
        # HYSTART_DELAY
        st.curr_rtt_us = min(st.curr_rtt_us, delay)
        if st.sample_cnt < HYSTART_MIN_SAMPLES:
            st.sample_cnt += 1
        elif st.curr_rtt_us > st.delay_min_us + min(max(st.delay_min_us >> 3, HYSTART_DELAY_MIN_US),
                                                     HYSTART_DELAY_MAX_US):
            st.found = True
            st.ssthresh = float(cwnd * st.mss)

    @staticmethod
    def _cwnd_pkts(st: CongestionState) -> int:
        return max(int(st.cwnd // st.mss), 1)

    def on_ack(self, st: CubicState, acked_bytes: int) -> None:
        """``cubictcp_cong_avoid`` for one ACK of ``acked_bytes`` new bytes."""
        acked = max(-(-int(acked_bytes) // st.mss), 1)  # packets (a short last segment counts)
        old = cwnd = self._cwnd_pkts(st)
        st.round_left -= acked
        if st.srtt_s > 0.0:  # the ACK clock: one srtt per window acknowledged
            st.clock_s += st.srtt_s * acked / cwnd
        if cwnd < st.ssthresh / st.mss:  # tcp_slow_start
            new = min(cwnd + acked, st.ssthresh / st.mss)
            new = int(new) if new > cwnd else cwnd
            acked -= new - cwnd
            cwnd = new
            if acked <= 0:
                st.cwnd += (cwnd - old) * st.mss
                return
        self._update(st, cwnd, acked)
        # tcp_cong_avoid_ai(tp, ca->cnt, acked)
        w = st.cnt
        if st.snd_cwnd_cnt >= w:
            st.snd_cwnd_cnt = 0
            cwnd += 1
        st.snd_cwnd_cnt += acked
        if st.snd_cwnd_cnt >= w:
            delta = st.snd_cwnd_cnt // w
            st.snd_cwnd_cnt -= delta * w
            cwnd += delta
        st.cwnd += (cwnd - old) * st.mss

    def _update(self, st: CubicState, cwnd: int, acked: int) -> None:
        """``bictcp_update``: ``st.cnt``, the ACKs per one-packet increase."""
        now = self._jiffies(st)
        st.ack_cnt += acked
        if st.last_cwnd == cwnd and now - st.last_time <= self.hz // 32:
            return
        if not (st.epoch_start and now == st.last_time):
            st.last_cwnd = cwnd
            st.last_time = now
            if not st.epoch_start:
                st.epoch_start = now + 1
                st.ack_cnt = acked
                st.tcp_cwnd = cwnd
                if st.last_max_cwnd <= cwnd:
                    st.bic_k = 0
                    st.bic_origin_point = cwnd
                else:
                    st.bic_k = cubic_root(self.cube_factor * (st.last_max_cwnd - cwnd))
                    st.bic_origin_point = st.last_max_cwnd
            t = now - (st.epoch_start - 1) + -(-st.delay_min_us * self.hz // 1_000_000)  # usecs_to_jiffies
            t = (t << BICTCP_HZ) // self.hz
            offs = st.bic_k - t if t < st.bic_k else t - st.bic_k
            delta = ((self.cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) & _U32
            target = ((st.bic_origin_point - delta) if t < st.bic_k else (st.bic_origin_point + delta)) & _U32
            st.cnt = cwnd // (target - cwnd) if target > cwnd else 100 * cwnd
            if st.last_max_cwnd == 0 and st.cnt > 20:
                st.cnt = 20  # the first epoch: at least 5% per RTT
        if self.tcp_friendliness:
            delta = (cwnd * self.beta_scale) >> 3
            while st.ack_cnt > delta:
                st.ack_cnt -= delta
                st.tcp_cwnd += 1
            if st.tcp_cwnd > cwnd:
                st.cnt = min(st.cnt, cwnd // (st.tcp_cwnd - cwnd))
        st.cnt = max(st.cnt, 2)

    def ssthresh_after_loss(self, st: CubicState, flight_bytes: float) -> float:
        """``cubictcp_recalc_ssthresh``: ``max(cwnd * beta / 1024, 2)`` packets, in bytes
        (from cwnd, not FlightSize); records W_max with fast convergence and ends the epoch."""
        cwnd = self._cwnd_pkts(st)
        if isinstance(st, CubicState):
            st.epoch_start = 0
            if cwnd < st.last_max_cwnd and self.fast_convergence:
                st.last_max_cwnd = cwnd * (BICTCP_BETA_SCALE + self.beta) // (2 * BICTCP_BETA_SCALE)
            else:
                st.last_max_cwnd = cwnd
        return float(max(cwnd * self.beta // BICTCP_BETA_SCALE, 2) * st.mss)

    def on_congestion_event(self, st: CubicState, kind: str) -> None:
        """``cubictcp_state(TCP_CA_Loss)`` on a timeout: ``bictcp_reset`` and a new HyStart
        round; nothing on a fast retransmit (``ssthresh_after_loss`` did the work)."""
        if kind not in ("fast_retransmit", "timeout"):
            raise ValueError(f"kind must be one of fast_retransmit, timeout, got {kind!r}")
        if kind == "timeout" and isinstance(st, CubicState):
            for name in ("cnt", "last_max_cwnd", "last_cwnd", "last_time", "bic_origin_point", "bic_k",
                         "delay_min_us", "epoch_start", "ack_cnt", "tcp_cwnd"):
                setattr(st, name, 0)
            st.found = False
            self._hystart_reset(st, self._cwnd_pkts(st))
