"""The recursive latency model: L_k, the conditional latency given k losses, and the
expected latency (Ayesta & Avrachenkov, Section 2, Eq. 1 and the recursion for L_k).

Reading of the recursion (each deviation from the printed formula is listed in
``validation/DEVIATIONS.md``). Let the first of k losses happen after y bytes, with
density ``f(y, k, y_bar) = (k/y_bar)(1 - y/y_bar)^(k-1)``; let ``W_f = W_f(y)`` be the
window then, ``y_to`` the timeout threshold of the current state and ``d`` the tail
length in packets (``dup_t``; 1 with the paper's tail-retransmit proposal)::

    region 1, 0 <= y < a = max(0, min(y_to, y_bar - d MSS)):  timeout
        L_0(y) + RTO + L_{k-1}(min(y_bar - y + MSS, y_bar); W0 = 1, W_SS = max(W_f/2, 2))
    region 2, a <= y < y_bar - d MSS:                          fast retransmit
        L_0(y) + L_{k-1}(y_bar - y; W0 = W_SS = max(W_f/2 - 1, 1))
    region 3, max(0, y_bar - d MSS) <= y <= y_bar:             timeout in the tail
        L_0(y) + RTO + L_{k-1}(min(MSS, y_bar); W0 = 1, W_SS = max(W_f/2, 2))

Printed typos fixed: "+RTT" is the RTO the text describes; region 2's upper limit is
``y_bar - d MSS`` (not ``y_bar``, which would overlap region 3); region 3's first term
is L_0 (not L_{k-1}); W_SS after a timeout is ``max(W_f/2, 2)`` as the text says; the
post-recovery window ``W_f/2 - 1`` is kept at one packet at least (it reaches 0 for
LT and the proposal); the data left after a timeout never exceeds the file.

Speed. After the first loss every state belongs to one of two one-parameter window
families: after a timeout ``(W0, W_SS) = (1, s)``, after fast recovery
``(W0, W_SS) = (c, c)``. :class:`_Tables` tabulates L_j over (remaining bytes x
window parameter) for both families, level by level. Quadrature nodes are fixed
(geometric Gauss-Legendre panels per region), so the interpolation into level j-1 is
precomputed once and each level is one gather and one weighted sum; only the weight
``(1 - y/y_bar)^(j-1)`` changes with j. L_1 uses the exact L_0, not a table.
:func:`conditional_latency_direct` is the paper-faithful nested-quadrature recursion,
used to check the tables.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy import integrate

from . import _levels, _nodes
from .checks import check_array, check_choice, check_int, check_real
from .fluid import TIME_MODELS, l0, l0_and_w_f, l0_and_w_f_unchecked, l0_unchecked, w_f_unchecked, y_f, y_f_unchecked
from .losses import LOSS_LAWS, loss_count_pmf
from .params import TcpParams

__all__ = [
    "SolverOptions",
    "LatencyResult",
    "conditional_latency",
    "expected_latency",
    "conditional_latency_direct",
    "clear_table_cache",
]


INTERPOLATIONS = ("cubic", "linear")


@dataclass(frozen=True)
class SolverOptions:
    """Numerical settings of the tabulated recursion.

    Parameters
    ----------
    time_model : {"fluid", "rounds"}
        Time model of L_0 and W_f (see :mod:`latency_model.fluid`).
    panels : int
        Geometric Gauss-Legendre panels in region 2 (fast retransmit), the wide one (>= 1).
    edge_panels : int
        Panels in regions 1 and 3 (timeouts), at most a few packets wide (>= 1).
    nodes : int
        Gauss-Legendre nodes per panel (>= 1).
    panel_ratio : float
        Ratio of successive panel widths (>= 1); panels are finest where the
        first-loss density is largest, at the start of each region.
    size_step_packets : float
        Spacing of the size grid of the tables up to ``fine_packets``, packets.
    fine_packets : float
        Size up to which the grid is uniform, packets.
    size_ratio : float
        Geometric ratio of the size grid above ``fine_packets``.
    window_points : int
        Points of each window-family grid.
    interpolation : {"cubic", "linear"}
        How the tables of L_{j-1} are read between grid points: ``"cubic"`` (default)
        through 4 x 4 points (Lagrange, cubic in r L_j across four size rows and in L_j
        across four window points of each row, the stencil cut short at a grid point
        where L_j may have a kink, so that it never straddles one: one-sided next to a
        kink, never reading a row above the state's own); ``"linear"`` through 2 x 2
        points (4x less work per level; from L_3 on, and in the expected latency, errors
        up to 7e-4 and 1.5e-3 at these defaults, against 8e-5 and 4e-5 for cubic).
    exact_l2 : bool
        L_2 at the requested sizes from the exact L_1 of every post-loss state (no table;
        agrees with nested quadrature to about 1e-7). ``False`` reads L_1 from the table
        (within 1.3e-4 over 1..100 packets), which is faster. :func:`expected_latency`
        uses the exact L_2 only at sizes where p(2 | y) >= 1e-7; elsewhere the difference
        cannot move L by more than 5e-11 of L_2.
    """

    time_model: str = "fluid"
    panels: int = 16
    edge_panels: int = 6
    nodes: int = 3
    panel_ratio: float = 1.3
    size_step_packets: float = 0.25
    fine_packets: float = 20.0
    size_ratio: float = 1.07
    window_points: int = 24
    interpolation: str = "cubic"
    exact_l2: bool = True

    def __post_init__(self):
        check_choice("time_model", self.time_model, TIME_MODELS)
        check_int("panels", self.panels, low=1)
        check_int("edge_panels", self.edge_panels, low=1)
        check_int("nodes", self.nodes, low=1, high=20)
        check_real("panel_ratio", self.panel_ratio, low=1.0)
        check_real("size_step_packets", self.size_step_packets, low=0.0, low_open=True)
        check_real("fine_packets", self.fine_packets, low=0.0, low_open=True)
        check_real("size_ratio", self.size_ratio, low=1.0, low_open=True)
        check_int("window_points", self.window_points, low=2)
        check_choice("interpolation", self.interpolation, INTERPOLATIONS)
        if not isinstance(self.exact_l2, bool):
            raise ValueError(f"exact_l2 must be true or false, got {self.exact_l2!r}")


@dataclass(frozen=True)
class LatencyResult:
    """Expected latency and its ingredients, one entry per file size.

    Attributes
    ----------
    sizes_bytes : ndarray
        File sizes, bytes.
    expected_latency_s : ndarray
        ``sum_k p(k | y) L_k(y)`` over the kept k, seconds (Eq. 1).
    conditional_latency_s : ndarray, shape (n_sizes, K)
        L_k for k = 0 .. K-1, seconds. L_2 is read from the table (within about 1.3e-4
        of the exact one) at sizes where p(2 | y) < 1e-7, whatever ``exact_l2`` says.
    loss_pmf : ndarray, shape (n_sizes, K)
        p(k | y) used (normalised unless asked otherwise).
    truncated_mass : ndarray
        Probability of K or more losses left out of the sum.
    raw_mass : ndarray
        Total mass of the loss law as printed (about 1 + O(p) for the paper's law).
    """

    sizes_bytes: np.ndarray
    expected_latency_s: np.ndarray
    conditional_latency_s: np.ndarray
    loss_pmf: np.ndarray
    truncated_mass: np.ndarray
    raw_mass: np.ndarray

    @property
    def k_max(self) -> int:
        """Number K of conditional latencies summed (k = 0 .. K-1)."""
        return self.conditional_latency_s.shape[1]


# ---------------------------------------------------------------------------
# Regions and transitions (shared by the tables and the direct recursion)


# Floors of the post-loss windows (packets): W_SS after a timeout is max(W_f/2, 2) (the
# paper's text); the post-recovery window max(W_f/2 - 1, 1) (our reading, see above).
_TIMEOUT_SSTHRESH_FLOOR = 2.0
_RECOVERY_WINDOW_FLOOR = 1.0
# Both floors stop binding at the same W_f: a kink of the integrand inside a region.
_FLOOR_KINK_WINDOW = 2.0 * _TIMEOUT_SSTHRESH_FLOOR
assert _FLOOR_KINK_WINDOW == 2.0 * (_RECOVERY_WINDOW_FLOOR + 1.0)


def _tail_packets(params: TcpParams) -> int:
    return 1 if params.tail_retransmit else params.dup_t


def _region_bounds(params: TcpParams, r, w0, wss, time_model):
    """Bytes a (end of region 1) and t (start of region 3) for states (r, w0, wss)."""
    yto = y_f_unchecked(params, float(params.timeout_threshold), w0, wss, time_model)
    tail_start = np.minimum(np.maximum(r - _tail_packets(params) * params.mss_bytes, 0.0), r)
    a = np.minimum(np.maximum(np.minimum(yto, tail_start), 0.0), r)
    return a, tail_start


def _after_loss(params: TcpParams, region: int, r, y, wf):
    """Cost added (seconds), family ("T" or "F"), remaining bytes and window parameter."""
    mss = float(params.mss_bytes)
    if region == 2:
        return 0.0, "F", r - y, np.maximum(wf / 2.0 - 1.0, _RECOVERY_WINDOW_FLOOR)
    s_next = np.maximum(wf / 2.0, _TIMEOUT_SSTHRESH_FLOOR)
    if region == 1:
        return params.rto, "T", np.minimum(r - y + mss, r), s_next
    return params.rto, "T", np.broadcast_to(np.minimum(mss, r), np.shape(y)), s_next


def _next_boundary_gap(params: TcpParams, region: int, r, y, w0, wss, time_model):
    """y_to of the post-loss state minus where its tail starts, bytes.

    Where this changes sign, L_{j-1} of the post-loss state switches between its
    region-1 and region-2 formulas (a timeout vs fast retransmit): a kink in y of the
    integrand of L_j.
    """
    wf = w_f_unchecked(params, y, w0, wss, time_model)
    _, family, r_next, p_next = _after_loss(params, region, r, y, wf)
    nw0, nwss = _family_windows(family, p_next)
    yto = y_f_unchecked(params, float(params.timeout_threshold), nw0, nwss, time_model)
    return yto - (r_next - _tail_packets(params) * float(params.mss_bytes))


# Sampling and bisection of the gap above, per state and region.
_GAP_SAMPLES = 16
_GAP_BISECTIONS = 16  # to 1/16 of a region / 2^16 = 1e-6 of it


def _next_boundary_kinks(params: TcpParams, region: int, r, w0, wss, lo, hi, time_model):
    """First and last y in [lo, hi] where :func:`_next_boundary_gap` changes sign (``lo``,
    an empty panel, if it does not), from a sampled sign change refined by bisection;
    shape (2, S)."""
    frac = np.linspace(0.0, 1.0, _GAP_SAMPLES + 1)
    ys = lo[:, None] + (hi - lo)[:, None] * frac[None, :]
    gap = _next_boundary_gap(params, region, r[:, None], ys, w0[:, None], wss[:, None], time_model)
    change = (np.sign(gap[:, :-1]) * np.sign(gap[:, 1:]) < 0) & (hi > lo)[:, None]
    rows = np.arange(r.size)
    out = np.array([lo, lo], dtype=float)
    for which, cell in enumerate((np.argmax(change, axis=1),
                                  change.shape[1] - 1 - np.argmax(change[:, ::-1], axis=1))):
        has = change[rows, cell]
        if not has.any():
            continue
        a, b = ys[rows, cell][has], ys[rows, cell + 1][has]
        ga = gap[rows, cell][has]
        args = (r[has], w0[has], wss[has])
        for _ in range(_GAP_BISECTIONS):
            m = 0.5 * (a + b)
            gm = _next_boundary_gap(params, region, args[0], m, args[1], args[2], time_model)
            left = np.sign(gm) * np.sign(ga) <= 0
            b = np.where(left, m, b)
            a, ga = np.where(left, a, m), np.where(left, ga, gm)
        out[which, has] = 0.5 * (a + b)
    return out


def _family_windows(family: str, param):
    """(W0, W_SS) of a family member."""
    if family == "T":
        return np.ones_like(param), param
    return param, param


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
    The sums run in :mod:`latency_model._levels` (numba-compiled when available, with
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
            for name in ("state", "ratio", "base", "idx", "wts"):
                setattr(self, name, getattr(self, name)[keep])
            if self.next_state is not None:
                self.next_state = tuple(a[keep] for a in self.next_state)
            self.data = _levels.LevelData(self.n_states, self.state, dens[keep], self.idx, self.wts, self.n_table,
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
        """Inputs of the numba node kernels (:mod:`latency_model._nodes`), or ``None`` when
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
        thr = float(params.timeout_threshold)
        base = np.unique(np.r_[np.geomspace(lo, hi, opts.window_points), [thr][: lo < thr < hi]])
        fine = np.linspace(lo, hi, 2001)
        w0, wss = _family_windows(family, fine)
        tail = _tail_packets(params) * float(params.mss_bytes)
        curves = (
            (y_f(params, np.full(fine.shape, thr), w0, wss, time_model=tm), self.r - tail),
            (y_f(params, np.minimum(wss, params.rwnd), w0, wss, time_model=tm), self.r),
            (y_f(params, np.full(fine.shape, params.rwnd), w0, wss, time_model=tm), self.r),
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


def _first_crossing(x: np.ndarray, f: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """For each target, the first x where the sampled curve f(x) crosses it (NaN if none)."""
    g = f[None, :] - targets[:, None]
    finite = np.isfinite(g[:, :-1]) & np.isfinite(g[:, 1:])
    change = finite & (np.sign(g[:, :-1]) * np.sign(g[:, 1:]) < 0)
    k = np.argmax(change, axis=1)
    rows = np.arange(targets.size)
    g0, g1 = g[rows, k], g[rows, k + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        xc = x[k] + (x[k + 1] - x[k]) * g0 / (g0 - g1)
    return np.where(change.any(axis=1), xc, np.nan)


def _locate(grid: np.ndarray, x):
    """Index i and fraction t with x ~ grid[i] + t (grid[i+1] - grid[i]), clipped to the grid."""
    if grid.size == 1:
        return np.zeros(np.shape(x), dtype=np.intp), np.zeros(np.shape(x))
    i = np.minimum(np.maximum(np.searchsorted(grid, x, side="right") - 1, 0), grid.size - 2)
    t = np.minimum(np.maximum((x - grid[i]) / (grid[i + 1] - grid[i]), 0.0), 1.0)
    return i, t


def _stencil(m, n: int, kinks: np.ndarray, row=None, top=None):
    """Four grid points around cell m (points m, m+1) of a grid of n points, and which of
    them a cubic stencil uses; shapes (S, 4).

    Centred (m-1 .. m+2) where both outer points exist and no kink lies between them and
    the cell (``kinks`` per point, or per row and point with ``row``); shifted to
    m-2 .. m+1 or m .. m+3 where one side is blocked (still cubic, one-sided), with the
    farthest point dropped if it is blocked too (quadratic); linear if both sides are.
    No point above ``top`` (per node) is used.
    """
    at = (lambda j: kinks[j]) if row is None else (lambda j: kinks[row, j])
    clip = lambda j: np.minimum(np.maximum(j, 0), n - 1)
    last = n - 1 if top is None else np.minimum(top, n - 1)
    left = (m >= 1) & ~at(m)
    right = (m + 2 <= last) & ~at(clip(m + 1))
    shift = np.where(left & ~right, -1, np.where(right & ~left, 1, 0))
    points = clip(m[:, None] + shift[:, None] + np.arange(-1, 3)[None, :])
    use = np.ones(points.shape, bool)
    use[:, 0] = np.where(shift == 0, left, np.where(shift < 0, (m >= 2) & ~at(clip(m - 1)), True))
    use[:, 3] = np.where(shift == 0, right, np.where(shift > 0, (m + 3 <= last) & ~at(clip(m + 2)), True))
    use[:, 2] = m + 1 <= n - 1
    return points, use


def _lagrange(grid, use, x):
    """Weights of Lagrange interpolation at ``x`` through the points ``grid`` (S, 4)
    that ``use`` marks (cubic, quadratic or linear; the others get weight 0)."""
    out = np.empty(grid.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(4):
            w = np.ones(np.shape(x))
            for k in range(4):
                if k != j:
                    w = np.where(use[:, k], w * ((x - grid[:, k]) / (grid[:, j] - grid[:, k])), w)
            out[:, j] = np.where(use[:, j], w, 0.0)
    return out


def _locate_in_rows(rows: np.ndarray, row, x):
    """:func:`_locate` of each ``x[n]`` in its own grid ``rows[row[n]]`` (rows sorted,
    at least 2 points), by a vectorised binary search: same index and fraction."""
    row, x = np.asarray(row), np.asarray(x, float)
    nw = rows.shape[1]
    flat = rows.ravel()
    start = row * nw
    lo, hi = np.zeros(x.shape, np.intp), np.full(x.shape, nw, np.intp)
    for _ in range(nw.bit_length()):  # lo ends as the number of grid points <= x
        mid = (lo + hi) >> 1
        le = flat[start + np.minimum(mid, nw - 1)] <= x
        open_ = lo < hi
        lo = np.where(open_ & le, mid + 1, lo)
        hi = np.where(open_ & ~le, mid, hi)
    i = np.minimum(np.maximum(lo - 1, 0), nw - 2)
    g0, g1 = flat[start + i], flat[start + i + 1]
    t = np.minimum(np.maximum((x - g0) / (g1 - g0), 0.0), 1.0)
    return i, t


# ---------------------------------------------------------------------------
# Public API


# expected_latency integrates the exact L_1 for L_2 only at sizes with p(2 | y) at least this.
_EXACT_L2_MIN_WEIGHT = 1e-7


def _sizes(sizes_bytes) -> np.ndarray:
    return check_array("sizes_bytes", sizes_bytes, low=0.0, low_open=True).ravel()


def conditional_latency(
    params: TcpParams,
    sizes_bytes,
    k,
    *,
    options: SolverOptions | None = None,
) -> np.ndarray:
    """Expected latency given exactly k losses, L_k, seconds.

    Parameters
    ----------
    params : TcpParams
        Path, TCP and recovery settings (``dup_lt``, ``tail_retransmit``) and rule.
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    k : int or sequence of int
        Number(s) of losses (>= 0).
    options : SolverOptions, optional
        Time model and quadrature/table resolution.

    Returns
    -------
    ndarray
        Shape ``(n_sizes,)`` for an int ``k``, ``(n_sizes, len(k))`` for a sequence.
    """
    opts = options or SolverOptions()
    sizes = _sizes(sizes_bytes)
    scalar = np.ndim(k) == 0
    ks = [check_int("k", kk, low=0) for kk in np.atleast_1d(k)]
    k_top = max(ks)
    out = np.empty((sizes.size, len(ks)))
    by_k = _solve(params, sizes, k_top + 1, opts)
    for col, kk in enumerate(ks):
        out[:, col] = by_k[:, kk]
    return out[:, 0] if scalar else out


def expected_latency(
    params: TcpParams,
    sizes_bytes,
    *,
    law: str = "paper",
    normalize: bool = True,
    tail: float = 1e-9,
    options: SolverOptions | None = None,
) -> LatencyResult:
    """Expected latency ``L(y) = sum_k p(k | y) L_k(y)`` (Eq. 1), seconds.

    The sum stops once the probability of further losses is below ``tail`` for every
    size; K and that mass are reported.

    Parameters
    ----------
    params : TcpParams
        Path, TCP and recovery settings and rule; ``params.p`` sets the loss law.
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    law : {"paper", "exact"}
        Loss-count law (:func:`latency_model.losses.loss_count_pmf`).
    normalize : bool
        Normalise the paper's law to total mass 1 (default).
    tail : float
        Truncation: probability mass of more losses left out (default 1e-9).
    options : SolverOptions, optional
        Time model and resolution.

    Returns
    -------
    LatencyResult
    """
    opts = options or SolverOptions()
    sizes = _sizes(sizes_bytes)
    check_choice("law", law, LOSS_LAWS)
    counts = loss_count_pmf(sizes, params.p, params.mss_bytes, law=law, normalize=normalize, tail=tail)
    # The exact L_2 (its cost grows with the number of sizes) only where its weight
    # p(2 | y) can show: elsewhere the table's L_2 (within 1.3e-4 of it) moves L by less
    # than 1e-7 * 1.3e-4 of L_2. Decided per size, so sizes stay independent of each other.
    exact_l2 = None
    if opts.exact_l2 and counts.k_max > 2:
        exact_l2 = counts.pmf[:, 2] >= _EXACT_L2_MIN_WEIGHT
    cond = _solve(params, sizes, counts.k_max, opts, exact_l2)
    # Term by term, in k order: a size's sum then does not depend on how many (zero) terms
    # other sizes in the same call need, bit for bit.
    expected = np.zeros(sizes.size)
    for k in range(counts.k_max):
        expected += counts.pmf[:, k] * cond[:, k]
    return LatencyResult(
        sizes_bytes=sizes,
        expected_latency_s=expected,
        conditional_latency_s=cond,
        loss_pmf=counts.pmf,
        truncated_mass=counts.truncated_mass,
        raw_mass=counts.raw_mass,
    )


def _solve(params: TcpParams, sizes: np.ndarray, n_levels: int, opts: SolverOptions,
           exact_l2=None) -> np.ndarray:
    """L_0 .. L_{n_levels-1} at (sizes, params.w0, params.w_ss): shape (n_sizes, n_levels).

    ``exact_l2``: per size, whether L_2 integrates the exact L_1 (default: ``opts.exact_l2``).
    """
    if exact_l2 is None:
        exact_l2 = np.full(sizes.shape, opts.exact_l2)
    out = np.empty((sizes.size, n_levels))
    w0 = np.full(sizes.shape, params.w0)
    wss = np.full(sizes.shape, params.w_ss)
    out[:, 0] = l0(params, sizes, w0, wss, time_model=opts.time_model)
    if n_levels == 1:
        return out
    tables = _tables_for(params, opts, r_min=float(sizes.min()), r_max=float(sizes.max()))
    for j, values in tables.levels(n_levels - 1, sizes, w0, wss, exact_l2):
        out[:, j] = values
    return out


# ---------------------------------------------------------------------------
# Paper-faithful nested quadrature (slow; the reference for the tables)


def conditional_latency_direct(
    params: TcpParams,
    size_bytes: float,
    k: int,
    *,
    w0: float | None = None,
    w_ss: float | None = None,
    time_model: str = "fluid",
    epsrel: float = 1e-10,
) -> float:
    """L_k by nested adaptive quadrature of the recursion (exponential cost in k).

    The naive evaluation of the paper's recursion: each level integrates the next
    with ``scipy.integrate.quad`` over the three regions. Use it for k <= 2 (k = 3
    takes minutes); :func:`conditional_latency` is the fast path.

    Parameters
    ----------
    params : TcpParams
        Model parameters.
    size_bytes : float
        File size, bytes (> 0).
    k : int
        Number of losses (>= 0).
    w0, w_ss : float, optional
        Window state, packets (default from ``params``).
    time_model : {"fluid", "rounds"}
        Time model of L_0 and W_f.
    epsrel : float
        Relative tolerance of each quadrature.

    Returns
    -------
    float
        Seconds.
    """
    size = check_real("size_bytes", size_bytes, low=0.0, low_open=True)
    k = check_int("k", k, low=0)
    check_choice("time_model", time_model, TIME_MODELS)
    w0 = params.w0 if w0 is None else check_real("w0", w0, low=0.0, low_open=True)
    w_ss = params.w_ss if w_ss is None else check_real("w_ss", w_ss, low=0.0, low_open=True)
    return _direct(params, k, size, w0, w_ss, time_model, epsrel)


def _direct(params, k, r, w0, wss, tm, epsrel):
    if k == 0:
        return float(l0(params, r, w0, wss, time_model=tm))
    a, tail = (float(v) for v in _region_bounds(params, np.asarray(r), np.asarray(w0), np.asarray(wss), tm))
    total = 0.0
    for region, (lo, hi) in enumerate(((0.0, a), (a, tail), (tail, r)), start=1):
        if hi <= lo:
            continue

        def integrand(y, region=region):
            l0y, wf = (float(v) for v in l0_and_w_f(params, y, w0, wss, time_model=tm))
            cost, family, r_next, p_next = _after_loss(params, region, np.asarray(r), np.asarray(y), np.asarray(wf))
            nw0, nwss = _family_windows(family, np.asarray(p_next))
            nxt = _direct(params, k - 1, float(r_next), float(nw0), float(nwss), tm, max(epsrel, 1e-8))
            dens = k / r * (1.0 - y / r) ** (k - 1)
            return (l0y + cost + nxt) * dens

        val, _ = integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=epsrel, limit=200)
        total += val
    return total
