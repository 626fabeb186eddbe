"""Cardwell, Savage & Anderson's short-transfer latency model, handshake excluded.

N. Cardwell, S. Savage, T. Anderson, "Modeling TCP Latency", IEEE INFOCOM 2000 ("CSA").
The expected data-transfer time of a file of d segments (CSA Eq. 25 without the
handshake E[T_h] of Eq. 4, since our latency starts with the first data segment)::

    E[T] = E[T_ss] + E[T_loss] + E[T_ca] + E[T_delack]

- E[T_ss]: the initial slow start, sending E[d_ss] segments (Eq. 5) with the window
  growing by gamma = 1 + 1/b per round from w_1 (Eqs. 6-7), capped at W_max (Eq. 15);
- E[T_loss]: recovery from the first loss, which happens with probability l_ss (Eq. 16):
  a timeout sequence (Eq. 18, PFTK's back-off) with probability Q(p, E[W_ss]) (Eq. 17,
  the window at the end of slow start from Eq. 11), else one RTT of fast recovery (Eq. 20);
- E[T_ca]: the E[d_ca] = d - E[d_ss] segments left (Eq. 21) at PFTK's throughput R
  (Eqs. 22-24, :mod:`.pftk`);
- E[T_delack]: the delayed ACK of the first flight.

The paper's text was not available here. Eqs. (5), (11), (15)-(21) and (24) agree with a
third-party transcription labelled with CSA's numbers (jsommers/fs ``tcpmodels/csa00.py``),
gamma with the restatement of CSA's slow start in "Multihomed Communication with SCTP"
(ch. 18); R (Eq. 22) is PFTK's Eq. (31) as PFTK print it, because fs's different
numerator ((1-p)/p + W/2 + Q) could not be confirmed. docs/baselines.md ("Sources") gives
every equation, what confirms it, how each term maps to the simulator's latency (first
data segment sent -> last ACK received) and the choices our
:class:`~latency_model.params.TcpParams` force (ssthresh, the window cap, p = 0, dup_t,
byte counting, the delayed-ACK term). Nothing here imports the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_real, check_sizes
from ..params import TcpParams
from ..values import show
from . import pftk

__all__ = [
    "CsaTerms",
    "DELACK_S",
    "slow_start_gamma",
    "csa_terms",
    "expected_latency_csa",
    "check_supported",
    "predict",
]

MODEL = "csa"

DELACK_S = 0.2
"""Default delayed-ACK delay of the first flight, seconds: the rfc profile's one-shot
delayed-ACK timer (``SimConfig.delack_timeout_s``, RFC 5681 Section 4.2; ns-2/ns-3 200 ms),
which holds the first segment for exactly this long. CSA's own values are stack
averages (e.g. 100 ms for a BSD 200 ms heartbeat timer)."""


@dataclass(frozen=True)
class CsaTerms:
    """CSA's terms for each file size (arrays of one entry per size).

    Attributes
    ----------
    sizes_bytes : ndarray
        File sizes, bytes.
    d : ndarray
        Data segments, ceil(size / MSS).
    d_ss : ndarray
        E[d_ss], segments sent in the initial slow start (Eq. 5, at most d).
    w_ss : ndarray
        E[W_ss], window at the end of slow start, packets (Eq. 11, at most W_max).
    t_ss : ndarray
        E[T_ss], seconds (Eq. 15).
    l_ss : ndarray
        Probability that the file sees a loss, 1 - (1-p)^d (Eq. 16).
    q : ndarray
        Q(p, E[W_ss]), probability that the first loss ends in a timeout (Eq. 17).
    t_loss : ndarray
        E[T_loss], seconds (Eq. 20).
    d_ca : ndarray
        E[d_ca] = d - E[d_ss], segments (Eq. 21).
    t_ca : ndarray
        E[T_ca] = E[d_ca] / R, seconds (Eq. 24).
    t_delack : ndarray
        E[T_delack], seconds.
    total : ndarray
        E[T], seconds (Eq. 25 without the handshake).
    """

    sizes_bytes: np.ndarray
    d: np.ndarray
    d_ss: np.ndarray
    w_ss: np.ndarray
    t_ss: np.ndarray
    l_ss: np.ndarray
    q: np.ndarray
    t_loss: np.ndarray
    d_ca: np.ndarray
    t_ca: np.ndarray
    t_delack: np.ndarray
    total: np.ndarray


def slow_start_gamma(params: TcpParams) -> float:
    """CSA's slow-start growth factor per round, gamma = 1 + 1/b (CSA Section III-A).

    With RFC 3465 byte counting (``StandardRule(abc_l=L)``) an ACK of b packets adds
    min(b, L) packets, so gamma = 1 + min(b, L)/b (b = 2, L = 2: gamma = 2).

    Parameters
    ----------
    params : TcpParams
        A set-up :func:`check_supported` accepts.

    Returns
    -------
    float
        gamma, dimensionless (in (1, 2]).

    Raises
    ------
    ValueError
        If ``params`` is not supported.
    """
    check_supported(params)
    b = params.b
    per_ack = 1 if params.rule.abc_l is None else min(b, params.rule.abc_l)  # packets
    return 1.0 + per_ack / b


def _first_flight(params: TcpParams, d: np.ndarray) -> np.ndarray:
    """Segments of the first flight: floor(w0) full segments (one at least), at most d."""
    return np.minimum(d, max(1.0, math.floor(params.w0 + 1e-9)))


def csa_terms(params: TcpParams, *positional, size_bytes=None, size_packets=None,
              delack_s: float = DELACK_S) -> CsaTerms:
    """Every term of CSA's expected transfer time, handshake excluded.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings: ``mss_bytes``, ``rtt_s``, ``p``, ``w0`` (CSA's w_1),
        ``rwnd`` (W_max, packets, for slow start and for PFTK), ``b``, ``dup_t`` (Q's
        threshold) and ``params.rto`` (T_0). Standard rule, NewReno. ``w_ss`` is not
        used: CSA's slow start ends at the first loss or at W_max.
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.
    delack_s : float
        Delay of a delayed ACK that stalls the first flight, seconds (>= 0; default
        :data:`DELACK_S`). Counted when the first flight has fewer than b segments and
        the file more (docs/baselines.md); pass 0 for a receiver that acknowledges the
        first segment at once (ns-3's and Linux's quick ACKs).

    Returns
    -------
    CsaTerms

    Raises
    ------
    ValueError
        For a positional size, neither or both size keywords, sizes <= 0, a negative
        ``delack_s`` or an unsupported set-up.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {show(params)}")
    sizes = check_sizes("csa_terms", positional, size_bytes, size_packets, params.mss_bytes)
    delack_s = check_real("delack_s", delack_s, low=0.0)
    gamma = slow_start_gamma(params)  # also checks the set-up
    p, rtt, w1 = params.p, params.rtt_s, params.w0
    # CSA's slow start runs until the first loss or W_max = rwnd; CSA have no initial
    # ssthresh, so w_ss is not used (docs/baselines.md: capping slow start at w_ss made
    # the model decrease in p near p = 0, PFTK's R being faster than a window held at w_ss).
    w_max_ss = float(params.rwnd)
    d = np.ceil(sizes / params.mss_bytes - 1e-12)

    # Eq. (5): E[d_ss] = (1 - (1-p)^d)(1-p)/p + 1 = (1 - (1-p)^(d+1))/p; its limit d + 1 at
    # p -> 0 counts a lost segment that a loss-free file never sends, so at most d.
    if p == 0.0:
        d_ss = d.copy()
    else:
        d_ss = np.minimum(d, -np.expm1((d + 1.0) * math.log1p(-p)) / p)
    # Eq. (11): window after E[d_ss] segments of slow start, capped at W_max.
    w_ss = np.minimum(d_ss * (gamma - 1.0) / gamma + w1 / gamma, w_max_ss)
    # Eq. (15): rounds of slow start; past d_1 = (gamma W_max - w_1)/(gamma - 1) segments
    # the window is W_max and the rest goes at W_max per round.
    d1 = (gamma * w_max_ss - w1) / (gamma - 1.0)
    free = np.log(d_ss * (gamma - 1.0) / w1 + 1.0) / math.log(gamma)
    capped = math.log(w_max_ss / w1) / math.log(gamma) + 1.0 + (d_ss - d1) / w_max_ss
    t_ss = rtt * np.where(d_ss > d1, capped, free)
    # Eq. (16): the file sees at least one loss.
    l_ss = -np.expm1(d * math.log1p(-p)) if p > 0.0 else np.zeros_like(d)
    if p > 0.0:
        # Eqs. (17)-(20): timeout (PFTK's Q-hat and back-off) or one RTT of fast recovery.
        q = pftk.timeout_probability(p, w_ss, params.dup_t)
        z_to = pftk.backoff_factor(p) * params.rto / (1.0 - p)
        t_loss = l_ss * (q * z_to + (1.0 - q) * rtt)
    else:
        q = np.zeros_like(d)
        t_loss = np.zeros_like(d)
    # Eqs. (21)-(24): the rest at PFTK's throughput (window limit rwnd).
    d_ca = d - d_ss
    t_ca = d_ca / pftk.throughput_packets_per_s(params)
    # Delayed ACK of the first flight (the term E[T_delack] of Eq. 25).
    first = _first_flight(params, d)
    t_delack = np.where((first < params.b) & (d > first), delack_s, 0.0)
    total = t_ss + t_loss + t_ca + t_delack
    return CsaTerms(sizes_bytes=sizes, d=d, d_ss=d_ss, w_ss=w_ss, t_ss=t_ss, l_ss=l_ss, q=q,
                    t_loss=t_loss, d_ca=d_ca, t_ca=t_ca, t_delack=t_delack, total=total)


def expected_latency_csa(params: TcpParams, *positional, size_bytes=None, size_packets=None,
                         delack_s: float = DELACK_S) -> np.ndarray:
    """CSA's expected transfer time E[T_ss] + E[T_loss] + E[T_ca] + E[T_delack], seconds.

    CSA Eq. (25) without the handshake term E[T_h]: the time from the first data segment
    sent to the last ACK received, the simulator's latency. See :func:`csa_terms` for
    each term.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings (standard rule, NewReno variant).
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.
    delack_s : float
        Delayed-ACK delay of a first flight of fewer than b segments, seconds (>= 0).

    Returns
    -------
    ndarray
        Seconds, one per size.

    Raises
    ------
    ValueError
        For a positional size, neither or both size keywords, sizes <= 0, a negative
        ``delack_s`` or an unsupported set-up (one line naming what is supported).
    """
    return csa_terms(params, *positional, size_bytes=size_bytes, size_packets=size_packets,
                     delack_s=delack_s).total


def check_supported(params: TcpParams) -> None:
    """Raise ValueError unless CSA models ``params``.

    Supported: the standard rule (:class:`~latency_model.growth.StandardRule`, with or
    without byte counting) and the NewReno recovery variant: CSA's slow start has the
    growth factor 1 + 1/b and its loss terms are PFTK's (no Limited Transmit, no tail
    retransmit, no Early Retransmit).

    Parameters
    ----------
    params : TcpParams
        The set-up to check.

    Raises
    ------
    ValueError
        One line, e.g. "model csa supports the standard rule and the newreno variant
        only, got rule 'btcp'".
    """
    pftk._check_model_supports(MODEL, params)


def predict(params: TcpParams, sizes_bytes, *, delack_s: float = DELACK_S, **options) -> "Prediction":
    """The registry's ``csa`` model: :func:`expected_latency_csa` as a Prediction.

    Parameters
    ----------
    params : TcpParams
        Standard rule, NewReno variant.
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    delack_s : float
        See :func:`csa_terms` (seconds, >= 0).
    **options
        None other; any is a ValueError naming it.

    Returns
    -------
    Prediction
        ``expected_latency_s`` in seconds; no conditional latencies, no percentiles.

    Raises
    ------
    ValueError
        For sizes <= 0, a negative ``delack_s``, an unknown option or an unsupported set-up.
    """
    from .registry import Prediction

    if options:
        raise ValueError(f"model csa has no option {next(iter(options))!r} (its option: delack_s)")
    check_supported(params)
    sizes = np.asarray(sizes_bytes, dtype=float).ravel()
    t = expected_latency_csa(params, size_bytes=sizes, delack_s=delack_s)
    return Prediction(model=MODEL, sizes_bytes=sizes, expected_latency_s=t)
