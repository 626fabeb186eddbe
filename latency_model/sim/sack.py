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
"""

from __future__ import annotations

import math

from .sender import Sender

__all__ = ["SackSender"]


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
        """RFC 6675 IsLost(seg): DupThresh or more SACKed segments above it."""
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

    def _update(self, ack: int, blocks) -> int:
        """RFC 6675 Update(): mark SACKed segments at or above ``ack``; newly SACKed count."""
        new = 0
        sacked = self.sacked
        for lo, hi in blocks:
            for k in range(max(lo, ack), hi):
                if not sacked[k]:
                    sacked[k] = True
                    new += 1
            if hi > self.high_sacked:
                self.high_sacked = hi
        return new

    def next_seg(self) -> tuple[int, int]:
        """RFC 6675 NextSeg(): ``(segment, rule)``, or ``(-1, 0)`` when nothing may be sent."""
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
            else:
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
        old_una = self.snd_una
        new_sacked = self._update(max(ack, old_una), sack) if sack else 0
        if ack > old_una:
            delivered = new_sacked + sum(1 for k in range(old_una, ack) if not self.sacked[k])
            self._new_sack_ack(ack, now, tsecr, delivered)
        elif ack == old_una and self.snd_max > old_una and new_sacked > 0:
            self._sack_dup_ack(now, new_sacked)

    def _new_sack_ack(self, ack: int, now: float, tsecr, delivered: int) -> None:
        st = self.st
        acked = self._end(ack) - self._end(self.snd_una)
        if self.timestamps or self._karn_valid(ack):
            r = now - (tsecr if self.timestamps else self.sent_at[ack - 1])
            if self.rtt_log is not None:
                self.rtt_log.append((now, r, st.cwnd, st.in_slow_start))
            self.rule.on_rtt_sample(st, r)
            self._rtt_sample(r)
        self.snd_una = ack
        if self.snd_nxt < ack:
            self.snd_nxt = ack
        self.backoff = 0
        if ack >= self.n:
            self.completion_s = now
            self.timer.cancel()
            self._note("done", now, ack)
            return
        if self.loss_state and ack > self.recover:
            self.loss_state = False
        if self.in_recovery and ack > self.recover:  # (A): end of recovery
            st.cwnd = st.ssthresh
            self.in_recovery = False
            self.dupacks = 0
            self._note("recovery_exit", now, ack)
        elif self.in_recovery:  # (B), (C)
            self._note("partial_ack", now, ack)
            self._prr_update(delivered)
        else:
            self.dupacks = 0
            self.lt_bytes = 0
            self.rule.on_ack(st, acked)
            self._note("ack", now, ack)
        if self.snd_nxt > self.snd_una:  # RFC 6298 (5.3)
            self.timer.arm(now + self.rto)
        else:  # (5.2)
            self.timer.cancel()
        self.send_allowed(now)

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
        """RFC 6675 Section 5 step (3): new data while cwnd - pipe >= 1 SMSS."""
        self.high_rxt = self.snd_una
        while self.snd_nxt < self.n and self._can_send_new() and self.st.cwnd - self.pipe() >= self.mss:
            before = self._end(self.snd_nxt)
            self._transmit(self.snd_nxt, now)
            self.snd_nxt += 1
            self.snd_max = max(self.snd_max, self.snd_nxt)
            self.lt_bytes += self._end(self.snd_nxt) - before

    def _enter_recovery(self, now: float, delivered: int) -> None:
        """RFC 6675 Section 5 step (4), PRR initialisation (RFC 6937 Section 3)."""
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
        self._note("fast_retransmit", now, self.snd_una)
        self._transmit(self.snd_una, now)  # (4.3)
        self.high_rxt = self.snd_una + 1
        if self.prr == "off":
            st.cwnd = st.ssthresh  # (4.2)
        else:
            # The entry ACK's own delivery (its newly SACKed segments) counts for PRR
            # (Linux passes it to tcp_cwnd_reduction in the same ACK).
            self._prr_update(delivered)
        self._recovery_send(now)  # (4.5)

    def on_rto(self, now: float) -> None:
        """RFC 6298 5.4-5.6 with RFC 6675 Section 5.1 (see the module docstring)."""
        self.loss_state = True
        self.rescue_rxt = -1
        super().on_rto(now)  # go-back from snd_una through self.send_allowed -> _loss_send
