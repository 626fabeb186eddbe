"""Burst TCP's experiment (Burst TCP, Section 4): mice transfer time and losses on a dumbbell.

Paper setup (Section 4.1): 5 + 5 nodes, 10 Mb/s / 5 ms access links, 1.5 Mb/s / 35 ms
bottleneck, router queues of 7 packets, 1024 B packets, FTP flows of Pareto(4, 1.2)
packets starting uniformly in [0, 900 s], 1000 s runs, 50 to 250 flows per node, 50
repetitions, 95% confidence. Mice: flows below 32 KB. Claims (Section 4.2): B-TCP(4)
and B-TCP(8) cut the mean mice transfer time by about 38% against NewReno with 250 flows
(light load, mean utilisation about 2.8%) and 19% with 1250; B-TCP(4) loses many times
more mice packets than NewReno, B-TCP(8) fewer.

``scale`` shrinks the run: ``round(nodes * flows_per_node * scale)`` flows start in
``[0, 900 scale)`` and the run stops at ``1000 scale`` s, so the offered load (flows per
second) is the paper's at every scale; ``scale = 1`` is the paper's run length.

Every variant sees the same flows (sizes, start times, nodes) for a given seed (common
random numbers), so the per-seed differences between variants are paired.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats

from ..checks import check_int, check_items, check_real, check_work, checked_call
from ..growth import BtcpRule, StandardRule
from ..params import TcpParams
from ..results import ResultData
from ..sim._seeding import root_seed
from ..sim.config import SimConfig
from ..sim.dumbbell import Dumbbell
from ..sim.scenario import Scenario, random_flows, run
from ..sim.sizes import ParetoSizes

__all__ = ["BtcpExperiment", "BtcpResult", "run_btcp", "VARIANTS", "PAPER_CLAIMS", "ci95"]

VARIANTS = ("newreno", "btcp4", "btcp8")
"""NewReno with RFC 5681 slow start, B-TCP(4), B-TCP(8) (mice_t = 32 packets)."""

PAPER_CLAIMS = {
    "mice_time": "B-TCP(4) and B-TCP(8) mean mice transfer time about 38% below NewReno "
                 "at 250 flows (light load), 19% at 1250 flows (Section 4.2, Figure 6a)",
    "mice_loss": "B-TCP(4) mice loss percentage many times NewReno's; B-TCP(8) below NewReno "
                 "(Section 4.2, Figure 7)",
    "utilisation": "mean bottleneck utilisation about 2.8% at 250 flows, 19.6% at 1250 (Section 4.2)",
}

_METRICS = ("mice_mean_s", "mice_loss_pct", "all_loss_pct", "elephant_mean_s", "utilisation_pct",
            "mice_time_reduction_pct", "mice_loss_diff_pct")

# The paper's numbers, by total flow count at scale 1 (Section 4.2).
_PAPER_REDUCTION_PCT = {250: 38.0, 1250: 19.0}
_PAPER_UTILISATION_PCT = {250: 2.8, 1250: 19.6}


@checked_call
@dataclass(frozen=True)
class BtcpExperiment:
    """Settings of the Burst TCP experiment (defaults: the paper's, at ``scale``).

    Parameters
    ----------
    scale : float
        Fraction of the paper's run length and flow count, in (0, 10]. Default 1 (the
        paper's 1000 s runs: about a second per variant and seed here).
    seeds : int
        Independent repetitions, >= 2 for a confidence interval (paper: 50). Default 20.
    seed : int
        Root seed (>= 0); repetition ``i`` uses ``SeedSequence(seed).spawn(seeds)[i]``.
    flows_per_node : int
        Flows per sender node at ``scale = 1`` (paper: 50 light ... 250 heavy), >= 1.
    nodes : int
        Sender nodes (paper: 5), >= 1.
    queue_packets : int
        Router drop-tail buffer, packets (paper: 7), >= 1.
    access_queue_packets : int or None
        Drop-tail buffer of the sender access links, packets (>= 0); ``None`` (default):
        unlimited (the paper sets the *router* queues to 7).
    rwnd : int
        Receiver window M, packets (>= 1; B-TCP reaches its mice_t = 32 only if M >= 32).
        Default 64 (ns-2's default window_ of 20 would stop B-TCP short of mice_t).
    min_rto_s : float
        RFC 6298 minimum (and initial) RTO, seconds (> 0). Default 1.0.
    b : int
        Delayed-ACK factor, >= 1. Default 1 (ns-2's plain ``TCPSink`` ACKs every packet).
    mice_bytes : int
        Mice are flows of fewer bytes (paper: 32 KB = 32768), >= 1.
    variants : tuple of str
        Subset of :data:`VARIANTS` (run in the order of :data:`VARIANTS`).
    """

    scale: float = 1.0
    seeds: int = 20
    seed: int = 1
    flows_per_node: int = 50
    nodes: int = 5
    queue_packets: int = 7
    access_queue_packets: int | None = None
    rwnd: int = 64
    min_rto_s: float = 1.0
    b: int = 1
    mice_bytes: int = 32 * 1024
    variants: tuple = VARIANTS

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "scale", check_real("scale", self.scale, low=0.0, high=10.0, low_open=True))
        set_(self, "seeds", check_int("seeds", self.seeds, low=1))
        set_(self, "seed", check_int("seed", self.seed, low=0))
        set_(self, "flows_per_node", check_int("flows_per_node", self.flows_per_node, low=1))
        set_(self, "nodes", check_int("nodes", self.nodes, low=1))
        set_(self, "queue_packets", check_int("queue_packets", self.queue_packets, low=1))
        if self.access_queue_packets is not None:
            set_(self, "access_queue_packets", check_int("access_queue_packets", self.access_queue_packets, low=0))
        set_(self, "rwnd", check_int("rwnd", self.rwnd, low=1))
        set_(self, "min_rto_s", check_real("min_rto_s", self.min_rto_s, low=0.0, low_open=True))
        set_(self, "b", check_int("b", self.b, low=1))
        set_(self, "mice_bytes", check_int("mice_bytes", self.mice_bytes, low=1))
        variants = check_items("variants", self.variants, "variant names")
        if not variants or any(v not in VARIANTS for v in variants):
            raise ValueError(f"variants must be a non-empty subset of {', '.join(VARIANTS)}, got {variants!r}")
        set_(self, "variants", tuple(v for v in VARIANTS if v in variants))  # NewReno first: the pairing base
        check_work(f"experiment btcp with {self.n_flows:,} flows (nodes x flows_per_node x scale) x {self.seeds} "
                   f"seeds x {len(self.variants)} variants", *self.work())

    def work(self) -> tuple[float, float]:
        """Estimated peak memory (bytes) and CPU seconds of :func:`run_btcp`.

        Every flow is a Pareto-sized transfer of its own (mean about 20 packets) simulated to
        its end, so a run costs about its flows (:attr:`n_flows`) times a flow's cost, and
        the runs are seeds x variants; the flows of one run are held at once. Measured
        (2026-11-28, one core): 2,500 flows a run, 6 runs, 13.4 s and 127 MB; 250 flows,
        1.0 s: about 0.7-0.9 ms and 10 kB a flow.
        """
        from ..checks import PROCESS_BYTES

        return PROCESS_BYTES + 1e4 * self.n_flows, 9e-4 * self.n_flows * self.seeds * len(self.variants)

    @property
    def n_flows(self) -> int:
        """Flows per run: ``round(nodes * flows_per_node * scale)``, at least 1."""
        return max(1, round(self.nodes * self.flows_per_node * self.scale))

    @property
    def start_window_s(self) -> float:
        """Start times are uniform on ``[0, 900 scale)``, seconds."""
        return 900.0 * self.scale

    @property
    def horizon_s(self) -> float:
        """Run length, ``1000 scale`` seconds."""
        return 1000.0 * self.scale

    def topology(self) -> Dumbbell:
        """The paper's dumbbell with this experiment's node count and queue."""
        return Dumbbell(nodes=self.nodes, queue_packets=self.queue_packets,
                        access_queue_packets=self.access_queue_packets)

    def config(self) -> SimConfig:
        """Timers: RFC 6298 with ``min_rto_s`` as minimum and initial RTO; 40 B headers."""
        return SimConfig(min_rto_s=self.min_rto_s, initial_rto_s=self.min_rto_s)

    def tcp(self, variant: str) -> TcpParams:
        """TCP of ``variant``: MSS 1024 B, W0 = 1, W_SS = M = ``rwnd``, ``b``, NewReno recovery."""
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        rule = StandardRule() if variant == "newreno" else BtcpRule(f=int(variant[4:]), mice_t=32.0)
        return TcpParams(mss_bytes=1024, rtt_s=self.topology().round_trip_s, p=0.0, w0=1.0,
                         w_ss=float(self.rwnd), rwnd=float(self.rwnd), b=self.b, dup_t=3, dup_lt=None,
                         rule=rule)

    def to_dict(self) -> dict:
        """JSON-serialisable settings plus the derived run size."""
        d = asdict(self)
        d["variants"] = list(self.variants)
        d.update(n_flows=self.n_flows, start_window_s=self.start_window_s, horizon_s=self.horizon_s,
                 topology=self.topology().describe(), sizes=ParetoSizes(4.0, 1.2).describe(),
                 mss_bytes=1024, header_bytes=self.config().header_bytes, w0_packets=1,
                 mice_t_packets=32)
        return d


def ci95(x) -> tuple[float, float, float]:
    """Mean and two-sided 95% Student-t interval of ``x`` (``nan`` bounds for < 2 values)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - half, m + half


def _metrics(result, mice_bytes: int) -> dict:
    size = result.column("size_bytes")
    done = result.column("completed").astype(bool)
    t = result.column("completion_s")
    sent = result.column("packets_sent")
    lost = result.column("packets_lost")
    mice = size < mice_bytes
    eleph = ~mice

    def pct(mask):
        s = sent[mask].sum()
        return 100.0 * float(lost[mask].sum()) / float(s) if s > 0 else math.nan

    def mean(mask):
        return float(t[mask].mean()) if mask.any() else math.nan

    return {
        "n_flows": int(size.size),
        "n_mice": int(mice.sum()),
        "mice_done": int((mice & done).sum()),
        "elephants_done": int((eleph & done).sum()),
        "mice_mean_s": mean(mice & done),
        "elephant_mean_s": mean(eleph & done),
        "mice_loss_pct": pct(mice),
        "all_loss_pct": pct(np.ones_like(mice)),
        "utilisation_pct": 100.0 * float(result.queue.busy_fraction.mean()),
    }


@dataclass(frozen=True)
class BtcpResult(ResultData):
    """Outcome of :func:`run_btcp`.

    Attributes
    ----------
    experiment : BtcpExperiment
        Settings.
    per_seed : list of dict
        One row per (repetition, variant): ``seed_index``, ``variant`` and the metrics
        ``n_flows, n_mice, mice_done, elephants_done, mice_mean_s, elephant_mean_s,
        mice_loss_pct, all_loss_pct, utilisation_pct`` and, for B-TCP,
        ``mice_time_reduction_pct`` = 100 (1 - mice_mean / NewReno's mice_mean) of the same
        repetition; ``mice_loss_diff_pct`` = mice_loss_pct minus NewReno's of the same repetition.
    summary : list of dict
        One row per variant: ``variant`` and, per metric, ``<metric>`` (mean over
        repetitions), ``<metric>_lo``, ``<metric>_hi`` (95% Student-t interval).
    claims : list of dict
        ``{"claim", "ours": {"mean", "ci95"}, "paper", "agrees"}`` per claim of the paper
        (see :func:`_claims` for the agreement rules).
    """

    ROWS = "summary"  # to_frame(): one row per entry

    experiment: BtcpExperiment
    per_seed: list = field(default_factory=list)
    summary: list = field(default_factory=list)
    claims: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The issue's contract: ``{"experiment", "params", "series", "claims"}`` plus
        ``per_seed`` (raw rows) and ``paper_text`` (the paper's claims in words). ``series``
        is :attr:`summary`."""
        return {"experiment": "btcp", "params": self.experiment.to_dict(), "series": self.summary,
                "claims": self.claims, "per_seed": self.per_seed, "paper_text": PAPER_CLAIMS}


@checked_call
def run_btcp(experiment: BtcpExperiment | None = None, progress=None, *, rng=None) -> BtcpResult:
    """Run Burst TCP's experiment: every variant on the same random flows, per repetition.

    Parameters
    ----------
    experiment : BtcpExperiment, optional
        Settings; default ``BtcpExperiment()``.
    progress : callable, optional
        Called as ``progress(seed_index, variant)`` after each run.
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The randomness (SPEC 7), in place of the experiment's ``seed``: an int is the seed,
        a Generator draws it (:func:`~latency_model.sim._seeding.root_seed`); the seed used
        is in the result's experiment.

    Returns
    -------
    BtcpResult
    """
    ex = BtcpExperiment() if experiment is None else experiment
    if not isinstance(ex, BtcpExperiment):
        raise ValueError(f"experiment must be a BtcpExperiment, got {ex!r}")
    if rng is not None:
        ex = dataclasses.replace(ex, seed=root_seed(rng))
    children = np.random.SeedSequence(ex.seed).spawn(ex.seeds)
    sizes = ParetoSizes(4.0, 1.2)
    topo, cfg = ex.topology(), ex.config()
    rows = []
    for i, child in enumerate(children):
        base = None
        for v in ex.variants:
            flows = random_flows(ex.n_flows, sizes, ex.tcp(v), start_window_s=ex.start_window_s,
                                 nodes=ex.nodes, seed=child)
            res = run(Scenario(flows=flows, topology=topo, config=cfg, horizon_s=ex.horizon_s))
            row = {"seed_index": i, "variant": v, **_metrics(res, ex.mice_bytes)}
            if v == "newreno":
                base = row
            paired = base is not None and v != "newreno"
            row["mice_time_reduction_pct"] = (100.0 * (1.0 - row["mice_mean_s"] / base["mice_mean_s"])
                                              if paired else math.nan)
            row["mice_loss_diff_pct"] = row["mice_loss_pct"] - base["mice_loss_pct"] if paired else math.nan
            rows.append(row)
            if progress is not None:
                progress(i, v)
    summary = []
    for v in ex.variants:
        sel = [r for r in rows if r["variant"] == v]
        out = {"variant": v, "seeds": len(sel)}
        for m in _METRICS:
            mean, lo, hi = ci95([r[m] for r in sel])
            out[m], out[f"{m}_lo"], out[f"{m}_hi"] = mean, lo, hi
        summary.append(out)
    return BtcpResult(experiment=ex, per_seed=rows, summary=summary, claims=_claims(ex, summary))


def _claims(ex: BtcpExperiment, summary: list) -> list:
    """The paper's claims beside ours. A direction claim agrees when our 95% interval excludes
    zero on the claimed side; a number claim agrees when the paper's value lies inside our 95%
    interval. Number claims are made only at the paper's loads (250 or 1250 flows at scale 1)."""
    by = {row["variant"]: row for row in summary}
    paper_load = ex.nodes * ex.flows_per_node if ex.nodes == 5 else None
    out = []

    def ours(row, m):
        return {"mean": row[m], "ci95": [row[f"{m}_lo"], row[f"{m}_hi"]]}

    for v, label in (("btcp4", "B-TCP(4)"), ("btcp8", "B-TCP(8)")):
        if v not in by or "newreno" not in by:
            continue
        r = by[v]
        out.append({"claim": f"{label} mean mice transfer time below NewReno's (reduction %, paired by seed)",
                    "ours": ours(r, "mice_time_reduction_pct"), "paper": "below",
                    "agrees": bool(r["mice_time_reduction_pct_lo"] > 0.0)})
        if paper_load in _PAPER_REDUCTION_PCT:
            ref = _PAPER_REDUCTION_PCT[paper_load]
            out.append({"claim": f"{label} mice transfer time reduction vs NewReno at the paper's "
                                 f"{paper_load}-flow load, %",
                        "ours": ours(r, "mice_time_reduction_pct"), "paper": ref,
                        "agrees": bool(r["mice_time_reduction_pct_lo"] <= ref <= r["mice_time_reduction_pct_hi"])})
    if "btcp4" in by and "newreno" in by:
        r = by["btcp4"]
        out.append({"claim": "B-TCP(4) loses a larger percentage of mice packets than NewReno "
                             "(difference in percentage points, paired by seed)",
                    "ours": ours(r, "mice_loss_diff_pct"), "paper": "more",
                    "agrees": bool(r["mice_loss_diff_pct_lo"] > 0.0)})
    if "btcp8" in by and "newreno" in by:
        r = by["btcp8"]
        out.append({"claim": "B-TCP(8) loses a smaller percentage of mice packets than NewReno "
                             "(difference in percentage points, paired by seed)",
                    "ours": ours(r, "mice_loss_diff_pct"), "paper": "fewer",
                    "agrees": bool(r["mice_loss_diff_pct_hi"] < 0.0)})
    if paper_load in _PAPER_UTILISATION_PCT and "newreno" in by:
        r, ref = by["newreno"], _PAPER_UTILISATION_PCT[paper_load]
        out.append({"claim": f"mean bottleneck utilisation with NewReno at the paper's {paper_load}-flow load, %",
                    "ours": ours(r, "utilisation_pct"), "paper": ref,
                    "agrees": bool(r["utilisation_pct_lo"] <= ref <= r["utilisation_pct_hi"])})
    return out
