"""The ``sack`` sender of the flat-array engine: the RFC 6675 scoreboard and loss recovery,
PRR (RFC 6937) for cwnd in recovery, the slow start after a timeout that skips SACKed
segments, and RACK-TLP (RFC 8985), over the shared pieces of :mod:`.flat`.

The same rules, in the same order, as :class:`~latency_model.sim.sack.SackSender` (whose
docstring cites each RFC section). State beyond :mod:`.flat`'s: the rows ``S_SACKED``,
``S_LOST`` (RACK's mark), ``S_RTXO`` (a retransmission in flight) and ``S_NEW`` (the segments
the current ACK newly delivers, by position); the receiver's SACK blocks, most recently
changed first, in ``RB``. Run compiled or interpreted by :mod:`.kernel`.
"""

from __future__ import annotations

import math

import numpy as np

from ..accel import inline
from .flat import *  # noqa: F403 (the layout and the shared pieces)

WC_DEL_ACK_T_S = 0.2
"""RFC 8985 Section 7.2 WCDelAckT, seconds (:data:`.sack.WC_DEL_ACK_T_S`)."""
EPS_S = 1e-9
"""RACK's float tolerance, seconds (``sack._EPS_S``)."""


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
    if PI[P_RACK] != 0:  # SackSender._rack_pipe
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
    # SackSender._loss_send: the slow start after a timeout skips SACKed segments.
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


def sk_prr_update(delivered, I, F, PI, PF, S):
    # RFC 6937 Section 3 (SackSender._prr_update).
    if PI[P_PRR] == PRR_OFF:
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


@inline
def sk_tso_max_segs(I, F, PI):
    """``SackSender._tso_max_segs``: segments per GSO packet (``tcp_tso_autosize``)."""
    if F[SRTT] <= 0.0:
        return 2
    cwnd = F[CWND]
    ratio = 2.0 if cwnd < F[SSTH] / 2.0 else 1.2
    segs = int(ratio * cwnd / (F[SRTT] * 1024.0) / PI[P_MSS])
    return segs if segs > 2 else 2


def sk_tso_defers(now, I, F, S, SF, PI, PF):
    """``SackSender._tso_defers``: Linux's ``tcp_tso_should_defer`` on a send outside recovery."""
    if PI[P_NDATA] - I[NXT] <= 1 or F[SRTT] <= 0.0:
        return False
    last = SF[SF_SENT, 0]
    for k in range(1, I[MAX]):
        if SF[SF_SENT, k] > last:
            last = SF[SF_SENT, k]
    if now - last > 0.001:
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
    return SF[SF_SENT, I[UNA]] + F[SRTT] - now <= (half if half < 0.001 else 0.001)


def sk_limited_transmit(now, I, F, S, SF, PI, PF, u, QI, QF):
    # RFC 6675 Section 5 step (3).
    mss = PI[P_MSS]
    n = PI[P_N]
    I[HRXT] = I[UNA]
    burst = 0  # SackSender._limited_transmit: segments left of the GSO packet let out
    while (I[NXT] < n and can_send_new(I, PI, PF)
           and F[CWND] - sk_pipe(I, PI, PF, S) >= mss):
        if PF[Q_HZ] > 0.0:
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


def sk_enter_recovery(now, seg, delivered, I, F, S, SF, PI, PF, u, QI, QF):
    """RFC 6675 Section 5 step (4): ssthresh from the FlightSize without the Limited Transmit
    data (RFC 5681 3.2 step 2), RecoveryPoint, PRR's start (RFC 6937), the fast
    retransmission of ``seg`` (sent whatever cwnd, counted in ``prr_out``), then step (C)."""
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
    if tracing(F):
        trace_row(TR_FRX, now, seg, flight(I, PI), F)
    transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    I[HRXT] = seg + 1
    if PI[P_PRR] == PRR_OFF:
        F[CWND] = F[SSTH]
    else:
        sk_prr_update(delivered, I, F, PI, PF, S)
    sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)


# Events ------------------------------------------------------------------------------

def sk_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF):
    """Timer expiry (``SackSender.on_rto``): RACK's marks and probe end, the RTO recovery
    (RFC 6675 5.1) after :func:`.flat.timeout`, the slow start skipping SACKed segments."""
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
    """After a new cumulative ACK (``SackSender._cumulative_ack``): the RTO recovery ends
    past ``recover``; fast recovery ends there with cwnd = ssthresh (step A); outside
    recovery, growth; the timer restarts (RFC 6298 (5.3)). Returns whether the ACK falls
    in recovery (steps B, C follow)."""
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
        grow(acked, F, PI, PF)
        if tracing(F):
            trace_row(TR_ACK, now, ack, flight(I, PI), F)
    restart_rto(now, I, F)
    return in_recovery


@inline
def sk_finish(ack, now, I, F, PI):
    """The ACK ``ack`` covers the last data byte: :func:`.flat.finish`, the trace's ``done``."""
    finish(now, I, F)
    if tracing(F):
        trace_row(TR_DONE, now, ack, flight(I, PI), F)


def sk_new_ack(ack, tsecr, now, delivered, I, F, S, SF, PI, PF, u, QI, QF):
    """A new cumulative ACK without RACK (``SackSender._new_sack_ack``)."""
    acked = advance(ack, tsecr, now, I, F, S, SF, PI, PF)
    if ack >= PI[P_NDATA]:
        sk_finish(ack, now, I, F, PI)
        return
    if sk_cumulative_ack(ack, now, acked, I, F, PI, PF):  # (B), (C)
        sk_prr_update(delivered, I, F, PI, PF, S)
    sk_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)


def sk_dup_ack(now, new_sacked, I, F, S, SF, PI, PF, u, QI, QF):
    # SackSender._sack_dup_ack.
    if tracing(F):
        trace_row(TR_DUPACK, now, I[UNA], flight(I, PI), F)
    if I[INREC] != 0:
        sk_prr_update(new_sacked, I, F, PI, PF, S)
        sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)
        return
    if I[LOSS] != 0:
        sk_loss_send(now, I, F, S, SF, PI, PF, u, QI, QF)
        return
    I[DUP] += 1
    if I[UNA] > I[RECOVER] and (
            I[DUP] >= dup_thresh(I, PI, PF) or sk_is_lost(I[UNA], I, PI, PF, S)):
        sk_enter_recovery(now, I[UNA], new_sacked, I, F, S, SF, PI, PF, u, QI, QF)
    elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
        sk_limited_transmit(now, I, F, S, SF, PI, PF, u, QI, QF)


def sk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF):
    # SackSender.on_ack.
    if PI[P_RACK] != 0:
        rk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF)
        return
    old_una = I[UNA]
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


# RACK-TLP (RFC 8985), PI[P_RACK] != 0 ------------------------------------------------

def rk_next_seg(I, PI, PF, S):
    # SackSender._rack_next_seg.
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
    # SackSender._rack_update over the NNEW segments in row S_NEW (RFC 8985 6.2 steps 1-3).
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
    # SackSender._rack_detect: (seconds until the next expiry or 0, segments newly marked).
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
    # SackSender._rack_timers.
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
        if PF[Q_HZ] > 0.0:  # SackSender._rack_timers: Linux's probe in jiffies on the wheel
            if I[SENT_NEW] != 0:  # SackSender._rto_delta
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
    """``SackSender._sack_restarts_rto`` over the ``new_sacked`` segments in row ``S_NEW``."""
    first = -1
    for i in range(new_sacked):
        k = S[S_NEW, i]
        if S[S_TXC, k] == 1 and (first < 0 or k < first):
            first = k
    return first >= 0 and SF[SF_SENT, first] < SF[SF_SENT, head]


def rk_enter_recovery(now, delivered, I, F, S, SF, PI, PF, u, QI, QF):
    """Recovery entered on RACK's loss marks (``SackSender._rack_enter_recovery``): the
    probe episode ends (the reduction happens here), the fast retransmission is the lowest
    segment marked lost (usually ``snd_una``)."""
    I[TLP_END] = -1
    I[RESCUE] = -1
    I[HRXT] = I[UNA]
    seg = rk_next_seg(I, PI, PF, S)[0]
    if seg < 0:  # cannot happen: a segment was just marked lost
        I[FAIL] = FAIL_STALL
        return
    sk_enter_recovery(now, seg, delivered, I, F, S, SF, PI, PF, u, QI, QF)


def rk_on_timer(now, I, F, S, SF, PI, PF, u, QI, QF):
    # SackSender.on_rack_timer: the reordering timer or the probe timer expired.
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
                rk_enter_recovery(now, 0, I, F, S, SF, PI, PF, u, QI, QF)
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
    # SackSender._tlp_process_ack.
    if I[TLP_END] < 0 or ack < I[TLP_END]:
        return
    if I[TLP_RETX] != 0 and I[INREC] == 0 and I[LOSS] == 0:
        F[SSTH] = ssthresh_after_loss(fl, F, PI, PF)
        congestion_event(H_FAST_RETRANSMIT, F, PI, PF)
        if F[SSTH] < F[CWND]:
            F[CWND] = F[SSTH]
        if tracing(F):
            trace_row(TR_TLP_RECOVERY, now, ack, flight(I, PI), F)
    I[TLP_END] = -1


def rk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF):
    """An ACK with RACK-TLP (``SackSender._rack_on_ack``): scoreboard, RACK update, the
    cumulative ACK, TLP_process_ack, RACK's loss marks (in place of DupThresh / IsLost),
    recovery or sending, then the timers."""
    I[SENT_NEW] = 0
    old_una = I[UNA]
    new_sacked = sk_update(ack if ack > old_una else old_una, blk, nb, I, S)
    m = new_sacked
    acked_new = ack > old_una
    restart = (PF[Q_HZ] > 0.0 and not acked_new and new_sacked > 0
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
    if acked_new:
        acked = advance(ack, tsecr, now, I, F, S, SF, PI, PF)
        rk_tlp_process_ack(ack, now, flight_before, I, F, PI, PF)
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
            sk_prr_update(delivered, I, F, PI, PF, S)
            sk_recovery_send(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif lost_now and I[LOSS] == 0 and I[UNA] > I[RECOVER]:
        rk_enter_recovery(now, delivered, I, F, S, SF, PI, PF, u, QI, QF)
    elif acked_new:
        sk_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif new_sacked > 0:
        if I[LOSS] != 0:
            sk_loss_send(now, I, F, S, SF, PI, PF, u, QI, QF)
        elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
            sk_limited_transmit(now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    una = I[UNA]  # SackSender._head_retransmitted
    if PF[Q_HZ] > 0.0 and una < PI[P_N] and S[S_TXC, una] > 1 and SF[SF_SENT, una] == now:
        restart = True
    rk_timers(now, wait, acked_new or I[SENT_NEW] != 0, restart, I, F, PI, PF, S, SF)
    I[SENT_NEW] = 0
