"""The level DP of the packet-level model: kernels over the flat engine (private).

docs/model.md section 2 derives the construction; in short:

* **Levels.** The unbounded transfer (no file end) is cut at every instant snd_max grows
  by one segment (``C[C_LIM]``): a *level* L is the distribution of the whole system just
  after segment L - 1 first left. Every path passes through every level once, so a level's
  probability sums to one (nothing is dropped), and two states at different levels
  whose variables agree relative to snd_max have the same future: levels are keyed
  relative to snd_max (:func:`state_hash`), which merges paths of different histories.
* **Within a level** the data arrivals are the branch points (delivered with 1 - p, lost
  with p), exactly as in the per-size DP (:mod:`.packet`); :func:`advance_level` runs them
  until every path has sent the next new segment.
* **Tails.** A size-N transfer is the unbounded one until the engine first looks at its
  end: sending segment N - 1 (with a short last segment, the transition that sends
  N - 2), and the paper's tail rule (snd_una >= N - dup_t). So the level
  ``N - m0`` (m0 from :func:`handoff_margin`) is handed to a finite transfer. All sizes'
  tails are solved backwards on one memo (:func:`tail_values`): a tail state is
  renumbered so that the file end is segment ``NE`` (:func:`._packet_flat.shift`), and
  equal states of different sizes share their expected remaining time. A truncated tail
  node borrows the later losses of a probable node of its signature; the first of its
  signature is expanded instead (down to ``tail_eps`` x :data:`TAIL_SEED`) and lends.
* **Exact reductions of the key.** cwnd at or above rwnd outside recovery and back-off
  sends and grows as rwnd does, and ssthresh is not read again before it is rewritten
  when cwnd >= ssthresh outside recovery and back-off: both are keyed as "irrelevant".

Masses carry a loss count: ``P[k]``, ``PT[k]`` (probability and probability x elapsed
time of the paths with k losses; the last bin holds K or more).
"""

from __future__ import annotations

import functools
import os
import sys
import types

import numpy as np

from ..accel import compile_twins, held, uncounted
from ..checks import BudgetError, check_memory
from ._packet_flat import (
    ACK, BUF_SET, C_EVMAX, C_LIM, C_MSS, C_N, C_SETOFF, C_SETW, CF_D, CF_MINRTO, CF_RWND, DATA,
    F_BUSY, F_CWND, F_RTO, F_SSTH, I_BACKOFF, I_CUTLT, I_DONE, I_DUP, I_FAIL, I_INREC, I_LTB,
    I_LTC, I_NEV, I_NXT, I_PARTIAL, I_PEND, I_QUICK, I_RCV, I_RECOVER, I_RTOMIN, I_SMAX, I_UNA,
    C_NS3, C_NSOFF, J_HIST, J_LOSTEND, J_NSTATE, J_RACT, J_RFEND, J_SACKN,
    N_F0, N_I0, OFF_EVT, RETX_SET, RTO, _ack_now, _arm, _bit, _cancel, _delete, _dup_ack,
    _empty, _end, _find, _flight, _has, _low, _new_ack, _push, _put, _rebase, _rtt_sample,
    _seg_len, _sent_slot, _take, _transmit, _window, _word, copy_row, deliver_head, n_float,
    n_int, new_state, on_ack, on_rto, on_segment, resume, run_to_branch, send_allowed, shift)

NE = 1 << 24
"""The file end's segment number in the tails' common frame."""

_M1 = np.int64(0x5851F42D4C957F2D)
_M2 = np.int64(0x14057B7EF767814F)
_S1 = np.int64(0x2545F4914F6CDD1D)
_S2 = np.int64(0x1B873593CC9E2D51)
_NONE = np.int64(-(1 << 40))
_REDUCE = True
_REUSE = 2.0
"""A tail node's value is reused for a visit with up to this many times the mass it was
computed at; a more probable visit recomputes it (its subtree's truncation under ``eps``
is relative to the mass it was reached with)."""


def _negligible(mass, F, CF, eps):
    """Truncation test of a branch point or tail node (:func:`advance_level`,
    :func:`tail_values`): mass x RTO / min RTO < eps. Truncating finishes a path with no
    further loss, so its error is the cost of the losses left out, and a loss costs in
    proportion to the RTO it may wait for: a state backed off k times (RTO 2^k x the
    minimum) is expanded down to a mass 2^k times smaller. Measured (docs/model.md
    section 4): NewReno, b = 1, W0 = 2, p = 0.2, 40 packets: 15.047 s -> 15.168 s
    (simulator 15.749 +- 0.143 s) for 28 % more time."""
    return mass * F[F_RTO] < eps * CF[CF_MINRTO]


def _mix(h, x, m):
    h = (h ^ x) * m
    return h ^ (h >> np.int64(29))


def _ns3_key(C, I):
    """The ns3 sender's fields as one word: congestion state, recovery point active, the
    Reno marks, the lost and retransmitted runs and the RTT history's first segment,
    relative to snd_una (runs and history that start below it are empty or begin there)."""
    una = I[I_UNA]
    o = C[C_NSOFF]
    lost = I[o + J_LOSTEND] - una if I[o + J_LOSTEND] > una else 0
    rf = I[o + J_RFEND] - una if I[o + J_RFEND] > una else 0
    hist = I[o + J_HIST] - una if I[o + J_HIST] > una else 0
    return ((((I[o + J_NSTATE] * 2 + I[o + J_RACT]) * 1024 + I[o + J_SACKN]) * 1024 + lost) * 1024
            + rf) * 1024 + hist


def state_hash(C, CF, I, F, base):
    """Two 64-bit hashes of everything that decides the future, segment and ACK numbers
    relative to ``base`` (snd_max at a level; the file end in a tail), times on a 1 ns
    grid, windows on 1e-6 B (as :meth:`._packet_engine._State.key`), with the exact
    reductions of cwnd and ssthresh (module docstring)."""
    una = I[I_UNA]
    quiet = I[I_INREC] == 0 and I[I_BACKOFF] == 0 and _REDUCE
    cw = F[F_CWND]
    ss = F[F_SSTH]
    cwk = np.int64(-1) if (quiet and cw >= CF[CF_RWND]) else np.int64(cw * 1e6 + 0.5)
    ssk = np.int64(-1) if (quiet and cw >= ss) else np.int64(ss * 1e6 + 0.5)
    rec = I[I_RECOVER] - base if I[I_RECOVER] >= una else _NONE
    wide = np.int64(0)  # members beyond 64 of either set (rwnd > 61: sets of several words)
    rcv = I[I_RCV]
    n = I[I_SMAX] - una  # bit j: segment una + j resent
    retx = _window(C, I, RETX_SET, una, n)
    for j in range(64, n):
        if _has(C, I, RETX_SET, una + j):
            wide = _mix(wide, np.int64(j), _M1)
    n = I[I_SMAX] - rcv - 1  # bit j: segment rcv + 1 + j held
    buf = _window(C, I, BUF_SET, rcv + 1, n)
    for j in range(64, n):
        if _has(C, I, BUF_SET, rcv + 1 + j):
            wide = _mix(wide, np.int64(-1 - j), _M1)
    h1 = _S1
    h2 = _S2
    partial = I[I_PARTIAL] if (I[I_INREC] or not _REDUCE) else 0
    vals = (una - base, I[I_NXT] - base, I[I_SMAX] - base, cwk, ssk, rec, I[I_INREC],
            partial, I[I_DUP], I[I_LTC], I[I_LTB], I[I_BACKOFF],
            np.int64(F[F_RTO] * 1e9 + 0.5), retx, rcv - base, buf, I[I_PEND], I[I_CUTLT],
            np.int64(F[F_BUSY] * 1e9 + 0.5), I[I_NEV], I[I_QUICK])
    for x in vals:
        h1 = _mix(h1, np.int64(x), _M1)
        h2 = _mix(h2, np.int64(x), _M2)
    if wide != 0:
        h1 = _mix(h1, wide, _M1)
        h2 = _mix(h2, wide, _M2)
    if C[C_NS3]:  # the ns3 sender's state and scoreboard, from snd_una
        ns = _ns3_key(C, I)
        h1 = _mix(h1, ns, _M1)
        h2 = _mix(h2, ns, _M2)
    ok = N_I0
    of = OFF_EVT
    for i in range(I[I_NEV]):
        ev = I[ok + i]
        kind = ev & 3
        v = (ev >> 2) - base if kind <= ACK else np.int64(0)
        tq = np.int64(F[of + i] * 1e9 + 0.5)
        h1 = _mix(_mix(_mix(h1, tq, _M1), kind, _M1), v, _M1)
        h2 = _mix(_mix(_mix(h2, tq, _M2), kind, _M2), v, _M2)
    return h1 ^ (h1 >> np.int64(31)), h2 ^ (h2 >> np.int64(33))


# Open-addressing table: slots (k1, k2, row); row -1 is empty. ---------------------

def _slot(hk1, hk2, hv, h1, h2):
    """Slot of (h1, h2) in an open-addressing table, or the empty slot where it would go."""
    mask = hv.shape[0] - 1
    j = h1 & mask
    while hv[j] >= 0 and not (hk1[j] == h1 and hk2[j] == h2):
        j = (j + 1) & mask
    return j


def _lookup(hk1, hk2, hv, h1, h2):
    """Row of (h1, h2), or -(slot + 1) of the empty slot where it would go."""
    j = _slot(hk1, hk2, hv, h1, h2)
    return hv[j] if hv[j] >= 0 else -(j + 1)


def _node_slot(nk1, nk2, hv, h1, h2):
    """Slot of (h1, h2) in a table of rows whose keys are kept in the rows (``nk1[row]``,
    ``nk2[row]``: the tails' memo), or the empty slot where it would go."""
    mask = hv.shape[0] - 1
    j = h1 & mask
    while hv[j] >= 0 and not (nk1[hv[j]] == h1 and nk2[hv[j]] == h2):
        j = (j + 1) & mask
    return j


def _node_lookup(nk1, nk2, hv, h1, h2):
    """Row of (h1, h2) in a :func:`_node_slot` table, or -(slot + 1) of the empty slot."""
    j = _node_slot(nk1, nk2, hv, h1, h2)
    return hv[j] if hv[j] >= 0 else -(j + 1)


def rehash_nodes(nk1, nk2, n, hv):
    """Enter rows 0..n-1 (keys ``nk1``, ``nk2``) into the empty table ``hv``."""
    for r in range(n):
        hv[_node_slot(nk1, nk2, hv, nk1[r], nk2[r])] = r


def _clear(cnt, hv, sl):
    """Empty a pool and its table (only the slots its rows use)."""
    for i in range(cnt[0]):
        hv[sl[i]] = -1
    cnt[0] = 0


def _clear_table(n, hv, sl):
    for i in range(n):
        hv[sl[i]] = -1


def _add(C, IS, FS, PM, PT, cnt, hk1, hk2, hv, sl, I, F, P, Q, h1, h2):
    """Merge state (I, F) with masses (P, Q) into a pool: add the masses to an equal
    state's, which takes the new state's variables if the new mass exceeds its total
    (the most probable representative, as :func:`.packet._merge`). Returns False when the
    pool is full."""
    r = _lookup(hk1, hk2, hv, h1, h2)
    if r >= 0:
        if P.sum() > PM[r].sum():
            copy_row(C, I, F, IS[r], FS[r])
        PM[r, :] += P
        PT[r, :] += Q
        return True
    n = cnt[0]
    if n >= IS.shape[0] or 2 * (n + 1) > hv.shape[0]:
        return False
    j = -r - 1
    hk1[j] = h1
    hk2[j] = h2
    hv[j] = n
    sl[n] = j
    copy_row(C, I, F, IS[n], FS[n])
    PM[n, :] = P
    PT[n, :] = Q
    cnt[0] = n + 1
    return True


def _place(C, CF, I, F, cp, cq, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
           YI, YF, YP, YQ, ycnt, yk1, yk2, yv, ysl):
    """Merge a child into the next level (pool O) if its send reached the level limit,
    else into the branch-point pool Y. False when the pool is full."""
    h1, h2 = state_hash(C, CF, I, F, I[I_SMAX])
    if I[I_SMAX] >= C[C_LIM]:
        return _add(C, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl, I, F, cp, cq, h1, h2)
    return _add(C, YI, YF, YP, YQ, ycnt, yk1, yk2, yv, ysl, I, F, cp, cq, h1, h2)


def _child_masses(P, Q, w, dt, lost, cp, cq):
    """Masses of a branch: cp = w P, cq = w (Q + P dt), one loss-count bin up if lost."""
    k1 = P.shape[0]
    for k in range(k1):
        cp[k] = 0.0
        cq[k] = 0.0
    for k in range(k1):
        kk = k + 1 if (lost and k + 1 < k1) else k
        cp[kk] += w * P[k]
        cq[kk] += w * (Q[k] + P[k] * dt)


def _fold_branches(C, CF, eps, XI, XF, XP, XQ, xn):
    """Fold each negligible branch point of a sub-step (rows 0..xn-1) into the most
    probable non-negligible one with its signature (:func:`class_keys`, tiers 1 to 4,
    the finest that has one), masses added per loss count: its paths go on *with* their
    later losses, as that branch point's do, instead of being finished loss-free.
    Returns the rows folded away (the others are expanded or finished loss-free)."""
    gone = np.zeros(xn, np.bool_)
    light = np.zeros(xn, np.bool_)
    for j in range(xn):
        light[j] = _negligible(XP[j].sum(), XF[j], CF, eps)
    if not light.any():
        return gone
    sig = np.empty((NTIERS, xn), np.int64)
    for j in range(xn):
        sig[0, j], sig[1, j], sig[2, j], sig[3, j], sig[4, j] = class_keys(C, CF, XI[j], XF[j])
    nb = 16
    while nb < 4 * xn:
        nb *= 2
    tables = (np.zeros(nb, np.int64), np.zeros(nb, np.int64), np.empty(nb, np.int64))
    hk1, hk2, hv = uncounted(tables)  # (accel.uncounted: no atomics in the loops below)
    best = np.empty(xn, np.int64)  # per signature: its most probable branch point
    for tier in range(1, NTIERS):
        hv[:] = -1
        ng = 0
        for j in range(xn):
            if light[j]:
                continue
            g = _lookup(hk1, hk2, hv, sig[tier, j], 0)
            if g < 0:
                hk1[-g - 1] = sig[tier, j]
                hv[-g - 1] = ng
                best[ng] = j
                ng += 1
            elif XP[j].sum() > XP[best[g]].sum():
                best[g] = j
        for j in range(xn):
            if light[j] and not gone[j]:
                g = _lookup(hk1, hk2, hv, sig[tier, j], 0)
                if g >= 0:
                    XP[best[g]] += XP[j]
                    XQ[best[g]] += XQ[j]
                    gone[j] = True
    held(tables)
    return gone


def advance_level(C, CF, p, eps, IS, FS, PM, PT, n_in,
                  OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                  AI, AF, AP, AQ, acnt, ak1, ak2, av, asl,
                  BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl, drop):
    """Level L (rows 0..n_in-1 of IS/FS/PM/PT, snd_max = L) -> level L + 1 (pool O).

    A and B are the branch-point pools of the sub-DP within the level. A negligible branch
    point (:func:`_negligible`) folds into a probable one of its signature
    (:func:`_fold_branches`) or, if the sub-step has none, goes on to the next level with
    no further loss (its mass in ``drop[1]``; ``drop[0]``: children expanded). Light
    level states are folded afterwards (:func:`fold_level`). Returns 0, 1 if a pool is
    full (the caller enlarges them and calls again) or 2 if a state ran out of event
    slots."""
    # every array as a view numba does not reference-count (accel.uncounted: the atomic
    # increments and decrements of each helper call's arrays were half the time)
    C, CF, IS, FS, PM, PT = uncounted((C, CF, IS, FS, PM, PT))
    OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl = uncounted((OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl))
    AI, AF, AP, AQ, acnt, ak1, ak2, av, asl = uncounted((AI, AF, AP, AQ, acnt, ak1, ak2, av, asl))
    BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl = uncounted((BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl))
    k1 = PM.shape[1]
    scratch = (np.empty(k1), np.empty(k1))
    rows = (np.empty(IS.shape[1], np.int64), np.empty(FS.shape[1]))
    cp, cq = uncounted(scratch)
    I, F = uncounted(rows)
    _clear(ocnt, ov, osl)
    _clear(acnt, av, asl)
    _clear(bcnt, bv, bsl)
    drop[:] = 0.0
    for i in range(n_in):
        copy_row(C, IS[i], FS[i], I, F)
        resume(C, CF, I, F)
        if I[I_SMAX] >= C[C_LIM]:
            h1, h2 = state_hash(C, CF, I, F, I[I_SMAX])
            if not _add(C, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl, I, F, PM[i], PT[i], h1, h2):
                return 1
            continue
        dt = run_to_branch(C, CF, I, F)
        if I[I_FAIL]:
            return 2
        _child_masses(PM[i], PT[i], 1.0, dt, False, cp, cq)
        if not _place(C, CF, I, F, cp, cq, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                      AI, AF, AP, AQ, acnt, ak1, ak2, av, asl):
            return 1
    cur = 0  # 0: A holds the branch points, 1: B
    while True:
        if cur == 0:
            XI, XF, XP, XQ, xn = AI, AF, AP, AQ, acnt[0]
            YI, YF, YP, YQ, ycnt, yk1, yk2, yv, ysl = BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl
        else:
            XI, XF, XP, XQ, xn = BI, BF, BP, BQ, bcnt[0]
            YI, YF, YP, YQ, ycnt, yk1, yk2, yv, ysl = AI, AF, AP, AQ, acnt, ak1, ak2, av, asl
        if xn == 0:
            break
        _clear(ycnt, yv, ysl)
        gone = _fold_branches(C, CF, eps, XI, XF, XP, XQ, xn)
        for j in range(xn):
            if gone[j]:
                continue
            m = XP[j].sum()
            if _negligible(m, XF[j], CF, eps):  # improbable: no further loss
                copy_row(C, XI[j], XF[j], I, F)
                dt = 0.0
                while I[I_SMAX] < C[C_LIM]:
                    deliver_head(C, CF, I, F, False)
                    dt += run_to_branch(C, CF, I, F)
                    if I[I_FAIL]:
                        return 2
                _child_masses(XP[j], XQ[j], 1.0, dt, False, cp, cq)
                drop[1] += m
                h1, h2 = state_hash(C, CF, I, F, I[I_SMAX])
                if not _add(C, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl, I, F, cp, cq, h1, h2):
                    return 1
                continue
            for lost in range(2):
                w = p if lost else 1.0 - p
                if w == 0.0:
                    continue
                drop[0] += 1.0
                copy_row(C, XI[j], XF[j], I, F)
                deliver_head(C, CF, I, F, lost == 1)
                dt = run_to_branch(C, CF, I, F)
                if I[I_FAIL]:
                    return 2
                _child_masses(XP[j], XQ[j], w, dt, lost == 1, cp, cq)
                if not _place(C, CF, I, F, cp, cq, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                              YI, YF, YP, YQ, ycnt, yk1, yk2, yv, ysl):
                    return 1
        cur = 1 - cur
    # the branch pools stay non-empty: empty them for the next call
    _clear(acnt, av, asl)
    _clear(bcnt, bv, bsl)
    # the level's rows are folded and compacted next (fold_level): empty its table
    _clear_table(ocnt[0], ov, osl)
    held(scratch)
    held(rows)
    return 0


def _lossfree(C, CF, I, F):
    """Remaining time of a branch-point state if nothing more is lost, seconds (-1 when a
    state ran out of event slots). A transfer that ends at the branch point's own instant
    (the last ACK due with a spurious retransmission's arrival) has the rebased times' sum
    of a few 1e-17 s either way: 0, not a failure."""
    t = 0.0
    while not I[I_DONE]:
        deliver_head(C, CF, I, F, False)
        t += run_to_branch(C, CF, I, F)
        if I[I_FAIL]:
            return -1.0
    return t if t > 0.0 else 0.0


def tail_signature(C, CF, I, F, out):
    """Signatures of a tail node for borrowing (:func:`tail_values`), one per tier of
    :data:`TAIL_TIERS`, finest first, into ``out[i, 0:2]``: that tier of
    :func:`class_keys` and the segments not yet sent (file end - snd_max), as two hash
    words."""
    keys = class_keys(C, CF, I, F)
    rem = C[C_N] - I[I_SMAX]
    for i in range(len(TAIL_TIERS)):
        c = keys[TAIL_TIERS[i]]
        out[i, 0] = _mix(_mix(c, rem, _M1), TAIL_TIERS[i], _S1)
        out[i, 1] = _mix(_mix(c, rem, _M2), TAIL_TIERS[i], _S2)


def tail_values(C, CF, p, eps, borrow, seed_eps, I0, F0, mass0, nk1, nk2, nv, nst, nmass,
                NQ, NV, ncnt, NL, gk1, gk2, gv, SI, SF, sbr, srow, sdt, smass, SQ, SV, sl0,
                out_q, out_v):
    """Expected remaining time of the branch-point state (I0, F0), by loss count.

    ``out_q[j]`` = P(j more losses), ``out_v[j]`` = E[remaining time; j more losses]
    (seconds; the last bin holds K or more). Backward over the tail's tree with a memo
    (nodes ``nk1, nk2`` -> row ``nv``; ``nst``: 1 expanded, 2 truncated, 3 in progress,
    4 truncated and borrowed;
    ``NQ``, ``NV`` their values, ``NL`` their loss-free remaining time and ``nmass`` the
    mass they were computed at): a node reached with mass below ``eps`` (weighted as in
    :func:`advance_level`) is truncated. With ``borrow`` it takes the later losses of the
    most probable expanded node of its signature (:func:`tail_signature`; table ``gk1,
    gk2`` -> ``gv``) from its own loss-free time, V = V_g + (L - L_g) Q_g (``nst`` 4).
    One that no node can lend to yet is expanded all the same unless it is lighter than
    ``seed_eps`` too (0: never), and then lends to the next of its signature; one lighter
    than that (or any, without ``borrow``) is finished loss-free (``nst`` 2: its later
    losses are left out). A value is reused for visits with up to :data:`_REUSE` times its
    mass and recomputed for more probable ones, so a path's truncation is always relative
    to (nearly) its own probability. Depth-first with an explicit stack (``SI``..``SV``,
    ``sl0``: the loss-free time through each frame's delivered branch; one frame per
    depth). Returns 0, 1 if the memo (its nodes or its signature table) is full, 2 if the
    stack is too shallow or a state ran out of event slots."""
    depth_max = SI.shape[0]
    cap = NQ.shape[0]
    k1 = NQ.shape[1]
    scratch = (np.empty(k1), np.empty(k1))
    cq, cv = uncounted(scratch)  # (accel.uncounted: no atomics in the helper calls)
    cl = 0.0  # the returned node's loss-free remaining time
    sigs = np.empty((len(TAIL_TIERS), 2), np.int64)  # a node's signatures
    sg = uncounted(sigs)
    rows = (np.empty(SI.shape[1], np.int64), np.empty(SF.shape[1]))
    LI, LF = uncounted(rows)  # a node's loss-free run
    SI[0, :] = I0
    SF[0, :] = F0
    smass[0] = mass0
    sbr[0] = -1
    d = 0
    while True:
        ret = False  # frame d is finished with value (cq, cv)
        if sbr[d] == -1:  # entering a node
            h1, h2 = state_hash(C, CF, SI[d], SF[d], C[C_N])
            r = _node_lookup(nk1, nk2, nv, h1, h2)
            if r >= 0 and nst[r] == 3:  # a cycle (not expected): finish it loss-free
                copy_row(C, SI[d], SF[d], LI, LF)
                t = _lossfree(C, CF, LI, LF)
                if t < 0.0:
                    return 2
                cq[:] = 0.0
                cv[:] = 0.0
                cq[0] = 1.0
                cv[0] = t
                cl = t
                ret = True
            elif (r >= 0 and (nst[r] == 1 or nst[r] == 2 or nst[r] == 4)
                  and smass[d] <= _REUSE * nmass[r]):
                cq[:] = NQ[r]
                cv[:] = NV[r]
                cl = NL[r]
                ret = True
            else:
                if r < 0:
                    n = ncnt[0]
                    if n >= cap or 2 * (n + 1) > nv.shape[0]:
                        return 1
                    nk1[n] = h1
                    nk2[n] = h2
                    nv[-r - 1] = n
                    ncnt[0] = n + 1
                    r = n
                nmass[r] = smass[d]
                srow[d] = r
                trunc = _negligible(smass[d], SF[d], CF, eps)
                g = -1  # the lender: an expanded node of the finest signature
                if trunc and borrow:
                    tail_signature(C, CF, SI[d], SF[d], sg)
                    for ti in range(sg.shape[0]):
                        h = _lookup(gk1, gk2, gv, sg[ti, 0], sg[ti, 1])
                        if h >= 0 and nst[h] == 1:
                            g = h
                            break
                    if g < 0 and seed_eps > 0.0 and not _negligible(smass[d], SF[d], CF,
                                                                    seed_eps):
                        trunc = False  # no lender yet: expanded, it lends to the next
                if trunc:
                    copy_row(C, SI[d], SF[d], LI, LF)
                    t = _lossfree(C, CF, LI, LF)
                    if t < 0.0:
                        return 2
                    if g >= 0:
                        # borrow: the expanded node's later losses, from this node's
                        # own loss-free time
                        NQ[r, :] = NQ[g]
                        NV[r, :] = NV[g] + (t - NL[g]) * NQ[g]
                        nst[r] = 4
                    else:
                        nst[r] = 2
                        NQ[r, :] = 0.0
                        NV[r, :] = 0.0
                        NQ[r, 0] = 1.0
                        NV[r, 0] = t
                    NL[r] = t
                    cq[:] = NQ[r]
                    cv[:] = NV[r]
                    cl = t
                    ret = True
                else:
                    nst[r] = 3
                    SQ[d, :] = 0.0
                    SV[d, :] = 0.0
                    sbr[d] = 0
        if not ret:
            b = sbr[d]
            if b == 1 and p == 0.0:
                b = 2
            if b == 2:  # both branches in: the node's value
                if borrow and 2 * (ncnt[1] + len(TAIL_TIERS)) > gv.shape[0]:
                    return 1  # the signature table is full (this node is redone)
                r = srow[d]
                NQ[r, :] = SQ[d]
                NV[r, :] = SV[d]
                NL[r] = sl0[d]
                nst[r] = 1
                cq[:] = SQ[d]
                cv[:] = SV[d]
                cl = sl0[d]
                ret = True
                if borrow:  # the most probable expanded node of a signature lends
                    tail_signature(C, CF, SI[d], SF[d], sg)
                    for ti in range(sg.shape[0]):
                        j = _slot(gk1, gk2, gv, sg[ti, 0], sg[ti, 1])
                        if gv[j] < 0:
                            gk1[j] = sg[ti, 0]
                            gk2[j] = sg[ti, 1]
                            gv[j] = r
                            ncnt[1] += 1
                        elif nst[gv[j]] != 1 or nmass[gv[j]] < nmass[r]:
                            gv[j] = r  # (a lender being recomputed is not available)
            else:
                if d + 1 >= depth_max:
                    return 2
                I = SI[d + 1]
                F = SF[d + 1]
                copy_row(C, SI[d], SF[d], I, F)
                deliver_head(C, CF, I, F, b == 1)
                dt = run_to_branch(C, CF, I, F)
                if I[I_FAIL]:
                    return 2
                sdt[d] = dt
                if I[I_DONE]:
                    cq[:] = 0.0
                    cv[:] = 0.0
                    cq[0] = 1.0
                    _accumulate(SQ[d], SV[d], cq, cv, b, dt, p)
                    if b == 0:
                        sl0[d] = dt
                    sbr[d] = b + 1
                else:
                    smass[d + 1] = smass[d] * (p if b == 1 else 1.0 - p)
                    sbr[d + 1] = -1
                    d += 1
                continue
        # frame d returns (cq, cv) to its parent
        d -= 1
        if d < 0:
            out_q[:] = cq
            out_v[:] = cv
            held(scratch)
            held(sigs)
            held(rows)
            return 0
        _accumulate(SQ[d], SV[d], cq, cv, sbr[d], sdt[d], p)
        if sbr[d] == 0:
            sl0[d] = sdt[d] + cl
        sbr[d] += 1


def _accumulate(SQ, SV, cq, cv, b, dt, p):
    """Add branch ``b`` (0 delivered, 1 lost) of a node to its sums:
    Q += w Q_child (one loss-count bin up if lost), V += w (dt Q_child + V_child)."""
    k1 = SQ.shape[0]
    w = p if b == 1 else 1.0 - p
    for k in range(k1):
        kk = k + 1 if (b == 1 and k + 1 < k1) else k
        SQ[kk] += w * cq[k]
        SV[kk] += w * (dt * cq[k] + cv[k])




def tail_level(C, CF, p, eps, borrow, seed_eps, delta, IS, FS, PM, PT, n_in,
               nk1, nk2, nv, nst, nmass, NQ, NV, ncnt, NL, gk1, gk2, gv,
               SI, SF, sbr, srow, sdt, smass, SQ, SV, sl0, acc):
    """Hand a level's states (rows 0..n_in-1) to the finite transfer and add their
    expected latency: ``acc[0, k]`` += P(k losses in all), ``acc[1, k]`` += E[T; k
    losses], ``acc[2, 0]`` += mass whose RTO estimator left its minimum. ``delta``
    renumbers a level state into the tails' frame. Returns :func:`tail_values`' status."""
    # every array as a view numba does not reference-count (accel.uncounted)
    C, CF, IS, FS, PM, PT, acc = uncounted((C, CF, IS, FS, PM, PT, acc))
    nk1, nk2, nv, nst, nmass, NQ, NV, ncnt, NL, gk1, gk2, gv = uncounted(
        (nk1, nk2, nv, nst, nmass, NQ, NV, ncnt, NL, gk1, gk2, gv))
    SI, SF, sbr, srow, sdt, smass, SQ, SV, sl0 = uncounted((SI, SF, sbr, srow, sdt, smass, SQ, SV, sl0))
    k1 = PM.shape[1]
    scratch = (np.empty(k1), np.empty(k1))
    rows = (np.empty(IS.shape[1], np.int64), np.empty(FS.shape[1]))
    oq, ov = uncounted(scratch)
    I, F = uncounted(rows)
    for i in range(n_in):
        copy_row(C, IS[i], FS[i], I, F)
        shift(C, I, F, delta)
        resume(C, CF, I, F)
        dt = run_to_branch(C, CF, I, F)
        if I[I_FAIL]:
            return 2
        P = PM[i]
        Q = PT[i]
        if I[I_RTOMIN]:
            acc[2, 0] += P.sum()
        if I[I_DONE]:
            oq[:] = 0.0
            ov[:] = 0.0
            oq[0] = 1.0
        else:
            st = tail_values(C, CF, p, eps, borrow, seed_eps, I, F, P.sum(), nk1, nk2, nv,
                             nst, nmass, NQ, NV, ncnt, NL, gk1, gk2, gv, SI, SF, sbr, srow,
                             sdt, smass, SQ, SV, sl0, oq, ov)
            if st != 0:
                return st
        for a in range(k1):
            for b in range(k1):
                k = a + b
                if k >= k1:
                    k = k1 - 1
                acc[0, k] += P[a] * oq[b]
                acc[1, k] += (Q[a] + P[a] * dt) * oq[b] + P[a] * ov[b]
    held(scratch)
    held(rows)
    return 0


def reinsert(ok1, ok2, ov, hk1, hk2, hv):
    """Move every entry of table (ok1, ok2, ov) into the empty table (hk1, hk2, hv)."""
    for j in range(ov.shape[0]):
        r = ov[j]
        if r >= 0:
            s = _lookup(hk1, hk2, hv, ok1[j], ok2[j])
            s = -s - 1
            hk1[s] = ok1[j]
            hk2[s] = ok2[j]
            hv[s] = r


def _in_flight(I, s):
    """Whether a data event of segment ``s`` is pending."""
    for j in range(I[I_NEV]):
        ev = I[N_I0 + j]
        if (ev & 3) == DATA and (ev >> 2) == s:
            return True
    return False


def class_keys(C, CF, I, F):
    """Coarse signatures of one state for folding (:func:`fold_level`), finest first.
    Tiers 0-2 keep what a loss changes: the windows (cwnd and ssthresh in whole
    packets, with the reductions of :func:`state_hash`), recovery and back-off, the
    segments held by the receiver, the data segments in flight, snd_una relative to
    snd_max and the *missing* segments (at or above rcv_nxt, neither held nor in flight:
    lost and not yet resent); a fold never moves probability to a state that has not
    lost as much (which would erase a loss; without the missing count a segment lost at
    the head of the link looked like one delivered whose ACK is still to come: LT,
    b = 1, W0 = 10, p = 0.1, 40 packets 1.3238 s -> 1.4106 s, simulator 1.5497 s).
    Tier 2: these, whether NewReno's recovery point is still ahead (recover >= snd_una:
    no new fast retransmit) and, when backed off, whether a resent segment is outstanding
    (its ACK gives no RTT sample, so the back-off stays). Tier 1: also when the
    retransmission timer fires, in whole round trips (2d) from now: a state whose flight
    is lost waits for that timer, so two states that differ only there have futures that
    differ by the gap (NewReno, b = 1, W0 = 10, p = 0.2, 30 packets: 6.4389 s without it,
    6.6495 s with it in every tier, simulator 6.7852 s); tier 2 is what a probable state
    folds by when no kept state shares its tier 1 and the level is full
    (:data:`LEVEL_CAP`), so the levels stay bounded as before (with the timer in every
    tier few states found a match and a 100-packet call ran out of memory). Tier 0: tier
    1 and rcv_nxt, the partial-ACK flag, duplicate ACKs (capped at 15) and the pending ACK
    events. Tiers 3 and 4 (:data:`COARSE`), for improbable states only: recovery,
    back-off, the two flags and the missing count, with and then without snd_una
    relative to snd_max."""
    mss = C[C_MSS]
    sm = I[I_SMAX]
    rcv = I[I_RCV]
    held = 0
    a = C[C_SETOFF] + BUF_SET * C[C_SETW]
    for j in range(a, a + C[C_SETW]):
        b = I[j]
        while b != 0:
            b &= b - 1
            held += 1
    nd = 0
    na = 0
    fly = np.int64(0)  # data in flight, bit s - rcv_nxt (rcv_nxt + 64 on: wider sets)
    far = False
    for j in range(I[I_NEV]):
        ev = I[N_I0 + j]
        kind = ev & 3
        if kind == DATA:
            nd += 1
            s = ev >> 2
            if s >= rcv and s < sm:
                if s - rcv < 64:
                    fly |= _bit(s - rcv)
                else:
                    far = True
        elif kind == ACK:
            na += 1
    # neither held nor in flight: bits of the first 64 segments from rcv_nxt at once
    gap = ~(_window(C, I, BUF_SET, rcv, sm - rcv) | fly) & _low(sm - rcv)
    miss = 0
    while gap != 0:
        gap &= gap - 1
        miss += 1
    for s in range(rcv + 64, sm):  # (rwnd > 61 only)
        if not _has(C, I, BUF_SET, s) and not (far and _in_flight(I, s)):
            miss += 1
    quiet = I[I_INREC] == 0 and I[I_BACKOFF] == 0
    cw = F[F_CWND]
    ss = F[F_SSTH]
    cwk = np.int64(-1) if (quiet and cw >= CF[CF_RWND]) else np.int64(cw // mss)
    ssk = np.int64(-1) if (quiet and cw >= ss) else np.int64(ss // mss)
    c1 = ((cwk + 2) * 256 + ssk + 2) * 2 + I[I_INREC]
    c1 = ((((c1 * 64 + I[I_BACKOFF]) * 128 + held) * 128 + nd) * 128) + (sm - I[I_UNA])
    # The fields are packed in radices that hold a window of up to 61 packets; a field
    # beyond its radix (wide windows, a large initial ssthresh) could make two signatures
    # equal, so such a state's signatures also mix the field in (the others keep their
    # values, bit for bit)
    if ssk + 2 >= 256 or I[I_BACKOFF] >= 64 or held >= 128 or nd >= 128 or sm - I[I_UNA] >= 128:
        c1 = _mix(c1, np.int64((((ssk * 1024 + I[I_BACKOFF]) * 1024 + held) * 1024 + nd) * 1024
                               + sm - I[I_UNA]), _M1)
    # NewReno's recovery point still ahead (no new fast retransmit: RFC 6582 3.2 step 1)
    # and, when backed off, a resent segment outstanding (no RTT sample, so the back-off
    # stays: Karn, RFC 6298 5)
    blocked = np.int64(1) if I[I_RECOVER] >= I[I_UNA] else np.int64(0)
    rx = np.int64(0)
    if I[I_BACKOFF] > 0:
        for s in range(I[I_UNA], sm):
            if _has(C, I, RETX_SET, s):
                rx = np.int64(1)
                break
    # when the retransmission timer fires, in round trips from now (1023: not armed)
    due = np.int64(1023)
    for j in range(I[I_NEV]):
        if (I[N_I0 + j] & 3) == RTO:
            due = min(np.int64(F[OFF_EVT + j] / (2.0 * CF[CF_D])), np.int64(1022))
    dup = I[I_DUP] if I[I_DUP] < 15 else 15
    partial = I[I_PARTIAL] if I[I_INREC] else 0
    c0 = (((c1 * 128 + (sm - I[I_RCV])) * 2 + partial) * 16 + dup) * 128 + na
    c0 = _mix(c0, np.int64(((blocked * 2 + rx) * 1024 + due) * 64 + miss), _M1)  # hashed
    c0 = _mix(c0, I[I_QUICK], _M1)  # the receiver's quick ACKs left
    if sm - I[I_RCV] >= 128 or na >= 128 or miss >= 64:  # beyond their radices (above)
        c0 = _mix(c0, np.int64(((sm - I[I_RCV]) * 1024 + na) * 1024 + miss), _M1)
    base = c1 * 4 + blocked * 2 + rx
    c1 = (base * 1024 + due) * 64 + miss
    c2 = base * 64 + miss
    c4 = ((I[I_INREC] * 64 + I[I_BACKOFF]) * 4 + blocked * 2 + rx) * 64 + miss
    if miss >= 64 or I[I_BACKOFF] >= 64:
        c1 = _mix(c1, miss, _M1)
        c2 = _mix(c2, miss, _M1)
        c4 = _mix(c4, np.int64(I[I_BACKOFF] * 1024 + miss), _M1)
    c3 = c4 * 128 + (sm - I[I_UNA])
    if sm - I[I_UNA] >= 128:
        c3 = _mix(c3, sm - I[I_UNA], _M1)
    if C[C_NS3]:  # the ns3 sender: in every tier its congestion state (CA_LOSS ignores
        # duplicate ACKs), whether its recovery point is active and its Reno marks (each
        # takes a segment off the pipe); in tier 3 also cwnd in whole packets: without
        # inflation the window and the pipe alone decide what leaves (LT, b = 1, W0 = 2,
        # p = 0.1, 100 packets: +3.1 % against the simulator with the state and flag
        # only in tiers 3-4, +2.2 % with the marks, +1.0 % with the window too;
        # docs/model.md 6.9)
        o = C[C_NSOFF]
        x = np.int64((I[o + J_NSTATE] * 2 + I[o + J_RACT]) * 1024 + I[o + J_SACKN])
        c0 = _mix(c0, x, _M1)
        c1 = _mix(c1, x, _M1)
        c2 = _mix(c2, x, _M1)
        c4 = _mix(c4, x, _M1)
        c3 = _mix(c3, x * 256 + min(np.int64(F[F_CWND] // mss), np.int64(255)), _M1)
    return c0, c1, c2, c3, c4


def classes(C, CF, IS, FS, n, out):
    """:func:`class_keys` of rows 0..n-1 into ``out[0:NTIERS]``."""
    C, CF, IS, FS = uncounted((C, CF, IS, FS))
    for i in range(n):
        out[0, i], out[1, i], out[2, i], out[3, i], out[4, i] = class_keys(C, CF, IS[i], FS[i])


def row_hashes(C, CF, IS, FS, n, out):
    """:func:`state_hash` (first word) of level rows 0..n-1, relative to snd_max."""
    C, CF, IS, FS = uncounted((C, CF, IS, FS))
    for i in range(n):
        h1, h2 = state_hash(C, CF, IS[i], FS[i], IS[i, I_SMAX])
        out[i] = h1 ^ (h2 * np.int64(31))


def distance(ha, pa, hb, pb):
    """Total-variation distance between two level distributions (hashes, masses), each
    normalised to one."""
    h = np.concatenate([ha, hb])
    u, inv = np.unique(h, return_inverse=True)
    a = np.bincount(inv[:ha.size], pa / pa.sum(), minlength=u.size)
    b = np.bincount(inv[ha.size:], pb / pb.sum(), minlength=u.size)
    return 0.5 * float(np.abs(a - b).sum())


def scripted(C, CF, I, F, lost_count, cut):
    """Latency of one loss pattern on the flat engine, seconds: ``lost_count[k]`` first
    transmissions of segment k are lost (decremented as they are). With ``cut`` the run
    stops at every level and resumes (:func:`._packet_flat.resume`), as the level DP
    does: the same path. -1.0 if the state ran out of event slots."""
    n = C[C_N]
    lim = 1 if cut else 0
    C[C_LIM] = lim
    send_allowed(C, CF, I, F, 0.0, False)
    total = 0.0
    while True:
        if lim > 0 and I[I_SMAX] >= lim:
            lim = I[I_SMAX] + 1 if I[I_SMAX] + 1 < n else 0
            C[C_LIM] = lim
            resume(C, CF, I, F)
            continue
        total += run_to_branch(C, CF, I, F)
        if I[I_FAIL]:
            return -1.0
        if I[I_DONE]:
            return total
        if lim > 0 and I[I_SMAX] >= lim:
            continue
        seg = I[N_I0] >> 2
        lost = lost_count[seg] > 0
        if lost:
            lost_count[seg] -= 1
        deliver_head(C, CF, I, F, lost)


# Driver ---------------------------------------------------------------------------

_HELPERS = ("copy_row", "_end", "_seg_len", "_bit", "_word", "_has", "_put", "_take", "_low",
            "_window", "_empty",
            "_in_flight", "_push", "_delete", "_find", "_cancel", "_arm",
            "_sent_slot", "_transmit", "_flight", "send_allowed", "_rto_from_estimator", "_rtt_sample", "on_rto",
            "_new_ack", "_dup_ack", "on_ack", "_ack_now", "on_segment", "_rebase",
            "run_to_branch", "deliver_head", "resume", "shift", "_mix", "state_hash",
            "_lookup", "_clear", "_clear_table", "_add", "_place", "_child_masses", "_lossfree",
            "_accumulate", "class_keys", "_negligible", "tail_values", "_fold_branches",
            "_slot", "tail_signature", "_node_slot", "_node_lookup", "_ns3_key",
            "_ns3_pipe", "_ns3_add_reno_sack", "_ns3_mark_head_lost", "_ns3_transmit", "_ns3_send",
            "_ns3_increase_window", "_ns3_timer", "_ns3_on_rto", "_ns3_on_ack", "_ns3_dup_ack",
            "_ns3_new_ack")


_ENTRIES = ("advance_level", "tail_level", "reinsert", "rehash_nodes", "classes", "row_hashes",
            "scripted")


def kernels(compiled: bool = True) -> types.SimpleNamespace:
    """The DP's entry points (:data:`_ENTRIES`) as attributes: numba-compiled when
    ``compiled`` and numba is available, else the pure-Python functions (the same code,
    hence the same results). One set per process and kind, however the argument is
    passed (``kernels()`` and ``kernels(True)`` are the same set)."""
    return _kernels(bool(compiled))


@functools.cache
def _kernels(compiled: bool) -> types.SimpleNamespace:
    fns = None
    if compiled:
        from . import _packet_flat

        ns = {**vars(_packet_flat), **globals()}
        fns = compile_twins(ns, _HELPERS, [globals()[name] for name in _ENTRIES])
    if fns is None:  # the hash wraps around 2^64 by design: no overflow warnings
        fns = [_quiet(globals()[name]) for name in _ENTRIES]
    return types.SimpleNamespace(**dict(zip(_ENTRIES, fns)))


def warm_growth() -> None:
    """Load the memo's growth kernels (:meth:`_Memo.grow`: ``rehash_nodes``,
    ``reinsert``), which a small call does not reach, by running them on empty tables of
    their argument types (nothing is moved). For :func:`.packet.warm`."""
    k = kernels()
    z = np.zeros(2, np.int64)
    k.rehash_nodes(z, z, 0, np.full(2, -1, np.int32))
    k.reinsert(z, z, np.full(2, -1, np.int64), z.copy(), z.copy(), np.full(2, -1, np.int64))


def _quiet(fn):
    @functools.wraps(fn)
    def run(*args):
        with np.errstate(over="ignore"):
            return fn(*args)
    return run


class _Pool:
    """Rows of states with their masses and an open-addressing table."""

    def __init__(self, cap, ni, nf, k1):
        self.I = np.zeros((cap, ni), np.int64)
        self.F = np.zeros((cap, nf), np.float64)
        self.P = np.zeros((cap, k1))
        self.Q = np.zeros((cap, k1))
        self.cnt = np.zeros(1, np.int64)
        size = 1 << int(2 * cap - 1).bit_length()
        self.k1 = np.zeros(size, np.int64)
        self.k2 = np.zeros(size, np.int64)
        self.v = np.full(size, -1, np.int64)
        self.sl = np.zeros(cap, np.int64)

    def args(self):
        return (self.I, self.F, self.P, self.Q, self.cnt, self.k1, self.k2, self.v, self.sl)


class _Memo:
    """The tails' memo and the depth-first stack. Per node (rows, enlarged in place): its
    key (two hash words), state, mass, values and loss-free time; a key -> node table
    (int32 rows: half the bytes); the borrowing signatures' table, sized by its own count.
    Measured (docs/model.md section 5.2): the proposal, b = 1, W0 = 10, p = 0.2, 40
    packets holds 42.5 million nodes; its peak resident memory went from 18.9 GB (keys in
    the table, a signature table twice the node table, copies on growth) to 11.9 GB."""

    def __init__(self, cap, ni, nf, k1, depth=4096):
        size = 1 << int(2 * cap - 1).bit_length()
        self.k1 = np.zeros(cap, np.int64)  # a node's two hash words (its key)
        self.k2 = np.zeros(cap, np.int64)
        self.v = np.full(size, -1, np.int32)  # key -> node (load <= 1/2, a power of 2)
        self.st = np.zeros(cap, np.int8)
        self.mass = np.zeros(cap)
        self.NQ = np.zeros((cap, k1))
        self.NV = np.zeros((cap, k1))
        self.NL = np.zeros(cap)
        self.cnt = np.zeros(2, np.int64)  # nodes, signatures
        # signature -> its lending node: a table of its own (load <= 1/2, a power of 2),
        # grown apart from the nodes' (measured: 4 % as many signatures as nodes)
        self.gk1 = np.zeros(size, np.int64)
        self.gk2 = np.zeros(size, np.int64)
        self.gv = np.full(size, -1, np.int64)
        self.sl0 = np.zeros(depth)
        self.SI = np.zeros((depth, ni), np.int64)
        self.SF = np.zeros((depth, nf), np.float64)
        self.sbr = np.zeros(depth, np.int64)
        self.srow = np.zeros(depth, np.int64)
        self.sdt = np.zeros(depth)
        self.smass = np.zeros(depth)
        self.SQ = np.zeros((depth, k1))
        self.SV = np.zeros((depth, k1))

    _NODE_ARRAYS = ("k1", "k2", "st", "mass", "NQ", "NV", "NL")

    def signatures_full(self):
        """The test :func:`tail_values` makes before a node lends (up to
        len(TAIL_TIERS) new signatures; load <= 1/2)."""
        return 2 * (int(self.cnt[1]) + len(TAIL_TIERS)) > self.gv.shape[0]

    def nodes_full(self):
        """The test :func:`tail_values` makes before it adds a node."""
        n = int(self.cnt[0])
        return n >= self.NQ.shape[0] or 2 * (n + 1) > self.v.shape[0]

    def grow(self, reinsert, rehash):
        """Twice the capacity of whichever is full, the nodes or the signature table
        (:func:`tail_values` returned 1; keys rehashed, values kept; the node arrays are
        enlarged in place, so they are not held twice)."""
        if self.signatures_full():
            size = 2 * self.gv.shape[0]
            g1 = np.zeros(size, np.int64)
            g2 = np.zeros(size, np.int64)
            gv = np.full(size, -1, np.int64)
            reinsert(self.gk1, self.gk2, self.gv, g1, g2, gv)
            self.gk1, self.gk2, self.gv = g1, g2, gv
        if not self.nodes_full():
            return
        cap = 2 * self.NQ.shape[0]
        for name in self._NODE_ARRAYS:
            a = getattr(self, name)
            a.resize((cap,) + a.shape[1:], refcheck=False)  # new rows are zero
        self.v = None
        size = 1 << int(2 * cap - 1).bit_length()
        self.v = np.full(size, -1, np.int32)
        rehash(self.k1, self.k2, int(self.cnt[0]), self.v)

    def growth_bytes(self):
        """Bytes :meth:`grow` would add (the node rows at full capacity and the tables)."""
        add = 0
        if self.signatures_full():
            add += 2 * (self.gk1.nbytes + self.gk2.nbytes + self.gv.nbytes)
        if self.nodes_full():
            add += sum(getattr(self, name).nbytes for name in self._NODE_ARRAYS)
            add += 2 * self.v.nbytes
        return add

    def args(self):
        return (self.k1, self.k2, self.v, self.st, self.mass, self.NQ, self.NV, self.cnt,
                self.NL, self.gk1, self.gk2, self.gv, self.SI, self.SF, self.sbr, self.srow,
                self.sdt, self.smass, self.SQ, self.SV, self.sl0)


BIG = 1 << 40
"""Segments of the unbounded transfer of the level phase (never reached)."""


def resident_bytes() -> int:
    """This process's resident memory, bytes: the current size on Linux
    (``/proc/self/statm``), else the peak so far (an upper bound of it)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return peak_resident_bytes()


def peak_resident_bytes() -> int:
    """This process's peak resident memory so far, bytes (``getrusage``; POSIX)."""
    import resource  # POSIX only; imported where used

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, else KiB


def _guard(params, what, add_bytes) -> None:
    """Refuse to enlarge the DP's arrays by ``add_bytes`` (counted in full, though the
    rows are filled gradually) when that would take the process over the memory limit
    (:func:`..checks.memory_limit_bytes`): a clear error instead of the system's
    out-of-memory killer. Raises :class:`..checks.BudgetError` (a ValueError)."""
    try:
        check_memory(f"the packet model (level DP; p = {params.p:g}, W0 = {params.w0:g}, "
                     f"b = {params.b}) enlarging its {what}", resident_bytes() + add_bytes)
    except BudgetError as exc:
        raise BudgetError(f"{exc}; a larger eps or a smaller max_states needs less") from None


def handoff_margin(params, last_len: int, mss: int) -> int:
    """m0: the level N - m0 is the last one a size-N transfer shares with the unbounded
    one (module docstring): 1, or 2 with a short last segment (its length decides the
    transition that sends it, and Early Retransmit's test in the level before), and
    dup_t + 1 under the paper's tail rule (snd_una >= N - dup_t)."""
    m0 = 2 if last_len != mss else 1
    if params.tail_retransmit:
        m0 = max(m0, params.dup_t + 1)
    return m0


class LevelResult:
    """What :func:`solve` gives for one size.

    ``done_p[k]``, ``done_pt[k]``: probability and probability x latency (seconds) of the
    paths with k losses (last bin: K or more; the masses sum to one, as no path is
    dropped: a negligible one goes on with no further loss, a folded one as the average
    kept path of its signature); ``extra_s``: for a
    size beyond the stationary level, (N - N_ref) x the per-packet increment (seconds),
    added to the reference size's result (``extrapolated`` True; its loss-count vectors
    are the reference's); ``est``: mass whose RTO estimator left its minimum; ``folded``:
    mass folded into kept states (summed over levels); ``states``: level states
    expanded."""

    __slots__ = ("done_p", "done_pt", "extra_s", "extrapolated", "est", "folded", "states")

    def __init__(self, done_p, done_pt, est, folded, states, extra_s=0.0,
                 extrapolated=False):
        self.done_p = done_p
        self.done_pt = done_pt
        self.extra_s = extra_s
        self.extrapolated = extrapolated
        self.est = est
        self.folded = folded
        self.states = states

    @property
    def expected_s(self) -> float:
        """E[T] on the rounds time model, seconds."""
        return float(self.done_pt.sum()) + self.extra_s


POOL_SPREAD = 2.0
"""Distinct children per state a level is first assumed to have (before folding). The
level pools are enlarged before a level that would fill them (:func:`solve`): to hold
1.25 x its states x the larger ratio of the last two levels (they alternate between about
1.3 and 2.3 once the levels are large); a level that fills them anyway runs again in pools
twice as large. Measured: LT, b = 1, W0 = 2, p = 0.2, sizes 1-20 ran three levels again,
11 % of its time (docs/model.md section 5.2)."""
POOL_MARGIN = 1.25
"""The margin of :data:`POOL_SPREAD`'s estimate (0: no enlargement ahead)."""
POOL_SPREAD_FROM = 256
"""Levels of fewer states do not update the estimate (:data:`POOL_SPREAD`): the first
levels' few states have many children each (W0 = 10, b = 1: hundreds), which would ask
for pools hundreds of times too large."""

STATIONARY_WINDOW = 10
"""Levels over which the per-level increment's drift is measured (:func:`solve`)."""
STATIONARY_TV = 1e-3
"""Largest total-variation move of the level distribution between two levels that can
count as stationary (folding keeps it from going to 0)."""


def is_stationary(means, tv, left, tol) -> bool:
    """Whether the level distribution counts as stationary (:func:`solve`): it moved by
    ``tv`` < :data:`STATIONARY_TV` (total variation) from the last level, and the drift of
    the per-level increment of ``means`` (mean elapsed time per level, seconds) over
    :data:`STATIONARY_WINDOW` levels, carried on ``left`` more levels, adds up to less
    than ``tol`` of the elapsed time."""
    w = STATIONARY_WINDOW
    if tv >= STATIONARY_TV or len(means) <= 2 * w + 1:
        return False
    inc = np.diff(means[-2 * w - 1:])
    drift = abs(inc[w:].mean() - inc[:w].mean()) / w  # per level
    return drift * left * left / 2.0 < tol * means[-1]


def solve(consts, params, sizes, *, eps, tail_eps, k_max, max_states=0, tol=None,
          tail_borrow=True, tail_seed=None, compiled=True, pool=4096, memo=1 << 16,
          stats=None, progress=None):
    """The level DP for file sizes ``sizes`` (bytes).

    ``consts(size_bytes)`` gives the engine's (C, CF) for a size (rounds time model).
    Every level is folded (:func:`fold_level`): its states beyond the ``max_states`` most
    probable and those lighter than ``eps``. With ``tol``, the level distribution
    (relative to snd_max) counts as stationary once it moves by less than
    :data:`STATIONARY_TV` (total variation) from one level to the next and the per-level
    increment of the mean elapsed time drifts so little over :data:`STATIONARY_WINDOW`
    levels that, carried on to the largest size, the drift adds up to less than ``tol``
    of the elapsed time. Every larger size is then the reference size handed off there
    plus (N - N_ref) x the increment (exact for a stationary distribution).
    ``tail_borrow``: truncated tail nodes borrow the later losses of a probable node of
    their signature (:func:`tail_values`) instead of finishing loss-free, and one whose
    signature has no such node yet is expanded unless it is lighter than ``tail_eps`` x
    ``tail_seed`` (0: finished loss-free, as before 2026-11-28). Returns
    {size: :class:`LevelResult`}; ``stats`` (a dict) receives per-level diagnostics
    (with the tails' truncated and borrowing node counts); ``progress(done, total)`` is
    called after each level (``total`` levels; ``done == total`` at the end). Raises
    :class:`..checks.BudgetError` (a ValueError) rather than enlarge its arrays past the
    memory limit (:func:`_guard`)."""
    k = kernels(compiled)
    advance, tail, reinsert_k, classes_k, hashes_k = (k.advance_level, k.tail_level,
                                                      k.reinsert, k.classes, k.row_hashes)
    rehash_k = k.rehash_nodes
    mss = params.mss_bytes
    seed = TAIL_SEED if tail_seed is None else tail_seed
    seed_eps = tail_eps * seed if tail_borrow else 0.0
    k1 = k_max + 1
    p = float(params.p)
    Cl, CFl = consts(BIG * mss)
    ni, nf = (n_int(int(Cl[C_EVMAX]), int(Cl[C_SETW]), bool(Cl[C_NS3])),
              n_float(int(Cl[C_EVMAX]), int(Cl[C_SETW])))
    groups = {}
    for size in sizes:
        n = -(-size // mss)
        last = size - (n - 1) * mss
        groups.setdefault(last, []).append((size, n))
    handoff = {}
    tails = {}
    for last, members in groups.items():
        m0 = handoff_margin(params, last, mss)
        Ct, CFt = consts((NE - 1) * mss + last)
        tails[last] = (Ct, CFt, _Memo(memo, ni, nf, k1), m0)
        for size, n in members:
            handoff.setdefault(max(n - m0, 0), []).append((last, size, n))
    top = max(handoff)
    cur = _Pool(pool, ni, nf, k1)
    I0, F0 = new_state(Cl, CFl, params.w0, params.w_ss)
    cur.I[0] = I0
    cur.F[0] = F0
    cur.P[0, 0] = 1.0
    cur.cnt[0] = 1
    out, pa, pb = (_Pool(pool, ni, nf, k1) for _ in range(3))
    drop = np.zeros(2)
    spread = [POOL_SPREAD] * 2  # distinct children per state of the last two levels (before folding)
    expanded = 0
    folded = 0.0
    rolled = 0.0
    means = []  # survivors' mean elapsed time per level
    stationary = False
    prev = None
    res = {}

    def finish(last, n, n_cur):
        Ct, CFt, mm, _m0 = tails[last]
        while True:
            acc = np.zeros((3, k1))
            st = tail(Ct, CFt, p, tail_eps, tail_borrow, seed_eps, NE - n, cur.I, cur.F,
                      cur.P, cur.Q, n_cur, *mm.args(), acc)
            if st == 0:
                break
            if st != 1:
                raise RuntimeError(f"packet model: a state needs more event slots or "
                                   f"stack than allocated (status {st})")
            mm.st[mm.st == 3] = 0
            _guard(params, f"memo of the file's end ({int(mm.cnt[0]):,} nodes)",
                   mm.growth_bytes())
            mm.grow(reinsert_k, rehash_k)
        return LevelResult(acc[0], acc[1], float(acc[2, 0]), folded, expanded)

    for L in range(top + 1):
        n_cur = int(cur.cnt[0])
        if stats is not None:
            stats.setdefault("level_states", []).append(n_cur)
        for last, size, n in handoff.get(L, ()):
            res[size] = finish(last, n, n_cur)
        if L == top:
            break
        if stationary:
            inc = float(np.mean(np.diff(means[-STATIONARY_WINDOW - 1:])))
            refs = {}
            for H in sorted(h for h in handoff if h > L):
                for last, size, n in handoff[H]:
                    if last not in refs:
                        n_ref = L + tails[last][3]
                        refs[last] = (n_ref, finish(last, n_ref, n_cur))
                    n_ref, r = refs[last]
                    res[size] = LevelResult(r.done_p, r.done_pt, r.est, r.folded, r.states,
                                            extra_s=(n - n_ref) * inc, extrapolated=True)
            if stats is not None:
                stats["stationary_level"] = L
                stats["increment_s"] = inc
            break
        if progress is not None:
            progress(L, top)
        Cl[C_LIM] = L + 1
        # enlarged ahead rather than run again when full: at most 4x a level, and only
        # within the memory limit (the run-again path below is the one that refuses)
        ahead = out.I.shape[0]
        while ahead < POOL_MARGIN * max(spread) * n_cur and ahead < 4 * out.I.shape[0]:
            ahead *= 2
        if ahead > out.I.shape[0]:
            try:
                _guard(params, "level pools", 3 * ahead / out.I.shape[0] * sum(a.nbytes for a in out.args()))
            except BudgetError:
                pass
            else:
                out, pa, pb = (_Pool(ahead, ni, nf, k1) for _ in range(3))
        while True:
            st = advance(Cl, CFl, p, eps, cur.I, cur.F, cur.P, cur.Q, n_cur,
                         *out.args(), *pa.args(), *pb.args(), drop)
            if st == 0:
                break
            if st != 1:
                raise RuntimeError(f"packet model: a state needs more event slots than "
                                   f"allocated (status {st})")
            cap = 2 * out.I.shape[0]
            _guard(params, f"level pools (level {L}, {cap:,} states)",
                   6 * sum(a.nbytes for a in out.args()))
            out, pa, pb = (_Pool(cap, ni, nf, k1) for _ in range(3))
            if stats is not None:
                stats["level_reruns"] = stats.get("level_reruns", 0) + 1
        if n_cur >= POOL_SPREAD_FROM:  # (a level of a few states says little)
            spread = spread[1:] + [int(out.cnt[0]) / n_cur]
        expanded += n_cur
        fold_level(out, max_states, eps, classes_k, Cl, CFl)
        folded += out.folded
        cur, out = out, cur
        if out.I.shape[0] < cur.I.shape[0]:
            # the next level is written into the pool of this one's input: as large as the
            # others, or the next level would overflow it and be run again (the enlargement's
            # guard above counted six pools of this size)
            out = _Pool(cur.I.shape[0], ni, nf, k1)
        nn = int(cur.cnt[0])
        pp = cur.P[:nn].sum(axis=1)
        means.append(float(cur.Q[:nn].sum() / pp.sum()))
        rolled += float(drop[1])
        if stats is not None:
            stats["children"] = stats.get("children", 0) + int(drop[0])
        if tol:
            hh = np.empty(nn, np.int64)
            hashes_k(Cl, CFl, cur.I, cur.F, nn, hh)
            if prev is not None:
                tv = distance(prev[0], prev[1], hh, pp)
                if stats is not None:
                    stats.setdefault("tv", []).append(tv)
                stationary = is_stationary(means, tv, top - (L + 1), tol)
            prev = (hh, pp)
    if progress is not None:
        progress(top, top)
    if stats is not None:
        stats["memo_nodes"] = sum(int(t[2].cnt[0]) for t in tails.values())
        stats["tail_signatures"] = sum(int(t[2].cnt[1]) for t in tails.values())
        stats["tail_truncated"] = sum(int(np.sum(t[2].st == 2)) for t in tails.values())
        stats["tail_borrowed"] = sum(int(np.sum(t[2].st == 4)) for t in tails.values())
        stats["folded"] = folded
        stats["rolled"] = rolled
    return res


TAIL_SEED = 1e-2
"""A truncated tail node whose signature no expanded node has yet is expanded (and lends
to the next of its signature) unless it is lighter than ``tail_eps`` x this
(:func:`tail_values`): before 2026-11-28 it finished loss-free, 0.07-12 % of the truncated
nodes, and now 17-42 nodes a call do (docs/model.md section 4, "Seeding": E[T] up by at
most 0.24 % on ten heavy cells, toward the untruncated value, for no measurable time)."""

TAIL_TIERS = (1, 2, 4)
"""The :func:`class_keys` tiers of :func:`tail_signature`, finest first."""

NTIERS = 5
"""Folding tiers of :func:`class_keys`, finest first."""

NO_TIMER = 2
"""The :func:`class_keys` tier without the retransmission timer's due time."""

COARSE = 3
"""The first :func:`class_keys` tier that takes only improbable states (:func:`fold_level`)."""

LEVEL_CAP = 2
"""A level holds at most ``LEVEL_CAP x max_states`` states that are not lighter than
``eps`` (:func:`fold_level`). A state beyond the ``max_states`` most probable whose
tier-1 signature (with the retransmission timer's due time) no kept state shares stays,
the most probable first, up to that bound; the others fold by tier 2, without the due
time, and those that match no kept state there either fold on the coarse tiers (3, 4)
once the level is full. Measured (docs/model.md section 4): with no cap, the proposal,
b = 1, W0 = 10, p = 0.2, 40 and 100 packets ran out of 23 GB; with a cap of 1 most of
the due time's gain was lost; with the bound on the tier-1 stays only, the states
whose tier-2 signature no kept state shares made levels of up to 330,368 states (12
GB) and, against a reference without folding and with 100 times tighter truncation,
E[T] 1.7-1.9 % low with W0 = 10 at ``max_states`` 1000 (0.5-1.4 % either way with the
whole level bounded)."""


def fold_level(pool, keep, light, classes_k, C, CF):
    """Bound a level (in place): the states beyond its ``keep`` most probable ones and
    those lighter than ``light`` fold into kept states of their coarse signature
    (:func:`classes`, the finest tier that has one) in proportion to the kept masses, so
    their paths continue as the average kept path of that signature, from their own
    elapsed time. A heavy state whose signature (tiers 0-2) no kept state has stays, the
    most probable first, until the level holds :data:`LEVEL_CAP` x ``keep`` heavy states;
    the rest, and the light states, are tried on the coarser tiers and, if they match no
    kept state even there, a heavy one stays and the heaviest light state of its
    coarsest signature stays and the others of that signature fold into it. No mass is
    dropped; ``pool.folded`` is the mass folded."""
    n = int(pool.cnt[0])
    P, Q = pool.P[:n], pool.Q[:n]
    m = P.sum(axis=1)
    is_light = m < light
    rest = is_light.copy()
    if keep and n > keep:
        rest[np.argsort(-m, kind="stable")[keep:]] = True
    pool.folded = 0.0
    if not rest.any():
        return
    kept = np.flatnonzero(~rest)
    rest = np.flatnonzero(rest)
    cls = np.empty((NTIERS, n), np.int64)
    classes_k(C, CF, pool.I, pool.F, n, cls)
    left = np.zeros(n, bool)
    left[rest] = True

    def fold(into, ids, tier):
        """Fold states ``ids`` into the states ``into`` of their signature (tier);
        returns which of ``ids`` found one."""
        u, inv = np.unique(cls[tier, np.concatenate([into, ids])], return_inverse=True)
        ik, idr = inv[:into.size], inv[into.size:]
        km = np.bincount(ik, m[into], minlength=u.size)
        dm = np.bincount(idr, m[ids], minlength=u.size)
        dq = np.bincount(idr, Q[ids].sum(axis=1), minlength=u.size)
        pool.folded += float(dm[km > 0.0].sum())
        has = (km > 0.0) & (dm > 0.0)
        f = np.where(has, dm / np.where(km > 0.0, km, 1.0), 0.0)
        g = np.where(has, dq / np.where(km > 0.0, km, 1.0), 0.0)
        Pk = P[into]
        Q[into] += Pk * g[ik][:, None]
        P[into] = Pk * (1.0 + f[ik][:, None])
        m[into] = P[into].sum(axis=1)
        return km[idr] > 0.0

    room = max(LEVEL_CAP * keep - kept.size, 0)  # probable states beyond the kept ones
    coarse = is_light.copy()  # the states the coarse tiers take
    for tier in range(NTIERS):
        ids = rest[left[rest]]
        if tier >= COARSE:
            ids = ids[coarse[ids]]
        elif tier == NO_TIMER and keep:
            # probable states that no kept state shares tier 1 with stay, the most
            # probable first, up to LEVEL_CAP x keep states with the kept ones
            probable = ids[~is_light[ids]]
            stay = probable[np.argsort(-m[probable], kind="stable")[:room]]
            ids = np.setdiff1d(ids, stay, assume_unique=True)
        if ids.size == 0 or kept.size == 0:
            break
        left[ids[fold(kept, ids, tier)]] = False
        if tier == NO_TIMER and keep:
            # the level is full: the least probable of the probable states still left
            # (no kept state shares their tier-2 signature) try the coarse tiers too
            heavy = rest[left[rest] & ~is_light[rest]]
            coarse[heavy[np.argsort(-m[heavy], kind="stable")[room:]]] = True
    heavy = rest[left[rest] & ~is_light[rest]]
    light_left = rest[left[rest] & is_light[rest]]
    reps = np.empty(0, np.int64)
    if light_left.size:
        # the heaviest of each coarsest signature stays, the others fold into it
        c = cls[NTIERS - 1, light_left]
        srt = light_left[np.lexsort((-m[light_left], c))]
        first = np.ones(srt.size, bool)
        first[1:] = cls[NTIERS - 1, srt[1:]] != cls[NTIERS - 1, srt[:-1]]
        reps = srt[first]
        if (~first).any():
            fold(reps, srt[~first], NTIERS - 1)
    kept = np.sort(np.concatenate([kept, heavy, reps]))
    for a in (pool.I, pool.F, pool.P, pool.Q):
        a[:kept.size] = a[kept]
    pool.cnt[0] = kept.size
