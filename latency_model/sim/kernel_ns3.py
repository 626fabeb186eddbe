"""The ``ns3`` sender of the flat-array engine: ns-3.37's ``TcpSocketBase`` + ``TcpNewReno``
+ ``TcpClassicRecovery`` without SACK, over the shared pieces of :mod:`.flat`.

The rules of :mod:`~latency_model.sim.ns3` (whose docstring cites ns-3's file and function
for each), in the order ns-3 runs them: the scoreboard of Reno marks, lost and
retransmitted flags (``pipe`` recomputed from them), the congestion states OPEN / DISORDER /
RECOVERY / LOSS, ns-3's own growth, RTT history and timer. The RTT history is a FIFO of
entries ``[first segment, segments, send time, retransmitted]`` in the rows ``S_HSEQ``,
``S_HCNT``, ``S_HRETX`` and ``SF[SF_HTIME]`` with head and tail ``I[HH]``, ``I[HT]`` (an
entry is appended only for a first transmission, so ``n`` entries suffice; a timeout
clears it by moving the head to the tail). Run compiled or interpreted by :mod:`.kernel`.
"""

from __future__ import annotations

from ..accel import inline
from .flat import *  # noqa: F403 (the layout and the shared pieces)


def n3_start(I):
    """ns-3's initial state beyond :func:`.flat.reset`: ``recover`` inactive at 0, CA_OPEN."""
    I[RECOVER] = 0
    I[RACT] = 0
    I[FPART] = 1
    I[STATE] = OPEN


@inline
def n3_add_reno_sack(I, S):
    for k in range(I[UNA] + 1, I[MAX]):
        if S[S_SACKED, k] == 0:
            S[S_SACKED, k] = 1
            return


@inline
def n3_mark_head_lost(I, S):
    h = I[UNA]
    if h < I[MAX]:
        S[S_SACKED, h] = 0
        S[S_RFLAG, h] = 0
        S[S_LOST, h] = 1


# Timer -------------------------------------------------------------------------------

@inline
def n3_rto_from_estimator(F, PF):
    """ns-3's RTO: ``max(SRTT + max(G, 4 RTTVAR), MinRto)``, no upper bound."""
    rto = rto_estimate(F, PF)
    return rto if rto > PF[Q_MINRTO] else PF[Q_MINRTO]


@inline
def n3_estimate_rtt(ack, now, I, F, PF, S, SF):
    # EstimateRtt: a sample from the oldest history entry only, then the covered ones go.
    m = 0.0
    hh = I[HH]
    ht = I[HT]
    if hh < ht:
        if S[S_HRETX, hh] == 0 and ack >= S[S_HSEQ, hh] + S[S_HCNT, hh]:
            m = now - SF[SF_HTIME, hh]
    while hh < ht and S[S_HSEQ, hh] + S[S_HCNT, hh] <= ack:
        hh += 1
    I[HH] = hh
    if m > 0.0:
        smooth_rtt(m, F)
        F[RTO] = n3_rto_from_estimator(F, PF)


@inline
def n3_new_ack_timer(now, restart, I, F, PF):
    I[BACKOFF] = 0
    if restart:
        F[RTO] = n3_rto_from_estimator(F, PF)
        arm_rto(now, I, F)


# Transmission ------------------------------------------------------------------------

@inline
def n3_transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF):
    # A retransmission marks the segment and its history entry, a first transmission
    # appends an entry (UpdateRttHistory); then the shared transmission.
    if seg < I[MAX]:  # a retransmission (below HighTxMark)
        S[S_RFLAG, seg] = 1
        for j in range(I[HH], I[HT]):
            if S[S_HSEQ, j] <= seg and seg < S[S_HSEQ, j] + S[S_HCNT, j]:
                S[S_HRETX, j] = 1
                S[S_HCNT, j] = seg + 1 - S[S_HSEQ, j]
                break
    else:
        j = I[HT]
        if j == S.shape[1]:  # cannot happen: one entry per first transmission
            I[FAIL] = FAIL_QUEUE
            return
        S[S_HSEQ, j] = seg
        S[S_HCNT, j] = 1
        SF[SF_HTIME, j] = now
        S[S_HRETX, j] = 0
        I[HT] = j + 1
    transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF)


@inline
def n3_next_seg(I, PI, PF, S):
    for k in range(I[UNA], I[MAX]):
        if S[S_LOST, k] != 0 and S[S_RFLAG, k] == 0 and S[S_SACKED, k] == 0:
            return k
    if I[MAX] < PI[P_N] and seg_end(I[MAX], PI) - seg_end(I[UNA], PI) < PF[Q_RWNDB]:
        return I[MAX]
    return -1


def n3_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    while True:
        if I[STATE] == OPEN and PI[P_FIN] != 0 and I[MAX] >= n:
            return  # CA_OPEN in FIN_WAIT_1
        rw = PF[Q_RWNDB]
        cw = F[CWND]
        win = cw if cw < rw else rw  # min(rwnd_bytes, cwnd)
        avail = win - reno_pipe(I, PI, S)
        if avail <= 0:
            return
        seg = n3_next_seg(I, PI, PF, S)
        if seg < 0:
            return
        if avail < mss and size - seg * mss > avail:
            return  # silly-window avoidance
        n3_transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF)
        if I[FAIL] != 0:
            return
        if seg == I[MAX]:
            I[MAX] += 1


# Window growth -----------------------------------------------------------------------

@inline
def n3_increase_window(segs, F, PI):
    mss = PI[P_MSS]
    if F[CWND] < F[SSTH] and segs >= 1:
        F[CWND] += mss
        segs -= 1
    if F[CWND] >= F[SSTH] and segs > 0:
        x = mss * mss / F[CWND]
        F[CWND] += float(int(x if x > 1.0 else 1.0))  # max(1.0, x)


# Events ------------------------------------------------------------------------------

def n3_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF):
    mss = PI[P_MSS]
    I[TOUT] += 1
    I[BACKOFF] += 1
    if I[BACKOFF] > I[MAXBO]:
        I[MAXBO] = I[BACKOFF]
    in_flight = reno_pipe(I, PI, S)
    I[DUP] = 0
    for k in range(I[UNA], I[MAX]):
        S[S_SACKED, k] = 0
        S[S_RFLAG, k] = 0
        S[S_LOST, k] = 1
    I[RECOVER] = I[MAX]
    I[RACT] = 1
    r2 = 2.0 * F[RTO]
    F[RTO] = PF[Q_MAXRTO] if PF[Q_MAXRTO] < r2 else r2  # min(2 RTO, max_rto)
    I[HH] = I[HT]  # history cleared
    F[SSTH] = float(max(2 * mss, in_flight // 2))
    I[STATE] = LOSS_STATE
    F[CWND] = float(mss)
    if tracing(F):
        trace_event(TR_TIMEOUT, now, I[UNA], I, F, S, PI)
    n3_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)


@inline
def n3_discard_up_to(ack, I, S):
    for k in range(I[UNA], ack):
        S[S_SACKED, k] = 0
        S[S_LOST, k] = 0
        S[S_RFLAG, k] = 0
    I[UNA] = ack
    if ack < I[MAX] and S[S_SACKED, ack] != 0:  # a Reno mark on the new head moves on
        S[S_SACKED, ack] = 0
        n3_add_reno_sack(I, S)
        n3_mark_head_lost(I, S)


def n3_enter_recovery(now, I, F, S, SF, PI, PF, u, QI, QF):
    mss = PI[P_MSS]
    I[RECOVER] = I[MAX]
    I[RACT] = 1
    I[STATE] = RECOVERY
    n3_add_reno_sack(I, S)
    n3_mark_head_lost(I, S)
    F[SSTH] = float(max(2 * mss, (reno_pipe(I, PI, S) + mss) // 2))
    F[CWND] = F[SSTH]
    I[FRX] += 1
    if tracing(F):
        trace_event(TR_FRX, now, I[UNA], I, F, S, PI)
    n3_transmit(I[UNA], now, I, F, S, SF, PI, PF, u, QI, QF)


def n3_dup_ack(now, I, F, S, SF, PI, PF, u, QI, QF):
    if I[STATE] == LOSS_STATE:
        return  # dupacks are ignored after a timeout
    if I[STATE] != RECOVERY:
        I[DUP] += 1
    if I[STATE] == OPEN:
        I[STATE] = DISORDER
    if tracing(F):
        trace_event(TR_DUPACK, now, I[UNA], I, F, S, PI)
    if I[STATE] == RECOVERY:
        n3_add_reno_sack(I, S)
    elif I[STATE] == DISORDER:
        if I[DUP] == PI[P_DUPT] and (I[UNA] >= I[RECOVER] or I[RACT] == 0):
            n3_enter_recovery(now, I, F, S, SF, PI, PF, u, QI, QF)
        elif PI[P_LT] != 0:
            n3_add_reno_sack(I, S)


def n3_process_new_ack(ack, old, now, I, F, S, SF, PI, PF, u, QI, QF):
    mss = PI[P_MSS]
    nbytes = seg_end(ack, PI) - seg_end(old, PI)
    segs = nbytes // mss
    I[BNP] += nbytes % mss
    if I[BNP] >= mss:
        segs += 1
        I[BNP] -= mss
    I[DUP] = 0
    if ack >= PI[P_N]:
        F[COMPL] = now
        I[RTO_ON] = 0
        I[DONE] = 1
        if tracing(F):
            trace_event(TR_DONE, now, ack, I, F, S, PI)
        return
    if I[STATE] == RECOVERY and ack < I[RECOVER]:  # partial ACK
        n3_mark_head_lost(I, S)
        n3_transmit(ack, now, I, F, S, SF, PI, PF, u, QI, QF)
        if I[FAIL] != 0:
            return
        n3_new_ack_timer(now, I[FPART] != 0, I, F, PF)
        I[FPART] = 0
        if tracing(F):
            trace_event(TR_PARTIAL, now, ack, I, F, S, PI)
        return
    if I[STATE] == LOSS_STATE and ack < I[RECOVER]:
        n3_increase_window(segs, F, PI)
        n3_new_ack_timer(now, True, I, F, PF)
        if tracing(F):
            trace_event(TR_ACK, now, ack, I, F, S, PI)
        return
    exited = False
    if I[STATE] == DISORDER:
        I[STATE] = OPEN
    elif I[STATE] == RECOVERY:
        I[FPART] = 1
        segs = nbytes // mss
        I[STATE] = OPEN
        exited = True
        if tracing(F):
            trace_event(TR_EXIT, now, ack, I, F, S, PI)
    elif I[STATE] == LOSS_STATE:
        I[FPART] = 1
        segs = (seg_end(ack, PI) - seg_end(I[RECOVER], PI)) // mss
        I[STATE] = OPEN
    if ack >= I[RECOVER]:
        I[RACT] = 0
    if exited:  # the timer is armed twice (two sequence numbers), as the reference does
        n3_new_ack_timer(now, True, I, F, PF)
        F[CWND] = F[SSTH]
    n3_increase_window(segs, F, PI)
    n3_new_ack_timer(now, True, I, F, PF)
    if tracing(F):
        trace_event(TR_ACK, now, ack, I, F, S, PI)


def n3_on_ack(ack, tsecr, now, I, F, S, SF, PI, PF, u, QI, QF):
    n3_estimate_rtt(ack, now, I, F, PF, S, SF)
    old = I[UNA]
    if ack < old:
        return
    if ack == old:
        if ack < I[MAX]:
            n3_dup_ack(now, I, F, S, SF, PI, PF, u, QI, QF)
            if I[FAIL] != 0:
                return
            n3_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)
        return
    n3_discard_up_to(ack, I, S)
    n3_process_new_ack(ack, old, now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    if I[DONE] == 0:
        n3_send_allowed(now, I, F, S, SF, PI, PF, u, QI, QF)
