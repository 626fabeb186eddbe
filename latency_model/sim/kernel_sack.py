"""Array kernel of the simulator for the SACK sender (optional numba compilation).

The same algorithm as :class:`~latency_model.sim.sack.SackSender` (RFC 6675 scoreboard and
recovery, PRR per RFC 6937, the slow start after a timeout that skips SACKed segments) over
:class:`~latency_model.sim.sender.Sender`'s growth and RFC 6298 timer, with the SACK
receiver of :mod:`.receiver`, :mod:`.link` and :mod:`.engine`, rewritten over flat arrays
so that numba can compile it: the twin of
``run_transfer(params, size_bytes=..., config=SimConfig(sender="sack", prr=...), rng=...)``
for :class:`~latency_model.growth.StandardRule`, random losses and no drop-tail buffer, with
or without ``rack_tlp`` (RFC 8985: RACK's loss marks and reordering timer, the tail loss
probe, as :mod:`.sack` models them; the ``"rack"`` timer is a fifth scalar event head), as
:mod:`.kernel` is the twin of the RFC sender.

Why it is bit-identical to the reference path (the method of :mod:`.kernel`):

* the per-run uniforms are drawn by the caller exactly as
  :class:`~latency_model.sim.link.UniformStream` draws its first block
  (``Generator(PCG64(child)).random(block_size(n, p, p_ack))``), and they are consumed in
  the same order (one per data transmission when p > 0, one per ACK when the ACK loss
  probability is > 0);
* the reference heap orders events by ``(time, seq)``; here data arrivals and ACK arrivals
  are FIFO queues (a FIFO link and a constant delay keep each stream in time order) and the
  retransmission, delayed-ACK and RACK timers are scalars, each carrying the ``seq`` it was
  given when scheduled (every arming takes one, as ``Timer.arm`` pushes one event), and the
  earliest ``(time, seq)`` of the heads is taken: the same order;
* every floating-point expression is written in the same order with the same operand types
  (where the reference mixes int and float, e.g. PRR's ``cwnd = pipe + sndcnt * MSS`` with
  an integer ``sndcnt``, the values are integers far below 2**53, so float arithmetic gives
  the same value).

State: per-segment rows (transmissions, retransmitted, SACKed, the receiver's out-of-order
buffer, RACK's lost mark and retransmission-in-flight flag, the segments an ACK newly
delivers) in one 2-D array, the receiver's SACK blocks (most recently changed first) in a
2 x n array with a count, and every ACK in the queue carries its (up to 3) blocks.

The module shares no slot constant with :mod:`.kernel`, only the event order
(:func:`.engine.before`; a helper from another module is safe: see :mod:`.kernel_ns3`).

A run returns a non-zero status (and the caller reruns it on the reference path, from the
same seed) if it needs more uniforms than its first block or more queue space than allocated.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..accel import compile_twin, held, numba_available, uncounted
from .engine import before, tick  # noqa: F401 (tick: a helper of before, compiled with it)

__all__ = ["run_batch_sack", "pack_params_sack", "compiled_run_batch_sack", "numba_available",
           "N_OUT", "OUT_FIELDS", "FAIL_UNIFORMS", "FAIL_QUEUE", "FAIL_STALL"]

# Integer state slots.
(UNA, NXT, MAX, RECOVER, INREC, LOSS, DUP, LTB, BACKOFF, RETX, TOUT, MAXBO, FRX, FIRSTL,
 HSACK, HRXT, RESCUE, PRR_DEL, PRR_OUT, RFS,
 UI, SEQ, RTO_ON, RTO_SEQ, DL_ON, DL_SEQ, RNXT, NBUF, PEND, QUICK, LASTACK, NBLK,
 LOSTD, LOSTA, DQH, DQN, AQH, AQN, DONE, FAIL,
 RK_END, RK_FACK, RK_REORD, RK_ON, RK_SEQ, RK_MODE, TLP_END, TLP_RETX, NSAMP, SAMP_PROBE,
 SENT_NEW, NNEW) = range(52)
N_IS = 52
# Float state slots.
(CWND, SSTH, BACKED, RTO, SRTT, RTTVAR, BUSY, RTO_T, DL_T, DELIV, COMPL, TSREC,
 RK_XTS, RK_RTT, MIN_RTT, RK_T) = range(16)
N_FS = 16
# Integer parameters.
(P_N, P_SIZE, P_MSS, P_B, P_DUPT, P_LTLO, P_LTHI, P_TAIL, P_ER, P_FIXED, P_ABC, P_HDR,
 P_QUICK, P_FIN, P_TS, P_PRR, P_RACK) = range(17)
N_PI = 17
# Float parameters.
(Q_RWNDB, Q_MINRTO, Q_MAXRTO, Q_G, Q_DELACK, Q_RATE, Q_DELAY, Q_P, Q_PACK, Q_CWND0, Q_SSTH0,
 Q_RTO0) = range(12)
N_PF = 12
# PRR modes (P_PRR).
PRR_SSRB, PRR_CRB, PRR_OFF = range(3)
# RACK timer modes (RK_MODE): SackSender.rack_mode "" / "reo" / "tlp".
RK_NONE, RK_REO, RK_TLP = range(3)
# Rows of the per-segment integer array S: transmissions, ever retransmitted, SACKed, the
# receiver's out-of-order buffer, RACK's loss mark, a retransmission in flight (rtx_out),
# and (by position, not segment) the segments the current ACK newly delivers.
S_TXC, S_RETX, S_SACKED, S_RBUF, S_LOST, S_RTXO, S_NEW = range(7)
N_S = 7
WC_DEL_ACK_T_S = 0.2  # sack.WC_DEL_ACK_T_S (a copy: no constant is shared across files)
EPS_S = 1e-9  # sack._EPS_S
# Rows of the FIFO queues QI (int64) and QF (float64): data seq / segment / send time
# (TSval), arrival time; ACK seq / number / blocks (count, then lo, hi x 3), arrival time, TSecr.
QI_DS, QI_DG, QI_AS, QI_AA, QI_AN, QI_B0 = range(6)
N_QI = QI_B0 + 6
QF_DT, QF_DTS, QF_AT, QF_AE = range(4)
N_QF = 4

OUT_FIELDS = ("completion_s", "delivered_s", "lost_packets", "lost_acks",
              "data_packets_sent", "retransmissions", "timeouts", "max_backoff",
              "fast_retransmits", "first_transmissions_lost")
"""Columns of ``out``: the same as :data:`latency_model.sim.kernel.OUT_FIELDS`."""
N_OUT = len(OUT_FIELDS)

FAIL_UNIFORMS = 1
FAIL_QUEUE = 2
FAIL_STALL = 3

_PRR_CODES = {"ssrb": PRR_SSRB, "crb": PRR_CRB, "off": PRR_OFF}


def pack_params_sack(params, size_bytes: int, config):
    """Integer and float parameter arrays of :func:`run_batch_sack` for one transfer size.

    The sender's initial values (cwnd, ssthresh, receiver window, first RTO, the Limited
    Transmit window, the timer bounds) are read from a
    :class:`~latency_model.sim.sack.SackSender` built for the same arguments, so they are
    the reference path's to the last bit.

    Parameters
    ----------
    params : TcpParams
        TCP parameters (data loss probability ``params.p``), rule exactly
        :class:`~latency_model.growth.StandardRule`.
    size_bytes : int
        Transfer size, bytes (>= 1).
    config : SimConfig
        ``sender="sack"`` settings (any ``prr``, ``rack_tlp``) without a drop-tail buffer.

    Returns
    -------
    (ndarray of int64, ndarray of float64)

    Raises
    ------
    ValueError
        For what the kernel does not run: another sender, a drop-tail buffer, a growth
        rule other than :class:`~latency_model.growth.StandardRule`.
    """
    from ..growth import StandardRule  # noqa: PLC0415
    from .engine import EventQueue  # noqa: PLC0415
    from .sack import SackSender  # noqa: PLC0415

    if config.sender != "sack":
        raise ValueError(f"the sack kernel runs sender 'sack', got {config.sender!r}")
    if config.queue_packets is not None:
        raise ValueError("the sack kernel's link has no drop-tail buffer: queue_packets must be "
                         f"None, got {config.queue_packets!r}")
    if config.rtt_sampling not in ("karn", "timestamps"):  # pragma: no cover - SimConfig
        raise ValueError(f"the sack kernel samples RTTs by karn or timestamps, got "
                         f"{config.rtt_sampling!r}")
    if type(params.rule) is not StandardRule:
        raise ValueError(f"the sack kernel runs the standard rule, got {params.rule.name!r}")
    snd = SackSender(EventQueue(), None, params, config, size_bytes)
    PI = np.zeros(N_PI, np.int64)
    PI[P_N] = snd.n
    PI[P_SIZE] = snd.size
    PI[P_MSS] = snd.mss
    PI[P_B] = params.b
    PI[P_DUPT] = snd.dup_t
    PI[P_LTLO] = snd.lt_lo
    PI[P_LTHI] = snd.lt_hi
    PI[P_TAIL] = int(snd.tail)
    PI[P_ER] = int(snd.er)
    PI[P_FIXED] = int(snd.fixed_rto)
    PI[P_ABC] = 0 if params.rule.abc_l is None else params.rule.abc_l
    PI[P_HDR] = config.header_bytes
    PI[P_QUICK] = config.quick_acks
    PI[P_FIN] = int(config.fin)
    PI[P_TS] = int(snd.timestamps)
    PI[P_PRR] = _PRR_CODES[config.prr]
    PI[P_RACK] = int(config.rack_tlp)
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
    return PI, PF


# Link, timer and receiver ---------------------------------------------------------------

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


def _transmit(seg, now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # Sender._transmit (counters, timer armed if not pending) with Link.send_data.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    S[S_TXC, seg] += 1
    if S[S_TXC, seg] > 1:
        I[RETX] += 1
        S[S_RETX, seg] = 1
    sent_at[seg] = now
    if PI[P_RACK] != 0:  # SackSender._transmit (its flags are set after the link's work,
        if S[S_TXC, seg] > 1:  # which does not read them)
            S[S_RTXO, seg] = 1
        else:
            I[SENT_NEW] = 1
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
        QF[QF_DTS, j] = now
        QI[QI_DS, j] = I[SEQ]
        QI[QI_DG, j] = seg
        I[SEQ] += 1
        I[DQN] += 1
    if I[RTO_ON] == 0:
        _arm_rto(now, I, F)


def _send_ack(ack, now, I, F, PF, u, QI, QF, RB):
    # Link.send_ack with the receiver's first three SACK blocks.
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
    QF[QF_AE, j] = F[TSREC]
    QI[QI_AS, j] = I[SEQ]
    QI[QI_AA, j] = ack
    nb = I[NBLK] if I[NBLK] < 3 else 3
    QI[QI_AN, j] = nb
    for i in range(nb):
        QI[QI_B0 + 2 * i, j] = RB[0, i]
        QI[QI_B0 + 2 * i + 1, j] = RB[1, i]
    I[SEQ] += 1
    I[AQN] += 1


def _ack_now(now, I, F, PF, u, QI, QF, RB):
    # Receiver._ack_now: every ACK sent uses up one quick ACK.
    I[PEND] = 0
    I[DL_ON] = 0
    if I[QUICK] > 0:
        I[QUICK] -= 1
    I[LASTACK] = I[RNXT]
    _send_ack(I[RNXT], now, I, F, PF, u, QI, QF, RB)


def _sack_first(seg, I, PI, S, RB):
    # Receiver._sack_first: the block holding seg first, the blocks merged into it dropped,
    # the others in their order.
    n = PI[P_N]
    lo = seg
    while lo - 1 > I[RNXT] and S[S_RBUF, lo - 1] != 0:
        lo -= 1
    hi = seg + 1
    while hi < n and S[S_RBUF, hi] != 0:
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


def _on_segment(seg, tsval, now, I, F, PI, PF, u, S, QI, QF, RB):
    # Receiver.on_segment with SACK.
    n = PI[P_N]
    if PI[P_TS] != 0 and seg <= I[LASTACK]:  # RFC 7323 Section 4.3
        F[TSREC] = tsval
    if seg < I[RNXT] or (seg > I[RNXT] and S[S_RBUF, seg] != 0):
        if seg > I[RNXT]:
            _sack_first(seg, I, PI, S, RB)
        _ack_now(now, I, F, PF, u, QI, QF, RB)
        return
    if seg > I[RNXT]:
        S[S_RBUF, seg] = 1
        I[NBUF] += 1
        _sack_first(seg, I, PI, S, RB)
        _ack_now(now, I, F, PF, u, QI, QF, RB)
        return
    filled_gap = I[NBUF] > 0
    I[RNXT] += 1
    while I[RNXT] < n and S[S_RBUF, I[RNXT]] != 0:
        S[S_RBUF, I[RNXT]] = 0
        I[NBUF] -= 1
        I[RNXT] += 1
    if I[NBLK] > 0:
        m = 0
        for i in range(I[NBLK]):
            if RB[0, i] > I[RNXT]:
                RB[0, m] = RB[0, i]
                RB[1, m] = RB[1, i]
                m += 1
        I[NBLK] = m
    if I[RNXT] == n:
        F[DELIV] = now
    if filled_gap or I[QUICK] > 0 or (PI[P_FIN] != 0 and I[RNXT] == n):
        _ack_now(now, I, F, PF, u, QI, QF, RB)
    else:
        I[PEND] += 1
        if I[PEND] >= PI[P_B]:
            _ack_now(now, I, F, PF, u, QI, QF, RB)
        elif I[DL_ON] == 0:
            F[DL_T] = now + PF[Q_DELACK]
            I[DL_SEQ] = I[SEQ]
            I[SEQ] += 1
            I[DL_ON] = 1


# SACK sender: scoreboard ------------------------------------------------------------

def _sk_flight(I, PI):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    return _end(I[NXT], mss, size) - _end(I[UNA], mss, size)


def _sk_can_send_new(I, PI, PF):
    # Sender._can_send_new.
    if I[NXT] >= PI[P_N]:
        return False
    return _sk_flight(I, PI) + _seg_len(I[NXT], PI[P_MSS], PI[P_SIZE]) <= PF[Q_RWNDB]


def _sk_dup_thresh(I, PI, PF):
    dup_t = PI[P_DUPT]
    thresh = dup_t
    if PI[P_TAIL] != 0 and I[UNA] >= PI[P_N] - dup_t:
        thresh = 1
    if PI[P_ER] != 0:
        oseg = I[NXT] - I[UNA]
        if 2 <= oseg and oseg <= dup_t and not _sk_can_send_new(I, PI, PF):
            thresh = min(thresh, oseg - 1)
    return thresh


def _sk_is_lost(seg, I, PI, PF, S):
    thresh = _sk_dup_thresh(I, PI, PF)
    count = 0
    for k in range(seg + 1, I[HSACK]):
        if S[S_SACKED, k] != 0:
            count += 1
            if count >= thresh:
                return True
    return False


def _sk_pipe(I, PI, PF, S):
    # SetPipe(), bytes.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    if PI[P_RACK] != 0:  # SackSender._rack_pipe
        total = 0
        for s in range(I[UNA], I[MAX]):
            if S[S_SACKED, s] != 0:
                continue
            if S[S_LOST, s] == 0:
                total += _seg_len(s, mss, size)
            if S[S_RTXO, s] != 0:
                total += _seg_len(s, mss, size)
        return total
    thresh = _sk_dup_thresh(I, PI, PF)
    above = 0
    total = 0
    for s in range(I[MAX] - 1, I[UNA] - 1, -1):
        if S[S_SACKED, s] != 0:
            above += 1
            continue
        length = _seg_len(s, mss, size)
        if above < thresh:
            total += length
        if s < I[HRXT]:
            total += length
    return total


def _sk_update(ack, blk, nb, I, S):
    # Update(): newly SACKed segments.
    new = 0
    for i in range(nb):
        lo = blk[2 * i]
        hi = blk[2 * i + 1]
        for k in range(lo if lo > ack else ack, hi):
            if S[S_SACKED, k] == 0:
                S[S_SACKED, k] = 1
                new += 1
        if hi > I[HSACK]:
            I[HSACK] = hi
    return new


def _sk_next_seg(I, PI, PF, S):
    # NextSeg(): (segment, rule) or (-1, 0).
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    if PI[P_RACK] != 0:
        return _rk_next_seg(I, PI, PF, S)
    start = I[HRXT] if I[HRXT] > I[UNA] else I[UNA]
    thresh = _sk_dup_thresh(I, PI, PF)
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
            _sk_flight(I, PI) + _seg_len(I[MAX], mss, size) <= PF[Q_RWNDB]):
        return I[MAX], 2
    if first_hole >= 0:
        return first_hole, 3
    if I[RESCUE] < I[UNA]:
        for s in range(I[MAX] - 1, I[UNA] - 1, -1):
            if S[S_SACKED, s] == 0:
                return s, 4
    return -1, 0


# Sending ----------------------------------------------------------------------------

def _sk_base_send(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # Sender.send_allowed (no LT credit: the SACK sender never grants one).
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    cw = F[CWND]
    rw = PF[Q_RWNDB]
    limit = rw if rw < cw else cw  # min(cwnd, rwnd)
    while I[NXT] < n:
        flight = _sk_flight(I, PI)
        if flight > 0 and flight + _seg_len(I[NXT], mss, size) > limit:
            break
        _transmit(I[NXT], now, I, F, PI, PF, u, S, sent_at, QI, QF)
        if I[FAIL] != 0:
            return
        I[NXT] += 1
        if I[NXT] > I[MAX]:
            I[MAX] = I[NXT]


def _sk_loss_send(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender._loss_send: the slow start after a timeout skips SACKed segments.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    cw = F[CWND]
    rw = PF[Q_RWNDB]
    limit = rw if rw < cw else cw
    out = 0
    for k in range(I[UNA], I[NXT]):
        if S[S_SACKED, k] == 0:
            out += _seg_len(k, mss, size)
    while I[NXT] < n:
        s = I[NXT]
        if S[S_SACKED, s] != 0:
            I[NXT] += 1
            continue
        length = _seg_len(s, mss, size)
        if out > 0 and (out + length > limit
                        or _end(s + 1, mss, size) - _end(I[UNA], mss, size) > rw):
            break
        _transmit(s, now, I, F, PI, PF, u, S, sent_at, QI, QF)
        if I[FAIL] != 0:
            return
        out += length
        I[NXT] += 1
        if I[NXT] > I[MAX]:
            I[MAX] = I[NXT]


def _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # RFC 6675 step (C): NextSeg while cwnd - pipe >= 1 SMSS.
    mss = PI[P_MSS]
    while F[CWND] - _sk_pipe(I, PI, PF, S) >= mss:
        seg, rule = _sk_next_seg(I, PI, PF, S)
        if seg < 0:
            return
        _transmit(seg, now, I, F, PI, PF, u, S, sent_at, QI, QF)
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


def _sk_send_allowed(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    if I[INREC] != 0:
        _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
    elif I[LOSS] != 0:
        _sk_loss_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
    else:
        _sk_base_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)


def _sk_prr_update(delivered, I, F, PI, PF, S):
    # RFC 6937 Section 3 (SackSender._prr_update).
    if PI[P_PRR] == PRR_OFF:
        return
    mss = PI[P_MSS]
    I[PRR_DEL] += delivered
    pipe = _sk_pipe(I, PI, PF, S)
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


def _sk_limited_transmit(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # RFC 6675 Section 5 step (3).
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    I[HRXT] = I[UNA]
    while (I[NXT] < n and _sk_can_send_new(I, PI, PF)
           and F[CWND] - _sk_pipe(I, PI, PF, S) >= mss):
        sent_end = _end(I[NXT], mss, size)
        _transmit(I[NXT], now, I, F, PI, PF, u, S, sent_at, QI, QF)
        if I[FAIL] != 0:
            return
        I[NXT] += 1
        if I[NXT] > I[MAX]:
            I[MAX] = I[NXT]
        I[LTB] += _end(I[NXT], mss, size) - sent_end


def _ssthresh_after_loss(flight, mss):
    # StandardRule / GrowthRule.ssthresh_after_loss: max(FlightSize/2, 2 MSS).
    return max(flight / 2.0, 2.0 * mss)


def _sk_enter_recovery(now, delivered, I, F, PI, PF, u, S, sent_at, QI, QF):
    # RFC 6675 Section 5 step (4), PRR initialisation.
    mss = PI[P_MSS]
    flight = _sk_flight(I, PI) - I[LTB]
    F[SSTH] = _ssthresh_after_loss(flight, mss)
    I[RECOVER] = I[MAX] - 1
    I[INREC] = 1
    I[FRX] += 1
    I[LTB] = 0
    I[RESCUE] = -1
    I[RFS] = I[NXT] - I[UNA]
    I[PRR_DEL] = 0
    I[PRR_OUT] = 1
    _transmit(I[UNA], now, I, F, PI, PF, u, S, sent_at, QI, QF)
    if I[FAIL] != 0:
        return
    I[HRXT] = I[UNA] + 1
    if PI[P_PRR] == PRR_OFF:
        F[CWND] = F[SSTH]
    else:
        _sk_prr_update(delivered, I, F, PI, PF, S)
    _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)


# Timer and growth -------------------------------------------------------------------

def _rtt_sample(r, I, F, PI, PF):
    if PI[P_RACK] != 0:  # SackSender._rtt_sample
        I[NSAMP] += 1
        if r < F[MIN_RTT]:
            F[MIN_RTT] = r
    if PI[P_FIXED] != 0:
        return
    if F[SRTT] < 0.0:
        F[SRTT] = r
        F[RTTVAR] = r / 2.0
    else:
        F[RTTVAR] = 0.75 * F[RTTVAR] + 0.25 * abs(F[SRTT] - r)
        F[SRTT] = 0.875 * F[SRTT] + 0.125 * r
    k_var = 4.0 * F[RTTVAR]
    g = PF[Q_G]
    rto = F[SRTT] + (k_var if k_var > g else g)
    if rto < PF[Q_MINRTO]:
        rto = PF[Q_MINRTO]
    if rto > PF[Q_MAXRTO]:
        rto = PF[Q_MAXRTO]
    F[RTO] = rto


def _on_ack_growth(acked, F, PI):
    # StandardRule.on_ack, operation for operation.
    mss = PI[P_MSS]
    abc = PI[P_ABC]
    if F[CWND] < F[SSTH]:
        limit = mss if abc == 0 else abc * mss
        F[CWND] += min(acked, limit)
    elif abc == 0:
        F[CWND] += mss * mss / F[CWND]
    else:
        F[BACKED] += acked
        if F[BACKED] >= F[CWND]:
            F[BACKED] -= F[CWND]
            F[CWND] += mss


# Events -----------------------------------------------------------------------------

def _sk_on_rto(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender.on_rto then Sender.on_rto.
    mss = PI[P_MSS]
    n = PI[P_N]
    if PI[P_RACK] != 0:
        I[SENT_NEW] = 0
        I[RK_ON] = 0
        I[TLP_END] = -1
        for k in range(n):
            S[S_LOST, k] = 0
            S[S_RTXO, k] = 0
    I[LOSS] = 1
    I[RESCUE] = -1
    I[TOUT] += 1
    I[BACKOFF] += 1
    if I[BACKOFF] > I[MAXBO]:
        I[MAXBO] = I[BACKOFF]
    if I[BACKOFF] == 1:
        F[SSTH] = _ssthresh_after_loss(_sk_flight(I, PI), mss)
    F[CWND] = float(mss)
    F[BACKED] = 0.0
    I[INREC] = 0
    I[DUP] = 0
    I[LTB] = 0
    I[RECOVER] = I[MAX] - 1
    if PI[P_FIXED] == 0:
        F[RTO] = min(2.0 * F[RTO], PF[Q_MAXRTO])
    I[NXT] = I[UNA]
    _sk_send_allowed(now, I, F, PI, PF, u, S, sent_at, QI, QF)
    if PI[P_RACK] != 0 and I[FAIL] == 0:
        _rk_timers(now, 0.0, False, I, F, PI, PF, S)


def _sk_new_ack(ack, tsecr, now, delivered, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender._new_sack_ack.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    acked = _end(ack, mss, size) - _end(I[UNA], mss, size)
    if PI[P_TS] != 0:
        _rtt_sample(now - tsecr, I, F, PI, PF)
    else:
        valid = True
        for k in range(I[UNA], ack):
            if S[S_RETX, k] != 0:
                valid = False
                break
        if valid:
            _rtt_sample(now - sent_at[ack - 1], I, F, PI, PF)
    I[UNA] = ack
    if I[NXT] < ack:
        I[NXT] = ack
    I[BACKOFF] = 0
    if ack >= PI[P_N]:
        F[COMPL] = now
        I[RTO_ON] = 0
        I[DONE] = 1
        return
    if I[LOSS] != 0 and ack > I[RECOVER]:
        I[LOSS] = 0
    if I[INREC] != 0 and ack > I[RECOVER]:  # (A): end of recovery
        F[CWND] = F[SSTH]
        I[INREC] = 0
        I[DUP] = 0
    elif I[INREC] != 0:  # (B), (C)
        _sk_prr_update(delivered, I, F, PI, PF, S)
    else:
        I[DUP] = 0
        I[LTB] = 0
        _on_ack_growth(acked, F, PI)
    if I[NXT] > I[UNA]:
        _arm_rto(now, I, F)
    else:
        I[RTO_ON] = 0
    _sk_send_allowed(now, I, F, PI, PF, u, S, sent_at, QI, QF)


def _sk_dup_ack(now, new_sacked, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender._sack_dup_ack.
    if I[INREC] != 0:
        _sk_prr_update(new_sacked, I, F, PI, PF, S)
        _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
        return
    if I[LOSS] != 0:
        _sk_loss_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
        return
    I[DUP] += 1
    if I[UNA] > I[RECOVER] and (
            I[DUP] >= _sk_dup_thresh(I, PI, PF) or _sk_is_lost(I[UNA], I, PI, PF, S)):
        _sk_enter_recovery(now, new_sacked, I, F, PI, PF, u, S, sent_at, QI, QF)
    elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
        _sk_limited_transmit(now, I, F, PI, PF, u, S, sent_at, QI, QF)


def _sk_on_ack(ack, tsecr, now, blk, nb, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender.on_ack.
    if PI[P_RACK] != 0:
        _rk_on_ack(ack, tsecr, now, blk, nb, I, F, PI, PF, u, S, sent_at, QI, QF)
        return
    old_una = I[UNA]
    new_sacked = 0
    if nb > 0:
        new_sacked = _sk_update(ack if ack > old_una else old_una, blk, nb, I, S)
    if ack > old_una:
        delivered = new_sacked
        for k in range(old_una, ack):
            if S[S_SACKED, k] == 0:
                delivered += 1
        _sk_new_ack(ack, tsecr, now, delivered, I, F, PI, PF, u, S, sent_at, QI, QF)
    elif ack == old_una and I[MAX] > old_una and new_sacked > 0:
        _sk_dup_ack(now, new_sacked, I, F, PI, PF, u, S, sent_at, QI, QF)


# RACK-TLP (RFC 8985), PI[P_RACK] != 0 ------------------------------------------------

def _rk_next_seg(I, PI, PF, S):
    # SackSender._rack_next_seg.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    for s in range(I[UNA], I[MAX]):
        if S[S_LOST, s] != 0 and S[S_RTXO, s] == 0 and S[S_SACKED, s] == 0:
            return s, 1
    if I[MAX] < PI[P_N] and (
            _sk_flight(I, PI) + _seg_len(I[MAX], mss, size) <= PF[Q_RWNDB]):
        return I[MAX], 2
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


def _rk_segs_sacked(I, S):
    c = 0
    for k in range(I[UNA], I[HSACK]):
        if S[S_SACKED, k] != 0:
            c += 1
    return c


def _rk_update(now, tsecr, I, F, PI, S, sent_at):
    # SackSender._rack_update over the NNEW segments in row S_NEW (RFC 8985 6.2 steps 1-3).
    m = I[NNEW]
    if m == 0:
        return
    for i in range(m):
        k = S[S_NEW, i]
        if S[S_RETX, k] == 0:
            r = now - sent_at[k]
            if r < F[MIN_RTT]:
                F[MIN_RTT] = r
    best = -1
    best_ts = -1.0
    prior_fack = I[RK_FACK]
    for i in range(m):
        k = S[S_NEW, i]
        ts = sent_at[k]
        if S[S_RETX, k] != 0:
            if PI[P_TS] != 0 and tsecr < ts:
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


def _rk_reo_wnd(I, F, PI, S):
    if I[RK_REORD] == 0 and (I[INREC] != 0 or I[LOSS] != 0
                             or _rk_segs_sacked(I, S) >= PI[P_DUPT]):
        return 0.0
    w = F[MIN_RTT] / 4.0
    if F[SRTT] > 0.0:
        return F[SRTT] if F[SRTT] < w else w  # min(w, srtt)
    return w


def _rk_detect(now, I, F, PI, S, sent_at):
    # SackSender._rack_detect: (seconds until the next expiry or 0, segments newly marked).
    if F[RK_XTS] < 0.0:
        return 0.0, 0
    reo = _rk_reo_wnd(I, F, PI, S)
    rx = F[RK_XTS]
    rend = I[RK_END]
    rrtt = F[RK_RTT]
    timeout = 0.0
    newly = 0
    for s in range(I[UNA], I[MAX]):
        if S[S_SACKED, s] != 0 or (S[S_LOST, s] != 0 and S[S_RTXO, s] == 0):
            continue
        ts = sent_at[s]
        if not (rx > ts or (rx == ts and rend > s + 1)):
            continue
        remaining = ts + rrtt + reo - now
        if remaining <= EPS_S:
            S[S_LOST, s] = 1
            S[S_RTXO, s] = 0
            newly += 1
        elif remaining > timeout and remaining != np.inf:
            timeout = remaining
    return timeout, newly


def _rk_tlp_open(I, S):
    return (I[MAX] > I[UNA] and I[INREC] == 0 and I[LOSS] == 0
            and _rk_segs_sacked(I, S) == 0)


def _rk_pto(I, F):
    if F[SRTT] > 0.0:
        pto = 2.0 * F[SRTT]
        if I[NXT] - I[UNA] == 1:
            pto += WC_DEL_ACK_T_S
        return pto
    return 1.0


def _rk_arm(when, mode, I, F):
    F[RK_T] = when
    I[RK_SEQ] = I[SEQ]
    I[SEQ] += 1
    I[RK_ON] = 1
    I[RK_MODE] = mode


def _rk_timers(now, timeout, rearm_tlp, I, F, PI, PF, S):
    # SackSender._rack_timers.
    if I[DONE] != 0 or I[MAX] <= I[UNA]:
        I[RK_ON] = 0
        I[RTO_ON] = 0
        return
    if timeout > 0.0:
        I[RTO_ON] = 0
        _rk_arm(now + timeout, RK_REO, I, F)
        return
    if rearm_tlp and I[TLP_END] < 0 and _rk_tlp_open(I, S) and (
            I[SAMP_PROBE] < 0 or I[NSAMP] > I[SAMP_PROBE]):
        expire = F[RTO_T] if I[RTO_ON] != 0 else now + F[RTO]
        I[RTO_ON] = 0
        t = now + _rk_pto(I, F)
        _rk_arm(expire if expire < t else t, RK_TLP, I, F)
        return
    if I[RK_ON] != 0 and (I[RK_MODE] == RK_REO or not _rk_tlp_open(I, S)):
        I[RK_ON] = 0
    if I[RK_ON] != 0:
        I[RTO_ON] = 0
    elif I[RTO_ON] == 0:
        _arm_rto(now, I, F)


def _rk_enter_recovery(now, delivered, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender._rack_enter_recovery.
    mss = PI[P_MSS]
    flight = _sk_flight(I, PI) - I[LTB]
    F[SSTH] = _ssthresh_after_loss(flight, mss)
    I[RECOVER] = I[MAX] - 1
    I[INREC] = 1
    I[FRX] += 1
    I[LTB] = 0
    I[RESCUE] = -1
    I[RFS] = I[NXT] - I[UNA]
    I[PRR_DEL] = 0
    I[PRR_OUT] = 1
    I[TLP_END] = -1
    I[HRXT] = I[UNA]
    seg, rule = _rk_next_seg(I, PI, PF, S)
    if seg < 0:  # cannot happen: a segment was just marked lost
        I[FAIL] = FAIL_STALL
        return
    _transmit(seg, now, I, F, PI, PF, u, S, sent_at, QI, QF)
    if I[FAIL] != 0:
        return
    I[HRXT] = seg + 1
    if PI[P_PRR] == PRR_OFF:
        F[CWND] = F[SSTH]
    else:
        _sk_prr_update(delivered, I, F, PI, PF, S)
    _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)


def _rk_on_timer(now, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender.on_rack_timer: the reordering timer or the probe timer expired.
    n = PI[P_N]
    I[SENT_NEW] = 0
    if I[RK_MODE] == RK_REO:
        timeout = 0.0
        newly = 0
        if I[LOSS] == 0:
            timeout, newly = _rk_detect(now, I, F, PI, S, sent_at)
        if newly:
            if I[INREC] != 0:
                _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
            elif I[LOSS] == 0 and I[UNA] > I[RECOVER]:
                _rk_enter_recovery(now, 0, I, F, PI, PF, u, S, sent_at, QI, QF)
            if I[FAIL] != 0:
                return
        _rk_timers(now, timeout, False, I, F, PI, PF, S)
    else:
        # TLP_send_probe (RFC 8985 7.3).
        I[TLP_RETX] = 0
        if I[NXT] < n and _sk_can_send_new(I, PI, PF):
            seg = I[NXT]
            _transmit(seg, now, I, F, PI, PF, u, S, sent_at, QI, QF)
            if I[FAIL] != 0:
                return
            I[NXT] += 1
            if I[NXT] > I[MAX]:
                I[MAX] = I[NXT]
        else:
            seg = I[MAX] - 1
            _transmit(seg, now, I, F, PI, PF, u, S, sent_at, QI, QF)
            if I[FAIL] != 0:
                return
            I[TLP_RETX] = 1
        I[TLP_END] = I[MAX]
        I[SAMP_PROBE] = I[NSAMP]
        if I[MAX] > I[UNA]:
            _arm_rto(now, I, F)
    I[SENT_NEW] = 0


def _rk_tlp_process_ack(ack, flight, I, F, PI):
    # SackSender._tlp_process_ack.
    if I[TLP_END] < 0 or ack < I[TLP_END]:
        return
    if I[TLP_RETX] != 0 and I[INREC] == 0 and I[LOSS] == 0:
        F[SSTH] = _ssthresh_after_loss(flight, PI[P_MSS])
        if F[SSTH] < F[CWND]:
            F[CWND] = F[SSTH]
    I[TLP_END] = -1


def _rk_on_ack(ack, tsecr, now, blk, nb, I, F, PI, PF, u, S, sent_at, QI, QF):
    # SackSender._rack_on_ack.
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    I[SENT_NEW] = 0
    old_una = I[UNA]
    # Update() recording the newly SACKed segments in row S_NEW.
    m = 0
    new_sacked = 0
    if nb > 0:
        a0 = ack if ack > old_una else old_una
        for i in range(nb):
            lo = blk[2 * i]
            hi = blk[2 * i + 1]
            for k in range(lo if lo > a0 else a0, hi):
                if S[S_SACKED, k] == 0:
                    S[S_SACKED, k] = 1
                    new_sacked += 1
                    S[S_NEW, m] = k
                    m += 1
            if hi > I[HSACK]:
                I[HSACK] = hi
    acked_new = ack > old_una
    if acked_new:
        for k in range(old_una, ack):
            if S[S_SACKED, k] == 0:
                S[S_NEW, m] = k
                m += 1
    I[NNEW] = m
    delivered = m
    flight_before = _sk_flight(I, PI)
    _rk_update(now, tsecr, I, F, PI, S, sent_at)
    if acked_new:
        acked = _end(ack, mss, size) - _end(old_una, mss, size)
        if PI[P_TS] != 0:
            _rtt_sample(now - tsecr, I, F, PI, PF)
        else:
            valid = True
            for k in range(old_una, ack):
                if S[S_RETX, k] != 0:
                    valid = False
                    break
            if valid:
                _rtt_sample(now - sent_at[ack - 1], I, F, PI, PF)
        I[UNA] = ack
        if I[NXT] < ack:
            I[NXT] = ack
        I[BACKOFF] = 0
        _rk_tlp_process_ack(ack, flight_before, I, F, PI)
        if ack >= PI[P_N]:
            F[COMPL] = now
            I[RTO_ON] = 0
            I[RK_ON] = 0
            I[DONE] = 1
            return
        if I[LOSS] != 0 and ack > I[RECOVER]:
            I[LOSS] = 0
        if I[INREC] != 0 and ack > I[RECOVER]:
            F[CWND] = F[SSTH]
            I[INREC] = 0
            I[DUP] = 0
        elif I[INREC] != 0:
            pass
        else:
            I[DUP] = 0
            I[LTB] = 0
            _on_ack_growth(acked, F, PI)
        if I[NXT] > I[UNA]:
            _arm_rto(now, I, F)
        else:
            I[RTO_ON] = 0
    elif ack == old_una and I[MAX] > old_una and new_sacked > 0:
        if I[INREC] == 0 and I[LOSS] == 0:
            I[DUP] += 1
    timeout = 0.0
    lost_now = 0
    if I[LOSS] == 0:
        timeout, lost_now = _rk_detect(now, I, F, PI, S, sent_at)
    if I[INREC] != 0:
        if delivered or lost_now:
            _sk_prr_update(delivered, I, F, PI, PF, S)
            _sk_recovery_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
    elif lost_now and I[LOSS] == 0 and I[UNA] > I[RECOVER]:
        _rk_enter_recovery(now, delivered, I, F, PI, PF, u, S, sent_at, QI, QF)
    elif acked_new:
        _sk_send_allowed(now, I, F, PI, PF, u, S, sent_at, QI, QF)
    elif new_sacked > 0:
        if I[LOSS] != 0:
            _sk_loss_send(now, I, F, PI, PF, u, S, sent_at, QI, QF)
        elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
            _sk_limited_transmit(now, I, F, PI, PF, u, S, sent_at, QI, QF)
    if I[FAIL] != 0:
        return
    _rk_timers(now, timeout, acked_new or I[SENT_NEW] != 0, I, F, PI, PF, S)
    I[SENT_NEW] = 0


def _sk_run_one(u, PI, PF, I, F, S, sent_at, RB, blk, QI, QF):
    n = PI[P_N]
    I[:] = 0
    F[:] = 0.0
    S[:, :n] = 0
    I[RECOVER] = -1
    I[RESCUE] = -1
    F[CWND] = PF[Q_CWND0]
    F[SSTH] = PF[Q_SSTH0]
    F[RTO] = PF[Q_RTO0]
    F[SRTT] = -1.0
    I[QUICK] = PI[P_QUICK]
    F[RK_XTS] = -1.0
    F[MIN_RTT] = np.inf
    I[TLP_END] = -1
    I[SAMP_PROBE] = -1
    cap = QI.shape[1]
    _sk_send_allowed(0.0, I, F, PI, PF, u, S, sent_at, QI, QF)
    if PI[P_RACK] != 0 and I[FAIL] == 0:  # the first window, sent outside any event
        _rk_timers(0.0, 0.0, I[SENT_NEW] != 0, I, F, PI, PF, S)
        I[SENT_NEW] = 0
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
        if I[RK_ON] != 0:
            t = F[RK_T]
            s = I[RK_SEQ]
            if kind < 0 or before(t, s, bt, bs):
                kind = 4
                bt = t
                bs = s
        if kind == 0:
            h = I[DQH]
            seg = QI[QI_DG, h]
            tsval = QF[QF_DTS, h]
            I[DQH] = (h + 1) % cap
            I[DQN] -= 1
            _on_segment(seg, tsval, bt, I, F, PI, PF, u, S, QI, QF, RB)
        elif kind == 1:
            h = I[AQH]
            ack = QI[QI_AA, h]
            tsecr = QF[QF_AE, h]
            nb = QI[QI_AN, h]
            for i in range(2 * nb):
                blk[i] = QI[QI_B0 + i, h]
            I[AQH] = (h + 1) % cap
            I[AQN] -= 1
            _sk_on_ack(ack, tsecr, bt, blk, nb, I, F, PI, PF, u, S, sent_at, QI, QF)
        elif kind == 2:
            I[RTO_ON] = 0
            _sk_on_rto(bt, I, F, PI, PF, u, S, sent_at, QI, QF)
        elif kind == 3:
            I[DL_ON] = 0
            if I[PEND] > 0:
                _ack_now(bt, I, F, PF, u, QI, QF, RB)
        elif kind == 4:
            I[RK_ON] = 0
            _rk_on_timer(bt, I, F, PI, PF, u, S, sent_at, QI, QF)
        else:
            I[FAIL] = FAIL_STALL
    return I[FAIL]


def run_batch_sack(U, PI, PF, out, status):
    """Run ``U.shape[0]`` SACK transfers; row ``r`` of ``U`` holds run ``r``'s uniforms.

    Parameters
    ----------
    U : ndarray of float64, shape (runs, k)
        Per-run uniforms: the first ``block_size(n, p, p_ack)`` of
        ``Generator(PCG64(child)).random``, consumed in order.
    PI, PF : ndarray of int64 / float64
        Parameters from :func:`pack_params_sack`.
    out : ndarray of float64, shape (runs, N_OUT)
        Filled with the measures named in :data:`OUT_FIELDS`.
    status : ndarray of int64, shape (runs,)
        0 for a completed run; non-zero if the run must be redone on the reference path
        (uniforms or queue space exhausted).
    """
    n = PI[P_N]
    cap = 4 * (n + int(PF[Q_RWNDB] / PI[P_MSS])) + 64
    state = (np.zeros(N_IS, np.int64), np.zeros(N_FS, np.float64), np.zeros((N_S, n), np.int64),
             np.zeros(n, np.float64), np.zeros((2, n + 1), np.int64), np.zeros(6, np.int64),
             np.zeros((N_QI, cap), np.int64), np.zeros((N_QF, cap), np.float64))
    # views numba does not reference-count (accel.uncounted: every helper call would
    # otherwise increment and decrement each array it is given, atomically)
    U, PI, PF, out, status = uncounted((U, PI, PF, out, status))
    I, F, S, sent_at, RB, blk, QI, QF = uncounted(state)
    for r in range(U.shape[0]):
        st = _sk_run_one(U[r], PI, PF, I, F, S, sent_at, RB, blk, QI, QF)
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



_NAMES = ("tick", "before", "_end", "_seg_len", "_arm_rto", "_transmit", "_send_ack", "_ack_now", "_sack_first",
          "_on_segment", "_sk_flight", "_sk_can_send_new", "_sk_dup_thresh", "_sk_is_lost",
          "_sk_pipe", "_sk_update", "_sk_next_seg", "_sk_base_send", "_sk_loss_send",
          "_sk_recovery_send", "_sk_send_allowed", "_sk_prr_update", "_sk_limited_transmit",
          "_ssthresh_after_loss", "_sk_enter_recovery", "_rtt_sample", "_on_ack_growth",
          "_rk_next_seg", "_rk_segs_sacked", "_rk_update", "_rk_reo_wnd", "_rk_detect",
          "_rk_tlp_open", "_rk_pto", "_rk_arm", "_rk_timers", "_rk_enter_recovery",
          "_rk_on_timer", "_rk_tlp_process_ack", "_rk_on_ack",
          "_sk_on_rto", "_sk_new_ack", "_sk_dup_ack", "_sk_on_ack", "_sk_run_one")


@functools.cache
def compiled_run_batch_sack():
    """The numba-compiled :func:`run_batch_sack`, or ``None`` when numba is unavailable.

    Compiled once per process (and cached on disk by numba), as
    :func:`latency_model.sim.kernel_ns3.compiled_run_batch_ns3` is.
    """
    return compile_twin(globals(), _NAMES, run_batch_sack)
