"""NGWA, New General Window Advertising (Talau & Wille, Sections 2-2.3): routers stamp their
free queue space into each data packet, the receiver advertises it as its window.

* Stamping (Section 2): a data packet carries ``W_ngwa`` (bytes, +inf when it leaves the
  sender); every node with a finite buffer lowers it to its own value when that is smaller,
  so the smallest along the path wins. A node's value is its free buffer space in bytes,
  or with flow division (FD, Section 2.2, Eq. 3) ``0.98 B_r / n_f``, ``n_f`` the TCP flows
  active through the node.
* Receiver (Eq. 2, Eq. 4): ``W_a = min(W_b, W_max, W_ngwa)``; with the smoothing equation
  (SE) ``W_ngwa`` is replaced by ``W̄ = (1 - alpha) W̄ + alpha W_ngwa``, updated on each
  stamped segment that arrives.
* Sender (Eq. 1): ``W_t = min(W_a, W_c) - W_u`` with the congestion window (CW),
  ``W_a - W_u`` without (standard TCP, RFC 793: no congestion window and no fast
  retransmit; losses are repaired by the retransmission timer).

The eight modes of Table 1 are :data:`MODES`; ``"newreno"`` and ``"rfc793"`` are the
paper's two benchmarks (NGWA off, with and without the congestion window).
NGWA is a property of a flow (:attr:`~latency_model.sim.scenario.Flow.ngwa`), not a growth
rule: Eq. (1) is a send limit and Eq. (2) a receiver property, while a
:class:`~latency_model.growth.GrowthRule` only moves ``cwnd``; with CW on, the flow's rule
still grows ``W_c``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import check_int, check_real

__all__ = ["NgwaMode", "MODES", "BASELINES", "FD_FACTOR", "ngwa_mode", "mode_names", "node_value",
           "lower_stamp", "smooth", "advertised_window", "send_limit", "NgwaReceiver"]

FD_FACTOR = 0.98
"""Eq. (3): the share of the free buffer given to data ("space in the queue for ACKs")."""

MODES = {  # Table 1: mode -> (congestion window, smoothing equation, flow division)
    1: (True, False, False),
    2: (True, True, False),
    3: (False, False, False),
    4: (False, True, False),
    5: (True, False, True),
    6: (True, True, True),
    7: (False, False, True),
    8: (False, True, True),
}
"""The eight NGWA modes of Table 1: number -> (CW, SE, FD)."""

BASELINES = {"newreno": True, "rfc793": False}
"""The paper's benchmarks, NGWA off: name -> congestion window on."""


@dataclass(frozen=True)
class NgwaMode:
    """The NGWA options of one flow.

    Parameters
    ----------
    name : str
        Label, e.g. ``"mode6"``, ``"newreno"``.
    cw : bool
        Congestion window on (Eq. 1, first case; NewReno in the paper) or off (RFC 793).
    se : bool
        Smoothing equation (Eq. 4) on.
    fd : bool
        Flow division (Eq. 3) on.
    stamping : bool
        NGWA on: packets are stamped and the receiver advertises ``W_ngwa`` (Eq. 2, first
        case). Off for the benchmarks.
    alpha : float
        Smoothing constant, in (0, 1). Paper: 0.3.
    w_max_bytes : int
        Maximum window ``W_max``, bytes (>= 1). Paper: 64 KB.
    """

    name: str
    cw: bool
    se: bool = False
    fd: bool = False
    stamping: bool = True
    alpha: float = 0.3
    w_max_bytes: int = 65536

    def __post_init__(self) -> None:
        for k in ("cw", "se", "fd", "stamping"):
            if not isinstance(getattr(self, k), bool):
                raise ValueError(f"{k} must be a bool, got {getattr(self, k)!r}")
        if not self.stamping and (self.se or self.fd):
            raise ValueError("se and fd need stamping=True (they act on W_ngwa)")
        object.__setattr__(self, "alpha", check_real("alpha", self.alpha, low=0.0, high=1.0,
                                                     low_open=True, high_open=True))
        object.__setattr__(self, "w_max_bytes", check_int("w_max_bytes", self.w_max_bytes, low=1))

    def describe(self) -> dict:
        """JSON-serialisable dict of the options."""
        return {"name": self.name, "cw": self.cw, "se": self.se, "fd": self.fd,
                "stamping": self.stamping, "alpha": self.alpha, "w_max_bytes": self.w_max_bytes}


def mode_names() -> tuple:
    """Every accepted mode name: ``rfc793, newreno, mode1 .. mode8``."""
    return tuple(BASELINES)[::-1] + tuple(f"mode{k}" for k in MODES)


def ngwa_mode(name, *, alpha: float = 0.3, w_max_bytes: int = 65536) -> NgwaMode:
    """The :class:`NgwaMode` of a Table 1 mode or a benchmark.

    Parameters
    ----------
    name : int or str
        ``1`` .. ``8``, ``"1"`` .. ``"8"``, ``"mode1"`` .. ``"mode8"``, ``"newreno"`` or ``"rfc793"``.
    alpha : float
        Smoothing constant, in (0, 1).
    w_max_bytes : int
        ``W_max``, bytes (>= 1).

    Raises
    ------
    ValueError
        For an unknown name, listing the valid ones.
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if isinstance(key, str) and key in BASELINES:
        return NgwaMode(key, cw=BASELINES[key], stamping=False, alpha=alpha, w_max_bytes=w_max_bytes)
    if isinstance(key, str):
        key = key[4:] if key.startswith("mode") else key
        key = int(key) if key.isdigit() else key
    if isinstance(key, bool) or key not in MODES:
        raise ValueError(f"mode must be one of 1..8, {', '.join(mode_names())}, got {name!r}")
    cw, se, fd = MODES[key]
    return NgwaMode(f"mode{key}", cw=cw, se=se, fd=fd, alpha=alpha, w_max_bytes=w_max_bytes)


def node_value(free_bytes: float, n_flows: int, fd: bool) -> float:
    """A node's ``W_ngwa``, bytes: its free buffer space, or ``0.98 B_r / n_f`` with FD (Eq. 3).

    Parameters
    ----------
    free_bytes : float
        Free buffer space ``B_r``, bytes (>= 0).
    n_flows : int
        Active TCP flows through the node ``n_f`` (>= 1 whenever a packet is stamped:
        the packet's own flow is active).
    fd : bool
        Flow division on.
    """
    free_bytes = check_real("free_bytes", free_bytes, low=0.0)
    if not fd:
        return free_bytes
    return FD_FACTOR * free_bytes / check_int("n_flows", n_flows, low=1)


def lower_stamp(stamp: float, value: float) -> float:
    """Stamp after a node of value ``value`` (bytes): the smaller of the two (Section 2)."""
    return value if value < stamp else stamp


def smooth(previous: float | None, sample: float, alpha: float) -> float:
    """Eq. (4): ``(1 - alpha) previous + alpha sample``, bytes; the first sample (``previous``
    None) is taken as is."""
    if previous is None or math.isinf(previous):
        return sample
    if math.isinf(sample):  # a path with no finite buffer says nothing
        return previous
    return (1.0 - alpha) * previous + alpha * sample


def advertised_window(w_b: float, w_max: float, w_ngwa: float | None) -> float:
    """Eq. (2): ``min(W_b, W_max, W_ngwa)``, or ``min(W_b, W_max)`` with NGWA off (``None``), bytes."""
    w = w_b if w_b < w_max else w_max
    return w if w_ngwa is None or w <= w_ngwa else w_ngwa


def send_limit(w_a: float, w_c: float, w_u: float, cw: bool) -> float:
    """Eq. (1), ``W_t``: bytes the sender may still send, ``min(W_a, W_c) - W_u`` with the
    congestion window, ``W_a - W_u`` without (may be negative after the window shrank)."""
    return (min(w_a, w_c) if cw else w_a) - w_u


class NgwaReceiver:
    """What an NGWA receiver adds to the flat engine's receiver: the stamps it has seen and
    the window it advertises in every ACK, Eq. (2) (with SE, Eq. 4's smoothed stamp).

    ``W_b`` (free receiver memory) is the flow's receiver window ``rwnd`` in bytes, constant:
    the application reads in-order data at once, and the out-of-order buffer is not charged
    (the simulator's receiver window is constant too). The ACKs themselves (delayed ACKs,
    immediate ACKs out of order) are the engine's (:func:`~latency_model.sim.flat.on_segment`);
    the sender's Eq. (1) is the engine's send loop with ``W_a`` as its receiver window and,
    without CW, no congestion window (:class:`~latency_model.sim.kernel_multi.FlatFlow`).

    Parameters
    ----------
    mode : NgwaMode
        The flow's NGWA options.
    w_b_bytes : float
        ``W_b``, bytes (> 0).
    """

    def __init__(self, mode: NgwaMode, w_b_bytes: float) -> None:
        if not isinstance(mode, NgwaMode):
            raise ValueError(f"mode must be an NgwaMode, got {mode!r}")
        self.mode = mode
        self.w_b = check_real("w_b_bytes", w_b_bytes, low=0.0, low_open=True)
        self.w_ngwa: float | None = None  # last stamp, or its smoothed value with SE

    def window(self) -> float:
        """The window this receiver advertises now, bytes (Eq. 2)."""
        w = self.w_ngwa if self.mode.stamping else None
        return advertised_window(self.w_b, self.mode.w_max_bytes, w)

    def on_syn(self, stamp: float) -> None:
        """Record the SYN's stamp (bytes): the first ``W_ngwa`` sample."""
        if self.mode.stamping:
            self.w_ngwa = smooth(self.w_ngwa, stamp, self.mode.alpha) if self.mode.se else stamp

    def on_segment(self, seg: int, now: float, stamp: float | None = None) -> None:
        """Data segment ``seg`` arriving at ``now`` (seconds) with the path's stamp ``stamp``
        (bytes; ``None`` for a flow that does not stamp): Eq. (4) with SE, else the latest."""
        if stamp is not None and self.mode.stamping:
            self.w_ngwa = smooth(self.w_ngwa, stamp, self.mode.alpha) if self.mode.se else stamp
