"""Modern loss recovery in the paper's recursion: SACK (RFC 6675), RACK-TLP (RFC 8985) and
Early Retransmit (RFC 5827) as the fluid model of Ayesta & Avrachenkov sees them.

The paper's recursion (:mod:`latency_model.model.recursion`; Section 2) splits the first of
k losses, after y of y_bar bytes (density ``f(y, k, y_bar) = (k/y_bar)(1 - y/y_bar)^(k-1)``),
into three regions by what repairs it::

    region 1  [0, a):   too few packets after it for dup ACKs   -> RTO, restart from W0 = 1
    region 2  [a, t):   fast retransmit                          -> continue at W_f/2 - 1
    region 3  [t, y_bar]: among the last d packets ("not enough data") -> RTO

with ``a = min(y_to, t)``, ``t = y_bar - d MSS``, y_to the data sent before the window reaches
``1 + dup`` packets, and every loss of the remaining ``k - 1`` treated as a new loss of the
state that follows. This module keeps the recursion and changes, with their sources, the
three things modern stacks change: what detects a loss (the region bounds), what a timer
costs when the RTO no longer fires (regions 1 and 3), and which later losses a recovery
repairs without a new reduction (region 2).

**RACK (RFC 8985 Section 6.2).** RACK marks a segment lost once a segment sent after it is
delivered (acknowledged or SACKed) and ``RACK.rtt + reo_wnd`` has passed since it was sent.
One SACK is enough, so the dup-ACK threshold of region 1 becomes ``1 + 1 = 2`` packets in
flight (the paper's y_to with ``dup = 1``: Section 2.1's formula), and a loss among the last
``dup_t`` packets other than the very last is detected as any other (tail ``d = 1``). RACK
waits ``reo_wnd = min_RTT/4`` more when fewer than DupThresh segments are SACKed
(Section 6.2 step 4); the fluid model charges no time to a fast retransmit (region 2 costs
``0`` in the paper), so this wait (at most RTT/4 per loss) is left out.

**TLP (RFC 8985 Section 7).** When nothing after the lost segment can be delivered (it is
the last packet, or the window is one segment) the probe timeout fires first::

    PTO = 2 SRTT (+ WCDelAckT = 200 ms when one segment is in flight), at most the RTO;
    PTO = 1 s without an RTT sample                                        (Section 7.2)

Both cases have one segment in flight when the timer is last armed, so
``PTO = min(2 RTT + WCDelAckT, RTO)`` (SRTT = RTT in the fluid model: 0.4 s at RTT = 0.1 s
against RTO = 1 s); the only packet of a one-packet file is lost before any RTT sample, so
its probe waits ``min(1 s, RTO)`` (:func:`pto_s`). The probe repairs the loss:

    region 3 (the last packet): the probe resends it (7.3: no new data left), so
        L_0(y) + PTO + L_{k-1}^RTO(min(MSS, y_bar)),
    the paper's ``RTO`` replaced by the PTO; a later loss of the probe itself is found by the
    RTO (7.3 re-arms it; 7.2 allows no second probe before a new RTT sample), so the
    remaining losses of that last packet cost an RTO each: ``L_j^RTO(r) = L_0(r) +
    sum_{i=1..j} (RTO + E_i[L_0(Y)])`` with ``Y ~ f(., i, r)``, which is the paper's own
    L_j of a state with at most one packet left (all of it is region 3).
    region 1 (one segment in flight, more data to send): the probe is a new segment (7.3),
        its SACK lets RACK mark the lost one and fast recovery starts with
        ``ssthresh = max(FlightSize/2, 2) = 2`` (RFC 5681 Eq. 4, FlightSize = W_f + 1 < 3):
        L_0(y) + PTO + L_{k-1}(y_bar - y; W0 = W_SS = max(ssthresh - 1, 1) = 1),
    the same continuation as region 2 (the paper's ``W_f/2 - 1``, remaining ``y_bar - y``:
    the probe carried one new packet and the lost one is resent).

**SACK (RFC 6675 Section 5).** A recovery repairs every hole below RecoveryPoint (HighData
at entry, the data sent until the loss was detected, about one RTT after it): NextSeg()
rule 1 resends each hole with DupThresh SACKed segments above it as soon as pipe allows,
within the recovery's first RTT; holes closer than DupThresh to HighData wait for rule 3
or the rescue retransmission (rule 4), or for the SACKs of the data sent in recovery (one
RTT more); ``cwnd`` is reduced once per recovery, and the recovery ends when the
cumulative ACK passes RecoveryPoint. (NewReno, RFC 6582, also reduces once but resends
one hole per partial ACK: one RTT per further hole; the paper treats each further loss
as a new one: a new halving and, in a small window, a timeout.) In the recursion: a
first loss in region 2 at y, with ``w`` the bytes sent in the RTT after it at the rate of
the state (:func:`_bytes_in_rtt`, the fluid RecoveryPoint), the other ``k - 1`` losses
are uniform on ``[y, y_bar]``; ``j ~ Binomial(k - 1, q)``, ``q = w / (y_bar - y)``, of them
fall in the recovery's window and are repaired in the same recovery (no time charged,
as the paper charges none to the first one), and the other ``k - 1 - j`` fall on
``[y + w, y_bar]``::

    region 2:  L_0(y) + sum_j Bin(j; k-1, q) [L_0(w; c) + L_{k-1-j}(y_bar - y - w; c')]
               c = max(W_f/2 - 1, 1),  c' = W_f(w; c): the congestion-avoidance window
               after w bytes from c (still W0 = W_SS = c'),

and ``L_0(y_bar - y; c)`` when ``w >= y_bar - y`` (all of them repaired). With j = k - 1
the bracket is ``L_0(y_bar - y; c)``, so one loss is the paper's region 2 unchanged. A
lost retransmission is not modelled (RACK would find it by time, RFC 6675 alone by the
RTO). PRR (RFC 6937) changes how the recovery's sends are spread over its RTT, not how
many (about ssthresh, as RFC 6675's ``cwnd = ssthresh``), so the fluid model has no PRR
axis: ``W_f/2 - 1`` stands for both.

**Early Retransmit (RFC 5827 Section 3.1).** With fewer than ``dup_t + 1`` segments
outstanding and no unsent data the sender lowers DupThresh to ``oseg - 1``: a loss is
repaired by fast retransmit as soon as every byte after it is in the window
(``y_bar - y <= W_f(y) MSS``, from ``y_er`` on) and one packet follows it, so region 1
ends at ``min(y_to, y_er, t)`` and the tail is the last packet only (``d = 1``).

Recoveries (:data:`RECOVERIES`): ``"newreno"`` is the paper's recursion (with Early
Retransmit when ``params.early_retransmit``); ``"sack"`` adds the SACK merge; ``"rack-tlp"``
is SACK with RACK and TLP (``params.dup_lt``, ``tail_retransmit`` and ``early_retransmit``
are then superseded: RACK's marks replace the DupThresh test, as in the simulator).

Solver. Self-contained (the paper's recursion in :mod:`._tables` has its costs built in):
L_j is tabulated over remaining bytes x window parameter for the two post-loss families
(after a timeout ``(1, s)``, after fast recovery ``(c, c)``), level by level, by
Gauss-Legendre quadrature on geometric panels per region and bilinear interpolation into
level j - 1; the requested sizes are integrated from the tables. With ``recovery =
"newreno"`` and no Early Retransmit it reproduces :func:`recursion.expected_latency
<latency_model.model.recursion.expected_latency>` (the test suite bounds the difference).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..checks import check_choice, check_int, check_real, check_sizes
from ..growth import StandardRule
from ..params import TcpParams
from .fluid import l0_and_w_f_unchecked, l0_unchecked, y_f_unchecked
from .losses import LOSS_LAWS, loss_count_pmf
from .recursion import LatencyResult

__all__ = [
    "RECOVERIES",
    "WC_DEL_ACK_T_S",
    "NO_RTT_PTO_S",
    "ModernOptions",
    "pto_s",
    "check_supported",
    "conditional_latency",
    "expected_latency",
    "predict",
    "single_loss_timers",
    "clear_cache",
]

RECOVERIES = ("newreno", "sack", "rack-tlp")
"""Loss recoveries of the model: ``"newreno"`` (the paper's recursion; Early Retransmit when
``params.early_retransmit``), ``"sack"`` (RFC 6675: several losses of one window repaired in
one recovery), ``"rack-tlp"`` (SACK with RFC 8985 RACK loss detection and tail loss probe)."""

WC_DEL_ACK_T_S = 0.2
"""RFC 8985 Section 7.2 WCDelAckT, seconds: added to the PTO with one segment in flight."""

NO_RTT_PTO_S = 1.0
"""RFC 8985 Section 7.2: the PTO before any RTT sample, seconds."""

_GL_CACHE: dict = {}


@dataclass(frozen=True)
class ModernOptions:
    """Resolution of the tabulated recursion.

    Parameters
    ----------
    size_step_packets : float
        Spacing of the table's remaining-size grid up to ``fine_packets``, packets (> 0).
    fine_packets : float
        Size up to which the grid is uniform, packets (> 0); twice the step above it.
    window_step_packets : float
        Spacing of the window-parameter grids, packets (> 0).
    panels : int
        Geometric Gauss-Legendre panels in region 2 (>= 1).
    edge_panels : int
        Panels in regions 1 and 3 (>= 1).
    nodes : int
        Gauss-Legendre nodes per panel (1 .. 20).
    panel_ratio : float
        Width ratio of successive panels (>= 1); the first panel of a region is the
        narrowest, where the first-loss density is largest.
    """

    size_step_packets: float = 0.25
    fine_packets: float = 20.0
    window_step_packets: float = 0.5
    panels: int = 10
    edge_panels: int = 4
    nodes: int = 3
    panel_ratio: float = 1.4

    def __post_init__(self):
        check_real("size_step_packets", self.size_step_packets, low=0.0, low_open=True)
        check_real("fine_packets", self.fine_packets, low=0.0, low_open=True)
        check_real("window_step_packets", self.window_step_packets, low=0.0, low_open=True)
        check_int("panels", self.panels, low=1)
        check_int("edge_panels", self.edge_panels, low=1)
        check_int("nodes", self.nodes, low=1, high=20)
        check_real("panel_ratio", self.panel_ratio, low=1.0)


# ---------------------------------------------------------------------------
# What each recovery changes


@dataclass(frozen=True)
class _Spec:
    """Region bounds and costs of one recovery (see the module docstring)."""

    threshold: float  # window (packets) below which no ACK-based detection is possible
    tail: int         # trailing packets whose loss needs a timer
    er: bool          # Early Retransmit's end of region 1
    merge: bool       # SACK: later losses of the recovery's window repaired in it
    probe: bool       # TLP: regions 1 and 3 cost a PTO


def _spec(params: TcpParams, recovery: str) -> _Spec:
    if recovery == "rack-tlp":
        return _Spec(threshold=2.0, tail=1, er=False, merge=True, probe=True)
    er = bool(params.early_retransmit)
    tail = 1 if (params.tail_retransmit or er) else params.dup_t
    return _Spec(threshold=float(params.timeout_threshold), tail=tail, er=er,
                 merge=recovery == "sack", probe=False)


def pto_s(params: TcpParams, *, one_segment: bool = True, rtt_sample: bool = True) -> float:
    """Tail loss probe timeout of RFC 8985 Section 7.2 in the fluid model, seconds.

    ``PTO = 2 SRTT``, plus ``WCDelAckT`` (200 ms) when one segment is in flight, at most the
    RTO; ``1 s`` (at most the RTO) without an RTT sample. SRTT is the model's RTT.

    Parameters
    ----------
    params : TcpParams
        ``rtt_s`` (seconds) and the RTO (``params.rto``, seconds).
    one_segment : bool
        FlightSize is one segment when the timer is armed (both cases of the model).
    rtt_sample : bool
        An RTT sample has been taken (False: the first flight's first packet).

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    ValueError
        If ``params`` is not a TcpParams or a flag is not a bool.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    for name, flag in (("one_segment", one_segment), ("rtt_sample", rtt_sample)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if not rtt_sample:
        return min(NO_RTT_PTO_S, params.rto)
    return min(2.0 * params.rtt_s + (WC_DEL_ACK_T_S if one_segment else 0.0), params.rto)


def check_supported(params: TcpParams, recovery: str = "rack-tlp") -> None:
    """Raise ValueError unless the model covers ``params`` with ``recovery``.

    Covered: the RFC 5681 rule (:class:`~latency_model.growth.StandardRule`; the last-packet
    levels use its slow start from one segment), any MSS, RTT, p, W0, W_SS, rwnd, b,
    dup_t, dup_lt, RTO and recovery flag.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings.
    recovery : {"newreno", "sack", "rack-tlp"}
        See :data:`RECOVERIES`.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    check_choice("recovery", recovery, RECOVERIES)
    if type(params.rule) is not StandardRule or params.rule.continuous_law(params.b) is None:
        raise ValueError("the modern-recovery model supports rule 'standard' (RFC 5681) with its "
                         f"fluid law, got {params.rule.describe()}")


# ---------------------------------------------------------------------------
# Quadrature


def _gauss(n: int):
    if n not in _GL_CACHE:
        x, w = np.polynomial.legendre.leggauss(n)
        _GL_CACHE[n] = ((x + 1.0) / 2.0, w / 2.0)
    return _GL_CACHE[n]


def _panel_nodes(lo, hi, panels: int, nodes: int, ratio: float):
    """Nodes and weights on [lo, hi] (arrays of shape (S,)): ``panels`` geometric panels,
    the first (at ``lo``) the narrowest; shape (S, panels * nodes). Empty intervals get
    zero weights."""
    x, w = _gauss(nodes)
    widths = ratio ** np.arange(panels)
    edges = np.concatenate([[0.0], np.cumsum(widths)]) / widths.sum()
    frac = (edges[:-1, None] + (edges[1:] - edges[:-1])[:, None] * x[None, :]).ravel()
    wfrac = ((edges[1:] - edges[:-1])[:, None] * w[None, :]).ravel()
    span = np.maximum(hi - lo, 0.0)
    return lo[:, None] + span[:, None] * frac[None, :], span[:, None] * wfrac[None, :]


def _bytes_in_rtt(params: TcpParams, y, w0, wss):
    """Bytes sent in the RTT that follows the first ``y`` bytes of a state (W0, W_SS) at its
    loss-free fluid rate, bytes: the data RFC 6675's RecoveryPoint covers (bisection of L_0)."""
    t_goal = l0_unchecked(params, y, w0, wss, "fluid") + params.rtt_s
    lo = np.array(y, dtype=float, copy=True)
    hi = lo + params.rwnd * params.mss_bytes * 1.000001  # at most M packets per RTT
    for _ in range(48):
        mid = 0.5 * (lo + hi)
        late = l0_unchecked(params, mid, w0, wss, "fluid") >= t_goal
        hi = np.where(late, mid, hi)
        lo = np.where(late, lo, mid)
    return 0.5 * (lo + hi) - y


def _er_start(params: TcpParams, r, w0, wss):
    """RFC 5827: first y from which every byte after the loss fits in the window,
    ``r - y <= W_f(y) MSS`` (bisection; 0 if it holds at y = 0), bytes."""
    mss = float(params.mss_bytes)

    def gap(y):
        return r - y - l0_and_w_f_unchecked(params, y, w0, wss, "fluid")[1] * mss

    lo = np.zeros_like(r)
    hi = np.array(r, dtype=float, copy=True)
    done = gap(lo) <= 0.0
    for _ in range(48):
        mid = 0.5 * (lo + hi)
        inside = gap(mid) <= 0.0
        hi = np.where(inside, mid, hi)
        lo = np.where(inside, lo, mid)
    return np.where(done, 0.0, 0.5 * (lo + hi))


def _last_packet_levels(params: TcpParams, r, k_max: int, opts: ModernOptions) -> np.ndarray:
    """``L_j^RTO(r)`` for r <= MSS (every loss of the last packet costs an RTO), j = 0 ..
    k_max - 1; shape (S, k_max), seconds. ``L_0(y; 1, 2)`` is the slow start from one
    segment after a timeout (W_SS >= 2 is not reached within one packet)."""
    r = np.asarray(r, dtype=float)
    out = np.empty((r.size, max(k_max, 1)))
    one = np.ones_like(r)
    out[:, 0] = l0_unchecked(params, r, one, 2.0 * one, "fluid")
    if k_max <= 1:
        return out
    y, wq = _panel_nodes(np.zeros_like(r), r, 2 * opts.edge_panels, opts.nodes, opts.panel_ratio)
    l0y = l0_unchecked(params, y, one[:, None], 2.0 * one[:, None], "fluid")
    frac = np.clip(1.0 - y / r[:, None], 0.0, 1.0)
    for i in range(1, k_max):
        dens = i / r[:, None] * frac ** (i - 1)
        out[:, i] = out[:, i - 1] + params.rto + np.sum(wq * dens * l0y, axis=1)
    return out


def _bounds(params: TcpParams, spec: _Spec, r, w0, wss):
    """End of region 1 (a) and start of region 3 (t), bytes, for states (r, W0, W_SS)."""
    t = np.maximum(r - spec.tail * float(params.mss_bytes), 0.0)
    a = np.minimum(y_f_unchecked(params, spec.threshold, w0, wss, "fluid"), t)
    if spec.er:
        a = np.minimum(a, _er_start(params, r, w0, wss))
    return np.clip(a, 0.0, r), t


# ---------------------------------------------------------------------------
# Tables over the two post-loss families


@dataclass
class _Grid:
    """Remaining-size grid (bytes) and window grids (packets) of the two families:
    ``T`` (W0 = 1, W_SS = s) and ``F`` (W0 = W_SS = c)."""

    r: np.ndarray
    s: np.ndarray
    c: np.ndarray

    @property
    def n_t(self) -> int:
        return self.r.size * self.s.size

    def corners(self, family: str, r, param):
        """Flat indices (into ``concat(T.ravel(), F.ravel())``) and weights of the four grid
        points around (r, param): bilinear, clamped to the grid; shape (..., 4)."""
        axis = self.s if family == "T" else self.c
        offset = 0 if family == "T" else self.n_t
        r = np.clip(r, self.r[0], self.r[-1])
        param = np.clip(param, axis[0], axis[-1])
        i = np.clip(np.searchsorted(self.r, r, side="right") - 1, 0, self.r.size - 2)
        j = np.clip(np.searchsorted(axis, param, side="right") - 1, 0, axis.size - 2)
        fr = (r - self.r[i]) / (self.r[i + 1] - self.r[i])
        fp = (param - axis[j]) / (axis[j + 1] - axis[j])
        n = axis.size
        idx = np.stack([i * n + j, i * n + j + 1, (i + 1) * n + j, (i + 1) * n + j + 1], axis=-1) + offset
        wts = np.stack([(1 - fr) * (1 - fp), (1 - fr) * fp, fr * (1 - fp), fr * fp], axis=-1)
        return idx, wts


@dataclass
class _Next:
    """Post-loss states of a set of quadrature nodes: table corners and the exact L_0."""

    idx: np.ndarray
    wts: np.ndarray
    l0: np.ndarray


class _Batch:
    """Quadrature of L_k for a batch of states (r, W0, W_SS), all levels.

    ``top``: the transfer's own start (a one-packet head has no RTT sample for the PTO).
    """

    def __init__(self, params: TcpParams, spec: _Spec, grid: _Grid, r, w0, wss, top: bool,
                 opts: ModernOptions):
        mss = float(params.mss_bytes)
        self.spec, self.grid = spec, grid
        r = np.asarray(r, dtype=float)
        w0 = np.broadcast_to(np.asarray(w0, dtype=float), r.shape)
        wss = np.broadcast_to(np.asarray(wss, dtype=float), r.shape)
        self.r = r
        a, t = _bounds(params, spec, r, w0, wss)
        col = (w0[:, None], wss[:, None])
        n, ratio = opts.nodes, opts.panel_ratio
        pto = pto_s(params)
        pto_first = pto_s(params, rtt_sample=False)

        def timer_cost(y):
            if not spec.probe:
                return np.full(y.shape, params.rto)
            if top:  # the head's first packet is lost before any RTT sample
                return np.where(y < mss, pto_first, pto)
            return np.full(y.shape, pto)

        # Region 1: no ACK-based detection.
        y1, q1 = _panel_nodes(np.zeros_like(r), a, opts.edge_panels, n, ratio)
        l01, wf1 = l0_and_w_f_unchecked(params, y1, *col, "fluid")
        rr = r[:, None]
        if spec.probe:  # new-data probe, RACK, fast recovery from ssthresh = 2
            r1 = rr - y1
            fam1, p1 = "F", np.maximum(np.maximum((wf1 + 1.0) / 2.0, 2.0) - 1.0, 1.0)
        else:  # the paper: RTO, go back to the lost packet, W0 = 1
            r1 = np.minimum(rr - y1 + mss, rr)
            fam1, p1 = "T", np.maximum(wf1 / 2.0, 2.0)
        self.reg1 = (y1, q1, l01 + timer_cost(y1), self._next(params, fam1, r1, p1))

        # Region 2: fast retransmit.
        y2, q2 = _panel_nodes(a, t, opts.panels, n, ratio)
        l02, wf2 = l0_and_w_f_unchecked(params, y2, *col, "fluid")
        c2 = np.maximum(wf2 / 2.0 - 1.0, 1.0)
        rem2 = rr - y2
        self.reg2 = (y2, q2, l02)
        if spec.merge:
            w = _bytes_in_rtt(params, y2, *col)
            full = w >= rem2 * (1.0 - 1e-12)
            wcut = np.minimum(w, rem2)
            l0w, cw = l0_and_w_f_unchecked(params, wcut, c2, c2, "fluid")
            self.l0_rem2 = l0_unchecked(params, rem2, c2, c2, "fluid")
            self.full2 = full
            self.q2 = np.where(full, 1.0, wcut / np.where(rem2 > 0, rem2, 1.0))
            self.l0w2 = l0w
            self.next2 = self._next(params, "F", np.maximum(rem2 - wcut, 0.0), cw)
            self.merge_reads: list = []  # L_m at next2, m = 0, 1, ...
        else:
            self.next2 = self._next(params, "F", rem2, c2)

        # Region 3: the tail.
        y3, q3 = _panel_nodes(t, r, opts.edge_panels, n, ratio)
        l03 = l0_unchecked(params, y3, *col, "fluid")
        self.reg3 = (y3, q3, l03 + timer_cost(y3))
        self.r_tail = np.minimum(mss, r)
        self.last = None

    def _next(self, params, family, r_next, param):
        idx, wts = self.grid.corners(family, r_next, param)
        w0 = np.ones_like(param) if family == "T" else param
        l0 = l0_unchecked(params, r_next, w0, param, "fluid")
        return _Next(idx, wts, l0)

    @staticmethod
    def _read(nxt: _Next, m: int, flat_tables: list):
        if m == 0:
            return nxt.l0
        tab = flat_tables[m]
        return np.einsum("...c,...c->...", tab[nxt.idx], nxt.wts)

    def level(self, k: int, flat_tables: list, last_levels: np.ndarray) -> np.ndarray:
        """L_k (k >= 1) of every state of the batch, seconds; ``flat_tables[m]`` holds
        level m (m >= 1) of the grid, ``last_levels`` the L^RTO levels at ``r_tail``."""
        r = self.r[:, None]

        def dens(y):
            return k / r * np.clip(1.0 - y / r, 0.0, 1.0) ** (k - 1)

        y1, q1, base1, next1 = self.reg1
        wq = q1 * dens(y1)
        total = np.sum(wq * (base1 + self._read(next1, k - 1, flat_tables)), axis=1)

        y2, q2, l02 = self.reg2
        wq = q2 * dens(y2)
        if self.spec.merge:
            while len(self.merge_reads) < k:
                self.merge_reads.append(self._read(self.next2, len(self.merge_reads), flat_tables))
            cont = self._merged(k)
        else:
            cont = self._read(self.next2, k - 1, flat_tables)
        total += np.sum(wq * (l02 + cont), axis=1)

        y3, q3, base3 = self.reg3
        wq = q3 * dens(y3)
        total += np.sum(wq * base3, axis=1) + np.sum(wq, axis=1) * last_levels[:, k - 1]
        return total

    def _merged(self, k: int) -> np.ndarray:
        """``sum_j Bin(j; k-1, q) [L_0(w; c) + L_{k-1-j}(rest; c')]`` (``L_0(y_bar - y; c)``
        where the window covers the rest)."""
        q = np.where(self.full2, 0.5, self.q2)
        n = k - 1
        logq, log1q = np.log(q), np.log1p(-q)
        acc = np.zeros(q.shape)
        for m in range(k):  # m = losses left after the window (j = n - m in it)
            logw = (special.gammaln(n + 1) - special.gammaln(m + 1) - special.gammaln(n - m + 1)
                    + m * log1q + (n - m) * logq)
            acc += np.exp(logw) * self.merge_reads[m]
        return np.where(self.full2, self.l0_rem2, self.l0w2 + acc)


class _Tables:
    """Levels 1, 2, ... of L over the grid of post-loss states (computed on demand)."""

    def __init__(self, params: TcpParams, spec: _Spec, r_max: float, opts: ModernOptions):
        mss = float(params.mss_bytes)
        step = opts.size_step_packets * mss
        fine = max(opts.fine_packets * mss, step)
        r_fine = np.arange(step, fine + step / 2, step)
        r_coarse = np.arange(r_fine[-1] + 2 * step, max(r_max, fine) + 2.5 * step, 2 * step)
        ws = opts.window_step_packets
        s_top = max(params.rwnd / 2.0, 2.0 + ws)
        c_top = max(params.rwnd, 1.0 + ws)
        self.grid = _Grid(r=np.concatenate([r_fine, r_coarse]),
                          s=np.arange(2.0, s_top + ws / 2, ws),
                          c=np.arange(1.0, c_top + ws / 2, ws))
        if self.grid.s.size < 2:
            self.grid.s = np.array([2.0, 2.0 + ws])
        if self.grid.c.size < 2:
            self.grid.c = np.array([1.0, 1.0 + ws])
        g = self.grid
        rt, st = np.meshgrid(g.r, g.s, indexing="ij")
        rf, cf = np.meshgrid(g.r, g.c, indexing="ij")
        r_all = np.concatenate([rt.ravel(), rf.ravel()])
        w0_all = np.concatenate([np.ones(rt.size), cf.ravel()])
        wss_all = np.concatenate([st.ravel(), cf.ravel()])
        self.r_max = float(g.r[-1])
        self.params, self.opts = params, opts
        self.batch = _Batch(params, spec, g, r_all, w0_all, wss_all, False, opts)
        self.flat: list = [None]  # level m >= 1: concat(T.ravel(), F.ravel())
        self._last = _last_packet_levels(params, self.batch.r_tail, 1, opts)

    def ensure(self, levels: int) -> None:
        """Compute levels up to ``levels - 1``."""
        if self._last.shape[1] < levels:
            self._last = _last_packet_levels(self.params, self.batch.r_tail, levels, self.opts)
        while len(self.flat) < levels:
            k = len(self.flat)
            self.flat.append(self.batch.level(k, self.flat, self._last))


_CACHE: dict = {}
_CACHE_SIZE = 6


def clear_cache() -> None:
    """Forget the tabulated levels (they are kept per parameter set for reuse across p,
    W0 and W_SS, which they do not depend on)."""
    _CACHE.clear()


def _tables(params: TcpParams, spec: _Spec, r_max: float, opts: ModernOptions) -> _Tables:
    key = (params.mss_bytes, params.rtt_s, params.rwnd, params.b, params.rto, params.rule.describe().__repr__(),
           spec, opts)
    tab = _CACHE.get(key)
    if tab is None or tab.r_max < r_max:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        tab = _Tables(params, spec, r_max, opts)
        _CACHE[key] = tab
    return tab


# ---------------------------------------------------------------------------
# Public API


def _solve(params: TcpParams, sizes: np.ndarray, n_levels: int, recovery: str,
           opts: ModernOptions) -> np.ndarray:
    """L_0 .. L_{n_levels-1} at (sizes, params.w0, params.w_ss); shape (n_sizes, n_levels)."""
    spec = _spec(params, recovery)
    out = np.empty((sizes.size, n_levels))
    w0 = np.full(sizes.shape, params.w0)
    wss = np.full(sizes.shape, params.w_ss)
    out[:, 0] = l0_unchecked(params, sizes, w0, wss, "fluid")
    if n_levels == 1:
        return out
    tab = _tables(params, spec, float(sizes.max()), opts)
    tab.ensure(n_levels - 1)
    top = _Batch(params, spec, tab.grid, sizes, w0, wss, True, opts)
    last = _last_packet_levels(params, top.r_tail, n_levels, opts)
    for k in range(1, n_levels):
        out[:, k] = top.level(k, tab.flat, last)
    return out


def _check(params, recovery, options):
    check_supported(params, recovery)
    opts = ModernOptions() if options is None else options
    if not isinstance(opts, ModernOptions):
        raise ValueError(f"options must be a ModernOptions, got {opts!r}")
    return opts


def conditional_latency(
    params: TcpParams,
    *positional,
    k,
    size_bytes=None,
    size_packets=None,
    recovery: str = "rack-tlp",
    options: ModernOptions | None = None,
) -> np.ndarray:
    """L_k, the expected latency given exactly k losses, with a modern recovery, seconds.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings (StandardRule).
    k : int or sequence of int
        Number(s) of losses (>= 0).
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.
    recovery : {"newreno", "sack", "rack-tlp"}
        See :data:`RECOVERIES` and the module docstring.
    options : ModernOptions, optional
        Resolution.

    Returns
    -------
    ndarray
        Shape ``(n_sizes,)`` for an int ``k``, ``(n_sizes, len(k))`` for a sequence, seconds.

    Raises
    ------
    ValueError
        For a positional size, neither or both size keywords, sizes <= 0, k < 0, an
        unknown recovery or an unsupported rule.
    """
    opts = _check(params, recovery, options)
    sizes = check_sizes("conditional_latency", positional, size_bytes, size_packets, params.mss_bytes)
    scalar = np.ndim(k) == 0
    ks = [check_int("k", kk, low=0) for kk in np.atleast_1d(k)]
    by_k = _solve(params, sizes, max(ks) + 1, recovery, opts)
    out = by_k[:, ks]
    return out[:, 0] if scalar else out


def expected_latency(
    params: TcpParams,
    *positional,
    size_bytes=None,
    size_packets=None,
    recovery: str = "rack-tlp",
    law: str = "paper",
    normalize: bool = True,
    tail: float = 1e-9,
    options: ModernOptions | None = None,
) -> LatencyResult:
    """Expected latency ``sum_k p(k | y) L_k(y)`` (the paper's Eq. 1) with a modern recovery.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings; ``params.p`` sets the loss law.
    size_bytes : array_like, optional
        File sizes, bytes (> 0).
    size_packets : array_like, optional
        File sizes, packets of ``params.mss_bytes`` (> 0); give this or ``size_bytes``.
    recovery : {"newreno", "sack", "rack-tlp"}
        See :data:`RECOVERIES`.
    law : {"paper", "exact"}
        Loss-count law (:func:`latency_model.model.losses.loss_count_pmf`).
    normalize : bool
        Normalise the paper's law to total mass 1 (default).
    tail : float
        Probability of more losses left out of the sum, in (0, 1) (default 1e-9).
    options : ModernOptions, optional
        Resolution.

    Returns
    -------
    LatencyResult
        As :func:`latency_model.model.recursion.expected_latency` (seconds).

    Raises
    ------
    ValueError
        As :func:`conditional_latency`, and for an unknown law or a tail outside (0, 1).
    """
    opts = _check(params, recovery, options)
    sizes = check_sizes("expected_latency", positional, size_bytes, size_packets, params.mss_bytes)
    check_choice("law", law, LOSS_LAWS)
    counts = loss_count_pmf(sizes, params.p, params.mss_bytes, law=law, normalize=normalize, tail=tail)
    cond = _solve(params, sizes, counts.k_max, recovery, opts)
    return LatencyResult(sizes_bytes=sizes, expected_latency_s=counts.expectation(cond), conditional_latency_s=cond,
                         loss_pmf=counts.pmf, truncated_mass=counts.truncated_mass, raw_mass=counts.raw_mass)


def single_loss_timers(
    params: TcpParams,
    *positional,
    size_bytes=None,
    size_packets=None,
    recovery: str = "rack-tlp",
) -> dict:
    """Where one loss needs a timer, in the model: the widths of the first-loss regions 1 and
    3 at the transfer's start, and which timer repairs them.

    With ``recovery="rack-tlp"`` both regions are repaired by a tail loss probe (the first
    packet of a one-packet file by a probe after ``min(1 s, RTO)``); otherwise by the RTO.

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings (W0, W_SS from it).
    size_bytes, size_packets : array_like, optional
        File sizes in bytes or packets (> 0); give exactly one.
    recovery : {"newreno", "sack", "rack-tlp"}
        See :data:`RECOVERIES`.

    Returns
    -------
    dict of ndarray
        ``region1_packets`` (a / MSS: the paper's y_to, cut at the tail), ``tail_packets``
        ((y_bar - t) / MSS), ``rto_packets`` and ``probe_packets`` (their sum, by timer),
        all in packets, one entry per size.

    Raises
    ------
    ValueError
        As :func:`conditional_latency`.
    """
    check_supported(params, recovery)
    sizes = check_sizes("single_loss_timers", positional, size_bytes, size_packets, params.mss_bytes)
    spec = _spec(params, recovery)
    mss = float(params.mss_bytes)
    a, t = _bounds(params, spec, sizes, np.full(sizes.shape, params.w0), np.full(sizes.shape, params.w_ss))
    region1, tail = a / mss, (sizes - t) / mss
    zero = np.zeros(sizes.shape)
    timed = region1 + tail
    return {"region1_packets": region1, "tail_packets": tail,
            "rto_packets": zero if spec.probe else timed, "probe_packets": timed if spec.probe else zero}


def predict(params: TcpParams, sizes_bytes, *, recovery: str = "rack-tlp",
            options: ModernOptions | None = None, law: str = "paper"):
    """Registry form (``check_supported`` / ``predict``): :func:`expected_latency` as a
    :class:`~latency_model.model.registry.Prediction` (seconds; sizes in bytes, > 0).

    Parameters
    ----------
    params : TcpParams
        Path and TCP settings.
    sizes_bytes : array_like
        File sizes, bytes (> 0).
    recovery : {"newreno", "sack", "rack-tlp"}
        See :data:`RECOVERIES`.
    options : ModernOptions, optional
        Resolution.
    law : {"paper", "exact"}
        Loss-count law.
    """
    from .registry import Prediction

    res = expected_latency(params, size_bytes=sizes_bytes, recovery=recovery, options=options, law=law)
    return Prediction(model="modern", sizes_bytes=res.sizes_bytes, expected_latency_s=res.expected_latency_s,
                      conditional_latency_s=res.conditional_latency_s)
