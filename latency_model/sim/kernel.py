"""Array kernel of the simulator for the RFC 5681 rule (optional numba compilation).

The same algorithm as :mod:`.sender`, :mod:`.receiver`, :mod:`.link` and
:mod:`.engine`, rewritten over flat arrays so that numba can compile it. It is
only used for :class:`~latency_model.growth.StandardRule` (other rules run the
reference Python path) and only for random losses.

Why it is bit-identical to the reference path:

* the per-run uniforms are drawn by the caller exactly as
  :class:`~latency_model.sim.link.UniformStream` draws its first block, and they
  are consumed in the same order (one per data transmission, one per ACK);
* the reference heap orders events by ``(time, seq)``; here data arrivals and ACK
  arrivals are FIFO queues (a FIFO link and a constant delay keep each stream in
  time order) and the two timers are scalars, each carrying the ``seq`` it was
  given when scheduled, and the earliest ``(time, seq)`` of the four heads is
  taken: the same order;
* every floating-point expression is written in the same order with the same
  operand types.

A run returns a non-zero status (and the caller reruns it on the reference path,
from the same seed) if it needs more uniforms than its first block or more queue
space than allocated.
"""

from __future__ import annotations

import functools

import numpy as np

from ..accel import compile_twin, held, numba_available, uncounted
from .engine import before, tick  # noqa: F401 (tick: a helper of before, compiled with it)

__all__ = ["run_batch", "compiled_run_batch", "numba_available", "N_OUT",
           "OUT_FIELDS"]

# Integer state slots.
(UNA, NXT, MAX, RECOVER, INREC, PARTIAL, DUP, LTC, LTB, BACKOFF, RETX, TOUT, MAXBO,
 FRX, UI, SEQ, RTO_ON, RTO_SEQ, DL_ON, DL_SEQ, RNXT, NBUF, PEND, LOSTD, LOSTA,
 DQH, DQN, AQH, AQN, DONE, FAIL, FIRSTL, QUICK, LASTACK) = range(34)
N_IS = 34
# Float state slots.
CWND, SSTH, BACKED, RTO, SRTT, RTTVAR, BUSY, RTO_T, DL_T, DELIV, COMPL, TSREC = range(12)
N_FS = 12
# Integer parameters.
(P_N, P_SIZE, P_MSS, P_B, P_DUPT, P_LTLO, P_LTHI, P_TAIL, P_ER, P_FIXED, P_ABC, P_HDR,
 P_QUICK, P_FIN, P_TS) = range(15)
N_PI = 15
# Float parameters.
Q_RWNDB, Q_MINRTO, Q_MAXRTO, Q_G, Q_DELACK, Q_RATE, Q_DELAY, Q_P, Q_PACK, Q_CWND0, Q_SSTH0, Q_RTO0 = range(12)
N_PF = 12

OUT_FIELDS = ("completion_s", "delivered_s", "lost_packets", "lost_acks",
              "data_packets_sent", "retransmissions", "timeouts", "max_backoff",
              "fast_retransmits", "first_transmissions_lost")
N_OUT = len(OUT_FIELDS)

FAIL_UNIFORMS = 1
FAIL_QUEUE = 2
FAIL_STALL = 3


def _end(k, mss, size):
    e = k * mss
    return e if e < size else size


def _seg_len(k, mss, size):
    return _end(k + 1, mss, size) - k * mss


def _arm_rto(now, I, F):
    F[RTO_T] = now + F[RTO]
    I[RTO_SEQ] = I[SEQ]
    I[SEQ] += 1
    I[RTO_ON] = 1


def _transmit(seg, now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    txc[seg] += 1
    if txc[seg] > 1:
        I[RETX] += 1
        retx[seg] = 1
    sent_at[seg] = now
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
        if txc[seg] == 1:
            I[FIRSTL] += 1
    else:
        cap = dq_t.shape[0]
        if I[DQN] == cap:
            I[FAIL] = FAIL_QUEUE
            return
        j = (I[DQH] + I[DQN]) % cap
        dq_t[j] = F[BUSY] + PF[Q_DELAY]
        dq_s[j] = I[SEQ]
        dq_g[j] = seg
        dq_ts[j] = now
        I[SEQ] += 1
        I[DQN] += 1
    if I[RTO_ON] == 0:
        _arm_rto(now, I, F)


def _send_ack(ack, now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e):
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
    cap = aq_t.shape[0]
    if I[AQN] == cap:
        I[FAIL] = FAIL_QUEUE
        return
    j = (I[AQH] + I[AQN]) % cap
    aq_t[j] = now + PF[Q_DELAY]
    aq_s[j] = I[SEQ]
    aq_a[j] = ack
    aq_e[j] = F[TSREC]
    I[SEQ] += 1
    I[AQN] += 1


def _send_allowed(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    while I[NXT] < n:
        flight = _end(I[NXT], mss, size) - _end(I[UNA], mss, size)
        ln = _seg_len(I[NXT], mss, size)
        if flight > 0 and flight + ln > F[CWND] + I[LTC] * mss:
            break
        if flight > 0 and flight + ln > PF[Q_RWNDB]:
            break
        _transmit(I[NXT], now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
        if I[FAIL] != 0:
            return
        I[NXT] += 1
        if I[NXT] > I[MAX]:
            I[MAX] = I[NXT]


def _rtt_sample(r, I, F, PI, PF):
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


def _ssthresh_after_loss(flight, mss):
    # StandardRule / GrowthRule.ssthresh_after_loss: max(FlightSize/2, 2 MSS).
    return max(flight / 2.0, 2.0 * mss)


def _on_rto(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    I[TOUT] += 1
    I[BACKOFF] += 1
    if I[BACKOFF] > I[MAXBO]:
        I[MAXBO] = I[BACKOFF]
    if I[BACKOFF] == 1:
        flight = _end(I[NXT], mss, size) - _end(I[UNA], mss, size)
        F[SSTH] = _ssthresh_after_loss(flight, mss)
    F[CWND] = float(mss)
    F[BACKED] = 0.0
    I[INREC] = 0
    I[DUP] = 0
    I[LTC] = 0
    I[LTB] = 0
    I[RECOVER] = I[MAX] - 1
    if PI[P_FIXED] == 0:
        F[RTO] = min(2.0 * F[RTO], PF[Q_MAXRTO])
    I[NXT] = I[UNA]
    _send_allowed(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)


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


def _new_ack(ack, tsecr, now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    acked = _end(ack, mss, size) - _end(I[UNA], mss, size)
    if PI[P_TS] != 0:  # RFC 7323: the echoed send time, every new ACK
        _rtt_sample(now - tsecr, I, F, PI, PF)
    else:
        # Karn's rule (Sender._karn_valid): no sample if the ACK covers a retransmission.
        valid = True
        for k in range(I[UNA], ack):
            if retx[k] != 0:
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
    if I[INREC] != 0:
        if ack > I[RECOVER]:
            flight = _end(I[NXT], mss, size) - _end(I[UNA], mss, size)
            F[CWND] = min(F[SSTH], float(max(flight, mss) + mss))
            I[INREC] = 0
            I[DUP] = 0
            if I[NXT] > I[UNA]:
                _arm_rto(now, I, F)
            else:
                I[RTO_ON] = 0
        else:
            _transmit(ack, now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
            if I[FAIL] != 0:
                return
            F[CWND] -= acked
            if acked >= mss:
                F[CWND] += mss
            if I[PARTIAL] == 0:
                I[PARTIAL] = 1
                _arm_rto(now, I, F)
    else:
        I[DUP] = 0
        I[LTC] = 0
        I[LTB] = 0
        _on_ack_growth(acked, F, PI)
        if I[NXT] > I[UNA]:
            _arm_rto(now, I, F)
        else:
            I[RTO_ON] = 0
    _send_allowed(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)


def _dup_ack(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts):
    mss = PI[P_MSS]
    size = PI[P_SIZE]
    n = PI[P_N]
    dup_t = PI[P_DUPT]
    I[DUP] += 1
    if I[INREC] != 0:
        F[CWND] += mss
        _send_allowed(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
        return
    thresh = dup_t
    if PI[P_TAIL] != 0 and I[UNA] >= n - dup_t:
        thresh = 1
    if PI[P_ER] != 0:
        oseg = I[NXT] - I[UNA]
        if 2 <= oseg and oseg <= dup_t:
            can_send = False
            if I[NXT] < n:
                flight = _end(I[NXT], mss, size) - _end(I[UNA], mss, size)
                can_send = flight + _seg_len(I[NXT], mss, size) <= PF[Q_RWNDB]
            if not can_send:
                thresh = min(thresh, oseg - 1)
    if I[DUP] >= thresh and I[UNA] > I[RECOVER]:
        # Fast retransmit (RFC 6582 step 3); LT bytes left out of FlightSize.
        flight = _end(I[NXT], mss, size) - _end(I[UNA], mss, size) - I[LTB]
        F[SSTH] = _ssthresh_after_loss(flight, mss)
        I[RECOVER] = I[MAX] - 1
        I[INREC] = 1
        I[PARTIAL] = 0
        I[FRX] += 1
        I[LTC] = 0
        I[LTB] = 0
        _transmit(I[UNA], now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
        if I[FAIL] != 0:
            return
        F[CWND] = F[SSTH] + I[DUP] * mss
        _send_allowed(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
    elif PI[P_LTLO] <= I[DUP] and I[DUP] <= PI[P_LTHI]:
        I[LTC] += 1
        sent_end = _end(I[NXT], mss, size)
        _send_allowed(now, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
        I[LTB] += _end(I[NXT], mss, size) - sent_end


def _ack_now(now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e):
    I[PEND] = 0
    I[DL_ON] = 0
    if I[QUICK] > 0:
        I[QUICK] -= 1
    I[LASTACK] = I[RNXT]
    _send_ack(I[RNXT], now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e)


def _on_segment(seg, tsval, now, I, F, PI, PF, u, rbuf, aq_t, aq_s, aq_a, aq_e):
    n = PI[P_N]
    if PI[P_TS] != 0 and seg <= I[LASTACK]:  # RFC 7323 Section 4.3
        F[TSREC] = tsval
    if seg < I[RNXT] or (seg > I[RNXT] and rbuf[seg] != 0):
        _ack_now(now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e)
        return
    if seg > I[RNXT]:
        rbuf[seg] = 1
        I[NBUF] += 1
        _ack_now(now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e)
        return
    filled_gap = I[NBUF] > 0
    I[RNXT] += 1
    while I[RNXT] < n and rbuf[I[RNXT]] != 0:
        rbuf[I[RNXT]] = 0
        I[NBUF] -= 1
        I[RNXT] += 1
    if I[RNXT] == n:
        F[DELIV] = now
    if filled_gap or I[QUICK] > 0 or (PI[P_FIN] != 0 and I[RNXT] == n):
        _ack_now(now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e)
    else:
        I[PEND] += 1
        if I[PEND] >= PI[P_B]:
            _ack_now(now, I, F, PF, u, aq_t, aq_s, aq_a, aq_e)
        elif I[DL_ON] == 0:
            F[DL_T] = now + PF[Q_DELACK]
            I[DL_SEQ] = I[SEQ]
            I[SEQ] += 1
            I[DL_ON] = 1


def _run_one(u, PI, PF, I, F, txc, retx, sent_at, rbuf, dq_t, dq_s, dq_g, dq_ts, aq_t, aq_s, aq_a, aq_e):
    n = PI[P_N]
    I[:] = 0
    F[:] = 0.0
    txc[:n] = 0
    retx[:n] = 0
    rbuf[:n] = 0
    I[RECOVER] = -1
    F[CWND] = PF[Q_CWND0]
    F[SSTH] = PF[Q_SSTH0]
    F[RTO] = PF[Q_RTO0]
    F[SRTT] = -1.0
    I[QUICK] = PI[P_QUICK]
    _send_allowed(0.0, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
    while I[DONE] == 0 and I[FAIL] == 0:
        kind = -1
        bt = np.inf
        bs = 0
        if I[DQN] > 0:
            kind = 0
            bt = dq_t[I[DQH]]
            bs = dq_s[I[DQH]]
        if I[AQN] > 0:
            t = aq_t[I[AQH]]
            s = aq_s[I[AQH]]
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
            seg = dq_g[I[DQH]]
            tsval = dq_ts[I[DQH]]
            I[DQH] = (I[DQH] + 1) % dq_t.shape[0]
            I[DQN] -= 1
            _on_segment(seg, tsval, bt, I, F, PI, PF, u, rbuf, aq_t, aq_s, aq_a, aq_e)
        elif kind == 1:
            ack = aq_a[I[AQH]]
            tsecr = aq_e[I[AQH]]
            I[AQH] = (I[AQH] + 1) % aq_t.shape[0]
            I[AQN] -= 1
            if ack > I[UNA]:
                _new_ack(ack, tsecr, bt, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
            elif ack == I[UNA] and I[MAX] > I[UNA]:
                _dup_ack(bt, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
        elif kind == 2:
            I[RTO_ON] = 0
            _on_rto(bt, I, F, PI, PF, u, txc, retx, sent_at, dq_t, dq_s, dq_g, dq_ts)
        elif kind == 3:
            I[DL_ON] = 0
            if I[PEND] > 0:
                _ack_now(bt, I, F, PF, u, aq_t, aq_s, aq_a, aq_e)
        else:
            I[FAIL] = FAIL_STALL
    return I[FAIL]


def run_batch(U, PI, PF, out, status):
    """Run ``U.shape[0]`` transfers; row ``r`` of ``U`` holds run ``r``'s uniforms.

    Parameters
    ----------
    U : ndarray of float64, shape (runs, k)
        Per-run uniforms, consumed in order (one per data transmission when p > 0,
        one per ACK when the ACK loss probability is > 0).
    PI, PF : ndarray of int64 / float64
        Integer and float parameters (see :func:`latency_model.sim.fastpath.pack_params`).
    out : ndarray of float64, shape (runs, N_OUT)
        Filled with the measures named in :data:`OUT_FIELDS`.
    status : ndarray of int64, shape (runs,)
        0 for a completed run; non-zero if the run must be redone on the
        reference path (uniforms or queue space exhausted).
    """
    n = PI[P_N]
    cap = 4 * (n + int(PF[Q_RWNDB] / PI[P_MSS])) + 64
    state = (np.zeros(N_IS, np.int64), np.zeros(N_FS, np.float64), np.zeros(n, np.int64),
             np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.float64))
    queues = (np.zeros(cap, np.float64), np.zeros(cap, np.int64), np.zeros(cap, np.int64),
              np.zeros(cap, np.float64), np.zeros(cap, np.float64), np.zeros(cap, np.int64),
              np.zeros(cap, np.int64), np.zeros(cap, np.float64))
    # views numba does not reference-count (accel.uncounted: every helper call would
    # otherwise increment and decrement each array it is given, atomically)
    U, PI, PF, out, status = uncounted((U, PI, PF, out, status))
    I, F, txc, retx, rbuf, sent_at = uncounted(state)
    dq_t, dq_s, dq_g, dq_ts, aq_t, aq_s, aq_a, aq_e = uncounted(queues)
    for r in range(U.shape[0]):
        st = _run_one(U[r], PI, PF, I, F, txc, retx, sent_at, rbuf,
                      dq_t, dq_s, dq_g, dq_ts, aq_t, aq_s, aq_a, aq_e)
        status[r] = st
        out[r, 0] = F[COMPL]
        out[r, 1] = F[DELIV]
        out[r, 2] = I[LOSTD]
        out[r, 3] = I[LOSTA]
        out[r, 4] = txc[:n].sum()
        out[r, 5] = I[RETX]
        out[r, 6] = I[TOUT]
        out[r, 7] = I[MAXBO]
        out[r, 8] = I[FRX]
        out[r, 9] = I[FIRSTL]
    held(state)
    held(queues)


_NAMES = ("tick", "before", "_end", "_seg_len", "_arm_rto", "_transmit", "_send_ack", "_send_allowed", "_rtt_sample",
          "_ssthresh_after_loss", "_on_rto", "_on_ack_growth", "_new_ack", "_dup_ack", "_ack_now",
          "_on_segment", "_run_one")
"""Helpers of :func:`run_batch`, in dependency order (compiled by :func:`compiled_run_batch`)."""


@functools.cache
def compiled_run_batch():
    """The numba-compiled :func:`run_batch`, or ``None`` when numba is unavailable.

    Compiled once per process (and cached on disk by numba).
    """
    return compile_twin(globals(), _NAMES, run_batch)
