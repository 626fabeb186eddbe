"""Array kernel of the simulator for the ns-3 sender (optional numba compilation).

The same algorithm as :class:`~latency_model.sim.ns3.Ns3Sender` (ns-3.37's TcpNewReno with
classic recovery), :mod:`.receiver`, :mod:`.link` and :mod:`.engine`, rewritten over flat
arrays so that numba can compile it: the twin of
``run_transfer(params, size_bytes=..., config=SimConfig.profile("ns3", ...), rng=...)`` for
random losses without a drop-tail buffer, as :mod:`.kernel` is the twin of the RFC sender.

Why it is bit-identical to the reference path (the method of :mod:`.kernel`):

* the per-run uniforms are drawn by the caller exactly as
  :class:`~latency_model.sim.link.UniformStream` draws its first block
  (``Generator(PCG64(child)).random(block_size(n, p, p_ack))``), and they are consumed in
  the same order (one per data transmission when p > 0, one per ACK when the ACK loss
  probability is > 0);
* the reference heap orders events by ``(time, seq)``; here data arrivals and ACK arrivals
  are FIFO queues (a FIFO link and a constant delay keep each stream in time order) and the
  retransmission and delayed-ACK timers are scalars, each carrying the ``seq`` it was given
  when scheduled (every arming takes one, as ``Timer.arm`` pushes one event), and the
  earliest ``(time, seq)`` of the four heads is taken: the same order;
* every floating-point expression is written in the same order with the same operand types.

The ns-3 sender's state: per-segment flags sacked / lost / retransmitted (``pipe`` is
recomputed from them as ``Ns3Sender._pipe`` does), the congestion state OPEN / DISORDER /
RECOVERY / LOSS, ``recover`` and whether it is active, the first-partial-ACK flag, the bytes
not yet processed by the growth, and the RTT history: a FIFO of entries ``[first segment,
segments, send time, retransmitted]`` held in fixed arrays with head and tail indices (an
entry is appended only for a first transmission, so ``n`` entries always suffice; a timeout
clears it by moving the head to the tail).

The module shares no slot constant with :mod:`.kernel`, only the event order
(:func:`.engine.before`). numba's on-disk cache alone is invalidated only by changes to the
file of the cached function; :func:`~latency_model.accel.compile_twin` also drops it when the
file of any helper changes (``accel._fresh``), so a helper from another module is safe.

A run returns a non-zero status (and the caller reruns it on the reference path, from the
same seed) if it needs more uniforms than its first block or more queue space than allocated.
"""

from __future__ import annotations

import functools

import numpy as np

from ..accel import compile_twin, held, numba_available, uncounted
from .engine import before, tick  # noqa: F401 (tick: a helper of before, compiled with it)

__all__ = ["run_batch_ns3", "pack_params_ns3", "compiled_run_batch_ns3", "numba_available",
           "N_OUT", "OUT_FIELDS", "FAIL_UNIFORMS", "FAIL_QUEUE", "FAIL_STALL"]

# Congestion states (the values of latency_model.sim.ns3.OPEN .. LOSS).
OPEN, DISORDER, RECOVERY, LOSS = range(4)

# Integer state slots.
(UNA, MAX, STATE, RECOVER, RACT, FPART, BNP, DUP, BACKOFF, RETX, TOUT, MAXBO, FRX, FIRSTL,
 UI, SEQ, RTO_ON, RTO_SEQ, DL_ON, DL_SEQ, RNXT, NBUF, PEND, QUICK, LOSTD, LOSTA,
 DQH, DQN, AQH, AQN, HH, HT, DONE, FAIL) = range(34)
N_IS = 34
# Float state slots.
CWND, SSTH, RTO, SRTT, RTTVAR, BUSY, RTO_T, DL_T, DELIV, COMPL = range(10)
N_FS = 10
# Integer parameters.
P_N, P_SIZE, P_MSS, P_B, P_DUPT, P_LT, P_HDR, P_QUICK, P_FIN = range(9)
N_PI = 9
# Float parameters.
(Q_RWNDB, Q_MINRTO, Q_MAXRTO, Q_G, Q_DELACK, Q_RATE, Q_DELAY, Q_P, Q_PACK, Q_CWND0, Q_SSTH0,
 Q_RTO0, Q_SRTT0, Q_RTTVAR0) = range(14)
N_PF = 14
# Rows of the per-segment integer array S: transmissions, the scoreboard flags, the
# receiver's out-of-order buffer, and the RTT history by entry (first segment, segments,
# retransmitted).
S_TXC, S_SACKED, S_LOST, S_RFLAG, S_RBUF, S_HSEQ, S_HCNT, S_HRETX = range(8)
N_S = 8
# Rows of the FIFO queues QI (int64: data seq, data segment, ACK seq, ACK number) and QF
# (float64: data arrival time, ACK arrival time). The history entries' send times are h_time.
QI_DS, QI_DG, QI_AS, QI_AA = range(4)
QF_DT, QF_AT = range(2)

OUT_FIELDS = ("completion_s", "delivered_s", "lost_packets", "lost_acks",
              "data_packets_sent", "retransmissions", "timeouts", "max_backoff",
              "fast_retransmits", "first_transmissions_lost")
"""Columns of ``out``: the same as :data:`latency_model.sim.kernel.OUT_FIELDS`."""
N_OUT = len(OUT_FIELDS)

FAIL_UNIFORMS = 1
FAIL_QUEUE = 2
FAIL_STALL = 3


def pack_params_ns3(params, size_bytes: int, config):
    """Integer and float parameter arrays of :func:`run_batch_ns3` for one transfer size.

    The sender's initial values (cwnd, ssthresh, receiver window, the SYN-ACK's SRTT and
    RTTVAR, the first RTO, the timer bounds) are read from an
    :class:`~latency_model.sim.ns3.Ns3Sender` built for the same arguments, so they are the
    reference path's to the last bit.

    Parameters
    ----------
    params : TcpParams
        TCP parameters (data loss probability ``params.p``).
    size_bytes : int
        Transfer size, bytes (>= 1).
    config : SimConfig
        ``sender="ns3"`` settings (e.g. ``SimConfig.profile("ns3")``) without a drop-tail
        buffer.

    Returns
    -------
    (ndarray of int64, ndarray of float64)

    Raises
    ------
    ValueError
        If ``config`` is not the ns-3 sender or has a drop-tail buffer, or the parameters
        are not something ns-3's TcpNewReno runs
        (:func:`~latency_model.sim.ns3.check_ns3_params`).
    """
    from .engine import EventQueue  # noqa: PLC0415
    from .ns3 import Ns3Sender  # noqa: PLC0415

    if config.sender != "ns3":
        raise ValueError(f"the ns3 kernel runs sender 'ns3', got {config.sender!r}")
    if config.queue_packets is not None:
        raise ValueError("the ns3 kernel's link has no drop-tail buffer: queue_packets must be "
                         f"None, got {config.queue_packets!r}")
    if config.rtt_sampling != "ns3":  # pragma: no cover - SimConfig enforces it
        raise ValueError(f"the ns3 kernel samples RTTs as ns-3 does, got {config.rtt_sampling!r}")
    snd = Ns3Sender(EventQueue(), None, params, config, size_bytes)
    PI = np.zeros(N_PI, np.int64)
    PI[P_N] = snd.n
    PI[P_SIZE] = snd.size
    PI[P_MSS] = snd.mss
    PI[P_B] = params.b
    PI[P_DUPT] = snd.dup_t
    PI[P_LT] = int(snd.lt)
    PI[P_HDR] = config.header_bytes
    PI[P_QUICK] = config.quick_acks
    PI[P_FIN] = int(config.fin)
    PF = np.zeros(N_PF, np.float64)
    PF[Q_RWNDB] = snd.rwnd_bytes
    PF[Q_MINRTO] = snd.min_rto
    PF[Q_MAXRTO] = snd.max_rto
    PF[Q_G] = snd.g
    PF[Q_DELACK] = config.delack_timeout_s
    PF[Q_RATE] = config.link_rate_bps
    PF[Q_DELAY] = config.one_way_delay(params.rtt_s)
    PF[Q_P] = params.p
    PF[Q_PACK] = config.p_ack
    PF[Q_CWND0] = snd.st.cwnd
    PF[Q_SSTH0] = snd.st.ssthresh
    PF[Q_RTO0] = snd.rto
    PF[Q_SRTT0] = snd.srtt
    PF[Q_RTTVAR0] = snd.rttvar
    return PI, PF


# Link, timer and receiver (the twins of kernel.py's, without timestamps) --------------

def _end(k, mss, size):
    e = k * mss
    return e if e < size else size


def _seg_len(k, mss, size):
    return _end(k + 1, mss, size) - k * mss


def _arm_rto(now, I, F):
    # Timer.arm: the deadline and a fresh seq (a re-arm replaces the pending expiry).
    F[RTO_T] = now + F[RTO]
    I[RTO_SEQ] = I[SEQ]
    I[SEQ] += 1
    I[RTO_ON] = 1


def _link_send(seg, now, I, F, PI, PF, u, S, QI, QF):
    # Sender._transmit (counters, timer armed if not pending) with Link.send_data.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    S[S_TXC, seg] += 1
    if S[S_TXC, seg] > 1:
        I[RETX] += 1
    ln = _seg_len(seg, mss, size)
    busy = F[BUSY]
    start = now if now > busy else busy
    F[BUSY] = start + (ln + PI[P_HDR]) * 8.0 / PF[Q_RATE]
    lost = False
    if PF[Q_P] > 0.0:
        if I[UI] >= u.shape[0]:
            I[FAIL] = FAIL_UNIFORMS
            return
        lost = u[I[UI]] < PF[Q_P]
        I[UI] += 1
    if lost:
        I[LOSTD] += 1
        if S[S_TXC, seg] == 1:
            I[FIRSTL] += 1
    else:
        cap = QI.shape[1]
        if I[DQN] == cap:
            I[FAIL] = FAIL_QUEUE
            return
        j = (I[DQH] + I[DQN]) % cap
        QF[QF_DT, j] = F[BUSY] + PF[Q_DELAY]
        QI[QI_DS, j] = I[SEQ]
        QI[QI_DG, j] = seg
        I[SEQ] += 1
        I[DQN] += 1
    if I[RTO_ON] == 0:
        _arm_rto(now, I, F)


def _send_ack(ack, now, I, PF, u, QI, QF):
    # Link.send_ack.
    lost = False
    if PF[Q_PACK] > 0.0:
        if I[UI] >= u.shape[0]:
            I[FAIL] = FAIL_UNIFORMS
            return
        lost = u[I[UI]] < PF[Q_PACK]
        I[UI] += 1
    if lost:
        I[LOSTA] += 1
        return
    cap = QI.shape[1]
    if I[AQN] == cap:
        I[FAIL] = FAIL_QUEUE
        return
    j = (I[AQH] + I[AQN]) % cap
    QF[QF_AT, j] = now + PF[Q_DELAY]
    QI[QI_AS, j] = I[SEQ]
    QI[QI_AA, j] = ack
    I[SEQ] += 1
    I[AQN] += 1


def _ack_now(now, I, PF, u, QI, QF):
    # Receiver._ack_now: every ACK sent uses up one quick ACK.
    I[PEND] = 0
    I[DL_ON] = 0
    if I[QUICK] > 0:
        I[QUICK] -= 1
    _send_ack(I[RNXT], now, I, PF, u, QI, QF)


def _on_segment(seg, now, I, F, PI, PF, u, S, QI, QF):
    # Receiver.on_segment (no timestamps).
    n = PI[P_N]
    if seg < I[RNXT] or (seg > I[RNXT] and S[S_RBUF, seg] != 0):
        _ack_now(now, I, PF, u, QI, QF)
        return
    if seg > I[RNXT]:
        S[S_RBUF, seg] = 1
        I[NBUF] += 1
        _ack_now(now, I, PF, u, QI, QF)
        return
    filled_gap = I[NBUF] > 0
    I[RNXT] += 1
    while I[RNXT] < n and S[S_RBUF, I[RNXT]] != 0:
        S[S_RBUF, I[RNXT]] = 0
        I[NBUF] -= 1
        I[RNXT] += 1
    if I[RNXT] == n:
        F[DELIV] = now
    if filled_gap or I[QUICK] > 0 or (PI[P_FIN] != 0 and I[RNXT] == n):
        _ack_now(now, I, PF, u, QI, QF)
    else:
        I[PEND] += 1
        if I[PEND] >= PI[P_B]:
            _ack_now(now, I, PF, u, QI, QF)
        elif I[DL_ON] == 0:
            F[DL_T] = now + PF[Q_DELACK]
            I[DL_SEQ] = I[SEQ]
            I[SEQ] += 1
            I[DL_ON] = 1


# ns-3 sender: scoreboard ------------------------------------------------------------

def _n3_pipe(I, PI, S):
    # Ns3Sender._pipe: outstanding - sacked - lost + retransmitted, bytes.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    b = 0
    for k in range(I[UNA], I[MAX]):
        if (1 - S[S_SACKED, k]) - S[S_LOST, k] + S[S_RFLAG, k] > 0:
            b += _seg_len(k, mss, size)
    return b


def _n3_add_reno_sack(I, S):
    for k in range(I[UNA] + 1, I[MAX]):
        if S[S_SACKED, k] == 0:
            S[S_SACKED, k] = 1
            return


def _n3_mark_head_lost(I, S):
    h = I[UNA]
    if h < I[MAX]:
        S[S_SACKED, h] = 0
        S[S_RFLAG, h] = 0
        S[S_LOST, h] = 1


# Timer -------------------------------------------------------------------------------

def _n3_rto_from_estimator(F, PF):
    k_var = 4.0 * F[RTTVAR]
    g = PF[Q_G]
    rto = F[SRTT] + (k_var if k_var > g else g)
    return rto if rto > PF[Q_MINRTO] else PF[Q_MINRTO]


def _n3_estimate_rtt(ack, now, I, F, PF, S, h_time):
    # EstimateRtt: a sample from the oldest history entry only, then the covered ones go.
    m = 0.0
    hh = I[HH]
    ht = I[HT]
    if hh < ht:
        if S[S_HRETX, hh] == 0 and ack >= S[S_HSEQ, hh] + S[S_HCNT, hh]:
            m = now - h_time[hh]
    while hh < ht and S[S_HSEQ, hh] + S[S_HCNT, hh] <= ack:
        hh += 1
    I[HH] = hh
    if m > 0.0:
        F[RTTVAR] = 0.75 * F[RTTVAR] + 0.25 * abs(F[SRTT] - m)
        F[SRTT] = 0.875 * F[SRTT] + 0.125 * m
        F[RTO] = _n3_rto_from_estimator(F, PF)


def _n3_new_ack_timer(now, reset, I, F, PF):
    I[BACKOFF] = 0
    if reset:
        F[RTO] = _n3_rto_from_estimator(F, PF)
        _arm_rto(now, I, F)


# Transmission ------------------------------------------------------------------------

def _n3_transmit(seg, now, I, F, PI, PF, u, S, h_time, QI, QF):
    # Ns3Sender._transmit: a retransmission marks the segment and its history entry, a
    # first transmission appends an entry; then Sender._transmit.
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
        h_time[j] = now
        S[S_HRETX, j] = 0
        I[HT] = j + 1
    _link_send(seg, now, I, F, PI, PF, u, S, QI, QF)


def _n3_next_seg(I, PI, PF, S):
    for k in range(I[UNA], I[MAX]):
        if S[S_LOST, k] != 0 and S[S_RFLAG, k] == 0 and S[S_SACKED, k] == 0:
            return k
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    if I[MAX] < PI[P_N] and _end(I[MAX], mss, size) - _end(I[UNA], mss, size) < PF[Q_RWNDB]:
        return I[MAX]
    return -1


def _n3_send_allowed(now, I, F, PI, PF, u, S, h_time, QI, QF):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    while True:
        if I[STATE] == OPEN and PI[P_FIN] != 0 and I[MAX] >= n:
            return  # CA_OPEN in FIN_WAIT_1
        rw = PF[Q_RWNDB]
        cw = F[CWND]
        win = cw if cw < rw else rw  # min(rwnd_bytes, cwnd)
        avail = win - _n3_pipe(I, PI, S)
        if avail <= 0:
            return
        seg = _n3_next_seg(I, PI, PF, S)
        if seg < 0:
            return
        if avail < mss and size - seg * mss > avail:
            return  # silly-window avoidance
        _n3_transmit(seg, now, I, F, PI, PF, u, S, h_time, QI, QF)
        if I[FAIL] != 0:
            return
        if seg == I[MAX]:
            I[MAX] += 1


# Window growth -----------------------------------------------------------------------

def _n3_increase_window(segs, F, PI):
    mss = PI[P_MSS]
    if F[CWND] < F[SSTH] and segs >= 1:
        F[CWND] += mss
        segs -= 1
    if F[CWND] >= F[SSTH] and segs > 0:
        x = mss * mss / F[CWND]
        F[CWND] += float(int(x if x > 1.0 else 1.0))  # max(1.0, x)


# Events ------------------------------------------------------------------------------

def _n3_on_rto(now, I, F, PI, PF, u, S, h_time, QI, QF):
    mss = PI[P_MSS]
    I[TOUT] += 1
    I[BACKOFF] += 1
    if I[BACKOFF] > I[MAXBO]:
        I[MAXBO] = I[BACKOFF]
    in_flight = _n3_pipe(I, PI, S)
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
    I[STATE] = LOSS
    F[CWND] = float(mss)
    _n3_send_allowed(now, I, F, PI, PF, u, S, h_time, QI, QF)


def _n3_discard_up_to(ack, I, S):
    for k in range(I[UNA], ack):
        S[S_SACKED, k] = 0
        S[S_LOST, k] = 0
        S[S_RFLAG, k] = 0
    I[UNA] = ack
    if ack < I[MAX] and S[S_SACKED, ack] != 0:  # a Reno mark on the new head moves on
        S[S_SACKED, ack] = 0
        _n3_add_reno_sack(I, S)
        _n3_mark_head_lost(I, S)


def _n3_enter_recovery(now, I, F, PI, PF, u, S, h_time, QI, QF):
    mss = PI[P_MSS]
    I[RECOVER] = I[MAX]
    I[RACT] = 1
    I[STATE] = RECOVERY
    _n3_add_reno_sack(I, S)
    _n3_mark_head_lost(I, S)
    F[SSTH] = float(max(2 * mss, (_n3_pipe(I, PI, S) + mss) // 2))
    F[CWND] = F[SSTH]
    I[FRX] += 1
    _n3_transmit(I[UNA], now, I, F, PI, PF, u, S, h_time, QI, QF)


def _n3_dup_ack(now, I, F, PI, PF, u, S, h_time, QI, QF):
    if I[STATE] == LOSS:
        return  # dupacks are ignored after a timeout
    if I[STATE] != RECOVERY:
        I[DUP] += 1
    if I[STATE] == OPEN:
        I[STATE] = DISORDER
    if I[STATE] == RECOVERY:
        _n3_add_reno_sack(I, S)
    elif I[STATE] == DISORDER:
        if I[DUP] == PI[P_DUPT] and (I[UNA] >= I[RECOVER] or I[RACT] == 0):
            _n3_enter_recovery(now, I, F, PI, PF, u, S, h_time, QI, QF)
        elif PI[P_LT] != 0:
            _n3_add_reno_sack(I, S)


def _n3_process_new_ack(ack, old, now, I, F, PI, PF, u, S, h_time, QI, QF):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    nbytes = _end(ack, mss, size) - _end(old, mss, size)
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
        return
    if I[STATE] == RECOVERY and ack < I[RECOVER]:  # partial ACK
        _n3_mark_head_lost(I, S)
        _n3_transmit(ack, now, I, F, PI, PF, u, S, h_time, QI, QF)
        if I[FAIL] != 0:
            return
        _n3_new_ack_timer(now, I[FPART] != 0, I, F, PF)
        I[FPART] = 0
        return
    if I[STATE] == LOSS and ack < I[RECOVER]:
        _n3_increase_window(segs, F, PI)
        _n3_new_ack_timer(now, True, I, F, PF)
        return
    exited = False
    if I[STATE] == DISORDER:
        I[STATE] = OPEN
    elif I[STATE] == RECOVERY:
        I[FPART] = 1
        segs = nbytes // mss
        I[STATE] = OPEN
        exited = True
    elif I[STATE] == LOSS:
        I[FPART] = 1
        segs = (_end(ack, mss, size) - _end(I[RECOVER], mss, size)) // mss
        I[STATE] = OPEN
    if ack >= I[RECOVER]:
        I[RACT] = 0
    if exited:  # the timer is armed twice (two sequence numbers), as the reference does
        _n3_new_ack_timer(now, True, I, F, PF)
        F[CWND] = F[SSTH]
    _n3_increase_window(segs, F, PI)
    _n3_new_ack_timer(now, True, I, F, PF)


def _n3_on_ack(ack, now, I, F, PI, PF, u, S, h_time, QI, QF):
    _n3_estimate_rtt(ack, now, I, F, PF, S, h_time)
    old = I[UNA]
    if ack < old:
        return
    if ack == old:
        if ack < I[MAX]:
            _n3_dup_ack(now, I, F, PI, PF, u, S, h_time, QI, QF)
            if I[FAIL] != 0:
                return
            _n3_send_allowed(now, I, F, PI, PF, u, S, h_time, QI, QF)
        return
    _n3_discard_up_to(ack, I, S)
    _n3_process_new_ack(ack, old, now, I, F, PI, PF, u, S, h_time, QI, QF)
    if I[FAIL] != 0:
        return
    if I[DONE] == 0:
        _n3_send_allowed(now, I, F, PI, PF, u, S, h_time, QI, QF)


def _n3_run_one(u, PI, PF, I, F, S, h_time, QI, QF):
    n = PI[P_N]
    I[:] = 0
    F[:] = 0.0
    S[:, :n] = 0
    I[RECOVER] = 0
    I[RACT] = 0
    I[FPART] = 1
    I[STATE] = OPEN
    F[CWND] = PF[Q_CWND0]
    F[SSTH] = PF[Q_SSTH0]
    F[SRTT] = PF[Q_SRTT0]
    F[RTTVAR] = PF[Q_RTTVAR0]
    F[RTO] = PF[Q_RTO0]
    I[QUICK] = PI[P_QUICK]
    cap = QI.shape[1]
    _n3_send_allowed(0.0, I, F, PI, PF, u, S, h_time, QI, QF)
    while I[DONE] == 0 and I[FAIL] == 0:
        kind = -1
        bt = np.inf
        bs = 0
        if I[DQN] > 0:
            kind = 0
            bt = QF[QF_DT, I[DQH]]
            bs = QI[QI_DS, I[DQH]]
        if I[AQN] > 0:
            t = QF[QF_AT, I[AQH]]
            s = QI[QI_AS, I[AQH]]
            if kind < 0 or before(t, s, bt, bs):
                kind = 1
                bt = t
                bs = s
        if I[RTO_ON] != 0:
            t = F[RTO_T]
            s = I[RTO_SEQ]
            if kind < 0 or before(t, s, bt, bs):
                kind = 2
                bt = t
                bs = s
        if I[DL_ON] != 0:
            t = F[DL_T]
            s = I[DL_SEQ]
            if kind < 0 or before(t, s, bt, bs):
                kind = 3
                bt = t
                bs = s
        if kind == 0:
            seg = QI[QI_DG, I[DQH]]
            I[DQH] = (I[DQH] + 1) % cap
            I[DQN] -= 1
            _on_segment(seg, bt, I, F, PI, PF, u, S, QI, QF)
        elif kind == 1:
            ack = QI[QI_AA, I[AQH]]
            I[AQH] = (I[AQH] + 1) % cap
            I[AQN] -= 1
            _n3_on_ack(ack, bt, I, F, PI, PF, u, S, h_time, QI, QF)
        elif kind == 2:
            I[RTO_ON] = 0
            _n3_on_rto(bt, I, F, PI, PF, u, S, h_time, QI, QF)
        elif kind == 3:
            I[DL_ON] = 0
            if I[PEND] > 0:
                _ack_now(bt, I, PF, u, QI, QF)
        else:
            I[FAIL] = FAIL_STALL
    return I[FAIL]


def run_batch_ns3(U, PI, PF, out, status):
    """Run ``U.shape[0]`` ns-3 transfers; row ``r`` of ``U`` holds run ``r``'s uniforms.

    Parameters
    ----------
    U : ndarray of float64, shape (runs, k)
        Per-run uniforms: the first ``block_size(n, p, p_ack)`` of
        ``Generator(PCG64(child)).random``, consumed in order.
    PI, PF : ndarray of int64 / float64
        Parameters from :func:`pack_params_ns3`.
    out : ndarray of float64, shape (runs, N_OUT)
        Filled with the measures named in :data:`OUT_FIELDS`.
    status : ndarray of int64, shape (runs,)
        0 for a completed run; non-zero if the run must be redone on the reference path
        (uniforms or queue space exhausted).
    """
    n = PI[P_N]
    cap = 4 * (n + int(PF[Q_RWNDB] / PI[P_MSS])) + 64
    state = (np.zeros(N_IS, np.int64), np.zeros(N_FS, np.float64), np.zeros((N_S, n), np.int64),
             np.zeros(n, np.float64), np.zeros((4, cap), np.int64), np.zeros((2, cap), np.float64))
    # views numba does not reference-count (accel.uncounted: every helper call would
    # otherwise increment and decrement each array it is given, atomically)
    U, PI, PF, out, status = uncounted((U, PI, PF, out, status))
    I, F, S, h_time, QI, QF = uncounted(state)
    for r in range(U.shape[0]):
        st = _n3_run_one(U[r], PI, PF, I, F, S, h_time, QI, QF)
        status[r] = st
        out[r, 0] = F[COMPL]
        out[r, 1] = F[DELIV]
        out[r, 2] = I[LOSTD]
        out[r, 3] = I[LOSTA]
        out[r, 4] = S[S_TXC, :n].sum()
        out[r, 5] = I[RETX]
        out[r, 6] = I[TOUT]
        out[r, 7] = I[MAXBO]
        out[r, 8] = I[FRX]
        out[r, 9] = I[FIRSTL]
    held(state)



_NAMES = ("tick", "before", "_end", "_seg_len", "_arm_rto", "_link_send", "_send_ack", "_ack_now", "_on_segment",
          "_n3_pipe", "_n3_add_reno_sack", "_n3_mark_head_lost", "_n3_rto_from_estimator",
          "_n3_estimate_rtt", "_n3_new_ack_timer", "_n3_transmit", "_n3_next_seg",
          "_n3_send_allowed", "_n3_increase_window", "_n3_on_rto", "_n3_discard_up_to",
          "_n3_enter_recovery", "_n3_dup_ack", "_n3_process_new_ack", "_n3_on_ack",
          "_n3_run_one")


@functools.cache
def compiled_run_batch_ns3():
    """The numba-compiled :func:`run_batch_ns3`, or ``None`` when numba is unavailable.

    Compiled once per process (and cached on disk by numba), as
    :func:`latency_model.sim.kernel.compiled_run_batch` is.
    """
    return compile_twin(globals(), _NAMES, run_batch_ns3)
