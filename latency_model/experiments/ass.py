"""The Advanced Slow Start experiment (Petrov & Janevski, Sections 3-4): throughput and cwnd
over time for slow-start Algorithms 1-4 on a four-node bottleneck path.

Paper setup (Section 3): nodes n0 - n1 - n2 - n3, bottleneck n1 - n2 of 0.3 Mb/s (first
scenario) or 10 Mb/s (second), every link 10 ms, drop-tail IFQ of 5, 15, 25, 50, 100 or 200
packets, TCP SACK in ns-2.35, Limited Slow-Start with ``max_ssthresh`` = 100 MSS, larger
initial window (RFC 3390) off and on, 250 s runs; also a 20% loss variant (not run here).
Algorithm 1 is classical slow start; 2-4 are :class:`~latency_model.growth.AssRule`'s.

Ours: one FTP flow n0 -> n3 (a :class:`~latency_model.sim.dumbbell.Dumbbell` with one node
pair: access links n0 - n1 and n2 - n3 at ``access_rate_mbps``, the bottleneck in between),
1000 B segments + 40 B headers, ACKs through a reverse port at the bottleneck rate (ns-2's
duplex link; default drop-tail limit 50, ns-2's ``Queue`` default), NewReno recovery (the
simulator has no SACK), RFC 6298 timer. Every run is deterministic (no random loss), so
there are no seeds: the algorithms differ only by their window rules.

``scale`` shrinks the run length: ``250 scale`` seconds (``scale = 1`` is the paper's).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field

import numpy as np

from ..checks import check_choice, check_int, check_jobs, check_items, check_real, check_work, checked_call
from ..growth import AssRule, LssRule
from ..growth.ass import DECREASE_MODES
from ..params import TcpParams, initial_window_bytes
from ..results import ResultData
from ..sim.config import SimConfig
from ..sim.dumbbell import Dumbbell
from ..sim.scenario import Flow, Scenario, run

MIN_RATE_MBPS = 1e-6
"""Slowest link rate, Mb/s (1 bit/s): the runs last at most 2,500 s, and rates near the float
minimum would make a packet's transmission time infinite."""

__all__ = ["AssExperiment", "AssResult", "run_ass", "ALGORITHMS", "PAPER_QUEUES", "PAPER_BOTTLENECKS_MBPS",
           "PAPER_CLAIMS", "TIE"]

ALGORITHMS = (1, 2, 3, 4)
"""1: classical slow start (with LSS above 100 MSS); 2: ASS; 3, 4: its more aggressive variants."""

PAPER_QUEUES = (5, 15, 25, 50, 100, 200)
PAPER_BOTTLENECKS_MBPS = (0.3, 10.0)
MSS_BYTES = 1000
"""ns-2's default ``packetSize_``."""
LSS_MAX_SSTHRESH = 100.0
"""Section 3: "LSS is used with max_ssthresh set at 100 MSS"."""

TIE = 0.02
"""Relative throughput difference below which two algorithms count as equal (the paper
ranks curves read by eye and calls close ones "overlapping")."""

PAPER_CLAIMS = {
    "ranking": "per bottleneck, initial window and IFQ, which algorithm gets the best (or worst) "
               "throughput (Section 4.1 and 4.2, Figures 8-27 and 56-75)",
    "ass_gain": "in lossless systems Algorithm 2 gives a large throughput improvement over "
                "classical slow start, most of all at IFQ 100 and 200 (Conclusion)",
    "aggressive": "Algorithms 3 and 4 get less throughput than classical slow start, especially "
                  "at higher IFQ (Conclusion)",
    "startup": "the new algorithms do better than classical slow start in the slow-start phase "
               "(Section 4.2, Conclusion)",
    "larger_iw": "a larger initial window lowers Algorithm 2's throughput (Section 4.2, Conclusion)",
}

# The paper's per-case statements about throughput (Section 4), keyed by (bottleneck Mb/s,
# initial window in packets: 1 = "Wnd1", 4 = RFC 3390 "Wnd2", IFQ packets) ->
# ("best", algorithms named best) | ("worst", algorithm) | ("equal", None).
_PAPER_CASES = {
    (0.3, 1, 5): ("best", (3,)), (0.3, 1, 15): ("best", (2,)), (0.3, 1, 25): ("best", (2,)),
    (0.3, 1, 50): ("best", (2,)), (0.3, 1, 100): ("best", (2,)), (0.3, 1, 200): ("best", (2,)),
    (0.3, 4, 5): ("worst", 2), (0.3, 4, 15): ("best", (2,)), (0.3, 4, 25): ("best", (2,)),
    (0.3, 4, 50): ("best", (2,)), (0.3, 4, 100): ("best", (3,)), (0.3, 4, 200): ("best", (3,)),
    (10.0, 1, 5): ("equal", None), (10.0, 1, 15): ("best", (2,)), (10.0, 1, 25): ("best", (2,)),
    (10.0, 1, 50): ("best", (1,)), (10.0, 1, 100): ("best", (2,)), (10.0, 1, 200): ("best", (2,)),
    (10.0, 4, 5): ("worst", 2), (10.0, 4, 15): ("best", (3,)), (10.0, 4, 25): ("best", (4,)),
    (10.0, 4, 50): ("best", (1,)), (10.0, 4, 100): ("best", (2,)), (10.0, 4, 200): ("best", (3, 4)),
}


def _tuple_of(name: str, values, check) -> tuple:
    items = check_items(name, values)
    if not items:
        raise ValueError(f"{name} must hold at least one value")
    out = tuple(check(v) for v in items)
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a value, got {list(out)}")
    return tuple(sorted(out))


def _algorithm(v) -> int:
    if isinstance(v, bool) or v not in ALGORITHMS:
        raise ValueError(f"algorithms must be drawn from 1, 2, 3, 4, got {v!r}")
    return int(v)


@checked_call
@dataclass(frozen=True)
class AssExperiment:
    """Settings of the ASS experiment (defaults: the paper's, over ``250 scale`` seconds).

    Parameters
    ----------
    scale : float
        Fraction of the paper's 250 s run, in (0, 10]. Default 0.05 (12.5 s runs, so that the
        96 runs fit in about two minutes here; 0.4 or 1 for the paper's long-run behaviour).
    bottlenecks_mbps : tuple of float
        Bottleneck rates, Mb/s (> 0). Paper: 0.3 and 10.
    queues : tuple of int
        Router IFQ (drop-tail buffer), packets (>= 1). Paper: 5, 15, 25, 50, 100, 200.
    algorithms : tuple of int
        Slow-start algorithms, subset of 1-4.
    initial_windows : tuple of int
        Initial windows, packets (>= 1). Default 1 and 4 (RFC 3390 for 1000 B segments).
    access_rate_mbps : float
        Rate of the n0 - n1 and n2 - n3 links, Mb/s (> 0); not given by the paper. Default 100.
    link_delay_s : float
        One-way delay of each of the three links, seconds (>= 0). Paper: 0.01.
    reverse_queue_packets : int or None
        Drop-tail buffer of the reverse (ACK) port, packets (>= 0); the port runs at the
        bottleneck rate. ``None``: ACKs return uncongested. Default 50 (ns-2's default limit).
    rwnd : int
        Receiver window, packets (>= 1). Default 10000 (no limit in these runs).
    min_rto_s : float
        RFC 6298 minimum and initial RTO, seconds (> 0). Default 1.
    decrease : str
        Meaning of ASS's "decreasing factor" (:class:`~latency_model.growth.AssRule`):
        ``"divide"`` (default), ``"fraction"`` or ``"standard"``.
    bins : int
        Time bins of the throughput and cwnd series, >= 1. Default 100.
    startup_s : float
        Length of the start-up window whose goodput measures the slow-start phase, seconds
        (> 0; cut to the run length). Default 5.
    """

    scale: float = 0.05
    bottlenecks_mbps: tuple = PAPER_BOTTLENECKS_MBPS
    queues: tuple = PAPER_QUEUES
    algorithms: tuple = ALGORITHMS
    initial_windows: tuple = (1, 4)
    access_rate_mbps: float = 100.0
    link_delay_s: float = 0.01
    reverse_queue_packets: int | None = 50
    rwnd: int = 10000
    min_rto_s: float = 1.0
    decrease: str = "divide"
    bins: int = 100
    startup_s: float = 5.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "scale", check_real("scale", self.scale, low=0.0, high=10.0, low_open=True))
        set_(self, "bottlenecks_mbps", _tuple_of(
            "bottlenecks_mbps", self.bottlenecks_mbps,
            lambda v: float(check_real("bottlenecks_mbps", v, low=MIN_RATE_MBPS, high=1e5))))
        set_(self, "queues", _tuple_of("queues", self.queues,
                                       lambda v: check_int("queues", v, low=1, high=100000)))
        set_(self, "algorithms", _tuple_of("algorithms", self.algorithms, _algorithm))
        set_(self, "rwnd", check_int("rwnd", self.rwnd, low=1))
        set_(self, "initial_windows", _tuple_of(
            "initial_windows", self.initial_windows,
            lambda v: check_int("initial_windows", v, low=1, high=self.rwnd)))
        set_(self, "access_rate_mbps",
             check_real("access_rate_mbps", self.access_rate_mbps, low=MIN_RATE_MBPS, high=1e5))
        set_(self, "link_delay_s", check_real("link_delay_s", self.link_delay_s, low=0.0, high=10.0))
        if self.reverse_queue_packets is not None:
            set_(self, "reverse_queue_packets",
                 check_int("reverse_queue_packets", self.reverse_queue_packets, low=0))
        set_(self, "min_rto_s", check_real("min_rto_s", self.min_rto_s, low=0.0, low_open=True))
        check_choice("decrease", self.decrease, DECREASE_MODES)
        set_(self, "bins", check_int("bins", self.bins, low=1, high=100000))
        set_(self, "startup_s", check_real("startup_s", self.startup_s, low=0.0, low_open=True))
        check_work(f"experiment ass with {len(self.cases()):,} runs (bottlenecks_mbps x initial_windows x queues x "
                   f"algorithms) over {self.horizon_s:g} s (scale) at up to {max(self.bottlenecks_mbps):g} Mb/s",
                   *self.work())

    def work(self) -> tuple[float, float]:
        """Estimated peak memory (bytes) and CPU seconds of :func:`run_ass` on one worker.

        One flow fills the bottleneck, so a run costs about the packets it carries,
        ``rate x horizon / (8 (1000 + 40) bits)``, about 40 us each with their ACKs
        (measured 2026-11-28, one core: 60,100 packets at 10 Mb/s over 50 s in 2.4 s,
        1,800 at 0.3 Mb/s in 0.05 s). Memory: the process and the binned series.
        """
        from ..checks import PROCESS_BYTES

        packets = sum(bn * 1e6 * self.horizon_s / (8.0 * 1040.0) for bn, *_ in self.cases())
        return PROCESS_BYTES + 8.0 * 4 * self.bins * len(self.cases()), 0.05 + 4e-5 * packets

    @property
    def horizon_s(self) -> float:
        """Run length, ``250 scale`` seconds."""
        return 250.0 * self.scale

    @property
    def startup_window_s(self) -> float:
        """Start-up window actually used: ``min(startup_s, horizon_s)``, seconds."""
        return min(self.startup_s, self.horizon_s)

    def topology(self, bottleneck_mbps: float, queue: int) -> Dumbbell:
        """n0 -> n1 -> n2 -> n3 as a one-pair dumbbell; the reverse port at the bottleneck rate."""
        rate = bottleneck_mbps * 1e6
        rev = self.reverse_queue_packets is not None
        return Dumbbell(nodes=1, access_rate_bps=self.access_rate_mbps * 1e6, access_delay_s=self.link_delay_s,
                        bottleneck_rate_bps=rate, bottleneck_delay_s=self.link_delay_s, queue_packets=queue,
                        reverse_rate_bps=rate if rev else None,
                        reverse_queue_packets=self.reverse_queue_packets if rev else None)

    def config(self) -> SimConfig:
        """Timers: RFC 6298 with ``min_rto_s`` as minimum and initial RTO; 40 B headers."""
        return SimConfig(min_rto_s=self.min_rto_s, initial_rto_s=self.min_rto_s)

    def tcp(self, algorithm: int, w0: int) -> TcpParams:
        """TCP of one run: MSS 1000 B, ``w0`` packets, W_SS = M = ``rwnd``, b = 1, NewReno.

        Algorithm 1 is :class:`~latency_model.growth.LssRule` (RFC 5681 slow start below
        100 MSS, Limited Slow-Start above, as the paper's setup applies LSS to every run);
        2-4 are :class:`~latency_model.growth.AssRule` (LSS from 100 MSS on).
        """
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of 1, 2, 3, 4, got {algorithm!r}")
        rule = (LssRule(max_ssthresh=LSS_MAX_SSTHRESH) if algorithm == 1
                else AssRule(algorithm=algorithm, decrease=self.decrease))
        rtt = 6.0 * self.link_delay_s if self.link_delay_s > 0 else 0.001
        return TcpParams(mss_bytes=MSS_BYTES, rtt_s=rtt, p=0.0, w0=float(w0), w_ss=float(self.rwnd),
                         rwnd=float(self.rwnd), b=1, dup_t=3, dup_lt=None, rule=rule)

    def flow_bytes(self, bottleneck_mbps: float) -> int:
        """A transfer the run cannot finish: twice the bottleneck's payload capacity over the
        run plus the receiver window, bytes (an FTP source that always has data)."""
        cap = bottleneck_mbps * 1e6 * self.horizon_s / (8.0 * (MSS_BYTES + self.config().header_bytes))
        return (2 * math.ceil(cap) + self.rwnd) * MSS_BYTES

    def cases(self) -> list[tuple]:
        """Every run as ``(bottleneck_mbps, w0, queue, algorithm)``, in output order."""
        return [(bn, w0, q, a) for bn in self.bottlenecks_mbps for w0 in self.initial_windows
                for q in self.queues for a in self.algorithms]

    def to_dict(self) -> dict:
        """JSON-serialisable settings plus the derived run length and fixed choices."""
        d = asdict(self)
        for k in ("bottlenecks_mbps", "queues", "algorithms", "initial_windows"):
            d[k] = list(d[k])
        d.update(horizon_s=self.horizon_s, startup_window_s=self.startup_window_s, mss_bytes=MSS_BYTES,
                 header_bytes=self.config().header_bytes, b=1, recovery="newreno",
                 lss_max_ssthresh=LSS_MAX_SSTHRESH,
                 rfc3390_iw_packets=initial_window_bytes("rfc3390", MSS_BYTES) // MSS_BYTES,
                 flows=1, tie=TIE)
        return d


def run_case(ex: AssExperiment, bottleneck_mbps: float, w0: int, queue: int, algorithm: int) -> dict:
    """One run: the flow's measures and its binned throughput and cwnd series.

    Returns
    -------
    dict
        ``bottleneck_mbps, iw_packets, queue_packets, algorithm``; ``throughput_kbps`` (payload
        acknowledged over the run / run length, kb/s), ``startup_kbps`` (the same over the
        start-up window), ``utilisation_pct`` (bottleneck busy time, headers and
        retransmissions included), ``packets_sent, packets_lost, retransmissions, timeouts,
        fast_retransmits, acks_lost``, ``first_loss_s`` (first router drop, ``nan`` if none),
        ``max_cwnd_packets``; and the series ``time_s`` (bin ends, seconds),
        ``cwnd_packets`` (cwnd at each bin end), ``throughput_series_kbps`` (per bin).
    """
    horizon = ex.horizon_s
    tcp = ex.tcp(algorithm, w0)
    flow = Flow(0.0, ex.flow_bytes(bottleneck_mbps), tcp)
    res = run(Scenario(flows=(flow,), topology=ex.topology(bottleneck_mbps, queue), config=ex.config(),
                       horizon_s=horizon, bin_s=horizon, record_cwnd=True))
    rec, cw = res.flows[0], res.cwnd[0]
    bin_s = horizon / ex.bins
    ends = np.minimum(np.arange(1, ex.bins + 1) * bin_s, horizon)
    drops = res.queue.arrival_s[res.queue.dropped]
    startup = ex.startup_window_s
    return {
        "bottleneck_mbps": bottleneck_mbps,
        "iw_packets": w0,
        "queue_packets": queue,
        "algorithm": algorithm,
        "throughput_kbps": 8.0 * float(cw.acked_at(horizon)) / horizon / 1e3,
        "startup_kbps": 8.0 * float(cw.acked_at(startup)) / startup / 1e3,
        "utilisation_pct": 100.0 * float(res.queue.busy_fraction.mean()),
        "packets_sent": rec.packets_sent,
        "packets_lost": rec.packets_lost,
        "retransmissions": rec.retransmissions,
        "timeouts": rec.timeouts,
        "fast_retransmits": rec.fast_retransmits,
        "acks_lost": rec.acks_lost,
        "first_loss_s": float(drops[0]) if drops.size else math.nan,
        "max_cwnd_packets": float(cw.cwnd_packets.max()),
        "time_s": ends.tolist(),
        "cwnd_packets": cw.cwnd_at(ends).tolist(),
        "throughput_series_kbps": (cw.goodput_bps(horizon, bin_s) / 1e3).tolist(),
    }


SERIES_KEYS = ("time_s", "cwnd_packets", "throughput_series_kbps")
"""Keys of a run's dict that hold its time series (left out of the per-run CSV)."""


@dataclass(frozen=True)
class AssResult(ResultData):
    """Outcome of :func:`run_ass`.

    Attributes
    ----------
    experiment : AssExperiment
        Settings.
    runs : list of dict
        One dict per run (see :func:`run_case`), in :meth:`AssExperiment.cases` order.
    claims : list of dict
        ``{"claim", "ours", "paper", "agrees"}`` per claim of the paper that the runs cover
        (see :func:`_claims` for the rules).
    """

    ROWS = "runs"  # to_frame(): one row per entry

    experiment: AssExperiment
    runs: list = field(default_factory=list)
    claims: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The issue's contract: ``{"experiment", "params", "series", "claims"}`` plus
        ``paper_text``; ``series`` is :attr:`runs` (measures and time series per run)."""
        return {"experiment": "ass", "params": self.experiment.to_dict(), "series": self.runs,
                "claims": self.claims, "paper_text": PAPER_CLAIMS}


@checked_call
def run_ass(experiment: AssExperiment | None = None, progress=None, jobs: int = 1) -> AssResult:
    """Run every (bottleneck, initial window, IFQ, algorithm) case of the ASS experiment.

    Parameters
    ----------
    experiment : AssExperiment, optional
        Settings; default ``AssExperiment()``.
    progress : callable, optional
        Called with each run's dict as it finishes (in case order).
    jobs : int
        Worker processes (>= 1). The runs are deterministic and independent, so the result
        does not depend on ``jobs``.

    Returns
    -------
    AssResult
    """
    ex = AssExperiment() if experiment is None else experiment
    if not isinstance(ex, AssExperiment):
        raise ValueError(f"experiment must be an AssExperiment, got {ex!r}")
    jobs = check_jobs("jobs", jobs)
    cases = ex.cases()
    runs = []
    if jobs == 1:
        rows = (run_case(ex, *case) for case in cases)
        pool = None
    else:
        from concurrent.futures import ProcessPoolExecutor

        from ..workers import worker_init  # workers end with their parent

        pool = ProcessPoolExecutor(max_workers=min(jobs, len(cases)), initializer=worker_init,
                                   initargs=(os.getpid(),))
        rows = pool.map(_run_packed, [(ex, *case) for case in cases])
    try:
        for row in rows:
            runs.append(row)
            if progress is not None:
                progress(row)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return AssResult(experiment=ex, runs=runs, claims=_claims(ex, runs))


def _run_packed(args):
    return run_case(*args)


def _pct(a: float, b: float) -> float:
    return 100.0 * (a / b - 1.0) if b > 0 else math.nan


def _claims(ex: AssExperiment, runs: list) -> list:
    """The paper's claims beside ours, from the whole-run throughput (``throughput_kbps``).

    Per case (the paper's bottlenecks, initial windows 1 and 4, IFQs, all four algorithms run):
    "best A" agrees when one of the named algorithms is within :data:`TIE` of our best;
    "worst A" when A is within :data:`TIE` of our lowest; "equal" when our spread
    (max - min) / max is at most :data:`TIE`. Aggregate claims average the per-case relative
    differences and agree when the mean is beyond :data:`TIE` (as a percentage) on the
    claimed side. Runs are deterministic, so there is no confidence interval.
    """
    tput = {(r["bottleneck_mbps"], r["iw_packets"], r["queue_packets"], r["algorithm"]): r["throughput_kbps"]
            for r in runs}
    start = {(r["bottleneck_mbps"], r["iw_packets"], r["queue_packets"], r["algorithm"]): r["startup_kbps"]
             for r in runs}
    if set(ex.algorithms) != set(ALGORITHMS):
        return []
    tie_pct = 100.0 * TIE
    out = []
    for bn in ex.bottlenecks_mbps:
        for w0 in ex.initial_windows:
            for q in ex.queues:
                stated = _PAPER_CASES.get((bn, w0, q))
                if stated is None:
                    continue
                t = {a: tput[(bn, w0, q, a)] for a in ALGORITHMS}
                top, low = max(t.values()), min(t.values())
                ours = {"best": max(t, key=t.get), "throughput_kbps": {str(a): t[a] for a in ALGORITHMS}}
                case = f"{bn:g} Mb/s, IW {w0}, IFQ {q}"
                kind, named = stated
                if kind == "best":
                    names = " or ".join(str(a) for a in named)
                    agrees = max(t[a] for a in named) >= (1.0 - TIE) * top
                    out.append({"claim": f"{case}: Algorithm {names} gets the best throughput",
                                "ours": ours, "paper": f"best {names}", "agrees": bool(agrees)})
                elif kind == "worst":
                    agrees = t[named] <= (1.0 + TIE) * low
                    out.append({"claim": f"{case}: Algorithm {named} gets the worst throughput",
                                "ours": ours, "paper": f"worst {named}", "agrees": bool(agrees)})
                else:
                    spread = (top - low) / top if top > 0 else 0.0
                    out.append({"claim": f"{case}: all algorithms get the same throughput",
                                "ours": {**ours, "spread_pct": 100.0 * spread}, "paper": "equal",
                                "agrees": bool(spread <= TIE)})

    paper_bn = [bn for bn in ex.bottlenecks_mbps if bn in PAPER_BOTTLENECKS_MBPS]

    def mean_gain(table, a, b, w0s, qs):
        g = [_pct(table[(bn, w0, q, a)], table[(bn, w0, q, b)])
             for bn in paper_bn for w0 in w0s for q in qs]
        return float(np.mean(g)) if g else math.nan

    def direction(claim, value, sign, paper):
        ok = not math.isnan(value) and (value > tie_pct if sign > 0 else value < -tie_pct)
        out.append({"claim": claim, "ours": value, "paper": paper, "agrees": bool(ok)})

    if 1 in ex.initial_windows and paper_bn:
        qs = list(ex.queues)
        direction("Algorithm 2 vs 1, IW 1, mean throughput gain over bottlenecks and IFQs, %",
                  mean_gain(tput, 2, 1, [1], qs), +1, "large improvement")
        high = [q for q in qs if q >= 100]
        lowq = [q for q in qs if q < 100]
        if high and lowq:
            gh, gl = mean_gain(tput, 2, 1, [1], high), mean_gain(tput, 2, 1, [1], lowq)
            direction("Algorithm 2 vs 1, IW 1: mean gain at IFQ >= 100 minus mean gain at IFQ < 100, "
                      "percentage points", gh - gl, +1, "largest at IFQ 100, 200")
        if high:
            for a in (3, 4):
                direction(f"Algorithm {a} vs 1, IW 1, IFQ >= 100: mean throughput gain, %",
                          mean_gain(tput, a, 1, [1], high), -1, "lower")
    if paper_bn:
        for a in (2, 3, 4):
            direction(f"Algorithm {a} vs 1: mean start-up goodput gain (first {ex.startup_window_s:g} s), "
                      f"all cases, %", mean_gain(start, a, 1, list(ex.initial_windows), list(ex.queues)),
                      +1, "better")
    if 1 in ex.initial_windows and 4 in ex.initial_windows and paper_bn:
        g = [_pct(tput[(bn, 4, q, 2)], tput[(bn, 1, q, 2)]) for bn in paper_bn for q in ex.queues]
        direction("Algorithm 2, IW 4 vs IW 1: mean throughput change, %", float(np.mean(g)), -1, "lower")
    return out
