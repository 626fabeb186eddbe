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
``(W0, W_SS) = (c, c)``. ``_Tables`` (:mod:`latency_model.model._tables`) tabulates
L_j over (remaining bytes x window parameter) for both families, level by level.
Quadrature nodes are fixed (geometric Gauss-Legendre panels per region), so the
interpolation into level j-1 is precomputed once and each level is one gather and one
weighted sum; only the weight ``(1 - y/y_bar)^(j-1)`` changes with j. L_1 uses the
exact L_0, not a table.
:func:`conditional_latency_direct` is the paper-faithful nested-quadrature recursion,
used to check the tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate

from ..checks import (check_choice, check_flag, check_instance, check_int, check_real, check_sizes, check_work,
                      checked_call, model_cost)
from ..params import TcpParams
from ..values import show
from ._regions import _after_loss, _family_windows, _region_bounds
from ._tables import _tables_for, clear_table_cache
from .fluid import TIME_MODELS, l0, l0_and_w_f
from .losses import LOSS_LAWS, loss_count_pmf

__all__ = [
    "SolverOptions",
    "LatencyResult",
    "conditional_latency",
    "expected_latency",
    "conditional_latency_direct",
    "clear_table_cache",
    "check_supported",
    "default_time_model",
    "predict",
    "warm",
]


INTERPOLATIONS = ("cubic", "linear")


@checked_call
@dataclass(frozen=True)
class SolverOptions:
    """Numerical settings of the tabulated recursion.

    Parameters
    ----------
    time_model : {"fluid", "rounds"}
        Time model of L_0 and W_f (see :mod:`latency_model.model.fluid`).
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
        File sizes, bytes, in the shape they were given (one dimension for a scalar or a
        list; an array of two or more dimensions keeps its shape, and every array below
        has that shape in front of its own).
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
        return self.conditional_latency_s.shape[-1]

    def to_dict(self) -> dict:
        """JSON-ready dict of the arrays (as lists, shapes kept) and ``k_max``."""
        from ..results import to_dict

        return {**to_dict(self), "k_max": self.k_max}

    def records(self, by: str = "size") -> list[dict]:
        """Rows of :meth:`to_frame`: one per size (``by="size"``: expected latency, truncated
        and raw mass), or one per size and loss count k (``by="k"``: L_k and p(k | y))."""
        sizes = np.ravel(self.sizes_bytes)  # sizes given as a 2-D array: one row each, in C order
        if by == "size":
            return [{"size_bytes": float(y), "expected_latency_s": float(e), "truncated_mass": float(t),
                     "raw_mass": float(r), "k_max": self.k_max}
                    for y, e, t, r in zip(sizes, np.ravel(self.expected_latency_s), np.ravel(self.truncated_mass),
                                          np.ravel(self.raw_mass))]
        if by == "k":
            cond, pmf = (a.reshape(-1, self.k_max) for a in (self.conditional_latency_s, self.loss_pmf))
            return [{"size_bytes": float(y), "k": k, "conditional_latency_s": float(cond[i, k]),
                     "loss_probability": float(pmf[i, k])}
                    for i, y in enumerate(sizes) for k in range(self.k_max)]
        raise ValueError(f"by must be 'size' or 'k', got {by!r}")

    def to_frame(self, by: str = "size"):
        """A pandas DataFrame of :meth:`records` (pandas is optional: ``latency_model[pandas]``)."""
        from ..results import to_frame

        return to_frame(self.records(by))



# ---------------------------------------------------------------------------
# Public API


# expected_latency integrates the exact L_1 for L_2 only at sizes with p(2 | y) at least this.
_EXACT_L2_MIN_WEIGHT = 1e-7


MAX_K = 10_000
"""Largest loss count :func:`conditional_latency` solves for: each count is one level of
the recursion's tables, and no file this model is meant for has a non-negligible chance
of more losses (a million packets at p = 0.5 has about 1e6 on average, but the tables
would take hours)."""


def _options(options) -> "SolverOptions":
    if options is None:
        return SolverOptions()
    return check_instance("options", options, SolverOptions)


def _sizes(func, positional, size_bytes, size_packets, params) -> np.ndarray:
    """Sizes in bytes, after checking that the recursion reads every setting of ``params``
    (:func:`check_supported`: no Early Retransmit, no rule parameter it never reads)."""
    check_supported(params)
    return check_sizes(func, positional, size_bytes, size_packets, params.mss_bytes)


@checked_call
def conditional_latency(
    params: TcpParams,
    *positional,
    k,
    size_bytes=None,
    size_packets=None,
    options: SolverOptions | None = None,
) -> np.ndarray:
    """Expected latency given exactly k losses, L_k, seconds.

    Sizes are keyword-only, with their unit (a positional size is a ValueError).

    Parameters
    ----------
    params : TcpParams
        Path, TCP and recovery settings (``dup_lt``, ``tail_retransmit``) and rule.
    k : int or sequence of int
        Number(s) of losses, 0 to :data:`MAX_K` (10,000).
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.
    options : SolverOptions, optional
        Time model and quadrature/table resolution.

    Returns
    -------
    ndarray
        Shape ``(n_sizes,)`` for an int ``k``, ``(n_sizes, len(k))`` for a sequence; a size
        array of two or more dimensions keeps its shape in front (``sizes.shape`` or
        ``sizes.shape + (len(k),)``).
    """
    opts = _options(options)
    sizes = _sizes("conditional_latency", positional, size_bytes, size_packets, params)
    scalar = np.ndim(k) == 0
    if not scalar and np.size(k) == 0:
        raise ValueError("k must be an integer or a non-empty sequence of integers in "
                         f"[0, {MAX_K}], got {k!r}")
    ks = [check_int("k", kk, low=0, high=MAX_K) for kk in ((k,) if scalar else np.ravel(k).tolist())]
    k_top = max(ks)
    out = np.empty((sizes.size, len(ks)))
    by_k = _solve(params, sizes, k_top + 1, opts)
    for col, kk in enumerate(ks):
        out[:, col] = by_k[:, kk]
    out = _keep_shape(out, size_bytes, size_packets)
    return out[..., 0] if scalar else out


def _keep_shape(a: np.ndarray, size_bytes, size_packets) -> np.ndarray:
    """``a`` (one row per size, sizes flattened) with the sizes' own shape in front when they
    were given as an array of two or more dimensions; 0-D and 1-D sizes keep one row each."""
    shape = np.shape(size_bytes if size_bytes is not None else size_packets)
    return a.reshape(shape + a.shape[1:]) if len(shape) >= 2 else a


@checked_call
def expected_latency(
    params: TcpParams,
    *positional,
    size_bytes=None,
    size_packets=None,
    law: str = "paper",
    normalize: bool = True,
    tail: float = 1e-9,
    options: SolverOptions | None = None,
) -> LatencyResult:
    """Expected latency ``L(y) = sum_k p(k | y) L_k(y)`` (Eq. 1), seconds.

    The sum stops once the probability of further losses is below ``tail`` for every
    size; K and that mass are reported. Sizes are keyword-only, with their unit (a
    positional size is a ValueError).

    Parameters
    ----------
    params : TcpParams
        Path, TCP and recovery settings and rule; ``params.p`` sets the loss law.
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.
    law : {"paper", "exact"}
        Loss-count law (:func:`latency_model.model.losses.loss_count_pmf`).
    normalize : bool
        Normalise the paper's law to total mass 1 (default); a bool.
    tail : float
        Truncation: probability mass of more losses left out (default 1e-9).
    options : SolverOptions, optional
        Time model and resolution.

    Returns
    -------
    LatencyResult
    """
    opts = _options(options)
    sizes = _sizes("expected_latency", positional, size_bytes, size_packets, params)
    check_choice("law", law, LOSS_LAWS)
    check_flag("normalize", normalize)
    check_work(f"the fluid model of {sizes.size:,} size(s) up to {sizes.max() / params.mss_bytes:.3g} packets at "
               f"p = {params.p:g}", *model_cost(params.p, params.mss_bytes, float(sizes.max()), sizes.size))
    counts = loss_count_pmf(sizes, params.p, params.mss_bytes, law=law, normalize=normalize, tail=tail)
    # The exact L_2 (its cost grows with the number of sizes) only where its weight
    # p(2 | y) can show: elsewhere the table's L_2 (within 1.3e-4 of it) moves L by less
    # than 1e-7 * 1.3e-4 of L_2. Decided per size, so sizes stay independent of each other.
    exact_l2 = None
    if opts.exact_l2 and counts.k_max > 2:
        exact_l2 = counts.pmf[:, 2] >= _EXACT_L2_MIN_WEIGHT
    cond = _solve(params, sizes, counts.k_max, opts, exact_l2)
    expected = counts.expectation(cond)  # Eq. 1
    def shaped(a):
        return _keep_shape(np.asarray(a), size_bytes, size_packets)

    return LatencyResult(
        sizes_bytes=shaped(sizes),
        expected_latency_s=shaped(expected),
        conditional_latency_s=shaped(cond),
        loss_pmf=shaped(counts.pmf),
        truncated_mass=shaped(counts.truncated_mass),
        raw_mass=shaped(counts.raw_mass),
    )


def check_supported(params: TcpParams) -> None:
    """Raise ValueError unless the fluid recursion reads every setting of ``params``
    (registry entry ``fluid``).

    It covers every growth rule and the recovery variants newreno, lt and proposal (and
    size-based, which resolves to them). Rules without a continuous fluid law (B-TCP, LSS,
    ASS, smooth start) use the per-round time model (:func:`default_time_model`).

    Refused, because the recursion never reads them
    (:func:`latency_model.model.registry.check_fluid_reads`): Early Retransmit
    (``early_retransmit``, variant ``er``; the regions know ``dup_t``, ``dup_lt`` and the
    tail rule only), and a growth-rule parameter that acts only per ACK, after a loss or
    on signals, when it differs from its default
    (:data:`~latency_model.model.registry.FLUID_UNREAD_RULE_PARAMS`: the standard rule's
    ``abc_l``, the ASS rule's ``decrease``, the smooth start's ``per_ack``, SmoothTCP's
    signal coefficients). :func:`expected_latency` and :func:`conditional_latency` ask it.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {show(params)}")
    from .registry import check_fluid_reads

    check_fluid_reads(params)


def default_time_model(params: TcpParams) -> str:
    """``"fluid"`` when the rule has a continuous fluid law (standard, generalized), else
    ``"rounds"`` (the rule only has a per-round law)."""
    return "fluid" if params.rule.continuous_law(params.b) is not None else "rounds"


def predict(params: TcpParams, sizes_bytes, *, options: SolverOptions | None = None,
            law: str = "paper"):
    """The registry's ``fluid`` model: :func:`expected_latency` as a
    :class:`~latency_model.model.registry.Prediction` (seconds, sizes in bytes).

    ``options`` defaults to :func:`default_time_model`'s time model.
    """
    from .registry import Prediction

    opts = options or SolverOptions(time_model=default_time_model(params))
    res = expected_latency(params, size_bytes=sizes_bytes, law=law, options=opts)
    return Prediction(model="fluid", sizes_bytes=res.sizes_bytes, expected_latency_s=res.expected_latency_s,
                      conditional_latency_s=res.conditional_latency_s)


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


@checked_call
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
        Number of losses, 0 to :data:`MAX_K_DIRECT` (3).
    w0, w_ss : float, optional
        Window state, packets (default from ``params``); ``w0`` in (0, M].
    time_model : {"fluid", "rounds"}
        Time model of L_0 and W_f.
    epsrel : float
        Relative tolerance of each quadrature, in (0, 1).

    Returns
    -------
    float
        Seconds.
    """
    check_instance("params", params, TcpParams)
    size = check_real("size_bytes", size_bytes, low=0.0, low_open=True)
    k = check_int("k", k, low=0, high=MAX_K_DIRECT)
    check_choice("time_model", time_model, TIME_MODELS)
    w0 = params.w0 if w0 is None else check_real("w0", w0, low=0.0, high=float(params.rwnd),
                                                 low_open=True)
    w_ss = params.w_ss if w_ss is None else check_real("w_ss", w_ss, low=0.0, low_open=True)
    epsrel = check_real("epsrel", epsrel, low=0.0, high=1.0, low_open=True, high_open=True)
    return _direct(params, k, size, w0, w_ss, time_model, epsrel)


MAX_K_DIRECT = 3
"""Largest ``k`` :func:`conditional_latency_direct` accepts: its nested quadrature's cost
grows exponentially with ``k`` (k = 3 takes minutes; :func:`conditional_latency` is the
fast path for any ``k``)."""


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


def warm() -> None:
    """Load the solver's compiled kernels (numba's on-disk cache: the nodes of
    :mod:`._nodes` and the level sums of :mod:`._levels`) into this process: about 1.3 s
    of CPU once, which every process pays at its first fluid-model call otherwise
    (:func:`latency_model.model.registry.warm`). One small call (1 and 3 packets at
    p = 0.05, the default options) and the nodes' prune kernel (:func:`._levels.compact`)
    on one row of each array type. Without numba there is nothing to load, and nothing
    runs."""
    from ..accel import numba_available

    if not numba_available():
        return
    params = TcpParams(p=0.05)
    expected_latency(params, size_bytes=[params.mss_bytes, 3 * params.mss_bytes])
    from ._levels import compact  # the prune's kernel, which so small a call does not reach

    keep = np.ones(1, bool)
    compact(keep, [np.zeros(1, np.int64), np.zeros(1), np.zeros((1, 2), np.int32), np.zeros((1, 2))])
