"""TCP and path parameters of the latency model, validated in one place.

The paper (Ayesta & Avrachenkov, Section 2) expresses windows as sending
rates in bytes/s. This toolkit states them in packets (segments of ``mss_bytes``);
a window of ``w`` packets is the paper's rate ``w * MSS / RTT``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .checks import check_choice, check_instance, check_int, check_real, checked_call
from .growth import GrowthRule, StandardRule

__all__ = [
    "TcpParams",
    "IW_PRESETS",
    "initial_window_bytes",
    "VARIANTS",
    "apply_variant",
    "variant_of",
    "SIZE_BASED_THRESHOLD_BYTES",
]


MAX_MSS_BYTES = 65_535
"""Largest MSS, bytes: the TCP MSS option is a 16-bit field (RFC 9293, Section 3.7.1)."""

MAX_WINDOW_BYTES = 2**30
"""Largest window TCP can advertise, bytes: 65,535 shifted by the largest window scale, 14
(RFC 7323, Section 2.3). Bounds ``rwnd``, and ``b`` and ``dup_t``, which count segments
that one window must hold."""

MAX_SECONDS = 3600.0
"""Largest round-trip time or timeout accepted, seconds (an hour). No TCP path comes near
it, and it keeps the models' sums of times, which multiply them by loss counts and back-off
factors, far from overflowing (an RTT of 1e308 s gave NaN latencies)."""

MAX_SSTHRESH_PACKETS = 2**31 - 1
"""Largest initial slow-start threshold accepted, packets: Linux's "infinite" ssthresh
(``TCP_INFINITE_SSTHRESH`` = 0x7fffffff, include/net/tcp.h); RFC 5681 (3.1) asks only for
an arbitrarily high value. Far above any window (rwnd <= 2**30 bytes), it keeps the models'
byte counts finite (w_ss = 1e300 overflowed the packet model's state keys)."""

MIN_SECONDS = 1e-6
"""Smallest round-trip time or timeout accepted, seconds (a microsecond): below any TCP path
(a loopback round trip takes about 10 us), and far from the subnormal times whose rates
MSS / RTT overflow (an RTT of 5e-324 s gave a ZeroDivisionError in the packet model)."""


@checked_call
@dataclass(frozen=True)
class TcpParams:
    """Parameters of one short TCP transfer over a lossy path.

    Parameters
    ----------
    mss_bytes : int
        Maximum segment size MSS, bytes, in [1, 65535] (:data:`MAX_MSS_BYTES`). Paper
        default 500.
    rtt_s : float
        Round-trip time RTT, seconds, in [1e-6, 3600] (:data:`MIN_SECONDS`,
        :data:`MAX_SECONDS`). Paper default 0.1 (2 x 50 ms).
    p : float
        Independent packet loss probability, in [0, 1). Paper default 0.1.
    w0 : float
        Initial window W0, packets (> 0, <= ``rwnd``). Paper default 2.
    w_ss : float
        Initial slow-start threshold W_SS, packets (> 0, at most 2**31 - 1:
        :data:`MAX_SSTHRESH_PACKETS`). Paper default 30.
    rwnd : float
        Receiver advertised window M, packets, from 1 to ``2**30 / mss_bytes``
        (:data:`MAX_WINDOW_BYTES`). Paper default 30.
    b : int
        Delayed-ACK factor: packets acknowledged by one ACK, from 1 to ``2**30 /
        mss_bytes``. Paper: 1 or 2.
    dup_t : int
        Duplicate ACKs that trigger fast retransmit, from 1 to ``2**30 / mss_bytes``.
        RFC 5681: 3.
    dup_lt : int or None
        Duplicate ACKs on which Limited Transmit sends new data, or ``None`` for
        no Limited Transmit. RFC 3042: 2 (its first two duplicate ACKs, so the
        paper's timeout threshold is ``1 + dup_lt``); the paper's proposal: 1.
        Must be in [1, dup_t].
    tail_retransmit : bool
        The paper's Section 3.1 proposal: retransmit on one duplicate ACK when
        the missing segment is among the last ``dup_t`` segments of the file.
    early_retransmit : bool
        RFC 5827 Early Retransmit (the simulator and the packet model; the fluid model,
        which does not read it, refuses it, and so do both under RACK-TLP).
    rto_s : float or None
        Retransmission timeout, seconds, in [1e-6, 3600]. ``None`` means the paper's
        ``max(1.0 s, 4 RTT)`` (Section 2, after [14]).
    rule : GrowthRule
        Window-growth rule (``latency_model.growth``); default RFC 5681 slow
        start and congestion avoidance.

    Raises
    ------
    ValueError
        On construction, naming the first parameter outside its range.
    """

    mss_bytes: int = 500
    rtt_s: float = 0.1
    p: float = 0.1
    w0: float = 2.0
    w_ss: float = 30.0
    rwnd: float = 30.0
    b: int = 1
    dup_t: int = 3
    dup_lt: int | None = None
    tail_retransmit: bool = False
    early_retransmit: bool = False
    rto_s: float | None = None
    rule: GrowthRule = field(default_factory=StandardRule)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "mss_bytes", check_int("mss_bytes", self.mss_bytes, low=1, high=MAX_MSS_BYTES))
        set_(self, "rtt_s", check_real("rtt_s", self.rtt_s, low=MIN_SECONDS, high=MAX_SECONDS))
        set_(self, "p", check_real("p", self.p, low=0.0, high=1.0, high_open=True))
        max_segments = MAX_WINDOW_BYTES // self.mss_bytes  # segments in the largest window
        set_(self, "rwnd", check_real("rwnd", self.rwnd, low=1.0, high=max_segments))
        set_(self, "w0", check_real("w0", self.w0, low=0.0, low_open=True))
        if self.w0 > self.rwnd:
            raise ValueError(
                f"w0 must be <= rwnd ({self.rwnd:g} packets), got {self.w0:g}"
            )
        set_(self, "w_ss", check_real("w_ss", self.w_ss, low=0.0, high=MAX_SSTHRESH_PACKETS, low_open=True))
        set_(self, "b", check_int("b", self.b, low=1, high=max_segments))
        set_(self, "dup_t", check_int("dup_t", self.dup_t, low=1, high=max_segments))
        if self.dup_lt is not None:
            set_(self, "dup_lt", check_int("dup_lt", self.dup_lt, low=1, high=self.dup_t))
        for flag in ("tail_retransmit", "early_retransmit"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{flag} must be true or false, got {getattr(self, flag)!r}")
        if self.rto_s is not None:
            set_(self, "rto_s", check_real("rto_s", self.rto_s, low=MIN_SECONDS, high=MAX_SECONDS))
        if not isinstance(self.rule, GrowthRule):
            raise ValueError(f"rule must be a GrowthRule instance, got {self.rule!r}")

    # Derived quantities -------------------------------------------------
    @property
    def rto(self) -> float:
        """Retransmission timeout used by the model, seconds: ``rto_s`` or max(1 s, 4 RTT)."""
        return self.rto_s if self.rto_s is not None else max(1.0, 4.0 * self.rtt_s)

    @property
    def timeout_threshold(self) -> int:
        """Window (packets) below which one loss forces a timeout: 1 + dup_lt with LT, else 1 + dup_t.

        Paper, Section 2 (y_to) and Section 2.1 (LT).
        """
        return 1 + (self.dup_lt if self.dup_lt is not None else self.dup_t)

    @property
    def packet_rate(self) -> float:
        """The paper's unit rate MSS/RTT, bytes/s: a window of one packet."""
        return self.mss_bytes / self.rtt_s

    def replace(self, **changes) -> "TcpParams":
        """Return a copy with ``changes`` applied (validated again).

        Parameters
        ----------
        **changes
            Fields of :class:`TcpParams` and their new values (units as in the class).

        Returns
        -------
        TcpParams

        Raises
        ------
        ValueError
            For a name that is not a field (listing the fields) or a value out of range.
        """
        fields = [f.name for f in dataclasses.fields(self)]
        for key in changes:
            if key not in fields:
                raise ValueError(f"TcpParams has no field {key!r} (fields: {', '.join(fields)})")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain JSON-serialisable dict of every parameter (the rule as name + parameters)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "rule"}
        out["rto_effective_s"] = self.rto
        out["rule"] = self.rule.describe()
        return out


# Initial-window presets ------------------------------------------------------

def _iw_rfc3390(mss: int) -> int:
    return min(4 * mss, max(2 * mss, 4380))


def _iw_rfc6928(mss: int) -> int:
    return min(10 * mss, max(2 * mss, 14600))


IW_PRESETS = {"rfc3390": _iw_rfc3390, "rfc6928": _iw_rfc6928}
"""Initial-window presets: name -> function of MSS (bytes) giving IW in bytes."""


@checked_call
def initial_window_bytes(preset: str, mss_bytes: int) -> int:
    """Initial window of an RFC preset, bytes.

    Parameters
    ----------
    preset : {"rfc3390", "rfc6928"}
        RFC 3390: ``min(4 MSS, max(2 MSS, 4380 B))``; RFC 6928:
        ``min(10 MSS, max(2 MSS, 14600 B))``.
    mss_bytes : int
        Segment size, bytes (> 0).

    Returns
    -------
    int
        The initial window, bytes. Divide by ``mss_bytes`` for packets
        (it may be fractional, e.g. RFC 3390 with MSS 1000 gives 4000 B = 4 packets,
        with MSS 1500 gives 4380 B = 2.92 packets).
    """
    check_choice("iw preset", preset, sorted(IW_PRESETS))
    mss = check_int("mss_bytes", mss_bytes, low=1)
    return IW_PRESETS[preset](mss)


# Loss-recovery variants (one axis, independent of the growth rule) -----------

VARIANTS = {
    "newreno": dict(dup_lt=None, tail_retransmit=False, early_retransmit=False),
    "lt": dict(dup_lt=2, tail_retransmit=False, early_retransmit=False),
    "proposal": dict(dup_lt=1, tail_retransmit=True, early_retransmit=False),
    "er": dict(dup_lt=None, tail_retransmit=False, early_retransmit=True),
}
"""Loss-recovery variants: NewReno (RFC 6582), Limited Transmit (RFC 3042, dup_lt = 2),
the paper's Section 3.1 proposal (dup_lt = 1 and retransmit on one duplicate ACK for a
loss among the last dup_t packets), and Early Retransmit (RFC 5827). The paper's
size-based variant ("size-based": the proposal below a size threshold, LT above) is
resolved per file size by :func:`apply_variant`."""

SIZE_BASED_THRESHOLD_BYTES = 10_000
"""Default size threshold of the size-based variant (paper, Figure 9: 10 KB)."""


@checked_call
def apply_variant(
    params: TcpParams,
    variant: str,
    size_bytes: float | None = None,
    size_threshold_bytes: float = SIZE_BASED_THRESHOLD_BYTES,
) -> TcpParams:
    """Return ``params`` with the loss-recovery settings of ``variant``.

    Parameters
    ----------
    params : TcpParams
        Base parameters; only ``dup_lt``, ``tail_retransmit`` and
        ``early_retransmit`` are changed.
    variant : {"newreno", "lt", "proposal", "er", "size-based"}
        Recovery variant. ``"size-based"`` is the proposal for files smaller
        than ``size_threshold_bytes`` and LT otherwise (paper, Figure 9).
    size_bytes : float, optional
        File size, bytes; required for ``"size-based"``.
    size_threshold_bytes : float
        Threshold of the size-based variant, bytes (default 10 000).

    Returns
    -------
    TcpParams
        ``params`` with the variant's recovery settings.

    Raises
    ------
    ValueError
        For ``params`` that is not a :class:`TcpParams`, an unknown variant,
        ``"size-based"`` without a size, or a size or threshold not > 0.
    """
    check_instance("params", params, TcpParams)
    check_choice("variant", variant, [*VARIANTS, "size-based"])
    size = None if size_bytes is None else check_real("size_bytes", size_bytes, low=0.0, low_open=True)
    thr = check_real("size_threshold_bytes", size_threshold_bytes, low=0.0, low_open=True)
    if variant == "size-based":
        if size is None:
            raise ValueError("size_bytes is required for the size-based variant")
        variant = "proposal" if size < thr else "lt"
    settings = dict(VARIANTS[variant])
    if settings["dup_lt"] is not None:
        settings["dup_lt"] = min(settings["dup_lt"], params.dup_t)
    return params.replace(**settings)


def variant_of(params: TcpParams) -> str | None:
    """Name of the variant whose settings ``params`` carries, or ``None``."""
    for name, settings in VARIANTS.items():
        if all(getattr(params, k) == v for k, v in settings.items()):
            return name
    return None
