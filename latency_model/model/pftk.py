"""Padhye, Firoiu, Towsley & Kurose's steady-state TCP throughput, and a transfer time from it.

J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Throughput: A Simple Model and
its Empirical Validation", ACM SIGCOMM 1998 ("PFTK"). The full model: triple-duplicate
periods (TDP) in congestion avoidance, timeout sequences with exponential back-off, and
the receiver-window limit W_max (Section 2.3). Equation numbers are the SIGCOMM paper's.
The paper's text was not available here; docs/baselines.md ("Sources") gives, for each
formula, what confirms it: Eqs. (13), (28), (31) as quoted (b = 2) by the GEANT PERT wiki
and SLAC's "Throughput versus loss" page, the derivation steps in Emory's CS 558 notes,
Q-hat's closed form by summation of PFTK's definitions, f(p) by summation of the back-off
schedule, and the p -> 0 limit of Eq. (31) against RFC 5348 Section 3.1's simplified formula
(tests/test_model_baselines.py).

Mapping of our :class:`~latency_model.params.TcpParams` (docs/baselines.md, "Choices"):

- ``b`` (packets per ACK) is PFTK's b: the window grows by 1/b packet per round. With
  RFC 3465 byte counting (``StandardRule(abc_l=L)``) the window grows by one packet per
  round whatever b is, so PFTK's b is 1 there.
- ``rtt_s`` is RTT, ``params.rto`` (``rto_s`` or max(1 s, 4 RTT)) is T_0, and
  ``rwnd`` (packets) is W_max.
- ``dup_t`` replaces PFTK's fixed 3 in Q-hat (the derivation of Q-hat in Section 2.2 holds
  for any duplicate-ACK threshold K; K = 3 gives the paper's formula).
- p = 0 is the limit p -> 0 of Eq. (31): W_max / RTT.

The transfer time :func:`transfer_time_s` is ``d / B(p)`` for a file of d segments: the
bulk-transfer reading of a steady-state model (what CSA, INFOCOM 2000, Section I, say the
steady-state models predict for short flows, and what they use for the data left after
slow start, :mod:`.csa`).

Nothing here imports the simulator.
"""

from __future__ import annotations

import math

import numpy as np

from ..checks import check_array, check_int, check_real, check_sizes
from ..params import TcpParams
from ..values import show

__all__ = [
    "backoff_factor",
    "timeout_probability",
    "expected_window",
    "growth_b",
    "throughput_packets_per_s",
    "transfer_time_s",
    "check_supported",
    "predict",
]

MODEL = "pftk"


def backoff_factor(p: float) -> float:
    """PFTK's back-off polynomial f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6.

    The expected duration of a timeout sequence is ``T_0 f(p) / (1 - p)`` (PFTK Eq. 28;
    CSA Eqs. 18-19 call it G(p)): timeouts T_0, 2 T_0, ... doubling up to 64 T_0.

    Parameters
    ----------
    p : float
        Loss probability, in [0, 1).

    Returns
    -------
    float
        f(p), dimensionless (>= 1).

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1).
    """
    p = check_real("p", p, low=0.0, high=1.0, high_open=True)
    return 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def _one_minus_q_pow(p: float, x) -> np.ndarray:
    """1 - (1 - p)^x, without cancellation for small p."""
    return -np.expm1(np.asarray(x, dtype=float) * math.log1p(-p))


def timeout_probability(p: float, w, dup_t: int = 3):
    """PFTK's Q-hat(w): probability that a loss in a window of ``w`` packets ends in a timeout.

    ``Q(w) = min(1, (1 - q^K)(1 + q^K (1 - q^(w - K))) / (1 - q^w))``, q = 1 - p, K = dup_t,
    and 1 for ``w <= K`` (PFTK Section 2.2, the closed form of Q-hat; CSA Eq. 17). PFTK
    fix K = 3; their derivation (the loss is one of the first K packets of the window, or
    fewer than K packets of the next round arrive) holds for any threshold K.

    Parameters
    ----------
    p : float
        Loss probability, in (0, 1) (at p = 0 no loss happens and Q-hat is not needed).
    w : float or array_like
        Window, packets (> 0).
    dup_t : int
        Duplicate-ACK threshold K (>= 1). Default 3.

    Returns
    -------
    float or ndarray
        Q-hat, in [0, 1]; a float for a scalar ``w``.

    Raises
    ------
    ValueError
        For p outside (0, 1), a window <= 0 or dup_t < 1.
    """
    p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    k = check_int("dup_t", dup_t, low=1)
    scalar = np.ndim(w) == 0
    ww = check_array("w", w, low=0.0, low_open=True)
    q_k = (1.0 - p) ** k
    with np.errstate(over="ignore", invalid="ignore"):
        num = _one_minus_q_pow(p, k) * (1.0 + q_k * _one_minus_q_pow(p, ww - k))
        val = np.minimum(1.0, num / _one_minus_q_pow(p, ww))
    val = np.where(ww <= k, 1.0, val)
    return float(val) if scalar else val


def expected_window(p: float, b: float) -> float:
    """PFTK's E[W], the unconstrained window at the end of a TD period, packets (Eq. 13).

    ``E[W] = (2 + b)/(3b) + sqrt(8 (1 - p)/(3 b p) + ((2 + b)/(3b))^2)``.

    Parameters
    ----------
    p : float
        Loss probability, in (0, 1).
    b : float
        PFTK's b, packets acknowledged per ACK: the window grows by 1/b packet per
        round (> 0).

    Returns
    -------
    float
        E[W], packets.

    Raises
    ------
    ValueError
        For p outside (0, 1) or b <= 0.
    """
    p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    b = check_real("b", b, low=0.0, low_open=True)
    c = (2.0 + b) / (3.0 * b)
    return c + math.sqrt(8.0 * (1.0 - p) / (3.0 * b * p) + c * c)


def growth_b(params: TcpParams) -> float:
    """The b of PFTK's congestion-avoidance growth (1/b packet per round) for ``params``.

    ``params.b`` under RFC 5681 ACK counting (``cwnd += MSS^2/cwnd`` per ACK of b
    packets); 1 with RFC 3465 byte counting (``StandardRule(abc_l=...)``: one MSS per cwnd
    of acknowledged bytes), see :mod:`latency_model.growth.standard`.

    Parameters
    ----------
    params : TcpParams
        A set-up :func:`check_supported` accepts.

    Returns
    -------
    float
        b, packets per window increment.

    Raises
    ------
    ValueError
        If ``params`` is not supported.
    """
    check_supported(params)
    return 1.0 if params.rule.abc_l is not None else float(params.b)


def throughput_packets_per_s(params: TcpParams) -> float:
    """PFTK's full steady-state throughput B(p) with timeouts and window limit, packets/s.

    PFTK Eq. (31)::

        E[W] < W_max:  B = ((1-p)/p + E[W] + Q(E[W])/(1-p))
                           / (RTT (b E[W]/2 + 1) + Q(E[W]) T_0 f(p)/(1-p))
        otherwise:     B = ((1-p)/p + W_max + Q(W_max)/(1-p))
                           / (RTT (b W_max/8 + (1-p)/(p W_max) + 2) + Q(W_max) T_0 f(p)/(1-p))

    with E[W] from Eq. (13), Q = :func:`timeout_probability` (K = ``dup_t``), f(p) =
    :func:`backoff_factor`, W_max = ``rwnd``, T_0 = ``params.rto``, b = :func:`growth_b`.
    At p = 0 the limit W_max / RTT.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings (standard rule, NewReno variant).

    Returns
    -------
    float
        Throughput, packets (segments of ``mss_bytes``) per second.

    Raises
    ------
    ValueError
        If ``params`` is not a supported set-up (:func:`check_supported`).
    """
    b = growth_b(params)
    p, rtt, w_max, t0 = params.p, params.rtt_s, float(params.rwnd), params.rto
    if p == 0.0:
        return w_max / rtt
    f = backoff_factor(p)
    w = expected_window(p, b)
    # Numerator and denominator of Eq. (31) times p: (1-p)/p overflows for p ~ 1e-308.
    if w < w_max:
        q = timeout_probability(p, w, params.dup_t)
        num = (1.0 - p) + p * w + p * q / (1.0 - p)
        den = p * rtt * (b * w / 2.0 + 1.0) + p * q * t0 * f / (1.0 - p)
    else:
        q = timeout_probability(p, w_max, params.dup_t)
        num = (1.0 - p) + p * w_max + p * q / (1.0 - p)
        den = (rtt * (p * b * w_max / 8.0 + (1.0 - p) / w_max + 2.0 * p)
               + p * q * t0 * f / (1.0 - p))
    return num / den


def _segments(sizes_bytes: np.ndarray, mss: int) -> np.ndarray:
    """Data segments of files of ``sizes_bytes``: ceil(size / MSS) (the last one may be short)."""
    return np.ceil(sizes_bytes / mss - 1e-12)


def transfer_time_s(params: TcpParams, *positional, size_bytes=None, size_packets=None) -> np.ndarray:
    """Transfer time of a file at PFTK's throughput, ``d / B(p)``, seconds.

    d = ceil(size / MSS) data segments and B = :func:`throughput_packets_per_s`. No
    handshake, no slow start: the steady-state (bulk-transfer) reading of PFTK.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings (standard rule, NewReno variant).
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.

    Returns
    -------
    ndarray
        Seconds, one per size.

    Raises
    ------
    ValueError
        For a positional size, neither or both size keywords, sizes <= 0, or an
        unsupported set-up.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {show(params)}")
    sizes = check_sizes("transfer_time_s", positional, size_bytes, size_packets, params.mss_bytes)
    rate = throughput_packets_per_s(params)
    return _segments(sizes, params.mss_bytes) / rate


def check_supported(params: TcpParams) -> None:
    """Raise ValueError unless PFTK (and CSA, :mod:`.csa`) model ``params``.

    Supported: the standard rule (:class:`~latency_model.growth.StandardRule`, with or
    without byte counting) and the NewReno recovery variant (no Limited Transmit, no tail
    retransmit, no Early Retransmit), which is what PFTK's TDP/TO analysis describes.

    Parameters
    ----------
    params : TcpParams
        The set-up to check.

    Raises
    ------
    ValueError
        One line naming what is supported and what was given.
    """
    _check_model_supports(MODEL, params)


def _check_model_supports(model: str, params: TcpParams) -> None:
    from ..growth import StandardRule
    from ..params import variant_of

    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {show(params)}")
    supported = f"model {model} supports the standard rule and the newreno variant only"
    if type(params.rule) is not StandardRule:
        raise ValueError(f"{supported}, got rule {params.rule.name!r}")
    if params.dup_lt is not None or params.tail_retransmit or params.early_retransmit:
        variant = variant_of(params)
        if variant is None:
            variant = (f"dup_lt={params.dup_lt}, tail_retransmit={params.tail_retransmit}, "
                       f"early_retransmit={params.early_retransmit}")
        raise ValueError(f"{supported}, got variant {variant!r}")


def predict(params: TcpParams, sizes_bytes, **options) -> "Prediction":
    """The registry's ``pftk`` model: :func:`transfer_time_s` as a Prediction.

    Parameters
    ----------
    params : TcpParams
        Standard rule, NewReno variant.
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    **options
        None; any is a ValueError naming it.

    Returns
    -------
    Prediction
        ``expected_latency_s`` = d / B(p), seconds; no conditional latencies, no
        percentiles.

    Raises
    ------
    ValueError
        For sizes <= 0, any option or an unsupported set-up.
    """
    from .registry import Prediction

    if options:
        raise ValueError(f"model pftk has no option {next(iter(options))!r} (it has none)")
    check_supported(params)
    sizes = np.asarray(sizes_bytes, dtype=float).ravel()
    t = transfer_time_s(params, size_bytes=sizes)
    return Prediction(model=MODEL, sizes_bytes=sizes, expected_latency_s=t)
