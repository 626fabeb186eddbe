"""The ``sack`` sender (``SimConfig(sender="sack")``, the ``linux`` profile's) on the flat-array
engine: the RFC 6675 scoreboard and loss recovery, PRR (RFC 6937) for cwnd in recovery, the
slow start after a timeout that skips SACKed segments, and RACK-TLP (RFC 8985), over the
shared pieces of :mod:`.flat` (slow start and congestion avoidance through the growth rule's
law outside recovery, RTT sampling, the RFC 6298 timer). Run compiled or interpreted by
:mod:`.kernel`. Units: segments for sequence state (segment ``k`` holds bytes
``k MSS .. min((k+1) MSS, size) - 1``), bytes for cwnd, ssthresh and pipe.

State beyond :mod:`.flat`'s: the rows ``S_SACKED``, ``S_LOST`` (RACK's mark), ``S_RTXO`` (a
retransmission in flight) and ``S_NEW`` (the segments the current ACK newly delivers, by
position); the receiver's SACK blocks, most recently changed first, in ``RB``
(:func:`.flat.on_segment`). Below, ``snd_una``, ``snd_nxt``, ``snd_max``, ``recover``,
``high_sacked`` and ``high_rxt`` are the slots ``UNA``, ``NXT``, ``MAX``, ``RECOVER``,
``HSACK`` and ``HRXT`` of ``I``; ``rule.ssthresh_after_loss`` is the growth rule's law
(:func:`.flat.ssthresh_after_loss`).

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
retransmit itself is sent unconditionally (RFC 6675 4.3) and counts in ``prr_out``.
``prr="off"``: cwnd = ssthresh from the fast retransmit on (RFC 6675 step 4.2). At the end
of recovery cwnd = ssthresh (RFC 6937). ``SimConfig.linux_prr``: Linux's variant
(``net/ipv4/tcp_input.c`` ``tcp_cwnd_reduction``, :func:`sk_prr_linux`): RecoverFS = the
cwnd at entry, the fast retransmission inside the entering ACK's ``sndcnt`` (at least 1),
the SSRB's ``+ 1`` only on an ACK that advances ``snd_una`` and marks nothing newly lost,
no change on an ACK that delivers nothing.

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
  timer (``RK_REO``, 6.3). A marked segment is not tested again until resent; a
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

import numpy as np

from ..accel import inline
from .flat import *  # noqa: F403 (the layout and the shared pieces)

WC_DEL_ACK_T_S = 0.2
"""RFC 8985 Section 7.2 WCDelAckT: the worst-case delayed-ACK time a probe waits for when
one segment is in flight, seconds (the RFC's 200 ms, fixed: it is the longest delay the
sender must assume of *any* receiver, not this receiver's timer)."""
EPS_S = 1e-9
"""Float tolerance, seconds, of RACK's expiry test ``xmit_ts + RACK.rtt + reo_wnd - now <= 0``
(with reo_wnd = 0 and equal transmit times the sum is 0 up to rounding) and of the step 2
test ``rtt < min_RTT`` (a fixed path gives a retransmission exactly min_RTT)."""


# Scoreboard ------------------------------------------------------------

@inline
def sk_is_lost(seg, I, PI, PF, S):
    thresh = dup_thresh(I, PI, PF)
    count = 0
    for k in range(seg + 1, I[HSACK]):
        if S[S_SACKED, k] != 0:
            count += 1
            if count >= thresh:
                return True
    return False


@inline
def sk_pipe(I, PI, PF, S):
    # SetPipe(), bytes.
    if PI[P_RACK] != 0:  # RACK's marks: Linux tcp_packets_in_flight (packets_out - sacked_out - lost_out + retrans_out)
        total = 0
        for s in range(I[UNA], I[MAX]):
            if S[S_SACKED, s] != 0:
                continue
            if S[S_LOST, s] == 0:
                total += seg_len(s, PI)
            if S[S_RTXO, s] != 0:
                total += seg_len(s, PI)
        return total
    thresh = dup_thresh(I, PI, PF)
    above = 0
    total = 0
    for s in range(I[MAX] - 1, I[UNA] - 1, -1):
        if S[S_SACKED, s] != 0:
            above += 1
            continue
        length = seg_len(s, PI)
        if above < thresh:
            total += length
        if s < I[HRXT]:
            total += length
    return total


@inline
def sk_update(ack, blk, nb, I, S):
    """RFC 6675 Update(): mark SACKed the segments of the ACK's blocks at or above ``ack``;
    returns how many are newly SACKed (they are listed, by position, in row ``S_NEW``)."""
    new = 0
    for i in range(nb):
        lo = blk[2 * i]
        hi = blk[2 * i + 1]
        for k in range(lo if lo > ack else ack, hi):
            if S[S_SACKED, k] == 0:
                S[S_SACKED, k] = 1
                S[S_NEW, new] = k
                new += 1
        if hi > I[HSACK]:
            I[HSACK] = hi
    return new


def sk_next_seg(I, PI, PF, S):
    # NextSeg(): (segment, rule) or (-1, 0).
    if PI[P_RACK] != 0:
        return rk_next_seg(I, PI, PF, S)
    start = I[HRXT] if I[HRXT] > I[UNA] else I[UNA]
    thresh = dup_thresh(I, PI, PF)
    high = I[HSACK]
    above = 0
    for k in range(start + 1, high):
        if S[S_SACKED, k] != 0:
            above += 1
    first_hole = -1
    for s in range(start, high):
        if S[S_SACKED, s] == 0:
            if first_hole < 0:
                first_hole = s
            if above >= thresh:
                return s, 1
            break
        if s + 1 < high and S[S_SACKED, s + 1] != 0:
            above -= 1
    if I[MAX] < PI[P_N] and (
            flight(I, PI) + seg_len(I[MAX], PI) <= PF[Q_RWNDB]):
        return I[MAX], 2
    if PI[P_LOSTONLY] != 0:  # Linux: marked-lost segments and new data only
        return -1, 0
    if first_hole >= 0:
        return first_hole, 3
    if I[RESCUE] < I[UNA]:
        for s in range(I[MAX] - 1, I[UNA] - 1, -1):
            if S[S_SACKED, s] == 0:
                return s, 4
    return -1, 0


# Sending ----------------------------------------------------------------------------

def sk_loss_send(now, I, F, S, SF, PI, PF, u, QI, QF):
    # The slow start after a timeout resends the unSACKed segments from snd_una on, skipping
    # SACKed ones (RFC 6675 5.1: never resend SACKed data), counting only what it sent.
    n = PI[P_N]
    cw = F[CWND]
    rw = PF[Q_RWNDB]
    limit = rw if rw < cw else cw
    out = 0
    for k in range(I[UNA], I[NXT]):
        if S[S_SACKED, k] == 0:
            out += seg_len(k, PI)
    while I[NXT] < n:
        s = I[NXT]
        if S[S_SACKED, s] != 0:
            I[NXT] += 1
            continue
        length = seg_len(s, PI)
        if out > 0 and (out + length > limit
                        or seg_end(s + 1, PI) - seg_end(I[UNA], PI) > rw):
            break
        send_next(now, I, F, S, SF, PI, PF, u, QI, QF)
        if I[FAIL] != 0:
            return
        out += length


def sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF):
    # RFC 6675 step (C): NextSeg while cwnd - pipe >= 1 SMSS.
    mss = PI[P_MSS]
    while F[CWND] - sk_pipe(I, PI, PF, S) >= mss:
        seg, rule = sk_next_seg(I, PI, PF, S)
        if seg < 0:
            return
        transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF)
        if I[FAIL] != 0:
            return
        I[PRR_OUT] += 1
        if rule == 2:
            I[MAX] = seg + 1
            I[NXT] = seg + 1
        elif rule == 4:
            I[RESCUE] = I[RECOVER]
        elif seg + 1 > I[HRXT]:
            I[HRXT] = seg + 1


def sk_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF):
    if I[INREC] != 0:
        sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif I[LOSS] != 0:
        sk_loss_send(now, I, F, S, SF, PI, PF, u, QI, QF)
    else:
        send_new(now, I, F, S, SF, PI, PF, u, QI, QF)


def sk_prr_update(delivered, una_adv, newly_lost, I, F, PI, PF, S):
    # RFC 6937 Section 3: cwnd for this ACK from ``delivered`` segments (``linux_prr``: as
    # Linux, sk_prr_linux, which also reads whether the ACK advanced snd_una and how many
    # segments it newly marked lost).
    if PI[P_PRR] == PRR_OFF:
        return
    if PI[P_LNXPRR] != 0:
        sk_prr_linux(delivered, una_adv, newly_lost, I, F, PI, PF, S)
        return
    mss = PI[P_MSS]
    I[PRR_DEL] += delivered
    pipe = sk_pipe(I, PI, PF, S)
    ssthresh = F[SSTH] / mss
    if pipe > F[SSTH]:
        sndcnt = float(math.ceil(I[PRR_DEL] * ssthresh / I[RFS] - 1e-9) - I[PRR_OUT])
    else:
        limit = I[PRR_DEL] - I[PRR_OUT]
        if PI[P_PRR] == PRR_SSRB:
            limit = (limit if limit > delivered else delivered) + 1
        x = ssthresh - pipe / mss
        sndcnt = float(limit) if limit < x else x  # min(x, limit)
    if sndcnt < 0:
        sndcnt = 0.0
    F[CWND] = pipe + sndcnt * mss


def sk_prr_linux(delivered, una_adv, newly_lost, I, F, PI, PF, S):
    """PRR as Linux computes it (``net/ipv4/tcp_input.c`` ``tcp_cwnd_reduction``, called by
    ``tcp_cong_control`` after the ACK's loss marks and before ``tcp_xmit_recovery`` sends),
    in packets: nothing if the ACK delivers nothing; ``prr_delivered += delivered``;
    ``delta = ssthresh - in_flight``; if ``delta < 0``, ``sndcnt = ceil(ssthresh
    prr_delivered / prior_cwnd) - prr_out`` (``I[RFS]`` holds ``prior_cwnd``, the cwnd at
    entry, ``tcp_init_cwnd_reduction``), else ``sndcnt = min(delta, max(prr_delivered -
    prr_out, delivered) + 1)`` with the ``+ 1`` only when the ACK advanced ``snd_una``
    (``FLAG_SND_UNA_ADVANCED``) and marked nothing newly lost (``rs->losses``); then
    ``sndcnt = max(sndcnt, 1)`` while ``prr_out`` is 0 (the fast retransmission, counted
    inside ``sndcnt``), else ``max(sndcnt, 0)``; ``cwnd = in_flight + sndcnt``. RFC 6937's SSRB adds its segment on
    every ACK and counts the fast retransmission outside ``sndcnt``
    (:func:`sk_prr_update`)."""
    if delivered <= 0:
        return
    mss = PI[P_MSS]
    I[PRR_DEL] += delivered
    pipe = sk_pipe(I, PI, PF, S)
    ssthresh = int(F[SSTH] // mss)
    delta = ssthresh - (-(-pipe // mss))  # tcp_packets_in_flight, whole packets
    if delta < 0:
        sndcnt = -(-(ssthresh * I[PRR_DEL]) // I[RFS]) - I[PRR_OUT]
    else:
        sndcnt = I[PRR_DEL] - I[PRR_OUT]
        if sndcnt < delivered:
            sndcnt = delivered
        if una_adv and newly_lost == 0:
            sndcnt += 1
        if delta < sndcnt:
            sndcnt = delta
    floor = 0 if I[PRR_OUT] != 0 else 1  # Linux: sndcnt = max(sndcnt, prr_out ? 0 : 1)
    if sndcnt < floor:
        sndcnt = floor
    F[CWND] = pipe + sndcnt * mss


@inline
def sk_tso_max_segs(I, F, PI):
    """Segments per GSO packet, ``tcp_tso_autosize``: the pacing rate's 1/1024 s of bytes in
    segments, at least ``tcp_min_tso_segs`` = 2 (2 at RTT 0.1 s below about 1,000 segments of
    cwnd); ``tcp_write_xmit`` sends one such packet per deferral test."""
    if F[SRTT] <= 0.0:
        return 2
    cwnd = F[CWND]
    ratio = 2.0 if cwnd < F[SSTH] / 2.0 else 1.2
    segs = int(ratio * cwnd / (F[SRTT] * 1024.0) / PI[P_MSS])
    return segs if segs > 2 else 2


def sk_tso_defers(now, I, F, S, SF, PI, PF):
    """Linux defers a small send outside recovery (``net/ipv4/tcp_output.c``
    ``tcp_tso_should_defer``, called by ``tcp_write_xmit`` for an skb of more than one
    segment: here the unsent data, more than one segment left): not if the last transmission
    was more than 1 ms ago; not if the window left, limit = min(cwnd - in_flight, the
    receive window's room), holds ``max_segs`` segments (:func:`sk_tso_max_segs`; the pacing
    rate is ``tcp_pacing_ss_ratio`` = 2 or ``tcp_pacing_ca_ratio`` = 1.2 (cwnd >= ssthresh /
    2) x cwnd / SRTT) or a third of min(cwnd, receive window) (``tcp_tso_win_divisor`` = 3);
    not if the head's ACK is due more than min(SRTT/2, 1 ms) from now (its last transmission
    + SRTT). Otherwise nothing leaves until the next ACK. The "skb not the tail" test never
    applies (the unsent data is one skb, the write being one). Both 1 ms tests compare whole
    nanoseconds (:func:`.engine.tick`), as the kernel's integer clock does: ACKs exactly 1 ms
    apart (the SACK-compression delay) are common, and a difference of float seconds left
    the tie to the last bit of the absolute times."""
    if PI[P_NDATA] - I[NXT] <= 1 or F[SRTT] <= 0.0:
        return False
    last = SF[SF_SENT, 0]
    for k in range(1, I[MAX]):
        if SF[SF_SENT, k] > last:
            last = SF[SF_SENT, k]
    if tick(now) - tick(last) > 1_000_000:  # in whole ns, as the kernel's clock: a 1 ms gap is not "more"
        return False
    mss = PI[P_MSS]
    cwnd = F[CWND]
    max_segs = sk_tso_max_segs(I, F, PI)
    rwnd = PF[Q_RWNDB]
    room = rwnd - (seg_end(I[NXT], PI) - seg_end(I[UNA], PI))
    left = F[CWND] - sk_pipe(I, PI, PF, S)
    limit = left if left < room else room
    third = (rwnd if rwnd < cwnd else cwnd) / 3.0
    if limit >= max_segs * mss or limit >= third:
        return False
    half = F[SRTT] / 2.0
    return tick(SF[SF_SENT, I[UNA]] + F[SRTT]) - tick(now) <= tick(half if half < 0.001 else 0.001)


def sk_limited_transmit(now, I, F, S, SF, PI, PF, u, QI, QF):
    """RFC 6675 Section 5 step (3): new data while cwnd - pipe >= 1 SMSS (with ``tso_defer``
    unless Linux defers it, :func:`sk_tso_defers`)."""
    mss = PI[P_MSS]
    n = PI[P_N]
    I[HRXT] = I[UNA]
    burst = 0  # segments left of the GSO packet the last deferral test let out
    while (I[NXT] < n and can_send_new(I, PI, PF)
           and F[CWND] - sk_pipe(I, PI, PF, S) >= mss):
        if PI[P_TSODEF] != 0:
            if burst == 0:
                if sk_tso_defers(now, I, F, S, SF, PI, PF):
                    break
                burst = sk_tso_max_segs(I, F, PI)
            burst -= 1
        sent_end = seg_end(I[NXT], PI)
        send_next(now, I, F, S, SF, PI, PF, u, QI, QF)
        if I[FAIL] != 0:
            return
        I[LTB] += seg_end(I[NXT], PI) - sent_end


def sk_enter_recovery(now, seg, delivered, una_adv, newly_lost, I, F, S, SF, PI, PF, u, QI, QF):
    """RFC 6675 Section 5 step (4): ssthresh from the FlightSize without the Limited Transmit
    data (RFC 5681 3.2 step 2), RecoveryPoint, PRR's start (RFC 6937), the fast
    retransmission of ``seg`` (sent whatever cwnd, counted in ``prr_out``), then step (C).
    With ``linux_prr`` PRR's first step comes before the fast retransmission, with
    ``prr_out`` = 0 and RecoverFS = the cwnd before the reduction (:func:`sk_prr_linux`;
    ``una_adv``, ``newly_lost``: whether the ACK advanced ``snd_una``, the segments it newly
    marked lost)."""
    prior_cwnd = F[CWND]
    F[SSTH] = ssthresh_after_loss(flight(I, PI) - I[LTB], F, PI, PF)
    congestion_event(H_FAST_RETRANSMIT, F, PI, PF)
    I[RECOVER] = I[MAX] - 1
    I[INREC] = 1
    I[FRX] += 1
    I[LTB] = 0
    I[RESCUE] = -1
    I[RFS] = I[NXT] - I[UNA]
    I[PRR_DEL] = 0
    I[PRR_OUT] = 1
    linux = PI[P_LNXPRR] != 0
    if linux:  # tcp_init_cwnd_reduction, then tcp_cwnd_reduction before anything is sent
        prior = int(prior_cwnd // PI[P_MSS])
        I[RFS] = prior if prior > 1 else 1
        I[PRR_OUT] = 0
        sk_prr_linux(delivered, una_adv, newly_lost, I, F, PI, PF, S)
        I[PRR_OUT] = 1
    if tracing(F):
        trace_row(TR_FRX, now, seg, flight(I, PI), F)
    transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    I[HRXT] = seg + 1
    if PI[P_PRR] == PRR_OFF:
        F[CWND] = F[SSTH]
    elif not linux:
        sk_prr_update(delivered, una_adv, newly_lost, I, F, PI, PF, S)
    sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)


# Events ------------------------------------------------------------------------------

def sk_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF):
    """Timer expiry (RFC 6298 5.4-5.6 with RFC 6675 Section 5.1): RACK's marks start afresh
    (the slow start after a timeout resends every unSACKed segment; Linux's
    ``tcp_enter_loss`` marks them all lost instead, same effect) and the probe episode ends,
    the RTO recovery after :func:`.flat.timeout`, the slow start skipping SACKed segments."""
    if PI[P_RACK] != 0:
        I[SENT_NEW] = 0
        I[RK_ON] = 0
        I[TLP_END] = -1
        for k in range(PI[P_N]):
            S[S_LOST, k] = 0
            S[S_RTXO, k] = 0
    I[LOSS] = 1
    I[RESCUE] = -1
    fl = flight(I, PI)
    timeout(I, F, PI, PF)
    if tracing(F):
        trace_row(TR_TIMEOUT, now, I[UNA], fl, F)
    sk_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)
    if PI[P_RACK] != 0 and I[FAIL] == 0:
        rk_timers(now, 0.0, False, False, I, F, PI, PF, S, SF)


@inline
def sk_cumulative_ack(ack, now, acked, I, F, PI, PF):
    """After a new cumulative ACK (with and without RACK-TLP): the RTO recovery ends
    past ``recover``; fast recovery ends there with cwnd = ssthresh (step A); outside
    recovery, growth by the ``acked`` bytes (unless ``grow_acked_sacked``: then the caller
    grows, :func:`sk_grow_delivered`); the timer restarts (RFC 6298 (5.3)). Returns whether
    the ACK falls in recovery (steps B, C follow)."""
    if I[LOSS] != 0 and ack > I[RECOVER]:
        I[LOSS] = 0
    in_recovery = False
    if I[INREC] != 0 and ack > I[RECOVER]:  # (A): end of recovery
        F[CWND] = F[SSTH]
        I[INREC] = 0
        I[DUP] = 0
        if tracing(F):
            trace_row(TR_EXIT, now, ack, flight(I, PI), F)
    elif I[INREC] != 0:
        in_recovery = True
        if tracing(F):
            trace_row(TR_PARTIAL, now, ack, flight(I, PI), F)
    else:
        I[DUP] = 0
        I[LTB] = 0
        if PI[P_ACKSACKED] == 0:
            grow(acked, F, PI, PF)
        if tracing(F):
            trace_row(TR_ACK, now, ack, flight(I, PI), F)
    restart_rto(now, I, F)
    return in_recovery


@inline
def sk_grow_delivered(delivered, I, F, PI, PF):
    """``grow_acked_sacked``: Linux's growth on an ACK that advanced ``snd_una``, once its
    loss processing left the sender outside a cwnd reduction (``net/ipv4/tcp_input.c``
    ``tcp_ack`` -> ``tcp_cong_control``: ``tcp_may_raise_cwnd`` (``FLAG_DATA_ACKED``) ->
    ``tcp_cong_avoid(sk, ack, acked_sacked)``, run after ``tcp_fastretrans_alert``, so on
    the ACK that ends recovery too, from cwnd = ssthresh, ``tcp_end_cwnd_reduction``).
    The count is ``acked_sacked`` = ``tcp_newly_delivered``: the segments the ACK newly
    acknowledges cumulatively (not SACKed before) or SACKs, ``delivered``; passed to the
    rule as whole packets of MSS bytes (Linux counts packets)."""
    if delivered > 0 and (PI[P_CWLIM] == 0 or sk_is_cwnd_limited(I, F, PI)):
        grow(delivered * PI[P_MSS], F, PI, PF)


@inline
def sk_is_cwnd_limited(I, F, PI):
    """Linux's ``tcp_is_cwnd_limited`` (``include/net/tcp.h``), the gate at the top of
    ``tcp_reno_cong_avoid`` and ``cubictcp_cong_avoid``: the last send found the window full
    (``is_cwnd_limited``), or in slow start cwnd is below twice the most packets out in the
    current window (``max_packets_out``); state kept by :func:`sk_cwnd_validate`."""
    if I[CWL] != 0:
        return True
    mss = PI[P_MSS]
    cwnd = int(F[CWND] // mss)
    if cwnd < F[SSTH] / mss:  # tcp_in_slow_start
        return cwnd < 2 * I[MAXPO]
    return False


@inline
def sk_cwnd_validate(max_before, I, F, S, PI, PF):
    """``cwnd_limited_growth``: the end of Linux's ``tcp_write_xmit`` after a send attempt that
    found unsent data (``tcp_push_pending_frames``; ``max_before`` = ``snd_nxt`` before it):
    ``is_cwnd_limited`` = packets in flight >= cwnd, and when it sent or is cwnd-limited
    ``tcp_cwnd_validate`` restarts the window's record (``is_cwnd_limited``,
    ``max_packets_out`` = ``packets_out``, ``cwnd_usage_seq`` = ``snd_nxt``) once ``snd_una``
    has passed ``cwnd_usage_seq``, when cwnd-limited, or when not cwnd-limited and more
    packets are out than recorded (``net/ipv4/tcp_output.c``)."""
    if PI[P_CWLIM] == 0 or max_before >= PI[P_N]:
        return
    mss = PI[P_MSS]
    pipe = sk_pipe(I, PI, PF, S)
    limited = -(-pipe // mss) >= int(F[CWND] // mss)  # tcp_packets_in_flight >= tcp_snd_cwnd
    if I[MAX] == max_before and not limited:
        return
    out = I[MAX] - I[UNA]  # packets_out, SACKed ones included
    if I[UNA] >= I[CWUSEQ] or limited or (I[CWL] == 0 and out > I[MAXPO]):
        I[CWL] = 1 if limited else 0
        I[MAXPO] = out
        I[CWUSEQ] = I[MAX]


@inline
def sk_finish(ack, now, I, F, PI):
    """The ACK ``ack`` covers the last data byte: :func:`.flat.finish`, the trace's ``done``."""
    finish(now, I, F)
    if tracing(F):
        trace_row(TR_DONE, now, ack, flight(I, PI), F)


def sk_new_ack(ack, tsecr, now, delivered, I, F, S, SF, PI, PF, u, QI, QF):
    """A new cumulative ACK without RACK: the last one completes the transfer; in recovery
    PRR's step (B), then sending (C)."""
    acked = advance(ack, tsecr, now, I, F, S, SF, PI, PF)
    if ack >= PI[P_NDATA]:
        sk_finish(ack, now, I, F, PI)
        return
    if sk_cumulative_ack(ack, now, acked, I, F, PI, PF):  # (B), (C)
        sk_prr_update(delivered, True, 0, I, F, PI, PF, S)
    elif PI[P_ACKSACKED] != 0:
        sk_grow_delivered(delivered, I, F, PI, PF)
    sk_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)


def sk_dup_ack(now, new_sacked, I, F, S, SF, PI, PF, u, QI, QF):
    # A duplicate ACK (RFC 6675 Section 2: new SACK information); new_sacked, the segments
    # it newly SACKs, is its DeliveredData.
    if tracing(F):
        trace_row(TR_DUPACK, now, I[UNA], flight(I, PI), F)
    if I[INREC] != 0:
        sk_prr_update(new_sacked, False, 0, I, F, PI, PF, S)
        sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)
        return
    if I[LOSS] != 0:
        sk_loss_send(now, I, F, S, SF, PI, PF, u, QI, QF)
        return
    I[DUP] += 1
    if I[UNA] > I[RECOVER] and (
            I[DUP] >= dup_thresh(I, PI, PF) or sk_is_lost(I[UNA], I, PI, PF, S)):
        sk_enter_recovery(now, I[UNA], new_sacked, False, 0, I, F, S, SF, PI, PF, u, QI, QF)
    elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
        sk_limited_transmit(now, I, F, S, SF, PI, PF, u, QI, QF)


def sk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF):
    # An ACK for ``ack`` segments with the SACK blocks ``blk`` (``nb`` of them) and the echo ``tsecr``.
    if PI[P_RACK] != 0:
        rk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF)
        return
    old_una = I[UNA]
    max_before = I[MAX]
    new_sacked = 0
    if nb > 0:
        new_sacked = sk_update(ack if ack > old_una else old_una, blk, nb, I, S)
    if ack > old_una:
        delivered = new_sacked
        for k in range(old_una, ack):
            if S[S_SACKED, k] == 0:
                delivered += 1
        sk_new_ack(ack, tsecr, now, delivered, I, F, S, SF, PI, PF, u, QI, QF)
    elif ack == old_una and I[MAX] > old_una and new_sacked > 0:
        sk_dup_ack(now, new_sacked, I, F, S, SF, PI, PF, u, QI, QF)
    if I[DONE] == 0 and I[FAIL] == 0:
        sk_cwnd_validate(max_before, I, F, S, PI, PF)


# RACK-TLP (RFC 8985), PI[P_RACK] != 0 ------------------------------------------------

def rk_next_seg(I, PI, PF, S):
    # NextSeg() with RACK's marks: (1) the lowest segment marked lost with no retransmission
    # in flight (a lost retransmission is marked again and qualifies again); (2) new data;
    # (3) the lowest unSACKed segment above HighRxt below the highest SACK with no
    # retransmission in flight; (4) the rescue retransmission of the highest unSACKed
    # segment, once per recovery, unless its retransmission is already in flight.
    for s in range(I[UNA], I[MAX]):
        if S[S_LOST, s] != 0 and S[S_RTXO, s] == 0 and S[S_SACKED, s] == 0:
            return s, 1
    if I[MAX] < PI[P_N] and (
            flight(I, PI) + seg_len(I[MAX], PI) <= PF[Q_RWNDB]):
        return I[MAX], 2
    if PI[P_LOSTONLY] != 0:  # Linux: marked-lost segments and new data only
        return -1, 0
    for s in range(I[HRXT] if I[HRXT] > I[UNA] else I[UNA], I[HSACK]):
        if S[S_SACKED, s] == 0 and S[S_RTXO, s] == 0:
            return s, 3
    if I[RESCUE] < I[UNA]:
        for s in range(I[MAX] - 1, I[UNA] - 1, -1):
            if S[S_SACKED, s] == 0:
                if S[S_RTXO, s] != 0:
                    break
                return s, 4
    return -1, 0


@inline
def rk_segs_sacked(I, S):
    c = 0
    for k in range(I[UNA], I[HSACK]):
        if S[S_SACKED, k] != 0:
            c += 1
    return c


@inline
def rk_update(now, tsecr, I, F, S, SF, PI):
    # RFC 8985 6.2 steps 1-3 over the NNEW segments this ACK newly acknowledges or SACKs (row
    # S_NEW). RFC 8985 visits the valid segments in ascending xmit_ts order, so RACK.rtt ends
    # as the sample of the most recently sent one.
    m = I[NNEW]
    if m == 0:
        return
    for i in range(m):
        k = S[S_NEW, i]
        if S[S_RETX, k] == 0:
            r = now - SF[SF_SENT, k]
            if r < F[MIN_RTT]:
                F[MIN_RTT] = r
    best = -1
    best_ts = -1.0
    prior_fack = I[RK_FACK]
    for i in range(m):
        k = S[S_NEW, i]
        ts = SF[SF_SENT, k]
        if S[S_RETX, k] != 0:
            if PI[P_TS] != 0 and PI[P_RKTS] != 0 and tsecr < ts:
                continue
            if now - ts < F[MIN_RTT] - EPS_S:
                continue
        elif k + 1 < prior_fack:
            I[RK_REORD] = 1
        if ts > best_ts or (ts == best_ts and k > best):
            best = k
            best_ts = ts
        if k + 1 > I[RK_FACK]:
            I[RK_FACK] = k + 1
    if best < 0:
        return
    F[RK_RTT] = now - best_ts
    if best_ts > F[RK_XTS] or (best_ts == F[RK_XTS] and best + 1 > I[RK_END]):
        F[RK_XTS] = best_ts
        I[RK_END] = best + 1


@inline
def rk_reo_wnd(I, F, PI, S):
    if I[RK_REORD] == 0 and (I[INREC] != 0 or I[LOSS] != 0
                             or rk_segs_sacked(I, S) >= PI[P_DUPT]):
        return 0.0
    w = F[MIN_RTT] / 4.0
    if F[SRTT] > 0.0:
        return F[SRTT] if F[SRTT] < w else w  # min(w, srtt)
    return w


def rk_detect(now, I, F, S, SF, PI):
    # RFC 8985 6.2 step 5, RACK_detect_loss(): mark lost every unacknowledged segment sent
    # before RACK's segment whose xmit_ts + RACK.rtt + reo_wnd has passed (a marked one is
    # skipped: xmit_ts = INFINITE_TS, until resent). Returns (seconds until the next one
    # expires or 0, segments newly marked).
    if F[RK_XTS] < 0.0:
        return 0.0, 0
    reo = rk_reo_wnd(I, F, PI, S)
    rx = F[RK_XTS]
    rend = I[RK_END]
    rrtt = F[RK_RTT]
    wait = 0.0
    newly = 0
    for s in range(I[UNA], I[MAX]):
        if S[S_SACKED, s] != 0 or (S[S_LOST, s] != 0 and S[S_RTXO, s] == 0):
            continue
        ts = SF[SF_SENT, s]
        if not (rx > ts or (rx == ts and rend > s + 1)):
            continue
        remaining = ts + rrtt + reo - now
        if remaining <= EPS_S:
            S[S_LOST, s] = 1
            S[S_RTXO, s] = 0
            newly += 1
            if tracing(F):
                trace_row(TR_RACK_LOST, now, s, flight(I, PI), F)
        elif remaining > wait and remaining != np.inf:
            wait = remaining
    return wait, newly


@inline
def rk_tlp_open(I, S):
    return (I[MAX] > I[UNA] and I[INREC] == 0 and I[LOSS] == 0
            and rk_segs_sacked(I, S) == 0)


@inline
def rk_pto(I, F):
    if F[SRTT] > 0.0:
        pto = 2.0 * F[SRTT]
        if I[NXT] - I[UNA] == 1:
            pto += WC_DEL_ACK_T_S
        return pto
    return 1.0


@inline
def rk_arm(when, mode, I, F):
    F[RK_T] = when
    I[RK_SEQ] = I[SEQ]
    I[SEQ] += 1
    I[RK_ON] = 1
    I[RK_MODE] = mode


def rk_timers(now, wait, rearm_tlp, restart, I, F, PI, PF, S, SF):
    # Settle the timers at the end of an event (RFC 8985 Section 8: the reordering timer,
    # the probe timer and the RTO are mutually exclusive, one is armed at a time). wait > 0:
    # RACK's reordering timer. Else, if rearm_tlp (new data sent or new data cumulatively
    # acknowledged) and a probe may be scheduled: the PTO, capped at the RTO's expiry. Else
    # the RTO (restarted from now if another timer was standing in for it, or if restart:
    # rk_sack_restarts_rto, the head's retransmission).
    if I[DONE] != 0 or I[MAX] <= I[UNA]:
        I[RK_ON] = 0
        I[RTO_ON] = 0
        return
    if wait > 0.0:
        I[RTO_ON] = 0
        rk_arm(now + reo_timer_wait(wait, PF[Q_HZ]), RK_REO, I, F)
        return
    if rearm_tlp and I[TLP_END] < 0 and rk_tlp_open(I, S) and (
            I[SAMP_PROBE] < 0 or I[NSAMP] > I[SAMP_PROBE]):
        if PF[Q_HZ] > 0.0:  # Linux's probe in jiffies on the wheel (flat.tlp_timer_wait)
            # The RTO's remaining time caps it (tcp_schedule_loss_probe): after new data went
            # out (tcp_write_xmit, advancing_rto false) tcp_rto_delta_us, the head's last
            # transmission + RTO - now; on an ACK that sent nothing (tcp_set_xmit_timer) the RTO.
            if I[SENT_NEW] != 0:
                delta = SF[SF_SENT, I[UNA]] + F[RTO] - now
            else:
                delta = F[RTO]
            rk_arm(now + tlp_timer_wait(F[SRTT], I[NXT] - I[UNA] == 1, delta, PF[Q_MINRTO], PF[Q_HZ]),
                   RK_TLP, I, F)
            I[RTO_ON] = 0
            return
        expire = F[RTO_T] if I[RTO_ON] != 0 else now + F[RTO]
        I[RTO_ON] = 0
        t = now + rk_pto(I, F)
        rk_arm(expire if expire < t else t, RK_TLP, I, F)
        return
    if I[RK_ON] != 0 and (I[RK_MODE] == RK_REO or not rk_tlp_open(I, S)):
        I[RK_ON] = 0
    if I[RK_ON] != 0:
        I[RTO_ON] = 0
    elif restart or I[RTO_ON] == 0:
        arm_rto(now, I, F)


@inline
def rk_sack_restarts_rto(new_sacked, head, S, SF):
    """Linux restarts the RTO on an ACK that SACKs, first among its newly SACKed
    never-retransmitted segments (the ``new_sacked`` of row ``S_NEW``; the lowest: the kernel
    sorts the blocks), one sent before the head's last (re)transmission
    (``net/ipv4/tcp_input.c`` ``tcp_clean_rtx_queue``: ``sack_rtt_us >
    tcp_stamp_us_delta(now, head's xmit time)`` sets ``FLAG_SET_XMIT_TIMER``, then
    ``tcp_set_xmit_timer`` -> ``tcp_rearm_rto`` unless RACK armed its reordering timer).
    Applied with ``rto_restart``."""
    first = -1
    for i in range(new_sacked):
        k = S[S_NEW, i]
        if S[S_TXC, k] == 1 and (first < 0 or k < first):
            first = k
    return first >= 0 and SF[SF_SENT, first] < SF[SF_SENT, head]


def rk_enter_recovery(now, delivered, una_adv, newly_lost, I, F, S, SF, PI, PF, u, QI, QF):
    """Recovery entered on RACK's loss marks (RFC 6675 Section 5 step (4) with RACK's marks in
    place of DupThresh): the
    probe episode ends (the reduction happens here), the fast retransmission is the lowest
    segment marked lost (usually ``snd_una``)."""
    I[TLP_END] = -1
    I[RESCUE] = -1
    I[HRXT] = I[UNA]
    seg = rk_next_seg(I, PI, PF, S)[0]
    if seg < 0:  # cannot happen: a segment was just marked lost
        I[FAIL] = FAIL_STALL
        return
    sk_enter_recovery(now, seg, delivered, una_adv, newly_lost, I, F, S, SF, PI, PF, u, QI, QF)


def rk_on_timer(now, I, F, S, SF, PI, PF, u, QI, QF):
    # Expiry of the RACK reordering timer (RFC 8985 6.3) or of the PTO (7.3). The probe's two
    # conditions (no probe outstanding, an RTT sample since the last probe) were checked
    # when the PTO was armed and cannot change before it expires.
    n = PI[P_N]
    I[SENT_NEW] = 0
    if I[RK_MODE] == RK_REO:
        wait = 0.0
        newly = 0
        if I[LOSS] == 0:
            wait, newly = rk_detect(now, I, F, S, SF, PI)
        if newly:
            if I[INREC] != 0:
                sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)
            elif I[LOSS] == 0 and I[UNA] > I[RECOVER]:
                # Linux's tcp_rack_reo_timeout: tcp_cwnd_reduction(sk, 1, newly_lost, 0)
                rk_enter_recovery(now, PI[P_LNXPRR], False, newly, I, F, S, SF, PI, PF, u, QI, QF)
            if I[FAIL] != 0:
                return
        rk_timers(now, wait, False, False, I, F, PI, PF, S, SF)
    else:
        # TLP_send_probe (RFC 8985 7.3).
        I[TLP_RETX] = 0
        if I[NXT] < n and can_send_new(I, PI, PF):
            seg = I[NXT]
            send_next(now, I, F, S, SF, PI, PF, u, QI, QF)
            if I[FAIL] != 0:
                return
            sk_cwnd_validate(seg, I, F, S, PI, PF)  # tcp_send_loss_probe -> tcp_write_xmit
        else:
            seg = I[MAX] - 1
            transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF)
            if I[FAIL] != 0:
                return
            I[TLP_RETX] = 1
        I[TLP_END] = I[MAX]
        I[SAMP_PROBE] = I[NSAMP]
        I[TLPN] += 1
        if tracing(F):
            trace_row(TR_TLP_PROBE, now, seg, flight(I, PI), F)
        if I[MAX] > I[UNA]:
            arm_rto(now, I, F)
    I[SENT_NEW] = 0


@inline
def rk_tlp_process_ack(ack, now, fl, I, F, PI, PF):
    # RFC 8985 7.4 TLP_process_ack(). Without D-SACK the sender cannot see that both the
    # original and a retransmitted probe arrived, so a retransmitted probe whose TLP.end_seq
    # is cumulatively acknowledged counts as having repaired a loss: cwnd is reduced as for a
    # fast retransmit (ssthresh from fl, the FlightSize before this ACK; cwnd = min(cwnd,
    # ssthresh), Linux's CWR episode).
    # Returns whether cwnd was reduced (Linux's CWR state: no growth on this ACK).
    if I[TLP_END] < 0 or ack < I[TLP_END]:
        return False
    reduced = False
    if I[TLP_RETX] != 0 and I[INREC] == 0 and I[LOSS] == 0:
        reduced = True
        F[SSTH] = ssthresh_after_loss(fl, F, PI, PF)
        congestion_event(H_FAST_RETRANSMIT, F, PI, PF)
        if F[SSTH] < F[CWND]:
            F[CWND] = F[SSTH]
        if tracing(F):
            trace_row(TR_TLP_RECOVERY, now, ack, flight(I, PI), F)
    I[TLP_END] = -1
    return reduced


def rk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF):
    """An ACK with RACK-TLP: scoreboard, RACK update, the
    cumulative ACK, TLP_process_ack, RACK's loss marks (in place of DupThresh / IsLost),
    recovery or sending, then the timers."""
    I[SENT_NEW] = 0
    old_una = I[UNA]
    max_before = I[MAX]
    new_sacked = sk_update(ack if ack > old_una else old_una, blk, nb, I, S)
    m = new_sacked
    acked_new = ack > old_una
    restart = (PI[P_RTORST] != 0 and not acked_new and new_sacked > 0
               and rk_sack_restarts_rto(new_sacked, old_una, S, SF))
    if acked_new:
        for k in range(old_una, ack):
            if S[S_SACKED, k] == 0:
                S[S_NEW, m] = k
                m += 1
    I[NNEW] = m
    delivered = m
    flight_before = flight(I, PI)
    rk_update(now, tsecr, I, F, S, SF, PI)
    cwr = False
    if acked_new:
        acked = advance(ack, tsecr, now, I, F, S, SF, PI, PF)
        cwr = rk_tlp_process_ack(ack, now, flight_before, I, F, PI, PF)
        if ack >= PI[P_NDATA]:
            sk_finish(ack, now, I, F, PI)
            return
        sk_cumulative_ack(ack, now, acked, I, F, PI, PF)  # PRR's step comes with RACK's marks
    elif ack == old_una and I[MAX] > old_una and new_sacked > 0:
        if tracing(F):
            trace_row(TR_DUPACK, now, old_una, flight(I, PI), F)
        if I[INREC] == 0 and I[LOSS] == 0:
            I[DUP] += 1
    wait = 0.0
    lost_now = 0
    if I[LOSS] == 0:
        wait, lost_now = rk_detect(now, I, F, S, SF, PI)
    if I[INREC] != 0:
        if delivered or lost_now:
            sk_prr_update(delivered, acked_new, lost_now, I, F, PI, PF, S)
            sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif lost_now and I[LOSS] == 0 and I[UNA] > I[RECOVER]:
        rk_enter_recovery(now, delivered, acked_new, lost_now, I, F, S, SF, PI, PF, u, QI, QF)
    elif acked_new:
        if PI[P_ACKSACKED] != 0 and not cwr:  # after the loss marks, as tcp_cong_control
            sk_grow_delivered(delivered, I, F, PI, PF)
        sk_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif new_sacked > 0:
        if I[LOSS] != 0:
            sk_loss_send(now, I, F, S, SF, PI, PF, u, QI, QF)
        elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
            sk_limited_transmit(now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    sk_cwnd_validate(max_before, I, F, S, PI, PF)
    # Linux restarts the RTO from now when an ACK's recovery step retransmits the head
    # (tcp_output.c tcp_xmit_retransmit_queue: skb == rtx_head with no reordering timer
    # pending -> tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)), where RFC 6298 (5.1)
    # leaves a running timer alone; the head is snd_una after the ACK (tcp_ack retransmits
    # after the cumulative ACK is taken). With rto_restart.
    una = I[UNA]
    if PI[P_RTORST] != 0 and una < PI[P_N] and S[S_TXC, una] > 1 and SF[SF_SENT, una] == now:
        restart = True
    rk_timers(now, wait, acked_new or I[SENT_NEW] != 0, restart, I, F, PI, PF, S, SF)
    I[SENT_NEW] = 0
