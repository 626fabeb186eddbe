"""NGWA's packet-loss experiment (Talau & Wille, Section 3.3, Table 2 and Figure 6).

Paper setup (Section 3): four TCP connections across a dumbbell (Figure 2), segments of
1000 B, a drop-tail router queue of 97 KB, ``W_max`` = 64 KB, alpha = 0.3, ns-3
``OnOffApplication`` traffic "configured to continuously transmit data ... at a rate of
500 kbps", 10-minute runs, 30 rounds. Reported: lost packets per round (Table 2: RFC 793
4001, New Reno 328, modes 1-8: 7, 0, 1063, 869, 0, 0, 0, 0) and triple dupACKs received
(Figure 6: mode 3 5279, mode 4 2833, mode 1 30, none for modes 2, 5, 6, 7, 8; RFC 793 and
New Reno "the highest").

The paper's Figure 2 (link rates and delays) is not in its text; this experiment's dumbbell
is our choice, stated in :meth:`NgwaExperiment.topology` and ``validation/EXPERIMENTS.md``:
4 sender nodes on 10 Mb/s / 2 ms access links, a 2 Mb/s / 20 ms bottleneck, and one
500 kb/s constant-rate on-off source (always on) feeding the router queue. The four TCP
flows are long transfers (they do not finish within the run).

``scale`` shrinks the run: ``600 scale`` seconds; ``scale = 1`` is the paper's 10 minutes.
Round ``i`` draws the four start times uniformly on ``[0, 1 s)`` and the source's phase from
``SeedSequence(seed).spawn(rounds)[i]``; every mode sees the same draw (common random numbers).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..checks import check_int, check_items, check_real, check_work, checked_call
from ..params import MAX_WINDOW_BYTES, TcpParams
from ..results import ResultData
from ..sim._seeding import root_seed
from ..sim.config import SimConfig
from ..sim.dumbbell import Dumbbell
from ..sim.ngwa import mode_names, ngwa_mode
from ..sim.onoff import OnOffSource
from ..sim.scenario import Flow, Scenario, run
from .btcp import ci95

__all__ = ["NgwaExperiment", "NgwaResult", "run_ngwa", "VARIANTS", "PAPER_LOST", "PAPER_TRIPLE_DUPACKS"]

VARIANTS = mode_names()
"""``rfc793, newreno, mode1 .. mode8`` (Table 2's rows)."""

PAPER_LOST = {"rfc793": 4001, "newreno": 328, "mode1": 7, "mode2": 0, "mode3": 1063, "mode4": 869,
              "mode5": 0, "mode6": 0, "mode7": 0, "mode8": 0}
"""Table 2: average lost packets per 10-minute round."""

PAPER_TRIPLE_DUPACKS = {"mode1": 30, "mode2": 0, "mode3": 5279, "mode4": 2833, "mode5": 0, "mode6": 0,
                        "mode7": 0, "mode8": 0}
"""Figure 6 text (Section 3.3): triple dupACKs received; RFC 793 and New Reno "the highest",
their numbers not given in the text."""

_METRICS = ("lost", "triple_dupacks", "fast_retransmits", "timeouts", "delivered", "jain_fairness",
            "utilisation_pct", "mean_queue_packets", "source_lost")


@checked_call
@dataclass(frozen=True)
class NgwaExperiment:
    """Settings of the NGWA experiment (defaults: the paper's where it gives them).

    Parameters
    ----------
    scale : float
        Run length as a fraction of the paper's 600 s, in (0, 10]. Default 0.2 (120 s).
    rounds : int
        Repetitions (paper: 30), >= 1. Default 3.
    seed : int
        Root seed, >= 0.
    mss_bytes : int
        TCP segment size, bytes (paper: 1000), >= 1.
    queue_bytes : int
        Router drop-tail buffer, bytes (paper: 97 KB = 97000); the simulator's queue counts
        packets: ``queue_bytes // (mss_bytes + 40)`` full segments.
    w_max_bytes : int
        ``W_max``, bytes (paper: 64 KB = 65536), >= 1.
    alpha : float
        Smoothing constant, in (0, 1) (paper: 0.3).
    bottleneck_rate_bps, bottleneck_delay_s, access_rate_bps, access_delay_s : float
        The dumbbell (our choice: 2 Mb/s, 20 ms, 10 Mb/s, 2 ms).
    sources : int
        500 kb/s on-off sources feeding the router, >= 0. Default 1.
    source_rate_bps : float
        Rate of each on-off source while on, bit/s (paper: 500 kb/s), > 0.
    source_on_s, source_off_s : float
        On and off periods, seconds (> 0, >= 0); default always on (off 0).
    b : int
        Delayed-ACK factor (ns-3's default DelAckCount 2), >= 1.
    min_rto_s : float
        Minimum and initial RTO, seconds (ns-3's default 1 s), > 0.
    variants : tuple of str
        Subset of :data:`VARIANTS`, run in that order.
    """

    scale: float = 0.2
    rounds: int = 3
    seed: int = 1
    mss_bytes: int = 1000
    queue_bytes: int = 97000
    w_max_bytes: int = 65536
    alpha: float = 0.3
    bottleneck_rate_bps: float = 2e6
    bottleneck_delay_s: float = 0.02
    access_rate_bps: float = 10e6
    access_delay_s: float = 0.002
    sources: int = 1
    source_rate_bps: float = 500e3
    source_on_s: float = 1.0
    source_off_s: float = 0.0
    b: int = 2
    min_rto_s: float = 1.0
    variants: tuple = VARIANTS

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "scale", check_real("scale", self.scale, low=0.0, high=10.0, low_open=True))
        set_(self, "rounds", check_int("rounds", self.rounds, low=1))
        set_(self, "seed", check_int("seed", self.seed, low=0))
        set_(self, "mss_bytes", check_int("mss_bytes", self.mss_bytes, low=1))
        set_(self, "queue_bytes", check_int("queue_bytes", self.queue_bytes, low=self.mss_bytes + 40))
        # the flows' receiver window is W_max in segments plus one: at most TCP's largest window
        set_(self, "w_max_bytes", check_int("w_max_bytes", self.w_max_bytes, low=1,
                                            high=(MAX_WINDOW_BYTES // self.mss_bytes - 1) * self.mss_bytes))
        set_(self, "alpha", check_real("alpha", self.alpha, low=0.0, high=1.0, low_open=True, high_open=True))
        for k in ("bottleneck_rate_bps", "access_rate_bps", "source_rate_bps", "source_on_s", "min_rto_s"):
            set_(self, k, check_real(k, getattr(self, k), low=0.0, low_open=True))
        for k in ("bottleneck_delay_s", "access_delay_s", "source_off_s"):
            set_(self, k, check_real(k, getattr(self, k), low=0.0))
        set_(self, "sources", check_int("sources", self.sources, low=0))
        set_(self, "b", check_int("b", self.b, low=1))
        variants = check_items("variants", self.variants, "variant names")
        if not variants or any(v not in VARIANTS for v in variants):
            raise ValueError(f"variants must be a non-empty subset of {', '.join(VARIANTS)}, got {variants!r}")
        set_(self, "variants", tuple(v for v in VARIANTS if v in variants))
        check_work(f"experiment ngwa with {self.sources:,} sources at {self.source_rate_bps:g} b/s over "
                   f"{self.horizon_s:g} s (scale) x {self.rounds} rounds x {len(self.variants)} variants", *self.work())

    def work(self) -> tuple[float, float]:
        """Estimated peak memory (bytes) and CPU seconds of :func:`run_ngwa`.

        A run carries the four flows, which the bottleneck bounds (about 0.8 s of CPU per
        120 s simulated at the defaults), and every packet of the on-off sources, each an
        event at the router: ``sources x source_rate_bps x horizon x on / (on + off) / (8
        (mss_bytes + 40))`` packets, about 3.6 us each. Measured (2026-11-28, one core, the
        10 variants, one round, 120 s): 1 source 7.9 s, 100 sources 34.7 s (7,500 packets
        a source and run). The sources hold no state between packets.
        """
        from ..checks import PROCESS_BYTES

        duty = self.source_on_s / (self.source_on_s + self.source_off_s)
        packets = self.sources * self.source_rate_bps * self.horizon_s * duty / (8.0 * (self.mss_bytes + 40))
        per_run = 0.0066 * self.horizon_s + 3.6e-6 * packets
        return PROCESS_BYTES, per_run * self.rounds * len(self.variants)

    @property
    def horizon_s(self) -> float:
        """Run length, ``600 scale`` seconds."""
        return 600.0 * self.scale

    @property
    def queue_packets(self) -> int:
        """Router buffer in full segments: ``queue_bytes // (mss_bytes + 40)``."""
        return self.queue_bytes // (self.mss_bytes + SimConfig().header_bytes)

    def topology(self) -> Dumbbell:
        """Four sender nodes around one bottleneck with the router buffer :attr:`queue_packets`."""
        return Dumbbell(nodes=4, access_rate_bps=self.access_rate_bps, access_delay_s=self.access_delay_s,
                        bottleneck_rate_bps=self.bottleneck_rate_bps,
                        bottleneck_delay_s=self.bottleneck_delay_s, queue_packets=self.queue_packets)

    def config(self) -> SimConfig:
        """Timers: RFC 6298 with ``min_rto_s`` as minimum and initial RTO; 40 B headers."""
        return SimConfig(min_rto_s=self.min_rto_s, initial_rto_s=self.min_rto_s)

    def tcp(self) -> TcpParams:
        """TCP of every flow: W0 = 1, ssthresh and receiver buffer W_b just above ``W_max``."""
        w_b = -(-self.w_max_bytes // self.mss_bytes) + 1  # packets; W_max is the binding limit
        return TcpParams(mss_bytes=self.mss_bytes, rtt_s=self.topology().round_trip_s, p=0.0, w0=1.0,
                         w_ss=float(w_b), rwnd=float(w_b), b=self.b, dup_t=3, dup_lt=None)

    def flow_bytes(self) -> int:
        """Size of each transfer: more than the bottleneck can carry in the run (never finishes)."""
        return int(self.bottleneck_rate_bps * self.horizon_s / 8.0) + 100 * self.mss_bytes

    def to_dict(self) -> dict:
        """JSON-serialisable settings plus the derived run size."""
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["variants"] = list(self.variants)
        d.update(horizon_s=self.horizon_s, queue_packets=self.queue_packets, flows=4,
                 header_bytes=self.config().header_bytes, topology=self.topology().describe(),
                 start_window_s=1.0)
        return d


def _scenario(ex: NgwaExperiment, variant: str, child: np.random.SeedSequence) -> Scenario:
    rng = np.random.default_rng(child)
    starts = rng.random(4)
    phases = rng.random(ex.sources)
    mode = ngwa_mode(variant, alpha=ex.alpha, w_max_bytes=ex.w_max_bytes)
    tcp, size = ex.tcp(), ex.flow_bytes()
    flows = [Flow(float(starts[i]), size, tcp, node=i, ngwa=mode) for i in range(4)]
    wire = ex.mss_bytes + ex.config().header_bytes
    interval = wire * 8.0 / ex.source_rate_bps
    sources = tuple(OnOffSource(ex.source_rate_bps, wire, start_s=float(phases[k]) * interval,
                                on_s=ex.source_on_s, off_s=ex.source_off_s) for k in range(ex.sources))
    return Scenario(flows=flows, topology=ex.topology(), config=ex.config(), horizon_s=ex.horizon_s,
                    bin_s=1.0, sources=sources)


def _metrics(res) -> dict:
    delivered = res.column("packets_delivered").astype(float)
    jain = float(delivered.sum() ** 2 / (delivered.size * (delivered ** 2).sum())) if delivered.any() else np.nan
    return {
        "lost": int(res.column("packets_lost").sum()),
        "triple_dupacks": int(res.column("triple_dupacks").sum()),
        "fast_retransmits": int(res.column("fast_retransmits").sum()),
        "timeouts": int(res.column("timeouts").sum()),
        "delivered": int(delivered.sum()),
        "jain_fairness": jain,
        "utilisation_pct": 100.0 * float(res.queue.busy_fraction.mean()),
        "mean_queue_packets": float(res.queue.mean_length.mean()),
        "source_lost": int(res.source_lost),
    }


@dataclass(frozen=True)
class NgwaResult(ResultData):
    """Outcome of :func:`run_ngwa`.

    Attributes
    ----------
    experiment : NgwaExperiment
        Settings.
    per_round : list of dict
        One row per (round, variant): ``round``, ``variant`` and the metrics ``lost`` (TCP
        packets dropped, the four flows together), ``triple_dupacks`` (received),
        ``fast_retransmits``, ``timeouts``, ``delivered`` (data packets that reached the
        receivers), ``jain_fairness`` (Jain's index of the per-flow delivered packets),
        ``utilisation_pct`` (bottleneck busy time), ``mean_queue_packets``, ``source_lost``
        (on-off packets dropped).
    summary : list of dict
        One row per variant: ``variant``, ``rounds``, and per metric its mean, ``_lo`` and
        ``_hi`` (95% Student-t interval; NaN with one round), plus the paper's ``paper_lost``
        and ``paper_triple_dupacks`` (None where the paper gives no number).
    claims : list of dict
        ``{"claim", "ours", "paper", "agrees"}`` (see :func:`_claims`).
    """

    ROWS = "summary"  # to_frame(): one row per entry

    experiment: NgwaExperiment
    per_round: list = field(default_factory=list)
    summary: list = field(default_factory=list)
    claims: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The issue's contract ``{"experiment", "params", "series", "claims"}`` plus ``per_round``;
        ``series`` is :attr:`summary`."""
        return {"experiment": "ngwa", "params": self.experiment.to_dict(), "series": self.summary,
                "claims": self.claims, "per_round": self.per_round}


@checked_call
def run_ngwa(experiment: NgwaExperiment | None = None, progress=None, *, rng=None) -> NgwaResult:
    """Run the NGWA loss experiment: every variant on the same draw, per round.

    Parameters
    ----------
    experiment : NgwaExperiment, optional
        Settings; default ``NgwaExperiment()``.
    progress : callable, optional
        Called as ``progress(round, variant)`` after each run.
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The randomness (SPEC 7), in place of the experiment's ``seed``: an int is the seed,
        a Generator draws it (:func:`~latency_model.sim._seeding.root_seed`); the seed used
        is in the result's experiment.

    Returns
    -------
    NgwaResult
    """
    ex = NgwaExperiment() if experiment is None else experiment
    if not isinstance(ex, NgwaExperiment):
        raise ValueError(f"experiment must be an NgwaExperiment, got {ex!r}")
    if rng is not None:
        ex = dataclasses.replace(ex, seed=root_seed(rng))
    rows = []
    for i, child in enumerate(np.random.SeedSequence(ex.seed).spawn(ex.rounds)):
        for v in ex.variants:
            rows.append({"round": i, "variant": v, **_metrics(run(_scenario(ex, v, child)))})
            if progress is not None:
                progress(i, v)
    summary = []
    for v in ex.variants:
        sel = [r for r in rows if r["variant"] == v]
        out = {"variant": v, "rounds": len(sel)}
        for m in _METRICS:
            out[m], out[f"{m}_lo"], out[f"{m}_hi"] = ci95([r[m] for r in sel])
        out["lost_max"] = max(r["lost"] for r in sel)
        out["triple_dupacks_max"] = max(r["triple_dupacks"] for r in sel)
        out["paper_lost"] = PAPER_LOST[v]
        out["paper_triple_dupacks"] = PAPER_TRIPLE_DUPACKS.get(v)
        summary.append(out)
    return NgwaResult(experiment=ex, per_round=rows, summary=summary, claims=_claims(summary))


def _claims(summary: list) -> list:
    """The paper's claims beside ours. Our topology and run length are not the paper's, so
    counts are compared by kind: a row the paper reports as 0 agrees when we lose nothing
    (or receive no triple dupACK) in every round, a nonzero row when our mean is above 0;
    orderings agree when our means are ordered the same way."""
    by = {r["variant"]: r for r in summary}
    out = []
    for v, row in by.items():
        ref = PAPER_LOST[v]
        out.append({"claim": f"{v}: lost packets per round are {'zero' if ref == 0 else 'nonzero'} "
                             f"(Table 2: {ref})",
                    "ours": row["lost"], "paper": ref,
                    "agrees": bool(row["lost_max"] == 0) if ref == 0 else bool(row["lost"] > 0)})
    for v, row in by.items():
        ref = PAPER_TRIPLE_DUPACKS.get(v)
        if ref is None:
            continue
        out.append({"claim": f"{v}: triple dupACKs received are {'zero' if ref == 0 else 'nonzero'} "
                             f"(Section 3.3: {ref})",
                    "ours": row["triple_dupacks"], "paper": ref,
                    "agrees": bool(row["triple_dupacks_max"] == 0) if ref == 0 else bool(row["triple_dupacks"] > 0)})
    if "rfc793" in by and len(by) > 1:
        top = max(by, key=lambda v: by[v]["lost"])
        out.append({"claim": "RFC 793 loses the most packets (Table 2)", "ours": top, "paper": "rfc793",
                    "agrees": top == "rfc793"})
    ranked = [v for v in ("rfc793", "mode3", "mode4", "newreno", "mode1") if v in by]
    if len(ranked) > 1:
        ours = sorted(ranked, key=lambda v: -by[v]["lost"])
        out.append({"claim": "order of the lossy rows by lost packets: " + " > ".join(ranked) + " (Table 2)",
                    "ours": " > ".join(ours), "paper": " > ".join(ranked), "agrees": ours == ranked})
    ngwa = [v for v in by if v.startswith("mode")]
    base = [v for v in ("rfc793", "newreno") if v in by]
    if ngwa and base:
        worst = max(by[v]["triple_dupacks"] for v in ngwa)
        ours = {v: by[v]["triple_dupacks"] for v in base}
        out.append({"claim": "RFC 793 and New Reno receive more triple dupACKs than every NGWA mode "
                             "(Section 3.3: 'the highest')",
                    "ours": ours, "paper": "highest", "agrees": all(x > worst for x in ours.values())})
    return out
