"""SACK sender: an RFC 6675 scoreboard and loss recovery, with PRR (RFC 6937) for cwnd.

:class:`SackSender` subclasses :class:`~latency_model.sim.sender.Sender` and keeps its
slow start, congestion avoidance (``rule.on_ack`` outside recovery), RTT sampling and
RFC 6298 timer; it replaces duplicate-ACK handling, recovery and the go-back-N after a
timeout. Units: segments for sequence state (segment ``k`` holds bytes
``k MSS .. min((k+1) MSS, size) - 1``), bytes for cwnd, ssthresh and pipe.

RFC 6675 in segments (every transmission is one whole segment, so the octet rules map
one to one):

* **Update()**: the ACK's SACK blocks mark segments SACKed; ``high_sacked`` is one past
  the highest SACKed segment.
* **DupAck** (Section 2): ``ack == snd_una``, data outstanding, and the ACK SACKs a
  segment not SACKed before. An ACK without new SACK information is no duplicate.
* **DupThresh**: ``dup_t``; 1 for a hole among the last ``dup_t`` segments with the
  paper's proposal (``tail_retransmit``); ``oseg - 1`` with Early Retransmit (RFC 5827
  Section 3.1) when fewer than ``dup_t + 1`` segments are outstanding and no new segment
  may be sent.
* **IsLost(s)**: at least DupThresh SACKed segments above ``s`` (for whole segments this
  is the RFC's "DupThresh discontiguous SACKed sequences or more than (DupThresh - 1) SMSS
  bytes SACKed above").
* **SetPipe()**: over unSACKed outstanding segments, one segment if not IsLost, one more
  if it was retransmitted in this recovery (``s < high_rxt``).
* **Entry** (Section 5 steps 1-4): on a duplicate ACK, if DupAcks >= DupThresh or
  IsLost(HighACK + 1), and the ACK point has passed ``recover`` (RecoveryPoint, Section
  5.1): ``recover = snd_max - 1``, ``ssthresh = rule.ssthresh_after_loss(FlightSize)``
  (Limited Transmit data left out, RFC 5681 3.2 step 2), retransmit ``snd_una``,
  ``high_rxt = snd_una + 1``, then step (C).
* **Limited Transmit** (Section 5 step 3) on duplicate ACKs ``lt_lo .. lt_hi`` below the
  threshold: new segments while ``cwnd - pipe >= 1 SMSS`` (HighRxt = HighACK).
* **In recovery** (steps A-C): an ACK beyond ``recover`` ends it (cwnd = ssthresh);
  any other ACK that acknowledges or SACKs data updates the scoreboard and, while
  ``cwnd - pipe >= 1 SMSS``, sends NextSeg(): (1) the lowest unSACKed segment above
  HighRxt and below the highest SACKed one with IsLost; (2) new data if the receiver
  window allows; (3) the lowest unSACKed segment above HighRxt below the highest SACKed
  one; (4) once per recovery (RescueRxt), the highest outstanding unSACKed segment.
  Rules (1) and (3) advance HighRxt, (4) does not.
* **Timeout** (Section 5.1): recovery ends, ``recover = snd_max - 1`` and no new recovery
  starts before the ACK point passes it; the scoreboard is kept, and the slow start that
  follows resends the unSACKed segments from ``snd_una`` on, skipping SACKed ones,
  counting only what it sent (Linux's ``tcp_enter_loss`` marks every unSACKed segment
  lost, so its in-flight is the same).

cwnd in recovery, ``SimConfig.prr`` (RFC 6937 Section 3, counted in segments as Linux's
``tcp_cwnd_reduction`` does; RFC 6937 counts bytes, its examples segments):
``RecoverFS = snd_nxt - snd_una`` at entry; on every recovery ACK ``prr_delivered +=
DeliveredData`` (newly acknowledged + newly SACKed segments); if ``pipe > ssthresh``
``sndcnt = ceil(prr_delivered ssthresh / RecoverFS) - prr_out``, else ``sndcnt = min(ssthresh
- pipe, limit)`` with ``limit = prr_delivered - prr_out`` (CRB) or ``max(prr_delivered -
prr_out, DeliveredData) + 1`` (SSRB); ``cwnd = pipe + max(sndcnt, 0) MSS``. The fast
retransmit itself is sent unconditionally (RFC 6675 4.3; Linux forces it the same way)
and counts in ``prr_out``. ``prr="off"``: cwnd = ssthresh from the fast retransmit on
(RFC 6675 step 4.2). At the end of recovery cwnd = ssthresh (RFC 6937).

RACK-TLP (RFC 8985), ``SimConfig(rack_tlp=True)``:

* **RACK update** (Section 6.2 steps 1-3) on every ACK, over the segments it newly
  acknowledges or SACKs: min_RTT from every RFC 6298 / 7323 sample and from the SACK RTT of
  never-retransmitted segments (as Linux); a retransmitted segment is ignored if the echo
  predates its last transmission or it was resent less than min_RTT ago; RACK.xmit_ts /
  RACK.end_seq follow the most recently sent valid segment (ties by sequence), RACK.rtt is
  its RTT; RACK.reord is set by a never-resent segment delivered below RACK.fack (only ACK
  loss can cause it: the path is FIFO).
* **reo_wnd** (step 4), reo_wnd_mult = 1 (no D-SACK, so no adaptation): 0 in fast or RTO
  recovery or once DupThresh segments are SACKed unless RACK.reord, else
  min(min_RTT / 4, SRTT).
* **Loss marks** (step 5): an unacknowledged segment sent before RACK.segment is lost once
  ``xmit_ts + RACK.rtt + reo_wnd <= now``; the largest remaining time arms the reordering
  timer (kind ``"rack"``, 6.3). A marked segment is not tested again until resent; a
  retransmission found lost is marked again and becomes eligible for NextSeg rule (1).
* **RFC 6675 with RACK** (RFC 8985 is "an alternative to the DupAck threshold approach",
  its abstract): RACK's marks replace IsLost and the DupThresh entry test (also Early
  Retransmit and the paper's tail rule): a new mark outside recovery starts it (ssthresh, RecoveryPoint, PRR as above; the fast retransmission
  is the lowest marked segment). pipe = unSACKed segments not marked lost + retransmissions
  in flight (Linux's packets_in_flight). NextSeg: (1) the lowest marked segment without a
  retransmission in flight, (2) new data, (3) the lowest unSACKed segment above HighRxt
  below the highest SACK without one, (4) the rescue, skipped when the highest unSACKed
  segment's retransmission is already in flight.
* **TLP** (Section 7): the probe timer is (re)armed after new data leaves (not a probe) or
  an ACK advances the cumulative ACK, when data is outstanding, nothing is SACKed, not in
  fast or RTO recovery, no probe is outstanding (TLP.end_seq) and an RTT sample was taken
  since the last probe, the connection's start counting as one (its handshake would give
  it; with ``SimConfig.handshake_rtt`` it is that sample) (checked when arming: neither can
  change before expiry; the RFC checks at expiry and then restarts the RTO from there).
  PTO = 2 SRTT, + WCDelAckT (0.2 s) with one segment in flight, 1 s without SRTT (the first
  flight, unless ``handshake_rtt`` gave SRTT and min_RTT from the SYN / SYN-ACK exchange),
  capped at the RTO's expiry. The probe: the next new segment if the
  receiver window admits it, else the highest segment sent again; TLP.end_seq = SND.NXT;
  then the RTO restarts from now.
* **TLP loss detection** (7.4): when the ACK reaches TLP.end_seq the episode ends; a
  resent probe is taken to have repaired a loss (both copies arriving shows only with
  D-SACK, which neither end has here), so cwnd is reduced: ssthresh =
  ``rule.ssthresh_after_loss(FlightSize)``, cwnd = min(cwnd, ssthresh). Entering recovery or
  a timeout ends the episode without it (the reduction happens there).
* **Timers** (Section 8): the reordering timer, the probe timer and the RTO are mutually
  exclusive; each event ends by keeping exactly one (reordering if RACK asks, else the
  probe if one is due, else the RTO, restarted from now when another stood in for it).
* Not modelled: D-SACK and reo_wnd adaptation, RACK during the slow start after a timeout
  (every unSACKed segment is resent then anyway), a probe in recovery.
"""

from __future__ import annotations

import math

from .engine import Timer
from .flat import reo_timer_wait, rto_timer_wait, tlp_timer_wait
from .sender import Sender

__all__ = ["SackSender", "WC_DEL_ACK_T_S"]

WC_DEL_ACK_T_S = 0.2
"""RFC 8985 Section 7.2 WCDelAckT: the worst-case delayed-ACK time a probe waits for when
one segment is in flight, seconds (the RFC's 200 ms, fixed: it is the longest delay the
sender must assume of *any* receiver, not this receiver's timer)."""

_EPS_S = 1e-9
"""Float tolerance, seconds, of RACK's expiry test ``xmit_ts + RACK.rtt + reo_wnd - now <= 0``
(with reo_wnd = 0 and equal transmit times the sum is 0 up to rounding) and of the step 2
test ``rtt < min_RTT`` (a fixed path gives a retransmission exactly min_RTT)."""


class SackSender(Sender):
    """RFC 6675 SACK loss recovery with PRR (see the module docstring).

    Parameters
    ----------
    queue, link, params, config, size_bytes
        As :class:`~latency_model.sim.sender.Sender`; ``config.prr`` selects the cwnd
        rule in recovery.
    """

    def __init__(self, queue, link, params, config, size_bytes: int) -> None:
        super().__init__(queue, link, params, config, size_bytes)
        if config.bare_fin and size_bytes <= min(self.st.cwnd, self.rwnd_bytes):
            # The whole write leaves in the first flight, so the FIN follows it as a bare
            # segment n_data (Linux tcp_send_fin), one segment against cwnd.
            self.n += 1
            self.tx_count.append(0)
            self.retransmitted.append(False)
            self.sent_at.append(0.0)
        self.sacked = [False] * self.n
        self.high_sacked = 0      # one past the highest SACKed segment (HighSACK + 1)
        self.high_rxt = 0         # one past the highest segment retransmitted in recovery
        self.rescue_rxt = -1      # RescueRxt (segment), -1 = undefined
        self.loss_state = False   # slow start after a timeout, until the ACK passes recover
        self.prr = config.prr
        self.prr_delivered = 0
        self.prr_out = 0
        self.recover_fs = 0
        self.pipe_log: list | None = None  # optional (time_s, pipe_bytes) per recovery ACK (tests)
        self.rack_tlp = config.rack_tlp
        self.rack_tsecr_test = config.rack_tsecr_test
        self.lost_only = config.rxt_lost_only
        if config.implicit_lt:  # Linux: new data on every duplicate ACK while cwnd - pipe >= 1 SMSS
            self.lt_lo, self.lt_hi = 1, self.n
        self._busy = False  # inside an event handler (timers are settled at its end)
        self._sent_new = False  # a first transmission left during the current event
        if self.rack_tlp:
            self._init_rack_tlp(queue)
            if self.handshake_rtt_s is not None:  # RFC 8985 6.2 step 1 on the handshake's sample
                self.rtt_samples = 1
                self.min_rtt = self.handshake_rtt_s

    # Scoreboard ------------------------------------------------------------
    def dup_thresh(self) -> int:
        """DupThresh now (segments): dup_t, lowered by the tail rule or Early Retransmit."""
        thresh = self.dup_t
        if self.tail and self.snd_una >= self.n - self.dup_t:
            thresh = 1
        if self.er:
            oseg = self.snd_nxt - self.snd_una
            if 2 <= oseg <= self.dup_t and not self._can_send_new():
                thresh = min(thresh, oseg - 1)
        return thresh

    def is_lost(self, seg: int) -> bool:
        """RFC 6675 IsLost(seg): DupThresh or more SACKed segments above it; with
        ``rack_tlp`` RACK's loss mark instead (RFC 8985 Section 6)."""
        if self.rack_tlp:
            return self.lost[seg]
        thresh = self.dup_thresh()
        count = 0
        for k in range(seg + 1, self.high_sacked):
            if self.sacked[k]:
                count += 1
                if count >= thresh:
                    return True
        return False

    def pipe(self) -> int:
        """RFC 6675 SetPipe(): bytes the sender estimates in the network."""
        if self.rack_tlp:
            return self._rack_pipe()
        thresh = self.dup_thresh()
        sacked = self.sacked
        above = 0
        total = 0
        for s in range(self.snd_max - 1, self.snd_una - 1, -1):
            if sacked[s]:
                above += 1
                continue
            length = self._seg_len(s)
            if above < thresh:  # not IsLost(s)
                total += length
            if s < self.high_rxt:
                total += length
        return total

    def _update(self, ack: int, blocks, out: list | None = None) -> int:
        """RFC 6675 Update(): mark SACKed segments at or above ``ack``; newly SACKed count
        (the segments themselves are appended to ``out`` if given)."""
        new = 0
        sacked = self.sacked
        for lo, hi in blocks:
            for k in range(max(lo, ack), hi):
                if not sacked[k]:
                    sacked[k] = True
                    new += 1
                    if out is not None:
                        out.append(k)
            if hi > self.high_sacked:
                self.high_sacked = hi
        return new

    def next_seg(self) -> tuple[int, int]:
        """RFC 6675 NextSeg(): ``(segment, rule)``, or ``(-1, 0)`` when nothing may be sent."""
        if self.rack_tlp:
            return self._rack_next_seg()
        sacked = self.sacked
        start = max(self.high_rxt, self.snd_una)
        thresh = self.dup_thresh()
        high = self.high_sacked
        above = sum(1 for k in range(start + 1, high) if sacked[k])  # SACKed in (s, high)
        first_hole = -1
        for s in range(start, high):  # rules (1.a) s >= HighRxt, (1.b) s below HighSACK
            if not sacked[s]:
                if first_hole < 0:
                    first_hole = s
                if above >= thresh:  # (1.c) IsLost(s)
                    return s, 1
                break  # IsLost only weakens further up
            if s + 1 < high and sacked[s + 1]:
                above -= 1
        if self.snd_max < self.n and (
                self._flight() + self._seg_len(self.snd_max) <= self._receiver_window()):
            return self.snd_max, 2
        if self.lost_only:  # Linux: marked-lost segments and new data only
            return -1, 0
        if first_hole >= 0:
            return first_hole, 3
        if self.rescue_rxt < self.snd_una:  # rule (4), once per recovery
            for s in range(self.snd_max - 1, self.snd_una - 1, -1):
                if not sacked[s]:
                    return s, 4
        return -1, 0

    # Sending ---------------------------------------------------------------
    def send_allowed(self, now: float) -> None:
        """Send what the state allows: NextSeg in recovery, the unSACKed segments after a
        timeout, else as :class:`Sender` (FlightSize against cwnd)."""
        if self.in_recovery:
            self._recovery_send(now)
        elif self.loss_state:
            self._loss_send(now)
        else:
            super().send_allowed(now)
        if self.rack_tlp and not self._busy:  # the first window, sent from outside any event
            self._rack_timers(now, 0.0, self._sent_new)
            self._sent_new = False

    def _loss_send(self, now: float) -> None:
        sacked = self.sacked
        limit = min(self.st.cwnd, self._receiver_window())
        out = sum(self._seg_len(k) for k in range(self.snd_una, self.snd_nxt) if not sacked[k])
        while self.snd_nxt < self.n:
            s = self.snd_nxt
            if sacked[s]:  # RFC 6675 5.1: never resend SACKed data
                self.snd_nxt += 1
                continue
            length = self._seg_len(s)
            if out > 0 and (out + length > limit
                            or self._end(s + 1) - self._end(self.snd_una) > self._receiver_window()):
                break
            self._transmit(s, now)
            out += length
            self.snd_nxt += 1
            if self.snd_nxt > self.snd_max:
                self.snd_max = self.snd_nxt

    def _recovery_send(self, now: float) -> None:
        """RFC 6675 step (C): NextSeg while cwnd - pipe >= 1 SMSS."""
        while self.st.cwnd - self.pipe() >= self.mss:
            seg, rule = self.next_seg()
            if seg < 0:
                return
            self._transmit(seg, now)
            self.prr_out += 1
            if rule == 2:
                self.snd_max = self.snd_nxt = seg + 1
            elif rule == 4:
                self.rescue_rxt = self.recover
            elif seg + 1 > self.high_rxt:  # always without rack_tlp (rules 1, 3 pick s >= HighRxt)
                self.high_rxt = seg + 1

    def _prr_update(self, delivered: int) -> None:
        """RFC 6937 Section 3: cwnd for this ACK from ``delivered`` segments."""
        if self.prr == "off":
            return
        st = self.st
        mss = self.mss
        self.prr_delivered += delivered
        pipe = self.pipe()
        ssthresh = st.ssthresh / mss
        if pipe > st.ssthresh:  # proportional rate reduction
            sndcnt = math.ceil(self.prr_delivered * ssthresh / self.recover_fs - 1e-9) - self.prr_out
        else:
            limit = self.prr_delivered - self.prr_out
            if self.prr == "ssrb":
                limit = max(limit, delivered) + 1
            sndcnt = min(ssthresh - pipe / mss, limit)
        st.cwnd = pipe + max(sndcnt, 0) * mss

    # ACK processing -----------------------------------------------------------
    def on_ack(self, ack: int, now: float, tsecr: float | None = None, sack=()) -> None:
        """Process an ACK for ``ack`` segments at ``now`` (seconds) with SACK blocks
        ``sack`` (``(start, end)`` segments, end exclusive) and the echo ``tsecr``."""
        if self.rack_tlp:
            self._rack_on_ack(ack, now, tsecr, sack)
            return
        old_una = self.snd_una
        new_sacked = self._update(max(ack, old_una), sack) if sack else 0
        if ack > old_una:
            delivered = new_sacked + sum(1 for k in range(old_una, ack) if not self.sacked[k])
            self._new_sack_ack(ack, now, tsecr, delivered)
        elif ack == old_una and self.snd_max > old_una and new_sacked > 0:
            self._sack_dup_ack(now, new_sacked)

    def _new_sack_ack(self, ack: int, now: float, tsecr, delivered: int) -> None:
        acked = self._advance(ack, now, tsecr)
        if ack >= self.n_data:
            self._finish(now, ack)
            return
        if self._cumulative_ack(ack, now, acked):  # (B), (C)
            self._prr_update(delivered)
        self.send_allowed(now)

    def _cumulative_ack(self, ack: int, now: float, acked: float) -> bool:
        """The state change of an ACK that advances snd_una (both paths, with and without
        RACK-TLP): the end of loss recovery after an RTO, RFC 6675's end of recovery (A),
        growth outside recovery, and the RFC 6298 timer (5.2, 5.3). True for a partial ACK
        in recovery (the caller's PRR step)."""
        st = self.st
        partial = False
        if self.loss_state and ack > self.recover:
            self.loss_state = False
        if self.in_recovery and ack > self.recover:  # (A): end of recovery
            st.cwnd = st.ssthresh
            self.in_recovery = False
            self.dupacks = 0
            self._note("recovery_exit", now, ack)
        elif self.in_recovery:
            self._note("partial_ack", now, ack)
            partial = True
        else:
            self.dupacks = 0
            self.lt_bytes = 0
            self.rule.on_ack(st, acked)
            self._note("ack", now, ack)
        self._restart_timer(now)
        return partial

    def _sack_dup_ack(self, now: float, new_sacked: int) -> None:
        # new_sacked: segments this ACK newly SACKs (its DeliveredData)
        self._note("dupack", now, self.snd_una)
        if self.in_recovery:  # (B), (C)
            self._prr_update(new_sacked)
            self._recovery_send(now)
            return
        if self.loss_state:  # slow start after a timeout: SACKed data leaves the count
            self._loss_send(now)
            return
        self.dupacks += 1
        if self.snd_una > self.recover and (
                self.dupacks >= self.dup_thresh() or self.is_lost(self.snd_una)):
            self._enter_recovery(now, new_sacked)
        elif self.lt_lo <= self.dupacks <= self.lt_hi:
            self._limited_transmit(now)

    def _limited_transmit(self, now: float) -> None:
        """RFC 6675 Section 5 step (3): new data while cwnd - pipe >= 1 SMSS (under
        ``timer_hz`` > 0 unless Linux defers it, :meth:`_tso_defers`)."""
        self.high_rxt = self.snd_una
        burst = 0  # segments left of the GSO packet the last check let out
        while self.snd_nxt < self.n and self._can_send_new() and self.st.cwnd - self.pipe() >= self.mss:
            if self.timer_hz > 0.0:
                if burst == 0:
                    if self._tso_defers(now):
                        break
                    burst = self._tso_max_segs()
                burst -= 1
            before = self._end(self.snd_nxt)
            self._transmit(self.snd_nxt, now)
            self.snd_nxt += 1
            self.snd_max = max(self.snd_max, self.snd_nxt)
            self.lt_bytes += self._end(self.snd_nxt) - before

    def _tso_max_segs(self) -> int:
        """Segments per GSO packet, ``tcp_tso_autosize``: the pacing rate's 1/1024 s of
        bytes in segments, at least ``tcp_min_tso_segs`` = 2 (2 at RTT 0.1 s below about
        1,000 segments of cwnd); ``tcp_write_xmit`` sends one such packet per deferral test."""
        if self.srtt <= 0.0:
            return 2
        cwnd = self.st.cwnd
        ratio = 2.0 if cwnd < self.st.ssthresh / 2.0 else 1.2
        segs = int(ratio * cwnd / (self.srtt * 1024.0) / self.mss)
        return segs if segs > 2 else 2

    def _tso_defers(self, now: float) -> bool:
        """Linux defers a small send outside recovery (``net/ipv4/tcp_output.c``
        ``tcp_tso_should_defer``, called by ``tcp_write_xmit`` for an skb of more than one
        segment: here the unsent data, more than one segment left): not if the last
        transmission was more than 1 ms ago; not if the window left, limit = min(cwnd -
        in_flight, the receive window's room), holds ``max_segs`` segments (``tcp_tso_autosize``:
        the pacing rate's 1/1024 s of bytes, at least ``tcp_min_tso_segs`` = 2; the rate is
        ``tcp_pacing_ss_ratio`` = 2 or ``tcp_pacing_ca_ratio`` = 1.2 (cwnd >= ssthresh / 2)
        x cwnd / SRTT) or a third of min(cwnd, receive window) (``tcp_tso_win_divisor`` = 3);
        not if the head's ACK is due more than min(SRTT/2, 1 ms) from now (its last
        transmission + SRTT). Otherwise nothing leaves until the next ACK. The "skb not the
        tail" test never applies (the unsent data is one skb, the write being one)."""
        if self.n_data - self.snd_nxt <= 1 or self.srtt <= 0.0:
            return False
        if now - max(self.sent_at[: self.snd_max]) > 0.001:
            return False
        mss = self.mss
        cwnd = self.st.cwnd
        max_segs = self._tso_max_segs()
        rwnd = self._receiver_window()
        room = rwnd - (self._end(self.snd_nxt) - self._end(self.snd_una))
        left = cwnd - self.pipe()
        limit = left if left < room else room
        if limit >= max_segs * mss or limit >= min(rwnd, cwnd) / 3.0:
            return False
        return self.sent_at[self.snd_una] + self.srtt - now <= min(self.srtt / 2.0, 0.001)

    def _enter_recovery(self, now: float, delivered: int, seg: int | None = None) -> None:
        """RFC 6675 Section 5 step (4), PRR initialisation (RFC 6937 Section 3); the fast
        retransmission is ``seg`` (default ``snd_una``; RACK's lowest marked segment)."""
        st = self.st
        flight = self._flight() - self.lt_bytes  # LT data excluded (RFC 5681 3.2 step 2)
        st.ssthresh = self.rule.ssthresh_after_loss(st, flight)
        self.rule.on_congestion_event(st, "fast_retransmit")
        self.recover = self.snd_max - 1  # (4.1) RecoveryPoint = HighData
        self.in_recovery = True
        self.fast_retransmits += 1
        self.lt_bytes = 0
        self.rescue_rxt = -1
        self.recover_fs = self.snd_nxt - self.snd_una
        self.prr_delivered = 0
        self.prr_out = 1
        seg = self.snd_una if seg is None else seg
        self._note("fast_retransmit", now, seg)
        self._transmit(seg, now)  # (4.3)
        self.high_rxt = seg + 1
        if self.prr == "off":
            st.cwnd = st.ssthresh  # (4.2)
        else:
            # The entry ACK's own delivery (its newly SACKed segments) counts for PRR
            # (Linux passes it to tcp_cwnd_reduction in the same ACK).
            self._prr_update(delivered)
        self._recovery_send(now)  # (4.5)

    def on_rto(self, now: float) -> None:
        """RFC 6298 5.4-5.6 with RFC 6675 Section 5.1 (see the module docstring)."""
        if self.rack_tlp:
            self._busy = True
            self._sent_new = False
            self.rack_timer.cancel()
            self.tlp_end = -1  # the episode is over (Linux tcp_enter_loss)
            # The slow start after a timeout resends every unSACKed segment: RACK's marks
            # start afresh (Linux's tcp_enter_loss marks them all lost instead; same effect).
            self.lost = [False] * self.n
            self.rtx_out = [False] * self.n
        self.loss_state = True
        self.rescue_rxt = -1
        super().on_rto(now)  # go-back from snd_una through self.send_allowed -> _loss_send
        if self.rack_tlp:
            self._busy = False
            self._rack_timers(now, 0.0, False)

    # RACK-TLP (RFC 8985), with config.rack_tlp ------------------------------------
    def _init_rack_tlp(self, queue) -> None:
        n = self.n
        self.lost = [False] * n      # RACK marked the segment lost (RFC 8985 6.2 step 5)
        self.rtx_out = [False] * n   # a retransmission of it is in flight (Linux SACKED_RETRANS)
        self.rack_xmit_ts = -1.0     # RACK.xmit_ts, seconds (-1: no segment delivered yet)
        self.rack_end = 0            # RACK.end_seq, segments (one past the segment)
        self.rack_rtt = 0.0          # RACK.rtt, seconds
        self.rack_fack = 0           # RACK.fack: highest end_seq delivered, segments
        self.rack_reord = False      # RACK.reord (Section 6.2 step 3)
        self.min_rtt = math.inf      # RACK.min_RTT, seconds
        self.rack_timer = Timer(queue, "rack")
        self.rack_mode = ""          # what rack_timer is armed for: "reo" or "tlp"
        self.tlp_end = -1            # TLP.end_seq, segments (-1: no probe outstanding)
        self.tlp_is_retrans = False  # TLP.is_retrans
        self.rtt_samples = 0         # RFC 6298 / 7323 samples taken so far
        self.samples_at_probe = -1   # rtt_samples when the last probe left (-1: none yet)
        # Measures (also visible as trace events rack_lost, tlp_probe, tlp_recovery).
        self.tlp_probes = 0
        self.tlp_recoveries = 0
        self.rack_marked = 0

    def _transmit(self, seg: int, now: float) -> None:
        super()._transmit(seg, now)
        if self.rack_tlp:
            if self.tx_count[seg] > 1:
                self.rtx_out[seg] = True
            else:
                self._sent_new = True

    def _rtt_sample(self, r: float) -> None:
        if self.rack_tlp:
            self.rtt_samples += 1
            if r < self.min_rtt:  # RFC 8985 6.2 step 1
                self.min_rtt = r
        super()._rtt_sample(r)

    def _segs_sacked(self) -> int:
        sacked = self.sacked
        return sum(1 for k in range(self.snd_una, self.high_sacked) if sacked[k])

    def _rack_pipe(self) -> int:
        """SetPipe() with RACK's marks: an unSACKed segment counts once unless marked lost,
        once more while a retransmission of it is in flight (Linux ``tcp_packets_in_flight``:
        packets_out - sacked_out - lost_out + retrans_out)."""
        sacked, lost, rtx = self.sacked, self.lost, self.rtx_out
        total = 0
        for s in range(self.snd_una, self.snd_max):
            if sacked[s]:
                continue
            if not lost[s]:
                total += self._seg_len(s)
            if rtx[s]:
                total += self._seg_len(s)
        return total

    def _rack_next_seg(self) -> tuple[int, int]:
        """NextSeg() with RACK's marks: (1) the lowest segment marked lost with no
        retransmission in flight (a lost retransmission is marked again and qualifies again);
        (2) new data; (3) the lowest unSACKed segment above HighRxt below the highest SACK
        with no retransmission in flight; (4) the rescue retransmission of the highest
        unSACKed segment, once per recovery, unless that segment's retransmission is
        already in flight (RACK marks it lost again if it is lost)."""
        sacked, lost, rtx = self.sacked, self.lost, self.rtx_out
        for s in range(self.snd_una, self.snd_max):
            if lost[s] and not rtx[s] and not sacked[s]:
                return s, 1
        if self.snd_max < self.n and (
                self._flight() + self._seg_len(self.snd_max) <= self._receiver_window()):
            return self.snd_max, 2
        if self.lost_only:  # Linux: marked-lost segments and new data only
            return -1, 0
        for s in range(max(self.high_rxt, self.snd_una), self.high_sacked):
            if not sacked[s] and not rtx[s]:
                return s, 3
        if self.rescue_rxt < self.snd_una:
            for s in range(self.snd_max - 1, self.snd_una - 1, -1):
                if not sacked[s]:
                    if rtx[s]:  # its retransmission is already in flight: nothing to rescue
                        break
                    return s, 4
        return -1, 0

    def _rack_update(self, delivered: list, now: float, tsecr) -> None:
        """RFC 8985 6.2 steps 1-3 for the segments this ACK newly acknowledges or SACKs."""
        if not delivered:
            return
        sent_at, retx = self.sent_at, self.retransmitted
        for k in delivered:  # step 1: SACK RTTs of never-retransmitted segments (as Linux)
            if not retx[k]:
                r = now - sent_at[k]
                if r < self.min_rtt:
                    self.min_rtt = r
        best = -1
        best_ts = -1.0
        prior_fack = self.rack_fack
        for k in delivered:
            ts = sent_at[k]
            if retx[k]:  # step 2: not an ACK of the last (re)transmission?
                if self.rack_tsecr_test and self.timestamps and tsecr is not None and tsecr < ts:
                    continue
                if now - ts < self.min_rtt - _EPS_S:  # an RTT equal to min_RTT is valid
                    continue
            elif k + 1 < prior_fack:  # step 3: a never-resent segment below RACK.fack
                self.rack_reord = True
            if ts > best_ts or (ts == best_ts and k > best):
                best, best_ts = k, ts
            if k + 1 > self.rack_fack:
                self.rack_fack = k + 1
        if best < 0:
            return
        # RFC 8985 visits the valid segments in ascending xmit_ts order, so RACK.rtt ends
        # as the sample of the most recently sent one.
        self.rack_rtt = now - best_ts
        if best_ts > self.rack_xmit_ts or (best_ts == self.rack_xmit_ts and best + 1 > self.rack_end):
            self.rack_xmit_ts = best_ts
            self.rack_end = best + 1

    def _rack_reo_wnd(self) -> float:
        """RFC 8985 6.2 step 4 with reo_wnd_mult = 1 (no D-SACK here): 0 in recovery or
        once DupThresh segments are SACKed unless reordering was seen, else
        min(min_RTT / 4, SRTT)."""
        if not self.rack_reord and (self.in_recovery or self.loss_state
                                    or self._segs_sacked() >= self.dup_t):
            return 0.0
        w = self.min_rtt / 4.0
        return min(w, self.srtt) if self.srtt > 0.0 else w

    def _rack_detect(self, now: float) -> tuple[float, int]:
        """RFC 8985 6.2 step 5, RACK_detect_loss(): mark lost every unacknowledged segment
        sent before RACK's segment whose ``xmit_ts + RACK.rtt + reo_wnd`` has passed.
        Returns (seconds until the next one expires or 0, segments newly marked)."""
        if self.rack_xmit_ts < 0.0:
            return 0.0, 0
        reo = self._rack_reo_wnd()
        rx, rend, rrtt = self.rack_xmit_ts, self.rack_end, self.rack_rtt
        sacked, lost, rtx, sent_at = self.sacked, self.lost, self.rtx_out, self.sent_at
        timeout = 0.0
        newly = 0
        for s in range(self.snd_una, self.snd_max):
            if sacked[s] or (lost[s] and not rtx[s]):  # lost: xmit_ts = INFINITE_TS
                continue
            ts = sent_at[s]
            if not (rx > ts or (rx == ts and rend > s + 1)):  # not sent before RACK.segment
                continue
            remaining = ts + rrtt + reo - now
            if remaining <= _EPS_S:
                lost[s] = True
                rtx[s] = False  # a lost retransmission: the segment may be sent again
                newly += 1
                self.rack_marked += 1
                self._note("rack_lost", now, s)
            elif remaining > timeout and remaining != math.inf:
                timeout = remaining
        return timeout, newly

    def _tlp_open(self) -> bool:
        """Open state for TLP (RFC 8985 7.2): data outstanding, not in fast or RTO
        recovery, nothing SACKed above the cumulative ACK."""
        return (self.snd_max > self.snd_una and not self.in_recovery and not self.loss_state
                and self._segs_sacked() == 0)

    def _pto(self) -> float:
        """RFC 8985 7.2 TLP_calc_PTO() before the RTO cap, seconds."""
        if self.srtt > 0.0:
            pto = 2.0 * self.srtt
            if self.snd_nxt - self.snd_una == 1:  # FlightSize is one segment
                pto += WC_DEL_ACK_T_S
            return pto
        return 1.0

    def _rto_delta(self, now: float) -> float:
        """The RTO's remaining time that caps Linux's probe timeout, seconds
        (``tcp_schedule_loss_probe``): after new data went out (``tcp_write_xmit``,
        ``advancing_rto`` false) ``tcp_rto_delta_us``, the head's last transmission + RTO -
        now; on an ACK that sent nothing (``tcp_set_xmit_timer``) the whole RTO."""
        if self._sent_new:
            return self.sent_at[self.snd_una] + self.rto - now
        return self.rto

    def _rack_timers(self, now: float, timeout: float, rearm_tlp: bool, restart: bool = False) -> None:
        """Settle the timers at the end of an event (RFC 8985 Section 8: the reordering
        timer, the probe timer and the RTO are mutually exclusive, one is armed at a time).

        ``timeout`` > 0: RACK's reordering timer. Else, if ``rearm_tlp`` (new data sent
        or new data cumulatively acknowledged) and a probe may be scheduled: the PTO,
        capped at the RTO's expiry. Else the RTO (restarted from now if another timer was
        standing in for it, or if ``restart``: :meth:`_sack_restarts_rto`)."""
        rack, rto = self.rack_timer, self.timer
        if self.completion_s is not None or self.snd_max <= self.snd_una:
            rack.cancel()
            rto.cancel()
            return
        if timeout > 0.0:
            rto.cancel()
            rack.arm(now + reo_timer_wait(timeout, self.timer_hz))
            self.rack_mode = "reo"
            return
        if rearm_tlp and self.tlp_end < 0 and self._tlp_open() and (
                self.samples_at_probe < 0 or self.rtt_samples > self.samples_at_probe):
            if self.timer_hz > 0.0:  # Linux: in jiffies on the wheel (flat.tlp_timer_wait)
                rack.arm(now + tlp_timer_wait(self.srtt, self.snd_nxt - self.snd_una == 1,
                                              self._rto_delta(now), self.min_rto, self.timer_hz))
                rto.cancel()
                self.rack_mode = "tlp"
                return
            expire = rto.deadline if rto.armed else now + self.rto  # TCP_RTO_expire()
            rto.cancel()
            rack.arm(min(now + self._pto(), expire))
            self.rack_mode = "tlp"
            return
        if rack.armed and (self.rack_mode == "reo" or not self._tlp_open()):
            rack.cancel()  # no longer needed: the RTO takes over
        if rack.armed:  # a pending probe stands in for the RTO
            rto.cancel()
        elif restart or not rto.armed:
            rto.arm(now + rto_timer_wait(self.rto, self.timer_hz))

    def on_rack_timer(self, now: float) -> None:
        """Expiry of the RACK reordering timer (RFC 8985 6.3) or of the PTO (7.3)."""
        self._busy = True
        self._sent_new = False
        if self.rack_mode == "reo":
            timeout, newly = (0.0, 0) if self.loss_state else self._rack_detect(now)
            if newly:
                self._rack_losses(now, 0)
            self._busy = False
            self._rack_timers(now, timeout, False)
        else:
            self._tlp_send_probe(now)
            self._busy = False
            if self.snd_max > self.snd_una:  # 7.3: re-arm the RTO from now
                self.timer.arm(now + rto_timer_wait(self.rto, self.timer_hz))
        self._sent_new = False

    def _tlp_send_probe(self, now: float) -> None:
        """RFC 8985 7.3 TLP_send_probe(): one new segment if the receiver window admits it,
        else the highest segment sent again; TLP.end_seq = SND.NXT. The two conditions
        (no probe outstanding, an RTT sample since the last probe) were checked when the
        PTO was armed and cannot change before it expires."""
        self.tlp_is_retrans = False
        if self.snd_nxt < self.n and self._can_send_new():
            seg = self.snd_nxt
            self._transmit(seg, now)
            self.snd_nxt += 1
            if self.snd_nxt > self.snd_max:
                self.snd_max = self.snd_nxt
        else:
            seg = self.snd_max - 1
            self._transmit(seg, now)
            self.tlp_is_retrans = True
        self.tlp_end = self.snd_max
        self.samples_at_probe = self.rtt_samples
        self.tlp_probes += 1
        self._note("tlp_probe", now, seg)

    def _tlp_process_ack(self, ack: int, now: float, flight: int) -> None:
        """RFC 8985 7.4 TLP_process_ack(). Without D-SACK the sender cannot see that both
        the original and a retransmitted probe arrived, so a retransmitted probe whose
        TLP.end_seq is cumulatively acknowledged counts as having repaired a loss: cwnd
        is reduced as for a fast retransmit (ssthresh from ``flight``, the FlightSize
        before this ACK; cwnd = min(cwnd, ssthresh), Linux's CWR episode)."""
        if self.tlp_end < 0 or ack < self.tlp_end:
            return
        if self.tlp_is_retrans and not self.in_recovery and not self.loss_state:
            st = self.st
            st.ssthresh = self.rule.ssthresh_after_loss(st, flight)
            self.rule.on_congestion_event(st, "fast_retransmit")
            st.cwnd = min(st.cwnd, st.ssthresh)
            self.tlp_recoveries += 1
            self._note("tlp_recovery", now, ack)
        self.tlp_end = -1

    def _rack_losses(self, now: float, delivered: int) -> None:
        """RACK marked segments lost: start recovery (RFC 6675 step 4 with RACK's marks in
        place of DupThresh) or, in recovery, send what NextSeg and cwnd allow."""
        if self.in_recovery:
            self._recovery_send(now)
        elif not self.loss_state and self.snd_una > self.recover:
            self._rack_enter_recovery(now, delivered)

    def _rack_enter_recovery(self, now: float, delivered: int) -> None:
        """RFC 6675 Section 5 step (4) entered on RACK's loss marks; the fast retransmission
        is the lowest segment marked lost (usually ``snd_una``); PRR as without RACK."""
        self.tlp_end = -1  # the loss gets its cwnd reduction here (Linux tcp_init_cwnd_reduction)
        self.rescue_rxt = -1
        self.high_rxt = self.snd_una
        seg, _rule = self._rack_next_seg()
        self._enter_recovery(now, delivered, seg)

    def _rack_on_ack(self, ack: int, now: float, tsecr, sack) -> None:
        """An ACK with RACK-TLP: scoreboard, RACK update, the RFC 6298 sample and cumulative
        ACK as without RACK, TLP_process_ack, RACK loss detection (which replaces the
        DupThresh / IsLost entry test), recovery or sending, then the timers."""
        self._busy = True
        self._sent_new = False
        old_una = self.snd_una
        newly: list[int] = []
        new_sacked = self._update(max(ack, old_una), sack, newly) if sack else 0
        acked_new = ack > old_una
        restart = (self.timer_hz > 0.0 and not acked_new and new_sacked > 0
                   and self._sack_restarts_rto(newly, old_una))
        if acked_new:
            newly.extend(k for k in range(old_una, ack) if not self.sacked[k])
        delivered = len(newly)
        flight_before = self._flight()
        self._rack_update(newly, now, tsecr)
        if acked_new:
            acked = self._advance(ack, now, tsecr)
            self._tlp_process_ack(ack, now, flight_before)  # before "done": visible in traces
            if ack >= self.n_data:
                self.rack_timer.cancel()
                self._finish(now, ack)
                self._busy = False
                return
            self._cumulative_ack(ack, now, acked)  # PRR's step comes with RACK's marks below
        elif ack == old_una and self.snd_max > old_una and new_sacked > 0:
            self._note("dupack", now, old_una)
            if not self.in_recovery and not self.loss_state:
                self.dupacks += 1
        timeout, lost_now = (0.0, 0) if self.loss_state else self._rack_detect(now)
        if self.in_recovery:
            if delivered or lost_now:  # (B), (C)
                self._prr_update(delivered)
                self._recovery_send(now)
        elif lost_now and not self.loss_state and self.snd_una > self.recover:
            self._rack_enter_recovery(now, delivered)
        elif acked_new:
            self.send_allowed(now)
        elif new_sacked > 0:
            if self.loss_state:
                self._loss_send(now)
            elif self.lt_lo <= self.dupacks <= self.lt_hi:
                self._limited_transmit(now)
        self._busy = False
        restart = restart or (self.timer_hz > 0.0 and self._head_retransmitted(now))
        self._rack_timers(now, timeout, acked_new or self._sent_new, restart)
        self._sent_new = False

    def _head_retransmitted(self, now: float) -> bool:
        """Linux restarts the RTO from now when an ACK's recovery step retransmits the head
        (``net/ipv4/tcp_output.c`` ``tcp_xmit_retransmit_queue``: ``skb == rtx_head`` with
        no reordering timer pending -> ``tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)``),
        where RFC 6298 (5.1) leaves a running timer alone. The head is ``snd_una`` after
        the ACK (``tcp_ack`` retransmits after the cumulative ACK is taken). A reordering
        timer pending instead of the RTO takes the event anyway (``_rack_timers``).
        Applied under ``timer_hz`` > 0."""
        una = self.snd_una
        return una < self.n and self.tx_count[una] > 1 and self.sent_at[una] == now

    def _sack_restarts_rto(self, newly: list, head: int) -> bool:
        """Linux restarts the RTO on an ACK that SACKs, first among its newly SACKed
        never-retransmitted segments (the lowest: the kernel sorts the blocks), one sent
        before the head's last (re)transmission (``net/ipv4/tcp_input.c``
        ``tcp_clean_rtx_queue``: ``sack_rtt_us > tcp_stamp_us_delta(now, head's xmit time)``
        sets ``FLAG_SET_XMIT_TIMER``, then ``tcp_set_xmit_timer`` -> ``tcp_rearm_rto``
        unless RACK armed its reordering timer). Applied under ``timer_hz`` > 0."""
        fresh = [k for k in newly if self.tx_count[k] == 1]
        return bool(fresh) and self.sent_at[min(fresh)] < self.sent_at[head]
