"""The flat-array engine's shared pieces: state layout, link, receiver, timers, RTT estimator.

The compiled Monte Carlo engine (:mod:`.kernel`) runs one transfer at a time over a handful
of flat arrays, so that numba can compile it; without numba the very same functions run
interpreted. This module holds what every sender of that engine shares, written once:

* the state layout: named slots of the integer and float state (``I[UNA]``, ``F[CWND]``),
  of the parameters (``PI[P_MSS]``, ``PF[Q_DELAY]``), per-segment rows (``S[S_TXC, seg]``,
  ``SF[SF_SENT, seg]``) and the two FIFO link queues (``QI``, ``QF``);
* transmission over the link (:func:`transmit`: serialisation at rate C, the loss draw,
  arrival after the one-way delay; RFC 6298 (5.1): the timer starts if not running);
* the receiver (:func:`on_segment`: delayed ACKs every ``b`` in-order segments, a timer,
  immediate ACKs out of order and on filling a gap, quick ACKs, FIN, RFC 7323 TS.Recent,
  RFC 2018 SACK blocks);
* the RFC 6298 estimator (:func:`rtt_sample`) with Karn's rule (:func:`karn_valid`);
* the RFC 5681 / RFC 6298 timeout (:func:`timeout`), the growth rule's law
  (:func:`grow`, :func:`ssthresh_after_loss`, :func:`congestion_event`, :func:`rtt_to_rule`:
  every rule of :data:`~latency_model.growth.RULES`, through
  :func:`~latency_model.growth.laws.rule_law`), the send loop FlightSize against cwnd
  (:func:`send_new`), the DupThresh of the paper's tail rule and RFC 5827 Early Retransmit (:func:`dup_thresh`);
* event selection (:func:`next_event`): data and ACK arrivals are FIFO queues (a FIFO link
  and a constant delay keep each stream in time order) and the timers are scalars, each
  carrying the ``seq`` it was given when armed; the earliest ``(tick, seq)`` runs first
  (:func:`before`: a clock of whole nanoseconds, FIFO among equal ticks, as ns-3 orders its events).

The senders' own mechanisms are in :mod:`.kernel_rfc` (RFC 5681/6582/3042/5827),
:mod:`.kernel_ns3` (ns-3.37's TcpNewReno) and :mod:`.kernel_sack` (RFC 6675, PRR, RACK-TLP).

The Monte Carlo batch (:func:`.kernel.run_batch`) and one transfer of
:func:`~latency_model.sim.run_transfer` (:func:`.kernel.run_single`) run these same
functions, compiled or interpreted, and give the same bits: the uniforms are the first block
of ``Generator(PCG64(child))`` (:func:`~._seeding.block_size` of them), consumed
in sending order (one per data transmission when p > 0, one per ACK when the ACK loss
probability is > 0); numba compiles without fast-math, so every floating-point expression
is evaluated as written. A run that needs more uniforms than its block or more queue space
sets ``I[FAIL]`` and the caller runs it again from the start with more.
"""

from __future__ import annotations

import math

import numpy as np

from ..accel import inline
# The hooks of a rule's law, renamed: LOSS is also a slot of the sack sender's state here.
from ..growth.base import ACK as H_ACK, FAST_RETRANSMIT as H_FAST_RETRANSMIT, LOSS as H_LOSS, RTT as H_RTT
from ..growth.base import TIMEOUT as H_TIMEOUT
from ..growth.laws import N_PARAMS, N_STATE, rule_law


def _slots(names: str) -> tuple[int, ...]:
    return tuple(range(len(names.split())))


# Integer state I: sequence state (segments), recovery state, counters, receiver, link queues.
(UNA, NXT, MAX, RECOVER, INREC, DUP, BACKOFF, RETX, TOUT, MAXBO, FRX, FIRSTL, LOSTD, LOSTA,
 UI, SEQ, RTO_ON, RTO_SEQ, DL_ON, DL_SEQ, RK_ON, RK_SEQ,
 RNXT, NBUF, PEND, QUICK, LASTACK, NBLK, DQH, DQN, AQH, AQN, DONE, FAIL,
 # rfc: partial ACK seen, Limited Transmit credit and bytes
 PARTIAL, LTC, LTB,
 # ns3: congestion state, recover active, first partial ACK, bytes not processed, RTT history
 STATE, RACT, FPART, BNP, HH, HT,
 # sack: RFC 6675, PRR, RACK-TLP
 LOSS, HSACK, HRXT, RESCUE, PRR_DEL, PRR_OUT, RFS, RK_END, RK_FACK, RK_REORD, RK_MODE,
 TLP_END, TLP_RETX, NSAMP, SAMP_PROBE, SENT_NEW, NNEW) = _slots(
    "UNA NXT MAX RECOVER INREC DUP BACKOFF RETX TOUT MAXBO FRX FIRSTL LOSTD LOSTA "
    "UI SEQ RTO_ON RTO_SEQ DL_ON DL_SEQ RK_ON RK_SEQ "
    "RNXT NBUF PEND QUICK LASTACK NBLK DQH DQN AQH AQN DONE FAIL PARTIAL LTC LTB "
    "STATE RACT FPART BNP HH HT "
    "LOSS HSACK HRXT RESCUE PRR_DEL PRR_OUT RFS RK_END RK_FACK RK_REORD RK_MODE "
    "TLP_END TLP_RETX NSAMP SAMP_PROBE SENT_NEW NNEW")
# Receiver, Linux's SACK compression (on_segment): ACKs held, duplicate ACKs sent at the
# rcv_nxt CRNXT (tcp_sock compressed_ack, dup_ack_counter, compressed_ack_rcv_nxt).
COMPR, DUPACKS, CRNXT = NNEW + 1, NNEW + 2, NNEW + 3
FDROP = CRNXT + 1  # data transmissions before the first the path dropped (-1: none yet)
BLH, BLN = FDROP + 1, FDROP + 2  # the drop-tail buffer's backlog: head and length in QF[QF_BL]
TLPN = BLN + 1  # sack with RACK-TLP: tail loss probes sent (TransferResult.tlp_probes)
# sack, cwnd_limited_growth: Linux's tcp_cwnd_validate state (tcp_sock is_cwnd_limited,
# max_packets_out, cwnd_usage_seq), segments.
CWL, MAXPO, CWUSEQ = TLPN + 1, TLPN + 2, TLPN + 3
N_IS = CWUSEQ + 1
# Float state F: window (bytes), timers and estimator (seconds), link, measures, RACK.
# Its first N_STATE slots are the growth rule's state vector (growth.laws): cwnd, ssthresh
# and the bytes counted by RFC 3465 (slots 0-2, as in every rule's law), then the rule's own.
CWND, SSTH, BACKED = range(3)
(RTO, SRTT, RTTVAR, BUSY, RTO_T, DL_T, RK_T, DELIV, COMPL, TSREC,
 RK_XTS, RK_RTT, MIN_RTT, ABUSY, TIMER_HZ) = (N_STATE + k for k in _slots(
    "RTO SRTT RTTVAR BUSY RTO_T DL_T RK_T DELIV COMPL TSREC RK_XTS RK_RTT MIN_RTT ABUSY TIMER_HZ"))
N_FS = TIMER_HZ + 1
# Integer parameters PI.
(P_SENDER, P_N, P_SIZE, P_MSS, P_B, P_DUPT, P_LTLO, P_LTHI, P_LT, P_TAIL, P_ER, P_FIXED, P_RULE,
 P_HDR, P_QUICK, P_FIN, P_TS, P_SACK, P_PRR, P_RACK, P_NSAMP0, P_NDATA, P_RKTS, P_LOSTONLY,
 P_RULE_HOOKS) = _slots(
    "P_SENDER P_N P_SIZE P_MSS P_B P_DUPT P_LTLO P_LTHI P_LT P_TAIL P_ER P_FIXED P_RULE "
    "P_HDR P_QUICK P_FIN P_TS P_SACK P_PRR P_RACK P_NSAMP0 P_NDATA P_RKTS P_LOSTONLY P_RULE_HOOKS")
P_QLIM = P_RULE_HOOKS + 1  # the drop-tail buffer's packets (SimConfig.queue_packets), -1: none
# Linux mechanisms of the sack sender's path, 0 or 1 (SimConfig fields of the same names):
# sack_compression, quickack_on_data, tso_defer, rto_restart, grow_acked_sacked,
# cwnd_limited_growth, linux_prr.
P_COMPRESS, P_QKDATA, P_TSODEF, P_RTORST, P_ACKSACKED, P_CWLIM, P_LNXPRR = (P_QLIM + k for k in range(1, 8))
# 1: no congestion window in the send loop (NGWA's RFC 793 modes, kernel_multi), 0 otherwise.
P_NOCWND = P_LNXPRR + 1
N_PI = P_NOCWND + 1
# P_RULE: the growth rule's law (growth.laws.rule_index); P_RULE_HOOKS: bit 1 << h set for each
# hook h besides ACK and LOSS that the law acts on (GrowthRule.law_hooks).
# P_N counts the sequence slots: the P_NDATA data segments and, with a bare FIN, one more.
# Float parameters PF: the growth rule's parameters R in the first N_PARAMS slots (the
# vector its law reads), then the sender's, then the initial state vector of the rule (all
# N_STATE slots: cwnd, ssthresh and bytes counted first).
(Q_RWNDB, Q_MINRTO, Q_MAXRTO, Q_G, Q_DELACK, Q_RATE, Q_DELAY, Q_P, Q_PACK,
 Q_RTO0, Q_SRTT0, Q_RTTVAR0, Q_MINRTT0, Q_ACKSER, Q_HZ) = (N_PARAMS + k for k in _slots(
    "Q_RWNDB Q_MINRTO Q_MAXRTO Q_G Q_DELACK Q_RATE Q_DELAY Q_P Q_PACK "
    "Q_RTO0 Q_SRTT0 Q_RTTVAR0 Q_MINRTT0 Q_ACKSER Q_HZ"))
Q_STATE0 = Q_HZ + 1
Q_CWND0, Q_SSTH0 = Q_STATE0 + CWND, Q_STATE0 + SSTH
N_PF = Q_STATE0 + N_STATE
# Senders (P_SENDER), PRR modes (P_PRR), ns-3 congestion states (STATE), RACK timer modes.
SENDER_RFC, SENDER_NS3, SENDER_SACK = range(3)
PRR_SSRB, PRR_CRB, PRR_OFF = range(3)
OPEN, DISORDER, RECOVERY, LOSS_STATE = range(4)
RK_NONE, RK_REO, RK_TLP = range(3)
# Per-segment integer rows S: transmissions, ever retransmitted, the receiver's out-of-order
# buffer; sack: SACKed, RACK's lost mark, retransmission in flight, the segments an ACK newly
# delivers (by position); ns3: Reno marks, lost, retransmitted, RTT history by entry.
(S_TXC, S_RETX, S_RBUF, S_SACKED, S_LOST, S_RTXO, S_NEW, S_RFLAG, S_HSEQ, S_HCNT,
 S_HRETX) = _slots("S_TXC S_RETX S_RBUF S_SACKED S_LOST S_RTXO S_NEW S_RFLAG S_HSEQ S_HCNT S_HRETX")
S_DECIDED = S_HRETX + 1  # scripted losses: transmissions past the drop-tail buffer
N_S = S_DECIDED + 1
# Per-segment float rows SF: last send time; ns3: send time of history entry.
SF_SENT, SF_HTIME = range(2)
N_SF = 2
# Rows of the FIFO queues QI (int64) and QF (float64): data seq / segment, ACK seq / number /
# blocks (count, then lo, hi x 3); data arrival time / TSval, ACK arrival time / TSecr.
QI_DS, QI_DG, QI_AS, QI_AA, QI_AN, QI_B0 = range(6)
N_QI = QI_B0 + 6
# QF_BL: the drop-tail buffer's backlog (end-of-serialisation times), a FIFO of its own.
QF_DT, QF_DTS, QF_AT, QF_AE, QF_BL = range(5)
N_QF = 5
# Events of next_event.
EV_NONE, EV_DATA, EV_ACK, EV_RTO, EV_DELACK, EV_RACK = range(-1, 5)
# Scripted losses (run_transfer's ``drops``): PI may continue past N_PI with one count per
# segment, PI[P_DROPS + k] = the first transmissions of segment k the path drops; the
# random draws are then off (PF[Q_P] = PF[Q_PACK] = 0).
P_DROPS = N_PI
# The event trace (run_transfer's ``trace``): F may continue past N_FS with the trace
# buffer, F[TR_COUNT] rows written (also those that did not fit: the caller grows the
# buffer and runs again), F[TR_FLIGHT] the sender's flight during a receiver event, then
# rows of TR_COLS floats: time, event (TRACE_EVENTS), segment, cwnd, ssthresh, flight, RTO.
TR_COUNT, TR_FLIGHT, TR_ROWS = N_FS, N_FS + 1, N_FS + 2
TR_COLS = 7
TRACE_EVENTS = ("send", "retransmit", "ack", "dupack", "fast_retransmit", "partial_ack", "recovery_exit",
                "timeout", "done", "data_arrival", "ack_sent", "rack_lost", "tlp_probe", "tlp_recovery")
(TR_SEND, TR_RETX, TR_ACK, TR_DUPACK, TR_FRX, TR_PARTIAL, TR_EXIT, TR_TIMEOUT, TR_DONE, TR_ARRIVAL,
 TR_ACK_SENT, TR_RACK_LOST, TR_TLP_PROBE, TR_TLP_RECOVERY) = range(len(TRACE_EVENTS))

TCP_TIMEOUT_MIN_S = 0.002
"""Linux include/net/tcp.h ``TCP_TIMEOUT_MIN_US`` (2 ms), added to RACK's wait before it is
rounded to jiffies (:func:`reo_timer_wait`)."""

COMP_SACK_NR = 44
"""Linux sysctl ``net.ipv4.tcp_comp_sack_nr`` (default 44): at most this many ACKs are held
by SACK compression (``net/ipv4/tcp_input.c`` ``__tcp_ack_snd_check``)."""
COMP_SACK_DELAY_S = 0.001
"""Linux sysctl ``net.ipv4.tcp_comp_sack_delay_ns`` (default 1 ms): the compressed-ACK timer's
longest wait."""
FASTRETRANS_THRESH = 3
"""Linux include/net/tcp.h ``TCP_FASTRETRANS_THRESH``: duplicate ACKs sent at once at one
``rcv_nxt`` before SACK compression holds the next ones."""


@inline
def comp_sack_delay(rtt_s):
    """The compressed-ACK timer of ``__tcp_ack_snd_check``, seconds: ``min(tcp_comp_sack_delay_ns,
    RTT/20)`` (5% of the receiver's RTT estimate, ``rtt_s``). The hrtimer's slack
    (``tcp_comp_sack_slack_ns``, 100 us) is left out."""
    d = rtt_s / 20.0
    return COMP_SACK_DELAY_S if COMP_SACK_DELAY_S < d else d


FAIL_UNIFORMS = 1
FAIL_QUEUE = 2
FAIL_STALL = 3


# Timers as a kernel runs them ------------------------------------------------------------

WHEEL_LVL_START1 = 63
"""Linux ``kernel/time/timer.c`` ``LVL_START(1)`` = (``LVL_SIZE`` - 1) << 0: a timer of fewer
jiffies goes on the wheel's level 0 (granularity one jiffy)."""
WHEEL_LVL_CLK_SHIFT = 3
"""``kernel/time/timer.c`` ``LVL_CLK_SHIFT``: each level is 8 times coarser than the one below."""
WHEEL_LVL_DEPTH = 9
"""``kernel/time/timer.c`` ``LVL_DEPTH`` for ``CONFIG_HZ`` > 100."""


@inline
def wheel_wait(jiffies, hz):
    """Seconds from arming a kernel timer of ``jiffies`` jiffies (``CONFIG_HZ`` = hz) to its
    expiry on the timer wheel, the arming moment's phase at its mean.

    ``kernel/time/timer.c`` ``calc_wheel_index``: a timer with delta = ``jiffies`` goes on
    level ``lvl``, the first with delta < ``LVL_START(lvl + 1)`` = 63·8^lvl; ``calc_index``
    rounds its expiry E = (arming jiffy) + J up to the level's granularity G = 8^lvl,
    ``(E + G) >> LVL_SHIFT(lvl)``: it fires at the first multiple of G strictly after E,
    1 to G jiffies after E. Arming at phase φ into its jiffy, the wait is (J + L − φ)
    jiffies, L in 1..G. With E mod G and φ uniform (docs/simulator.md: the mean, no random
    draw), the mean is J + (G + 1)/2 − 1/2 = J + G/2 jiffies: (J + 1/2) at level 0 (J < 63),
    (J + 4) at level 1 (63 <= J < 504)."""
    gran = 1.0
    start = WHEEL_LVL_START1
    lvl = 0
    while jiffies >= start and lvl < WHEEL_LVL_DEPTH - 1:
        gran *= 1 << WHEEL_LVL_CLK_SHIFT
        start *= 1 << WHEEL_LVL_CLK_SHIFT
        lvl += 1
    return (jiffies + 0.5 * gran) / hz


@inline
def rto_jiffies(rto, hz):
    """The RTO as the kernel stores it, seconds: ``hz`` = 0, ``rto`` itself; else
    usecs_to_jiffies(``rto``) (``include/net/tcp.h`` ``__tcp_set_rto``: usecs_to_jiffies(SRTT
    + RTTVAR), rounding up) in seconds. The 1e-6 jiffy of slack absorbs float rounding of an
    exact multiple."""
    if hz <= 0.0:
        return rto
    return math.ceil(rto * hz - 1e-6) / hz


@inline
def rto_timer_wait(rto, hz):
    """Seconds from arming the retransmission timer to its expiry: ``rto`` for ``hz`` = 0;
    else the timer wheel's :func:`wheel_wait` for the RTO's whole jiffies (``rto`` is one,
    :func:`rto_jiffies`; ``inet_csk_reset_xmit_timer`` -> ``sk_reset_timer``, jiffies + J)."""
    if hz <= 0.0:
        return rto
    return wheel_wait(math.floor(rto * hz + 0.5), hz)


TCP_TIMEOUT_INIT_S = 1.0
"""Linux include/net/tcp.h ``TCP_TIMEOUT_INIT`` (1 s): the probe's timeout before any RTT
sample (``tcp_schedule_loss_probe``), as RFC 8985 7.2's."""


@inline
def tlp_timer_wait(srtt, one_out, rto_delta, rto_min, hz):
    """Seconds from arming the loss probe's timer to its expiry under ``hz`` > 0 (Linux 6.7
    and later, ``net/ipv4/tcp_output.c`` ``tcp_schedule_loss_probe``).

    J = usecs_to_jiffies(2 SRTT + ``tcp_rto_min`` (``rto_min``) with one packet out, else
    + ``TCP_TIMEOUT_MIN_US`` (2 ms)); ``TCP_TIMEOUT_INIT`` before any sample; capped at
    usecs_to_jiffies(``rto_delta``), the RTO's remaining time (when positive), then fired by
    the timer wheel (:func:`wheel_wait`)."""
    if srtt > 0.0:
        jiffies = math.ceil((2.0 * srtt + (rto_min if one_out else TCP_TIMEOUT_MIN_S)) * hz - 1e-6)
    else:
        jiffies = math.ceil(TCP_TIMEOUT_INIT_S * hz - 1e-6)
    if rto_delta > 0.0:
        cap = math.ceil(rto_delta * hz - 1e-6)
        if cap < jiffies:
            jiffies = cap
    return wheel_wait(jiffies, hz)


@inline
def reo_timer_wait(remaining, hz):
    """Seconds from arming RACK's reordering timer to its expiry, for ``remaining`` seconds
    until the first segment's ``xmit_ts + RACK.rtt + reo_wnd`` (RFC 8985 6.2 step 5).

    ``hz`` = 0: exactly ``remaining`` (RFC 8985). ``hz`` > 0, a kernel of ``CONFIG_HZ`` =
    hz: Linux 6.7 and later arm J = usecs_to_jiffies(remaining + ``TCP_TIMEOUT_MIN_US``)
    jiffies (``net/ipv4/tcp_recovery.c`` ``tcp_rack_mark_lost``; usecs_to_jiffies rounds
    up), fired by the timer wheel (:func:`wheel_wait`: (J + 1/2) / hz below 63 jiffies).
    The 1e-6 jiffy of slack absorbs float rounding of an exact multiple."""
    if hz <= 0.0:
        return remaining
    return wheel_wait(math.ceil((remaining + TCP_TIMEOUT_MIN_S) * hz - 1e-6), hz)


# Segments ---------------------------------------------------------------------------------

@inline
def seg_end(k, PI):
    """Byte offset just past segment ``k - 1`` (bytes in segments 0 .. k-1); a bare FIN
    counts one MSS (one segment against cwnd)."""
    e = k * PI[P_MSS]
    size = PI[P_SIZE]
    if e < size:
        return e
    return size if k <= PI[P_NDATA] else size + PI[P_MSS]


@inline
def seg_len(k, PI):
    """Bytes of segment ``k`` (the last one may be short)."""
    return seg_end(k + 1, PI) - k * PI[P_MSS]


@inline
def flight(I, PI):
    """FlightSize, bytes: ``snd_nxt - snd_una``."""
    return seg_end(I[NXT], PI) - seg_end(I[UNA], PI)


@inline
def can_send_new(I, PI, PF):
    """The receiver window admits the next new segment (RFC 5827's 'no new data' test)."""
    if I[NXT] >= PI[P_N]:
        return False
    return flight(I, PI) + seg_len(I[NXT], PI) <= PF[Q_RWNDB]


# Link --------------------------------------------------------------------------------------

@inline
def draw_lost(prob, I, u):
    """The next uniform decides a loss with probability ``prob`` (none drawn when 0)."""
    if prob > 0.0:
        if I[UI] >= u.shape[0]:
            I[FAIL] = FAIL_UNIFORMS
            return False
        lost = u[I[UI]] < prob
        I[UI] += 1
        return lost
    return False


LINK_TIE_S = 1e-12
"""A packet whose last bit leaves within this many seconds of an arrival has left the
drop-tail buffer: exact ties (ACK arrival = end of a serialisation) are common on paths
built from whole BDPs, and float rounding must not decide them. Far below any
serialisation time (40 header bytes at 1 Tb/s take 3.2e-10 s)."""


@inline
def backlog_push(t, I, QF):
    """A packet accepted by the drop-tail buffer leaves the link at ``t`` (seconds)."""
    cap = QF.shape[1]
    if I[BLN] == cap:
        I[FAIL] = FAIL_QUEUE
        return
    QF[QF_BL, (I[BLH] + I[BLN]) % cap] = t
    I[BLN] += 1


@inline
def buffer_full(now, I, PI, QF):
    """The drop-tail buffer holds ``PI[P_QLIM]`` packets waiting behind the one on the
    link at ``now`` (the packets gone by then, ties within :data:`LINK_TIE_S`, leave it)."""
    while I[BLN] > 0 and QF[QF_BL, I[BLH]] <= now + LINK_TIE_S:
        I[BLH] = (I[BLH] + 1) % QF.shape[1]
        I[BLN] -= 1
    return I[BLN] > PI[P_QLIM]


@inline
def count_drop(seg, I, S, PI):
    """The path dropped this transmission of ``seg``: the loss counters."""
    if I[LOSTD] == 0:  # every transmission counts one in S_TXC, this one included
        I[FDROP] = S[S_TXC, :PI[P_N]].sum() - 1
    I[LOSTD] += 1
    if S[S_TXC, seg] == 1:
        I[FIRSTL] += 1


@inline
def data_lost(seg, I, S, PI, PF, u):
    """Whether the path drops this transmission of data segment ``seg``: the scripted
    count (:data:`P_DROPS`: its first transmissions past the drop-tail buffer, up to the
    count), else the next uniform (:func:`draw_lost`, ``p``)."""
    if PI.shape[0] > P_DROPS:
        S[S_DECIDED, seg] += 1
        return S[S_DECIDED, seg] <= PI[P_DROPS + seg]
    return draw_lost(PF[Q_P], I, u)


# Trace -------------------------------------------------------------------------------------

@inline
def tracing(F):
    """True when ``F`` carries a trace buffer (:data:`TR_COUNT`)."""
    return F.shape[0] > N_FS


def trace_row(ev, now, value, fl, F):
    """Append a trace row: event ``ev`` (a ``TR_*`` code) at ``now`` for segment or ACK
    ``value``, with the sender's cwnd, ssthresh and RTO and its flight ``fl`` (bytes); only
    counted when the buffer is full."""
    k = int(F[TR_COUNT])
    F[TR_COUNT] = k + 1
    j = TR_ROWS + TR_COLS * k
    if j + TR_COLS <= F.shape[0]:
        F[j] = now
        F[j + 1] = ev
        F[j + 2] = value
        F[j + 3] = F[CWND]
        F[j + 4] = F[SSTH]
        F[j + 5] = fl
        F[j + 6] = F[RTO]


@inline
def reno_pipe(I, PI, S):
    """ns-3's BytesInFlight (``TcpTxBuffer``): outstanding - sacked - lost + retransmitted,
    bytes, from the scoreboard's marks ``S_SACKED``, ``S_LOST``, ``S_RFLAG``."""
    b = 0
    for k in range(I[UNA], I[MAX]):
        if (1 - S[S_SACKED, k]) - S[S_LOST, k] + S[S_RFLAG, k] > 0:
            b += seg_len(k, PI)
    return b


def sender_flight(I, PI, S):
    """The flight a trace row shows, bytes: ``snd_nxt - snd_una``; for the ns3 sender its
    pipe (:func:`reno_pipe`)."""
    if PI[P_SENDER] == SENDER_NS3:
        return reno_pipe(I, PI, S)
    return flight(I, PI)


def trace_event(ev, now, value, I, F, S, PI):
    """:func:`trace_row` with the sender's flight now (:func:`sender_flight`)."""
    trace_row(ev, now, value, sender_flight(I, PI, S), F)


@inline
def arm_rto(now, I, F):
    """Start (or restart) the retransmission timer: ``Timer.arm``, a fresh ``seq``; on the
    timer wheel when ``F[TIMER_HZ]`` > 0 (:func:`rto_timer_wait`)."""
    F[RTO_T] = now + rto_timer_wait(F[RTO], F[TIMER_HZ])
    I[RTO_SEQ] = I[SEQ]
    I[SEQ] += 1
    I[RTO_ON] = 1


@inline
def restart_rto(now, I, F):
    """RFC 6298 (5.2)/(5.3) on a new ACK: restart while data is outstanding, else stop."""
    if I[NXT] > I[UNA]:
        arm_rto(now, I, F)
    else:
        I[RTO_ON] = 0


@inline
def transmit(seg, now, I, F, S, SF, PI, PF, u, QI, QF):
    """Send segment ``seg`` at ``now``: the sender's counters (with RACK-TLP, RFC 8985: a
    retransmission in flight, or new data sent during this event), the link (store and
    forward at rate C, random loss, arrival ``d`` after the last bit), the timer (RFC 6298
    (5.1))."""
    S[S_TXC, seg] += 1
    if S[S_TXC, seg] > 1:
        I[RETX] += 1
        S[S_RETX, seg] = 1
    if tracing(F):
        trace_event(TR_RETX if S[S_TXC, seg] > 1 else TR_SEND, now, seg, I, F, S, PI)
    SF[SF_SENT, seg] = now
    if PI[P_RACK] != 0:
        if S[S_TXC, seg] > 1:
            S[S_RTXO, seg] = 1
        else:
            I[SENT_NEW] = 1
    fin = seg >= PI[P_NDATA]  # a bare FIN: no payload, no loss draw, never lost
    if PI[P_QLIM] >= 0 and not fin and buffer_full(now, I, PI, QF):
        count_drop(seg, I, S, PI)  # refused: no link time, no loss draw
        if I[RTO_ON] == 0:
            arm_rto(now, I, F)
        return
    busy = F[BUSY]
    start = now if now > busy else busy
    F[BUSY] = start + ((0 if fin else seg_len(seg, PI)) + PI[P_HDR]) * 8.0 / PF[Q_RATE]
    if PI[P_QLIM] >= 0:
        backlog_push(F[BUSY], I, QF)
    lost = False if fin else data_lost(seg, I, S, PI, PF, u)
    if I[FAIL] != 0:
        return
    if lost:
        count_drop(seg, I, S, PI)
    else:
        cap = QI.shape[1]
        if I[DQN] == cap:
            I[FAIL] = FAIL_QUEUE
            return
        j = (I[DQH] + I[DQN]) % cap
        QF[QF_DT, j] = F[BUSY] + PF[Q_DELAY]
        QF[QF_DTS, j] = now
        QI[QI_DS, j] = I[SEQ]
        QI[QI_DG, j] = seg
        I[SEQ] += 1
        I[DQN] += 1
    if I[RTO_ON] == 0:
        arm_rto(now, I, F)


@inline
def send_ack(now, I, F, PI, PF, u, RB, QI, QF):
    """The receiver's cumulative ACK (with TS.Recent and its first three SACK blocks) on the
    return path: lost with probability ``p_ack``, else arriving ``d`` later; with ACK
    serialisation (``PF[Q_ACKSER]`` > 0 s) ``d`` after its last bit leaves the return
    FIFO (:class:`.link.Link`)."""
    lost = draw_lost(PF[Q_PACK], I, u)
    if I[FAIL] != 0:
        return
    if PF[Q_ACKSER] > 0.0:
        start = now if now > F[ABUSY] else F[ABUSY]
        F[ABUSY] = start + PF[Q_ACKSER]
        now = F[ABUSY]
    if lost:
        I[LOSTA] += 1
        return
    cap = QI.shape[1]
    if I[AQN] == cap:
        I[FAIL] = FAIL_QUEUE
        return
    j = (I[AQH] + I[AQN]) % cap
    QF[QF_AT, j] = now + PF[Q_DELAY]
    QF[QF_AE, j] = F[TSREC]
    QI[QI_AS, j] = I[SEQ]
    QI[QI_AA, j] = I[RNXT]
    nb = I[NBLK] if I[NBLK] < 3 else 3
    QI[QI_AN, j] = nb
    for i in range(nb):
        QI[QI_B0 + 2 * i, j] = RB[0, i]
        QI[QI_B0 + 2 * i + 1, j] = RB[1, i]
    I[SEQ] += 1
    I[AQN] += 1


# Receiver ----------------------------------------------------------------------------------

@inline
def ack_now(now, I, F, PI, PF, u, RB, QI, QF):
    """Send an ACK at once; every ACK uses up one quick ACK and ends SACK compression's
    hold (``tcp_event_ack_sent``)."""
    I[PEND] = 0
    I[COMPR] = 0
    I[DL_ON] = 0
    if I[QUICK] > 0:
        I[QUICK] -= 1
    I[LASTACK] = I[RNXT]
    send_ack(now, I, F, PI, PF, u, RB, QI, QF)
    if tracing(F):
        trace_row(TR_ACK_SENT, now, I[RNXT], F[TR_FLIGHT], F)


def sack_first(seg, I, PI, S, RB):
    """RFC 2018 Section 4: the block holding buffered segment ``seg`` first, the blocks
    merged into it dropped, the others in their order (most recently changed first)."""
    lo = seg
    while lo - 1 > I[RNXT] and S[S_RBUF, lo - 1] != 0:
        lo -= 1
    hi = seg + 1
    while hi < PI[P_N] and S[S_RBUF, hi] != 0:
        hi += 1
    m = 0
    for i in range(I[NBLK]):
        if RB[1, i] <= lo or RB[0, i] >= hi:
            RB[0, m] = RB[0, i]
            RB[1, m] = RB[1, i]
            m += 1
    for i in range(m - 1, -1, -1):
        RB[0, i + 1] = RB[0, i]
        RB[1, i + 1] = RB[1, i]
    RB[0, 0] = lo
    RB[1, 0] = hi
    I[NBLK] = m + 1


@inline
def ofo_ack(now, compress, I, F, PI, PF, u, RB, QI, QF):
    """ACK an out-of-order or duplicate segment at once, or hold it by Linux's SACK
    compression (``__tcp_ack_snd_check``, :func:`on_segment`)."""
    if not compress or I[QUICK] > 0 or I[COMPR] >= COMP_SACK_NR:
        ack_now(now, I, F, PI, PF, u, RB, QI, QF)
        return
    if I[CRNXT] != I[RNXT]:
        I[CRNXT] = I[RNXT]
        I[DUPACKS] = 0
    if I[DUPACKS] < FASTRETRANS_THRESH:
        I[DUPACKS] += 1
        ack_now(now, I, F, PI, PF, u, RB, QI, QF)
        return
    I[COMPR] += 1
    due = now + comp_sack_delay(2.0 * PF[Q_DELAY])
    if I[DL_ON] == 0 or F[DL_T] > due:
        F[DL_T] = due
        I[DL_SEQ] = I[SEQ]
        I[SEQ] += 1
        I[DL_ON] = 1


@inline
def on_segment(seg, tsval, now, I, F, S, PI, PF, u, RB, QI, QF):
    """Data segment ``seg`` (sent at ``tsval``) arrives at the receiver at ``now``: the rules
    of RFC 5681 4.2 and RFC 1122 4.2.3.2 (delayed ACK, quick ACKs, FIN, RFC 7323 TS.Recent), and for
    the sack sender (``PI[P_SACK]``) SACK blocks and, with ``sack_compression``
    (``PI[P_COMPRESS]``), Linux's SACK compression.

    SACK (RFC 2018): every ACK carries up to 3 blocks ``(start, end)`` of buffered
    out-of-order segments (end exclusive, in segments). The receiver keeps all its blocks in
    order of their last change (``RB``); the block holding the segment that triggered the
    ACK comes first (unless that segment advanced ``rcv_nxt``), then the most recently
    reported other blocks (RFC 2018 Section 4; Linux keeps ``tp->selective_acks`` in the
    same order, ``tcp_sack_new_ofo_skb``; :func:`sack_first`). Three blocks fit beside the
    12-byte timestamps option (40 - 12 = 28 >= 2 + 3 x 8). No D-SACK.

    SACK compression (Linux, ``net/ipv4/tcp_input.c`` ``__tcp_ack_snd_check``;
    :func:`ofo_ack`): outside quick-ack mode an ACK for an out-of-order or duplicate segment
    is sent at once only for the first ``TCP_FASTRETRANS_THRESH`` = 3 such ACKs at the same
    ``rcv_nxt`` (``dup_ack_counter``); later ones are held (``compressed_ack``) until the
    compressed-ACK timer fires ``min(tcp_comp_sack_delay_ns, RTT/20)`` after the first held
    one (1 ms at RTT >= 20 ms; RTT is the path's, the receiver's SRTT from the handshake),
    or until 44 (``tcp_comp_sack_nr``) are held, or until any other ACK leaves
    (``tcp_event_ack_sent`` clears the count). With ``quickack_on_data`` (``PI[P_QKDATA]``)
    quick-ack mode, as Linux runs it, starts with the first in-order data segment (``tcp_event_data_recv``: ``tcp_incr_quickack``
    when ``ato`` is still 0), so ACKs sent before it use up no quick ACK, and a segment
    entirely below ``rcv_nxt`` re-enters it (``tcp_data_queue``: ``tcp_enter_quickack_mode``)."""
    n = PI[P_N]
    if PI[P_TS] != 0 and seg <= I[LASTACK]:  # RFC 7323 Section 4.3
        F[TSREC] = tsval
    compress = PI[P_COMPRESS] != 0
    if seg < I[RNXT] or (seg > I[RNXT] and S[S_RBUF, seg] != 0):
        if PI[P_SACK] != 0 and seg > I[RNXT]:
            sack_first(seg, I, PI, S, RB)
        if seg < I[RNXT] and PI[P_QKDATA] != 0 and I[QUICK] < PI[P_QUICK]:
            I[QUICK] = PI[P_QUICK]  # tcp_enter_quickack_mode
        ofo_ack(now, compress, I, F, PI, PF, u, RB, QI, QF)
        return
    if seg > I[RNXT]:  # out of order: buffer, immediate ACK (or held: SACK compression)
        S[S_RBUF, seg] = 1
        I[NBUF] += 1
        if PI[P_SACK] != 0:
            sack_first(seg, I, PI, S, RB)
        ofo_ack(now, compress, I, F, PI, PF, u, RB, QI, QF)
        return
    if PI[P_QKDATA] != 0 and I[RNXT] == 0 and I[QUICK] < PI[P_QUICK]:
        I[QUICK] = PI[P_QUICK]  # the first in-order data: tcp_incr_quickack
    filled_gap = I[NBUF] > 0
    before = I[RNXT]
    I[RNXT] += 1
    while I[RNXT] < n and S[S_RBUF, I[RNXT]] != 0:
        S[S_RBUF, I[RNXT]] = 0
        I[NBUF] -= 1
        I[RNXT] += 1
    if I[NBLK] > 0:  # blocks now below rcv_nxt are gone
        m = 0
        for i in range(I[NBLK]):
            if RB[0, i] > I[RNXT]:
                RB[0, m] = RB[0, i]
                RB[1, m] = RB[1, i]
                m += 1
        I[NBLK] = m
    if before < PI[P_NDATA] <= I[RNXT]:
        F[DELIV] = now
    if filled_gap or I[QUICK] > 0 or (PI[P_FIN] != 0 and I[RNXT] == n):
        ack_now(now, I, F, PI, PF, u, RB, QI, QF)
    else:
        I[PEND] += 1
        if I[PEND] >= PI[P_B]:
            ack_now(now, I, F, PI, PF, u, RB, QI, QF)
        elif I[DL_ON] == 0:
            F[DL_T] = now + PF[Q_DELACK]
            I[DL_SEQ] = I[SEQ]
            I[SEQ] += 1
            I[DL_ON] = 1


# RTT estimator and timer -------------------------------------------------------------------

@inline
def smooth_rtt(r, F):
    """RFC 6298 (2.3), beta = 1/4, alpha = 1/8."""
    F[RTTVAR] = 0.75 * F[RTTVAR] + 0.25 * abs(F[SRTT] - r)
    F[SRTT] = 0.875 * F[SRTT] + 0.125 * r


@inline
def rto_estimate(F, PF):
    """``SRTT + max(G, K RTTVAR)``, K = 4 (RFC 6298 (2.2)/(2.3)), seconds, before the bounds."""
    k_var = 4.0 * F[RTTVAR]
    g = PF[Q_G]
    return F[SRTT] + (k_var if k_var > g else g)


@inline
def rtt_to_rule(r, F, PI, PF):
    """The growth rule's ``on_rtt_sample`` for a sample of ``r`` seconds."""
    rule_law(PI[P_RULE], H_RTT, F, PF, PI[P_MSS], r)


@inline
def rtt_sample(r, I, F, PI, PF):
    """An RTT sample of ``r`` seconds: the growth rule's ``on_rtt_sample`` (first, before the
    ``on_ack`` of the same ACK; only for a rule whose law reads RTT samples), RACK's
    min_RTT (RFC 8985 6.2 step 1) and the RFC 6298 estimator (2.2)-(2.5); nothing more for
    the paper's fixed RTO."""
    if PI[P_RULE_HOOKS] & (1 << H_RTT) != 0:
        rtt_to_rule(r, F, PI, PF)
    if PI[P_RACK] != 0:
        I[NSAMP] += 1
        if r < F[MIN_RTT]:
            F[MIN_RTT] = r
    if PI[P_FIXED] != 0:
        return
    if F[SRTT] < 0.0:  # (2.2)
        F[SRTT] = r
        F[RTTVAR] = r / 2.0
    else:
        smooth_rtt(r, F)
    rto = rto_estimate(F, PF)
    if rto < PF[Q_MINRTO]:  # (2.4)
        rto = PF[Q_MINRTO]
    if rto > PF[Q_MAXRTO]:  # (2.5)
        rto = PF[Q_MAXRTO]
    F[RTO] = rto_jiffies(rto, PF[Q_HZ])


@inline
def karn_valid(ack, I, S):
    """Karn's rule (RFC 6298 Section 3): the ACK gives a sample only if none of the segments
    it newly acknowledges was ever retransmitted."""
    for k in range(I[UNA], ack):
        if S[S_RETX, k] != 0:
            return False
    return True


@inline
def advance(ack, tsecr, now, I, F, S, SF, PI, PF):
    """A new cumulative ACK for ``ack`` segments: its RTT sample (RFC 7323 timestamps: every
    new ACK, ``now - TSecr``; else Karn's rule) to the growth rule, then to the estimator,
    ``snd_una`` moves, the back-off ends.
    Returns the bytes newly acknowledged."""
    acked = seg_end(ack, PI) - seg_end(I[UNA], PI)
    if PI[P_TS] != 0:
        rtt_sample(now - tsecr, I, F, PI, PF)
    elif karn_valid(ack, I, S):
        rtt_sample(now - SF[SF_SENT, ack - 1], I, F, PI, PF)
    I[UNA] = ack
    if I[NXT] < ack:
        I[NXT] = ack
    I[BACKOFF] = 0
    return acked


@inline
def finish(now, I, F):
    """The ACK covering the last byte: the transfer is complete, the timers stop."""
    F[COMPL] = now
    I[RTO_ON] = 0
    I[RK_ON] = 0
    I[DONE] = 1


@inline
def ssthresh_after_loss(fl, F, PI, PF):
    """The growth rule's ssthresh after a loss with FlightSize ``fl`` bytes, bytes
    (``GrowthRule.ssthresh_after_loss``; RFC 5681 (4) for the standard rule)."""
    return rule_law(PI[P_RULE], H_LOSS, F, PF, PI[P_MSS], float(fl))


@inline
def congestion_event(hook, F, PI, PF):
    """The growth rule's ``on_congestion_event`` (``hook``: H_FAST_RETRANSMIT or H_TIMEOUT),
    if its law acts on it."""
    if PI[P_RULE_HOOKS] & (1 << hook) != 0:
        rule_law(PI[P_RULE], hook, F, PF, PI[P_MSS], 0.0)


@inline
def grow(acked, F, PI, PF):
    """The growth rule's ``on_ack`` for an ACK of ``acked`` new bytes outside recovery
    (``x`` is a float at every call of a law: one compiled version of each; the bytes are
    integers far below 2**53, so the laws compute the same values as with an int)."""
    rule_law(PI[P_RULE], H_ACK, F, PF, PI[P_MSS], float(acked))


def timeout(I, F, PI, PF):
    """Retransmission-timer expiry (RFC 6298 5.4-5.6, RFC 5681 Section 3.1): ssthresh from
    the FlightSize on the first expiry (held on consecutive ones), cwnd = 1 MSS, recovery
    and Limited Transmit end, ``recover`` = highest segment sent (RFC 6582), the RTO backs
    off, go-back-N from ``snd_una``. The caller then sends."""
    mss = PI[P_MSS]
    I[TOUT] += 1
    I[BACKOFF] += 1
    if I[BACKOFF] > I[MAXBO]:
        I[MAXBO] = I[BACKOFF]
    if I[BACKOFF] == 1:
        F[SSTH] = ssthresh_after_loss(flight(I, PI), F, PI, PF)
    congestion_event(H_TIMEOUT, F, PI, PF)
    F[CWND] = float(mss)
    F[BACKED] = 0.0
    I[INREC] = 0
    I[DUP] = 0
    I[LTC] = 0
    I[LTB] = 0
    I[RECOVER] = I[MAX] - 1
    if PI[P_FIXED] == 0:
        F[RTO] = min(2.0 * F[RTO], PF[Q_MAXRTO])  # (5.5)
    I[NXT] = I[UNA]


# Sender mechanisms shared by the rfc and sack senders -----------------------------------

@inline
def dup_thresh(I, PI, PF):
    """DupThresh now (segments): ``dup_t``; 1 for a hole among the last ``dup_t`` segments
    (the paper's Section 3.1 proposal); ``oseg - 1`` with Early Retransmit (RFC 5827 3.1)
    when fewer than ``dup_t + 1`` segments are outstanding and no new one may be sent."""
    dup_t = PI[P_DUPT]
    thresh = dup_t
    if PI[P_TAIL] != 0 and I[UNA] >= PI[P_N] - dup_t:
        thresh = 1
    if PI[P_ER] != 0:
        oseg = I[NXT] - I[UNA]
        if 2 <= oseg and oseg <= dup_t and not can_send_new(I, PI, PF):
            thresh = min(thresh, oseg - 1)
    return thresh


@inline
def send_next(now, I, F, S, SF, PI, PF, u, QI, QF):
    """Transmit segment ``snd_nxt`` and move ``snd_nxt`` (and ``snd_max``) past it."""
    transmit(I[NXT], now, I, F, S, SF, PI, PF, u, QI, QF)
    if I[FAIL] != 0:
        return
    I[NXT] += 1
    if I[NXT] > I[MAX]:
        I[MAX] = I[NXT]


@inline
def send_new(now, I, F, S, SF, PI, PF, u, QI, QF):
    """Send every new segment that cwnd (+ Limited Transmit credit) and the receiver window
    admit; one may always leave when nothing is in flight. Without a congestion window
    (``PI[P_NOCWND]``, RFC 793 as NGWA's Eq. 1 runs it) the receiver window alone."""
    mss = PI[P_MSS]
    n = PI[P_N]
    while I[NXT] < n:
        fl = flight(I, PI)
        ln = seg_len(I[NXT], PI)
        if fl > 0 and fl + ln > F[CWND] + I[LTC] * mss and PI[P_NOCWND] == 0:
            break
        if fl > 0 and fl + ln > PF[Q_RWNDB]:
            break
        send_next(now, I, F, S, SF, PI, PF, u, QI, QF)
        if I[FAIL] != 0:
            return


# Events --------------------------------------------------------------------------------

def tick(time_s):
    """``time_s`` (seconds, >= 0) on the event clock: whole nanoseconds, rounded to nearest.

    Events due in the same nanosecond run in the order they were scheduled, as ns-3 runs its
    events (an integer-nanosecond ``Time``, FIFO among equal times): two events due at the
    same instant in exact arithmetic (a delayed-ACK timer and a data arrival, say) keep their
    scheduling order however the floating-point sums that gave their times were rounded
    (docs/packet-model.md, exact serialisation). The times themselves stay floats: only the
    order uses ticks."""
    return int(time_s * 1e9 + 0.5)


def before(t, s, bt, bs):
    """Event ``(t, s)`` (time in seconds, scheduling ``seq``) runs before event ``(bt, bs)``:
    an earlier :func:`tick`, or the same tick and scheduled earlier."""
    a = tick(t)
    b = tick(bt)
    return a < b or (a == b and s < bs)


@inline
def earlier(kind, t, s, best, bt, bs):
    """The event ``(t, s)`` of ``kind`` if it runs before the best so far ``(bt, bs)``."""
    if best == EV_NONE or before(t, s, bt, bs):
        return kind, t, s
    return best, bt, bs


@inline
def next_event(I, F, QI, QF):
    """The next event ``(kind, time_s)``: the earliest ``(tick, seq)`` among the heads of the
    data and ACK queues and the armed timers (``EV_NONE`` when nothing is pending)."""
    kind = EV_NONE
    bt = np.inf
    bs = 0
    if I[DQN] > 0:
        kind, bt, bs = EV_DATA, QF[QF_DT, I[DQH]], QI[QI_DS, I[DQH]]
    if I[AQN] > 0:
        kind, bt, bs = earlier(EV_ACK, QF[QF_AT, I[AQH]], QI[QI_AS, I[AQH]], kind, bt, bs)
    if I[RTO_ON] != 0:
        kind, bt, bs = earlier(EV_RTO, F[RTO_T], I[RTO_SEQ], kind, bt, bs)
    if I[DL_ON] != 0:
        kind, bt, bs = earlier(EV_DELACK, F[DL_T], I[DL_SEQ], kind, bt, bs)
    if I[RK_ON] != 0:
        kind, bt, bs = earlier(EV_RACK, F[RK_T], I[RK_SEQ], kind, bt, bs)
    return kind, bt


@inline
def pop_data(I, QI, QF):
    """Take the head of the data queue: ``(segment, TSval)``."""
    h = I[DQH]
    I[DQH] = (h + 1) % QI.shape[1]
    I[DQN] -= 1
    return QI[QI_DG, h], QF[QF_DTS, h]


@inline
def pop_ack(I, QI, QF, blk):
    """Take the head of the ACK queue: ``(ack, TSecr, SACK blocks)``; the blocks are copied
    into ``blk`` as lo, hi pairs."""
    h = I[AQH]
    nb = QI[QI_AN, h]
    for i in range(2 * nb):
        blk[i] = QI[QI_B0 + i, h]
    I[AQH] = (h + 1) % QI.shape[1]
    I[AQN] -= 1
    return QI[QI_AA, h], QF[QF_AE, h], nb


@inline
def on_delack_timer(now, I, F, PI, PF, u, RB, QI, QF):
    """Delayed-ACK (or compressed-ACK) timer expiry: acknowledge the held segments."""
    I[DL_ON] = 0
    if I[PEND] > 0 or I[COMPR] > 0:
        ack_now(now, I, F, PI, PF, u, RB, QI, QF)


def reset(I, F, S, PI, PF):
    """The state at the start of a transfer."""
    n = PI[P_N]
    I[:] = 0
    F[:] = 0.0
    S[:, :n] = 0
    I[RECOVER] = -1
    I[RESCUE] = -1
    I[TLP_END] = -1
    I[SAMP_PROBE] = -1
    # quickack_on_data: quick-ack mode starts with the first in-order data (on_segment).
    I[QUICK] = 0 if PI[P_QKDATA] != 0 else PI[P_QUICK]
    I[CRNXT] = -1
    I[FDROP] = -1
    for k in range(N_STATE):  # cwnd, ssthresh, the rule's own state
        F[k] = PF[Q_STATE0 + k]
    F[RTO] = PF[Q_RTO0]
    F[TIMER_HZ] = PF[Q_HZ]
    F[SRTT] = PF[Q_SRTT0]
    F[RTTVAR] = PF[Q_RTTVAR0]
    F[RK_XTS] = -1.0
    F[MIN_RTT] = PF[Q_MINRTT0]  # inf, or RACK's min_RTT from the handshake's sample
    F[BUSY] = PF[Q_ACKSER]  # the handshake's ACK, when ACKs are serialised (else 0)
    I[NSAMP] = PI[P_NSAMP0]
