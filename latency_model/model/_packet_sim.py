"""The packet model on the simulator's own transitions (private; docs/packet-model.md).

The expectation of the latency over the Bernoulli tree of data losses, taken by running
the simulator's flat engine (:mod:`latency_model.sim.flat` and the senders of
:mod:`latency_model.sim.kernel`, their compiled code when numba is there): the same
sender, receiver, link, drop-tail buffer, timers and growth rule as a simulated transfer,
for every stack profile (``expected_latency(config=...)``). The engine runs with ``p = 0``;
the model decides each data arrival itself (delivered with probability 1 - p, lost with p;
a bare FIN is never lost), which is the simulator's law: one independent draw per data
transmission, made when it is sent, which nothing reads before the arrival. ACK losses are
not modelled (refused).

Level states. The unbounded transfer (no file end in sight: a virtual file far beyond the
window) is cut *before every event that sends new data*: a level state is the engine's
whole state just before such an event, its level L the segments sent so far
(``snd_max``), and J(s), the segments that event sends, a function of the state. A level
state is stored relative to itself (:func:`pack_state`): times from its event's instant
(plus :data:`T0`, so that every kept time of the past stays positive), segment numbers
shifted so that ``snd_max`` sits at a fixed column once past it (a number below the
window compares like any other there: it becomes 0), the scheduling numbers ranked,
unset timers and the counters that never act (losses, retransmissions) cleared. Its
kernel K(s) (:func:`expand_root`), the distribution of the next level state (all at
level L + J(s)) with the probability-weighted elapsed time, per loss count added, does not
depend on L, so it is computed once per distinct state. ``scripted_latency`` runs one loss
pattern through the stored form: the simulator's latency to 1e-9 s is the check that it
keeps everything that acts.

The file's end. A size-N transfer is the unbounded one as long as no decision has looked
at the file end: up to the level state s with L(s) + m0 < N <= L(s) + J(s) + m0 (exactly
one on each path; m0 the rules' look-ahead, :func:`._packet_levels.handoff_margin`), or
the first state for every size whose set-up differs beyond its length (a bare FIN). From
there the remaining time is the finite transfer's, computed by a tree over loss patterns
memoised per node (:func:`tail_root`, compiled). So one forward pass gives every size:
``E[T(N)] = sum_s PT(s) + P(s) tau(s, N - L(s))`` over the hand-off states of N.

Truncation (as the relative-state method, :mod:`._packet_relative`): a branch point of a
kernel below ``eps`` in probability conditional on the kernel's state, a level state
below ``eps_state`` and a node of a file's end below ``tail_eps`` (absolute probability)
go on with no further loss; each books the probability that a loss it leaves out occurs
(:attr:`SizeResult.truncated`, a union bound), so E[T] is low by at most that mass times
the cost of the losses left out.
"""

from __future__ import annotations

import bisect
import functools

import numpy as np

from ..sim import kernel as K
from ..sim.flat import on_delack_timer, on_segment, pop_ack, pop_data
from ..sim.kernel import on_ack, on_rto, start
from ..sim.kernel_sack import rk_on_timer
from ._packet_levels import _M1, _M2, _S1, _S2, _mix, _slot
from ..sim.flat import (
    ABUSY, AQH, AQN, BLH, BLN, BUSY, COMPL, CRNXT, CWUSEQ, DELIV, DL_ON, DL_SEQ, DL_T, DONE,
    DQH, DQN, EV_ACK, EV_DATA, EV_DELACK, EV_NONE, EV_RACK, EV_RTO, FAIL, FDROP, FIRSTL, FRX, HH,
    HRXT, HSACK, HT, LASTACK, LOSTA, LOSTD, MAX, MAXBO, N_FS, N_IS, N_S, NBLK,
    NSAMP, NXT, P_N, P_NDATA, P_SIZE, P_MSS, P_TS, Q_P, Q_PACK, QF_AE, QF_AT, QF_BL, QF_DT,
    QF_DTS, QI_AA, QI_AN, QI_AS, QI_B0, QI_DG, QI_DS, RECOVER, RESCUE, RETX, RK_END, RK_FACK, RK_ON,
    RK_SEQ, RK_T, RK_XTS, RNXT, RTO_ON, RTO_SEQ, RTO_T, SAMP_PROBE, SEQ, SF_HTIME, SF_SENT, S_HCNT,
    S_HRETX, S_HSEQ, S_DECIDED, S_NEW, TLP_END, TLPN, TOUT, TSREC, UI, UNA, next_event)

T0 = 1024.0
"""The instant of a stored state's own event, seconds: times are stored from it plus T0, so
that every time of the past that the engine keeps (send times, TS.Recent, RACK's
transmission time, whose unset value is -1) stays positive."""

_SEG = (UNA, NXT, MAX, RECOVER, HSACK, HRXT, RESCUE, RK_END, RK_FACK, TLP_END, RNXT, LASTACK, CRNXT,
        CWUSEQ)
"""Integer slots holding a segment number (-1: none, kept)."""
_STATS = (RETX, TOUT, MAXBO, FRX, FIRSTL, LOSTD, LOSTA, FDROP, TLPN, UI)
"""Integer slots that count and never act: zero in a stored state."""
_SEG_ROWS = tuple(r for r in range(N_S) if r not in (S_HSEQ, S_HCNT, S_HRETX, S_DECIDED, S_NEW))
"""Rows of S indexed by segment."""
_HIST_ROWS = (S_HSEQ, S_HCNT, S_HRETX)
"""The ns3 sender's RTT history, indexed by entry (I[HH] .. I[HT])."""


_SEG_A = np.array(_SEG, np.int64)
_STATS_A = np.array(_STATS, np.int64)
_ROWS_A = np.array(_SEG_ROWS, np.int64)
_HEAD = 3
"""Ints before the integer state in the stored form: segment columns, history entries, SACK
blocks held by the receiver."""


def pack_state(I, F, S, SF, RB, QI, QF, delta, tshift, canonical, ts_inert, now, OI, OF):
    """Write the state into ``OI``, ``OF`` (:meth:`Engine.pack`); returns their lengths.
    ``ts_inert`` (with ``canonical``): the path carries no timestamps (``PI[P_TS]`` 0), so
    TS.Recent and the TSval/TSecr of the segments and ACKs in flight, which only RFC 7323's
    sampling and RACK's TSecr test read, are cleared."""
    cap = QI.shape[1]
    una = I[UNA]
    mx = I[MAX]
    ncol = mx - una + 1
    dqn = I[DQN]
    aqn = I[AQN]
    bln = I[BLN]
    nh = I[HT] - I[HH]
    nb = I[NBLK]
    OI[0] = ncol
    OI[1] = nh
    OI[2] = nb
    b = _HEAD
    for k in range(N_IS):
        OI[b + k] = I[k]
    for j in range(_SEG_A.shape[0]):
        k = _SEG_A[j]
        v = I[k]
        if v >= 0:
            v -= delta
            OI[b + k] = v if v > 0 else 0
    for k in range(N_FS):
        OF[k] = F[k]
    # scheduling numbers: ranked (canonical)
    nsq = 0
    sq = np.empty(dqn + aqn + 3, np.int64)
    if canonical:
        for j in range(_STATS_A.shape[0]):
            OI[b + _STATS_A[j]] = 0
        OF[DELIV] = 0.0
        OF[COMPL] = 0.0
        for i in range(dqn):
            sq[nsq] = QI[QI_DS, (I[DQH] + i) % cap]
            nsq += 1
        for i in range(aqn):
            sq[nsq] = QI[QI_AS, (I[AQH] + i) % cap]
            nsq += 1
        if I[RTO_ON] != 0:
            sq[nsq] = I[RTO_SEQ]
            nsq += 1
        if I[DL_ON] != 0:
            sq[nsq] = I[DL_SEQ]
            nsq += 1
        if I[RK_ON] != 0:
            sq[nsq] = I[RK_SEQ]
            nsq += 1
        order = np.sort(sq[:nsq])
        OI[b + SEQ] = nsq
        if I[RTO_ON] != 0:
            OI[b + RTO_SEQ] = np.searchsorted(order, I[RTO_SEQ])
        else:
            OI[b + RTO_SEQ] = 0
            OF[RTO_T] = tshift
        if I[DL_ON] != 0:
            OI[b + DL_SEQ] = np.searchsorted(order, I[DL_SEQ])
        else:
            OI[b + DL_SEQ] = 0
            OF[DL_T] = tshift
        if I[RK_ON] != 0:
            OI[b + RK_SEQ] = np.searchsorted(order, I[RK_SEQ])
        else:
            OI[b + RK_SEQ] = 0
            OF[RK_T] = tshift
        if I[SAMP_PROBE] >= 0:  # only NSAMP > SAMP_PROBE is ever asked
            OI[b + SAMP_PROBE] = 0
            OI[b + NSAMP] = 1 if I[NSAMP] > I[SAMP_PROBE] else 0
        else:
            OI[b + NSAMP] = 0
        if OF[BUSY] < now:
            OF[BUSY] = now
        if OF[ABUSY] < now:
            OF[ABUSY] = now
        if ts_inert:
            OF[TSREC] = tshift
    else:
        order = sq[:0]
    OI[b + DQH] = 0
    OI[b + AQH] = 0
    OI[b + BLH] = 0
    OI[b + HH] = 0
    OI[b + HT] = nh
    OF[RTO_T] -= tshift
    OF[DL_T] -= tshift
    OF[RK_T] -= tshift
    OF[BUSY] -= tshift
    OF[ABUSY] -= tshift
    OF[TSREC] -= tshift
    if F[RK_XTS] >= 0.0:
        OF[RK_XTS] -= tshift
    p = b + N_IS
    for r in range(_ROWS_A.shape[0]):
        row = _ROWS_A[r]
        for c in range(ncol):
            OI[p] = S[row, una + c]
            p += 1
    for r in range(2):
        for i in range(nb):
            v = RB[r, i] - delta
            OI[p] = v if v > 0 else 0
            p += 1
    for i in range(dqn):
        j = (I[DQH] + i) % cap
        OI[p] = np.searchsorted(order, QI[QI_DS, j]) if canonical else QI[QI_DS, j]
        v = QI[QI_DG, j] - delta
        OI[p + 1] = v if v > 0 else 0
        p += 2
    for i in range(aqn):
        j = (I[AQH] + i) % cap
        OI[p] = np.searchsorted(order, QI[QI_AS, j]) if canonical else QI[QI_AS, j]
        OI[p + 1] = QI[QI_AA, j] - delta
        m = QI[QI_AN, j]
        OI[p + 2] = m
        for q in range(6):
            if q < 2 * m:
                v = QI[QI_B0 + q, j] - delta
                OI[p + 3 + q] = v if v > 0 else 0
            else:
                OI[p + 3 + q] = 0
        p += 9
    for i in range(nh):
        j = I[HH] + i
        v = S[S_HSEQ, j] - delta
        OI[p] = v if v > 0 else 0
        OI[p + 1] = S[S_HCNT, j]
        OI[p + 2] = S[S_HRETX, j]
        p += 3
    q = N_FS
    for c in range(ncol):
        OF[q] = SF[SF_SENT, una + c] - tshift
        q += 1
    for i in range(dqn):
        j = (I[DQH] + i) % cap
        OF[q] = QF[QF_DT, j] - tshift
        OF[q + 1] = 0.0 if canonical and ts_inert else QF[QF_DTS, j] - tshift
        q += 2
    for i in range(aqn):
        j = (I[AQH] + i) % cap
        OF[q] = QF[QF_AT, j] - tshift
        OF[q + 1] = 0.0 if canonical and ts_inert else QF[QF_AE, j] - tshift
        q += 2
    for i in range(bln):
        OF[q] = QF[QF_BL, (I[BLH] + i) % cap] - tshift
        q += 1
    for i in range(nh):
        OF[q] = SF[SF_HTIME, I[HH] + i] - tshift
        q += 1
    return p, q


def unpack_state(OI, OF, I, F, S, SF, RB, QI, QF):
    """Load a stored state (:func:`pack_state`'s inverse, heads of the queues at 0)."""
    ncol = OI[0]
    nh = OI[1]
    nb = OI[2]
    b = _HEAD
    for k in range(N_IS):
        I[k] = OI[b + k]
    for k in range(N_FS):
        F[k] = OF[k]
    S[:, :] = 0
    SF[:, :] = 0.0
    RB[:, :] = 0
    una = I[UNA]
    p = b + N_IS
    for r in range(_ROWS_A.shape[0]):
        row = _ROWS_A[r]
        for c in range(ncol):
            S[row, una + c] = OI[p]
            p += 1
    for r in range(2):
        for i in range(nb):
            RB[r, i] = OI[p]
            p += 1
    q = N_FS  # the floats' cursor: each part below reads its ints at p, its floats at q
    for c in range(ncol):
        SF[SF_SENT, una + c] = OF[q]
        q += 1
    for i in range(I[DQN]):
        QI[QI_DS, i] = OI[p]
        QI[QI_DG, i] = OI[p + 1]
        QF[QF_DT, i] = OF[q]
        QF[QF_DTS, i] = OF[q + 1]
        p += 2
        q += 2
    for i in range(I[AQN]):
        QI[QI_AS, i] = OI[p]
        QI[QI_AA, i] = OI[p + 1]
        QI[QI_AN, i] = OI[p + 2]
        for k in range(6):
            QI[QI_B0 + k, i] = OI[p + 3 + k]
        QF[QF_AT, i] = OF[q]
        QF[QF_AE, i] = OF[q + 1]
        p += 9
        q += 2
    for i in range(I[BLN]):
        QF[QF_BL, i] = OF[q]
        q += 1
    for i in range(nh):
        S[S_HSEQ, i] = OI[p]
        S[S_HCNT, i] = OI[p + 1]
        S[S_HRETX, i] = OI[p + 2]
        SF[SF_HTIME, i] = OF[q]
        p += 3
        q += 1


def run_event(kind, now, I, F, S, SF, RB, blk, PI, PF, u, QI, QF):
    """Run a timer or an ACK arrival (the dispatch of
    :func:`latency_model.sim.kernel.run_one`, whose loop also takes the data arrivals)."""
    if kind == EV_ACK:
        ack, tsecr, nb = pop_ack(I, QI, QF, blk)
        on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF)
    elif kind == EV_RTO:
        on_rto(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif kind == EV_DELACK:
        on_delack_timer(now, I, F, PI, PF, u, RB, QI, QF)
    elif kind == EV_RACK:
        I[RK_ON] = 0
        rk_on_timer(now, I, F, S, SF, PI, PF, u, QI, QF)


def arrive(now, lost, I, F, S, SF, RB, PI, PF, u, QI, QF):
    """The data segment at the head of the link arrives at ``now``, or is lost."""
    seg, tsval = pop_data(I, QI, QF)
    if not lost:
        on_segment(seg, tsval, now, I, F, S, PI, PF, u, RB, QI, QF)


def first_event(initial, I, F, S, SF, RB, blk, PI, PF, u, QI, QF):
    """Run a level state's own event (the initial state's: the first flight, at t = 0)."""
    if initial:
        start(I, F, S, SF, PI, PF, u, QI, QF)
        return
    kind, now = next_event(I, F, QI, QF)
    run_event(kind, now, I, F, S, SF, RB, blk, PI, PF, u, QI, QF)


def run_decision(cut, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL):
    """Run events until the next data arrival the path may drop (a bare FIN it never drops,
    as :func:`latency_model.sim.flat.transmit`), the end, or (``cut``) a sender event that
    sends new data, which is not run: the state is left just before it. Returns ``(kind,
    now)``: :data:`DECIDE`, :data:`CUT`, :data:`END`, or :data:`BROKEN` (the engine
    stalled or failed)."""
    while True:
        if I[DONE] != 0:
            return END, 0.0
        kind, now = next_event(I, F, QI, QF)
        if kind == EV_DATA:
            if QI[QI_DG, I[DQH]] >= PI[P_NDATA]:
                arrive(now, False, I, F, S, SF, RB, PI, PF, u, QI, QF)
                continue
            return DECIDE, now
        if kind == EV_NONE:
            return BROKEN, 0.0
        if kind == EV_DELACK or not cut:
            run_event(kind, now, I, F, S, SF, RB, blk, PI, PF, u, QI, QF)
        else:
            pack_state(I, F, S, SF, RB, QI, QF, 0, 0.0, False, False, 0.0, SI, SFL)
            mx = I[MAX]
            run_event(kind, now, I, F, S, SF, RB, blk, PI, PF, u, QI, QF)
            if I[MAX] > mx and I[DONE] == 0 and I[FAIL] == 0:
                unpack_state(SI, SFL, I, F, S, SF, RB, QI, QF)
                return CUT, now
        if I[FAIL] != 0:
            return BROKEN, 0.0


DECIDE, CUT, END, BROKEN = 0, -2, -3, -4
FULL = -5
"""A status of :func:`tail_root`: the memo or the node stack is full (grow, run again)."""
MEMO0 = 1 << 16
"""Slots of the file ends' memo at first (a power of 2; doubled when half full)."""
DEPTH0 = 128
"""Rows of the file ends' node stack at first (doubled when a tree is deeper)."""

def _fword(x):
    """A float as an int64 word of the key: nanoseconds (times reached by different sums of
    the same delays differ in their last bits), whole units beyond 4e9, a word of its own
    for an infinity or NaN."""
    if abs(x) < 4e9:
        return np.int64(np.floor(x * 1e9 + 0.5))
    if x != x:
        return np.int64(0x7FF8000000000001)
    if x > 9e18:
        return np.int64(0x7FF0000000000001)
    if x < -9e18:
        return np.int64(-0x7FF0000000000001)
    return np.int64(np.floor(x)) ^ np.int64(0x3C6EF372FE94F82B)


def state_key(OI, ni, OF, nf, salt):
    """Two 64-bit hashes of a stored state (``OI[:ni]``, ``OF[:nf]``) and ``salt``."""
    h1 = salt ^ _S1
    h2 = salt ^ _S2
    for i in range(ni):
        h1 = _mix(h1, OI[i], _M1)
        h2 = _mix(h2, OI[i], _M2)
    for i in range(nf):
        w = _fword(OF[i])
        h1 = _mix(h1, w, _M1)
        h2 = _mix(h2, w, _M2)
    return h1, h2


def memo_rehash(hk1, hk2, hv, nhk1, nhk2, nhv):
    """Every key of the open-addressing table ``hk1``/``hk2``/``hv`` (``hv`` -1: empty;
    :func:`._packet_levels._slot`) into the empty, larger one ``nhk1``/``nhk2``/``nhv``."""
    for j in range(hv.shape[0]):
        if hv[j] >= 0:
            i = _slot(nhk1, nhk2, nhv, hk1[j], hk2[j])
            nhk1[i] = hk1[j]
            nhk2[i] = hk2[j]
            nhv[i] = hv[j]


def _shift_add(acc, w, src, lost):
    """``acc += w * src`` shifted by ``lost`` losses (the last bin holds K or more)."""
    k1 = acc.shape[0]
    if lost == 0:
        for k in range(k1):
            acc[k] += w * src[k]
    else:
        for k in range(1, k1):
            acc[k] += w * src[k - 1]
        acc[k1 - 1] += w * src[k1 - 1]


def tail_root(ints, floats, initial, PI, mass, p, tail_eps, I, F, S, SF, RB, blk, PF, u, QI, QF, SI, SFL,
              FI, FF, FK, FST, FM, FW, FLOST, FT, FA, FQ, hk1, hk2, hv, VP, VQ, cnt, out):
    """The file end of level state (``ints``, ``floats``) with parameters ``PI`` (the file
    end in its frame): ``out[0, k]``, ``out[1, k]`` its probability and probability x time
    to completion (seconds from the state's own event; ``initial``: from t = 0) by the losses
    added, ``out[2, 0]`` the probability that a loss its truncation left out occurs. The
    tree over the data arrivals' fates (delivered 1 - p, lost p) is walked depth first on
    the frame arrays ``F*`` (one row per depth), its nodes memoised in ``hk1``/``hk2``/``hv``
    (values ``VP[i] = (P, PT)`` and ``VQ[i]``; ``cnt[0]`` rows used) by their stored form;
    a node below ``tail_eps`` in probability (``mass`` the state's) finishes with no further
    loss, booking the probability of the losses left out, and is not memoised (a memoised
    value keeps the truncation of its first visit). Returns 0, :data:`BROKEN`, or
    :data:`FULL` (memo or stack full: grow them and call again; the values stored stay
    valid)."""
    k1 = out.shape[1]
    unpack_state(ints, floats, I, F, S, SF, RB, QI, QF)
    first_event(initial, I, F, S, SF, RB, blk, PI, PF, u, QI, QF)
    kind, t = run_decision(False, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL)
    origin = 0.0 if initial else T0
    out[:, :] = 0.0
    if kind == BROKEN:
        return BROKEN
    if kind == END:
        out[0, 0] = 1.0
        out[1, 0] = F[COMPL] - origin
        return 0
    salt = np.int64(0)
    for i in range(PI.shape[0]):
        salt = _mix(salt, PI[i], _M1)
    res = np.zeros((2, k1))
    rq = np.zeros(1)
    depth = FI.shape[0]
    r = _enter(0, t, mass, salt, p, tail_eps, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL,
               FI, FF, FK, FST, FM, FA, FQ, hk1, hk2, hv, VP, VQ, res, rq)
    d = 0 if r == 0 else -1
    while d >= 0:
        stage = FST[d]
        if stage < 2:
            FST[d] = stage + 1
            lost = stage
            w = p if lost else 1.0 - p
            if w == 0.0:
                continue
            unpack_state(FI[d], FF[d], I, F, S, SF, RB, QI, QF)
            arrive(T0, lost == 1, I, F, S, SF, RB, PI, PF, u, QI, QF)
            kind, tt = run_decision(False, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL)
            if kind == BROKEN:
                return BROKEN
            if kind == END:
                res[:, :] = 0.0
                res[0, 0] = 1.0
                res[1, 0] = F[COMPL] - T0
                _shift_add(FA[d, 0], w, res[0], lost)
                _shift_add(FA[d, 1], w, res[1], lost)
                continue
            if d + 1 >= depth:
                return FULL
            FW[d] = w
            FLOST[d] = lost
            FT[d] = tt
            r = _enter(d + 1, tt, FM[d] * w, salt, p, tail_eps, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI,
                       SFL, FI, FF, FK, FST, FM, FA, FQ, hk1, hk2, hv, VP, VQ, res, rq)
            if r == 0:
                d += 1
            else:
                _fold(d, res, rq[0], FW, FLOST, FT, FA, FQ)
            continue
        # both branches done: memoise, hand the value to the parent
        if cnt[0] >= VP.shape[0] or 2 * (cnt[0] + 1) > hv.shape[0]:
            return FULL
        j = _slot(hk1, hk2, hv, FK[d, 0], FK[d, 1])
        i = cnt[0]
        cnt[0] = i + 1
        hk1[j] = FK[d, 0]
        hk2[j] = FK[d, 1]
        hv[j] = i
        VP[i] = FA[d]
        VQ[i] = FQ[d]
        res[:, :] = FA[d]
        rq[0] = FQ[d]
        d -= 1
        if d >= 0:
            _fold(d, res, rq[0], FW, FLOST, FT, FA, FQ)
    for k in range(k1):
        out[0, k] = res[0, k]
        out[1, k] = res[1, k] + res[0, k] * (t - origin)
    out[2, 0] = rq[0]
    return 0


def _fold(d, res, q, FW, FLOST, FT, FA, FQ):
    """A child node's value (``res``, ``q``; its clock from its own instant ``FT[d]``) into
    frame ``d``'s sums, with the weight and losses of the branch that led to it."""
    w = FW[d]
    lost = FLOST[d]
    dt = FT[d] - T0
    for k in range(res.shape[1]):
        res[1, k] += res[0, k] * dt
    _shift_add(FA[d, 0], w, res[0], lost)
    _shift_add(FA[d, 1], w, res[1], lost)
    FQ[d] += w * q


def _enter(d, t, mass, salt, p, tail_eps, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL,
           FI, FF, FK, FST, FM, FA, FQ, hk1, hk2, hv, VP, VQ, res, rq):
    """A node at ``t`` (the engine at a data arrival the path may drop) of probability
    ``mass``: its value into ``res``/``rq`` (1: memoised, or finished loss-free below
    ``tail_eps``), or a new frame at depth ``d`` (0)."""
    ni, nf = pack_state(I, F, S, SF, RB, QI, QF, 0, t - T0, True, PI[P_TS] == 0, t, FI[d], FF[d])
    h1, h2 = state_key(FI[d], ni, FF[d], nf, salt)
    j = _slot(hk1, hk2, hv, h1, h2)
    if hv[j] >= 0:
        res[:, :] = VP[hv[j]]
        rq[0] = VQ[hv[j]]
        return 1
    if mass < tail_eps:  # finish with no further loss
        unpack_state(FI[d], FF[d], I, F, S, SF, RB, QI, QF)
        arrivals = 0
        while True:
            kind, tt = run_decision(False, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL)
            if kind != DECIDE:
                break
            arrivals += 1
            arrive(tt, False, I, F, S, SF, RB, PI, PF, u, QI, QF)
        res[:, :] = 0.0
        res[0, 0] = 1.0
        res[1, 0] = F[COMPL] - T0
        rq[0] = 1.0 - (1.0 - p) ** arrivals
        return 1
    FK[d, 0] = h1
    FK[d, 1] = h2
    FST[d] = 0
    FM[d] = mass
    FA[d] = 0.0
    FQ[d] = 0.0
    return 0


def expand_root(ints, floats, initial, PI, p, eps, light, base, I, F, S, SF, RB, blk, PF, u, QI, QF, SI, SFL,
                BI, BF, BW, BK, CI, CF, CLEN, CK, CW, CWT, CH, res):
    """The level kernel K(s) of level state (``ints``, ``floats``; ``initial``: the first
    flight): every path from s's own event to the next event that sends new data, the data
    arrivals delivered with 1 - p or lost with p, depth first on the branch stack ``B*``
    (the state at a branch point, exactly, with its weight and losses). A branch point whose
    probability conditional on s is below ``eps``, and every one with ``light``, goes on
    with no further loss, booking the probability of the losses left out (``res[1]``). Each
    path's end, the next level state, is stored relative to itself in the pool ``C*``: row
    ``c`` is ``CI[c, :CLEN[c, 0]]``, ``CF[c, :CLEN[c, 1]]``, its losses ``CK[c]``, weight
    ``CW[c]``, weight x elapsed time ``CWT[c]`` (seconds from s's event) and key ``CH[c]``
    (:func:`state_key`). Returns the rows written, or :data:`BROKEN` (the engine stalled or
    ran to the end), or :data:`FULL` (a pool is full: grow it, call again); ``res[0]``: the
    segments s's event sends."""
    unpack_state(ints, floats, I, F, S, SF, RB, QI, QF)
    mx = I[MAX]
    first_event(initial, I, F, S, SF, RB, blk, PI, PF, u, QI, QF)
    res[0] = I[MAX] - mx
    res[1] = 0.0
    o = 0.0 if initial else T0
    nb = 0
    nc = 0
    w = 1.0
    k = 0
    fresh = True  # the first path goes on from where s's event left the engine
    while True:
        if not fresh:
            if nb == 0:
                return nc
            nb -= 1
            unpack_state(BI[nb], BF[nb], I, F, S, SF, RB, QI, QF)
            w = BW[nb]
            k = BK[nb]
            _, t = next_event(I, F, QI, QF)
            arrive(t, True, I, F, S, SF, RB, PI, PF, u, QI, QF)
        fresh = False
        arrivals = 0
        while True:
            kind, t = run_decision(True, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, SI, SFL)
            if kind == DECIDE:
                if light or w < eps:
                    arrivals += 1
                    arrive(t, False, I, F, S, SF, RB, PI, PF, u, QI, QF)
                    continue
                if nb >= BI.shape[0]:
                    return FULL
                pack_state(I, F, S, SF, RB, QI, QF, 0, 0.0, False, False, 0.0, BI[nb], BF[nb])
                BW[nb] = w * p
                BK[nb] = k + 1
                nb += 1
                w *= 1.0 - p
                arrive(t, False, I, F, S, SF, RB, PI, PF, u, QI, QF)
                continue
            if kind != CUT:
                return BROKEN
            if nc >= CI.shape[0]:
                return FULL
            mxc = I[MAX]
            delta = mxc - base if mxc > base else 0
            ni, nf = pack_state(I, F, S, SF, RB, QI, QF, delta, t - T0, True, PI[P_TS] == 0, t, CI[nc], CF[nc])
            CLEN[nc, 0] = ni
            CLEN[nc, 1] = nf
            h1, h2 = state_key(CI[nc], ni, CF[nc], nf, np.int64(0))
            CH[nc, 0] = h1
            CH[nc, 1] = h2
            CK[nc] = k
            CW[nc] = w
            CWT[nc] = w * (t - o)
            nc += 1
            if arrivals:
                res[1] += w * (1.0 - (1.0 - p) ** arrivals)
            break


_ENTRIES = ("pack_state", "unpack_state", "run_event", "arrive", "first_event", "run_decision", "tail_root",
            "expand_root", "memo_rehash")
_HELPERS = ("pack_state", "unpack_state", "run_event", "arrive", "first_event", "run_decision", "_mix", "_fword",
            "state_key", "_slot", "_shift_add", "_fold", "_enter")


def kernels(compiled: bool = True):
    """The functions above, compiled over the simulator's compiled engine (its functions
    are called, not compiled again), or interpreted."""
    import types

    if compiled:
        fns = _compiled()
        if fns is not None:
            return types.SimpleNamespace(**dict(zip(_ENTRIES, fns)))
    return types.SimpleNamespace(**{name: globals()[name] for name in _ENTRIES})


@functools.cache
def _compiled():
    from ..accel import compile_twins

    sim = K.compiled_run_single()
    if sim is None:
        return None
    ns = dict(sim.py_func.__globals__)  # the engine's compiled functions and its layout
    mine = {k: v for k, v in globals().items() if not k.startswith("__")}
    for name in _HELPERS + ("tail_root", "expand_root", "memo_rehash", "_SEG_A", "_STATS_A", "_ROWS_A", "_HEAD",
                            "DECIDE", "CUT", "END", "BROKEN", "FULL", "T0", "_M1", "_M2", "_S1", "_S2"):
        ns[name] = mine[name]
    ns["__file__"] = __file__
    ns["__name__"] = __name__
    return compile_twins(ns, list(_HELPERS), tuple(mine[n] for n in _ENTRIES))


class Engine:
    """The simulator's state arrays for one set of parameters, the stored form, and the
    functions that run them (compiled or interpreted)."""

    def __init__(self, PI, PF, width: int, cap: int, compiled: bool = True):
        self.PI = PI
        self.PF = PF
        self.k = kernels(compiled)
        self.I, self.F, self.S, self.SF, self.RB, self.blk, self.QI, self.QF = K.state_arrays(width, cap)
        self.u = np.zeros(0)
        ni = _HEAD + N_IS + len(_SEG_ROWS) * width + 2 * width + 9 * cap + 3 * width
        nf = N_FS + width + 5 * cap + width
        self.OI = np.zeros(ni, np.int64)
        self.OF = np.zeros(nf, np.float64)
        self.SI = np.zeros(ni, np.int64)
        self.SFL = np.zeros(nf, np.float64)

    def pack(self, delta: int, tshift: float, canonical: bool, now=None):
        """The state as (ints, floats): segment numbers less ``delta`` (a value that would
        fall below 0 is 0: below snd_una every number compares alike), times less
        ``tshift``; ``canonical``: scheduling numbers ranked, counters and unset timers
        cleared, so that equal futures compare equal (a link free before ``now``, by default
        ``tshift + T0``, is free at ``now``)."""
        if now is None:
            now = tshift + T0
        ni, nf = self.k.pack_state(self.I, self.F, self.S, self.SF, self.RB, self.QI, self.QF, delta, tshift,
                                   canonical, self.PI[P_TS] == 0, now, self.OI, self.OF)
        return self.OI[:ni].copy(), self.OF[:nf].copy()

    def unpack(self, ints, floats) -> None:
        """Load a stored state (:meth:`pack`'s inverse, heads of the queues at 0)."""
        self.k.unpack_state(ints, floats, self.I, self.F, self.S, self.SF, self.RB, self.QI, self.QF)

    def first(self, initial: bool) -> None:
        self.k.first_event(initial, self.I, self.F, self.S, self.SF, self.RB, self.blk, self.PI, self.PF,
                           self.u, self.QI, self.QF)

    def arrive(self, now, lost: bool) -> None:
        self.k.arrive(now, lost, self.I, self.F, self.S, self.SF, self.RB, self.PI, self.PF, self.u, self.QI,
                      self.QF)

    def decide(self, cut: bool):
        kind, now = self.k.run_decision(cut, self.I, self.F, self.S, self.SF, self.RB, self.blk, self.PI,
                                        self.PF, self.u, self.QI, self.QF, self.SI, self.SFL)
        if kind == BROKEN:
            raise RuntimeError(f"the engine stalled or failed ({self.I[FAIL]})")
        return kind, now

    def level_key(self, now, base):
        """The stored form of the state as a level state at ``now`` (just before the event
        at ``now`` that sends new data): ``(ints, floats, delta)``, segment numbers ``delta``
        lower so that ``snd_max`` sits at ``base`` once past it."""
        mx = self.I[MAX]
        delta = mx - base if mx > base else 0
        ints, floats = self.pack(delta, now - T0, True)
        return ints, floats, delta


def shifted_params(PI, delta: int):
    """``PI`` in a frame whose segment numbers are ``delta`` lower."""
    P = PI.copy()
    P[P_N] -= delta
    P[P_NDATA] -= delta
    P[P_SIZE] -= delta * PI[P_MSS]
    return P


def scripted_latency(params, config, size_bytes: int, drops, *, base=None, compiled: bool = True) -> float:
    """Latency (s) of one transfer whose losses are scripted (``drops``: segment -> its
    first transmissions lost, as :func:`latency_model.sim.run_transfer` takes them), run
    level by level through the stored form: every level state packed relative to itself
    (segment numbers less ``snd_max - base`` once past ``base``, times from its event) and
    loaded again. Equal to the simulator's latency for the same losses wherever the stored
    form keeps all that acts (``tests/test_model_packet_engine.py``)."""
    PI, PF = K.pack_params(params, size_bytes, config)
    PF = PF.copy()
    PF[Q_P] = PF[Q_PACK] = 0.0
    rw = int(PF[K.Q_RWNDB] // params.mss_bytes) + 1
    base = rw + 8 if base is None else base
    width = int(PI[P_N]) + base + 4
    eng = Engine(PI.copy(), PF, width, 4 * width + 64, compiled)
    K.reset(eng.I, eng.F, eng.S, eng.PI, eng.PF)
    eng.first(True)
    arrived: dict = {}
    shift, offset = 0, 0.0
    while True:
        kind, now = eng.decide(True)
        if kind == END:
            return float(eng.F[COMPL] + offset)
        if kind == DECIDE:
            seg = int(eng.QI[QI_DG, eng.I[DQH]]) + shift
            arrived[seg] = arrived.get(seg, 0) + 1
            eng.arrive(now, arrived[seg] <= drops.get(seg, 0))
            continue
        ints, floats, delta = eng.level_key(now, base)
        eng.PI = shifted_params(eng.PI, delta)
        eng.unpack(ints, floats)
        shift += delta
        offset += now - T0  # the new frame's clock reads T0 now
        eng.first(False)


def _conv_rows(A, B):
    """Loss-count convolution of the rows of ``A`` and ``B`` (last bin: K or more)."""
    k1 = A.shape[1]
    out = np.zeros_like(A)
    for i in range(k1):
        for j in range(k1):
            out[:, min(i + j, k1 - 1)] += A[:, i] * B[:, j]
    return out


def _shift_rows(X, dk):
    """The rows of ``X`` moved ``dk[r]`` loss counts up (last bin: K or more)."""
    if not dk.any():
        return X.copy()
    k1 = X.shape[1]
    out = np.zeros_like(X)
    for d in np.unique(dk):
        sel = dk == d
        for k in range(k1):
            out[sel, min(k + d, k1 - 1)] += X[sel, k]
    return out


class Solver:
    """The forward pass over level states and the memoised file ends (module docstring)."""

    def __init__(self, params, config, p: float, eps: float, tail_eps: float, k_max: int, m0: int,
                 compiled: bool = True):
        self.p = p
        self.eps, self.tail_eps, self.k1 = eps, tail_eps, k_max + 1
        mss = params.mss_bytes
        PI, PF = K.pack_params(params, mss, config)
        rw = int(PF[K.Q_RWNDB] // mss) + 1
        self.base = rw + 8
        self.nv = self.base + rw + m0 + int(PI[K.P_DUPT]) + 16
        self.width = self.nv + 2
        PIu, PFu = K.pack_params(params, self.nv * mss, config)
        PFu = PFu.copy()
        PFu[Q_P] = PFu[Q_PACK] = 0.0
        self.PIu, self.PFu = PIu, PFu
        self.eng = Engine(PIu.copy(), PFu, self.width, 4 * self.width + 64, compiled)
        self.ids: dict = {}  # key of a level state (state_key) -> its number
        self.rows: list = []  # its stored form (ints, floats)
        self.J: list = []  # the segments its event sends (-1: not run yet)
        self.edges: dict = {}  # (state, light) -> its kernel
        self.tails: dict = {}  # (state, file end) -> its file end's value
        self.res = np.zeros(2)
        self.branches = self._stack(64)
        self.pool = self._pool(64)
        size = MEMO0
        self.memo = [np.zeros(size, np.int64), np.zeros(size, np.int64), np.full(size, -1, np.int64),
                     np.zeros((size // 2, 2, self.k1)), np.zeros(size // 2), np.zeros(1, np.int64)]
        self.frames = self._frames(DEPTH0)
        self.out = np.zeros((3, self.k1))

    # level states
    def _add(self, key, ints, floats) -> int:
        """A new level state: its number."""
        i = len(self.rows)
        self.ids[key] = i
        self.rows.append((ints, floats))
        self.J.append(-1)
        return i

    def initial(self):
        eng = self.eng
        eng.PI = self.PIu.copy()
        K.reset(eng.I, eng.F, eng.S, eng.PI, eng.PF)
        ints, floats = eng.pack(0, 0.0, True, now=0.0)  # start() runs at t = 0: this state's clock is absolute
        return self._add(None, ints, floats)

    def _load(self, s, PI):
        eng = self.eng
        eng.PI = PI
        eng.unpack(*self.rows[s])
        mx = eng.I[MAX]
        eng.first(s == 0)
        return mx

    def expand(self, s, light=False):
        """K(s) as arrays over its paths: next level state, losses, probability, probability
        x elapsed time; and the probability that a loss it leaves out occurs; ``light``: the
        loss-free kernel (:func:`expand_root`)."""
        key_s = (s, light)
        if key_s in self.edges:
            return self.edges[key_s]
        eng = self.eng
        eng.PI = self.PIu
        ints, floats = self.rows[s]
        while True:
            with np.errstate(over="ignore"):  # interpreted: the key's hash wraps as compiled
                nc = eng.k.expand_root(ints, floats, s == 0, self.PIu, self.p, self.eps, light, self.base, eng.I,
                                       eng.F, eng.S, eng.SF, eng.RB, eng.blk, eng.PF, eng.u, eng.QI, eng.QF, eng.SI,
                                       eng.SFL, *self.branches, *self.pool, self.res)
            if nc >= 0:
                break
            if nc == BROKEN:
                raise RuntimeError(f"the engine stalled, failed or ended ({eng.I[FAIL]})")
            self.branches = self._stack(2 * self.branches[0].shape[0])
            self.pool = self._pool(2 * self.pool[0].shape[0])
        self.J[s] = int(self.res[0])
        CI, CF, CLEN, CK, CW, CWT, CH = self.pool
        child = np.empty(nc, np.int64)
        for r in range(nc):
            key = (int(CH[r, 0]), int(CH[r, 1]))
            c = self.ids.get(key)
            if c is None:
                c = self._add(key, CI[r, :CLEN[r, 0]].copy(), CF[r, :CLEN[r, 1]].copy())
            child[r] = c
        self.edges[key_s] = (child, CK[:nc].copy(), CW[:nc].copy(), CWT[:nc].copy(), float(self.res[1]))
        return self.edges[key_s]

    def _stack(self, depth: int):
        """The branch stack of :func:`expand_root`: ``depth`` rows."""
        ni, nf = self.eng.OI.shape[0], self.eng.OF.shape[0]
        return [np.zeros((depth, ni), np.int64), np.zeros((depth, nf)), np.zeros(depth), np.zeros(depth, np.int64)]

    def _pool(self, rows: int):
        """The pool of next level states of :func:`expand_root`: ``rows`` rows."""
        ni, nf = self.eng.OI.shape[0], self.eng.OF.shape[0]
        return [np.zeros((rows, ni), np.int64), np.zeros((rows, nf)), np.zeros((rows, 2), np.int64),
                np.zeros(rows, np.int64), np.zeros(rows), np.zeros(rows), np.zeros((rows, 2), np.int64)]

    # file ends
    def tail(self, s, PI_t, mass):
        """``(P[k], PT[k], Q)`` of the finite transfer (parameters ``PI_t`` in s's frame)
        from s to its end: probability and probability x remaining time (seconds) by the
        losses added, and the probability that a loss its truncation left out occurs
        (:func:`tail_root`). ``mass``: s's probability."""
        key = (s, PI_t.tobytes())
        v = self.tails.get(key)
        if v is not None:
            return v
        eng = self.eng
        ints, floats = self.rows[s]
        while True:
            with np.errstate(over="ignore"):  # interpreted: the key's hash wraps as compiled
                st = eng.k.tail_root(ints, floats, s == 0, PI_t, mass, self.p, self.tail_eps, eng.I, eng.F, eng.S,
                                     eng.SF, eng.RB, eng.blk, eng.PF, eng.u, eng.QI, eng.QF, eng.SI, eng.SFL,
                                     *self.frames, *self.memo, self.out)
            if st == 0:
                break
            if st == BROKEN:
                raise RuntimeError(f"the engine stalled or failed ({eng.I[FAIL]})")
            self._grow()
        v = (self.out[0].copy(), self.out[1].copy(), float(self.out[2, 0]))
        self.tails[key] = v
        return v

    def _frames(self, depth: int):
        """The node stack of :func:`tail_root`: ``depth`` rows."""
        ni, nf, k1 = self.eng.OI.shape[0], self.eng.OF.shape[0], self.k1
        return [np.zeros((depth, ni), np.int64), np.zeros((depth, nf)), np.zeros((depth, 2), np.int64),
                np.zeros(depth, np.int64), np.zeros(depth), np.zeros(depth), np.zeros(depth, np.int64),
                np.zeros(depth), np.zeros((depth, 2, k1)), np.zeros(depth)]

    def _grow(self) -> None:
        """Double the memo of the file ends' nodes when it is full, else the node stack."""
        hk1, hk2, hv, VP, VQ, cnt = self.memo
        n = int(cnt[0])
        if n >= VP.shape[0] or 2 * (n + 1) > hv.shape[0]:
            _guard(f"the packet model's memo of the file ends ({n:,} nodes)")
            size = 2 * hv.shape[0]
            nhk1 = np.zeros(size, np.int64)
            nhk2 = np.zeros(size, np.int64)
            nhv = np.full(size, -1, np.int64)
            self.eng.k.memo_rehash(hk1, hk2, hv, nhk1, nhk2, nhv)
            nVP = np.zeros((size // 2,) + VP.shape[1:])
            nVP[:n] = VP[:n]
            nVQ = np.zeros(size // 2)
            nVQ[:n] = VQ[:n]
            self.memo = [nhk1, nhk2, nhv, nVP, nVQ, cnt]
        else:
            self.frames = self._frames(2 * self.frames[0].shape[0])


def check_config(config) -> None:
    """ValueError unless ``config`` is a :class:`~latency_model.sim.config.SimConfig` the
    model can run: every setting but ACK losses."""
    from ..sim.config import SimConfig

    if not isinstance(config, SimConfig):
        raise ValueError(f"config must be a SimConfig, got {config!r}")
    if config.p_ack:
        raise ValueError(f"the packet model takes no ACK losses (config.p_ack = {config.p_ack:g}); "
                         "set p_ack = 0")


def _guard(what: str) -> None:
    """BudgetError (a ValueError) once this process holds more than the memory limit
    (:func:`latency_model.checks.memory_limit_bytes`), rather than be killed by the system:
    the memo of a file's ends grows with the sizes and p (measured: the RFC sender at p =
    0.05 passed 20 GB before 40 packets)."""
    from ..checks import check_memory
    from ._packet_levels import resident_bytes

    check_memory(what, resident_bytes())


class SizeResult:
    """One size's result (:func:`solve`): ``done_p[k]``, ``done_pt[k]`` the probability and
    probability x latency (seconds) of k losses (last bin: K or more); ``truncated`` the
    probability that a loss the truncation left out occurs (a union bound: E[T] is low by
    at most that mass x the cost of the losses left out); ``states`` the level states
    behind it."""

    __slots__ = ("done_p", "done_pt", "truncated", "states")

    def __init__(self, k1):
        self.done_p = np.zeros(k1)
        self.done_pt = np.zeros(k1)
        self.truncated = 0.0
        self.states = 0


def solve(params, config, sizes_bytes, *, eps=1e-5, tail_eps=1e-8, eps_state=1e-5, k_max=4, compiled=True):
    """Every size (bytes) of ``sizes_bytes`` by one forward pass (module docstring): a dict
    size -> :class:`SizeResult`.

    ``eps``: a branch point of a level kernel below this probability conditional on the
    kernel's state goes on with no further loss in that level; ``eps_state``: a level state
    below this probability takes the loss-free kernel; ``tail_eps``: a node of a file's end
    below this probability finishes with no further loss. Each truncation books the
    probability that a loss it leaves out occurs (:attr:`SizeResult.truncated`)."""
    from ._packet_levels import handoff_margin

    from ..sim.transfer import check_recovery

    check_config(config)
    check_recovery(params, config)  # Early Retransmit under RACK-TLP, refused as the simulator does
    mss = params.mss_bytes
    sizes = sorted(set(int(x) for x in sizes_bytes))
    info = {}
    for size in sizes:
        n = -(-size // mss)
        last = size - (n - 1) * mss
        info[size] = (n, handoff_margin(params, last, mss))
    m0max = max(m for _, m in info.values())
    sv = Solver(params, config, params.p, eps, tail_eps, k_max, m0max, compiled)
    PIu = sv.PIu
    size_slots = (P_N, P_NDATA, P_SIZE)
    own = {}
    for size in sizes:
        PIn, PFn = K.pack_params(params, size, config)
        a, b = PIn.copy(), PIu.copy()
        for k in size_slots:
            a[k] = b[k] = 0
        PFn = PFn.copy()
        PFn[Q_P] = PFn[Q_PACK] = 0.0
        # a size whose set-up differs beyond its length (a bare FIN) starts from the first state
        same = bool((a == b).all() and np.array_equal(PFn, sv.PFu, equal_nan=True)  # NaN: a rule's unset value
                    and PIn[P_N] - PIn[P_NDATA] == PIu[P_N] - PIu[P_NDATA])
        own[size] = (PIn, same)
    groups: dict = {}  # margin m0 -> (sizes in packets, sizes) of the sizes handed off from a level state
    for size in sizes:
        n, m0 = info[size]
        if own[size][1]:
            g = groups.setdefault(m0, ([], []))
            g[0].append(n)
            g[1].append(size)
    k1 = k_max + 1
    index = {size: i for i, size in enumerate(sizes)}
    done_p = np.zeros((len(sizes), k1))  # per size, by losses: probability, x latency
    done_pt = np.zeros((len(sizes), k1))
    truncated = np.zeros(len(sizes))
    states = np.zeros(len(sizes), np.int64)
    s0 = sv.initial()
    e0 = np.zeros((1, k1))
    e0[0, 0] = 1.0
    # level -> the paths into it: (level states, P[k], PT[k], Q) as arrays, one entry per source level
    pending = {0: [(np.array([s0]), e0, np.zeros((1, k1)), np.zeros(1))]}
    nmax = max(n for n, _ in info.values())
    seen = 0
    while pending:
        L = min(pending)
        parts = pending.pop(L)
        ids, inv = np.unique(np.concatenate([q[0] for q in parts]), return_inverse=True)
        n = ids.shape[0]
        P = np.zeros((n, k1))
        PT = np.zeros((n, k1))
        Q = np.zeros(n)
        np.add.at(P, inv, np.concatenate([q[1] for q in parts]))
        np.add.at(PT, inv, np.concatenate([q[2] for q in parts]))
        np.add.at(Q, inv, np.concatenate([q[3] for q in parts]))
        seen += n
        _guard(f"the packet model up to {nmax} packets at p = {params.p:g}")
        mass = P.sum(axis=1)
        h_size, h_row, h_tp, h_tt, h_tq = [], [], [], [], []
        e_row, e_child, e_dk, e_w, e_wt, e_tr, e_to = [], [], [], [], [], [], []
        for j in range(n):
            s = int(ids[j])
            if sv.J[s] < 0:
                mx = sv._load(s, sv.PIu)
                sv.J[s] = sv.eng.I[MAX] - mx
            J = sv.J[s]
            maxc = sv.rows[s][0][_HEAD + MAX]
            if s == s0:
                hand = [size for size in sizes if info[size][0] <= J + info[size][1] or not own[size][1]]
            else:  # the sizes n with L + m0 < n <= L + J + m0, by bisection in each margin's group
                hand = [size for m0, (ns, szs) in groups.items()
                        for size in szs[bisect.bisect_right(ns, L + m0):bisect.bisect_right(ns, L + J + m0)]]
            for size in hand:
                tP, tT, tq = sv.tail(s, shifted_params(own[size][0], L - maxc), mass[j])
                h_size.append(index[size])
                h_row.append(j)
                h_tp.append(tP)
                h_tt.append(tT)
                h_tq.append(tq)
            if L + J + 1 < nmax:  # a size still to hand off beyond this state
                child, dk, w, wt, trunc = sv.expand(s, mass[j] < eps_state)
                e_row.append(np.full(child.shape[0], j))
                e_child.append(child)
                e_dk.append(dk)
                e_w.append(w)
                e_wt.append(wt)
                e_tr.append(np.full(child.shape[0], trunc))
                e_to.append(np.full(child.shape[0], L + J))
        if h_row:  # the sizes handed off here: the level's paths joined to their file ends
            hs = np.array(h_size)
            hr = np.array(h_row)
            tP = np.array(h_tp)
            np.add.at(done_p, hs, _conv_rows(P[hr], tP))
            np.add.at(done_pt, hs, _conv_rows(PT[hr], tP) + _conv_rows(P[hr], np.array(h_tt)))
            np.add.at(truncated, hs, Q[hr] + mass[hr] * np.array(h_tq))
            states[hs] = seen
        if e_row:  # the paths on to the next levels
            row = np.concatenate(e_row)
            dk = np.concatenate(e_dk)
            w = np.concatenate(e_w)[:, None]
            wt = np.concatenate(e_wt)[:, None]
            shifted = _shift_rows(P[row], dk)
            cP = w * shifted
            cPT = w * _shift_rows(PT[row], dk) + wt * shifted
            cQ = w[:, 0] * (Q[row] + mass[row] * np.concatenate(e_tr))  # mass-weighted: Q is a probability
            child = np.concatenate(e_child)
            to = np.concatenate(e_to)
            for level in np.unique(to):
                sel = to == level
                pending.setdefault(int(level), []).append((child[sel], cP[sel], cPT[sel], cQ[sel]))
    res = {}
    for size, i in index.items():
        r = res[size] = SizeResult(k1)
        r.done_p = done_p[i]
        r.done_pt = done_pt[i]
        r.truncated = float(truncated[i])
        r.states = int(states[i])
    return res
