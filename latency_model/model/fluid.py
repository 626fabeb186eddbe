"""Fluid evolution of the sending rate without loss: y_f, L_0 and W_f.

Ayesta & Avrachenkov, Section 2: the sending rate W grows by the factor
``1 + 1/b`` per RTT in slow start and by ``MSS/(b RTT)`` per RTT in congestion
avoidance, switches at W_SS and is capped at the receiver window M. Windows are
given here in packets (the paper's rate times RTT/MSS).

Two time models sit behind one switch, ``time_model``:

``"fluid"``
    The paper's continuous fluid model. With ``g = ln(1 + 1/b)`` and ``s = 1/b``
    (per RTT), ``dw/dt = g w / RTT`` in slow start, ``dw/dt = s / RTT`` in
    congestion avoidance, and bytes flow at ``w MSS / RTT``. Closed forms::

        slow start:  y(w) = MSS (w - w0) / g          t(w) = RTT ln(w / w0) / g
        cong. avoid: y(w) = MSS (w^2 - c0^2) / (2 s)  t(w) = RTT (w - c0) / s
        capped at M: y grows by M MSS per RTT

    ``y_f`` is the paper's y_f (bytes sent until the rate reaches a target),
    ``l0`` is L_0 (time to send y bytes without loss) and ``w_f`` is W_f (rate
    after y bytes).

``"rounds"``
    Whole windows per RTT: round n sends ``w_n`` packets and lasts one RTT,
    ``w_{n+1}`` given by the growth rule's per-round law (for RFC 5681:
    ``min(w (1 + 1/b), W_SS)`` below W_SS, ``w + 1/b`` above; capped at M). This is
    the staircase of the paper's ns simulations (Section 4): all sizes that need
    the same number of rounds take the same time. ``l0`` is the number of rounds
    times RTT, ``w_f`` is the window of the round that carries byte y, and
    ``y_f`` counts the bytes of the rounds whose window is below the target.
    Unlike the fluid law, these staircase quantities are not monotone in W0: from
    a slightly smaller W0 the windows can cross a target one round earlier
    (b = 2: W0 = 1 sends 8.125 packets below 4, W0 = 0.875 only 7.11).

Every function is vectorised: ``target``/``size_bytes``, ``w0`` and ``w_ss``
broadcast against each other.
"""

from __future__ import annotations

import numpy as np

from ..checks import check_array, check_choice, check_instance, checked_call
from ..params import TcpParams

__all__ = ["TIME_MODELS", "y_f", "l0", "w_f", "l0_and_w_f"]

TIME_MODELS = ("fluid", "rounds")

# Relative tolerance used when a size falls exactly on a round boundary.
_ROUND_EPS = 1e-9
# Safety bound on the number of rounds simulated before the window stops growing.
_MAX_ROUNDS = 1_000_000


@checked_call
def y_f(params: TcpParams, target, w0=None, w_ss=None, *, time_model: str = "fluid") -> np.ndarray:
    """Bytes sent until the sending rate reaches ``target`` (the paper's y_f).

    Parameters
    ----------
    params : TcpParams
        MSS, RTT, b, M (``rwnd``) and the growth rule.
    target : array_like
        Target window, packets (> 0); the paper's rate ``target * MSS / RTT``.
    w0, w_ss : array_like, optional
        Initial window and slow-start threshold, packets; default ``params.w0``,
        ``params.w_ss``.
    time_model : {"fluid", "rounds"}
        Continuous fluid law or whole windows per RTT (module docstring).

    Returns
    -------
    ndarray
        Bytes; 0 where ``w0 >= target``; ``inf`` where the window never reaches
        ``target`` (``target > M``, or the rule's window stops growing below it).
    """
    target = check_array("target", target, low=0.0, low_open=True)
    w0, w_ss = _windows(params, w0, w_ss, target)
    check_choice("time_model", time_model, TIME_MODELS)
    return y_f_unchecked(params, target, w0, w_ss, time_model)


@checked_call
def l0(params: TcpParams, size_bytes, w0=None, w_ss=None, *, time_model: str = "fluid") -> np.ndarray:
    """Time to send ``size_bytes`` without loss, seconds (the paper's L_0).

    Parameters
    ----------
    params : TcpParams
        MSS, RTT, b, M and the growth rule.
    size_bytes : array_like
        Amount of data, bytes (>= 0).
    w0, w_ss : array_like, optional
        Initial window and slow-start threshold, packets.
    time_model : {"fluid", "rounds"}
        ``"fluid"``: the continuous time at which the fluid has sent the data;
        ``"rounds"``: number of rounds needed times RTT.

    Returns
    -------
    ndarray
        Seconds.
    """
    return l0_and_w_f(params, size_bytes, w0, w_ss, time_model=time_model)[0]


@checked_call
def w_f(params: TcpParams, size_bytes, w0=None, w_ss=None, *, time_model: str = "fluid") -> np.ndarray:
    """Window after ``size_bytes`` have been sent without loss, packets (the paper's W_f).

    Parameters
    ----------
    params : TcpParams
        MSS, RTT, b, M and the growth rule.
    size_bytes : array_like
        Amount of data, bytes (>= 0).
    w0, w_ss : array_like, optional
        Initial window and slow-start threshold, packets.
    time_model : {"fluid", "rounds"}
        ``"fluid"``: the continuous rate reached; ``"rounds"``: the window of the
        round that carries the last of these bytes (``w0`` for 0 bytes).

    Returns
    -------
    ndarray
        Packets (multiply by MSS/RTT for the paper's rate in bytes/s).
    """
    return l0_and_w_f(params, size_bytes, w0, w_ss, time_model=time_model)[1]


# ---------------------------------------------------------------------------
# Helpers


def l0_and_w_f(params: TcpParams, size_bytes, w0=None, w_ss=None, *, time_model: str = "fluid"):
    """Both :func:`l0` (seconds) and :func:`w_f` (packets) from one evaluation of the trajectory.

    Same parameters as :func:`l0`; returns the tuple ``(l0, w_f)``.
    """
    size = check_array("size_bytes", size_bytes, low=0.0)
    w0, w_ss = _windows(params, w0, w_ss, size)
    check_choice("time_model", time_model, TIME_MODELS)
    return l0_and_w_f_unchecked(params, size, w0, w_ss, time_model)


# The solver evaluates these on millions of quadrature nodes built from validated
# parameters; it calls the unchecked forms (validation cost a fifth of a short solve).


def y_f_unchecked(params: TcpParams, target, w0, w_ss, time_model: str) -> np.ndarray:
    """:func:`y_f` without validation: float arrays, ``w0 > 0``, ``w_ss > 0``, ``target > 0``."""
    w0 = np.minimum(w0, params.rwnd)
    if time_model == "fluid":
        return _fluid(params, w0, w_ss).y_f(target)
    return _rounds_y_f(params, np.asarray(target, float), w0, np.asarray(w_ss, float))


def l0_unchecked(params: TcpParams, size, w0, w_ss, time_model: str) -> np.ndarray:
    """:func:`l0` without validation (same assumptions as :func:`l0_and_w_f_unchecked`)."""
    if time_model == "fluid":
        return _fluid(params, np.minimum(w0, params.rwnd), w_ss).time(size)
    return l0_and_w_f_unchecked(params, size, w0, w_ss, time_model)[0]


def w_f_unchecked(params: TcpParams, size, w0, w_ss, time_model: str) -> np.ndarray:
    """:func:`w_f` without validation (same assumptions as :func:`l0_and_w_f_unchecked`)."""
    if time_model == "fluid":
        return _fluid(params, np.minimum(w0, params.rwnd), w_ss).window(size)
    return l0_and_w_f_unchecked(params, size, w0, w_ss, time_model)[1]


def l0_and_w_f_unchecked(params: TcpParams, size, w0, w_ss, time_model: str):
    """:func:`l0_and_w_f` without validation: float arrays, ``size >= 0``, windows > 0.
    A window above the receiver window is sent at the receiver window."""
    w0 = np.minimum(w0, params.rwnd)
    if time_model == "fluid":
        fl = _fluid(params, w0, w_ss)
        return fl.time(size), fl.window(size)
    return _rounds_walk(params, np.asarray(size, float), w0, np.asarray(w_ss, float))


def _windows(params: TcpParams, w0, w_ss, first):
    """Checked ``(w0, w_ss)`` arrays; ``first`` is the checked size or target array.

    ``w0`` must be in (0, M], as :class:`TcpParams` requires of its own ``w0`` (the
    unchecked forms, which the solver calls on its own windows, send a window above M
    at M); both must broadcast against ``first``.
    """
    check_instance("params", params, TcpParams)
    w0 = params.w0 if w0 is None else w0
    w_ss = params.w_ss if w_ss is None else w_ss
    w0 = check_array("w0", w0, low=0.0, high=float(params.rwnd), low_open=True)
    w_ss = check_array("w_ss", w_ss, low=0.0, low_open=True)
    for name, arr in (("w0", w0), ("w_ss", w_ss)):
        try:
            np.broadcast_shapes(first.shape, arr.shape)
        except ValueError:
            raise ValueError(f"{name} must be a scalar or broadcast against the sizes "
                             f"(shape {first.shape}), got shape {arr.shape}") from None
    return w0, w_ss


class _fluid:
    """Breakpoints of the continuous trajectory: slow start, congestion avoidance, cap."""

    def __init__(self, params: TcpParams, w0: np.ndarray, w_ss: np.ndarray):
        law = params.rule.continuous_law(params.b)
        if law is None:
            raise ValueError(
                f"rule {params.rule.name!r} has no continuous fluid law; use time_model='rounds'"
            )
        self.g, self.s = law.ss_log_growth, law.ca_slope
        self.mss, self.rtt, self.m = float(params.mss_bytes), params.rtt_s, float(params.rwnd)
        w0, w_ss = np.broadcast_arrays(w0, w_ss)
        self.w0 = w0
        # Slow start ends (and congestion avoidance starts) at c0 = max(min(W_SS, M), w0).
        self.c0 = np.maximum(np.minimum(w_ss, self.m), w0)
        self.y1 = self.mss * (self.c0 - w0) / self.g
        self.t1 = self.rtt * np.log(self.c0 / w0) / self.g
        self.y2 = self.y1 + self.mss * (self.m**2 - self.c0**2) / (2.0 * self.s)
        self.t2 = self.t1 + self.rtt * (self.m - self.c0) / self.s

    def y_f(self, target):
        target, w0, c0 = np.broadcast_arrays(target, self.w0, self.c0)
        # minimum/maximum, not np.clip: with array or None bounds np.clip is 10-40x slower
        # (numpy 2.4, measured), and these run on millions of quadrature nodes.
        ss_part = self.mss * (np.minimum(np.maximum(target, w0), c0) - w0) / self.g
        ca_w = np.minimum(np.maximum(target, c0), self.m)
        ca_part = self.mss * (ca_w**2 - c0**2) / (2.0 * self.s)
        out = ss_part + ca_part
        return np.where(target > self.m, np.inf, np.where(target <= w0, 0.0, out))

    def _phases(self, size):
        size, w0, c0, y1, y2, t1, t2 = np.broadcast_arrays(
            size, self.w0, self.c0, self.y1, self.y2, self.t1, self.t2
        )
        in_ss = size <= y1
        in_ca = (~in_ss) & (size <= y2)
        w_ss_phase = w0 + self.g * np.minimum(size, y1) / self.mss
        w_ca_phase = np.sqrt(c0**2 + 2.0 * self.s * np.maximum(size - y1, 0.0) / self.mss)
        return size, w0, c0, y2, t1, t2, in_ss, in_ca, w_ss_phase, w_ca_phase

    def time(self, size):
        size, w0, c0, y2, t1, t2, in_ss, in_ca, w_ssp, w_cap = self._phases(size)
        t_ss = self.rtt * np.log(w_ssp / w0) / self.g
        t_ca = t1 + self.rtt * (np.minimum(w_cap, self.m) - c0) / self.s
        t_cap = t2 + self.rtt * np.maximum(size - y2, 0.0) / (self.m * self.mss)
        return np.where(in_ss, t_ss, np.where(in_ca, t_ca, t_cap))

    def window(self, size):
        size, w0, c0, y2, t1, t2, in_ss, in_ca, w_ssp, w_cap = self._phases(size)
        return np.where(in_ss, w_ssp, np.where(in_ca, np.minimum(w_cap, self.m), self.m))


def _round_sequence_step(params: TcpParams, w, w_ss):
    """Next round's window and whether the window has stopped growing."""
    nxt = np.minimum(params.rule.next_round_window(w, w_ss, params.b), params.rwnd)
    return nxt, nxt <= w


def _rounds_y_f(params: TcpParams, target, w0, w_ss):
    target, w, w_ss = (a.astype(float).copy() for a in np.broadcast_arrays(target, w0, w_ss))
    mss = float(params.mss_bytes)
    out = np.zeros(target.shape)
    active = w < target
    for _ in range(_MAX_ROUNDS):
        if not active.any():
            break
        out[active] += w[active] * mss
        nxt, stalled = _round_sequence_step(params, w[active], w_ss[active])
        idx = np.flatnonzero(active.ravel())
        w.ravel()[idx] = nxt
        never = stalled & (nxt < target.ravel()[idx])
        out.ravel()[idx[never]] = np.inf
        still = (~never) & (nxt < target.ravel()[idx])
        act = np.zeros(active.size, bool)
        act[idx[still]] = True
        active = act.reshape(active.shape)
    else:  # pragma: no cover - guarded by the stalled test above
        raise RuntimeError("per-round window did not converge")
    return out


def _rounds_walk(params: TcpParams, size, w0, w_ss):
    """Rounds needed for ``size`` bytes, times RTT, and the window of the last round."""
    size, w, w_ss = (a.astype(float).copy() for a in np.broadcast_arrays(size, w0, w_ss))
    flat_size, flat_w, flat_ss = size.ravel(), w.ravel(), w_ss.ravel()
    mss = float(params.mss_bytes)
    rounds = np.zeros(flat_size.shape)
    last_w = flat_w.copy()
    sent = np.zeros(flat_size.shape)
    idx = np.flatnonzero(flat_size > 0)
    for _ in range(_MAX_ROUNDS):
        if idx.size == 0:
            break
        cw = flat_w[idx]
        nxt, stalled = _round_sequence_step(params, cw, flat_ss[idx])
        remaining = flat_size[idx] - sent[idx]
        fits = remaining <= cw * mss * (1.0 + _ROUND_EPS)
        # A window that no longer grows: the rest goes in whole rounds of cw packets.
        closed = stalled & ~fits
        extra = np.ceil(remaining[closed] / (cw[closed] * mss) * (1.0 - _ROUND_EPS))
        done = fits | closed
        rounds[idx[fits]] += 1
        rounds[idx[closed]] += extra
        last_w[idx[done]] = cw[done]
        cont = idx[~done]
        sent[cont] += cw[~done] * mss
        rounds[cont] += 1
        flat_w[cont] = nxt[~done]
        idx = cont
    else:  # pragma: no cover
        raise RuntimeError("per-round window did not converge")
    return (rounds * params.rtt_s).reshape(size.shape), last_w.reshape(size.shape)
