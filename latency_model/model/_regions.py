"""Regions of the first loss and the state after it, shared by the tabulated solver
(:mod:`latency_model.model._tables`) and the nested-quadrature recursion
(:mod:`latency_model.model.recursion`, whose docstring states the three regions).

A first loss after y bytes of a file of r bytes falls in region 1 (timeout), 2 (fast
retransmit) or 3 (timeout in the tail); after it the transfer continues in one of two
window families: ``"T"`` (after a timeout, W0 = 1) or ``"F"`` (after fast recovery,
W0 = W_SS).
"""

from __future__ import annotations

import numpy as np

from ..params import TcpParams
from .fluid import w_f_unchecked, y_f_unchecked

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

