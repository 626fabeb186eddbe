"""Figures 4 and 6-10 of Ayesta & Avrachenkov (Section 4) as tidy data: model and simulation.

The setting is the captions' one: W0 = 2, W_SS = M = 30, MSS = 500 B, p = 0.1, a
100 Mb/s link with 50 ms one-way delay (RTT 0.1 s), b = 1 unless said (Figure 4:
b = 2). Sizes run from 1 to 60 packets (30 KB, the paper's x axes).

The work is split into pieces, each cached (:mod:`latency_model.studies.cache`) and spread
over worker processes: one model computation per (variant, b) and one Monte Carlo
run per (simulator set-up, size). Every simulated size uses
``SeedSequence(seed).spawn(runs)`` (common random numbers), so the results do not
depend on the number of workers or on which pieces came from the cache.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import cache
from ..checks import check_choice, check_int, check_jobs
from ..params import SIZE_BASED_THRESHOLD_BYTES, TcpParams, apply_variant
from ..sim.runner import ENGINES
from ..workers import worker_init

__all__ = [
    "REPRODUCE_SECONDS",
    "reproduce_seconds",
    "Budget",
    "DEFAULT_BUDGET",
    "QUICK_BUDGET",
    "FIGURES",
    "SIM_SETS",
    "MODEL_SETS",
    "CSV_COLUMNS",
    "compute",
    "figure_rows",
    "base_params",
]

CSV_COLUMNS = ["figure", "series", "k", "source", "size_packets", "size_bytes", "value", "ci_low", "ci_high", "n"]
"""Tidy schema of ``figures/figN.csv``: one row per size, series, k and source
(``model`` or ``simulation``); ``value`` in seconds (Figure 10: a fraction), the 95% CI
and the number of simulated transfers behind a simulated value. Rows with series
``filesize_min`` mark FileSize_min (``size_*`` is the threshold, ``value`` empty)."""


@dataclass(frozen=True)
class Budget:
    """Sizes and Monte Carlo effort of a reproduction.

    Attributes
    ----------
    model_sizes_packets : tuple of float
        Sizes of the model curves, packets.
    sim_sizes_packets : tuple of int
        Simulated sizes, packets.
    extra_sim_sizes_packets : tuple of int
        Sizes of the validation's extra simulator set-ups (model assumptions), packets.
    runs : int
        Simulated transfers per size and set-up.
    seed : int
        Root seed of every simulated size.
    stack : {"rfc", "ns3", "linux"}
        The simulator's stack profile (``SimConfig.profile``; the paper's reproduction uses
        ``"rfc"``). A set-up the stack cannot run (see :func:`sim_set_unsupported`) is left
        out. The parameters stay the paper's (W0 = 2 also under ``linux``).
    engine : {"auto", "python", "compiled"}
        Simulator engine (:data:`latency_model.sim.runner.ENGINES`). All give identical
        results, so it is not part of the cache key. numba compiles once per install and
        caches the machine code on disk, so even the quick budget uses it (``"auto"``).
    """

    model_sizes_packets: tuple
    sim_sizes_packets: tuple
    extra_sim_sizes_packets: tuple
    runs: int
    seed: int = 2005
    engine: str = "auto"
    stack: str = "rfc"

    def __post_init__(self):
        from ..sim.profiles import check_stack

        check_stack(self.stack)
        check_int("runs", self.runs, low=2)
        check_choice("engine", self.engine, ENGINES)
        check_int("seed", self.seed, low=0)
        for name in ("model_sizes_packets", "sim_sizes_packets", "extra_sim_sizes_packets"):
            vals = getattr(self, name)
            if not vals or any(not (v > 0) for v in vals):
                raise ValueError(f"{name} must be a non-empty list of sizes > 0, got {vals!r}")


DEFAULT_BUDGET = Budget(
    model_sizes_packets=tuple(float(x) for x in np.arange(1.0, 60.01, 0.5)),
    sim_sizes_packets=tuple(range(1, 31)) + tuple(range(32, 61, 2)),
    extra_sim_sizes_packets=tuple(range(1, 31)),
    runs=1000,
)
"""The built-in reproduction: model every half packet, simulation at 45 sizes x 1000 runs
(and the four validation set-ups at 1-30 packets): about 300,000 simulated transfers."""

QUICK_BUDGET = Budget(
    model_sizes_packets=tuple(float(x) for x in range(1, 31)),
    sim_sizes_packets=(1, 2, 3, 4, 5, 6, 8, 10, 14, 20, 30),
    extra_sim_sizes_packets=(3, 5, 8, 14, 17),
    runs=200,
)
"""``--quick`` (CI): 11 simulated sizes x 200 runs; wide intervals, same files. The extra
set-ups include 17 packets, a size where the b = 2 per-round law needs one round more
than the simulated staircase, so the validation's known difference shows (and is
reported as ``known``) in a quick run as in the full one."""

# Simulator set-ups: name -> (variant, b, SimConfig overrides). The first four are the
# paper's figures (RFC behaviour, as the paper's ns runs); the others switch the simulator
# to one assumption of the model each, for the validation's known-reason cases.
SIM_SETS = {
    "newreno_b1": ("newreno", 1, {}),
    "lt_b1": ("lt", 1, {}),
    "proposal_b1": ("proposal", 1, {}),
    "newreno_b2": ("newreno", 2, {}),
    "lt_b1_paper_lt": ("lt", 1, {"lt_mode": "paper"}),
    "proposal_b1_paper_lt": ("proposal", 1, {"lt_mode": "paper"}),
    "newreno_b2_prompt_ack": ("newreno", 2, {"delack_timeout_s": 0.001}),
    "newreno_b1_fixed_rto": ("newreno", 1, {"rto_rule": "paper"}),
}
FIGURE_SIM_SETS = ("newreno_b1", "lt_b1", "proposal_b1", "newreno_b2")

# Model computations: name -> (variant, b, what). "expected" also gives L_0..L_2.
MODEL_SETS = {
    "newreno_b1": ("newreno", 1, "expected"),
    "lt_b1": ("lt", 1, "expected"),
    "proposal_b1": ("proposal", 1, "expected"),
    "newreno_b2": ("newreno", 2, "conditional"),
}

FIGURES = {
    "fig4": {"kind": "conditional", "set": "newreno_b2",
             "title": "Figure 4: conditional latency, NewReno, b = 2"},
    "fig6": {"kind": "conditional", "set": "newreno_b1",
             "title": "Figure 6: conditional latency, no LT, b = 1"},
    "fig7": {"kind": "conditional", "set": "lt_b1",
             "title": "Figure 7: conditional latency, LT (dup_LT = 2), b = 1"},
    "fig8": {"kind": "conditional", "set": "proposal_b1",
             "title": "Figure 8: conditional latency, proposal (dup = 1), b = 1"},
    "fig9": {"kind": "expected", "series": ("newreno", "lt", "size-based"),
             "title": "Figure 9: expected latency, b = 1"},
    "fig10": {"kind": "reduction", "series": ("lt", "proposal"), "k": 1,
              "title": "Figure 10: relative reduction of L_1 against NewReno, b = 1"},
}
"""Figure name -> what it shows (``set`` names a MODEL_SETS / SIM_SETS entry)."""

K_SHOWN = (0, 1, 2)
MIN_SIM_N = 10
"""Fewest transfers on each side of a reduction used as a number (the paper's claims)."""
FEW_RUNS = 30
"""A simulated mean from fewer transfers is drawn hollow (kept, flagged: its interval is
unreliable and the validation ignores it, :data:`latency_model.studies.validate.MIN_N`)."""

_MODEL_CODE = ("model", "params.py", "growth", "checks.py")
_SIM_CODE = ("sim", "params.py", "growth", "checks.py")


def base_params(variant: str, b: int) -> TcpParams:
    """The captions' setting (TcpParams defaults: W0 = 2, W_SS = M = 30, MSS 500 B, p 0.1, RTT 0.1 s)."""
    return apply_variant(TcpParams(b=b), variant)


def setting_text(params: TcpParams, runs: int | None = None) -> str:
    """One-line setting of a figure: p, W0, W_SS, M, b, RTT, MSS (and simulated runs per size).

    Parameters
    ----------
    params : TcpParams
        The figure's parameters (any variant: the line names none).
    runs : int, optional
        Simulated transfers per size and set-up; omitted when ``None``.
    """
    def n(x):
        return f"{float(x):g}"

    win = (f"W_SS = M = {n(params.w_ss)}" if params.w_ss == params.rwnd
           else f"W_SS = {n(params.w_ss)}, M = {n(params.rwnd)}")
    text = (f"p = {n(params.p)}, W0 = {n(params.w0)}, {win} packets, b = {params.b}, "
            f"RTT = {n(params.rtt_s)} s, MSS = {params.mss_bytes} B")
    if runs is not None:
        text += f"; simulation: {runs} transfers per size, 100 Mb/s"
    return text


# ---------------------------------------------------------------------------
# Pieces (run in worker processes; top-level functions so they pickle)


def _model_piece(spec: dict) -> dict:
    from ..model.recursion import conditional_latency, expected_latency
    from ..model.thresholds import filesize_min, table_y_to

    params = base_params(spec["variant"], spec["b"])
    sizes = np.asarray(spec["sizes_packets"], dtype=float) * params.mss_bytes
    out = {"sizes_packets": list(spec["sizes_packets"])}
    if spec["what"] == "expected":
        res = expected_latency(params, size_bytes=sizes)
        cond = res.conditional_latency_s[:, : len(K_SHOWN)]
        out["expected_s"] = res.expected_latency_s.tolist()
        out["k_max"] = res.k_max
        out["truncated_mass_max"] = float(res.truncated_mass.max())
    else:
        cond = conditional_latency(params, size_bytes=sizes, k=list(K_SHOWN))
    for k in K_SHOWN:
        out[f"L{k}_s"] = cond[:, k].tolist()
    tail = 1 if params.tail_retransmit else params.dup_t
    fluid_yto = float(filesize_min(params)) - params.dup_t * params.mss_bytes
    out["filesize_min_fluid_packets"] = fluid_yto / params.mss_bytes + tail
    table = table_y_to(int(params.w0), params.b, "slow_start", params.timeout_threshold)
    out["filesize_min_table_packets"] = table + tail
    return out


def _sim_piece(spec: dict, engine: str = "auto") -> dict:
    from ..sim.config import SimConfig
    from ..sim.montecarlo import simulate

    params = base_params(spec["variant"], spec["b"])
    config = SimConfig.profile(spec.get("stack", "rfc"), **spec["config"])
    summary = simulate(params, size_packets=[spec["size_packets"]], runs=spec["runs"], seed=spec["seed"],
                       config=config, engine=engine)
    r = summary.results[0].to_dict()
    return {k: r[k] for k in ("size_packets", "size_bytes", "runs", "mean_latency_s", "ci95_s",
                              "conditional", "timeout_fraction", "mean_lost_packets")}


def _run(piece):
    kind, spec, engine = piece
    return _model_piece(spec) if kind == "model" else _sim_piece(spec, engine)


def sim_set_unsupported(name: str, stack: str) -> str:
    """Why stack profile ``stack`` cannot run simulator set-up ``name`` ("" if it can).

    The ``ns3`` sender has no tail retransmission and only ns-3's own Limited Transmit and
    timer, so the proposal and the set-ups that switch to the paper's LT or fixed RTO are
    out of its reach.
    """
    from ..sim.config import SimConfig

    variant, b, cfg = SIM_SETS[name]
    try:
        config = SimConfig.profile(stack, **cfg)
        if config.sender == "ns3":
            from ..sim.ns3 import check_ns3_params

            check_ns3_params(base_params(variant, b), config)
    except ValueError as exc:
        return str(exc)
    return ""


def _pieces(budget: Budget) -> list[tuple[str, str, dict]]:
    """(kind, name, spec) of every piece of the reproduction, model first (the longest).

    A simulated piece names its stack only when it is not ``"rfc"``, so the RFC pieces keep
    their cache keys."""
    out = []
    for name, (variant, b, what) in MODEL_SETS.items():
        out.append(("model", name, {"variant": variant, "b": b, "what": what,
                                    "sizes_packets": list(budget.model_sizes_packets)}))
    for name, (variant, b, cfg) in SIM_SETS.items():
        if budget.stack != "rfc" and sim_set_unsupported(name, budget.stack):
            continue
        sizes = budget.sim_sizes_packets if name in FIGURE_SIM_SETS else budget.extra_sim_sizes_packets
        for size in sizes:
            spec = {"variant": variant, "b": b, "config": dict(sorted(cfg.items())),
                    "size_packets": int(size), "runs": budget.runs, "seed": budget.seed}
            if budget.stack != "rfc":
                spec["stack"] = budget.stack
            out.append(("sim", name, spec))
    return out


def _progress(total: int, enabled: bool, desc: str, stream=None, every_s: float = 5.0, *,
              noun: str = "pieces computed", initial: int = 0, alive_s: float = 20.0):
    """A tqdm bar on a terminal; otherwise a plain line ``desc: done/total noun, T s`` on
    ``stream`` (stderr) at most every ``every_s`` seconds and at the end, so that a log shows
    the run is alive; nothing when ``enabled`` is False. ``initial``: done before the start.
    Where nothing finishes for ``alive_s`` seconds (a first run compiling numba's kernels, a
    long piece), the line is repeated with "still working" until :meth:`close`."""
    stream = sys.stderr if stream is None else stream
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None
    if tqdm is not None and enabled and stream.isatty():
        return tqdm(total=total, initial=initial, desc=desc, unit="piece", file=stream, leave=False)

    class _Lines:
        def __init__(self):
            self.done = initial
            self.t0 = self.last = time.monotonic()
            self.stop = threading.Event()
            self.lock = threading.Lock()  # a heartbeat is never printed after close() returns
            self.thread = None
            if enabled:
                self.thread = threading.Thread(target=self._alive, daemon=True)
                self.thread.start()

        def _say(self, now, note=""):
            self.last = now
            print(f"{desc}: {self.done}/{total} {noun}, {now - self.t0:.0f} s{note}", file=stream, flush=True)

        def _alive(self):
            while not self.stop.wait(min(alive_s, every_s)):
                with self.lock:
                    now = time.monotonic()
                    if not self.stop.is_set() and now - self.last >= alive_s:
                        self._say(now, " (still working)")

        def update(self, n=1):
            with self.lock:
                self.done += n
                now = time.monotonic()
                if enabled and (now - self.last >= every_s or self.done == total):
                    self._say(now)

        def close(self):
            with self.lock:
                self.stop.set()
            if self.thread is not None and self.thread is not threading.current_thread():
                self.thread.join(timeout=1.0)

    return _Lines()


REPRODUCE_SECONDS = {"full": 120.0, "quick": 41.0}
"""Wall seconds of ``reproduce`` (``--quick``) from an empty cache with 2 workers on the 2-core
development machine while other work ran beside it (compute, drawing, the accuracy map:
measured by timing each phase of ``run_reproduction``)."""


def reproduce_seconds(budget: Budget, cache_dir, *, jobs: int = 1, force: bool = False) -> float:
    """A rough estimate of a reproduction's wall seconds: :data:`REPRODUCE_SECONDS` of the
    measured budget it is closest to (quick or full), scaled by the pieces of ``budget`` not
    in ``cache_dir`` (all of them with ``force``) against that budget's pieces, a simulated
    piece weighted by its runs against the measured budget's, for ``jobs`` workers."""
    pieces = _pieces(budget)
    quick = budget.runs <= QUICK_BUDGET.runs
    ref = QUICK_BUDGET if quick else DEFAULT_BUDGET
    weight = {"model": 1.0, "sim": budget.runs / ref.runs}
    missing = sum(weight.get(kind, 1.0) for kind, _, spec in pieces
                  if force or cache.load(cache_dir, cache.cache_key(kind, spec, cache.source_hash(
                      *(_MODEL_CODE if kind == "model" else _SIM_CODE)))) is None)
    return REPRODUCE_SECONDS["quick" if quick else "full"] * missing / max(len(_pieces(ref)), 1) * 2.0 / max(jobs, 1)


def compute(budget: Budget, cache_dir, *, jobs: int = 1, force: bool = False, progress: bool = True) -> dict:
    """Model curves and simulated summaries of every figure and validation set-up.

    Parameters
    ----------
    budget : Budget
        Sizes, runs and seed.
    cache_dir : str or Path
        Folder of the results cache.
    jobs : int
        Worker processes (>= 1); the results do not depend on it.
    force : bool
        Recompute every piece (and overwrite its cache entry).
    progress : bool
        Show a progress bar on stderr when it is a terminal.

    Returns
    -------
    dict
        ``{"model": {set: {...}}, "sim": {set: {size_packets: summary}}, "cached": n, "computed": n}``.
    """
    if not isinstance(budget, Budget):
        raise ValueError(f"budget must be a Budget, got {budget!r}")
    jobs = check_jobs("jobs", jobs)
    pieces = _pieces(budget)
    results: dict = {"model": {}, "sim": {name: {} for name in SIM_SETS},
                     "unsupported": {name: why for name in SIM_SETS
                                     if budget.stack != "rfc" and (why := sim_set_unsupported(name, budget.stack))},
                     "stack": budget.stack}
    todo = []
    n_cached = 0
    for kind, name, spec in pieces:
        key = cache.cache_key(kind, spec, cache.source_hash(*(_MODEL_CODE if kind == "model" else _SIM_CODE)))
        value = None if force else cache.load(cache_dir, key)
        if value is None:
            todo.append((kind, name, spec, key))
        else:
            n_cached += 1
            _place(results, kind, name, value)
    bar = _progress(len(todo), progress, "reproduce")
    try:
        if jobs == 1 or len(todo) <= 1:
            for kind, name, spec, key in todo:
                value = _run((kind, spec, budget.engine))
                cache.store(cache_dir, key, value, spec)
                _place(results, kind, name, value)
                bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=jobs, initializer=worker_init,
                                     initargs=(os.getpid(),)) as ex:
                futures = {ex.submit(_run, (kind, spec, budget.engine)): (kind, name, spec, key)
                           for kind, name, spec, key in todo}
                for fut in as_completed(futures):
                    kind, name, spec, key = futures[fut]
                    value = fut.result()
                    cache.store(cache_dir, key, value, spec)
                    _place(results, kind, name, value)
                    bar.update(1)
    finally:
        bar.close()
    results["cached"] = n_cached
    results["computed"] = len(todo)
    return results


def _place(results: dict, kind: str, name: str, value: dict) -> None:
    if kind == "model":
        results["model"][name] = value
    else:
        results["sim"][name][int(value["size_packets"])] = value


# ---------------------------------------------------------------------------
# Tidy rows


def _row(fig, series, k, source, size_packets, mss, value, ci=None, n=None) -> dict:
    return {
        "figure": fig,
        "series": series,
        "k": "" if k is None else k,
        "source": source,
        "size_packets": _num(size_packets),
        "size_bytes": _num(size_packets * mss),
        "value": _num(value),
        "ci_low": _num(ci[0]) if ci else "",
        "ci_high": _num(ci[1]) if ci else "",
        "n": "" if n is None else n,
    }


def _num(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return ""
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 1e15 else float(f"{x:.10g}")


def _sim_sizes(sim: dict) -> list[int]:
    return sorted(sim)


def figure_rows(fig: str, results: dict, mss: int = 500) -> list[dict]:
    """Tidy rows (:data:`CSV_COLUMNS`) of figure ``fig`` from :func:`compute`'s results.

    Parameters
    ----------
    fig : str
        A key of :data:`FIGURES`.
    results : dict
        The output of :func:`compute`.
    mss : int
        Segment size, bytes (500 in the paper's setting).
    """
    if fig not in FIGURES:
        raise ValueError(f"fig must be one of {sorted(FIGURES)}, got {fig!r}")
    spec = FIGURES[fig]
    rows: list[dict] = []
    if spec["kind"] == "conditional":
        name = spec["set"]
        model, sim = results["model"][name], results["sim"][name]
        series = SIM_SETS[name][0]
        for k in K_SHOWN:
            for s, v in zip(model["sizes_packets"], model[f"L{k}_s"]):
                rows.append(_row(fig, series, k, "model", s, mss, v))
            for s in _sim_sizes(sim):
                c = sim[s]["conditional"].get(str(k))
                if c is not None:
                    rows.append(_row(fig, series, k, "simulation", s, mss, c["mean_s"], c["ci95_s"], c["n"]))
        rows.append(_row(fig, "filesize_min", 1, "model", model["filesize_min_table_packets"], mss, None))
        rows.append(_row(fig, "filesize_min_fluid", 1, "model", model["filesize_min_fluid_packets"], mss, None))
    elif spec["kind"] == "expected":
        for series in spec["series"]:
            sizes, values = _expected_model(results, series, mss)
            rows.extend(_row(fig, series, None, "model", s, mss, v) for s, v in zip(sizes, values))
            for s, r in _expected_sim(results, series, mss):
                rows.append(_row(fig, series, None, "simulation", s, mss, r["mean_latency_s"], r["ci95_s"], r["runs"]))
    else:  # reduction of L_k against NewReno
        k = spec["k"]
        base_m, base_s = results["model"]["newreno_b1"], results["sim"]["newreno_b1"]
        for series in spec["series"]:
            name = f"{series}_b1"
            m = results["model"][name]
            for s, v, v0 in zip(m["sizes_packets"], m[f"L{k}_s"], base_m[f"L{k}_s"]):
                rows.append(_row(fig, series, k, "model", s, mss, 1.0 - v / v0))
            sim = results["sim"][name]
            for s in _sim_sizes(sim):
                red = reduction_ci(sim[s]["conditional"].get(str(k)), base_s.get(s, {}).get("conditional", {}).get(str(k)),
                                   min_n=2)  # few transfers: kept (drawn hollow), not dropped
                if red is not None:
                    rows.append(_row(fig, series, k, "simulation", s, mss, red[0], red[1], red[2]))
    return rows


def _expected_model(results, series, mss):
    """Model E[L] of a Figure 9 series; size-based: the proposal below 10 KB, LT above."""
    if series != "size-based":
        m = results["model"][f"{series}_b1"]
        return m["sizes_packets"], m["expected_s"]
    prop, lt = results["model"]["proposal_b1"], results["model"]["lt_b1"]
    vals = [p if s * mss < SIZE_BASED_THRESHOLD_BYTES else q
            for s, p, q in zip(prop["sizes_packets"], prop["expected_s"], lt["expected_s"])]
    return prop["sizes_packets"], vals


def _expected_sim(results, series, mss):
    if series != "size-based":
        sim = results["sim"][f"{series}_b1"]
        return [(s, sim[s]) for s in _sim_sizes(sim)]
    prop, lt = results["sim"]["proposal_b1"], results["sim"]["lt_b1"]
    return [(s, (prop if s * mss < SIZE_BASED_THRESHOLD_BYTES else lt)[s]) for s in _sim_sizes(lt) if s in prop]


def reduction_ci(cond, base, min_n: int = MIN_SIM_N):
    """``1 - mean/base_mean`` with a delta-method 95% interval, or ``None``.

    Parameters
    ----------
    cond, base : dict or None
        Conditional summaries ``{"n", "mean_s", "ci95_s"}`` of the variant and of NewReno.
    min_n : int
        Fewest transfers on each side (>= 2, so that both have an interval).

    Returns
    -------
    (float, (float, float), int) or None
        Reduction, interval, and the smaller sample size; ``None`` when either side has
        fewer than ``min_n`` transfers. The two means share seeds (common random
        numbers), which correlates them positively; treating them as independent, as
        done here, makes the interval wider, not narrower.
    """
    min_n = max(2, min_n)
    if not cond or not base or cond["n"] < min_n or base["n"] < min_n:
        return None
    m, m0 = cond["mean_s"], base["mean_s"]
    se = (cond["ci95_s"][1] - m) / 1.96 if cond["ci95_s"] else 0.0
    se0 = (base["ci95_s"][1] - m0) / 1.96 if base["ci95_s"] else 0.0
    ratio = m / m0
    se_r = abs(ratio) * math.sqrt((se / m) ** 2 + (se0 / m0) ** 2)
    red = 1.0 - ratio
    return red, (red - 1.96 * se_r, red + 1.96 * se_r), min(cond["n"], base["n"])


def budget_dict(budget: Budget) -> dict:
    """JSON-ready description of a budget (``stack`` only when it is not ``"rfc"``, so that
    the paper's reproduction keeps its committed metadata)."""
    out = asdict(budget)
    if out["stack"] == "rfc":
        out.pop("stack")
    return out


def figure_path(out_dir, fig: str, ext: str) -> Path:
    """``out_dir/figures/<fig>.<ext>``."""
    return Path(out_dir) / "figures" / f"{fig}.{ext}"
