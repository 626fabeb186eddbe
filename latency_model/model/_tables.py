"""The tabulated solver behind :mod:`latency_model.model.recursion`.

After the first loss every state belongs to one of two one-parameter window families
(:mod:`latency_model.model._regions`). :class:`_Tables` tabulates L_j over (remaining
bytes x window parameter) for both, level by level; :class:`_NodeSet` holds the fixed
quadrature nodes of a set of states and the interpolation into the table of L_{j-1}
(:mod:`latency_model.model._interp`), so each level is one gather and one weighted sum
(:mod:`latency_model.model._levels`; the nodes are built by numba kernels,
:mod:`latency_model.model._nodes`, when numba is available). Tables are kept across
calls (:func:`_tables_for`, :func:`clear_table_cache`).
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from ..params import TcpParams
from . import _levels, _nodes
from ._interp import _first_crossing, _lagrange, _locate, _locate_in_rows, _stencil
from ._regions import (_FLOOR_KINK_WINDOW, _GAP_BISECTIONS, _GAP_SAMPLES, _RECOVERY_WINDOW_FLOOR,
                       _TIMEOUT_SSTHRESH_FLOOR, _after_loss, _family_windows, _next_boundary_kinks,
                       _region_bounds, _tail_packets)
from .fluid import l0_and_w_f_unchecked, l0_unchecked, y_f_unchecked

if TYPE_CHECKING:  # annotations only: recursion imports this module
    from .recursion import SolverOptions

__all__ = ["clear_table_cache"]

# ---------------------------------------------------------------------------
# Quadrature nodes


def _panel_fractions(panels: int, ratio: float) -> np.ndarray:
    """Panel edges on [0, 1]: half geometric (finest at 0, where the first-loss density of
    many losses concentrates), half uniform (so that no panel is wide, for few losses)."""
    half = max(panels // 2, 1)
    uniform = np.linspace(0.0, 1.0, panels - half + 1)
    if ratio == 1.0:
        return np.unique(np.r_[uniform, np.linspace(0.0, 1.0, half + 1)])
    g = ratio ** np.arange(half + 1) - 1.0
    return np.unique(np.r_[uniform, g / g[-1]])


def _region_nodes(lo, hi, opts: SolverOptions, panels: int, breaks):
    """Nodes and weights on [lo, hi] for arrays of states, shape (S, (panels + len(breaks)) * nodes).

    Geometric panels (finest at ``lo``, where the first-loss density is largest) plus one
    extra panel edge at each of ``breaks`` (per-state kinks of the integrand; those
    outside [lo, hi] give empty panels).
    """
    x, w = np.polynomial.legendre.leggauss(opts.nodes)
    span = (hi - lo)[:, None]
    edges = lo[:, None] + span * _panel_fractions(panels, opts.panel_ratio)[None, :]
    if breaks:
        clipped = [np.minimum(np.maximum(b, lo), hi)[:, None] for b in breaks]
        edges = np.sort(np.concatenate([edges, *clipped], axis=1), axis=1)
    left, width = edges[:, :-1, None], np.diff(edges, axis=1)[:, :, None]
    y = (left + width * (x[None, None, :] + 1.0) / 2.0).reshape(lo.size, -1)
    gw = (width * w[None, None, :] / 2.0).reshape(lo.size, -1)
    return y, gw


# A node whose weight falls below this fraction of its state's total is dropped: its share
# only shrinks at later levels, since (1 - y/r)^(j-1) falls fastest for the largest y.
_PRUNE_BELOW = 1e-18


def _prune_level(j: int) -> bool:
    """Whether nodes are pruned after level j: at 8, 12, 16, 24, 32, 48, ... (a prune
    copies every node array, worth several levels of sums; fixed levels keep each
    state's result independent of the other states)."""
    while j > 12 and j % 2 == 0:
        j //= 2
    return j in (8, 12)


# States per chunk when the node arrays are built.
_CHUNK_STATES = 256


class _NodeSet:
    """Quadrature data of L_j at S states, flat: one entry per node of non-zero weight.

    The first-loss density of level j is proportional to ``(1 - y/r)^(j-1)``; it is
    carried from level to level by one multiplication (:meth:`level` must be called
    for j = 1, 2, ... in order). Nodes whose weight has become negligible are pruned.
    The sums run in :mod:`latency_model.model._levels` (numba-compiled when available, with
    the same result); nodes are kept sorted by state, so a state's value is summed in
    node order and does not depend on the other states of the set.
    """

    def __init__(self, n_states, state, ratio, gw, base, exact_next_l0, idx, wts, n_table, next_state):
        # Nodes come sorted by state (``_Tables.nodes_for``).
        self.n_states, self.n_table = n_states, n_table
        self.state, self.ratio = state, ratio
        self.base, self.exact_next_l0 = base, exact_next_l0
        self.idx, self.wts = idx, wts  # corners and weights in the tables of L_{j-1}
        self.next_state = next_state  # (r, W0, W_SS) after the loss
        compiled = _levels.compiled_level_sums()
        self._sums = compiled or _levels.level_sums
        self.data = _levels.LevelData(n_states, state, gw, idx, wts, n_table, compiled=compiled is not None)
        self._level = 0

    def level(self, prev: np.ndarray | None, next_values: np.ndarray | None = None) -> np.ndarray:
        """L_j at these states given the stacked table of L_{j-1} (None for j = 1).

        ``next_values`` gives L_{j-1} at every node's post-loss state directly instead.
        """
        self._level += 1
        direct = next_values if next_values is not None else (self.exact_next_l0 if prev is None else None)
        total, num = self._sums(self.data, self.ratio, self.base, prev, direct, self._level > 1)
        self.exact_next_l0 = None  # level 1 only: not carried through pruning
        if _prune_level(self._level):
            self._prune(total)
        return num / np.where(total > 0, total, 1.0)

    def _prune(self, total: np.ndarray) -> None:
        dens = self.data.dens
        keep = dens > _PRUNE_BELOW * total[self.state]
        if not keep.all():
            names = ("state", "ratio", "base", "idx", "wts")
            *kept, dens = _levels.compact(keep, [getattr(self, name) for name in names] + [dens])
            for name, a in zip(names, kept):
                setattr(self, name, a)
            if self.next_state is not None:
                self.next_state = tuple(a[keep] for a in self.next_state)
            self.data = _levels.LevelData(self.n_states, self.state, dens, self.idx, self.wts, self.n_table,
                                          compiled=self.data.compiled)



class _Tables:
    """Grids of the two window families, the node sets that read them, and the table
    levels computed so far (reused by later calls, see :func:`_tables_for`)."""

    def __init__(self, params: TcpParams, opts: SolverOptions, lattice: np.ndarray):
        self.params, self.opts = params, opts
        self.r = lattice
        self.values: list[np.ndarray] = []  # table of L_j, j = 1, 2, ...
        self.lock = threading.Lock()
        half = params.rwnd / 2.0
        lo_t, lo_f = _TIMEOUT_SSTHRESH_FLOOR, _RECOVERY_WINDOW_FLOOR
        # Where L_j may have a kink: grid points a cubic stencil must not reach across.
        self.window_kinks: dict[str, np.ndarray] = {}
        mss, tail = float(params.mss_bytes), _tail_packets(params) * float(params.mss_bytes)
        self.size_kinks = np.isclose(lattice, mss, rtol=1e-12) | np.isclose(lattice, tail, rtol=1e-12)
        self.corners = 16 if opts.interpolation == "cubic" else 4
        self.rows = {
            "T": self._row_grids("T", lo_t, max(half, lo_t)),
            "F": self._row_grids("F", lo_f, max(half - 1.0, lo_f)),
        }
        self.offset = {"T": 0, "F": self.rows["T"].size}
        self._compiled = self._compiled_setup()
        states = []
        for family, rows in self.rows.items():
            w0, wss = _family_windows(family, rows.ravel())
            states.append((np.repeat(self.r, rows.shape[1]), w0, wss))
        r = np.concatenate([s[0] for s in states])
        w0 = np.concatenate([s[1] for s in states])
        wss = np.concatenate([s[2] for s in states])
        self.table_nodes = self.nodes_for(r, w0, wss)
        self.table_nodes.next_state = None  # read only by the top node set (exact L_2)

    def _compiled_setup(self):
        """Inputs of the numba node kernels (:mod:`latency_model.model._nodes`), or ``None`` when
        numba is missing or the time model is the per-round one: then numpy builds the nodes."""
        kernels = _nodes.compiled_nodes()
        law = self.params.rule.continuous_law(self.params.b)
        if kernels is None or self.opts.time_model != "fluid" or law is None:
            return None
        opts = self.opts
        gx, gwt = np.polynomial.legendre.leggauss(opts.nodes)
        return dict(
            kernels=kernels,
            k=_nodes.constants(self.params, law, _tail_packets(self.params), _TIMEOUT_SSTHRESH_FLOOR,
                               _RECOVERY_WINDOW_FLOOR, _FLOOR_KINK_WINDOW),
            frac_gap=np.linspace(0.0, 1.0, _GAP_SAMPLES + 1),
            fr_edge=_panel_fractions(opts.edge_panels, opts.panel_ratio),
            fr_wide=_panel_fractions(opts.panels, opts.panel_ratio),
            gx=gx, gwt=gwt,
        )

    def _compiled_nodes(self, r, w0, wss, tables: bool) -> _NodeSet:
        """:meth:`nodes_for` by the numba kernels (same nodes, same operations)."""
        c = self._compiled
        all_edges, build, _ = c["kernels"]
        r, w0, wss = (np.ascontiguousarray(a, dtype=float) for a in (r, w0, wss))
        edges, counts = all_edges(c["k"], r, w0, wss, tables, c["frac_gap"], _GAP_BISECTIONS,
                                  c["fr_edge"], c["fr_wide"])
        out = build(c["k"], r, w0, wss, edges, counts, tables, self.corners, c["gx"], c["gwt"], self.r,
                    self.size_kinks, np.ascontiguousarray(self.rows["T"]), np.ascontiguousarray(self.rows["F"]),
                    np.ascontiguousarray(self.window_kinks["T"]), np.ascontiguousarray(self.window_kinks["F"]),
                    self.offset["F"])
        state, ratio, gw, base, exact, r_next, nw0, nwss, idx, wts = out
        n_table = self.offset["F"] + self.rows["F"].size if tables else 0
        return _NodeSet(r.size, state, ratio, gw, base, exact, idx, wts, n_table, (r_next, nw0, nwss))

    def _row_grids(self, family: str, lo: float, hi: float) -> np.ndarray:
        """Window grid of every size row, shape (n_sizes, n_windows).

        A geometric grid on [lo, hi] plus the timeout threshold (where y_to reaches 0),
        plus the row's own kinks of L_j along the window, which move with the remaining
        size r: where y_to equals ``r - d MSS`` (the first two regions meet the tail),
        and where a loss-free transfer of r bytes ends exactly at the end of slow start
        or at the receiver-window cap. They are found numerically, so any rule and time
        model work; a row without such a kink gets the midpoint of its widest cell.
        """
        params, tm, opts = self.params, self.opts.time_model, self.opts
        # A small receiver window (M <= 4 packets) leaves a family a single reachable window
        # (its floor): give the grid one packet of width so that it has cells to interpolate
        # in; the extra windows are never reached, so they change nothing.
        hi = max(hi, lo + 1.0)
        thr = float(params.timeout_threshold)
        base = np.unique(np.r_[np.geomspace(lo, hi, opts.window_points), [thr][: lo < thr < hi]])
        fine = np.linspace(lo, hi, 2001)
        w0, wss = _family_windows(family, fine)
        tail = _tail_packets(params) * float(params.mss_bytes)
        curves = (
            (y_f_unchecked(params, np.full(fine.shape, thr), w0, wss, tm), self.r - tail),
            (y_f_unchecked(params, np.minimum(wss, params.rwnd), w0, wss, tm), self.r),
            (y_f_unchecked(params, np.full(fine.shape, params.rwnd), w0, wss, tm), self.r),
        )
        extra = np.stack([_first_crossing(fine, f, target) for f, target in curves], axis=1)
        smooth = base[base != thr]  # the geometric points: every other point may be a kink
        rows = np.empty((self.r.size, base.size + extra.shape[1]))
        for i in range(self.r.size):
            row = base
            for c in extra[i]:
                gaps = np.diff(row)
                if not (lo < c < hi) or np.min(np.abs(row - c)) < 1e-9 * (hi - lo):
                    k = int(np.argmax(gaps))
                    c = row[k] + gaps[k] / 2.0
                row = np.sort(np.r_[row, c])
            rows[i] = row
        self.window_kinks[family] = ~np.isin(rows, smooth)
        return rows

    def _top_row(self, r):
        """Index of the first size row at or above each state's size r (the row of a table
        state itself): the cubic stencil reads no row above it, so a state's result does
        not depend on how far the lattice of the call goes (the lattice is cut just past
        the largest size, with the same tolerance)."""
        return np.minimum(np.searchsorted(self.r, np.asarray(r) * (1 - 1e-12)), self.r.size - 1)

    def _interp(self, family: str, r, param, top_row):
        """Corner indices and weights of (r, param), shape (n, corners), for nodes of states
        whose size rows are ``top_row`` (:meth:`_top_row`).

        Linear: along each size row's own window grid, then in r L_j between the two rows.
        Cubic: the same with four rows and four window points (:func:`_lagrange`).
        """
        if self.corners == 4:
            return self._interp_linear(family, r, param)
        rows, off, kinks = self.rows[family], self.offset[family], self.window_kinks[family]
        nw, nr, n = rows.shape[1], self.r.size, np.size(r)
        i, _ = _locate(self.r, r)
        size_rows, size_use = _stencil(i, nr, self.size_kinks, top=top_row)
        x = np.minimum(np.maximum(r, self.r[0]), self.r[-1])
        # Interpolate r L_j, not L_j: timeout costs spread over r bytes make L_j
        # vary like 1/r for small r, while r L_j is close to linear.
        row_weights = _lagrange(self.r[size_rows], size_use, x) * self.r[size_rows] / np.maximum(r, 1e-300)[:, None]
        corners, weights = np.empty((n, 16), np.int32), np.empty((n, 16))
        for q in range(4):
            row = size_rows[:, q]
            m, _ = _locate_in_rows(rows, row, param)
            points, use = _stencil(m, nw, kinks, row)
            xq = np.minimum(np.maximum(param, rows[row, 0]), rows[row, nw - 1])
            w = _lagrange(rows[row[:, None], points], use, xq)
            corners[:, 4 * q:4 * q + 4] = off + row[:, None] * nw + points
            weights[:, 4 * q:4 * q + 4] = row_weights[:, q:q + 1] * w
        return corners, weights

    def _interp_linear(self, family: str, r, param):
        """:meth:`_interp` with ``interpolation="linear"``."""
        rows, off = self.rows[family], self.offset[family]
        nw = rows.shape[1]
        i, tr = _locate(self.r, r)
        i1 = np.minimum(i + 1, self.r.size - 1)
        corners, weights = [], []
        for row_index, w_row in ((i, 1.0 - tr), (i1, tr)):
            m, tw = _locate_in_rows(rows, row_index, param)
            base = off + row_index * nw + m
            corners += [base, np.minimum(base + 1, off + row_index * nw + nw - 1)]
            scale = w_row * self.r[row_index] / np.maximum(r, 1e-300)
            weights += [scale * (1.0 - tw), scale * tw]
        n_nodes = np.size(r)
        cols = np.stack(corners, axis=-1).reshape(n_nodes, 4).astype(np.int32)
        return cols, np.stack(weights, axis=-1).reshape(n_nodes, 4)

    def nodes_for(self, r, w0, wss, *, tables: bool = True) -> _NodeSet:
        """Quadrature data of L_j at states (r, w0, wss).

        Panels also break where the integrand has a kink inside a region
        (:meth:`_state_breaks`). ``tables=False`` skips the table lookup (for sets
        evaluated at level 1 only, whose integrand reads the exact L_0 of the next state and
        so has no kink where that state's L_1 has one).
        """
        if self._compiled is not None:
            return self._compiled_nodes(r, w0, wss, tables)
        a, tail, breaks = self._state_breaks(r, w0, wss, next_kinks=tables)
        # In chunks of states: the node arrays of a chunk stay in cache, which matters more
        # than the number of numpy calls here (measured).
        chunks = [self._chunk_nodes(r[sl], w0[sl], wss[sl], a[sl], tail[sl], [b[:, sl] for b in breaks])
                  for sl in (slice(lo, lo + _CHUNK_STATES) for lo in range(0, r.size, _CHUNK_STATES))]
        counts = np.array([c[0].size for c in chunks])
        cat = [np.concatenate([c[i] for c in chunks]) for i in range(len(chunks[0]))]
        # Chunk-local state numbers -> global ones.
        cat[0] += np.repeat(np.arange(0, r.size, _CHUNK_STATES), counts)
        state, ratio, gw, base, exact, timeout, r_next, p_next, nw0, nwss = cat
        n = state.size
        if tables:
            top_row = self._top_row(r)
            idx, wts = np.empty((n, self.corners), np.int32), np.empty((n, self.corners))
            for family, sel in (("T", timeout), ("F", ~timeout)):
                idx[sel], wts[sel] = self._interp(family, r_next[sel], p_next[sel], top_row[state[sel]])
            n_table = self.offset["F"] + self.rows["F"].size
        else:
            idx, wts, n_table = np.zeros((n, 0), np.int32), np.zeros((n, 0)), 0
        return _NodeSet(r.size, state, ratio, gw, base, exact, idx, wts, n_table, (r_next, nw0, nwss))

    def _state_breaks(self, r, w0, wss, next_kinks: bool = True):
        """Region bounds (a, tail) of states (r, w0, wss) and the panel breaks of each
        region, three arrays of shape (n_breaks, S): the kinks of the integrand.

        In every region: end of slow start, receiver-window cap, W_f = 4 where the
        post-loss windows leave their floors, y = MSS where the data left after an early
        timeout stops being the whole file, where the post-loss window parameter
        crosses the timeout threshold (the next state's y_to leaves 0 or changes
        formula), and where it crosses 4 packets (the next state's own post-loss windows
        leave their floors from its first byte on; found 2026-11-24 by the L_2 property
        test: 1.6e-6 off without it). In regions 1 and 2 also where the next state's y_to
        meets its tail (:func:`_next_boundary_kinks`). These last three are kinks of
        L_{j-1} (j >= 2) of the next state, not of its L_0: ``next_kinks=False`` leaves
        them out. With them L_1 and L_2 are exact to quadrature precision.
        """
        params, tm = self.params, self.opts.time_model
        a, tail = _region_bounds(params, r, w0, wss, tm)
        common = [
            y_f_unchecked(params, np.broadcast_to(target, r.shape), w0, wss, tm)
            for target in (_FLOOR_KINK_WINDOW, np.minimum(wss, params.rwnd), params.rwnd)
        ]
        common.append(np.full(r.shape, float(params.mss_bytes)))
        thr = float(params.timeout_threshold)
        # W_f at which the post-loss parameter (W_f/2 after a timeout, W_f/2 - 1 after fast
        # recovery) reaches the timeout threshold and the floor kink, per family.
        crossing = {
            family: [y_f_unchecked(params, np.full(r.shape, 2.0 * (w + shift)), w0, wss, tm)
                     for w in (thr, _FLOOR_KINK_WINDOW)]
            for family, shift in (("T", 0.0), ("F", _RECOVERY_WINDOW_FLOOR))
        }
        lo = np.zeros_like(r)
        if not next_kinks:
            return a, tail, [np.stack(common)] * 3
        return a, tail, [
            np.stack(common + crossing["T"] + [*_next_boundary_kinks(params, 1, r, w0, wss, lo, a, tm)]),
            np.stack(common + crossing["F"] + [*_next_boundary_kinks(params, 2, r, w0, wss, a, tail, tm)]),
            # The post-loss state of region 3 is one packet: it has no tail kink.
            np.stack(common + crossing["T"]),
        ]

    def _chunk_nodes(self, r, w0, wss, a, tail, breaks):
        """Node arrays of states (r, w0, wss) with region bounds (a, tail) and per-region
        panel breaks, state by state (each state's nodes in region order, then in y order),
        empty nodes dropped: state (0-based in the chunk), ratio 1 - y/r, Gauss-Legendre
        weight, cost L_0(y) + timeout, exact L_0 after the loss, whether the loss ends in a
        timeout, and the post-loss state (r, parameter, W0, W_SS)."""
        params, tm = self.params, self.opts.time_model
        parts = []
        for region, (lo, hi) in enumerate(((np.zeros_like(r), a), (a, tail), (tail, r)), start=1):
            panels = self.opts.panels if region == 2 else self.opts.edge_panels
            y, gw = _region_nodes(lo, hi, self.opts, panels, list(breaks[region - 1]))
            rr = np.broadcast_to(r[:, None], y.shape)
            w0b, wssb = np.broadcast_to(w0[:, None], y.shape), np.broadcast_to(wss[:, None], y.shape)
            l0y, wf = l0_and_w_f_unchecked(params, y, w0b, wssb, tm)
            cost, family, r_next, p_next = _after_loss(params, region, rr, y, wf)
            nw0, nwss = np.broadcast_arrays(*_family_windows(family, p_next))
            parts.append((gw, 1.0 - np.minimum(np.maximum(y / rr, 0.0), 1.0), l0y + cost,
                          l0_unchecked(params, r_next, nw0, nwss, tm),
                          np.full(y.shape, family == "T"), r_next, p_next, nw0, nwss))
        # Regions side by side: row-major order is state by state.
        cols = [np.concatenate([p[i] for p in parts], axis=1) for i in range(len(parts[0]))]
        keep = cols[0] > 0  # empty regions and panels outside their region carry no weight
        state = np.broadcast_to(np.arange(r.size)[:, None], keep.shape)[keep]
        gw, ratio, base, exact, timeout, r_next, p_next, nw0, nwss = (c[keep] for c in cols)
        return state, ratio, gw, base, exact, timeout, r_next, p_next, nw0, nwss

    def levels(self, k_max: int, r, w0, wss, exact_l2):
        """Yield (j, L_j at the states (r, w0, wss)) for j = 1 .. k_max.

        L_1 at these states uses no table, nor does L_2 at the states where ``exact_l2``
        (a boolean per state) is true: it integrates the exact L_1 of every node's
        post-loss state. Otherwise the tables of L_{j-1} are interpolated.
        """
        top = self.nodes_for(r, w0, wss)
        exact = np.asarray(exact_l2, bool)
        prev = None
        for j in range(1, k_max + 1):
            if j == 2 and exact.any():
                sel = exact[top.state]
                if sel.all():
                    nxt = self._exact_l1(*top.next_state)
                else:  # the table's L_1, replaced by the exact one where asked
                    nxt = top.data.interp @ prev
                    nxt[sel] = self._exact_l1(*(a[sel] for a in top.next_state))
                top_j = top.level(None, next_values=nxt)
                top.next_state = None  # only needed here
            else:
                top_j = top.level(prev)
            if j < k_max:
                prev = self.table_level(j)
            yield j, top_j

    def table_level(self, j: int) -> np.ndarray:
        """The stacked table of L_j (computed once, level by level, then kept)."""
        with self.lock:
            while len(self.values) < j:
                self.values.append(self.table_nodes.level(self.values[-1] if self.values else None))
            return self.values[j - 1]

    def _exact_l1(self, r, w0, wss, chunk: int = 20_000) -> np.ndarray:
        """L_1 at arbitrary states by quadrature of the exact L_0 (in chunks of states)."""
        out = np.empty(r.size)
        if self._compiled is not None:
            c = self._compiled
            r, w0, wss = (np.ascontiguousarray(a, dtype=float) for a in (r, w0, wss))
            c["kernels"][2](c["k"], r, w0, wss, c["fr_edge"], c["fr_wide"], c["gx"], c["gwt"], out)
            return out
        for lo in range(0, r.size, chunk):
            sl = slice(lo, lo + chunk)
            out[sl] = self.nodes_for(r[sl], w0[sl], wss[sl], tables=False).level(None)
        return out


# Tables kept across calls, most recent last: they do not depend on p, so a sweep over p
# (or a second call on the same sizes) reuses the table levels already computed.
_TABLE_CACHE: "OrderedDict[tuple, _Tables]" = OrderedDict()
_TABLE_CACHE_SIZE = 2
_TABLE_CACHE_LOCK = threading.Lock()


def _tables_for(params: TcpParams, opts: SolverOptions, r_min: float, r_max: float) -> _Tables:
    """Tables covering the sizes [r_min, r_max], from the cache when one covers them.

    A cached table serves a call when its size lattice starts with the lattice the call
    needs: rows only read smaller rows, so the extra rows change nothing, bit for bit.
    """
    lattice = _size_lattice(float(params.mss_bytes), opts, r_min, r_max)
    key = (params.replace(p=0.0), dataclasses.replace(opts, exact_l2=True))  # neither changes a table
    with _TABLE_CACHE_LOCK:
        tables = _TABLE_CACHE.get(key)
        if tables is None or tables.r.size < lattice.size or not np.array_equal(tables.r[: lattice.size], lattice):
            tables = _Tables(params, opts, lattice)
        _TABLE_CACHE[key] = tables
        _TABLE_CACHE.move_to_end(key)
        while len(_TABLE_CACHE) > _TABLE_CACHE_SIZE:
            _TABLE_CACHE.popitem(last=False)
    return tables


def clear_table_cache() -> None:
    """Forget the tables kept across calls (they can take a few hundred MB for long curves)."""
    with _TABLE_CACHE_LOCK:
        _TABLE_CACHE.clear()


def _size_lattice(mss: float, opts: SolverOptions, r_min: float, r_max: float) -> np.ndarray:
    """Sizes (bytes) of the table rows: a fixed lattice, cut just past ``r_max``.

    Uniform steps of ``size_step_packets`` from one MSS up to ``fine_packets``, then
    geometric steps of ``size_ratio``; also geometric steps from one MSS up to four (where
    L_j varies fastest) and down to ``r_min`` for files smaller than one MSS. Rows only ever
    read rows of smaller sizes, so a fixed lattice makes the result for one file size
    independent of the other sizes solved with it.
    """
    fine_end = opts.fine_packets * mss
    fine = mss + opts.size_step_packets * mss * np.arange(int(round((fine_end - mss) / (opts.size_step_packets * mss))) + 1)
    n_up = max(int(math.ceil(math.log(max(r_max, fine_end) / fine_end) / math.log(opts.size_ratio))), 0)
    coarse = fine_end * opts.size_ratio ** np.arange(n_up + 1)
    near = mss * opts.size_ratio ** np.arange(int(math.log(4.0) / math.log(opts.size_ratio)) + 1)
    n_down = max(int(math.ceil(math.log(mss / min(r_min, mss)) / math.log(opts.size_ratio))), 0)
    below = mss * opts.size_ratio ** -np.arange(1, n_down + 1)
    lattice = np.unique(np.concatenate([below, near, fine, coarse]))
    upper = lattice[np.searchsorted(lattice, r_max * (1 - 1e-12))] if r_max <= lattice[-1] else lattice[-1]
    return lattice[lattice <= upper]

