"""ns-3.37's TCP sender (``TcpSocketBase`` + ``TcpNewReno`` + ``TcpClassicRecovery``, no SACK).

The ``ns3`` stack profile (``SimConfig(sender="ns3", rtt_sampling="ns3")``). Written from
ns-3.37's source (``src/internet/model/``; validation/ns3/NOTES.md cites file, function and
line for each point), segment by segment, in the order ns-3 runs it for every ACK:
``EstimateRtt`` -> ``TcpTxBuffer::DiscardUpTo`` -> ``ProcessAck`` -> ``SendPendingData``.

* Scoreboard (``tcp-tx-buffer.cc``): each outstanding segment has three flags, sacked
  ("Reno SACK" marks: without SACK a duplicate ACK is taken as one segment having left),
  lost and retransmitted; ``pipe = outstanding - sacked - lost + retransmitted``
  (``BytesInFlight``). ``AddRenoSack`` marks the first unmarked segment after the head;
  ``MarkHeadAsLost`` clears the head's marks and sets lost; ``DiscardUpTo`` moves a mark
  found on the new head to the next segment and marks the head lost.
* Sending (``SendPendingData``, ``AvailableWindow``, ``NextSeg``): while
  ``min(rwnd, cwnd) - pipe > 0``, the first lost, not retransmitted, not sacked segment,
  else new data while fewer than rwnd bytes are outstanding (``<``: ns-3.41's fix of the
  3.37 ``<=`` that crashes in ``TcpRateLinux::SkbSent``); silly-window rule: stop when
  less than one MSS is available and more than that remains; nothing is sent in CA_OPEN
  once the last segment (with FIN) has been sent (FIN_WAIT_1). The timer is armed by a
  transmission only when it is not pending.
* Growth (``TcpNewReno::IncreaseWindow``): per ACK, ``segs = floor(bytes acked / MSS)``
  (remainder carried); slow start adds one MSS per ACK, then, at or above ssthresh with
  segments left, one ``max(1, floor(MSS^2 / cwnd))`` bytes step; cwnd an integer of bytes.
* Duplicate ACK (``ProcessAck``, ``DupAck``): ``ack == snd_una < HighTxMark``; ignored in
  CA_LOSS; counted outside recovery (OPEN -> DISORDER); in recovery one Reno mark each;
  in DISORDER the ``dup_t``-th enters recovery if ``ack >= recover`` or ``recover`` is
  inactive, and with Limited Transmit the earlier ones add one Reno mark each (which lets
  ``SendPendingData`` send a new segment while the window allows).
* ``EnterRecovery``: a Reno mark, head lost, ``recover = HighTxMark``,
  ``ssthresh = max(2 MSS, floor((pipe + MSS) / 2))`` with the pipe after those marks,
  ``cwnd = ssthresh`` (``TcpClassicRecovery``: the inflated window is a trace value only),
  retransmit the head (the timer is not restarted).
* New ACK: in recovery below ``recover`` (partial): head lost, retransmitted, cwnd
  unchanged, timer restarted on the first partial ACK only; in CA_LOSS below ``recover``:
  growth and timer restart; otherwise DISORDER -> OPEN, the full ACK ending recovery
  sets ``cwnd = ssthresh`` and then grows once, the ACK ending CA_LOSS grows by
  ``floor((ack - recover) / MSS)`` segments (usually none).
* Timer (``EstimateRtt``, ``NewAck``, ``ReTxTimeout``): the RTT history holds one entry
  per first transmission (the SYN's first: its SYN-ACK gives the first sample); on every
  ACK only the oldest entry is looked at and gives a sample if it was never retransmitted
  and is covered; ``RTO = max(SRTT + max(G, 4 RTTVAR), MinRto)`` after a sample **and on
  every timer restart by a new ACK** (so a back-off collapses at the first new ACK, sample
  or not); on expiry: ``ssthresh = max(2 MSS, floor(pipe / 2))`` recomputed on every
  expiry, every outstanding segment lost (the receiver's out-of-order data is resent:
  go-back-N), ``recover = HighTxMark``, ``RTO = min(2 RTO, 60 s)``, history cleared,
  CA_LOSS, ``cwnd = 1 MSS``.
"""

from __future__ import annotations

from collections import deque

from .flat import rto_timer_wait
from .sender import Sender

__all__ = ["Ns3Sender", "OPEN", "DISORDER", "RECOVERY", "LOSS", "check_ns3_params"]

OPEN, DISORDER, RECOVERY, LOSS = range(4)
"""ns-3's ``TcpCongState_t`` values used here (CA_CWR does not occur without ECN)."""

_SYN_BYTES = 4
"""Bytes a SYN carries beyond the data header (ns-3's window-scale option, padded)."""


def check_ns3_params(params, config) -> None:
    """ValueError unless ``params`` and ``config`` are something ns-3's TcpNewReno can run.

    ns-3 has its own growth (TcpNewReno), Limited Transmit and timer: the standard rule
    without ABC, no tail retransmission or Early Retransmit (not in ns-3.37 without
    SACK), RFC 3042 Limited Transmit and the RFC 6298 timer.
    """
    from ..growth import StandardRule  # noqa: PLC0415

    if type(params.rule) is not StandardRule or params.rule.abc_l is not None:
        raise ValueError("sender 'ns3' runs TcpNewReno's own growth: rule must be 'standard' "
                         f"without abc_l, got {params.rule.describe()!r}")
    if params.tail_retransmit or params.early_retransmit:
        raise ValueError("sender 'ns3' has no tail retransmission (the paper's proposal) and no "
                         "Early Retransmit: use variant newreno or lt")
    if config.lt_mode != "rfc3042":
        raise ValueError(f"sender 'ns3' implements Limited Transmit as ns-3 does: lt_mode must be "
                         f"'rfc3042', got {config.lt_mode!r}")
    if config.rto_rule != "rfc6298":
        raise ValueError(f"sender 'ns3' runs ns-3's timer: rto_rule must be 'rfc6298', got "
                         f"{config.rto_rule!r}")


class Ns3Sender(Sender):
    """ns-3.37's TcpNewReno sender for one transfer (see the module docstring).

    Parameters
    ----------
    queue, link, params, config, size_bytes
        As :class:`~latency_model.sim.sender.Sender`; ``params.rule`` must be the standard
        rule (ns-3 grows cwnd itself), see :func:`check_ns3_params`.
    """

    def __init__(self, queue, link, params, config, size_bytes: int) -> None:
        check_ns3_params(params, config)
        super().__init__(queue, link, params, config, size_bytes)
        mss = self.mss
        self.st.cwnd = float(params.w0 * mss)
        self.st.ssthresh = float(params.w_ss * mss)
        self.lt = params.dup_lt is not None
        self.fin = config.fin
        self.state = OPEN
        self.recover = 0
        self.recover_active = False
        self.first_partial = True
        self.bytes_not_processed = 0
        self.sacked = [False] * self.n
        self.lost = [False] * self.n
        self.rflag = [False] * self.n
        # RTT history: [first segment, segments, send time, retransmitted]. The SYN's
        # SYN-ACK gives the first sample: the path's round trip plus two SYN serialisations.
        syn_s = 2.0 * config.serialisation_s(_SYN_BYTES)
        r0 = 2.0 * config.one_way_delay(params.rtt_s) + syn_s
        self.history: deque = deque()
        self.srtt = r0
        self.rttvar = r0 / 2.0
        self.rto = self._rto_from_estimator()

    # Scoreboard ------------------------------------------------------------------
    def _pipe(self) -> int:
        """ns-3's BytesInFlight: outstanding - sacked - lost + retransmitted, bytes."""
        b = 0
        for k in range(self.snd_una, self.snd_max):
            if (not self.sacked[k]) - self.lost[k] + self.rflag[k] > 0:
                b += self._seg_len(k)
        return b

    def _flight(self) -> int:
        return self._pipe()

    def _add_reno_sack(self) -> None:
        for k in range(self.snd_una + 1, self.snd_max):
            if not self.sacked[k]:
                self.sacked[k] = True
                return

    def _mark_head_lost(self) -> None:
        h = self.snd_una
        if h < self.snd_max:
            self.sacked[h] = False
            self.rflag[h] = False
            self.lost[h] = True

    # Timer -----------------------------------------------------------------------
    def _rto_from_estimator(self) -> float:
        k_var = 4.0 * self.rttvar
        rto = self.srtt + (k_var if k_var > self.g else self.g)
        return rto if rto > self.min_rto else self.min_rto

    def _estimate_rtt(self, ack: int, now: float) -> None:
        h = self.history
        m = 0.0
        if h:
            seq, count, sent, retx = h[0]
            if not retx and ack >= seq + count:
                m = now - sent
        while h and h[0][0] + h[0][1] <= ack:
            h.popleft()
        if m > 0.0:
            if self.rtt_log is not None:
                self.rtt_log.append((now, m, self.st.cwnd, self.st.cwnd < self.st.ssthresh))
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - m)
            self.srtt = 0.875 * self.srtt + 0.125 * m
            self.rto = self._rto_from_estimator()

    def _new_ack_timer(self, now: float, reset: bool) -> None:
        """``NewAck``: on a restart the RTO is recomputed from the estimator."""
        self.backoff = 0
        if reset:
            self.rto = self._rto_from_estimator()
            self.timer.arm(now + rto_timer_wait(self.rto, self.timer_hz))

    # Transmission ----------------------------------------------------------------
    def _transmit(self, seg: int, now: float) -> None:
        if seg < self.snd_max:  # a retransmission (seq below HighTxMark)
            self.rflag[seg] = True
            for entry in self.history:
                if entry[0] <= seg < entry[0] + entry[1]:
                    entry[3] = True
                    entry[1] = seg + 1 - entry[0]
                    break
        else:
            self.history.append([seg, 1, now, False])
        super()._transmit(seg, now)

    def _next_seg(self) -> int:
        """``NextSeg``: the first lost segment not retransmitted nor sacked, else new data."""
        for k in range(self.snd_una, self.snd_max):
            if self.lost[k] and not self.rflag[k] and not self.sacked[k]:
                return k
        if self.snd_max < self.n and self._end(self.snd_max) - self._end(self.snd_una) < self.rwnd_bytes:
            return self.snd_max
        return -1

    def send_allowed(self, now: float) -> None:
        """``SendPendingData``: send while the available window is positive."""
        while True:
            if self.state == OPEN and self.fin and self.snd_max >= self.n:
                return  # CA_OPEN in FIN_WAIT_1: nothing to send
            win = min(self.rwnd_bytes, self.st.cwnd)
            avail = win - self._pipe()
            if avail <= 0:
                return
            seg = self._next_seg()
            if seg < 0:
                return
            if avail < self.mss and self.size - seg * self.mss > avail:
                return  # silly-window avoidance
            self._transmit(seg, now)
            if seg == self.snd_max:
                self.snd_max += 1
            self.snd_nxt = self.snd_max

    # Window growth ---------------------------------------------------------------
    def _increase_window(self, segs: int) -> None:
        st = self.st
        mss = self.mss
        if st.cwnd < st.ssthresh and segs >= 1:
            st.cwnd += mss
            segs -= 1
        if st.cwnd >= st.ssthresh and segs > 0:
            st.cwnd += float(int(max(1.0, mss * mss / st.cwnd)))

    # Events ----------------------------------------------------------------------
    def on_rto(self, now: float) -> None:
        """``ReTxTimeout`` at ``now`` (seconds)."""
        st = self.st
        mss = self.mss
        self.timeouts += 1
        self.backoff += 1
        if self.backoff > self.max_backoff:
            self.max_backoff = self.backoff
        in_flight = self._pipe()
        self.dupacks = 0
        for k in range(self.snd_una, self.snd_max):
            self.sacked[k] = False
            self.rflag[k] = False
            self.lost[k] = True
        self.recover = self.snd_max
        self.recover_active = True
        self.rto = min(2.0 * self.rto, self.max_rto)
        self.history.clear()
        st.ssthresh = float(max(2 * mss, in_flight // 2))
        self.state = LOSS
        st.cwnd = float(mss)
        self._note("timeout", now, self.snd_una)
        self.send_allowed(now)

    def on_ack(self, ack: int, now: float, tsecr: float | None = None) -> None:
        """An ACK for ``ack`` segments at ``now`` (seconds): ``ReceivedAck``."""
        self._estimate_rtt(ack, now)
        old = self.snd_una
        if ack < old:
            return
        if ack == old:
            if ack < self.snd_max:
                self._dup_ack(now)
                self.send_allowed(now)
            return
        self._discard_up_to(ack)
        self._process_new_ack(ack, old, now)
        if self.completion_s is None:
            self.send_allowed(now)

    def _discard_up_to(self, ack: int) -> None:
        for k in range(self.snd_una, ack):
            self.sacked[k] = False
            self.lost[k] = False
            self.rflag[k] = False
        self.snd_una = ack
        if self.snd_nxt < ack:
            self.snd_nxt = ack
        if ack < self.snd_max and self.sacked[ack]:  # a Reno mark on the new head moves on
            self.sacked[ack] = False
            self._add_reno_sack()
            self._mark_head_lost()

    def _dup_ack(self, now: float) -> None:
        if self.state == LOSS:
            return  # dupacks are ignored after a timeout
        if self.state != RECOVERY:
            self.dupacks += 1
        if self.state == OPEN:
            self.state = DISORDER
        self._note("dupack", now, self.snd_una)
        if self.state == RECOVERY:
            self._add_reno_sack()
        elif self.state == DISORDER:
            if self.dupacks == self.dup_t and (self.snd_una >= self.recover or not self.recover_active):
                self._enter_recovery(now)
            elif self.lt:
                self._add_reno_sack()

    def _enter_recovery(self, now: float) -> None:
        st = self.st
        self.recover = self.snd_max
        self.recover_active = True
        self.state = RECOVERY
        self._add_reno_sack()
        self._mark_head_lost()
        st.ssthresh = float(max(2 * self.mss, (self._pipe() + self.mss) // 2))
        st.cwnd = st.ssthresh
        self.fast_retransmits += 1
        self._note("fast_retransmit", now, self.snd_una)
        self._transmit(self.snd_una, now)

    def _process_new_ack(self, ack: int, old: int, now: float) -> None:
        st = self.st
        mss = self.mss
        nbytes = self._end(ack) - self._end(old)
        segs = nbytes // mss
        self.bytes_not_processed += nbytes % mss
        if self.bytes_not_processed >= mss:
            segs += 1
            self.bytes_not_processed -= mss
        self.dupacks = 0
        if ack >= self.n:
            self._finish(now, ack)
            return
        if self.state == RECOVERY and ack < self.recover:  # partial ACK
            self._mark_head_lost()
            self._transmit(ack, now)
            self._new_ack_timer(now, self.first_partial)
            self.first_partial = False
            self._note("partial_ack", now, ack)
            return
        if self.state == LOSS and ack < self.recover:
            self._increase_window(segs)
            self._new_ack_timer(now, True)
            self._note("ack", now, ack)
            return
        exited = False
        if self.state == DISORDER:
            self.state = OPEN
        elif self.state == RECOVERY:
            self.first_partial = True
            segs = nbytes // mss
            self.state = OPEN
            exited = True
            self._note("recovery_exit", now, ack)
        elif self.state == LOSS:
            self.first_partial = True
            segs = (self._end(ack) - self._end(self.recover)) // mss
            self.state = OPEN
        if ack >= self.recover:
            self.recover_active = False
        if exited:
            self._new_ack_timer(now, True)
            st.cwnd = st.ssthresh
        self._increase_window(segs)
        self._new_ack_timer(now, True)
        self._note("ack", now, ack)
