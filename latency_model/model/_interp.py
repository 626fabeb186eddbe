"""Reading the solver's tables between grid points: cells, stencils and weights.

Used by :mod:`latency_model.model._tables` (the twin numba kernels are in
:mod:`latency_model.model._nodes`). A cubic stencil never straddles a grid point flagged
as a kink of L_j and never reads a row above the state's own.
"""

from __future__ import annotations

import numpy as np

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

