"""Figures 9 and 10 of Ayesta & Avrachenkov for today's TCP: expected latency and the
latency cut given one loss, NewReno, LT, the paper's proposal, Early Retransmit, SACK + RACK-TLP
and SACK + RACK-TLP + PRR, model and packet simulation side by side.

Setting: the paper's Section 4 (MSS 500 B, RTT 0.1 s on a 100 Mb/s link, W_SS = M = 30, b = 1,
RTO max(1 s, 4 RTT) as RFC 6298's 1 s floor gives it) at the paper's W0 = 2 and at IW 10
(RFC 6928), p = 0.01, 0.05, 0.1, sizes 1..60 packets.

What is computed, per (variant, IW, p, size):

* model expected latency (Eq. 1): the paper's recursion (:mod:`latency_model.model.recursion`)
  for NewReno, LT and the proposal; :mod:`latency_model.model.modern` for Early Retransmit
  (recovery ``"newreno"`` with ``early_retransmit``) and the SACK stacks (recovery
  ``"rack-tlp"``; the fluid model has no PRR axis, so both SACK variants share one curve);
* simulated mean latency with a 95% Student-t CI (:func:`latency_model.sim.montecarlo.simulate`;
  every variant of one (IW, p) uses the same seed: common random numbers, so run ``i`` of two
  variants sees the same uniforms and their differences are paired);
* L_1, the latency given exactly one loss: model (the recursions' L_1) and simulation, exactly:
  each position ``i`` of an N-packet transfer is dropped once (:func:`run_transfer`, no other
  loss) and the completion times are averaged with the probability of that single-loss path,
  ``p (1 - p)^(T_i - 1)`` (``T_i`` transmissions; given exactly one lost transmission the
  lost one is a first transmission), so this L_1 has no Monte Carlo error; the Monte Carlo's
  own mean over runs with one loss is kept beside it as a check;
* the cut against NewReno, ``1 - L/L_NewReno``, of both;
* which single-loss positions end in an RTO expiry (simulated) and the width of the model's
  RTO regions (packets).

With NewReno, LT and the proposal, the rows also hold the paper's own Figure 9 variant,
``size-based`` (the proposal below 10 KB, LT above; its rows are theirs).

The simulated LT and proposal read ``dup_lt`` as the paper does (Section 2.1: new data from the
``dup_lt``-th duplicate ACK on, ``SimConfig(lt_mode="paper")``), which is what the model and the
proposal assume; ``lt_mode="rfc3042"`` gives RFC 3042's LT (one new segment on each of the first
``dup_lt`` duplicate ACKs), as ``latency-model reproduce`` simulates it (validation/EXPERIMENTS.md
shows both).

Seeds: the simulation of (IW, p) uses the integer seed
``SeedSequence([seed, round(1000 IW), round(1e9 p)]).generate_state(1)[0]``, so a cell's runs
do not depend on which other cells, variants or workers were asked for.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats

from ..checks import check_choice, check_int, check_jobs, check_items, check_real, check_work, checked_call
from ..params import SIZE_BASED_THRESHOLD_BYTES, TcpParams, apply_variant
from ..results import ResultData
from ..sim._seeding import root_seed

__all__ = ["VARIANTS", "LABELS", "ModernExperiment", "ModernResult", "run_modern", "sim_config",
           "model_params", "cell_seed", "PAPER_CLAIMS", "claims_from", "compact_sizes"]

VARIANTS = ("newreno", "lt", "proposal", "er", "sack-rack-tlp", "sack-rack-tlp-prr")
"""NewReno (RFC 6582), Limited Transmit (RFC 3042, dup_LT = 2), the paper's Section 3.1 proposal,
Early Retransmit (RFC 5827), SACK (RFC 2018/6675) with RACK-TLP (RFC 8985) and RFC 6675's cwnd
= ssthresh in recovery, and the same with PRR (RFC 6937)."""

LABELS = {"newreno": "NewReno", "lt": "LT", "proposal": "proposal", "er": "ER",
          "sack-rack-tlp": "SACK+RACK-TLP", "sack-rack-tlp-prr": "SACK+RACK-TLP+PRR",
          "size-based": "size-based"}

SACK_VARIANTS = ("sack-rack-tlp", "sack-rack-tlp-prr")
PRR_MODES = ("ssrb", "crb")
LT_MODES = ("paper", "rfc3042")
STACKS = ("rfc", "ns3", "linux")

PAPER_CLAIMS = {
    "fig9": "LT reduces the expected latency significantly and the proposal reduces it further "
            "(Section 4, Figure 9: W0 = 2, p = 0.1)",
    "fig10": "given a loss, LT cuts the transfer time of a 4 KB (8-packet) file by 10% and the "
             "proposal by 40% (Section 4, Figure 10)",
}

_FIG10_TOLERANCE = 0.05
"""Absolute tolerance on a cut read off the paper's Figure 10 (its curves are drawn, not
tabulated: 5 percentage points)."""

_SHARE_L1_TOLERANCE = 0.10
"""Model and simulation agree on a share of the proposal's L_1 gain within 10 points."""

QUICK_SIZES = (1, 2, 3, 4, 5, 6, 8, 10, 14, 20, 30, 40, 60)
QUICK_RUNS = 100


@checked_call
@dataclass(frozen=True)
class ModernExperiment:
    """Settings of the modern-recovery experiment (defaults: the paper's setting).

    Parameters
    ----------
    variants : tuple of str
        Subset of :data:`VARIANTS` (kept in that order).
    iw_packets : tuple of int
        Initial windows, packets (>= 1, <= 30). Default (2, 10): the paper's W0 and RFC 6928.
    ps : tuple of float
        Loss probabilities, each in (0, 0.5]. Default (0.01, 0.05, 0.1).
    sizes_packets : tuple of int
        File sizes, packets (1 .. 200). Default 1..60.
    runs : int
        Simulated transfers per (variant, IW, p, size), >= 2. Default 400.
    seed : int
        Root seed (>= 0).
    prr : {"ssrb", "crb"}
        PRR's reduction bound in ``sack-rack-tlp-prr`` (RFC 6937 Section 3). Default ssrb.
    lt_mode : {"paper", "rfc3042"} or None
        What ``dup_lt`` means to the simulated LT and proposal (``SimConfig.lt_mode``): the
        paper's Section 2.1 reading (new data from the ``dup_lt``-th duplicate ACK on), which
        its model and its proposal assume, or RFC 3042's new segment on each of the first
        ``dup_lt`` duplicate ACKs (``latency-model reproduce``'s figures). ``None`` (default):
        ``"paper"``, but ``"rfc3042"`` on the ns3 stack (ns-3's own Limited Transmit).
    stack : {"rfc", "ns3", "linux"}
        Simulator profile (``SimConfig.profile``): timers and receiver. ``rfc`` is the paper's.
        ``ns3`` runs only NewReno and LT (ns-3.37 has no SACK, tail rule or ER sender here);
        ``linux`` gives the model its RTO (:func:`model_params`).
    workers : int
        Worker processes (>= 1); results do not depend on it.
    engine : {"auto", "python", "compiled"}
        Simulator engine (identical results).
    """

    variants: tuple = VARIANTS
    iw_packets: tuple = (2, 10)
    ps: tuple = (0.01, 0.05, 0.1)
    sizes_packets: tuple = tuple(range(1, 61))
    runs: int = 400
    seed: int = 1
    prr: str = "ssrb"
    lt_mode: str | None = None
    stack: str = "rfc"
    workers: int = 1
    engine: str = "auto"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        variants = check_items("variants", self.variants, "variant names")
        if not variants or any(v not in VARIANTS for v in variants):
            raise ValueError(f"variants must be a non-empty subset of {', '.join(VARIANTS)}, got {variants!r}")
        set_(self, "variants", tuple(v for v in VARIANTS if v in variants))
        iws = check_items("iw_packets", self.iw_packets, "initial windows")
        if not iws:
            raise ValueError("iw_packets must list at least one initial window")
        set_(self, "iw_packets", tuple(sorted({check_int("iw_packets", w, low=1, high=30) for w in iws})))
        ps = check_items("ps", self.ps, "loss probabilities")
        if not ps:
            raise ValueError("ps must list at least one loss probability")
        set_(self, "ps", tuple(sorted({check_real("ps", p, low=0.0, high=0.5, low_open=True) for p in ps})))
        sizes = check_items("sizes_packets", self.sizes_packets, "sizes")
        if not sizes:
            raise ValueError("sizes_packets must list at least one size")
        set_(self, "sizes_packets", tuple(sorted({check_int("sizes_packets", s, low=1, high=200) for s in sizes})))
        set_(self, "runs", check_int("runs", self.runs, low=2))
        set_(self, "seed", check_int("seed", self.seed, low=0))
        check_choice("prr", self.prr, PRR_MODES)
        check_choice("stack", self.stack, STACKS)
        if self.lt_mode is None:
            set_(self, "lt_mode", "rfc3042" if self.stack == "ns3" else "paper")
        check_choice("lt_mode", self.lt_mode, LT_MODES)
        set_(self, "workers", check_jobs("workers", self.workers))
        check_choice("engine", self.engine, ("auto", "python", "compiled"))
        for v in self.variants:  # every variant must run on the stack (one-line error otherwise)
            sim_config(v, self.stack, self.prr, self.lt_mode, base_params(self.iw_packets[0], self.ps[0]))
        check_work(f"experiment modern with {self.runs:,} runs x {len(self.sizes_packets)} sizes x "
                   f"{len(self.variants) * len(self.iw_packets) * len(self.ps)} cells (variants x iw_packets x ps)",
                   *self.work())

    def work(self) -> tuple[float, float]:
        """Estimated peak memory (bytes) and CPU seconds of :func:`run_modern` on one worker.

        Each cell (variant, initial window, p) simulates ``runs`` transfers of every size
        (:func:`~latency_model.checks.transfer_seconds` on the SACK sender's kernel, the
        slowest, each about N / (1 - p) transmissions) and solves the model for its sizes
        (:func:`~latency_model.checks.model_cost`); the measures of every run are kept
        (10 doubles a run and size). Measured (2026-11-28): one cell, 60 sizes x 400 runs,
        4.7 s.
        """
        from ..checks import PROCESS_BYTES, model_cost, transfer_seconds

        cells = len(self.variants) * len(self.iw_packets) * len(self.ps)
        n = len(self.sizes_packets)
        seconds = sum(self.runs * sum(transfer_seconds(s, p, True, "sack") for s in self.sizes_packets)
                      + model_cost(p, 1.0, max(self.sizes_packets), n)[1] for p in self.ps) * cells / len(self.ps)
        return PROCESS_BYTES + 80.0 * cells * n * self.runs, seconds

    def to_dict(self) -> dict:
        """JSON-ready settings, with the path and TCP of the paper's setting."""
        d = asdict(self)
        for k in ("variants", "iw_packets", "ps", "sizes_packets"):
            d[k] = list(d[k])
        base = base_params(self.iw_packets[0], self.ps[0])
        d["tcp"] = {k: v for k, v in base.to_dict().items() if k not in ("w0", "p")}
        d["model_rto_s"] = model_params(base, self.stack).rto
        d["sim_configs"] = {v: sim_config(v, self.stack, self.prr, self.lt_mode, base).to_dict()
                            for v in self.variants}
        return d


def base_params(iw: float, p: float) -> TcpParams:
    """The paper's Section 4 setting (TcpParams defaults) with W0 = ``iw`` packets and loss ``p``."""
    return TcpParams(w0=float(iw), p=float(p))


def variant_params(variant: str, iw: float, p: float) -> TcpParams:
    """TCP of ``variant``: the recovery flags of NewReno, LT, the proposal or ER; the SACK
    variants keep NewReno's flags (RACK-TLP is the sender's, in :func:`sim_config`)."""
    check_choice("variant", variant, VARIANTS)
    base = base_params(iw, p)
    return apply_variant(base, "newreno" if variant in SACK_VARIANTS else variant)


def sim_config(variant: str, stack: str = "rfc", prr: str = "ssrb", lt_mode: str = "rfc3042",
               params: TcpParams | None = None):
    """The simulator settings of ``variant`` on stack profile ``stack``.

    NewReno, LT, the proposal and ER run the profile's non-SACK sender (``rfc``; ``ns3`` on
    the ns3 profile, which cannot run the proposal or ER, nor the paper's LT reading), LT and
    the proposal with ``lt_mode`` (the others have no ``dup_lt``); the SACK variants run
    ``sender="sack", rack_tlp=True`` with ``prr="off"`` (RFC 6675's cwnd = ssthresh) or
    ``prr`` (ns3: not available). ``params`` (default: the paper's setting) is the TCP the
    ns3 check judges.

    Raises
    ------
    ValueError
        One line naming the variant and stack that cannot combine.
    """
    from ..sim.config import SimConfig

    check_choice("variant", variant, VARIANTS)
    check_choice("stack", stack, STACKS)
    check_choice("prr", prr, PRR_MODES)
    check_choice("lt_mode", lt_mode, LT_MODES)
    if variant in SACK_VARIANTS:
        if stack == "ns3":
            raise ValueError(f"variant {variant} cannot combine with stack ns3 (the ns3 profile is "
                             "ns-3.37's TcpNewReno without SACK); use stack rfc or linux")
        return SimConfig.profile(stack, sender="sack", rack_tlp=True,
                                 prr=prr if variant.endswith("prr") else "off")
    config = SimConfig.profile(stack, sender="ns3" if stack == "ns3" else "rfc",
                               lt_mode=lt_mode if variant in ("lt", "proposal") else "rfc3042")
    if stack == "ns3":
        from ..sim.ns3 import check_ns3_params

        try:
            check_ns3_params(variant_params(variant, 2, 0.1) if params is None
                             else apply_variant(params, variant), config)
        except ValueError as exc:
            raise ValueError(f"variant {variant} cannot combine with stack ns3: {exc}") from None
    return config


def model_params(params: TcpParams, stack: str = "rfc") -> TcpParams:
    """``params`` with the RTO the model should charge on ``stack``: the paper's max(1 s, 4 RTT)
    on ``rfc`` and ``ns3`` (RFC 6298's 1 s floor), and on ``linux`` the RFC 6298 RTO after the
    first sample on a fixed path, ``SRTT + max(4 RTTVAR, G) = RTT + max(2 RTT, 0.2 s)``, at least
    Linux's 200 ms floor (the linux profile's ``clock_granularity_s`` and ``min_rto_s``)."""
    check_choice("stack", stack, STACKS)
    if stack != "linux":
        return params
    return params.replace(rto_s=max(0.2, params.rtt_s + max(2.0 * params.rtt_s, 0.2)))


def cell_seed(seed: int, iw: float, p: float) -> int:
    """Integer seed of the simulation of (IW, p): from ``SeedSequence([seed, round(1000 IW),
    round(1e9 p)])``, so it depends on the values only."""
    ss = np.random.SeedSequence([int(seed), int(round(1000 * iw)), int(round(1e9 * p))])
    return int(ss.generate_state(1, dtype=np.uint32)[0])


# ---------------------------------------------------------------------------
# Pieces (top-level functions: they run in worker processes)


def _model_piece(spec: dict) -> dict:
    """Model E[L], L_1 and the single-loss RTO widths of one variant at every (IW, p)."""
    from ..model import modern, recursion

    variant, stack, sizes = spec["variant"], spec["stack"], np.asarray(spec["sizes"], dtype=float)
    out = {}
    for iw in spec["iws"]:
        for p in spec["ps"]:
            par = model_params(variant_params(variant, iw, p), stack)
            if variant in ("newreno", "lt", "proposal"):
                res = recursion.expected_latency(par, size_packets=sizes)
                l1 = recursion.conditional_latency(par, k=1, size_packets=sizes)
                recovery, source = "newreno", "recursion"
            else:
                recovery = "rack-tlp" if variant in SACK_VARIANTS else "newreno"
                res = modern.expected_latency(par, size_packets=sizes, recovery=recovery)
                l1 = modern.conditional_latency(par, k=1, size_packets=sizes, recovery=recovery)
                source = f"modern:{recovery}"
            timers = modern.single_loss_timers(par, size_packets=sizes, recovery=recovery)
            out[f"{iw}:{p}"] = {"expected_s": res.expected_latency_s.tolist(), "l1_s": l1.tolist(),
                                "rto_packets": timers["rto_packets"].tolist(),
                                "probe_packets": timers["probe_packets"].tolist(), "source": source}
    return out


def _sim_piece(spec: dict) -> dict:
    """Monte Carlo of one (variant, IW, p) over all sizes; per-run completion times kept for
    the paired comparisons."""
    from ..sim.montecarlo import simulate
    from ..sim.runner import OUT_FIELDS

    par = variant_params(spec["variant"], spec["iw"], spec["p"])
    cfg = sim_config(spec["variant"], spec["stack"], spec["prr"], spec["lt_mode"], par)
    summary = simulate(par, size_packets=list(spec["sizes"]), runs=spec["runs"], seed=spec["seed"],
                       config=cfg, engine=spec["engine"])
    col = OUT_FIELDS.index("completion_s")
    out = []
    for r in summary.results:
        c1 = r.conditional.get(1)
        out.append({"mean_s": r.mean_latency_s, "ci95_s": list(r.ci95_s) if r.ci95_s else None,
                    "timeout_fraction": r.timeout_fraction,
                    "l1": None if c1 is None else {"n": c1["n"], "mean_s": c1["mean_s"],
                                                   "ci95_s": list(c1["ci95_s"]) if c1["ci95_s"] else None},
                    "completion_s": r.samples[:, col].tolist()})
    return {"cells": out}


def _single_piece(spec: dict) -> dict:
    """Single-loss runs of one (variant, IW) at the given sizes: per position the completion
    time (s), the transmissions, whether an RTO expired and whether a tail loss probe left."""
    from ..sim.transfer import run_transfer

    par = variant_params(spec["variant"], spec["iw"], 0.0)
    cfg = sim_config(spec["variant"], spec["stack"], spec["prr"], spec["lt_mode"], par)
    probe = cfg.sender == "sack" and cfg.rack_tlp
    out = {}
    for n in spec["sizes"]:
        nominal = run_transfer(par, size_packets=n, config=cfg).completion_s
        rows = []
        for i in range(n):
            if probe:
                r, trace = run_transfer(par, size_packets=n, config=cfg, drops=[i], trace=True)
                probed = any(t.event == "tlp_probe" for t in trace)
            else:
                r, probed = run_transfer(par, size_packets=n, config=cfg, drops=[i]), False
            rows.append((r.completion_s, r.data_packets_sent, r.timeouts, probed))
        out[n] = {"l0_s": nominal, "completion_s": [x[0] for x in rows], "sent": [x[1] for x in rows],
                  "rto": [int(x[2] > 0) for x in rows], "probe": [bool(x[3]) for x in rows]}
    return out


def _run_piece(piece):
    kind, spec = piece
    if kind == "model":
        return _model_piece(spec)
    if kind == "sim":
        return _sim_piece(spec)
    return _single_piece(spec)


# ---------------------------------------------------------------------------
# Result


@dataclass(frozen=True)
class ModernResult(ResultData):
    """Outcome of :func:`run_modern`.

    Attributes
    ----------
    experiment : ModernExperiment
        Settings.
    series : list of dict
        One row per (variant, IW, p, size), variants in :data:`VARIANTS` order then
        ``size-based`` (when NewReno, LT and the proposal run), columns
        :data:`SERIES_COLUMNS` (seconds; cuts
        as fractions; ``None`` where a value does not exist, e.g. the cut of NewReno itself).
    summary : list of dict
        One row per (variant, IW, p): means over sizes and the gains against NewReno with
        paired 95% CIs (:data:`SUMMARY_COLUMNS`).
    claims : list of dict
        ``{"claim", "model", "simulation", "paper", "agrees", "rule"}`` (see :func:`claims_from`).
    """

    ROWS = "series"  # to_frame(): one row per entry

    experiment: ModernExperiment
    series: list = field(default_factory=list)
    summary: list = field(default_factory=list)
    claims: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """``{"experiment", "params", "series", "claims"}`` plus ``summary`` and the paper's text."""
        return {"experiment": "modern", "params": self.experiment.to_dict(), "series": self.series,
                "claims": self.claims, "summary": self.summary, "paper_text": PAPER_CLAIMS}


SERIES_COLUMNS = [
    "variant", "iw_packets", "p", "size_packets", "size_bytes", "model_source",
    "model_expected_s", "sim_mean_s", "sim_ci_low_s", "sim_ci_high_s", "sim_runs", "sim_timeout_fraction",
    "model_cut_expected", "sim_cut_expected", "sim_cut_expected_ci_low", "sim_cut_expected_ci_high",
    "model_l1_s", "sim_l1_s", "sim_l1_mc_s", "sim_l1_mc_ci_low_s", "sim_l1_mc_ci_high_s", "sim_l1_mc_n",
    "model_cut_l1", "sim_cut_l1", "sim_l0_s",
    "model_rto_packets", "model_probe_packets", "sim_rto_positions", "sim_probe_positions",
]
"""Columns of ``series`` (and of ``modern.csv``)."""

SUMMARY_COLUMNS = [
    "variant", "iw_packets", "p", "sizes", "model_mean_expected_s", "sim_mean_expected_s",
    "model_gain_s", "sim_gain_s", "sim_gain_ci_low_s", "sim_gain_ci_high_s",
    "model_share_of_proposal_gain", "sim_share_of_proposal_gain", "sim_share_ci_low", "sim_share_ci_high",
    "model_l1_gain_s", "sim_l1_gain_s", "model_l1_share_of_proposal_gain", "sim_l1_share_of_proposal_gain",
    "sim_gain_vs_lt_s", "sim_gain_vs_lt_ci_low_s", "sim_gain_vs_lt_ci_high_s", "max_abs_rel_error",
]
"""Columns of ``summary``: ``*_gain_s`` is the mean over sizes of NewReno's latency minus the
variant's (expected, or given one loss), ``*_share_of_proposal_gain`` that gain over the
proposal's, ``sim_gain_vs_lt_s`` LT's minus the variant's (paired); ``max_abs_rel_error`` the
largest |model/sim - 1| of the expected latency. Variant ``size-based`` is the paper's Figure 9
proposal: the proposal below 10 KB, LT above (its rows copy theirs)."""


def _mean_ci(x) -> tuple:
    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - half, m + half


def _ratio_ci(a, b) -> tuple:
    """``mean(a)/mean(b)`` with a delta-method 95% CI over paired samples (a_i, b_i)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ma, mb = float(a.mean()), float(b.mean())
    if mb == 0.0 or a.size < 2:
        return math.nan, math.nan, math.nan
    r = ma / mb
    resid = (a - r * b) / mb
    half = 1.96 * float(resid.std(ddof=1)) / math.sqrt(a.size)
    return r, r - half, r + half


def _nan(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _single_l1(single: dict, p: float) -> float:
    """Exact simulated L_1: positions weighted by ``(1 - p)^(T_i - 1)``."""
    t = np.asarray(single["completion_s"], dtype=float)
    w = (1.0 - p) ** (np.asarray(single["sent"], dtype=float) - 1.0)
    return float(np.sum(w * t) / np.sum(w))


@checked_call
def run_modern(experiment: ModernExperiment | None = None, progress=None, *, rng=None) -> ModernResult:
    """Run the experiment: model pieces, single-loss runs and the Monte Carlo of every cell.

    Parameters
    ----------
    experiment : ModernExperiment, optional
        Settings; default ``ModernExperiment()`` (about a minute with the compiled engine).
    progress : callable, optional
        Called as ``progress(done, total)`` after each piece.
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The randomness (SPEC 7), in place of the experiment's ``seed``: an int is the seed,
        a Generator draws it (:func:`~latency_model.sim._seeding.root_seed`); the seed used
        is in the result's experiment.

    Returns
    -------
    ModernResult
    """
    ex = ModernExperiment() if experiment is None else experiment
    if not isinstance(ex, ModernExperiment):
        raise ValueError(f"experiment must be a ModernExperiment, got {ex!r}")
    if rng is not None:
        ex = dataclasses.replace(ex, seed=root_seed(rng))
    sizes = list(ex.sizes_packets)
    pieces = []
    for v in ex.variants:
        pieces.append((("model", v), ("model", {"variant": v, "stack": ex.stack, "sizes": sizes,
                                                 "iws": list(ex.iw_packets), "ps": list(ex.ps)})))
    for v in ex.variants:
        for iw in ex.iw_packets:
            for p in ex.ps:
                pieces.append((("sim", v, iw, p), ("sim", {
                    "variant": v, "iw": iw, "p": p, "sizes": sizes, "runs": ex.runs,
                    "seed": cell_seed(ex.seed, iw, p), "stack": ex.stack, "prr": ex.prr,
                    "lt_mode": ex.lt_mode, "engine": ex.engine})))
            chunks = [sizes[i::4] for i in range(4)] if ex.workers > 1 else [sizes]
            for j, chunk in enumerate(c for c in chunks if c):
                pieces.append((("single", v, iw, j), ("single", {
                    "variant": v, "iw": iw, "sizes": chunk, "stack": ex.stack, "prr": ex.prr,
                    "lt_mode": ex.lt_mode})))
    results = {}
    if ex.workers == 1:
        for i, (key, piece) in enumerate(pieces):
            results[key] = _run_piece(piece)
            if progress is not None:
                progress(i + 1, len(pieces))
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        from ..workers import worker_init  # workers end with their parent

        with ProcessPoolExecutor(max_workers=ex.workers, initializer=worker_init,
                                 initargs=(os.getpid(),)) as pool:
            futures = {pool.submit(_run_piece, piece): key for key, piece in pieces}
            for i, fut in enumerate(as_completed(futures)):
                results[futures[fut]] = fut.result()
                if progress is not None:
                    progress(i + 1, len(pieces))
    single = {}
    for key, value in results.items():
        if key[0] == "single":
            single.setdefault((key[1], key[2]), {}).update(value)
    series, summary = _tables(ex, results, single)
    return ModernResult(experiment=ex, series=series, summary=summary, claims=claims_from(ex, series, summary))


def _size_based(ex: ModernExperiment, results: dict, single: dict) -> None:
    """Add the paper's Figure 9 variant to ``results`` and ``single``: the proposal below
    10 KB (``SIZE_BASED_THRESHOLD_BYTES``), LT from there on (Section 4)."""
    mss = base_params(2, 0.1).mss_bytes
    small = [n * mss < SIZE_BASED_THRESHOLD_BYTES for n in ex.sizes_packets]
    results[("model", "size-based")] = {}
    for iw in ex.iw_packets:
        single[("size-based", iw)] = {n: single[("proposal" if s else "lt", iw)][n]
                                      for n, s in zip(ex.sizes_packets, small)}
        for p in ex.ps:
            prop, lt = results[("model", "proposal")][f"{iw}:{p}"], results[("model", "lt")][f"{iw}:{p}"]
            results[("model", "size-based")][f"{iw}:{p}"] = dict(
                {k: [a if s else b for a, b, s in zip(prop[k], lt[k], small)] for k in prop if k != "source"},
                source="recursion (size-based)")
            cells = (results[("sim", "proposal", iw, p)]["cells"], results[("sim", "lt", iw, p)]["cells"])
            results[("sim", "size-based", iw, p)] = {"cells": [a if s else b for a, b, s in zip(*cells, small)]}


def _all_variants(ex: ModernExperiment) -> tuple:
    """The experiment's variants, plus ``size-based`` when NewReno, LT and the proposal run."""
    extra = ("size-based",) if {"newreno", "lt", "proposal"} <= set(ex.variants) else ()
    return ex.variants + extra


def _tables(ex: ModernExperiment, results: dict, single: dict):
    sizes = list(ex.sizes_packets)
    mss = base_params(2, 0.1).mss_bytes
    if "size-based" in _all_variants(ex):
        _size_based(ex, results, single)
    series = []
    for v in _all_variants(ex):
        for iw in ex.iw_packets:
            for p in ex.ps:
                model = results[("model", v)][f"{iw}:{p}"]
                sim = results[("sim", v, iw, p)]["cells"]
                base_model = results[("model", "newreno")][f"{iw}:{p}"] if "newreno" in ex.variants else None
                base_sim = results[("sim", "newreno", iw, p)]["cells"] if "newreno" in ex.variants else None
                for i, n in enumerate(sizes):
                    s, sl = sim[i], single[(v, iw)][n]
                    l1 = _single_l1(sl, p)
                    row = {"variant": v, "iw_packets": iw, "p": p, "size_packets": n, "size_bytes": n * mss,
                           "model_source": model["source"], "model_expected_s": model["expected_s"][i],
                           "sim_mean_s": s["mean_s"],
                           "sim_ci_low_s": s["ci95_s"][0] if s["ci95_s"] else None,
                           "sim_ci_high_s": s["ci95_s"][1] if s["ci95_s"] else None,
                           "sim_runs": ex.runs, "sim_timeout_fraction": s["timeout_fraction"],
                           "model_l1_s": model["l1_s"][i], "sim_l1_s": l1,
                           "sim_l1_mc_s": s["l1"]["mean_s"] if s["l1"] else None,
                           "sim_l1_mc_ci_low_s": s["l1"]["ci95_s"][0] if s["l1"] and s["l1"]["ci95_s"] else None,
                           "sim_l1_mc_ci_high_s": s["l1"]["ci95_s"][1] if s["l1"] and s["l1"]["ci95_s"] else None,
                           "sim_l1_mc_n": s["l1"]["n"] if s["l1"] else 0,
                           "sim_l0_s": sl["l0_s"],
                           "model_rto_packets": model["rto_packets"][i],
                           "model_probe_packets": model["probe_packets"][i],
                           "sim_rto_positions": int(sum(sl["rto"])),
                           "sim_probe_positions": int(sum(sl["probe"]))}
                    cut = dict.fromkeys(("model_cut_expected", "sim_cut_expected", "sim_cut_expected_ci_low",
                                         "sim_cut_expected_ci_high", "model_cut_l1", "sim_cut_l1"))
                    if base_model is not None and v != "newreno":
                        cut["model_cut_expected"] = 1.0 - model["expected_s"][i] / base_model["expected_s"][i]
                        r, lo, hi = _ratio_ci(s["completion_s"], base_sim[i]["completion_s"])
                        cut.update(sim_cut_expected=1.0 - r, sim_cut_expected_ci_low=_nan(1.0 - hi),
                                   sim_cut_expected_ci_high=_nan(1.0 - lo))
                        cut["model_cut_l1"] = 1.0 - model["l1_s"][i] / base_model["l1_s"][i]
                        cut["sim_cut_l1"] = 1.0 - l1 / _single_l1(single[("newreno", iw)][n], p)
                    row.update(cut)
                    series.append(row)
    summary = [_summary_row(ex, v, iw, p, results, series)
               for v in _all_variants(ex) for iw in ex.iw_packets for p in ex.ps]
    return series, summary


def _rows(series, v, iw, p):
    return [r for r in series if r["variant"] == v and r["iw_packets"] == iw and r["p"] == p]


def _run_totals(results, v, iw, p) -> np.ndarray:
    """Per run, the completion times summed over the sizes, seconds: run ``i`` uses the same
    ``SeedSequence`` child at every size and in every variant, so these totals are i.i.d.
    over runs and paired between variants."""
    cells = results[("sim", v, iw, p)]["cells"]
    return np.sum([np.asarray(c["completion_s"], dtype=float) for c in cells], axis=0)


def _summary_row(ex, v, iw, p, results, series) -> dict:
    rows = _rows(series, v, iw, p)
    model = np.array([r["model_expected_s"] for r in rows])
    sim = np.array([r["sim_mean_s"] for r in rows])
    out = {"variant": v, "iw_packets": iw, "p": p, "sizes": len(rows),
           "model_mean_expected_s": float(model.mean()), "sim_mean_expected_s": float(sim.mean()),
           "max_abs_rel_error": float(np.max(np.abs(model / sim - 1.0)))}
    out.update(dict.fromkeys(c for c in SUMMARY_COLUMNS if c not in out))
    if "newreno" not in ex.variants:
        return out
    base = _rows(series, "newreno", iw, p)
    n = len(rows)
    per_run, base_run = _run_totals(results, v, iw, p), _run_totals(results, "newreno", iw, p)
    gain_runs = (base_run - per_run) / n
    g, glo, ghi = _mean_ci(gain_runs)
    out.update(model_gain_s=float(np.mean([b["model_expected_s"] for b in base]) - model.mean()),
               sim_gain_s=g, sim_gain_ci_low_s=_nan(glo), sim_gain_ci_high_s=_nan(ghi),
               model_l1_gain_s=float(np.mean([b["model_l1_s"] - r["model_l1_s"] for b, r in zip(base, rows)])),
               sim_l1_gain_s=float(np.mean([b["sim_l1_s"] - r["sim_l1_s"] for b, r in zip(base, rows)])))
    if "lt" in ex.variants:  # paired per run: LT's total minus this variant's
        d, dlo, dhi = _mean_ci((_run_totals(results, "lt", iw, p) - per_run) / n)
        out.update(sim_gain_vs_lt_s=d, sim_gain_vs_lt_ci_low_s=_nan(dlo), sim_gain_vs_lt_ci_high_s=_nan(dhi))
    if "proposal" in ex.variants:
        prop = _rows(series, "proposal", iw, p)
        prop_gain_runs = (base_run - _run_totals(results, "proposal", iw, p)) / n
        s, slo, shi = _ratio_ci(gain_runs, prop_gain_runs)
        model_prop_gain = float(np.mean([b["model_expected_s"] - q["model_expected_s"] for b, q in zip(base, prop)]))
        model_prop_l1 = float(np.mean([b["model_l1_s"] - q["model_l1_s"] for b, q in zip(base, prop)]))
        sim_prop_l1 = float(np.mean([b["sim_l1_s"] - q["sim_l1_s"] for b, q in zip(base, prop)]))
        out.update(model_share_of_proposal_gain=_div(out["model_gain_s"], model_prop_gain),
                   sim_share_of_proposal_gain=_nan(s), sim_share_ci_low=_nan(slo), sim_share_ci_high=_nan(shi),
                   model_l1_share_of_proposal_gain=_div(out["model_l1_gain_s"], model_prop_l1),
                   sim_l1_share_of_proposal_gain=_div(out["sim_l1_gain_s"], sim_prop_l1))
    return out


def _div(a, b):
    return None if b == 0 else a / b


# ---------------------------------------------------------------------------
# Claims


def compact_sizes(sizes) -> str:
    """``[1, 2, 3, 7, 9, 10]`` -> ``"1-3, 7, 9-10"`` (``"none"`` when empty)."""
    sizes = sorted(int(s) for s in sizes)
    if not sizes:
        return "none"
    parts, start, prev = [], sizes[0], sizes[0]
    for s in sizes[1:] + [None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if s is not None:
            start = prev = s
    return ", ".join(parts)


def claims_from(ex: ModernExperiment, series: list, summary: list) -> list:
    """The experiment's claims, computed from ``series`` and ``summary`` only.

    * per (variant, IW): the sizes at which some single loss still ends in an RTO expiry:
      simulated (single-loss runs) and model (an RTO region at least half a packet wide);
      agrees when the two sets are equal;
    * per (IW, p), for each SACK variant: the share of the proposal's gain over NewReno it
      gives, in expected latency (simulation: paired 95% CI over runs; agrees when the
      model's share is inside it) and given one loss (agrees within 10 points);
    * the paper's Figure 10 numbers (W0 = 2, 8 packets: LT 10%, proposal 40%; agrees within
      5 points) and Figure 9's ordering (W0 = 2, p = 0.1: the mean over sizes of NewReno
      minus LT, and of LT minus the size-based proposal, above zero: paired CIs).
    """
    claims = []
    for v in ex.variants:
        for iw in ex.iw_packets:
            rows = _rows(series, v, iw, ex.ps[0])
            sim_sizes = [r["size_packets"] for r in rows if r["sim_rto_positions"] > 0]
            model_sizes = [r["size_packets"] for r in rows if r["model_rto_packets"] >= 0.5]
            probe = [r["size_packets"] for r in rows if r["sim_probe_positions"] > 0]
            text = (f"{LABELS[v]}, IW {iw}: sizes (packets) where a single loss still ends in an RTO "
                    f"(positions: simulated / model width in packets, summed over sizes)")
            claims.append({"claim": text,
                           "model": {"sizes": compact_sizes(model_sizes),
                                     "positions": round(sum(r["model_rto_packets"] for r in rows), 3)},
                           "simulation": {"sizes": compact_sizes(sim_sizes),
                                          "positions": sum(r["sim_rto_positions"] for r in rows),
                                          "probe_sizes": compact_sizes(probe)},
                           "paper": None, "agrees": sim_sizes == model_sizes,
                           "rule": "the sets of sizes are equal"})
    by = {(r["variant"], r["iw_packets"], r["p"]): r for r in summary}
    for v in (x for x in SACK_VARIANTS if x in ex.variants):
        if "proposal" not in ex.variants or "newreno" not in ex.variants:
            break
        for iw in ex.iw_packets:
            for p in ex.ps:
                s = by[(v, iw, p)]
                share, lo, hi, model = (s["sim_share_of_proposal_gain"], s["sim_share_ci_low"],
                                        s["sim_share_ci_high"], s["model_share_of_proposal_gain"])
                inside = None not in (share, lo, hi, model) and lo <= model <= hi
                claims.append({"claim": f"{LABELS[v]} gives this share of the proposal's cut of the "
                                        f"expected latency against NewReno (mean over sizes), IW {iw}, p = {p:g}",
                               "model": model, "simulation": {"mean": share, "ci95": [lo, hi]},
                               "paper": None, "agrees": bool(inside),
                               "rule": "the model's share inside the simulation's paired 95% CI"})
                m1, s1 = s["model_l1_share_of_proposal_gain"], s["sim_l1_share_of_proposal_gain"]
                claims.append({"claim": f"{LABELS[v]} gives this share of the proposal's cut of the "
                                        "latency given one loss against NewReno (mean over sizes), "
                                        f"IW {iw}, p = {p:g}",
                               "model": m1, "simulation": s1, "paper": None,
                               "agrees": None not in (m1, s1) and abs(m1 - s1) <= _SHARE_L1_TOLERANCE,
                               "rule": f"|model - simulation| <= {_SHARE_L1_TOLERANCE:g}"})
    if 2 in ex.iw_packets and 8 in ex.sizes_packets and "newreno" in ex.variants:
        for v, paper in (("lt", 0.10), ("proposal", 0.40)):
            if v not in ex.variants:
                continue
            r = next(x for x in series if x["variant"] == v and x["iw_packets"] == 2
                     and x["p"] == ex.ps[-1] and x["size_packets"] == 8)
            claims.append({"claim": f"Figure 10: given one loss, {LABELS[v]} cuts the latency of an "
                                    "8-packet (4 KB) file against NewReno by (W0 = 2)",
                           "model": r["model_cut_l1"], "simulation": r["sim_cut_l1"], "paper": paper,
                           "agrees": abs(r["sim_cut_l1"] - paper) <= _FIG10_TOLERANCE,
                           "rule": f"|simulation - paper| <= {_FIG10_TOLERANCE:g}"})
    if 2 in ex.iw_packets and 0.1 in ex.ps and {"newreno", "lt", "proposal"} <= set(ex.variants):
        lt, sb = by[("lt", 2, 0.1)], by[("size-based", 2, 0.1)]
        claims.append({"claim": "Figure 9: LT's expected latency is below NewReno's (mean over sizes of "
                                "NewReno's minus LT's, seconds), W0 = 2, p = 0.1",
                       "model": lt["model_gain_s"],
                       "simulation": {"mean": lt["sim_gain_s"], "ci95": [lt["sim_gain_ci_low_s"],
                                                                         lt["sim_gain_ci_high_s"]]},
                       "paper": "below", "agrees": bool((lt["sim_gain_ci_low_s"] or 0.0) > 0.0),
                       "rule": "the paired 95% CI above 0"})
        claims.append({"claim": "Figure 9: the size-based proposal (the proposal below 10 KB, LT above) is "
                                "below LT (mean over sizes of LT's minus its expected latency, seconds), "
                                "W0 = 2, p = 0.1",
                       "model": lt["model_mean_expected_s"] - sb["model_mean_expected_s"],
                       "simulation": {"mean": sb["sim_gain_vs_lt_s"], "ci95": [sb["sim_gain_vs_lt_ci_low_s"],
                                                                               sb["sim_gain_vs_lt_ci_high_s"]]},
                       "paper": "below", "agrees": bool((sb["sim_gain_vs_lt_ci_low_s"] or 0.0) > 0.0),
                       "rule": "the paired 95% CI above 0"})
    return claims
