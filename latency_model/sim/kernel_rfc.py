"""The ``rfc`` sender of the flat-array engine: NewReno loss recovery (RFC 6582), fast
retransmit on DupThresh duplicate ACKs (RFC 5681 3.2, the paper's tail rule, RFC 5827 Early
Retransmit) and Limited Transmit (RFC 3042), over the shared pieces of :mod:`.flat`.

The RFC section behind each rule is in docs/simulator.md's table of the senders; run
compiled or interpreted by :mod:`.kernel`.
"""

from __future__ import annotations

from .flat import *  # noqa: F403 (the layout and the shared pieces)


def rfc_new_ack(ack, tsecr, now, I, F, S, SF, PI, PF, u, QI, QF):
    """A new cumulative ACK: recovery exit (full ACK, RFC 6582 step 5 option 1) or partial
    ACK (retransmit the next hole, partial deflation), else growth; then send."""
    mss = PI[P_MSS]
    acked = advance(ack, tsecr, now, I, F, S, SF, PI, PF)
    if ack >= PI[P_N]:
        finish(now, I, F)
        if tracing(F):
            trace_event(TR_DONE, now, ack, I, F, S, PI)
        return
    if I[INREC] != 0:
        if ack > I[RECOVER]:  # full ACK
            F[CWND] = min(F[SSTH], float(max(flight(I, PI), mss) + mss))
            I[INREC] = 0
            I[DUP] = 0
            if tracing(F):
                trace_event(TR_EXIT, now, ack, I, F, S, PI)
            restart_rto(now, I, F)
        else:  # partial ACK
            transmit(ack, now, I, F, S, SF, PI, PF, u, QI, QF)
            if I[FAIL] != 0:
                return
            F[CWND] = max(F[CWND] - acked, 0.0)  # floored at 0 as Sender does (ns-3's SafeSubtraction)
            if acked >= mss:
                F[CWND] += mss
            if tracing(F):
                trace_event(TR_PARTIAL, now, ack, I, F, S, PI)
            if I[PARTIAL] == 0:  # RFC 6582 "impatient": the timer restarts once
                I[PARTIAL] = 1
                arm_rto(now, I, F)
    else:
        I[DUP] = 0
        I[LTC] = 0
        I[LTB] = 0
        grow(acked, F, PI, PF)
        if tracing(F):
            trace_event(TR_ACK, now, ack, I, F, S, PI)
        restart_rto(now, I, F)
    send_new(now, I, F, S, SF, PI, PF, u, QI, QF)


def rfc_fast_retransmit(now, I, F, S, SF, PI, PF, u, QI, QF):
    """RFC 6582 3.2 steps 2-3: ssthresh from the FlightSize without the Limited Transmit
    data (RFC 5681 3.2 step 2), ``recover``, retransmit ``snd_una``, inflate cwnd."""
    mss = PI[P_MSS]
    F[SSTH] = ssthresh_after_loss(flight(I, PI) - I[LTB], F, PI, PF)
    congestion_event(H_FAST_RETRANSMIT, F, PI, PF)
    I[RECOVER] = I[MAX] - 1
    I[INREC] = 1
    I[PARTIAL] = 0
    I[FRX] += 1
    I[LTC] = 0
    I[LTB] = 0
    if tracing(F):
        trace_event(TR_FRX, now, I[UNA], I, F, S, PI)
    transmit(I[UNA], now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    F[CWND] = F[SSTH] + I[DUP] * mss
    send_new(now, I, F, S, SF, PI, PF, u, QI, QF)


def rfc_dup_ack(now, I, F, S, SF, PI, PF, u, QI, QF):
    """A duplicate ACK: inflation in recovery (RFC 6582 step 4); else fast retransmit at
    DupThresh (outside an earlier recovery's ``recover``) or a Limited Transmit segment."""
    I[DUP] += 1
    if I[INREC] != 0:
        F[CWND] += PI[P_MSS]
        if tracing(F):
            trace_event(TR_DUPACK, now, I[UNA], I, F, S, PI)
        send_new(now, I, F, S, SF, PI, PF, u, QI, QF)
        return
    if tracing(F):
        trace_event(TR_DUPACK, now, I[UNA], I, F, S, PI)
    if I[DUP] >= dup_thresh(I, PI, PF) and I[UNA] > I[RECOVER]:
        rfc_fast_retransmit(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
        I[LTC] += 1  # RFC 3042: one more segment beyond cwnd
        sent_end = seg_end(I[NXT], PI)
        send_new(now, I, F, S, SF, PI, PF, u, QI, QF)
        I[LTB] += seg_end(I[NXT], PI) - sent_end


def rfc_on_ack(ack, tsecr, now, I, F, S, SF, PI, PF, u, QI, QF):
    """A cumulative ACK for ``ack`` segments echoing ``tsecr``."""
    if ack > I[UNA]:
        rfc_new_ack(ack, tsecr, now, I, F, S, SF, PI, PF, u, QI, QF)
    elif ack == I[UNA] and I[MAX] > I[UNA]:
        rfc_dup_ack(now, I, F, S, SF, PI, PF, u, QI, QF)


def rfc_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF):
    """Retransmission-timer expiry: :func:`.flat.timeout`, then go-back-N (the trace row
    shows the flight before it)."""
    fl = flight(I, PI)
    timeout(I, F, PI, PF)
    if tracing(F):
        trace_row(TR_TIMEOUT, now, I[UNA], fl, F)
    send_new(now, I, F, S, SF, PI, PF, u, QI, QF)
