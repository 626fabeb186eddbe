"""One level of the tabulated recursion: the weighted sums of L_j over each state's nodes.

For every state s with nodes n in ``starts[s] .. starts[s+1]`` (nodes sorted by state)::

    dens[n]  <- dens[n] * ratio[n]                      (if ``update``; (1 - y/r)^(j-1))
    next[n]   = sum_c w[c] * prev[col[c]]               (interpolated L_{j-1}; or ``direct[n]``)
    total[s]  = sum_n dens[n]
    num[s]    = sum_n (base[n] + next[n]) * dens[n]

:func:`level_sums` is the pure numpy version (sparse matrix products: no large
temporaries); :func:`compiled_level_sums` returns a numba-compiled loop doing the same
floating-point operations in the same order, hence the same bits, in one pass over the
nodes, reading each node's corners as a fixed-width row and its density from a contiguous
array (numpy 6.4 ms, this loop 4.7 ms per level for the 780,000 nodes of the 1..1000-packet
table, 2026-11-24). Which one runs never changes a result.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..accel import compile_twin, numba_available

__all__ = ["LevelData", "level_sums", "compiled_level_sums", "compact"]


class LevelData:
    """Node arrays of one node set, sorted by state, with what each engine reads.

    ``compiled``: laid out for the numba loop (contiguous densities, corners and weights
    read as (n, c) arrays); otherwise for the numpy path (the summing operator and a
    two-column array of densities and weighted values). Both keep the interpolation
    operator ``interp`` (a CSR matrix whose data and indices are the corner weights and
    indices, in node order).
    """

    def __init__(self, n_states: int, state, dens, idx, wts, n_table: int, compiled: bool = False):
        n = state.size
        self.n_states = n_states
        self.starts = np.searchsorted(state, np.arange(n_states + 1)).astype(np.int64)
        # int32 indices (when they fit) spare scipy a scan of every index array for its range.
        itype = np.int32 if _fits_int32(max(n, n_table) * max(idx.shape[1], 1)) else np.int64
        # Interpolation into the stacked tables: a fixed number of corners per node.
        c = self.n_corners = idx.shape[1]
        self.interp = sparse.csr_matrix(
            (wts.ravel(), idx.ravel().astype(itype, copy=False), c * np.arange(n + 1, dtype=itype)),
            shape=(n, max(n_table, 1)),
        )
        self.compiled = compiled
        if compiled:
            self.dens = np.array(dens, dtype=float)  # contiguous: the loop streams it
            return
        # Sum over the nodes of each state, in node order.
        self.summing = sparse.csr_matrix(
            (np.ones(n), np.arange(n, dtype=itype), self.starts.astype(itype)), shape=(n_states, n)
        )
        self.cols = np.empty((n, 2))  # column 0: dens, column 1: (base + next) * dens
        self.cols[:, 0] = dens
        self.dens = self.cols[:, 0]


def _fits_int32(n: int) -> bool:
    """Whether indices up to ``n`` fit a 32-bit integer."""
    return n < np.iinfo(np.int32).max


def level_sums(data: LevelData, ratio, base, prev, direct, update: bool):
    """(total, num) per state, numpy path (see the module docstring)."""
    dens, weighted = data.cols[:, 0], data.cols[:, 1]
    if update:
        np.multiply(dens, ratio, out=dens)
    nxt = direct if direct is not None else data.interp @ prev
    np.add(base, nxt, out=weighted)
    np.multiply(weighted, dens, out=weighted)
    total, num = (data.summing @ data.cols).T
    return total, num


def _loop(starts, dens, ratio, base, direct, use_direct, idx, wts, prev, update, total, num):
    # idx, wts: (n, c) corners and weights of each node, in the CSR order of ``interp``.
    n_corners = idx.shape[1]
    for s in range(starts.size - 1):
        tot = 0.0
        acc = 0.0
        for n in range(starts[s], starts[s + 1]):
            d = dens[n]
            if update:
                d = d * ratio[n]
                dens[n] = d
            if use_direct:
                x = direct[n]
            else:
                x = 0.0
                for c in range(n_corners):
                    x += wts[n, c] * prev[idx[n, c]]
            tot += d
            acc += (base[n] + x) * d
        total[s] = tot
        num[s] = acc


def _compact_rows(keep, a):
    """Move the rows of ``a`` (1-D or 2-D) where ``keep`` is true to its front, in order;
    return how many."""
    j = 0
    for i in range(keep.size):
        if keep[i]:
            if j != i:
                a[j] = a[i]
            j += 1
    return j


_compact_compiled = None


def compact(keep, arrays) -> list:
    """``[a[keep] for a in arrays]``, the same values: compacted in place by a numba loop
    where numba is available and the arrays are writeable and contiguous (views of their
    fronts are returned), else copied by numpy. In place, a prune of the fluid tables'
    nodes (:meth:`._tables._NodeSet._prune`) allocates nothing: copying 474,000 nodes of
    16 corners into fresh memory took 0.2-0.26 s the first two times in a process (the
    pages' first touch), 0.03 s later (2026-11-27)."""
    global _compact_compiled
    if _compact_compiled is None:
        _compact_compiled = compile_twin(globals(), (), _compact_rows) or False
    out = []
    for a in arrays:
        if _compact_compiled and a.flags.writeable and a.flags.c_contiguous and a.ndim in (1, 2):
            out.append(a[:_compact_compiled(keep, a)])
        else:
            out.append(a[keep])
    return out


_compiled = None
_checked = False


def compiled_level_sums():
    """A function like :func:`level_sums` running a numba-compiled loop, or ``None``."""
    global _compiled, _checked
    if _checked:
        return _compiled
    _checked = True
    if not numba_available():
        return None
    import numba

    loop = numba.njit(cache=True, nogil=True)(_loop)
    empty_i, empty_f, empty_f1 = np.zeros((1, 0), np.int32), np.zeros((1, 0)), np.zeros(1)

    def run(data: LevelData, ratio, base, prev, direct, update: bool):
        total, num = np.empty(data.n_states), np.empty(data.n_states)
        if direct is not None:
            loop(data.starts, data.dens, ratio, base, direct, True, empty_i, empty_f, empty_f1,
                 update, total, num)
        else:
            m, shape = data.interp, (data.interp.shape[0], data.n_corners)
            loop(data.starts, data.dens, ratio, base, empty_f1, False, m.indices.reshape(shape),
                 m.data.reshape(shape), prev, update, total, num)
        return total, num

    _compiled = run
    return _compiled
