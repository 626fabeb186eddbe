"""Quadrature nodes of the tabulated recursion, numba-compiled (fluid time model only).

The twin of the numpy node construction in :mod:`latency_model.model._tables`
(``_Tables._state_breaks``, ``_Tables._chunk_nodes``, ``_Tables._interp`` and the fluid law
of :mod:`latency_model.model.fluid`): state by state and node by node, with the same
floating-point operations in the same order. Building the node arrays was most of a short
solve (numpy spends it on temporaries over about a million nodes); compiled, it takes a
few per cent of that. Also computes L_1 directly at arbitrary states (the exact L_1 behind
the default L_2) without building node arrays at all.

Same results as the numpy path up to the last bit of ``log`` and ``sqrt``: numpy may
evaluate ``log`` with its own vectorised routine, numba calls the C library's, and the
two can differ in the last place (a relative 1e-16 in a node; the test allows 1e-13 on
every node array; on the machine of 2026-11-24 they agree bit for bit). Within one engine, results are reproducible bit for bit and a size's result
does not depend on the other sizes of the call.

Used only when numba is installed (the ``fast`` extra) and not switched off by
``LATENCY_MODEL_NO_NUMBA``, for the fluid time model (the per-round model has no closed
form to compile).
"""

from __future__ import annotations

import math

import numpy as np

from ..accel import compile_twins, held, numba_available, uncounted

__all__ = ["compiled_nodes"]

# Layout of the float constants passed to the kernels (one array, so that signatures stay short).
_G, _S, _MSS, _RTT, _M, _RTO, _TAIL, _THR, _FLOOR_T, _FLOOR_F, _KINK_W = range(11)


def constants(params, law, tail_packets: int, floor_t: float, floor_f: float, kink_w: float) -> np.ndarray:
    """Float constants of the kernels: fluid law, path, timeout threshold, floors."""
    return np.array([
        law.ss_log_growth, law.ca_slope, float(params.mss_bytes), params.rtt_s, float(params.rwnd),
        params.rto, float(tail_packets * params.mss_bytes), float(params.timeout_threshold),
        floor_t, floor_f, kink_w,
    ])


# ---------------------------------------------------------------------------
# Scalar kernels (plain Python here; numba-compiled by :func:`compiled_nodes`)


def _traj(k, w0, wss):
    """Breakpoints of the trajectory from (w0, wss): as ``fluid._fluid``."""
    g, s, mss, rtt, m = k[_G], k[_S], k[_MSS], k[_RTT], k[_M]
    w0 = min(w0, m)
    c0 = max(min(wss, m), w0)
    y1 = mss * (c0 - w0) / g
    t1 = rtt * math.log(c0 / w0) / g
    y2 = y1 + mss * (m * m - c0 * c0) / (2.0 * s)
    t2 = t1 + rtt * (m - c0) / s
    return w0, c0, y1, t1, y2, t2


def _time_window(k, w0, c0, y1, t1, y2, t2, size):
    """L_0 (seconds) and W_f (packets) after ``size`` bytes: as ``_fluid.time`` / ``window``."""
    g, s, mss, rtt, m = k[_G], k[_S], k[_MSS], k[_RTT], k[_M]
    if size <= y1:
        w = w0 + g * min(size, y1) / mss
        return rtt * math.log(w / w0) / g, w
    if size <= y2:
        w = math.sqrt(c0 * c0 + 2.0 * s * max(size - y1, 0.0) / mss)
        return t1 + rtt * (min(w, m) - c0) / s, min(w, m)
    return t2 + rtt * max(size - y2, 0.0) / (m * mss), m


def _bytes_to(k, w0, c0, target):
    """The paper's y_f: bytes until the window reaches ``target`` (as ``_fluid.y_f``)."""
    g, s, mss, m = k[_G], k[_S], k[_MSS], k[_M]
    if target > m:
        return math.inf
    if target <= w0:
        return 0.0
    ss_part = mss * (min(max(target, w0), c0) - w0) / g
    ca_w = min(max(target, c0), m)
    return ss_part + mss * (ca_w * ca_w - c0 * c0) / (2.0 * s)


def _after_loss(k, region, r, y, wf):
    """(cost, timeout?, r_next, parameter, W0, W_SS) after a loss at y (``recursion._after_loss``)."""
    if region == 2:
        p = max(wf / 2.0 - 1.0, k[_FLOOR_F])
        return 0.0, False, r - y, p, p, p
    p = max(wf / 2.0, k[_FLOOR_T])
    r_next = min(r - y + k[_MSS], r) if region == 1 else min(k[_MSS], r)
    return k[_RTO], True, r_next, p, 1.0, p


def _gap(k, region, r, w0, wss, y):
    """``recursion._next_boundary_gap``: the next state's y_to minus its tail start."""
    a0, c0, y1, t1, y2, t2 = _traj(k, w0, wss)
    wf = _time_window(k, a0, c0, y1, t1, y2, t2, y)[1]
    _, _, r_next, _, nw0, nwss = _after_loss(k, region, r, y, wf)
    b0, bc0, _, _, _, _ = _traj(k, nw0, nwss)
    return _bytes_to(k, b0, bc0, k[_THR]) - (r_next - k[_TAIL])


def _sign(x):
    """``np.sign`` of a float."""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return x  # 0 or NaN


def _boundary_kinks(k, region, r, w0, wss, lo, hi, frac, bisections, out):
    """``recursion._next_boundary_kinks`` for one state: first and last sign change."""
    out[0] = lo
    out[1] = lo
    if not hi > lo:
        return
    n = frac.size
    gaps = np.empty(n)
    ys = np.empty(n)
    for i in range(n):
        ys[i] = lo + (hi - lo) * frac[i]
        gaps[i] = _gap(k, region, r, w0, wss, ys[i])
    for which in range(2):
        cell = -1
        for c in range(n - 1):
            cc = c if which == 0 else n - 2 - c
            if _sign(gaps[cc]) * _sign(gaps[cc + 1]) < 0:
                cell = cc
                break
        if cell < 0:
            continue
        a, b, ga = ys[cell], ys[cell + 1], gaps[cell]
        for _ in range(bisections):
            m = 0.5 * (a + b)
            gm = _gap(k, region, r, w0, wss, m)
            if _sign(gm) * _sign(ga) <= 0:
                b = m
            else:
                a, ga = m, gm
        out[which] = 0.5 * (a + b)


def _state_edges(k, r, w0, wss, next_kinks, frac_gap, bisections, fr_edge, fr_wide, edges, counts):
    """Panel edges of the three regions of one state (``_state_breaks`` + ``_region_nodes``):
    ``edges[region]`` sorted, ``counts[region]`` of them."""
    a0, c0, _, _, _, _ = _traj(k, w0, wss)
    m = k[_M]
    yto = _bytes_to(k, a0, c0, k[_THR])
    tail = min(max(r - k[_TAIL], 0.0), r)
    a = min(max(min(yto, tail), 0.0), r)
    common = np.empty(4)
    common[0] = _bytes_to(k, a0, c0, k[_KINK_W])
    common[1] = _bytes_to(k, a0, c0, min(wss, m))
    common[2] = _bytes_to(k, a0, c0, m)
    common[3] = k[_MSS]
    cross_t = _bytes_to(k, a0, c0, 2.0 * (k[_THR] + 0.0))
    cross_f = _bytes_to(k, a0, c0, 2.0 * (k[_THR] + k[_FLOOR_F]))
    floor_t = _bytes_to(k, a0, c0, 2.0 * (k[_KINK_W] + 0.0))
    floor_f = _bytes_to(k, a0, c0, 2.0 * (k[_KINK_W] + k[_FLOOR_F]))
    kinks = np.empty(2)
    for region in range(3):
        lo = 0.0 if region == 0 else (a if region == 1 else tail)
        hi = a if region == 0 else (tail if region == 1 else r)
        fr = fr_wide if region == 1 else fr_edge
        e = edges[region]
        n = 0
        for f in fr:
            e[n] = lo + (hi - lo) * f
            n += 1
        for c in common:
            e[n] = min(max(c, lo), hi)
            n += 1
        if next_kinks:
            e[n] = min(max(cross_f if region == 1 else cross_t, lo), hi)
            n += 1
            e[n] = min(max(floor_f if region == 1 else floor_t, lo), hi)
            n += 1
            if region < 2:
                _boundary_kinks(k, region + 1, r, w0, wss, lo, hi, frac_gap, bisections, kinks)
                for c in kinks:
                    e[n] = min(max(c, lo), hi)
                    n += 1
        e[:n].sort()
        counts[region] = n


def _locate(grid, x):
    """``recursion._locate``: index and fraction of x in the sorted ``grid``."""
    n = grid.size
    if n == 1:
        return 0, 0.0
    i = np.searchsorted(grid, x, side="right") - 1
    i = min(max(i, 0), n - 2)
    t = min(max((x - grid[i]) / (grid[i + 1] - grid[i]), 0.0), 1.0)
    return i, t


def _stencil(m, n, kinks, last, points, use):
    """``recursion._stencil`` for one cell (``last``: the highest point allowed)."""
    left = m >= 1 and not kinks[m]
    right = m + 2 <= last and not kinks[min(max(m + 1, 0), n - 1)]
    shift = -1 if (left and not right) else (1 if (right and not left) else 0)
    for c in range(4):
        points[c] = min(max(m + shift - 1 + c, 0), n - 1)
    if shift == 0:
        use[0], use[3] = left, right
    elif shift < 0:
        use[0], use[3] = m >= 2 and not kinks[min(max(m - 1, 0), n - 1)], True
    else:
        use[0], use[3] = True, m + 3 <= last and not kinks[min(max(m + 2, 0), n - 1)]
    use[1] = True
    use[2] = m + 1 <= n - 1


def _lagrange(grid, use, x, out):
    """``recursion._lagrange`` for one point: same products in the same order."""
    for j in range(4):
        w = 0.0
        if use[j]:
            w = 1.0
            for k in range(4):
                if k != j and use[k]:
                    w = w * ((x - grid[k]) / (grid[j] - grid[k]))
        out[j] = w


def _node(k, region, rs, traj, y):
    """Cost L_0(y) + timeout, whether the loss ends in a timeout, the post-loss state
    (r, parameter, W0, W_SS) and its exact L_0, for a loss at y in ``region`` (1-3) of a
    state of size ``rs`` with trajectory ``traj`` (as ``_Tables._chunk_nodes``)."""
    a0, c0, y1, t1, y2, t2 = traj
    l0y, wf = _time_window(k, a0, c0, y1, t1, y2, t2, y)
    cost, is_t, rn, pn, nw0, nwss = _after_loss(k, region, rs, y, wf)
    b0, bc0, by1, bt1, by2, bt2 = _traj(k, nw0, nwss)
    return l0y + cost, is_t, rn, pn, nw0, nwss, _time_window(k, b0, bc0, by1, bt1, by2, bt2, rn)[0]


def _all_edges(k, r, w0, wss, next_kinks, frac_gap, bisections, fr_edge, fr_wide):
    """Panel edges of every state, shape (S, 3, width), and how many per region, (S, 3)."""
    # views numba does not reference-count (accel.uncounted: no atomics in the helper calls)
    k, r, w0, wss, frac_gap, fr_edge, fr_wide = uncounted((k, r, w0, wss, frac_gap, fr_edge, fr_wide))
    width = max(fr_edge.size, fr_wide.size) + 8
    edges = np.empty((r.size, 3, width))
    counts = np.zeros((r.size, 3), np.int64)
    e, c = uncounted((edges, counts))
    for s in range(r.size):
        _state_edges(k, r[s], w0[s], wss[s], next_kinks, frac_gap, bisections, fr_edge, fr_wide,
                     e[s], c[s])
    return edges, counts


def _build(k, r, w0, wss, edges, counts, tables, corners, gx, gwt, lattice, size_kinks, rows_t, rows_f,
           kinks_t, kinks_f, off_f):
    """Node arrays of the states (as ``_Tables.nodes_for``) given their panel edges; with
    ``tables`` also the corners and weights of each node in the stacked tables."""
    # views numba does not reference-count (accel.uncounted: no atomics in the helper calls)
    k, r, w0, wss, edges, counts, gx, gwt, lattice, size_kinks = uncounted(
        (k, r, w0, wss, edges, counts, gx, gwt, lattice, size_kinks))
    rows_t, rows_f, kinks_t, kinks_f = uncounted((rows_t, rows_f, kinks_t, kinks_f))
    n_states = r.size
    cap = 0
    for s in range(n_states):
        for region in range(3):
            for p in range(counts[s, region] - 1):
                if edges[s, region, p + 1] - edges[s, region, p] > 0.0:
                    cap += gx.size
    state = np.empty(cap, np.int64)
    ratio, gw, base, exact = np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap)
    r_next, nw0s, nwsss = np.empty(cap), np.empty(cap), np.empty(cap)
    idx = np.zeros((cap if tables else 0, corners), np.int32)
    wts = np.zeros((cap if tables else 0, corners))
    scratch = (np.empty(4, np.int64), np.empty(4, np.bool_), np.empty(4, np.int64), np.empty(4, np.bool_),
               np.empty(4), np.empty(4), np.empty(4))
    size_points, size_use, points, use, grid, lam, row_w = uncounted(scratch)
    n = 0
    for s in range(n_states):
        rs = r[s]
        traj = _traj(k, w0[s], wss[s])
        # ``_Tables._top_row``: no stencil row above the state's own.
        top_row = min(np.searchsorted(lattice, rs * (1 - 1e-12)), lattice.size - 1)
        for region in range(3):
            e = edges[s, region]
            for p in range(counts[s, region] - 1):
                left, width = e[p], e[p + 1] - e[p]
                for q in range(gx.size):
                    weight = width * gwt[q] / 2.0
                    if not weight > 0.0:
                        continue
                    y = left + width * (gx[q] + 1.0) / 2.0
                    base[n], is_t, rn, pn, nw0, nwss, exact[n] = _node(k, region + 1, rs, traj, y)
                    state[n] = s
                    ratio[n] = 1.0 - min(max(y / rs, 0.0), 1.0)
                    gw[n] = weight
                    r_next[n], nw0s[n], nwsss[n] = rn, nw0, nwss
                    if tables and corners == 16:
                        rows = rows_t if is_t else rows_f
                        kinks = kinks_t if is_t else kinks_f
                        off = 0 if is_t else off_f
                        nw, nr = rows.shape[1], lattice.size
                        i = _locate(lattice, rn)[0]
                        _stencil(i, nr, size_kinks, min(top_row, nr - 1), size_points, size_use)
                        x = min(max(rn, lattice[0]), lattice[nr - 1])
                        for q in range(4):
                            grid[q] = lattice[size_points[q]]
                        _lagrange(grid, size_use, x, lam)
                        for q in range(4):
                            row_w[q] = lam[q] * lattice[size_points[q]] / max(rn, 1e-300)
                        for q in range(4):
                            row = size_points[q]
                            mm = _locate(rows[row], pn)[0]
                            _stencil(mm, nw, kinks[row], nw - 1, points, use)
                            xq = min(max(pn, rows[row, 0]), rows[row, nw - 1])
                            for c in range(4):
                                grid[c] = rows[row, points[c]]
                            _lagrange(grid, use, xq, lam)
                            for c in range(4):
                                idx[n, 4 * q + c] = off + row * nw + points[c]
                                wts[n, 4 * q + c] = row_w[q] * lam[c]
                    elif tables:
                        rows = rows_t if is_t else rows_f
                        off = 0 if is_t else off_f
                        nw = rows.shape[1]
                        i, tr = _locate(lattice, rn)
                        i1 = min(i + 1, lattice.size - 1)
                        for half in range(2):
                            row = i if half == 0 else i1
                            w_row = 1.0 - tr if half == 0 else tr
                            mm, tw = _locate(rows[row], pn)
                            b = off + row * nw + mm
                            idx[n, 2 * half] = b
                            idx[n, 2 * half + 1] = min(b + 1, off + row * nw + nw - 1)
                            scale = w_row * lattice[row] / max(rn, 1e-300)
                            wts[n, 2 * half] = scale * (1.0 - tw)
                            wts[n, 2 * half + 1] = scale * tw
                    n += 1
    held(scratch)
    # n < cap only if a panel is so narrow that its weights underflow to 0 (dropped, as in numpy).
    return state[:n], ratio[:n], gw[:n], base[:n], exact[:n], r_next[:n], nw0s[:n], nwsss[:n], idx[:n], wts[:n]


def _exact_l1(k, r, w0, wss, fr_edge, fr_wide, gx, gwt, out):
    """L_1 at the states from the exact L_0 after each loss, summed in node order (as a
    level-1 node set without tables)."""
    k, r, w0, wss, fr_edge, fr_wide, gx, gwt = uncounted((k, r, w0, wss, fr_edge, fr_wide, gx, gwt))
    width_max = max(fr_edge.size, fr_wide.size) + 8
    scratch = (np.empty((3, width_max)), np.zeros(3, np.int64), np.empty(1))
    edges, counts, dummy = uncounted(scratch)  # (accel.uncounted: no atomics in the helper calls)
    for s in range(r.size):
        rs = r[s]
        _state_edges(k, rs, w0[s], wss[s], False, dummy, 0, fr_edge, fr_wide, edges, counts)
        traj = _traj(k, w0[s], wss[s])
        tot, acc = 0.0, 0.0
        for region in range(3):
            e = edges[region]
            for p in range(counts[region] - 1):
                left, width = e[p], e[p + 1] - e[p]
                for q in range(gx.size):
                    weight = width * gwt[q] / 2.0
                    if not weight > 0.0:
                        continue
                    y = left + width * (gx[q] + 1.0) / 2.0
                    base, _, _, _, _, _, nxt = _node(k, region + 1, rs, traj, y)
                    tot += weight
                    acc += (base + nxt) * weight
        out[s] = acc / (tot if tot > 0 else 1.0)
    held(scratch)


_compiled = None
_checked = False
_jitted = None  # kept apart from the two above, which tests and benchmarks reset


def compiled_nodes():
    """``(all_edges, build, exact_l1)`` numba-compiled, or ``None`` without numba."""
    global _compiled, _checked, _jitted
    if _checked:
        return _compiled
    _checked = True
    if not numba_available():
        _compiled = None
        return None
    if _jitted is None:
        _jitted = compile_twins(globals(), ("_traj", "_time_window", "_bytes_to", "_after_loss", "_gap",
                                            "_sign", "_boundary_kinks", "_state_edges", "_locate",
                                            "_stencil", "_lagrange", "_node"),
                                (_all_edges, _build, _exact_l1))
    _compiled = _jitted
    return _compiled
