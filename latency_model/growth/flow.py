"""Flow-level closed forms of the window-growth rules, and the per-ACK iteration helper.

Pure functions (numpy/math only, no simulator): the per-RTT laws the papers state,
the counts they quote, and :func:`per_ack_windows`, which drives a rule's own
``on_ack`` for one loss-free flow so its packet-level law can be compared with its
flow-level law RTT by RTT. Windows are in packets unless a name says otherwise.

Sources: Burst TCP, Section 3 (generalized slow start, B-TCP); RFC 3742 (Limited
Slow-Start); Petrov & Janevski, Section 2.2 (Advanced Slow Start, Algorithms 2-4);
SmoothTCP, Section IV.C (Eq. 7-11).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "generalized_windows",
    "packets_before_first_loss",
    "generalized_packets_before_loss",
    "btcp_increment",
    "btcp_windows",
    "lss_increment_per_ack",
    "lss_rtts_to_reach",
    "ASS_BANDS",
    "ASS_DECREASE",
    "ass_increment_per_ack",
    "banded_round",
    "smooth_integral",
    "smooth_w",
    "smooth_w_limit",
    "smooth_a_of_w",
    "smooth_restart_a_a",
    "flow_windows",
    "rule_packets_before_loss",
    "per_ack_windows",
]

# ---------------------------------------------------------------------------
# Generalized slow start (Burst TCP, Section 3)


def generalized_windows(beta: float, n_rtts: int, w0: float = 1.0) -> list[float]:
    """Flow-level generalized slow start ``cwnd = w0 beta^(t/RTT)`` at the start of RTTs 0..n_rtts-1, packets."""
    return [w0 * beta**k for k in range(n_rtts)]


def packets_before_first_loss(windows, pipe_packets: float) -> float:
    """Packets sent before the first loss when a path holds ``pipe_packets`` packets.

    Burst TCP, Section 3 counting convention (the one that gives its 95 and 53):
    every whole window of at most ``pipe_packets`` packets gets through; of the first
    window larger than the pipe, the first ``pipe_packets`` packets get through and the
    next one is the first loss. So ``sum(w for w <= pipe) + pipe``.
    Slow start (beta = 2) from 1 with a 32-packet pipe: 1+2+4+8+16+32 = 63, then 32 of
    the 64-packet window: 95. Base 4: 1+4+16 = 21, then 32 of 64: 53.

    Parameters
    ----------
    windows : iterable of float
        Windows of successive RTTs, packets (whole packets; non-decreasing).
    pipe_packets : float
        Packets the path holds without loss (bandwidth-delay product plus buffer).

    Returns
    -------
    float
        Packets; ``inf`` if no window exceeds the pipe.
    """
    sent = 0.0
    for w in windows:
        if w > pipe_packets:
            return sent + pipe_packets
        sent += w
    return math.inf


def generalized_packets_before_loss(beta: float, pipe_packets: float, w0: float = 1.0) -> float:
    """:func:`packets_before_first_loss` for generalized slow start with base ``beta`` from ``w0``.

    Windows are ``w0 beta^k`` rounded down to whole packets (exact for integer beta and w0).
    """
    if beta <= 1:
        raise ValueError(f"beta must be > 1, got {beta!r}")
    windows, w = [], float(w0)
    while True:
        windows.append(math.floor(w + 1e-9))
        if windows[-1] > pipe_packets:
            break
        w *= beta
    return packets_before_first_loss(windows, pipe_packets)


# ---------------------------------------------------------------------------
# B-TCP (Burst TCP, Section 3 and Figure 4)


def btcp_increment(cwnd, f: int, mice_t: float):
    """B-TCP increment ``floor((mice_t - cwnd)/f)``, at least 1 (Figure 4), packets."""
    return np.maximum(np.floor((mice_t - np.asarray(cwnd, dtype=float)) / f), 1.0)


def btcp_windows(n_rtts: int, f: int = 4, mice_t: float = 32.0, w0: float = 1.0, b: int = 1) -> list[float]:
    """Flow-level B-TCP: ``cwnd += floor((mice_t - cwnd)/f)`` (at least 1) per RTT, packets.

    With ``b`` packets per ACK the per-RTT increment is divided by ``b`` (the per-ACK
    law adds ``increment/cwnd`` per ACK and an RTT brings ``cwnd/b`` ACKs). B-TCP(4),
    mice_t = 32, from 1: 1, 8, 14, 18, 21, 23, 25, 26, 27, 28, 29, 30, 31, 32, 33, ...
    """
    out, w = [], float(w0)
    for _ in range(n_rtts):
        out.append(w)
        w = w + float(btcp_increment(w, f, mice_t)) / b
    return out


# ---------------------------------------------------------------------------
# Limited Slow-Start (RFC 3742)


def lss_increment_per_ack(cwnd, max_ssthresh: float):
    """RFC 3742 increment per ACK, packets (MSS units), ignoring the int() on bytes.

    1 while ``cwnd <= max_ssthresh``; above, ``1/K`` with ``K = int(cwnd/(0.5 max_ssthresh))``.
    """
    cwnd = np.asarray(cwnd, dtype=float)
    k = np.floor(cwnd / (0.5 * max_ssthresh))
    return np.where(cwnd <= max_ssthresh, 1.0, 1.0 / np.maximum(k, 1.0))


def lss_rtts_to_reach(cwnd: float, max_ssthresh: float) -> float:
    """RTTs Limited Slow-Start (RFC 3742, with its erratum) needs to reach ``cwnd`` from 1 packet (b = 1).

    ``log2(max_ssthresh)`` RTTs of doubling up to ``max_ssthresh``, then
    ``(cwnd - max_ssthresh)/(max_ssthresh/2)`` RTTs, since above ``max_ssthresh`` the
    window grows by ``max_ssthresh/2`` per RTT: the per-RTT increase as corrected by the
    RFC 3742 erratum (also cited by Linux's ``tcp_max_ssthresh`` documentation); the
    RFC's own worked example assumed ``max_ssthresh`` per RTT and so about half as many
    RTTs (see ``validation/DEVIATIONS.md``). The per-round law reaches ``cwnd`` in
    ``ceil`` of this within one RTT. For ``cwnd <= max_ssthresh`` it is ``log2(cwnd)``.
    """
    if cwnd <= max_ssthresh:
        return math.log2(cwnd)
    return math.log2(max_ssthresh) + (cwnd - max_ssthresh) / (max_ssthresh / 2.0)


# ---------------------------------------------------------------------------
# Advanced Slow Start (Petrov & Janevski, Section 2.2 and Conclusion)

ASS_BANDS = {
    2: ((25.0, 3.0), (50.0, 2.0), (75.0, 1.0), (100.0, 0.5)),
    3: ((25.0, 2.0), (100.0, 1.0)),
    4: ((50.0, 2.0), (100.0, 1.0)),
}
"""Per-ACK increments by band: algorithm -> ((upper edge, increment), ...), packets.
A band is ``[previous edge, edge)``; from 100 packets on, LSS with max_ssthresh = 100."""

ASS_DECREASE = {
    2: ((25.0, 4.0), (50.0, 3.0), (75.0, 2.0), (100.0, 2.0)),
    3: ((25.0, 3.0), (100.0, 2.0)),
    4: ((50.0, 3.0), (100.0, 2.0)),
}
"""Decrease factors by band (Conclusion): 4 below 25, 3 in [25, 50), 2 above for
Algorithm 2; 3 in the +2 band and 2 above for Algorithms 3 and 4; 2 in the LSS region."""

ASS_LSS_FROM = 100.0


def ass_increment_per_ack(cwnd, algorithm: int):
    """ASS increment per ACK for a window of ``cwnd`` packets (LSS from 100), packets."""
    cwnd = np.asarray(cwnd, dtype=float)
    inc = lss_increment_per_ack(cwnd, ASS_LSS_FROM)
    for edge, step in reversed(ASS_BANDS[algorithm]):
        inc = np.where(cwnd < edge, step, inc)
    return inc


def _lss_k(w, max_ssthresh):
    """RFC 3742's K = int(w/(0.5 max_ssthresh)) (>= 2), robust at band edges.

    A window that landed exactly on the edge ``(K+1) max_ssthresh/2`` belongs to band
    ``K+1`` even when the division rounds just below ``K+1``.
    """
    half = 0.5 * max_ssthresh
    k = np.maximum(np.floor(w / half), 2.0)
    return np.where(half * (k + 1.0) <= w, k + 1.0, k)


def _ass_band(w, algorithm):
    """(increment, upper edge) of the band holding ``w``; bands are [lo, hi)."""
    inc = np.empty_like(w)
    edge = np.empty_like(w)
    # LSS region: K = int(2 w / 100) constant on [50 K, 50 (K + 1)).
    k = _lss_k(w, ASS_LSS_FROM)
    inc[:] = 1.0 / k
    edge[:] = 0.5 * ASS_LSS_FROM * (k + 1.0)
    for e, step in reversed(ASS_BANDS[algorithm]):
        below = w < e
        inc[below] = step
        edge[below] = e
    return inc, edge


def _lss_band(w, max_ssthresh):
    inc = np.ones_like(w)
    edge = np.full_like(w, float(max_ssthresh))
    above = w >= max_ssthresh
    k = _lss_k(w[above], max_ssthresh)
    inc[above] = 1.0 / k
    edge[above] = 0.5 * max_ssthresh * (k + 1.0)
    return inc, edge


def banded_round(w, acks, band) -> np.ndarray:
    """Window after ``acks`` ACKs of a per-ACK increment that is constant on bands, packets.

    The flow-level law of ASS and LSS: ACKs are counted as a continuous quantity
    (``w/b`` per RTT), and inside a band of per-ACK increment ``c`` the window reaches
    the band's upper edge after ``(edge - w)/c`` ACKs exactly; the rest of the ACKs
    continue in the next band.

    Parameters
    ----------
    w, acks : array_like
        Window at the start (packets) and number of ACKs (>= 0).
    band : callable
        ``band(w) -> (increment, upper_edge)`` arrays, bands ``[lo, edge)``.
    """
    w = np.array(w, dtype=float, copy=True)
    left = np.broadcast_to(np.asarray(acks, dtype=float), w.shape).copy()
    for _ in range(100_000):
        act = left > 0
        if not act.any():
            return w
        inc, edge = band(w[act])
        need = (edge - w[act]) / inc
        if np.any(need <= 0):  # pragma: no cover - a band must lie above its window
            raise RuntimeError("band edge at or below the window")
        use = np.minimum(need, left[act])
        w_new = w[act] + use * inc
        # Land exactly on the edge when the band is used up (no floating drift below it).
        w[act] = np.where(use >= need, edge, w_new)
        left[act] = left[act] - use
    raise RuntimeError("banded_round did not converge")  # pragma: no cover


# ---------------------------------------------------------------------------
# SmoothTCP slow start (Section IV.C, Eq. 7-11), M_a = 0


def smooth_integral(a, a_a: float, b_a: float):
    """``I(a) = int_0^a (A_a - A_a tanh(B_a s)) ds = A_a a - (A_a/B_a) ln cosh(B_a a)``.

    Evaluated as ``(A_a/B_a) (ln 2 - ln(1 + exp(-2 B_a a)))`` (no overflow of cosh).
    """
    a = np.asarray(a, dtype=float)
    return (a_a / b_a) * (math.log(2.0) - np.log1p(np.exp(-2.0 * b_a * a)))


def smooth_w(a, a_a: float = 40.0, b_a: float = 0.003038, t: float = 1.0):
    """SmoothTCP Eq. 8: window after ``a`` ACKs of slow start from 1 packet, packets.

    ``w(a) = sqrt(2 I(a) + T) - sqrt(T) + 1`` with ``I`` of :func:`smooth_integral`
    (the printed Eq. 8 puts ``- sqrt(2T) + 1`` inside the root and writes ``2T`` for
    Eq. 9-10's ``T``; see validation/DEVIATIONS.md). It solves
    ``dw/da = D(a)/(w + sqrt(T) - 1)`` with ``w(0) = 1``, ``D`` of Eq. 7; for ``T = 1``
    that is the fairness rule ``dw = D/w`` (Section III.B).
    """
    return np.sqrt(2.0 * smooth_integral(a, a_a, b_a) + t) - math.sqrt(t) + 1.0


def smooth_w_limit(a_a: float = 40.0, b_a: float = 0.003038, t: float = 1.0) -> float:
    """SmoothTCP Eq. 9: ``w_c = sqrt(2 (A_a/B_a) ln 2 + T) - sqrt(T) + 1``, packets.

    Defaults (A_a = 40, B_a = 0.003038, T = 1): about 135.11 packets.
    """
    return math.sqrt(2.0 * a_a / b_a * math.log(2.0) + t) - math.sqrt(t) + 1.0


def smooth_a_of_w(w, a_a: float = 40.0, b_a: float = 0.003038, t: float = 1.0):
    """SmoothTCP Eq. 11: ACK count at which Eq. 8 reaches ``w`` (inverse of Eq. 8).

    ``a = ln(exp(-(B_a/(2 A_a)) [(w + sqrt(T) - 1)^2 - T] + ln 2) - 1) / (-2 B_a)``.
    0 for ``w <= 1``; ``inf`` for ``w >= w_c``.
    """
    w = np.asarray(w, dtype=float)
    u = (np.maximum(w, 1.0) + math.sqrt(t) - 1.0) ** 2 - t
    inner = np.exp(-(b_a / (2.0 * a_a)) * u + math.log(2.0)) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(inner) / (-2.0 * b_a)
    return np.where(inner <= 0.0, np.inf, np.maximum(a, 0.0))


def smooth_restart_a_a(a_a: float, b_a: float, t: float, d: float) -> float:
    """SmoothTCP Eq. 10: new ``A'_a`` after a congestion signal, ``d = w_c - w``.

    ``A'_a = (A_a ln 2 - B_a d sqrt(2 (A_a/B_a) ln 2 + T) + B_a d^2/2) / ln 2``; by
    construction the new limit of Eq. 9 is ``w_c - d``, the window at the signal.
    """
    s = math.sqrt(2.0 * a_a / b_a * math.log(2.0) + t)
    return (a_a * math.log(2.0) - b_a * d * s + b_a * d * d / 2.0) / math.log(2.0)


# ---------------------------------------------------------------------------
# Comparing a rule's per-ACK law with its flow-level law


def flow_windows(
    rule, w0: float, n_rtts: int, *, w_ss: float = math.inf, b: int = 1, rwnd: float = math.inf
) -> list[float]:
    """Iterate ``rule.next_round_window`` from ``w0``: windows at the start of RTTs 0..n_rtts-1, packets.

    Capped at the receiver window ``rwnd`` (packets) as in the fluid model's per-round law.
    """
    out, w = [], np.array([min(float(w0), rwnd)])
    ss = np.array([float(w_ss)])
    for _ in range(n_rtts):
        out.append(float(w[0]))
        w = np.minimum(np.asarray(rule.next_round_window(w, ss, b), dtype=float), rwnd)
    return out


def rule_packets_before_loss(
    rule, pipe_packets: float, w0: float = 1.0, *, w_ss: float = math.inf, b: int = 1,
    rwnd: float = math.inf, max_rounds: int = 100_000,
) -> float:
    """:func:`packets_before_first_loss` for any rule's per-round law from ``w0``.

    Windows are the rule's flow-level windows (:func:`flow_windows`) rounded down to
    whole packets (exact for the integer laws: generalized slow start with integer
    beta from an integer W0, B-TCP). Burst TCP, Section 3: 95 for ``beta = 2`` and 53
    for ``beta = 4`` with a 32-packet pipe from one packet.

    Returns
    -------
    float
        Packets; ``inf`` if the window stops growing at or below the pipe (e.g. ``rwnd``).
    """
    windows, w = [], np.array([min(float(w0), rwnd)])
    ss = np.array([float(w_ss)])
    for _ in range(max_rounds):
        windows.append(math.floor(float(w[0]) + 1e-9))
        if windows[-1] > pipe_packets:
            return packets_before_first_loss(windows, pipe_packets)
        nxt = np.minimum(np.asarray(rule.next_round_window(w, ss, b), dtype=float), rwnd)
        if nxt[0] <= w[0]:
            return math.inf
        w = nxt
    return math.inf


def per_ack_windows(
    rule,
    w0: float,
    n_rtts: int,
    *,
    w_ss: float = math.inf,
    b: int = 1,
    mss_bytes: int = 1000,
) -> list[float]:
    """A rule's own per-ACK law for one loss-free flow: cwnd at the start of each RTT, packets.

    Not the simulator: no clock, no link. Round ``n`` starts with ``cwnd_n``; the sender
    sends ``floor(cwnd_n)`` whole packets (at least 1); every packet of the round is
    acknowledged, ``b`` packets per ACK and one last ACK for the remainder (as the
    delayed-ACK timer would), each ACK calling ``rule.on_ack(state, k * mss_bytes)``.
    Packets that the window gains during the round are sent in the next one (ACKs of a
    round all return before the next window is measured).

    Parameters
    ----------
    rule : GrowthRule
        The rule (its ``new_state`` creates the per-flow state).
    w0 : float
        Initial window, packets.
    n_rtts : int
        Number of RTT boundaries reported (RTT 0 is ``w0``).
    w_ss : float
        Slow-start threshold, packets (default: none).
    b : int
        Packets per ACK.
    mss_bytes : int
        Segment size, bytes.
    """
    st = rule.new_state(w0 * mss_bytes, w_ss * mss_bytes if math.isfinite(w_ss) else math.inf, mss_bytes)
    out = []
    for _ in range(n_rtts):
        w = st.cwnd / mss_bytes
        out.append(w)
        n = max(1, math.floor(w + 1e-9))
        full, rest = divmod(n, b)
        for _ in range(full):
            rule.on_ack(st, b * mss_bytes)
        if rest:
            rule.on_ack(st, rest * mss_bytes)
    return out
