"""Timeout thresholds: y_to, FileSize_min and the paper's Tables 1-2.

Ayesta & Avrachenkov, Section 2: a loss times out when the window is too small to
produce ``dup_t`` duplicate ACKs, i.e. below ``1 + dup_t`` packets; y_to is the
amount of data sent until the rate reaches that threshold::

    y_to = y_f((1 + dup_t) MSS/RTT, W0, W_SS) * 1{W0 < (1 + dup_t) MSS/RTT}

With Limited Transmit (Section 2.1) the threshold is ``1 + dup_lt``. A loss among
the last ``dup_t`` packets also times out, hence (Section 3)
``FileSize_min = y_to + dup_t MSS``.

Tables 1-2 of the paper count y_to in whole packets with a per-ACK argument
(Section 3: "the sum of bytes sent when upon reception of all ACKs due to previous
packets the congestion window is smaller than (1 + dup_t) MSS");
:func:`table_y_to` implements that count and :func:`table_rows` sets it beside the
printed values. See ``tables/README.md`` for the four congestion-avoidance cells
that need the paper's convention.
"""

from __future__ import annotations

import math

import numpy as np

from ..checks import check_choice, check_instance, check_int, checked_call
from .fluid import y_f
from ..params import TcpParams

__all__ = [
    "y_to",
    "filesize_min",
    "table_y_to",
    "table_rows",
    "PAPER_TABLES",
    "PHASES",
    "CONVENTIONS",
]

PHASES = ("slow_start", "congestion_avoidance")
CONVENTIONS = ("paper", "plain")


@checked_call
def y_to(params: TcpParams, w0=None, w_ss=None, *, time_model: str = "fluid") -> np.ndarray:
    """Data sent before one loss stops forcing a timeout, bytes (the paper's y_to).

    Parameters
    ----------
    params : TcpParams
        Uses ``dup_t`` (or ``dup_lt`` with Limited Transmit) for the threshold
        ``1 + dup`` packets, and the fluid law of :mod:`latency_model.model.fluid`.
    w0, w_ss : array_like, optional
        Initial window and slow-start threshold, packets (default from ``params``).
    time_model : {"fluid", "rounds"}
        Passed to :func:`latency_model.model.fluid.y_f`.

    Returns
    -------
    ndarray
        Bytes; 0 once ``w0`` reaches the threshold; ``inf`` if the window can never
        reach it (receiver window below the threshold), in which case every loss
        times out.
    """
    check_instance("params", params, TcpParams)
    return y_f(params, params.timeout_threshold, w0, w_ss, time_model=time_model)


@checked_call
def filesize_min(params: TcpParams, w0=None, w_ss=None, *, time_model: str = "fluid") -> np.ndarray:
    """Smallest file for which one loss need not time out, bytes: ``y_to + dup_t MSS``.

    Paper, Section 3 and Figure 5.

    Parameters
    ----------
    params : TcpParams
        As for :func:`y_to`.
    w0, w_ss : array_like, optional
        Initial window, in (0, M], and slow-start threshold, packets (default from
        ``params``).
    time_model : {"fluid", "rounds"}
        Passed to :func:`latency_model.model.fluid.y_f`.

    Returns
    -------
    ndarray
        Bytes; ``inf`` where every loss times out (see :func:`y_to`).
    """
    return y_to(params, w0, w_ss, time_model=time_model) + params.dup_t * params.mss_bytes


# ---------------------------------------------------------------------------
# Tables 1-2

PAPER_TABLES = {
    # (b, phase, lt) -> y_to in packets for W0 = 1, 2, 3, 4, as printed.
    (1, "slow_start", False): (3, 2, 1, 0),
    (1, "slow_start", True): (2, 1, 0, 0),
    (1, "congestion_avoidance", False): (6, 5, 3, 1),
    (1, "congestion_avoidance", True): (3, 2, 1, 0),
    (2, "slow_start", False): (4, 3, 1, 0),
    (2, "slow_start", True): (2, 1, 0, 0),
    (2, "congestion_avoidance", False): (11, 10, 6, 1),
    (2, "congestion_avoidance", True): (5, 4, 1, 0),
}
"""The paper's Table 1 (b = 1) and Table 2 (b = 2): y_to in packets, dup_t = 3, dup_lt = 2."""


def table_y_to(
    w0: int,
    b: int,
    phase: str,
    threshold: int,
    *,
    convention: str = "paper",
) -> int:
    """y_to in packets by the paper's per-ACK count (Tables 1-2).

    Packets are sent in rounds of whole windows. Packet j (1-based) of a round
    with window w times out when the window "upon reception of all ACKs due to
    previous packets" is below ``threshold``. That window is ``w + (j - 1)`` in slow
    start (each earlier packet's ACK adds one segment: the paper's Section 3
    example, where one ACK releases two new packets) and ``w`` in congestion
    avoidance (the increment comes at the end of the round). Between rounds the
    window follows RFC 5681 with one ACK per ``b`` packets (``ceil(w/b)`` ACKs per
    round, the last one by the delayed-ACK timer): ``w + ceil(w/b)`` in slow start;
    in congestion avoidance +1 segment once ``w`` ACKs have been counted. For
    ``W0 = 1``, ``b = 2`` that gives the paper's 1, 2, 3, 5 (slow start) and
    1, 2, 2, 3, 3 (congestion avoidance).

    Parameters
    ----------
    w0 : int
        Initial window, packets (>= 1).
    b : int
        Delayed-ACK factor (>= 1).
    phase : {"slow_start", "congestion_avoidance"}
        The sender stays in this phase (the paper's simplification).
    threshold : int
        ``1 + dup_t`` without Limited Transmit, ``1 + dup_lt`` with it (>= 1).
    convention : {"paper", "plain"}
        ``"plain"``: the rule above. ``"paper"``: as printed, where in congestion
        avoidance the first packet of the transfer sees one segment less
        (``W0 - 1``), the segment the paper's post-recovery rate
        ``W_f/2 - MSS/RTT`` keeps for the retransmission (congestion avoidance is
        entered after fast recovery, the paper's footnote 5). The two differ
        only when ``W0`` equals the threshold in congestion avoidance: 1 vs 0.

    Returns
    -------
    int
        Packets at the start of the transfer whose loss forces a timeout.
    """
    w0 = check_int("w0", w0, low=1)
    b = check_int("b", b, low=1)
    check_choice("phase", phase, PHASES)
    threshold = check_int("threshold", threshold, low=1)
    check_choice("convention", convention, CONVENTIONS)
    slow = phase == "slow_start"
    count, w, acks_counted = 0, w0, 0
    while w < threshold:
        for j in range(1, w + 1):
            seen = w + (j - 1) if slow else w
            count += seen < threshold
        acks = math.ceil(w / b)
        if slow:
            w += acks
        else:
            acks_counted += acks
            if acks_counted >= w:
                acks_counted, w = 0, w + 1
    if convention == "paper" and not slow and w0 == threshold:
        count += 1  # the first packet, judged with W0 - 1 (see above)
    return count


def table_rows(dup_t: int = 3, dup_lt: int = 2) -> list[dict]:
    """The 8 rows of Tables 1-2: model (paper convention), plain rule and printed values.

    Parameters
    ----------
    dup_t, dup_lt : int
        Duplicate-ACK thresholds without and with Limited Transmit.

    Returns
    -------
    list of dict
        ``{"b", "phase", "lt", "w0": [1, 2, 3, 4], "model", "plain", "paper"}``,
        y_to in packets.
    """
    dup_t = check_int("dup_t", dup_t, low=1)
    dup_lt = check_int("dup_lt", dup_lt, low=1, high=dup_t)
    rows = []
    for (b, phase, lt), printed in PAPER_TABLES.items():
        thr = 1 + (dup_lt if lt else dup_t)
        w0s = [1, 2, 3, 4]
        rows.append(
            {
                "b": b,
                "phase": phase,
                "lt": lt,
                "w0": w0s,
                "model": [table_y_to(w, b, phase, thr, convention="paper") for w in w0s],
                "plain": [table_y_to(w, b, phase, thr, convention="plain") for w in w0s],
                "paper": list(printed),
            }
        )
    return rows
