"""The relative-state method of the packet-level model (private; docs/packet-model.md).

The unbounded transfer (no file end) is cut every time snd_max grows by one segment: a
*level* L holds the sender and receiver just after segment L - 1 first left. Nothing in
the flat engine (:mod:`._packet_flat`) reads an absolute sequence number except the file
end, so a level state is identified by its variables *relative to snd_max*
(:func:`._packet_levels.state_hash`: segment and ACK numbers from snd_max, event times
from the cut's instant, windows, timers, recovery and the receiver's held segments).

* **The level kernel** K(s): the distribution of the next level's state, the loss count
  added and the probability-weighted elapsed time, from state s. It does not depend on L,
  so it is computed once per distinct relative state (:func:`expand_level`) and stored as
  edges (child, losses added, probability, probability x elapsed time).
* **The forward pass** is a sparse product per level (:func:`propagate`):
  ``P[L+1] = P[L] K_p``, ``PT[L+1] = PT[L] K_p + P[L] K_t``, per loss count.
* **The file's end.** A size-N transfer is the unbounded one up to level N - m0
  (:func:`._packet_levels.handoff_margin`); from there its expected remaining time
  tau(s) depends on the relative state only (the state renumbered so that the file end
  is segment ``NE``), so it is memoised per state (:func:`tails`), and one forward pass
  gives every size: ``E[T(N)] = sum_s PT[N-m0](s) + P[N-m0](s) tau(s)``.
* **Truncation.** Inside a kernel a branch point whose conditional probability (x its RTO
  over the minimum RTO) is below ``eps`` goes on to the next level with no further loss;
  a level state whose absolute probability is below ``eps_state`` takes the loss-free
  kernel (one child), and its file end the loss-free tail; a node of a file's end below
  ``tail_eps`` (in absolute probability) finishes loss-free. Each such point books as
  *truncated mass* its probability x 1 - (1 - p)^a, a the data arrivals of the loss-free
  continuation it takes: the probability that a loss it leaves out occurs (summed, a
  union bound), reported with each size; the latency is low by the cost of those losses.
"""

from __future__ import annotations

import functools
import time
import types

import numpy as np

from ..accel import compile_twins, held, uncounted
from ..checks import BudgetError, check_memory
from . import _packet_levels as LV
from ._packet_flat import (
    C_EVMAX, C_LIM, C_N, C_NS3, C_SENTMASK, C_SENTOFF, C_SETOFF, C_SETW, CF_MINRTO, F_CWND,
    F_RTO, F_SSTH, I_BACKOFF, I_DONE, I_FAIL, I_NEV, I_NXT, I_RTOMIN, I_SMAX, I_UNA, N_I0, N_J,
    OFF_EVT, deliver_head, n_float, n_int, new_state, resume, run_to_branch, shift)
from ._packet_levels import (
    BIG, NE, _accumulate, _add, _child_masses, _clear, _clear_table, _lookup, _lossfree,
    _negligible,
    _node_lookup, _place, _slot, class_keys, copy_row, handoff_margin, state_hash)


# Kernels ----------------------------------------------------------------------------

def _expand_one(C, CF, p, eps, I0, F0, I, F, cp, cq, e0, z,
                OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                AI, AF, AP, AQ, acnt, ak1, ak2, av, asl,
                BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl, drop):
    """K(s) of one level state (I0, F0) into pool O: its children at the next level with
    their masses per loss count added (P[dk], PT[dk], conditional on s). A and B are the
    branch-point pools of the sub-step. ``drop[1]``: the conditional mass continued with
    no further loss (truncated); ``drop[0]``: children run. Returns 0, 1 if a pool is full,
    2 if a state ran out of event slots."""
    _clear(ocnt, ov, osl)
    _clear(acnt, av, asl)
    _clear(bcnt, bv, bsl)
    drop[0] = 0.0
    drop[1] = 0.0
    C[C_LIM] = I0[I_SMAX] + 1
    copy_row(C, I0, F0, I, F)
    resume(C, CF, I, F)
    if I[I_SMAX] >= C[C_LIM]:
        h1, h2 = state_hash(C, CF, I, F, I[I_SMAX])
        if not _add(C, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl, I, F, e0, z, h1, h2):
            return 1
        return 0
    dt = run_to_branch(C, CF, I, F)
    if I[I_FAIL]:
        return 2
    _child_masses(e0, z, 1.0, dt, False, cp, cq)
    if not _place(C, CF, I, F, cp, cq, OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                  AI, AF, AP, AQ, acnt, ak1, ak2, av, asl):
        return 1
    cur = 0
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
        for j in range(xn):
            m = XP[j].sum()
            if _negligible(m, XF[j], CF, eps):  # improbable: no further loss this level
                copy_row(C, XI[j], XF[j], I, F)
                dt = 0.0
                arrivals = 0
                while I[I_SMAX] < C[C_LIM]:
                    deliver_head(C, CF, I, F, False)
                    arrivals += 1
                    dt += run_to_branch(C, CF, I, F)
                    if I[I_FAIL]:
                        return 2
                _child_masses(XP[j], XQ[j], 1.0, dt, False, cp, cq)
                drop[1] += m * (1.0 - (1.0 - p) ** arrivals)  # a left-out loss occurs
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
    _clear(acnt, av, asl)
    _clear(bcnt, bv, bsl)
    return 0


def _pack(C, I, F, IA, FA, PS, srto, top, n):
    """Store state (I, F) as state ``n`` in the arenas ``IA``, ``FA`` (``PS[n]``: its
    offsets; ``top``: the arenas' fill): only what :func:`copy_row` copies, the fixed
    fields, the pending events, the segment sets and the send times of
    [snd_una, snd_max) (a quarter of a full row)."""
    nev = I[I_NEV]
    ip = top[0]
    PS[n, 0] = ip
    for j in range(N_I0 + nev):
        IA[ip + j] = I[j]
    q = ip + N_I0 + nev
    a = C[C_SETOFF]
    w = 2 * C[C_SETW] + (N_J if C[C_NS3] else 0)
    for j in range(w):
        IA[q + j] = I[a + j]
    top[0] = q + w
    fp = top[1]
    PS[n, 1] = fp
    for j in range(OFF_EVT + nev):
        FA[fp + j] = F[j]
    r = fp + OFF_EVT + nev
    off = C[C_SENTOFF]
    mask = C[C_SENTMASK]
    una = I[I_UNA]
    for k in range(una, I[I_SMAX]):
        FA[r + k - una] = F[off + (k & mask)]
    top[1] = r + I[I_SMAX] - una
    srto[n] = F[F_RTO]


def _load(C, IA, FA, PS, s, I, F):
    """State ``s`` of the arenas into rows (I, F) (:func:`_pack`'s inverse)."""
    ip = PS[s, 0]
    nev = IA[ip + I_NEV]
    for j in range(N_I0 + nev):
        I[j] = IA[ip + j]
    q = ip + N_I0 + nev
    a = C[C_SETOFF]
    w = 2 * C[C_SETW] + (N_J if C[C_NS3] else 0)
    for j in range(w):
        I[a + j] = IA[q + j]
    fp = PS[s, 1]
    for j in range(OFF_EVT + nev):
        F[j] = FA[fp + j]
    r = fp + OFF_EVT + nev
    off = C[C_SENTOFF]
    mask = C[C_SENTMASK]
    una = I[I_UNA]
    for k in range(una, I[I_SMAX]):
        F[off + (k & mask)] = FA[r + k - una]


def _intern(C, CF, I, F, IA, FA, PS, srto, top, cnt, hk1, hk2, hv):
    """Id of the relative state (I, F) in the store, entered if new (the caller made
    room for one more)."""
    h1, h2 = state_hash(C, CF, I, F, I[I_SMAX])
    r = _lookup(hk1, hk2, hv, h1, h2)
    if r >= 0:
        return r
    n = cnt[0]
    j = -r - 1
    hk1[j] = h1
    hk2[j] = h2
    hv[j] = n
    _pack(C, I, F, IA, FA, PS, srto, top, n)
    cnt[0] = n + 1
    return n


def expand_level(C, CF, p, eps, ids, light, n, start,
                 IA, FA, PS, srto, top, cnt, hk1, hk2, hv, est, etr, lfc, lfd,
                 ech, edk, ep, eq, ecnt,
                 OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                 AI, AF, AP, AQ, acnt, ak1, ak2, av, asl,
                 BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl, out):
    """Make sure every state ``ids[start:n]`` of a level has its kernel: K(s) (edges
    ``est[s]`` .. ``est[s+1]``... stored as start ``est[s, 0]`` and count ``est[s, 1]``,
    -1 until computed; ``etr[s]``: its truncated mass) or, where ``light[i]``, the
    loss-free kernel (child ``lfc[s]``, elapsed time ``lfd[s, 0]``, -1 until computed, and
    ``lfd[s, 1]`` the probability that the true path departs from it: one of its data
    arrivals lost, 1 - (1 - p)^arrivals). ``etr[s]``: the kernel's truncated mass, each
    branch point continued loss-free counted with the probability that a loss it leaves
    out occurs.
    ``out[0]``: status (0 done; 1 the store or the edges are full, 3 a pool is full: the
    caller enlarges and calls again from ``out[1]``; 2 out of event slots)."""
    C, CF, ids, light, IA, FA, PS, srto, top = uncounted((C, CF, ids, light, IA, FA, PS, srto, top))
    cnt, hk1, hk2, hv = uncounted((cnt, hk1, hk2, hv))
    est, etr, lfc, lfd, ech, edk, ep, eq, ecnt = uncounted((est, etr, lfc, lfd, ech, edk, ep, eq, ecnt))
    OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl = uncounted((OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl))
    AI, AF, AP, AQ, acnt, ak1, ak2, av, asl = uncounted((AI, AF, AP, AQ, acnt, ak1, ak2, av, asl))
    BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl = uncounted((BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl))
    k1 = OP.shape[1]
    scratch = (np.empty(k1), np.empty(k1), np.zeros(k1), np.zeros(k1), np.zeros(2))
    rows = (np.empty(OI.shape[1], np.int64), np.empty(OF.shape[1]),
            np.empty(OI.shape[1], np.int64), np.empty(OF.shape[1]))
    cp, cq, e0, z, drop = uncounted(scratch)
    I, F, I0, F0 = uncounted(rows)
    e0[0] = 1.0
    cap = PS.shape[0]
    ni = OI.shape[1]
    nf = OF.shape[1]
    for i in range(start, n):
        s = ids[i]
        if light[i]:
            if lfc[s] >= 0:
                continue
            if (cnt[0] + 1 > cap or 2 * (cnt[0] + 1) > hv.shape[0]
                    or top[0] + ni > IA.shape[0] or top[1] + nf > FA.shape[0]):
                out[0] = 1
                out[1] = i
                return
            _load(C, IA, FA, PS, s, I, F)
            C[C_LIM] = I[I_SMAX] + 1
            resume(C, CF, I, F)
            dt = 0.0
            arrivals = 0
            if I[I_SMAX] < C[C_LIM]:
                dt = run_to_branch(C, CF, I, F)
                while I[I_SMAX] < C[C_LIM] and not I[I_FAIL]:
                    deliver_head(C, CF, I, F, False)
                    arrivals += 1
                    dt += run_to_branch(C, CF, I, F)
            if I[I_FAIL]:
                out[0] = 2
                return
            lfc[s] = _intern(C, CF, I, F, IA, FA, PS, srto, top, cnt, hk1, hk2, hv)
            lfd[s, 0] = dt
            lfd[s, 1] = 1.0 - (1.0 - p) ** arrivals
            continue
        if est[s, 1] >= 0:
            continue
        _load(C, IA, FA, PS, s, I0, F0)
        st = _expand_one(C, CF, p, eps, I0, F0, I, F, cp, cq, e0, z,
                         OI, OF, OP, OQ, ocnt, ok1, ok2, ov, osl,
                         AI, AF, AP, AQ, acnt, ak1, ak2, av, asl,
                         BI, BF, BP, BQ, bcnt, bk1, bk2, bv, bsl, drop)
        if st != 0:
            out[0] = 3 if st == 1 else 2
            out[1] = i
            return
        m = ocnt[0]
        ne = 0
        for j in range(m):
            for dk in range(k1):
                if OP[j, dk] > 0.0:
                    ne += 1
        if (cnt[0] + m > cap or 2 * (cnt[0] + m) > hv.shape[0]
                or ecnt[0] + ne > ech.shape[0]
                or top[0] + m * ni > IA.shape[0] or top[1] + m * nf > FA.shape[0]):
            out[0] = 1
            out[1] = i
            _clear_table(m, ov, osl)
            ocnt[0] = 0
            return
        e = ecnt[0]
        est[s, 0] = e
        for j in range(m):
            c = _intern(C, CF, OI[j], OF[j], IA, FA, PS, srto, top, cnt, hk1, hk2, hv)
            for dk in range(k1):
                if OP[j, dk] > 0.0:
                    ech[e] = c
                    edk[e] = dk
                    ep[e] = OP[j, dk]
                    eq[e] = OQ[j, dk]
                    e += 1
        est[s, 1] = e - est[s, 0]
        etr[s] = drop[1]
        ecnt[0] = e
        _clear_table(m, ov, osl)
        ocnt[0] = 0
    held(scratch)
    held(rows)
    out[0] = 0
    out[1] = n


def propagate(ids, LP, LQ, light, n, est, etr, lfc, lfd, ech, edk, ep, eq,
              pos, nids, NP, NQ, nout, tr):
    """One level of the forward pass: ``P[L+1] = P[L] K_p``, ``PT[L+1] = PT[L] K_p +
    P[L] K_t`` per loss count (the last bin holds K or more), through each state's kernel
    (the loss-free one where ``light``). ``pos`` (-1 everywhere on entry and on return)
    maps a state to its row of the next level; ``nout[0]``: its states; ``tr[0]`` +=
    the mass truncated in this level."""
    ids, LP, LQ, light, est, etr, lfc, lfd = uncounted((ids, LP, LQ, light, est, etr, lfc, lfd))
    ech, edk, ep, eq, pos, nids, NP, NQ = uncounted((ech, edk, ep, eq, pos, nids, NP, NQ))
    k1 = LP.shape[1]
    m = 0
    for i in range(n):
        s = ids[i]
        if light[i]:
            c = lfc[s]
            r = pos[c]
            if r < 0:
                r = m
                pos[c] = r
                nids[r] = c
                NP[r, :] = 0.0
                NQ[r, :] = 0.0
                m += 1
            dt = lfd[s, 0]
            for k in range(k1):
                NP[r, k] += LP[i, k]
                NQ[r, k] += LQ[i, k] + LP[i, k] * dt
                tr[0] += LP[i, k] * lfd[s, 1]
            continue
        a = est[s, 0]
        tot = 0.0
        for k in range(k1):
            tot += LP[i, k]
        tr[0] += tot * etr[s]
        for e in range(a, a + est[s, 1]):
            c = ech[e]
            r = pos[c]
            if r < 0:
                r = m
                pos[c] = r
                nids[r] = c
                NP[r, :] = 0.0
                NQ[r, :] = 0.0
                m += 1
            dk = edk[e]
            w = ep[e]
            wt = eq[e]
            for k in range(k1):
                kk = k + dk
                if kk >= k1:
                    kk = k1 - 1
                NP[r, kk] += w * LP[i, k]
                NQ[r, kk] += w * LQ[i, k] + wt * LP[i, k]
    for r in range(m):
        pos[nids[r]] = -1
    nout[0] = m


def _lossfree_arrivals(C, CF, I, F):
    """:func:`._packet_levels._lossfree` of a branch-point state, with the data arrivals
    on that path (the branch point's own included): (seconds, arrivals); -1 s when a
    state ran out of event slots. The true path departs from the loss-free one exactly
    when one of those arrivals is lost: with probability 1 - (1 - p)^arrivals."""
    t = 0.0
    arrivals = 0
    while not I[I_DONE]:
        deliver_head(C, CF, I, F, False)
        arrivals += 1
        t += run_to_branch(C, CF, I, F)
        if I[I_FAIL]:
            return -1.0, arrivals
    return (t if t > 0.0 else 0.0), arrivals


def tail_values(C, CF, p, eps, mass0, I0, F0, nk1, nk2, nv, nst, nmass, NQ, NV, NT, ncnt,
                SI, SF, sbr, srow, sdt, smass, SQ, SV, ST, out_q, out_v, out_t):
    """Expected remaining time of the branch-point state (I0, F0) of a finite transfer,
    by loss count: ``out_q[j]`` = P(j more losses), ``out_v[j]`` = E[remaining time; j
    more losses] (seconds; the last bin holds K or more), ``out_t[0]``: the probability
    of the paths truncated (finished with no further loss).

    Backward over the tail's tree with a memo keyed relative to the file end (nodes
    ``nk1, nk2`` -> row ``nv``; ``nst``: 1 expanded, 2 truncated, 3 in progress), masses
    from the root's ``mass0`` (its probability at the hand-off level): a node below
    ``eps`` (x RTO / min RTO) finishes loss-free. A memo value is reused for visits with up to twice its mass and recomputed
    for more probable ones, so a path's truncation stays relative to its own probability.
    Depth-first with an explicit stack. Returns 0, 1 if the memo is full, 2 if the stack is
    too shallow or a state ran out of event slots."""
    depth_max = SI.shape[0]
    cap = NQ.shape[0]
    k1 = NQ.shape[1]
    scratch = (np.empty(k1), np.empty(k1))
    cq, cv = uncounted(scratch)
    ct = 0.0
    rows = (np.empty(SI.shape[1], np.int64), np.empty(SF.shape[1]))
    LI, LF = uncounted(rows)
    copy_row(C, I0, F0, SI[0], SF[0])
    smass[0] = mass0
    sbr[0] = -1
    d = 0
    while True:
        ret = False
        if sbr[d] == -1:  # entering a node
            h1, h2 = _tail_hash(C, CF, SI[d], SF[d])
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
                ct = 1.0
                ret = True
            elif r >= 0 and (nst[r] == 1 or nst[r] == 2) and smass[d] <= 2.0 * nmass[r]:
                ncnt[2] += 1  # a memo hit
                cq[:] = NQ[r]
                cv[:] = NV[r]
                ct = NT[r]
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
                else:
                    ncnt[1] += 1  # a node recomputed at more than twice its mass
                nmass[r] = smass[d]
                srow[d] = r
                if _negligible(smass[d], SF[d], CF, eps):
                    copy_row(C, SI[d], SF[d], LI, LF)
                    t, arrivals = _lossfree_arrivals(C, CF, LI, LF)
                    if t < 0.0:
                        return 2
                    # truncated: the probability that its true path departs from this one
                    dev = 1.0 - (1.0 - p) ** arrivals
                    nst[r] = 2
                    NQ[r, :] = 0.0
                    NV[r, :] = 0.0
                    NQ[r, 0] = 1.0
                    NV[r, 0] = t
                    NT[r] = dev
                    cq[:] = NQ[r]
                    cv[:] = NV[r]
                    ct = dev
                    ret = True
                else:
                    nst[r] = 3
                    SQ[d, :] = 0.0
                    SV[d, :] = 0.0
                    ST[d] = 0.0
                    sbr[d] = 0
        if not ret:
            b = sbr[d]
            if b == 1 and p == 0.0:
                b = 2
            if b == 2:  # both branches in: the node's value
                r = srow[d]
                NQ[r, :] = SQ[d]
                NV[r, :] = SV[d]
                NT[r] = ST[d]
                nst[r] = 1
                cq[:] = SQ[d]
                cv[:] = SV[d]
                ct = ST[d]
                ret = True
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
                    sbr[d] = b + 1
                else:
                    smass[d + 1] = smass[d] * (p if b == 1 else 1.0 - p)
                    sbr[d + 1] = -1
                    d += 1
                continue
        d -= 1
        if d < 0:
            out_q[:] = cq
            out_v[:] = cv
            out_t[0] = ct
            held(scratch)
            held(rows)
            return 0
        _accumulate(SQ[d], SV[d], cq, cv, sbr[d], sdt[d], p)
        ST[d] += (p if sbr[d] == 1 else 1.0 - p) * ct
        sbr[d] += 1


def _tail_hash(C, CF, I, F):
    """:func:`._packet_levels.state_hash` of a file end's node (relative to the file end),
    with the windows that cannot change its future keyed as irrelevant. RFC sender, every
    segment sent and none to be resent (snd_nxt = snd_max = N):

    * cwnd is irrelevant. It decides a transmission only in ``send_allowed``'s loop,
      which runs while snd_nxt < N, that is after ``on_rto`` set snd_nxt = snd_una; and
      ``on_rto`` sets cwnd = 1 MSS first. Every other read (``_new_ack``'s growth,
      deflation and full-ACK exit, ``_dup_ack``'s inflation) only writes cwnd, and the
      entry to recovery overwrites it from ssthresh. Nothing else reads it.
    * ssthresh is irrelevant outside back-off (I_BACKOFF = 0). Its reads before it is
      rewritten only write cwnd (the growth's slow-start test, the full-ACK exit); the
      next timeout is then the first (I_BACKOFF 0 -> 1 only in ``on_rto``), which sets
      ssthresh from the flight size, and a recovery entry sets it likewise. In back-off a
      further timeout keeps ssthresh (RFC 5681 Eq. 4) for the go-back-N that follows, so
      there it is keyed.

    Both are then keyed as -1 (a window is never negative; the other fields hashed,
    snd_nxt and snd_max among them, tell such a node from any other). The ns3 sender
    keeps its key."""
    if C[C_NS3] or I[I_NXT] != I[I_SMAX] or I[I_SMAX] != C[C_N]:
        return state_hash(C, CF, I, F, C[C_N])
    cw = F[F_CWND]
    ss = F[F_SSTH]
    F[F_CWND] = -1.0
    if I[I_BACKOFF] == 0:
        F[F_SSTH] = -1.0
    h1, h2 = state_hash(C, CF, I, F, C[C_N])
    F[F_CWND] = cw
    F[F_SSTH] = ss
    return h1, h2


def tails(C, CF, p, eps, gap, ids, LP, light, n, IA, FA, PS, TQ, TV, TT, TE, TM, done,
          nk1, nk2, nv, nst, nmass, NQ, NV, NT, ncnt,
          XI, XF, sbr, srow, sdt, smass, SQ, SV, ST, out):
    """tau(s) of every state ``ids[:n]`` of a level that has none yet: its file end
    ``gap`` segments ahead (the state renumbered so that snd_max is ``NE - gap``),
    ``TQ[s]``, ``TV[s]`` (P and E[remaining time; j more losses], the cut's own run
    included), ``TT[s]`` (truncated probability), ``TE[s]`` (1 if an RTT sample set the
    RTO above its minimum). ``done[s]``: 1 full tail, 2 loss-free (``light``). A light
    state whose full tail is known uses it. ``out[0]``: status of :func:`tail_values`."""
    C, CF, ids, LP, light, IA, FA, PS, TQ, TV, TT, TE, TM, done = uncounted(
        (C, CF, ids, LP, light, IA, FA, PS, TQ, TV, TT, TE, TM, done))
    nk1, nk2, nv, nst, nmass, NQ, NV, NT, ncnt = uncounted((nk1, nk2, nv, nst, nmass, NQ, NV, NT, ncnt))
    XI, XF, sbr, srow, sdt, smass, SQ, SV, ST = uncounted((XI, XF, sbr, srow, sdt, smass, SQ, SV, ST))
    k1 = TQ.shape[1]
    scratch = (np.empty(k1), np.empty(k1), np.empty(1))
    rows = (np.empty(XI.shape[1], np.int64), np.empty(XF.shape[1]))
    oq, ov, ot = uncounted(scratch)
    I, F = uncounted(rows)
    for i in range(n):
        s = ids[i]
        mass = 0.0
        for k in range(LP.shape[1]):
            mass += LP[i, k]
        if (done[s] == 1 and mass <= 2.0 * TM[s]) or (done[s] == 2 and light[i]):
            continue
        TM[s] = mass
        _load(C, IA, FA, PS, s, I, F)
        shift(C, I, F, NE - gap - I[I_SMAX])
        resume(C, CF, I, F)
        dt = run_to_branch(C, CF, I, F)
        if I[I_FAIL]:
            out[0] = 2
            return
        TE[s] = 1.0 if I[I_RTOMIN] else 0.0
        TQ[s, :] = 0.0
        TV[s, :] = 0.0
        if I[I_DONE]:
            TQ[s, 0] = 1.0
            TV[s, 0] = dt
            TT[s] = 0.0
            done[s] = 1
            continue
        if light[i]:
            t, arrivals = _lossfree_arrivals(C, CF, I, F)
            if t < 0.0:
                out[0] = 2
                return
            TQ[s, 0] = 1.0
            TV[s, 0] = dt + t
            TT[s] = 1.0 - (1.0 - p) ** arrivals
            done[s] = 2
            continue
        st = tail_values(C, CF, p, eps, mass, I, F, nk1, nk2, nv, nst, nmass, NQ, NV, NT, ncnt,
                         XI, XF, sbr, srow, sdt, smass, SQ, SV, ST, oq, ov, ot)
        if st != 0:
            out[0] = st
            return
        for k in range(k1):
            TQ[s, k] = oq[k]
            TV[s, k] = ov[k] + dt * oq[k]
        TT[s] = ot[0]
        done[s] = 1
    held(scratch)
    held(rows)
    out[0] = 0


def finish(ids, LP, LQ, n, TQ, TV, TT, TE, acc):
    """E[T] of a size handed off at this level: ``acc[0, k]`` += P(k losses in all),
    ``acc[1, k]`` += E[T; k losses] (seconds), ``acc[2, 0]`` += the truncated mass of the
    file's end, ``acc[2, 1]`` += mass whose RTO left its minimum."""
    k1 = LP.shape[1]
    for i in range(n):
        s = ids[i]
        tot = 0.0
        for a in range(k1):
            tot += LP[i, a]
            for b in range(k1):
                k = a + b
                if k >= k1:
                    k = k1 - 1
                acc[0, k] += LP[i, a] * TQ[s, b]
                acc[1, k] += LQ[i, a] * TQ[s, b] + LP[i, a] * TV[s, b]
        acc[2, 0] += tot * TT[s]
        acc[2, 1] += tot * TE[s]


def lump(C, CF, ids, LP, LQ, n, IA, FA, PS, ni, nf, light, gone, lumped, tiers, light_tier):
    """Lump each light level state into the most probable heavy state of the level with
    its signature (:func:`._packet_levels.class_keys`, tiers 0, 1, 2: the finest that has
    one): its probability and elapsed time move there (the elapsed time stays exact; its
    future becomes that state's). ``gone[i]``: state i was lumped; ``lumped[0]`` += the
    mass moved. Light states no heavy state shares a signature with stay (loss-free
    kernel), lumped among themselves by signature tier ``light_tier`` (-1: not)."""
    C, CF, ids, LP, LQ, IA, FA, PS, light, gone = uncounted((C, CF, ids, LP, LQ, IA, FA, PS, light, gone))
    rows = (np.empty(ni, np.int64), np.empty(nf))
    I, F = uncounted(rows)
    nl = 0
    for i in range(n):
        if light[i]:
            nl += 1
    if nl == 0:
        return
    sig = np.empty((5, n), np.int64)
    mass = np.empty(n)
    for i in range(n):
        _load(C, IA, FA, PS, ids[i], I, F)
        c0, c1, c2, c3, c4 = class_keys(C, CF, I, F)
        sig[0, i] = c0
        sig[1, i] = c1
        sig[2, i] = c2
        sig[3, i] = c3
        sig[4, i] = c4
        mass[i] = LP[i].sum()
    nb = 16
    while nb < 4 * n:
        nb *= 2
    tables = (np.zeros(nb, np.int64), np.zeros(nb, np.int64), np.empty(nb, np.int64),
              np.empty(n, np.int64))
    hk1, hk2, hv, best = uncounted(tables)
    heavy = ~light
    for tier in range(tiers):
        _lump_pass(sig[tier], heavy, light, mass, LP, LQ, hk1, hk2, hv, best, gone, lumped)
    if light_tier >= 0:  # the light states left, among themselves: each signature's most
        # probable takes the others (all continue loss-free: their futures differ only in
        # the timing the signature leaves out)
        _lump_pass(sig[light_tier], light & ~gone, light, mass, LP, LQ, hk1, hk2, hv, best,
                   gone, lumped)
    held(tables)
    held(rows)


def _lump_pass(key, takers, givers, mass, LP, LQ, hk1, hk2, hv, best, gone, lumped):
    """Lump each of ``givers`` not yet ``gone`` into the most probable of ``takers`` with
    its ``key`` (not into itself): masses move, ``gone`` marks it, ``lumped[0]`` += its
    probability."""
    hv[:] = -1
    ng = 0
    for j in range(key.shape[0]):
        if takers[j]:
            g = _lookup(hk1, hk2, hv, key[j], 0)
            if g < 0:
                hk1[-g - 1] = key[j]
                hv[-g - 1] = ng
                best[ng] = j
                ng += 1
            elif mass[j] > mass[best[g]]:
                best[g] = j
    for j in range(key.shape[0]):
        if givers[j] and not gone[j]:
            g = _lookup(hk1, hk2, hv, key[j], 0)
            if g >= 0 and best[g] != j:
                LP[best[g]] += LP[j]
                LQ[best[g]] += LQ[j]
                lumped[0] += mass[j]
                gone[j] = True


def mark_light(CF, eps, ids, LP, n, srto, light):
    """``light[i]``: level state ``ids[i]`` is below ``eps`` (its mass x RTO / min RTO,
    as :func:`._packet_levels._negligible`)."""
    for i in range(n):
        tot = 0.0
        for k in range(LP.shape[1]):
            tot += LP[i, k]
        light[i] = tot * srto[ids[i]] < eps * CF[CF_MINRTO]


_HELPERS = LV._HELPERS + ("_expand_one", "_pack", "_load", "_intern", "_tail_hash",
                          "_lossfree_arrivals", "tail_values", "_lump_pass")
_ENTRIES = ("expand_level", "propagate", "tails", "finish", "mark_light", "lump")


@functools.cache
def kernels(compiled: bool = True) -> types.SimpleNamespace:
    """The method's entry points, numba-compiled when ``compiled`` and numba is
    available, else the pure-Python functions (the same code)."""
    fns = None
    if compiled:
        from . import _packet_flat

        ns = {**vars(_packet_flat), **vars(LV), **globals()}
        fns = compile_twins(ns, _HELPERS, [globals()[name] for name in _ENTRIES])
    if fns is None:
        fns = [LV._quiet(globals()[name]) for name in _ENTRIES]
    return types.SimpleNamespace(**dict(zip(_ENTRIES, fns)))


# Driver -------------------------------------------------------------------------------

STORE_BYTES = 1 << 28
"""Bytes the stored states may use before the store forgets those not met in the last
:data:`RECENT_LEVELS` levels (256 MiB; the arrays' capacity is up to twice that)."""
MEMO_NODES = 1 << 20
"""Nodes a file end's memo may hold before it is emptied (about 250 MB at k_max = 4
... 10)."""
RECENT_LEVELS = 16
"""Levels a stored state outlives its last visit once the store is full."""
LIGHT_TIER = 0
"""Signature tier (:func:`._packet_levels.class_keys`) by which the light states that no
heavy state shares a signature with are lumped among themselves (-1: not lumped). Without
it each such state is a chain of new distinct states to the largest size, and one level
held 854,432 states at p = 0.1, eps = eps_state = 1e-5 (docs/packet-model.md 6)."""

def _ranges(starts, lens):
    """The indices of the ranges [starts[i], starts[i] + lens[i]), concatenated."""
    lens = np.asarray(lens, np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    first = np.concatenate(([0], np.cumsum(lens)[:-1]))
    return np.repeat(np.asarray(starts, np.int64) - first, lens) + np.arange(total)


def _table_size(cap: int) -> int:
    return 1 << int(2 * cap - 1).bit_length()


class _Store:
    """The distinct relative states (rows), their kernels (edges) and loss-free kernels,
    a key -> state table; enlarged by doubling (:meth:`grow`)."""

    def __init__(self, cap, ni, nf, ecap):
        self.ni, self.nf = ni, nf
        self.ek = 16  # edges a state's children may need, per child (>= K + 1)
        self.IA = np.zeros(cap * ni // 2, np.int64)
        self.FA = np.zeros(cap * nf // 2)
        self.PS = np.zeros((cap, 2), np.int64)
        self.srto = np.zeros(cap)
        self.top = np.zeros(2, np.int64)
        self.cnt = np.zeros(1, np.int64)
        size = _table_size(cap)
        self.hk1 = np.zeros(size, np.int64)
        self.hk2 = np.zeros(size, np.int64)
        self.hv = np.full(size, -1, np.int64)
        self.est = np.full((cap, 2), -1, np.int64)
        self.etr = np.zeros(cap)
        self.lfc = np.full(cap, -1, np.int64)
        self.lfd = np.zeros((cap, 2))  # the loss-free kernel's elapsed time, P(departure)
        self.ech = np.zeros(ecap, np.int64)
        self.edk = np.zeros(ecap, np.int64)
        self.ep = np.zeros(ecap)
        self.eq = np.zeros(ecap)
        self.ecnt = np.zeros(1, np.int64)

    _ROWS = ("PS", "srto", "est", "etr", "lfc", "lfd")
    _EDGES = ("ech", "edk", "ep", "eq")

    @property
    def cap(self):
        return self.PS.shape[0]

    def nbytes(self):
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def grow(self, reinsert, need):
        """Enlarge whatever could not take ``need`` more states (rows, table, arenas,
        edges: up to ``need`` x 16 edges), each to twice what it must hold."""
        n = int(self.cnt[0])
        if n + need > self.cap:
            cap = 2 * (n + need)
            for name in self._ROWS:
                a = getattr(self, name)
                fill = -1 if name in ("est", "lfc") else 0
                b = np.full((cap,) + a.shape[1:], fill, a.dtype)
                b[:a.shape[0]] = a
                setattr(self, name, b)
            size = _table_size(cap)
            k1, k2, v = (np.zeros(size, np.int64), np.zeros(size, np.int64),
                         np.full(size, -1, np.int64))
            reinsert(self.hk1, self.hk2, self.hv, k1, k2, v)
            self.hk1, self.hk2, self.hv = k1, k2, v
        for name, used, row in (("IA", 0, self.ni), ("FA", 1, self.nf)):
            a = getattr(self, name)
            if int(self.top[used]) + need * row > a.shape[0]:
                b = np.zeros(2 * (int(self.top[used]) + need * row), a.dtype)
                b[:a.shape[0]] = a
                setattr(self, name, b)
        if int(self.ecnt[0]) + self.ek * need > self.ech.shape[0]:
            for name in self._EDGES:
                a = getattr(self, name)
                b = np.zeros(2 * (int(self.ecnt[0]) + self.ek * need), a.dtype)
                b[:a.shape[0]] = a
                setattr(self, name, b)

    def args(self):
        return (self.IA, self.FA, self.PS, self.srto, self.top, self.cnt, self.hk1, self.hk2, self.hv, self.est, self.etr,
                self.lfc, self.lfd, self.ech, self.edk, self.ep, self.eq, self.ecnt)

    def used_bytes(self):
        """Bytes the stored states, their rows, table slots and edges use (an estimate:
        not the arrays' capacity)."""
        n, e = int(self.cnt[0]), int(self.ecnt[0])
        per_row = sum(getattr(self, a).itemsize * int(np.prod(getattr(self, a).shape[1:]))
                      for a in self._ROWS)
        return (n * per_row + 8 * int(self.top[0]) + 8 * int(self.top[1]) + 24 * 2 * n
                + 32 * e)

    def compact(self, keep, reinsert):
        """Keep only the states ``keep`` (bool per state id < ``cnt``), renumbered in
        their order; a kept state's kernel stays if every child is kept (else it is
        recomputed when next needed), its loss-free kernel if its child is kept.
        Returns the old -> new id map (-1: dropped) and the kept old ids, in order."""
        n = int(self.cnt[0])
        keep = keep[:n].copy()
        remap = np.full(n, -1, np.int64)
        old = np.flatnonzero(keep)
        m = len(old)
        remap[old] = np.arange(m)
        # kernels: kept with all their children, else forgotten
        est = self.est[old].copy()
        full = est[:, 1] >= 0
        starts, counts = est[full, 0], est[full, 1]
        eidx = _ranges(starts, counts)
        ok = np.ones(len(starts), np.bool_)
        if len(eidx):
            bad = remap[self.ech[eidx]] < 0
            owner = np.repeat(np.arange(len(starts)), counts)
            ok = np.bincount(owner[bad], minlength=len(starts)) == 0
        fi = np.flatnonzero(full)
        est[fi[~ok]] = -1
        starts, counts = starts[ok], counts[ok]
        eidx = _ranges(starts, counts)
        new_start = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(counts) else counts
        est[fi[ok], 0] = new_start
        ne = len(eidx)
        ech = remap[self.ech[eidx]]
        edk, ep, eq = self.edk[eidx], self.ep[eidx], self.eq[eidx]
        for name, a in (("ech", ech), ("edk", edk), ("ep", ep), ("eq", eq)):
            b = getattr(self, name)
            b[:ne] = a
        self.ecnt[0] = ne
        lfc = self.lfc[old].copy()
        has = lfc >= 0
        lfc[has] = remap[lfc[has]]
        # the arenas: rows were packed in id order, so a row ends where the next begins
        for col, arena in ((0, "IA"), (1, "FA")):
            a = getattr(self, arena)
            begin = self.PS[:n, col]
            end = np.append(begin[1:], self.top[col])
            idx = _ranges(begin[old], (end - begin)[old])
            a[:len(idx)] = a[idx]
            lens = (end - begin)[old]
            self.PS[:m, col] = np.concatenate(([0], np.cumsum(lens)[:-1])) if m else lens
            self.top[col] = len(idx)
        for name in self._ROWS:
            if name == "PS":
                continue
            a = getattr(self, name)
            a[:m] = {"est": est, "lfc": lfc}.get(name, a[old])
            a[m:n] = -1 if name in ("est", "lfc") else 0
        self.PS[m:n] = 0
        hv = self.hv.copy()
        live = hv >= 0
        hv[live] = remap[hv[live]]
        ok1, ok2 = self.hk1.copy(), self.hk2.copy()
        self.hk1[:] = 0
        self.hk2[:] = 0
        self.hv[:] = -1
        reinsert(ok1, ok2, hv, self.hk1, self.hk2, self.hv)
        self.cnt[0] = m
        return remap, old


class _Tails:
    """tau(s) of one file end (last segment length, gap from the hand-off level): per
    state (rows grown with the store) and the tail nodes' memo with its stack."""

    def __init__(self, consts, cap, ni, nf, k1, memo=1 << 14, depth=4096):
        self.C, self.CF = consts
        self.TQ = np.zeros((cap, k1))
        self.TV = np.zeros((cap, k1))
        self.TT = np.zeros(cap)
        self.TE = np.zeros(cap)
        self.TM = np.zeros(cap)  # the mass a state's tail was computed at
        self.done = np.zeros(cap, np.int8)
        self.nk1 = np.zeros(memo, np.int64)
        self.nk2 = np.zeros(memo, np.int64)
        self.nv = np.full(_table_size(memo), -1, np.int64)
        self.nst = np.zeros(memo, np.int8)
        self.nmass = np.zeros(memo)
        self.NQ = np.zeros((memo, k1))
        self.NV = np.zeros((memo, k1))
        self.NT = np.zeros(memo)
        self.ncnt = np.zeros(3, np.int64)  # nodes; recomputed, memo hits (diagnostics)
        self.XI = np.zeros((depth, ni), np.int64)
        self.XF = np.zeros((depth, nf))
        self.sbr = np.zeros(depth, np.int64)
        self.srow = np.zeros(depth, np.int64)
        self.sdt = np.zeros(depth)
        self.smass = np.zeros(depth)
        self.SQ = np.zeros((depth, k1))
        self.SV = np.zeros((depth, k1))
        self.ST = np.zeros(depth)

    def fit(self, cap):
        if self.TQ.shape[0] < cap:
            for name in ("TQ", "TV", "TT", "TE", "TM", "done"):
                a = getattr(self, name)
                b = np.zeros((cap,) + a.shape[1:], a.dtype)
                b[:a.shape[0]] = a
                setattr(self, name, b)

    def grow_memo(self, rehash):
        self.nst[self.nst == 3] = 0  # (nodes left in progress are recomputed)
        cap = 2 * self.NQ.shape[0]
        for name in ("nk1", "nk2", "nst", "nmass", "NQ", "NV", "NT"):
            a = getattr(self, name)
            b = np.zeros((cap,) + a.shape[1:], a.dtype)
            b[:a.shape[0]] = a
            setattr(self, name, b)
        self.nv = np.full(_table_size(cap), -1, np.int64)
        rehash(self.nk1, self.nk2, int(self.ncnt[0]), self.nv)

    def nbytes(self):
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def compact(self, old, n):
        """Follow :meth:`_Store.compact`: the kept states ``old`` (old ids, in order) of
        ``n``."""
        m = len(old)
        self.fit(n)
        for name in ("TQ", "TV", "TT", "TE", "TM", "done"):
            a = getattr(self, name)
            a[:m] = a[old]
            a[m:n] = 0

    def clear_memo(self):
        """Forget the file end's nodes (a cache: they are recomputed when met again)."""
        self.nv[:] = -1
        self.nst[:] = 0
        self.ncnt[0] = 0

    def memo_args(self):
        return (self.nk1, self.nk2, self.nv, self.nst, self.nmass, self.NQ, self.NV, self.NT,
                self.ncnt, self.XI, self.XF, self.sbr, self.srow, self.sdt, self.smass,
                self.SQ, self.SV, self.ST)


class SizeResult:
    """What :func:`solve` gives for one size: ``done_p[k]``, ``done_pt[k]`` (probability
    and probability x latency, seconds, of the paths with k losses; the last bin K or
    more), ``truncated`` (probability of the paths some of whose later losses were left
    out), ``est`` (mass whose RTO left its minimum), ``states`` (distinct relative states
    met up to its hand-off level); for a size beyond the stationary level, ``extra_s``:
    (N - N_ref) x the per-packet increment (seconds), added to the reference size's
    result (``extrapolated`` True; the loss-count vectors are the reference's)."""

    __slots__ = ("done_p", "done_pt", "truncated", "lumped", "est", "states", "extra_s",
                 "extrapolated")

    def __init__(self, done_p, done_pt, truncated, lumped, est, states, extra_s=0.0,
                 extrapolated=False):
        self.done_p = done_p
        self.done_pt = done_pt
        self.truncated = truncated
        self.lumped = lumped
        self.est = est
        self.states = states
        self.extra_s = extra_s
        self.extrapolated = extrapolated

    @property
    def expected_s(self) -> float:
        return float(self.done_pt.sum()) + self.extra_s


def _guard(params, what, add_bytes) -> None:
    try:
        check_memory(f"the packet model (p = {params.p:g}, W0 = {params.w0:g}, b = {params.b}) "
                     f"enlarging its {what}", LV.resident_bytes() + add_bytes)
    except BudgetError as exc:
        raise BudgetError(f"{exc}; a larger eps or eps_state needs less") from None


def solve(consts, params, sizes, *, eps, eps_state, k_max, tail_eps=None, lumping=5,
          tol=None, compiled=True, pool=1024, cap=1 << 12, stats=None, progress=None,
          store_bytes=None, memo_nodes=None, recent=None, light_tier=None):
    """The relative-state method for file sizes ``sizes`` (bytes): one forward pass over
    the levels up to the largest size's hand-off, each size finished there from the
    memoised tails. ``consts(size_bytes)`` gives the engine's (C, CF). ``eps``: the
    kernels' truncation (conditional probability), ``tail_eps`` (default ``eps``): the
    file ends' (absolute probability), ``eps_state``: light level states, lumped on
    signature tiers 0 .. ``lumping`` - 1 (0: none). With ``tol``, the level distribution
    counts as stationary by the level DP's rule (:func:`._packet_levels.solve`: a move of
    less than :data:`._packet_levels.STATIONARY_TV` in total variation between two levels,
    and a drift of the per-level increment that, carried on to the largest size, adds up
    to less than ``tol`` of the elapsed time); every larger size is then the reference
    size handed off there plus (N - N_ref) x the increment.

    Memory is bounded, by forgetting what can be recomputed (results change only through
    the file ends' mass-relative truncation): once the stored states use more than
    ``store_bytes`` (default :data:`STORE_BYTES`), the store keeps only the states met in
    the last ``recent`` levels (:data:`RECENT_LEVELS`; halved while that is not enough;
    if one level alone needs more, the bound becomes twice what it holds), their kernels
    if their children are kept; a file end's memo above ``memo_nodes``
    (:data:`MEMO_NODES`) nodes is emptied (allowed to grow once if one state's
    tail alone needs more). Returns
    {size: :class:`SizeResult`}; ``stats`` (a dict) receives the counts (states, edges,
    tail nodes with the memo's hits and recomputations, levels' states, truncated mass per
    level, the stationary level, the CPU seconds of the file ends, kernels, forward pass
    and lumping)."""
    k = kernels(compiled)
    lk = LV.kernels(compiled)
    store_bytes = STORE_BYTES if store_bytes is None else store_bytes
    memo_nodes = MEMO_NODES if memo_nodes is None else memo_nodes
    recent = RECENT_LEVELS if recent is None else recent
    light_tier = LIGHT_TIER if light_tier is None else light_tier
    mss = params.mss_bytes
    k1 = k_max + 1
    p = float(params.p)
    Cl, CFl = consts(BIG * mss)
    ni = n_int(int(Cl[C_EVMAX]), int(Cl[C_SETW]), bool(Cl[C_NS3]))
    nf = n_float(int(Cl[C_EVMAX]), int(Cl[C_SETW]))
    handoff: dict = {}
    tails: dict = {}
    for size in sizes:
        n = -(-size // mss)
        last = size - (n - 1) * mss
        h = max(n - handoff_margin(params, last, mss), 0)
        if (last, n - h) not in tails:
            tails[(last, n - h)] = _Tails(consts((NE - 1) * mss + last), cap, ni, nf, k1)
        handoff.setdefault(h, []).append((size, (last, n - h)))
    top = max(handoff)
    store = _Store(cap, ni, nf, 8 * cap)
    store.ek = max(16, k1)
    pools = [LV._Pool(pool, ni, nf, k1) for _ in range(3)]
    I0, F0 = new_state(Cl, CFl, params.w0, params.w_ss)
    _pack(Cl, I0, F0, store.IA, store.FA, store.PS, store.srto, store.top, 0)
    store.cnt[0] = 1
    ids = np.zeros(1, np.int64)
    LP = np.zeros((1, k1))
    LQ = np.zeros((1, k1))
    LP[0, 0] = 1.0
    _enter_first(store, Cl, CFl)
    n = 1
    pos = np.full(cap, -1, np.int64)
    out = np.zeros(2, np.int64)
    nout = np.zeros(1, np.int64)
    tr_sum = 0.0
    lumped = 0.0
    cpu = {"tails": 0.0, "kernels": 0.0, "forward": 0.0, "lumping": 0.0}
    res = {}
    level_states = []
    means = []  # the level's mean elapsed time, per level
    prev = None
    stationary = False
    last = np.zeros(store.cap, np.int64)  # the last level each state was met at
    forgotten = 0  # states dropped from the store
    full_forgotten = 0  # full kernels dropped with them
    gcs = 0
    cleared = {}
    for L in range(top + 1):
        t_l = time.process_time()
        light = np.zeros(n, np.bool_)
        k.mark_light(CFl, eps_state, ids, LP, n, store.srto, light)
        if lumping and light.any():
            gone = np.zeros(n, np.bool_)
            lm = np.zeros(1)
            k.lump(Cl, CFl, ids, LP, LQ, n, store.IA, store.FA, store.PS, ni, nf, light, gone,
                   lm, lumping, light_tier)
            lumped += float(lm[0])
            if gone.any():
                keep = ~gone
                ids, LP, LQ, light = ids[keep], LP[keep], LQ[keep], light[keep]
                n = len(ids)
        if stats is not None:  # (states, light ones left, their mass) after lumping
            stats.setdefault("light", []).append((n, int(light.sum()),
                                                  float(LP[light].sum())))
        level_states.append(n)
        t_a = time.process_time()
        cpu["lumping"] += t_a - t_l

        def finish_at(key):
            tl = tails[key]
            while True:
                tl.fit(store.cap)
                k.tails(tl.C, tl.CF, p, eps if tail_eps is None else tail_eps, key[1], ids, LP,
                        light, n, store.IA, store.FA, store.PS,
                        tl.TQ, tl.TV, tl.TT, tl.TE, tl.TM, tl.done, *tl.memo_args(), out)
                if out[0] == 0:
                    break
                if out[0] != 1:
                    raise RuntimeError(f"packet model: a state needs more event slots or "
                                       f"stack than allocated (status {out[0]})")
                if int(tl.ncnt[0]) >= memo_nodes and not cleared.get(key):
                    tl.clear_memo()  # bounded: recomputed where met again
                    cleared[key] = True
                    continue
                cleared[key] = False
                _guard(params, f"memo of the file's end ({int(tl.ncnt[0]):,} nodes)",
                       tl.nbytes())
                tl.grow_memo(lk.rehash_nodes)
            cleared[key] = False
            acc = np.zeros((3, k1))
            k.finish(ids, LP, LQ, n, tl.TQ, tl.TV, tl.TT, tl.TE, acc)
            return SizeResult(acc[0], acc[1], tr_sum + float(acc[2, 0]), lumped,
                              float(acc[2, 1]), forgotten + int(store.cnt[0]))

        for size, key in handoff.get(L, ()):
            res[size] = finish_at(key)
        if stationary and L < top:
            inc = float(np.mean(np.diff(means[-LV.STATIONARY_WINDOW - 1:])))
            refs = {}
            for H in sorted(h for h in handoff if h > L):
                for size, key in handoff[H]:
                    # the reference: this key's file end handed off at this level
                    ref_key = (key[0], handoff_margin(params, key[0], mss))
                    if ref_key not in tails:
                        tails[ref_key] = _Tails(consts((NE - 1) * mss + key[0]), cap, ni, nf, k1)
                    if ref_key not in refs:
                        refs[ref_key] = (L + ref_key[1], finish_at(ref_key))
                    n_ref, r = refs[ref_key]
                    n_size = -(-size // mss)
                    res[size] = SizeResult(r.done_p, r.done_pt, r.truncated, r.lumped, r.est,
                                           r.states, extra_s=(n_size - n_ref) * inc,
                                           extrapolated=True)
            if stats is not None:
                stats["stationary_level"] = L
                stats["increment_s"] = inc
            cpu["tails"] += time.process_time() - t_a
            break
        t_b = time.process_time()
        cpu["tails"] += t_b - t_a
        if L == top:
            break
        if progress is not None:
            progress(L, top)
        start = 0
        while True:
            k.expand_level(Cl, CFl, p, eps, ids, light, n, start, *store.args(),
                           *pools[0].args(), *pools[1].args(), *pools[2].args(), out)
            if out[0] == 0:
                break
            start = int(out[1])
            if out[0] == 1:
                _guard(params, f"states ({int(store.cnt[0]):,})", store.nbytes())
                store.grow(lk.reinsert, pools[0].I.shape[0])
            elif out[0] == 3:
                pc = 2 * pools[0].I.shape[0]
                pools = [LV._Pool(pc, ni, nf, k1) for _ in range(3)]
            else:
                raise RuntimeError(f"packet model: a state needs more event slots than "
                                   f"allocated (status {out[0]})")
        t_c = time.process_time()
        cpu["kernels"] += t_c - t_b
        if pos.shape[0] < store.cap:
            pos = np.full(store.cap, -1, np.int64)
        # the next level holds at most one state per edge of this level's kernels
        m_max = min(int(store.cnt[0]), int(light.sum()) + int(store.est[ids[~light], 1].sum()))
        nids = np.zeros(m_max, np.int64)
        NP = np.zeros((m_max, k1))
        NQ = np.zeros((m_max, k1))
        tr = np.zeros(1)
        k.propagate(ids, LP, LQ, light, n, store.est, store.etr, store.lfc, store.lfd,
                    store.ech, store.edk, store.ep, store.eq, pos, nids, NP, NQ, nout, tr)
        n = int(nout[0])
        ids, LP, LQ = nids[:n], NP[:n], NQ[:n]
        tr_sum += float(tr[0])
        if tol:  # the level DP's stationarity rule (ids are the relative states)
            pp = LP.sum(axis=1)
            means.append(float(LQ.sum() / pp.sum()))
            if prev is not None:
                stationary = LV.is_stationary(means, LV.distance(prev[0], prev[1], ids, pp),
                                              top - (L + 1), tol)
            prev = (ids.copy(), pp)
        if last.shape[0] < store.cap:
            last = np.concatenate((last, np.zeros(store.cap - last.shape[0], np.int64)))
        last[ids] = L + 1
        if store.used_bytes() > store_bytes:
            while True:
                n_old = int(store.cnt[0])
                full_forgotten += int((store.est[:n_old, 1] >= 0).sum())
                remap, old = store.compact(last[:n_old] >= L + 1 - recent, lk.reinsert)
                for tl in tails.values():
                    tl.compact(old, n_old)
                last[:len(old)] = last[old]
                last[len(old):n_old] = 0
                ids = remap[ids]
                if prev is not None:
                    prev = (remap[prev[0]], prev[1])
                forgotten += n_old - len(old)
                full_forgotten -= int((store.est[:len(old), 1] >= 0).sum())
                gcs += 1
                if store.used_bytes() <= store_bytes / 2:
                    break
                if recent <= 1:  # the last level alone needs more: no compaction per level
                    store_bytes = 2 * store.used_bytes()
                    break
                recent //= 2
        cpu["forward"] += time.process_time() - t_c
    if progress is not None:
        progress(top, top)
    if stats is not None:
        stats["states"] = forgotten + int(store.cnt[0])
        stats["stored"] = int(store.cnt[0])
        stats["compactions"] = gcs
        stats["full_kernels"] = full_forgotten + int((store.est[:int(store.cnt[0]), 1] >= 0).sum())
        stats["recent"] = recent
        stats["edges"] = int(store.ecnt[0])
        stats["tail_nodes"] = sum(int(t.ncnt[0]) for t in tails.values())
        stats["tail_recomputed"] = sum(int(t.ncnt[1]) for t in tails.values())
        stats["tail_hits"] = sum(int(t.ncnt[2]) for t in tails.values())
        stats["level_states"] = level_states
        stats["bytes"] = store.nbytes() + sum(t.nbytes() for t in tails.values())
        stats["cpu_s"] = cpu
        stats["store"] = store
    return res


def _enter_first(store, C, CF):
    """Enter the initial state (row 0) in the store's table."""
    I = np.zeros(store.ni, np.int64)
    F = np.zeros(store.nf)
    _load(C, store.IA, store.FA, store.PS, 0, I, F)
    h1, h2 = _hash_row(C, CF, I, F)
    j = int(h1) & (store.hv.shape[0] - 1)
    store.hk1[j] = h1
    store.hk2[j] = h2
    store.hv[j] = 0


def _hash_row(C, CF, I, F):
    with np.errstate(over="ignore"):
        return state_hash(C, CF, I, F, I[I_SMAX])
