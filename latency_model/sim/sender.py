"""TCP sender: window growth through a :class:`~latency_model.growth.GrowthRule`,
NewReno loss recovery and the retransmission timer.

Implemented, segment by segment:

* sending: a segment leaves when ``FlightSize + len <= cwnd`` (plus Limited
  Transmit credit) and ``FlightSize + len <= M * MSS`` (receiver window); one
  segment may always leave when nothing is in flight;
* new ACK: ``rule.on_rtt_sample`` with the ACK's RTT sample (Karn's rule: none from an
  ACK that covers a retransmitted segment), then ``rule.on_ack`` (RFC 5681 Section 3.1) outside fast recovery;
* duplicate ACKs (RFC 5681 Section 2 definition): fast retransmit on the
  ``dup_t``-th (RFC 5681 3.2, RFC 6582 3.2 steps 1-3 incl. the ``recover`` check);
  the threshold drops to 1 for a hole among the last ``dup_t`` segments with the
  paper's proposal (Section 3.1), and to ``oseg - 1`` with Early Retransmit
  (RFC 5827 Section 3.1, segment-based, no SACK) when fewer than ``dup_t + 1``
  segments are outstanding and no new segment can be sent;
* Limited Transmit (RFC 3042 Section 2): new segments on duplicate ACKs without
  changing cwnd; these segments are left out of the FlightSize used for
  ssthresh (RFC 5681 3.2 step 2);
* fast recovery (RFC 6582 3.2 steps 4-5): inflate cwnd by one MSS per further
  duplicate ACK; a partial ACK retransmits the next hole, deflates cwnd by the
  newly acknowledged bytes and adds back one MSS; a full ACK sets
  ``cwnd = min(ssthresh, max(FlightSize, MSS) + MSS)`` (option 1);
* retransmission timer (RFC 6298): SRTT/RTTVAR with alpha 1/8, beta 1/4, K 4,
  initial RTO, minimum and maximum RTO, Karn's rule (no sample from an ACK that covers
  a retransmitted segment, so a backed-off RTO is kept until a segment first sent after
  the retransmission is acknowledged), exponential back-off (5.5), restart on new ACK (5.3; only on the first
  partial ACK in recovery, RFC 6582 "impatient" variant); or the paper's fixed RTO;
  with ``rtt_sampling="timestamps"`` (RFC 7323 Section 4.1) every new ACK gives the
  sample ``now - TSecr`` (the echoed send time), retransmitted or not; with
  ``handshake_rtt`` the SYN / SYN-ACK exchange gives the first sample before any data
  leaves (Linux ``tcp_ack_update_rtt``), so the first RTO is SRTT-based;
* on expiry: ``ssthresh = rule.ssthresh_after_loss`` (held on consecutive
  expiries, RFC 5681 Section 3.1), ``cwnd = 1 MSS``, go-back-N from the first
  unacknowledged segment, ``recover`` = highest segment sent (RFC 6582 Section 3.2 step 1).
"""

from __future__ import annotations

from .engine import Timer
from .flat import rto_jiffies, rto_timer_wait

__all__ = ["Sender"]


class Sender:
    """Sending end of one transfer of ``size_bytes`` in ``n`` segments of at most MSS bytes.

    Parameters
    ----------
    queue : EventQueue
        Event queue (the retransmission timer lives there, kind ``"rto"``).
    link : Link
        Forward path.
    params : TcpParams
        TCP parameters (MSS, W0, W_SS, M, dup_t, dup_lt, recovery flags, rule, RTO).
    config : SimConfig
        Timer constants and the RTO / LT rules.
    size_bytes : int
        Transfer size, bytes (> 0).
    """

    def __init__(self, queue, link, params, config, size_bytes: int) -> None:
        mss = params.mss_bytes
        self.q = queue
        self.link = link
        self.mss = mss
        self.size = size_bytes
        self.n = -(-size_bytes // mss)
        self.rule = params.rule
        self.st = params.rule.new_state(params.w0 * mss, params.w_ss * mss, mss)
        self.rwnd_bytes = params.rwnd * mss
        self.dup_t = params.dup_t
        self.lt_lo, self.lt_hi = config.limited_transmit_window(params.dup_lt, params.dup_t)
        self.tail = params.tail_retransmit
        self.er = params.early_retransmit
        # RFC 6298 state ("paper": fixed RTO, no estimator, no back-off).
        self.fixed_rto = config.rto_rule == "paper"
        self.timestamps = config.rtt_sampling == "timestamps"
        # timer_hz > 0: the RTO in whole jiffies, fired by the kernel's timer wheel (flat.py).
        self.timer_hz = float(config.timer_hz)
        self.rto = params.rto if self.fixed_rto else rto_jiffies(config.initial_rto_s, self.timer_hz)
        self.min_rto = config.min_rto_s
        self.max_rto = config.max_rto_s
        self.g = config.clock_granularity_s
        self.srtt = -1.0
        self.rttvar = 0.0
        self.timer = Timer(queue, "rto")
        # Sequence state, in segments.
        self.snd_una = 0
        self.snd_nxt = 0
        self.snd_max = 0
        self.recover = -1
        self.in_recovery = False
        self.partial_seen = False
        self.dupacks = 0
        self.lt_credit = 0
        self.lt_bytes = 0
        self.backoff = 0
        self.tx_count = [0] * self.n
        self.retransmitted = [False] * self.n
        self.sent_at = [0.0] * self.n
        # Measures.
        self.retransmissions = 0
        self.timeouts = 0
        self.max_backoff = 0
        self.fast_retransmits = 0
        self.first_lost = 0
        self.completion_s: float | None = None
        self.trace = None
        # The handshake's sample (SimConfig.handshake_rtt) feeds the RFC 6298 estimator.
        if config.handshake_rtt and not self.fixed_rto:
            self._rtt_sample(config.handshake_rtt_s(params.rtt_s))

    # Helpers -------------------------------------------------------------
    def _end(self, k: int) -> int:
        """Byte offset just past segment ``k - 1`` (bytes in segments 0..k-1)."""
        e = k * self.mss
        return e if e < self.size else self.size

    def _seg_len(self, k: int) -> int:
        return self._end(k + 1) - k * self.mss

    def _flight(self) -> int:
        return self._end(self.snd_nxt) - self._end(self.snd_una)

    def _send_limit(self) -> float:
        """Bytes the flight may reach: cwnd (+ LT credit) and the receiver window."""
        return min(self.st.cwnd + self.lt_credit * self.mss, self.rwnd_bytes)

    def _can_send_new(self) -> bool:
        """True if the receiver window admits the next segment (RFC 5827 'no new data' test)."""
        if self.snd_nxt >= self.n:
            return False
        return self._flight() + self._seg_len(self.snd_nxt) <= self.rwnd_bytes

    def _note(self, event: str, now: float, value: int) -> None:
        if self.trace is not None:
            self.trace(event, now, value)

    # Transmission ----------------------------------------------------------
    def _transmit(self, seg: int, now: float) -> None:
        self.tx_count[seg] += 1
        if self.tx_count[seg] > 1:
            self.retransmissions += 1
            self.retransmitted[seg] = True
            self._note("retransmit", now, seg)
        else:
            self._note("send", now, seg)
        self.sent_at[seg] = now
        sent = (self.link.send_data(seg, self._seg_len(seg), now, now) if self.timestamps
                else self.link.send_data(seg, self._seg_len(seg), now))
        if not sent and self.tx_count[seg] == 1:
            self.first_lost += 1
        if not self.timer.armed:  # RFC 6298 (5.1)
            self.timer.arm(now + rto_timer_wait(self.rto, self.timer_hz))

    def send_allowed(self, now: float) -> None:
        """Send every segment that cwnd (+ LT credit) and the receiver window admit."""
        limit = self._send_limit()  # nothing below changes it
        while self.snd_nxt < self.n:
            flight = self._flight()
            if flight > 0 and flight + self._seg_len(self.snd_nxt) > limit:
                break
            self._transmit(self.snd_nxt, now)
            self.snd_nxt += 1
            if self.snd_nxt > self.snd_max:
                self.snd_max = self.snd_nxt

    # Timer ----------------------------------------------------------------
    def _rtt_sample(self, r: float) -> None:
        if self.fixed_rto:
            return
        if self.srtt < 0.0:  # RFC 6298 (2.2)
            self.srtt = r
            self.rttvar = r / 2.0
        else:  # RFC 6298 (2.3), beta = 1/4, alpha = 1/8
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - r)
            self.srtt = 0.875 * self.srtt + 0.125 * r
        k_var = 4.0 * self.rttvar
        rto = self.srtt + (k_var if k_var > self.g else self.g)
        if rto < self.min_rto:  # (2.4)
            rto = self.min_rto
        if rto > self.max_rto:  # (2.5)
            rto = self.max_rto
        self.rto = rto_jiffies(rto, self.timer_hz)

    def _karn_valid(self, ack: int) -> bool:
        """True if an ACK for ``ack`` segments gives a valid RTT sample (Karn's rule).

        RFC 6298 Section 3: no sample from a retransmitted segment, and the ambiguity
        covers every segment the ACK newly acknowledges: an ACK that covers a
        retransmission may have been triggered by it. So the ACK is valid only if none of
        ``snd_una .. ack - 1`` was ever retransmitted: the first valid sample after a
        retransmission acknowledges only segments first sent after it (Karn & Partridge;
        Linux's ``FLAG_RETRANS_DATA_ACKED`` in ``tcp_clean_rtx_queue``). Until then the
        backed-off RTO is kept (RFC 6298 Section 5, note after (5.7)).
        """
        retx = self.retransmitted
        for k in range(self.snd_una, ack):
            if retx[k]:
                return False
        return True

    def on_rto(self, now: float) -> None:
        """Retransmission timer expiry at ``now`` (RFC 6298 5.4-5.6, RFC 5681 3.1)."""
        st = self.st
        self.timeouts += 1
        self.backoff += 1
        if self.backoff > self.max_backoff:
            self.max_backoff = self.backoff
        if self.backoff == 1:
            st.ssthresh = self.rule.ssthresh_after_loss(st, self._flight())
        self.rule.on_congestion_event(st, "timeout")
        st.cwnd = float(self.mss)
        st.bytes_acked = 0.0
        self.in_recovery = False
        self.dupacks = 0
        self.lt_credit = 0
        self.lt_bytes = 0
        self.recover = self.snd_max - 1
        if not self.fixed_rto:
            self.rto = min(2.0 * self.rto, self.max_rto)  # (5.5)
        self._note("timeout", now, self.snd_una)
        self.snd_nxt = self.snd_una  # go-back-N
        self.send_allowed(now)  # (5.4), timer restarted by _transmit (5.6)

    # ACK processing -----------------------------------------------------------
    def on_ack(self, ack: int, now: float, tsecr: float | None = None) -> None:
        """Process a cumulative ACK for ``ack`` segments arriving at ``now`` (seconds),
        echoing the timestamp ``tsecr`` (seconds; used with ``rtt_sampling="timestamps"``)."""
        if ack > self.snd_una:
            self._new_ack(ack, now, tsecr)
        elif ack == self.snd_una and self.snd_max > self.snd_una:
            self._dup_ack(now)

    def _advance(self, ack: int, now: float, tsecr: float | None) -> int:
        """A new cumulative ACK for ``ack`` segments: the RTT sample it gives (timestamps, or
        Karn's rule), then ``snd_una`` moves and the back-off count ends. Shared by every
        sender built on this one. Returns the bytes newly acknowledged."""
        st = self.st
        acked = self._end(ack) - self._end(self.snd_una)
        if self.timestamps or self._karn_valid(ack):
            r = now - (tsecr if self.timestamps else self.sent_at[ack - 1])
            self.rule.on_rtt_sample(st, r)
            self._rtt_sample(r)
        self.snd_una = ack
        if self.snd_nxt < ack:
            self.snd_nxt = ack
        self.backoff = 0
        return acked

    def _finish(self, now: float, ack: int) -> None:
        """The ACK for the last segment arrived at ``now``: the transfer is complete."""
        self.completion_s = now
        self.timer.cancel()
        self._note("done", now, ack)

    def _restart_timer(self, now: float) -> None:
        """On a new ACK: restart the timer while data is outstanding (RFC 6298 (5.3)), else
        stop it (5.2)."""
        if self.snd_nxt > self.snd_una:
            self.timer.arm(now + rto_timer_wait(self.rto, self.timer_hz))
        else:
            self.timer.cancel()

    def _new_ack(self, ack: int, now: float, tsecr: float | None = None) -> None:
        st = self.st
        acked = self._advance(ack, now, tsecr)
        if ack >= self.n:
            self._finish(now, ack)
            return
        if self.in_recovery:
            if ack > self.recover:  # full ACK: deflate (RFC 6582 step 5, option 1)
                flight = self._flight()
                st.cwnd = min(st.ssthresh, float(max(flight, self.mss) + self.mss))
                self.in_recovery = False
                self.dupacks = 0
                self._note("recovery_exit", now, ack)
                self._restart_timer(now)
            else:  # partial ACK: retransmit the next hole, partial deflation
                self._transmit(ack, now)
                # Floored at 0 as in ns-3 (SafeSubtraction): RFC 6582 sets no floor, and a
                # rule that cut ssthresh far below the flight (ASS's divide) drove cwnd negative.
                st.cwnd = max(st.cwnd - acked, 0.0)
                if acked >= self.mss:
                    st.cwnd += self.mss
                self._note("partial_ack", now, ack)
                if not self.partial_seen:
                    self.partial_seen = True
                    self.timer.arm(now + rto_timer_wait(self.rto, self.timer_hz))
        else:
            self.dupacks = 0
            self.lt_credit = 0
            self.lt_bytes = 0
            self.rule.on_ack(st, acked)
            self._note("ack", now, ack)
            self._restart_timer(now)
        self.send_allowed(now)

    def _dup_ack(self, now: float) -> None:
        st = self.st
        self.dupacks += 1
        if self.in_recovery:
            st.cwnd += self.mss  # RFC 6582 step 4
            self._note("dupack", now, self.snd_una)
            self.send_allowed(now)
            return
        thresh = self.dup_t
        if self.tail and self.snd_una >= self.n - self.dup_t:
            thresh = 1  # paper, Section 3.1: hole among the last dup_t segments
        if self.er:
            oseg = self.snd_nxt - self.snd_una
            if 2 <= oseg <= self.dup_t and not self._can_send_new():
                thresh = min(thresh, oseg - 1)  # RFC 5827 Section 3.1
        self._note("dupack", now, self.snd_una)
        if self.dupacks >= thresh and self.snd_una > self.recover:
            self._fast_retransmit(now)
        elif self.lt_lo <= self.dupacks <= self.lt_hi:
            self.lt_credit += 1  # RFC 3042: one more segment beyond cwnd
            before = self._end(self.snd_nxt)
            self.send_allowed(now)
            self.lt_bytes += self._end(self.snd_nxt) - before

    def _fast_retransmit(self, now: float) -> None:
        st = self.st
        flight = self._flight() - self.lt_bytes  # LT data excluded (RFC 5681 3.2 step 2)
        st.ssthresh = self.rule.ssthresh_after_loss(st, flight)
        self.rule.on_congestion_event(st, "fast_retransmit")
        self.recover = self.snd_max - 1
        self.in_recovery = True
        self.partial_seen = False
        self.fast_retransmits += 1
        self.lt_credit = 0
        self.lt_bytes = 0
        self._note("fast_retransmit", now, self.snd_una)
        self._transmit(self.snd_una, now)
        st.cwnd = st.ssthresh + self.dupacks * self.mss
        self.send_allowed(now)
