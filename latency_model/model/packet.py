"""Packet-level latency model: the expectation over loss patterns.

The RFC sender and receiver (:mod:`._packet_engine`) are a deterministic function of
which data transmissions the path drops, and each transmission is dropped
independently with probability p (paper, Section 2). This module computes the
latency's expectation over that Bernoulli tree by a dynamic programme, in one of two
forms (``method``): the *level DP* (the default; :mod:`._packet_levels`, docs/model.md
section 2), which cuts the unbounded transfer at every new segment and keys states
relative to snd_max so that 1000 packets are reachable, and the *tree DP* below (exact
up to ``eps``, for short files, p = 0 and the 90th percentile):

* a *state* is the whole system just before a data arrival (sender and receiver
  variables and the pending events, times relative to that instant);
* a state has two successors, the arrival delivered (probability 1 - p) or lost (p),
  each run deterministically to the next data arrival;
* states with equal keys are merged, carrying the probability P and the sum
  P x (elapsed time) of the paths that reached them; by linearity E[T] is the sum over
  finished paths, exactly;
* every data arrival consumes one transmission, so the "level" (transmissions resolved)
  orders the states topologically: level l only feeds level l + 1;
* states below ``eps`` probability are dropped; their mass is reported
  (:attr:`PacketResult.dropped_mass`) and bounds the truncation error;
* above ``max_states`` states per level the improbable ones are folded into a kept state
  of the same coarse signature (the only approximation; docs/model.md, section 3.1);
* all sizes with the same last-segment length share one DP: the largest size's states
  serve every smaller size until its end first matters (:func:`_valid_from`), then that
  size continues on its own frontier (:func:`_solve_group`).

No random numbers and no call into the simulator: this is an independent second answer
(docs/model.md derives it and lists each rule with its RFC section).

The sender (``PathConfig.sender``) is the RFC one by default or ns-3.37's TcpNewReno with
classic recovery and its timer (``"ns3"``, the ``ns3`` stack profile's: Reno marks and
pipe accounting, ssthresh from the pipe, no window inflation, integer congestion
avoidance, the back-off ending at every new ACK, ns-3's RTT history; the simulator's
``sim/ns3.py`` cites ns-3's source for each rule): the same rules written again in both
engines, checked against the simulator's ns3 sender path by path
(``tests/test_model_packet_ns3.py``; docs/model.md section 6.9), or the SACK sender
(``"sack"``, the ``linux`` profile's: RFC 6675 recovery, PRR, RACK-TLP; with RFC 7323
timestamps, which the RFC sender can take too) in the object engine only
(:mod:`._packet_sack`), so on the tree DP (``tests/test_model_packet_sack.py``).

Time model (``serialisation``): ``"exact"`` clocks every packet onto the link (MSS +
header bytes at ``link_rate_bps``) as the simulator's link does; ``"rounds"`` sets the
serialisation time to zero, so every time is a sum of one-way delays and timer values
(more states coincide in the tree DP), and adds back the serialisation the loss-free
transfer accumulates (``exact`` L_0 minus ``rounds`` L_0). ``"auto"`` (default) is
``"exact"``, with ``quantiles=True`` too since 2026-11-28 (``"rounds"`` before: its
branch times fell on the histogram's 1 ms bins; each bin now carries its paths' mean
time, so the exact model's times need no grid: docs/model.md section 6.7). The rounds
model makes a data arrival and a timer due in the same rounds instant run in their
scheduling order where the serialisation puts the arrival after the timer; with delayed
ACKs and a round trip at or above the delayed-ACK timeout that changes the ACKs sent
(LT, b = 2, W0 = 3, p = 0.03, RTT 0.3 s, 20 packets: 5.7 % low; docs/model.md section
6.10). ``"rounds"`` was the default until 2026-11-27.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from ..accel import numba_available
from ..checks import check_array, check_choice, check_int, check_packet_work, check_real
from ..growth import StandardRule
from ..params import TcpParams
from ..results import ResultData
from . import _packet_engine as E
from . import _packet_flat as F
from . import _packet_sack as XS

SENDERS = ("rfc", "ns3", "sack")
"""The senders the packet model runs (:attr:`PathConfig.sender`)."""
PRR_MODES = ("off", "ssrb", "crb")
"""cwnd in the SACK sender's recovery (:attr:`PathConfig.prr`)."""
from . import _packet_levels as LV

__all__ = ["PacketResult", "PathConfig", "expected_latency", "scripted_latency",
           "check_supported", "predict", "warm"]

SERIALISATION = ("auto", "exact", "rounds")


@dataclass(frozen=True)
class PathConfig:
    """What the packet-level model needs beyond :class:`TcpParams` (the simulator's ``rfc``
    profile by default; the model does not import the simulator, so the values are
    restated here: ``latency_model.sim.profiles.STACKS['rfc']``).

    Parameters
    ----------
    link_rate_bps : float
        Link rate, bit/s (> 0). Default 100e6.
    header_bytes : int
        Per-packet header serialised with each segment, bytes (>= 0). Default 40.
    delay_s : float or None
        One-way delay, seconds (>= 0); None: ``rtt_s / 2``.
    delack_timeout_s : float
        Delayed-ACK timer, seconds (> 0). Default 0.2 (RFC 5681 Section 4.2).
    min_rto_s, initial_rto_s, max_rto_s : float
        RFC 6298 (2.4), (2.1), (2.5), seconds. Defaults 1, 1, 60.
    fin : bool
        The last segment carries FIN and is acknowledged at once. Default True.
    quick_acks : int
        The receiver's first ``quick_acks`` ACKs go out at once, every in-order segment
        acknowledged without delay while they last (>= 0; ns-3: 1, Linux: 16; the
        simulator's ``SimConfig.quick_acks``). Default 0 (RFC 5681 Section 4.2).
    clock_granularity_s : float
        RFC 6298 clock granularity G, seconds (>= 0): RTO = SRTT + max(G, 4 RTTVAR)
        (ns-3: 1 ms; Linux, which floors its variation at the minimum RTO: 200 ms).
        Default 0.
    backoff_collapses : bool
        The RTO is recomputed from the estimator at every new ACK, a valid RTT sample or
        not, so a timeout's back-off ends at the first new ACK (ns-3.37's
        ``TcpSocketBase::NewAck``; the simulator's ``ns3`` sender). Default False: RFC 6298
        Section 5 with Karn's rule keeps the backed-off RTO until a valid sample.
    fixed_rto : bool
        The paper's timer (the simulator's ``rto_rule="paper"``): the RTO is always
        ``TcpParams.rto`` (``rto_s``, else max(1 s, 4 RTT)), with no estimator and no
        back-off. Default False (RFC 6298).
    sender : {"rfc", "ns3"}
        The sender: ``"rfc"`` (RFC 5681, 6582, 3042, 5827, 6298 with Karn's rule; the
        default) or ``"ns3"``, ns-3.37's TcpNewReno with TcpClassicRecovery and its timer
        as the simulator's ``ns3`` sender runs them (``sim/ns3.py``; docs/simulator.md,
        "The ns3 sender"): pipe accounting with Reno marks, no window inflation, ssthresh
        from the pipe, integer congestion avoidance, the back-off ending at every new ACK,
        RTT samples from the oldest entry of the RTT history, the SYN-ACK's sample first.
        With ``"ns3"``: variants NewReno and LT only (no tail rule, no Early Retransmit)
        and no ``fixed_rto``; ``backoff_collapses`` is part of the sender. ``"sack"``: the
        ``linux`` profile's sender as the simulator's ``sim/kernel_sack.py`` runs it: RFC 2018
        SACK blocks from the receiver, RFC 6675 loss recovery (scoreboard, IsLost, pipe,
        NextSeg with the rescue retransmission), cwnd in recovery by ``prr``, RFC 8985
        RACK-TLP with ``rack_tlp`` (:mod:`._packet_sack`); every variant (the tail rule
        and Early Retransmit lower DupThresh, as the simulator's; RACK replaces both).
        The SACK sender and timestamps run on the tree DP only.
    prr : {"off", "ssrb", "crb"}
        cwnd in the SACK sender's recovery: RFC 6937 PRR with slow-start reduction bound
        (``"ssrb"``, Linux's) or conservative bound (``"crb"``), or cwnd = ssthresh
        (``"off"``, RFC 6675 step 4.2, the default). Only with ``sender="sack"``.
    rack_tlp : bool
        RFC 8985 RACK-TLP in the SACK sender (time-based loss marks, the tail loss probe;
        Linux's default). Only with ``sender="sack"``. Default False.
    timestamps : bool
        RFC 7323 timestamps: every new ACK gives the RTT sample now - TSecr, a
        retransmission's too (Linux's default). Not with ``sender="ns3"``, which has its
        own sampling. Default False (Karn's rule).
    handshake_rtt : bool
        The estimator (and RACK's min_RTT) starts from the SYN / SYN-ACK exchange's sample,
        2 d plus two serialisations of the header + 8 option bytes (the simulator's
        ``SimConfig.handshake_rtt``, the linux profile's). Not with ``sender="ns3"``, which
        takes its own. Default False.
    """

    link_rate_bps: float = 100e6
    header_bytes: int = 40
    delay_s: float | None = None
    delack_timeout_s: float = 0.2
    min_rto_s: float = 1.0
    initial_rto_s: float = 1.0
    max_rto_s: float = 60.0
    fin: bool = True
    quick_acks: int = 0
    clock_granularity_s: float = 0.0
    backoff_collapses: bool = False
    fixed_rto: bool = False
    sender: str = "rfc"
    prr: str = "off"
    rack_tlp: bool = False
    timestamps: bool = False
    handshake_rtt: bool = False

    def __post_init__(self) -> None:
        check_real("link_rate_bps", self.link_rate_bps, low=0.0, low_open=True)
        check_int("header_bytes", self.header_bytes, low=0)
        if self.delay_s is not None:
            check_real("delay_s", self.delay_s, low=0.0)
        check_real("delack_timeout_s", self.delack_timeout_s, low=0.0, low_open=True)
        check_real("min_rto_s", self.min_rto_s, low=0.0, low_open=True)
        check_real("initial_rto_s", self.initial_rto_s, low=0.0, low_open=True)
        check_real("max_rto_s", self.max_rto_s, low=max(self.min_rto_s, self.initial_rto_s))
        if not isinstance(self.fin, bool):
            raise ValueError(f"fin must be True or False, got {self.fin!r}")
        check_int("quick_acks", self.quick_acks, low=0)
        check_real("clock_granularity_s", self.clock_granularity_s, low=0.0)
        for name in ("backoff_collapses", "fixed_rto", "rack_tlp", "timestamps", "handshake_rtt"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        check_choice("sender", self.sender, SENDERS)
        if self.sender == "ns3" and self.fixed_rto:
            raise ValueError("sender 'ns3' runs ns-3's timer: fixed_rto must be False")
        check_choice("prr", self.prr, PRR_MODES)
        if self.sender != "sack" and (self.prr != "off" or self.rack_tlp):
            raise ValueError(f"prr and rack_tlp need sender 'sack', got sender {self.sender!r} "
                             f"with prr {self.prr!r}, rack_tlp {self.rack_tlp}")
        if self.sender == "ns3" and self.handshake_rtt:
            raise ValueError("sender 'ns3' takes ns-3's SYN-ACK sample: handshake_rtt must be False")
        if self.sender == "ns3" and self.timestamps:
            raise ValueError("sender 'ns3' samples RTTs as ns-3 does: timestamps must be False")

    @property
    def object_engine_only(self) -> bool:
        """True where only the tree DP's object engine runs the path (the SACK sender,
        timestamps): the level DP's flat engine has neither."""
        return self.sender == "sack" or self.timestamps


@dataclass(frozen=True)
class PacketResult(ResultData):
    """The packet-level model's answer for one file size (``to_dict()``, ``to_frame()``: one row).

    Attributes
    ----------
    size_bytes : int
        File size, bytes.
    expected_latency_s : float
        E[T], seconds: first data segment sent -> ACK of the last byte at the sender.
    conditional_latency_s : ndarray
        L_k = E[T | k data transmissions lost], k = 0 .. K-1, seconds (NaN where the
        probability of k losses is 0 or was entirely truncated).
    loss_count_pmf : ndarray
        P(k losses), k = 0 .. K-1.
    p90_latency_s : float
        90th percentile of T, seconds, from the finished paths' times (NaN unless
        ``quantiles=True``; merged states carry a histogram of elapsed time then).
    dropped_mass : float
        Probability of the paths dropped below ``eps`` (their contribution is missing
        from ``expected_latency_s``, which is therefore a lower bound plus at most
        ``dropped_mass`` x their remaining latency; with ``complete=True`` they are
        booked loss-free instead), plus with ``tiers=2`` the mass finished loss-free.
        The level DP drops nothing (0). Relative-state method: a union bound on the
        probability that a loss its truncation left out occurs (each truncation point's
        probability x 1 - (1 - p)^a, a the data arrivals of the loss-free continuation it
        takes; docs/packet-model.md section 6).
    states : int
        States expanded for this size (a cost measure; a state of the shared DP counts
        for every size it serves, so the sum over sizes overstates the work).
    rto_above_min_mass : float
        Probability that some RTT sample set the RTO above its minimum (the estimator is
        not part of the merge key, so results are exact only where this is 0).
    aggregated_mass : float
        Probability folded into kept states, summed over levels (it can exceed 1: the
        same paths can be folded at several levels); 0 when no level was bounded.
    extrapolated : bool
        Level DP: the size lies beyond the level where the distribution became
        stationary and was extrapolated by the per-packet increment (L_k and P(k) NaN).
    """

    size_bytes: int
    expected_latency_s: float
    conditional_latency_s: np.ndarray
    loss_count_pmf: np.ndarray
    p90_latency_s: float
    dropped_mass: float
    states: int
    rto_above_min_mass: float
    aggregated_mass: float = 0.0
    extrapolated: bool = False


def check_supported(params: TcpParams) -> None:
    """Raise ValueError unless the packet model covers ``params`` (registry entry ``packet``):
    p in [0, 0.5]. With ``config`` (the simulator's transitions) every registered growth
    rule; otherwise the RFC 5681 rule (:func:`check_rule`). Covered: any W0, W_SS, rwnd, b,
    dup_t and recovery variant (NewReno, Limited Transmit with ``dup_lt``, the paper's
    proposal, Early Retransmit).
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    if params.p > 0.5:
        raise ValueError(f"the packet model supports p in [0, 0.5], got p = {params.p:g}")


def check_rule(params: TcpParams) -> None:
    """Raise ValueError unless ``params.rule`` is the RFC 5681 rule without byte counting,
    the one rule the model's own engines (``path``) run; ``config`` runs every rule."""
    if type(params.rule) is not StandardRule or params.rule.abc_l is not None:
        got = (f"byte counting (abc_l = {params.rule.abc_l:g})" if type(params.rule) is StandardRule
               else f"rule {params.rule.describe().get('name', type(params.rule).__name__)!r}")
        raise ValueError("the packet model supports rule 'standard' without byte counting "
                         f"(RFC 5681) unless given config (the simulator's transitions), got {got}")


def check_sender(params: TcpParams, path: PathConfig) -> None:
    """Raise ValueError unless ``path.sender`` can run ``params``: the ``ns3`` sender has
    no tail rule (the paper's proposal) and no Early Retransmit, as ns-3.37 without SACK
    (``sim.ns3.check_ns3_params``); with RACK-TLP (``path.rack_tlp``, the linux profile's)
    the SACK sender's loss marks and pipe are RACK's, so Early Retransmit, which lowers
    DupThresh, would change nothing: refused, as the simulator does
    (``sim.transfer.check_recovery``). This is the packet model's path-dependent part of
    :func:`check_supported` (which sees ``params`` only)."""
    if path.sender == "ns3" and (params.tail_retransmit or params.early_retransmit):
        raise ValueError("sender 'ns3' has no tail retransmission (the paper's proposal) and no "
                         "Early Retransmit: use variant newreno or lt")
    if path.rack_tlp and params.early_retransmit:
        raise ValueError("early_retransmit (variant er) has no effect under RACK-TLP (rack_tlp on, the linux "
                         "profile's loss detection: RACK marks the losses, not the DupThresh Early Retransmit "
                         "lowers); turn it off (--no-rack-tlp) or use another variant")


def _const(params: TcpParams, size_bytes: int, path: PathConfig, serial: bool) -> E._Const:
    return E._Const(
        size_bytes=size_bytes, mss=params.mss_bytes, rwnd_packets=params.rwnd, b=params.b,
        dup_t=params.dup_t, dup_lt=params.dup_lt, tail=params.tail_retransmit,
        er=params.early_retransmit,
        d=path.delay_s if path.delay_s is not None else params.rtt_s / 2.0,
        ser_per_byte=8.0 / path.link_rate_bps if serial else 0.0,
        header=path.header_bytes, delack=path.delack_timeout_s, min_rto=path.min_rto_s,
        max_rto=path.max_rto_s, init_rto=path.initial_rto_s, fin=path.fin,
        quick_acks=path.quick_acks, clock_granularity=path.clock_granularity_s,
        backoff_collapses=path.backoff_collapses, fixed_rto=params.rto if path.fixed_rto else 0.0,
        sender=path.sender, prr=path.prr, rack_tlp=path.rack_tlp, timestamps=path.timestamps,
        handshake_rtt=path.handshake_rtt, extension=XS)


def _start(c: E._Const, params: TcpParams) -> tuple[E._State, float]:
    s = E.initial_state(c, params.w0, params.w_ss)
    E.send_allowed(c, s, 0.0)
    t = E.run_to_branch(c, s)
    return s, t


def _path_args(path, options):
    if path is None:
        path = PathConfig(**options)
    elif options:
        raise ValueError(f"give path=PathConfig(...) or its fields, not both: {sorted(options)}")
    if not isinstance(path, PathConfig):
        raise ValueError(f"path must be a PathConfig, got {path!r}")
    return path


def scripted_latency(params: TcpParams, *positional, size_bytes: int, drops=(),
                     path: PathConfig | None = None, serialisation: str = "exact",
                     **options) -> float:
    """Latency of one transfer with scripted losses, seconds (the engine on one path).

    Parameters
    ----------
    params : TcpParams
        TCP parameters (``p`` is ignored).
    size_bytes : int
        File size, bytes (>= 1).
    drops : mapping or iterable of int
        Segment (0-based) -> how many of its first transmissions are lost, or a list of
        segments whose first transmission is lost.
    path : PathConfig, optional
        Path settings (or give its fields as keywords).
    serialisation : {"exact", "rounds"}
        Serialisation time per packet, or none (see the module docstring).

    Returns
    -------
    float
        First segment sent -> ACK of the last byte at the sender, seconds.

    Raises
    ------
    ValueError
        For a positional size, bad sizes, drops outside the file, or bad settings.
    """
    if positional:
        raise ValueError("scripted_latency: pass the size as size_bytes=... (keyword)")
    check_supported(params)
    check_rule(params)
    path = _path_args(path, options)
    check_sender(params, path)
    check_choice("serialisation", serialisation, ("exact", "rounds"))
    size = check_int("size_bytes", size_bytes, low=1)
    c = _const(params, size, path, serialisation == "exact")
    left = {}
    items = drops.items() if hasattr(drops, "items") else [(k, 1) for k in drops]
    for seg, times in items:
        seg = check_int("drops segment", seg, low=0, high=c.n - 1)
        left[seg] = left.get(seg, 0) + check_int("drops count", times, low=1)
    s, t = _start(c, params)
    total = t
    while not s.done:
        seg = E.head_segment(c, s)
        lost = left.get(seg, 0) > 0
        if lost:
            left[seg] -= 1
        E.deliver_head(c, s, lost)
        total += E.run_to_branch(c, s)
    return total


def _child(c, st, lost, w, P, PT, H, nk, bin_s):
    """One branch of a branch point: the child state, its mass vectors and histogram."""
    ch = st.copy()
    E.deliver_head(c, ch, lost)
    dt = E.run_to_branch(c, ch)
    if lost:
        cp = [0.0] + [w * x for x in P[:-1]]
        cpt = [0.0] + [w * (PT[i] + P[i] * dt) for i in range(nk - 1)]
        cp[-1] += w * P[-1]
        cpt[-1] += w * (PT[-1] + P[-1] * dt)
    else:
        cp = [w * x for x in P]
        cpt = [w * (PT[i] + P[i] * dt) for i in range(nk)]
    return ch, cp, cpt, (None if H is None else _shifted(H, dt, bin_s, w))


def _shifted(H: dict, dt: float, bin_s: float, w: float = 1.0) -> dict:
    """Histogram ``H`` of elapsed time (bin -> [mass, mass x time]) with every path
    ``dt`` seconds later and its mass times ``w``. A bin's paths move as a block: their
    mass x time grows by mass x dt exactly, and they join the bin of their new mean
    time, so the rounding to a bin never accumulates from branch to branch."""
    out = {}
    for mass, mt in H.values():
        if mass > 0.0:
            mt2 = w * (mt + mass * dt)
            _bin_add(out, int(mt2 / (w * mass) / bin_s + 0.5), w * mass, mt2)
    return out


def _add_hist(into: dict, H: dict) -> None:
    """Add histogram ``H`` into ``into`` (bin -> [mass, mass x time], in place)."""
    for b_, (mass, mt) in H.items():
        _bin_add(into, b_, mass, mt)


def _bin_add(into: dict, b_: int, mass: float, mt: float) -> None:
    """Add ``mass`` and ``mt`` (mass x time) to bin ``b_`` of histogram ``into``."""
    e = into.get(b_)
    if e is None:
        into[b_] = [mass, mt]
    else:
        e[0] += mass
        e[1] += mt


class _Acc:
    """What one file size accumulates: finished mass and time per loss count, histogram,
    dropped / estimator / folded mass, states expanded."""

    __slots__ = ("done_p", "done_pt", "hist", "dropped", "est", "agg", "expanded")

    def __init__(self, nk):
        self.done_p = [0.0] * nk
        self.done_pt = [0.0] * nk
        self.hist = {}
        self.dropped = 0.0
        self.est = 0.0
        self.agg = 0.0
        self.expanded = 0

    def finish(self, ch, cp, cpt, ch_h):
        dp, dpt = self.done_p, self.done_pt
        for i in range(len(cp)):
            dp[i] += cp[i]
            dpt[i] += cpt[i]
        if ch.rto_above_min:
            self.est += sum(cp)
        if ch_h is not None:
            _add_hist(self.hist, ch_h)


def _finish_lossfree(c, st, t, P, PT, H, acc, bin_s, step=False):
    """Book a truncated state as if no later transmission were lost: run ``st`` (a copy;
    with ``step`` its head arrival is delivered first) to the end; ``t`` seconds already
    elapsed since the state's branch point are added. Underestimates that state's
    remaining time by its later losses' cost (docs/model.md, truncation)."""
    s = st.copy()
    if step:
        E.deliver_head(c, s, False)
        t += E.run_to_branch(c, s)
    while not s.done:
        E.deliver_head(c, s, False)
        t += E.run_to_branch(c, s)
    acc.finish(s, P, [PT[i] + P[i] * t for i in range(len(P))],
               None if H is None else _shifted(H, t, bin_s))


def _merge(nxt, ch, cp, cpt, ch_h):
    key = ch.key()
    ent = nxt.get(key)
    if ent is None:
        nxt[key] = [ch, cp, cpt, ch_h]
        return
    if sum(cp) > sum(ent[1]):
        ent[0] = ch
    ent[1] = [a + b_ for a, b_ in zip(ent[1], cp)]
    ent[2] = [a + b_ for a, b_ in zip(ent[2], cpt)]
    if ch_h is not None:
        _add_hist(ent[3], ch_h)


def _valid_from(s, partial: bool, tail_dup: int) -> int:
    """Smallest file size (segments) whose process is still the largest size's one at
    state ``s`` (sizes of one group share the last segment's length).

    A size-n transfer differs from a longer one only where the engine looks at n: sending
    segment n - 1 or beyond (``send_allowed``, ``_transmit``'s last-segment serialisation,
    the FIN at the receiver, the final ACK), the length of segment n - 1 when it is the
    next to send and shorter than an MSS (``send_allowed``, Early Retransmit's
    ``can_new``), and the paper's tail rule (``una >= n - dup_t``, ``_dup_ack``). All of
    these need snd_max >= n (snd_max >= n - 1 with a short last segment) or
    snd_una >= n - dup_t; below, the two processes are the same state machine."""
    v = s.smax + (2 if partial else 1)
    if tail_dup:
        u = s.una + tail_dup + 1
        if u > v:
            v = u
    return v


def _solve_group(params: TcpParams, sizes: list, path: PathConfig, serial: bool, eps: float,
                 n_k: int, quantiles: bool, bin_s: float, max_states: int = 0,
                 complete: bool = False, tiers: int = 1) -> dict:
    """The forward DP for several sizes at once (bytes, increasing, equal ``size % mss``).

    One *shared* frontier runs the largest size; a state of it serves every smaller size n
    with ``n >= _valid_from(state)`` (the same state machine there). When a branch takes
    the largest size's child past size n, the same branch is taken again from the parent
    with size n's constants and the child joins size n's *private* frontier, which then
    runs on its own. With ``max_states=0`` this is the per-size DP exactly (states of
    one size are only not merged across the shared/private split, which changes nothing
    but the ``eps`` truncation). Returns {size_bytes: _Acc}."""
    p = params.p
    nk = n_k + 1  # last bin: n_k losses or more
    consts = [_const(params, size, path, serial) for size in sizes]
    ns = [c.n for c in consts]
    m = len(sizes) - 1  # index of the largest size (the shared one)
    cmax = consts[m]
    partial = cmax.last_len != cmax.mss
    tail_dup = cmax.dup_t if cmax.tail else 0
    acc = [_Acc(nk) for _ in sizes]
    branches = ((False, 1.0 - p), (True, p)) if p > 0.0 else ((False, 1.0),)
    # per-size attributions of shared quantities: difference arrays over size index
    d_drop = [0.0] * (m + 2)
    d_est = [0.0] * (m + 2)
    d_agg = [0.0] * (m + 2)
    d_exp = [0] * (m + 2)

    def start(c):
        s0, t0 = _start(c, params)
        P0 = [0.0] * nk
        PT0 = [0.0] * nk
        P0[0], PT0[0] = 1.0, t0
        return [s0, P0, PT0, {int(t0 / bin_s + 0.5): [1.0, t0]} if quantiles else None]

    shared: dict = {}
    private = [dict() for _ in range(m)]
    e0 = start(cmax)
    v0 = _valid_from(e0[0], partial, tail_dup)
    for i in range(m):
        if ns[i] < v0:
            ei = start(consts[i])
            private[i][ei[0].key()] = ei
    shared[e0[0].key()] = e0

    def prune(frontier, attribute, finish_lossfree):
        """Truncate states under eps (finished loss-free if ``complete``), fold above
        max_states; ``attribute(state, kind, mass)`` books the truncated / folded mass."""
        kept = {}
        for key, ent in frontier.items():
            mass = sum(ent[1])
            if mass < eps:
                attribute(ent[0], "drop", mass)
                if complete:
                    finish_lossfree(ent)
                elif ent[0].rto_above_min:
                    attribute(ent[0], "est", mass)
            else:
                kept[key] = ent
        if max_states and len(kept) > max_states:
            folded, truncated = _aggregate(kept, max_states, cmax.mss, tiers)
            for st, mass in folded:
                attribute(st, "agg", mass)
            for ent in truncated:  # tier 2: always finished loss-free
                attribute(ent[0], "drop", sum(ent[1]))
                finish_lossfree(ent)
        return kept

    def attr_shared(st, kind, mass):
        j = bisect.bisect_left(ns, _valid_from(st, partial, tail_dup), 0, m)
        (d_drop if kind == "drop" else d_est if kind == "est" else d_agg)[j] += mass

    def attr_private(i):
        a = acc[i]

        def f(st, kind, mass):
            if kind == "drop":
                a.dropped += mass
            elif kind == "est":
                a.est += mass
            else:
                a.agg += mass
        return f

    def finish_shared(ent):
        """A truncated shared state, run loss-free to the end for every size it serves
        (a size branches off where its end first matters, as in the DP)."""
        st, P, PT, H = ent
        lo = bisect.bisect_left(ns, _valid_from(st, partial, tail_dup), 0, m)
        s = st.copy()
        t = 0.0
        while not s.done:
            prev = s.copy() if lo < m else None
            E.deliver_head(cmax, s, False)
            dt = E.run_to_branch(cmax, s)
            if lo < m:
                hi = m if s.done else bisect.bisect_left(
                    ns, _valid_from(s, partial, tail_dup), lo, m)
                for i in range(lo, hi):
                    _finish_lossfree(consts[i], prev, t, P, PT, H, acc[i], bin_s, step=True)
                lo = max(lo, hi)
            t += dt
        _finish_lossfree(cmax, s, t, P, PT, H, acc[m], bin_s)

    def finish_private(i):
        return lambda ent: _finish_lossfree(consts[i], ent[0], 0.0, ent[1], ent[2], ent[3],
                                            acc[i], bin_s)

    while shared or any(private):
        nshared: dict = {}
        nprivate = [dict() for _ in range(m)]
        amax = acc[m]
        for st, P, PT, H in shared.values():
            amax.expanded += 1
            lo = bisect.bisect_left(ns, _valid_from(st, partial, tail_dup), 0, m)
            d_exp[lo] += 1
            for lost, w in branches:
                ch, cp, cpt, chh = _child(cmax, st, lost, w, P, PT, H, nk, bin_s)
                if ch.done:
                    amax.finish(ch, cp, cpt, chh)
                    hi = m
                else:
                    _merge(nshared, ch, cp, cpt, chh)
                    hi = bisect.bisect_left(ns, _valid_from(ch, partial, tail_dup), lo, m)
                for i in range(lo, hi):  # sizes this branch takes past their end
                    ci, cpi, cpti, chhi = _child(consts[i], st, lost, w, P, PT, H, nk, bin_s)
                    if ci.done:
                        acc[i].finish(ci, cpi, cpti, chhi)
                    else:
                        _merge(nprivate[i], ci, cpi, cpti, chhi)
        for i in range(m):
            c = consts[i]
            a = acc[i]
            nx = nprivate[i]
            for st, P, PT, H in private[i].values():
                a.expanded += 1
                for lost, w in branches:
                    ch, cp, cpt, chh = _child(c, st, lost, w, P, PT, H, nk, bin_s)
                    if ch.done:
                        a.finish(ch, cp, cpt, chh)
                    else:
                        _merge(nx, ch, cp, cpt, chh)
        shared = prune(nshared, attr_shared, finish_shared)
        private = [prune(nprivate[i], attr_private(i), finish_private(i)) for i in range(m)]
    run_drop = run_est = run_agg = 0.0
    run_exp = 0
    for i in range(m):
        run_drop += d_drop[i]
        run_est += d_est[i]
        run_agg += d_agg[i]
        run_exp += d_exp[i]
        acc[i].dropped += run_drop
        acc[i].est += run_est
        acc[i].agg += run_agg
        acc[i].expanded += run_exp
    a = acc[m]
    a.dropped += sum(d_drop)
    a.est += sum(d_est)
    a.agg += sum(d_agg)
    return dict(zip(sizes, acc))


def _p90(hist: dict) -> float:
    """The 90th percentile of a histogram (bin -> [mass, mass x time]): the mean time of
    the first bin where the cumulative mass reaches 0.9 of the total (seconds)."""
    if not hist:
        return float("nan")
    rows = [hist[b_] for b_ in sorted(hist)]
    mass = np.array([r[0] for r in rows])
    cdf = np.cumsum(mass) / mass.sum()
    m, mt = rows[int(np.searchsorted(cdf, 0.9))]
    return float(mt / m)


def _fold_into(tgt: list, ent: list) -> None:
    tgt[1] = [a + b_ for a, b_ in zip(tgt[1], ent[1])]
    tgt[2] = [a + b_ for a, b_ in zip(tgt[2], ent[2])]
    if ent[3] is not None:
        _add_hist(tgt[3], ent[3])


def _aggregate(frontier: dict, max_states: int, mss: int, tiers: int = 1):
    """Bound one level's frontier (in place); returns (folded, truncated).

    Tier 1: keep the ``max_states`` most probable states exactly; fold every other one
    into the kept state of the same coarse signature (:meth:`_State.coarse_key`: same
    progress, phase, whole-packet windows, hole count, pending events by kind, RTO due
    time to 10 ms), the most probable of that signature standing for all. A state whose
    signature no kept state has is kept (``tiers=1`` stops here: the frontier can grow
    well past ``max_states``).

    Tier 2 (``tiers=2``): of those kept for a new signature, the ``max_states`` most
    probable stay; each other one is folded into the most probable kept state with the
    same :meth:`_State.coarse_keys2` signature, the finest that one has (progress and
    phase for the RFC and ns3 senders; for the SACK sender first also the window, the
    data in flight and the missing segments, docs/model.md 6.9), or, if none has any,
    returned in ``truncated`` (the caller finishes it loss-free, as a state under
    ``eps``). The frontier then never exceeds 2 ``max_states``.

    ``folded`` lists (state, mass) of every fold (an approximation: docs/model.md)."""
    ranked = sorted(frontier.items(), key=lambda kv: -sum(kv[1][1]))
    frontier.clear()
    fine: dict = {}
    for key, ent in ranked[:max_states]:
        frontier[key] = ent
        fine.setdefault(ent[0].coarse_key(mss), key)
    folded = []
    extra = []
    for key, ent in ranked[max_states:]:
        ck = ent[0].coarse_key(mss)
        target = fine.get(ck)
        if target is None:
            if tiers == 2 and len(extra) >= max_states:
                extra.append((key, ent))
                continue
            frontier[key] = ent
            fine[ck] = key
            if tiers == 2:
                extra.append(None)  # counts a kept extra
            continue
        folded.append((ent[0], sum(ent[1])))
        _fold_into(frontier[target], ent)
    truncated = []
    rest = [x for x in extra if x is not None]
    if rest:
        coarse2: list = []  # per signature, finest first: signature -> most probable kept key
        for key, ent in frontier.items():
            mass = sum(ent[1])
            for i, k2 in enumerate(ent[0].coarse_keys2(mss)):
                if i == len(coarse2):
                    coarse2.append({})
                best = coarse2[i].get(k2)
                if best is None or mass > best[1]:
                    coarse2[i][k2] = (key, mass)
        for key, ent in rest:
            for table, k2 in zip(coarse2, ent[0].coarse_keys2(mss)):
                target = table.get(k2)
                if target is not None:
                    folded.append((ent[0], sum(ent[1])))
                    _fold_into(frontier[target[0]], ent)
                    break
            else:
                truncated.append(ent)
    return folded, truncated


METHODS = ("auto", "levels", "tree", "relative", "engine")
RELATIVE_EPS = 1e-5
"""Default truncation of the relative-state method: a branch point inside a level kernel
whose probability conditional on the kernel's state x RTO / its minimum is below it goes
on with no further loss in that level (docs/packet-model.md)."""
RELATIVE_TAIL_EPS_RATIO = 1e-3
"""``tail_eps`` of the relative-state method as a fraction of ``eps``: a node of a file's
end below ``eps`` x this *absolute* probability (x RTO / its minimum) finishes loss-free
(a level kernel truncates in probability conditional on its state). The losses a
truncated node leaves out wait for backed-off timers, so the file's end needs the finer
cut (LT, b = 1, W0 = 10, p = 0.2, 10 packets: -4.5 % with the kernels' eps;
docs/packet-model.md)."""
RELATIVE_EPS_STATE = 1e-5
"""Default threshold of the relative-state method's light level states (absolute
probability x RTO / its minimum): below it a state is lumped into the most probable
state of its signature in the level, else it takes the loss-free kernel (docs/packet-model.md)."""
LEVELS_MAX_STATES = 16000
"""Default states kept per level by the level DP (docs/model.md, sections 4, 5.2 and 6.8:
16,000 since 2026-11-27, 8000 before; the doubling halved the high bias of b = 1 with
a large first window and the drift past 200 packets at p = 0.01, for up to 1.5 x the
time on single calls and 1.18 x over the validation grid)."""
LEVELS_MAX_STATES_NS3 = 32000
"""Default states kept per level by the level DP for the ns3 sender (``PathConfig(sender=
"ns3")``, the ``ns3`` profile's), since 2026-11-28. Its states also carry ns-3's
scoreboard runs and RTT history, so its levels fold more mass than the RFC sender's at
16,000 (LT, b = 1, W0 = 2, p = 0.1, 200 packets: 2.9 against 2.3, summed over the
levels), and its high bias there halved with the bound doubled: +4.27 % -> +2.35 % of
the ``ns3`` profile's simulated mean (docs/model.md section 6.9), for 1.0-2.2 x the
time."""
LEVELS_EPS = 1e-7
"""Default truncation of the level DP (docs/model.md, section 4)."""
LEVELS_TAIL_EPS_RATIO = 0.1
"""Default ``tail_eps`` of the level DP as a fraction of ``eps``: a file's end is solved
ten times deeper than a level (docs/model.md, section 4: +1.7 % on LT, b = 1, W0 = 10,
p = 0.1, 40 packets, toward the simulator, for 4-40 % more time)."""
TREE_MAX_STATES = 3000
"""Default states kept exactly per level by the tree DP."""
TREE_EXT_MAX_STATES = 10000
"""Default states kept per level by the tree DP for the SACK sender and timestamps, with
tier-2 folding (at most twice this many a level; docs/model.md 6.9: ER, b = 2, W0 = 10,
p = 0.148, 30 packets of the ``linux`` profile -1.2 % in 125 s, where tier 1 at 3000 had
not finished in 11 minutes; -4.0 % at 3000 with tier 2; NewReno, b = 2, W0 = 10,
p = 0.1, 60 packets -2.7 % in 273 s, the largest of ten cells of 30-100 packets, -4.6 %
before tier 2's finer signature, ``_ExtState.coarse_keys2``)."""


def expected_latency(params: TcpParams, *positional, size_bytes=None, size_packets=None,
                     path: PathConfig | None = None, serialisation: str = "auto",
                     method: str = "auto", eps: float | None = None, k_max: int = 4,
                     quantiles: bool = False, bin_s: float = 0.001,
                     max_states: int | None = None, tail_eps: float | None = None,
                     stationary_tol: float | None = 1e-3, share: bool = True,
                     complete: bool = False, tiers: int | None = None, progress=None,
                     eps_state: float | None = None, config=None, **options) -> list[PacketResult]:
    """Expected latency of the packet-level sender, by a DP over loss patterns.

    Parameters
    ----------
    params : TcpParams
        Path and TCP parameters; ``p`` is the loss probability of every data
        transmission (ACKs are not lost).
    size_bytes, size_packets : array_like
        File sizes, bytes (>= 1, whole) or packets of ``mss_bytes``; give exactly one.
    path : PathConfig, optional
        Link and timer settings (or give its fields as keywords); the ``rfc`` profile.
    serialisation : {"auto", "exact", "rounds"}
        Time model, see the module docstring.
    method : {"auto", "levels", "tree", "relative"}
        ``"levels"``: the level DP (:mod:`._packet_levels`; compiled with numba; states
        keyed relative to snd_max, so it reaches 1000 packets); ``"tree"``: the per-size
        DP over the loss tree (exact for short files, exponential in their length).
        ``"auto"`` (default) takes the tree for p = 0, ``quantiles=True`` and rwnd above
        :data:`._packet_flat.MAX_RWND` packets with files longer than that (a window
        beyond the file never binds: :func:`binding_rwnd`), and for the SACK sender and
        timestamps (:attr:`PathConfig.object_engine_only`), the levels otherwise.
        ``"relative"``: the relative-state method (:mod:`._packet_relative`,
        docs/packet-model.md): each level's kernel memoised per distinct state relative to
        snd_max and each state's file end memoised, so one forward pass gives every size;
        the RFC and ns3 senders (rwnd up to :data:`._packet_flat.MAX_RWND` packets), no
        quantiles (see ``eps_state``).
    eps : float, optional
        Truncation (> 0, < 1). Tree DP: states below this probability are dropped (their
        mass is reported; default 1e-9). Level DP: branch points below it (in mass x
        RTO / its minimum) fold into a probable branch point of their signature or, if
        there is none, finish their level with no further loss, and level states below
        it fold into the states of their coarse signature (default :data:`LEVELS_EPS`).
        Truncation biases E[T] down, folding either way: docs/model.md sections 4, 5.2,
        6.2-6.8 measure them (a median 0.46 % and at most 3.6 % on 146 random cells of
        1-200 packets; within 2.5 % of 100,000-run means on the 28 cells re-simulated so;
        +2.7 % at 1000 packets and p = 0.01); a smaller eps reduces truncation at 3-5x
        the time a decade.
    k_max : int
        Number K of conditional latencies L_0 .. L_{K-1} returned (>= 1).
    quantiles : bool
        Also carry a histogram of elapsed time and give the 90th percentile (tree DP
        only; slower): the mean time of the first bin where the cumulative mass reaches
        0.9. Each bin keeps its paths' mass and mass x time; a branch moves a bin's paths
        by its dt as a block into the bin of their new mean time, so no rounding
        accumulates over the branches and the mean over the histogram is E[T] exactly.
    bin_s : float
        Histogram bin, seconds (> 0): paths whose times are within a bin share one mean
        time (the p90 is within about a bin of the exact one).
    max_states : int, optional
        States kept per level (>= 0; 0: no bound). Both DPs fold the others into kept
        states of the same coarse signature and keep those whose signature is new (level
        DP: default :data:`LEVELS_MAX_STATES`, :data:`LEVELS_MAX_STATES_NS3` for the ns3
        sender, signatures that keep the windows, phase
        and damage; tree DP: :data:`TREE_MAX_STATES`, or :data:`TREE_EXT_MAX_STATES` for
        the SACK sender and timestamps). docs/model.md section 4 measures
        the bias. Level DP: the default 16000 took the high bias of b = 1 with a large
        first window at 100 packets from +3.7 % (8000) to +2.5 % at most and the drift
        past 200 packets at p = 0.01 from +6.2 % to +1.3 % at 1000 (rounds time model;
        +2.7 % with exact serialisation), for 1.2-1.5 x the time (sections 5.2 and 6.8);
        8000 is the faster setting of before.
    tail_eps : float, optional
        Level DP: nodes of a file's end below this probability (in mass x RTO / its
        minimum) take the later losses of the most probable node of their signature, from
        their own loss-free remaining time; where there is none yet the node is expanded
        and lends to the next, down to ``tail_eps`` x ``_packet_levels.TAIL_SEED`` (1e-2),
        below which it finishes with no further loss (> 0, < 1; default ``eps`` x
        :data:`LEVELS_TAIL_EPS_RATIO`; docs/model.md section 2, equation 2', and
        section 4, "Seeding").
    stationary_tol : float or None
        Level DP and relative-state method: once the level distribution is stationary (it moves by less than 1e-3
        in total variation per level, and the drift of the per-packet increment, carried
        on to the largest size, adds up to less than this fraction of the latency),
        larger sizes are extrapolated by that increment (exact for a stationary
        distribution; their L_k and P(k) are NaN). Default 1e-3; None: never.
    share, complete, tiers
        Tree DP only: one shared DP for all sizes of a last-segment length; truncated
        states finished loss-free; folding tier (:func:`_aggregate`; default 1, and 2 for
        the SACK sender and timestamps, whose frontier tier 1 would let grow without
        bound: docs/model.md 6.9).
    eps_state : float, optional
        Relative-state method (``method="relative"``): level states below this
        probability (x RTO / its minimum) are lumped into the most probable state of
        their signature in the level (their elapsed time kept; the mass lumped is
        reported as ``aggregated_mass``), or take the loss-free kernel (reported in
        ``dropped_mass``). Default :data:`RELATIVE_EPS_STATE`; its ``eps`` (default
        :data:`RELATIVE_EPS`) truncates branch points of a level kernel in conditional
        probability and, times :data:`RELATIVE_TAIL_EPS_RATIO`, nodes of a file's end in
        absolute probability (docs/packet-model.md).
    progress : callable, optional
        Level DP and relative-state method: called as ``progress(done, total)`` (levels, one per packet) after each
        level, and with ``done == total`` when the rest is extrapolated (the CLI's bar on
        a terminal). Ignored by the tree DP.
    config : SimConfig, optional
        Run the simulator's own sender, receiver, link and timers with these settings
        (``method="engine"``, :mod:`._packet_sim`): any stack profile (``linux`` with all its
        mechanisms and rules, ``ns3``, ``rfc``), any sender, variant, rule, ``b``, W0,
        rwnd and drop-tail buffer, exactly as :func:`latency_model.sim.simulate` runs them
        but for ``p_ack`` (ACK losses: refused). Give it or ``path``, not both. Truncation
        as the relative-state method's (``eps``, ``eps_state``, ``tail_eps``); no
        quantiles, exact serialisation (the simulator's link).

    Returns
    -------
    list of PacketResult
        One per size, in the order given.

    Raises
    ------
    ValueError
        For a positional size, unsupported parameters or settings outside their range.
    latency_model.checks.BudgetError
        (a ValueError) When the level DP would grow past the memory limit
        (``LATENCY_MODEL_MEMORY_LIMIT``, else 80 % of the machine's memory) rather than
        be killed by the system: a larger ``eps`` or a smaller ``max_states`` needs less
        (the worst cell measured, W0 = 10 at p = 0.2 and 40 and 100 packets, needs about
        4 GB: docs/model.md section 5.2).
    """
    if positional:
        raise ValueError("expected_latency: pass sizes by keyword, size_bytes=... or "
                         "size_packets=...")
    if config is not None:
        return _engine(params, config, path, options, size_bytes, size_packets, serialisation, method, eps,
                       eps_state, tail_eps, k_max, quantiles, max_states, tiers, share, complete)
    check_supported(params)
    check_rule(params)
    path = _path_args(path, options)
    check_sender(params, path)
    check_choice("serialisation", serialisation, SERIALISATION)
    check_choice("method", method, METHODS)
    if eps is not None:
        eps = check_real("eps", eps, low=0.0, high=1.0, low_open=True, high_open=True)
    if tail_eps is not None:
        tail_eps = check_real("tail_eps", tail_eps, low=0.0, high=1.0, low_open=True,
                              high_open=True)
    if stationary_tol is not None:
        stationary_tol = check_real("stationary_tol", stationary_tol, low=0.0, high=1.0,
                                    low_open=True, high_open=True)
    k_max = check_int("k_max", k_max, low=1)
    bin_s = check_real("bin_s", bin_s, low=0.0, low_open=True)
    if max_states is not None:
        max_states = check_int("max_states", max_states, low=0)
    if tiers is not None:
        tiers = check_int("tiers", tiers, low=1, high=2)
    for name, flag in (("share", share), ("complete", complete), ("quantiles", quantiles)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable progress(done, total) or None, got {progress!r}")
    if (size_bytes is None) == (size_packets is None):
        raise ValueError("give exactly one of size_bytes and size_packets")
    if size_packets is not None:
        sizes = check_array("size_packets", size_packets, low=1.0).ravel()
        sizes = sizes * params.mss_bytes
    else:
        sizes = check_array("size_bytes", size_bytes, low=1.0).ravel()
    if np.any(sizes != np.round(sizes)):
        raise ValueError("sizes must be whole bytes (size_bytes) or packets (size_packets)")
    # auto: exact serialisation (docs/model.md 6.10), the 90th percentile's too (6.7: each
    # histogram bin keeps its paths' mean time, so no time grid is needed)
    mode = "exact" if serialisation == "auto" else serialisation
    rwnd = binding_rwnd(params, float(sizes.max()))
    if method == "auto":
        method = ("tree" if params.p == 0.0 or quantiles or rwnd > F.MAX_RWND
                  or path.object_engine_only else "levels")
    if eps_state is not None:
        if method != "relative":
            raise ValueError("eps_state is read by method='relative' only, got method "
                             f"{method!r}")
        eps_state = check_real("eps_state", eps_state, low=0.0, high=1.0, low_open=True,
                               high_open=True)
    if method in ("levels", "relative"):  # both run the flat engine: RFC and ns3 senders, no histogram
        if path.object_engine_only:
            raise ValueError(f"method={method!r} runs the RFC and ns3 senders without timestamps; "
                             "the SACK sender and timestamps need method='tree'")
        if quantiles:
            raise ValueError(f"quantiles=True needs method='tree' (method={method!r} gives no "
                             "distribution)")
        if rwnd > F.MAX_RWND:
            longest = -(-int(sizes.max()) // params.mss_bytes)
            raise ValueError(f"method={method!r} supports rwnd <= {F.MAX_RWND} packets or "
                             f"files of at most {F.MAX_RWND} packets, got rwnd "
                             f"{params.rwnd:g} and a file of {longest} packets; use "
                             f"method='tree'")
    check_packet_work(params, path, sizes / params.mss_bytes, method == "tree", k_max)  # path and work limits
    sizes = [int(s) for s in sizes.astype(np.int64)]
    out = []
    if method == "relative":
        return _relative(params, path, sizes, mode, rwnd, eps, eps_state, k_max, stationary_tol,
                         progress)
    if method == "levels":
        eps = LEVELS_EPS if eps is None else eps
        tail_eps = eps * LEVELS_TAIL_EPS_RATIO if tail_eps is None else tail_eps
        solved = LV.solve(_flat_consts(params, path, mode == "exact", rwnd), params,
                          sorted(set(sizes)), eps=eps,
                          k_max=k_max, tail_eps=tail_eps, tol=stationary_tol,
                          max_states=(max_states if max_states is not None
                                      else LEVELS_MAX_STATES_NS3 if path.sender == "ns3"
                                      else LEVELS_MAX_STATES), progress=progress)
        for size in sizes:
            r = solved[size]
            shift = _serialisation_shift(params, size, path) if mode == "rounds" else 0.0
            mass = float(r.done_p.sum())
            mean = r.expected_s + shift * mass
            pk, lk = _loss_vectors(r, k_max, shift)
            out.append(PacketResult(size_bytes=size, expected_latency_s=mean,
                                    conditional_latency_s=lk, loss_count_pmf=pk,
                                    p90_latency_s=float("nan"), dropped_mass=0.0,
                                    states=r.states, rto_above_min_mass=r.est,
                                    aggregated_mass=r.folded, extrapolated=r.extrapolated))
        return out
    ext = path.object_engine_only
    if max_states is None:
        max_states = TREE_EXT_MAX_STATES if ext else TREE_MAX_STATES
    if tiers is None:
        tiers = 2 if ext else 1
    eps = 1e-9 if eps is None else eps
    solved: dict = {}
    groups: dict = {}
    for size in sorted(set(sizes)):  # one shared DP per last-segment length
        groups.setdefault(size % params.mss_bytes, []).append(size)
    for group in groups.values():
        if share:
            solved.update(_solve_group(params, group, path, mode == "exact", eps, k_max,
                                       quantiles, bin_s, max_states, complete, tiers))
        else:
            for size in group:
                solved.update(_solve_group(params, [size], path, mode == "exact", eps, k_max,
                                           quantiles, bin_s, max_states, complete, tiers))
    for size in sizes:
        a = solved[size]
        dp, dpt = a.done_p, a.done_pt
        mean = sum(dpt)
        shift = _serialisation_shift(params, size, path) if mode == "rounds" else 0.0
        mean += shift * sum(dp)
        pk = np.array(dp[:k_max])
        with np.errstate(invalid="ignore", divide="ignore"):
            lk = np.where(pk > 0, np.array(dpt[:k_max]) / np.where(pk > 0, pk, 1.0) + shift,
                          np.nan)
        out.append(PacketResult(size_bytes=size, expected_latency_s=mean,
                                conditional_latency_s=lk, loss_count_pmf=pk,
                                p90_latency_s=(_p90(a.hist) + shift if quantiles
                                               else float("nan")),
                                dropped_mass=a.dropped, states=a.expanded,
                                rto_above_min_mass=a.est, aggregated_mass=a.agg))
    return out


def _engine(params, config, path, options, size_bytes, size_packets, serialisation, method, eps, eps_state,
            tail_eps, k_max, quantiles, max_states, tiers, share, complete):
    """:func:`expected_latency` on the simulator's own transitions (``config``)."""
    from . import _packet_sim as PS

    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    PS.check_config(config)
    if path is not None or options:
        raise ValueError("give config (the simulator's settings) or path and its fields, not both: got "
                         f"{'path' if path is not None else sorted(options)}")
    check_choice("method", method, ("auto", "engine"))
    check_choice("serialisation", serialisation, ("auto", "exact"))
    for name, value, default in (("quantiles", quantiles, False), ("max_states", max_states, None),
                                 ("tiers", tiers, None), ("share", share, True), ("complete", complete, False)):
        if value != default:
            raise ValueError(f"{name} is not read with config (the simulator's transitions), got {value!r}")
    if (size_bytes is None) == (size_packets is None):
        raise ValueError("give exactly one of size_bytes and size_packets")
    if size_packets is not None:
        sizes = check_array("size_packets", size_packets, low=1.0).ravel() * params.mss_bytes
    else:
        sizes = check_array("size_bytes", size_bytes, low=1.0).ravel()
    if np.any(sizes != np.round(sizes)):
        raise ValueError("sizes must be whole bytes (size_bytes) or packets (size_packets)")
    if not 0.0 <= params.p <= 0.5:
        raise ValueError(f"the packet model supports p in [0, 0.5], got p = {params.p:g}")
    k_max = check_int("k_max", k_max, low=1)
    eps = RELATIVE_EPS if eps is None else check_real("eps", eps, low=0.0, high=1.0, low_open=True,
                                                      high_open=True)
    eps_state = RELATIVE_EPS_STATE if eps_state is None else check_real(
        "eps_state", eps_state, low=0.0, high=1.0, low_open=True, high_open=True)
    tail_eps = eps * RELATIVE_TAIL_EPS_RATIO if tail_eps is None else check_real(
        "tail_eps", tail_eps, low=0.0, high=1.0, low_open=True, high_open=True)
    sizes = [int(x) for x in sizes.astype(np.int64)]
    solved = PS.solve(params, config, sizes, eps=eps, tail_eps=tail_eps, eps_state=eps_state, k_max=k_max)
    out = []
    for size in sizes:
        r = solved[size]
        pk = r.done_p[:k_max]
        with np.errstate(invalid="ignore", divide="ignore"):
            lk = np.where(pk > 0, r.done_pt[:k_max] / np.where(pk > 0, pk, 1.0), np.nan)
        out.append(PacketResult(size_bytes=size, expected_latency_s=float(r.done_pt.sum()),
                                conditional_latency_s=lk, loss_count_pmf=pk, p90_latency_s=float("nan"),
                                dropped_mass=r.truncated, states=r.states, rto_above_min_mass=float("nan"),
                                aggregated_mass=0.0))
    return out


def _loss_vectors(r, k_max: int, shift: float) -> tuple:
    """P(k) and L_k (seconds, ``shift`` added) of a level or relative-state result for
    k < ``k_max``; NaN where the size was extrapolated past the stationary level."""
    if r.extrapolated:
        return np.full(k_max, np.nan), np.full(k_max, np.nan)
    pk = np.array(r.done_p[:k_max])
    with np.errstate(invalid="ignore", divide="ignore"):
        lk = np.where(pk > 0, r.done_pt[:k_max] / np.where(pk > 0, pk, 1.0) + shift, np.nan)
    return pk, lk


def _relative(params, path, sizes, mode, rwnd, eps, eps_state, k_max, tol, progress):
    """:func:`expected_latency` by the relative-state method (:mod:`._packet_relative`)."""
    from . import _packet_relative as RS

    eps = RELATIVE_EPS if eps is None else eps
    solved = RS.solve(_flat_consts(params, path, mode == "exact", rwnd), params,
                      sorted(set(sizes)), eps=eps, tail_eps=eps * RELATIVE_TAIL_EPS_RATIO,
                      eps_state=RELATIVE_EPS_STATE if eps_state is None else eps_state,
                      k_max=k_max, tol=tol, progress=progress)
    out = []
    for size in sizes:
        r = solved[size]
        shift = _serialisation_shift(params, size, path) if mode == "rounds" else 0.0
        pk, lk = _loss_vectors(r, k_max, shift)
        out.append(PacketResult(size_bytes=size,
                                expected_latency_s=r.expected_s + shift * float(r.done_p.sum()),
                                conditional_latency_s=lk, loss_count_pmf=pk,
                                p90_latency_s=float("nan"), dropped_mass=r.truncated,
                                states=r.states, rto_above_min_mass=r.est,
                                aggregated_mass=r.lumped, extrapolated=r.extrapolated))
    return out


def _serialisation_shift(params: TcpParams, size: int, path: PathConfig) -> float:
    """L_0(exact) - L_0(rounds), seconds: the serialisation the loss-free transfer
    accumulates, added back to a rounds-time-model result (module docstring).

    On the flat engine, compiled, where it runs the transfer (a binding rwnd up to
    :data:`._packet_flat.MAX_RWND` packets; the same bits as the object engine,
    ``test_the_serialisation_shift_is_the_object_engine_s``), else on the object engine:
    1..1000 packets took 6.0 s of the object engine's Python (a transfer per size, O(N^2)
    events; 9 % of a 1..1000-packet call at p = 0.2)."""
    rwnd = binding_rwnd(params, size)
    if rwnd <= F.MAX_RWND and not path.object_engine_only:
        times = []
        for serial in (True, False):
            C, CF = _flat_consts(params, path, serial, rwnd)(size)
            I, Fl = F.new_state(C, CF, params.w0, params.w_ss)
            times.append(LV.kernels().scripted(C, CF, I, Fl, np.zeros(int(C[F.C_N]), np.int64), False))
        if min(times) >= 0.0:  # (-1: out of event slots; the object engine has no such limit)
            return times[0] - times[1]
    return (scripted_latency(params, size_bytes=size, path=path)
            - scripted_latency(params, size_bytes=size, path=path, serialisation="rounds"))


def binding_rwnd(params: TcpParams, size_bytes: float) -> float:
    """The receiver window that binds a transfer of at most ``size_bytes`` bytes, packets:
    ``min(rwnd, ceil(size_bytes / MSS))``.

    Exact: the sender sends while FlightSize + next <= min(cwnd (+ LT credit), rwnd)
    (RFC 5681 3.1, RFC 3042 2), and FlightSize + next never exceeds the file, so a window
    of the file's whole packets never binds where ``rwnd`` does not; and nothing else reads
    rwnd. The level DP's engine holds at most :data:`._packet_flat.MAX_RWND` (253) packets
    in its segment sets of up to four 64-bit words, so with this any ``rwnd`` runs there
    for files of up to 253 packets (``test_a_receiver_window_beyond_the_file_is_the_file_s``)."""
    return min(float(params.rwnd), float(-(-int(size_bytes) // params.mss_bytes)))


def _flat_consts(params: TcpParams, path: PathConfig, serial: bool = False,
                 rwnd: float | None = None, words: int | None = None):
    """size_bytes -> the flat engine's (C, CF): with each packet's serialisation
    (``serial``: the exact time model, the level DP's default) or none (the rounds model);
    ``rwnd`` (packets, default ``params.rwnd``): the window that binds (:func:`binding_rwnd`);
    ``words``: the segment sets' width (default: the fewest ``rwnd`` needs)."""
    d = path.delay_s if path.delay_s is not None else params.rtt_s / 2.0
    ser = 8.0 / path.link_rate_bps if serial else 0.0
    rwnd = params.rwnd if rwnd is None else rwnd

    def consts(size_bytes):
        return F.make_consts(
            size_bytes=size_bytes, mss=params.mss_bytes, rwnd_packets=rwnd,
            b=params.b, dup_t=params.dup_t, dup_lt=params.dup_lt,
            tail=params.tail_retransmit, er=params.early_retransmit, d=d, ser_per_byte=ser,
            header=path.header_bytes, delack=path.delack_timeout_s,
            min_rto=path.min_rto_s, max_rto=path.max_rto_s, init_rto=path.initial_rto_s,
            fin=path.fin, quick_acks=path.quick_acks, clock_granularity=path.clock_granularity_s,
            backoff_collapses=path.backoff_collapses, fixed_rto=params.rto if path.fixed_rto else 0.0,
            words=words, sender=path.sender)
    return consts


def predict(params: TcpParams, sizes_bytes, **options):
    """The registry's ``packet`` model (:func:`expected_latency` as a ``Prediction``).

    Cost (CPU, defaults, level DP; docs/model.md sections 5.2, 6.2 and 6.5): one call for
    sizes 1..20 takes up to 4 s with W0 <= 4 (33 s with W0 = 10 at p = 0.2), one size of
    40-200 packets up to a few minutes (141 s the most among 146 random cells), 1..1000
    packets 59 s at p = 0.2 to 486 s at p = 0.01. All sizes of one call share a DP, so
    pass them together; a call's cost is mostly the tails of the sizes asked for.

    Parameters
    ----------
    params : TcpParams
        Path, TCP and recovery settings.
    sizes_bytes : ndarray
        File sizes, bytes (whole, >= 1).
    **options
        Passed to :func:`expected_latency` (``path``, ``eps``, ``k_max``, ``quantiles``...).

    Returns
    -------
    Prediction
        ``expected_latency_s``, ``conditional_latency_s`` (L_0 .. L_{K-1}) and, with
        ``quantiles=True``, ``p90_latency_s``.
    """
    from .registry import Prediction

    res = expected_latency(params, size_bytes=sizes_bytes, **options)
    sizes = np.array([r.size_bytes for r in res], dtype=float)
    p90 = np.array([r.p90_latency_s for r in res])
    return Prediction(model="packet", sizes_bytes=sizes,
                      expected_latency_s=np.array([r.expected_latency_s for r in res]),
                      conditional_latency_s=np.vstack([r.conditional_latency_s for r in res]),
                      p90_latency_s=None if np.all(np.isnan(p90)) else p90)


def warm() -> None:
    """Load the level DP's compiled kernels (numba's on-disk cache) into this process:
    about 0.6 s of CPU once, which every process pays at its first call otherwise
    (:func:`latency_model.model.registry.warm`). One small call (b = 1, W0 = 4, p = 0.2,
    up to 10 packets), which runs every kernel entry the accuracy map's calls run
    (``test_warm_loads_every_kernel_a_map_call_uses``), and the memo's growth kernels on
    empty tables: 0.7 s in all. Without numba there is nothing to load, and nothing runs.
    """
    if not numba_available():
        return
    expected_latency(TcpParams(p=0.2, b=1, w0=4.0), size_packets=[1, 2, 3, 5, 8, 10])
    LV.warm_growth()
