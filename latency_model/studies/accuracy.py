"""The accuracy map: every analytic model against the packet simulator, cell by cell.

A *cell* is one set-up and file size: (size, p, b, recovery variant, W0). For every cell the
simulator's mean latency comes from the sweep machinery (:mod:`latency_model.studies.sweep`:
planned and validated up front, seeded by ``SeedSequence``, run serially, on local cores or
on Dask, written to a resumable table in the cache folder), and each model's expected
latency from the model registry (:func:`latency_model.model.registry.predict`, one call per
parameter set with all its sizes). The model is given exactly the parameters the simulator
ran (the sweep plan's, stack defaults included).

Definitions (the map's own, stated in every JSON it writes):

- ``error = (model - sim_mean) / sim_mean``: positive where the model is slower than the
  simulation;
- ``sim_se``: the standard error of the simulated mean, the half-width of its 95%
  Student-t interval divided by ``t(0.975, runs - 1)`` (:func:`latency_model.sim.mean_ci`);
- ``error_se = model * sim_se / sim_mean**2``: the standard error of ``error`` by the
  delta method (first order in ``sim_se / sim_mean``; the model value is exact);
- a cell is *within* when ``|error| <= 5%`` (:data:`WITHIN`) or the model lies inside the
  simulated 95% interval;
- a cell is *resolved* when at least :data:`MIN_RUNS` transfers are behind the mean and the
  interval's half-width is at most 5% of the mean (``sim_se <= 0.05 / 1.96 x mean``): only then
  can the simulation tell a 5% error from none. Unresolved cells are hatched in the maps.

Coverage: a model that does not cover a set-up (:func:`~latency_model.model.registry.check_supported`
raises) is an error when the models were named (``AccuracyMap(models=...)``, ``--models``); with
the default, every installed model runs on the set-ups it covers and the others are listed
under ``not_covered``.

Cost: the simulation of the default map takes about 40 s of CPU, the fluid model about 1 s a
parameter set; the packet model's exact expectation grows exponentially with the size (seconds at
20 packets, minutes at 40 with p = 0.1). Each model call therefore runs under a time limit
(:data:`MODEL_TIMEOUT_S`, ``--model-timeout``); the cells of a call stopped there are listed
under ``not_computed`` and left grey in the maps, never estimated. Which cells those are depends
on the machine's speed; the outcome is cached, so a rerun gives the same files.

Outputs (:func:`write_outputs`): a tidy CSV (one row per model and cell, :data:`COLUMNS`), a
JSON (the map, the definitions, the summary per model and per model and variant, the worst
cells, the set-ups not covered, the known differences, the rows) and one heat map per model,
variant, b (and W0 when several): size against p, diverging colours centred on 0. Figures are
drawn from the CSV only (:func:`draw_maps`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import __version__
from ..checks import check_choice, check_int, check_jobs, check_real
from ..values import whole

__all__ = [
    "AccuracyMap",
    "DEFAULT_MAP",
    "QUICK_MAP",
    "COLUMNS",
    "WITHIN",
    "MIN_RUNS",
    "MAX_RELATIVE_SE",
    "run_accuracy",
    "accuracy_rows",
    "summarize",
    "worst_cells",
    "result_json",
    "write_outputs",
    "draw_maps",
    "summary_text",
    "report_section",
    "sim_table_path",
    "read_rows_csv",
    "map_paths",
    "colour_range",
    "dumps",
    "DEFINITIONS",
    "MODEL_TIMEOUT_S",
    "QUICK_MODEL_TIMEOUT_S",
]

WITHIN = 0.05
"""A cell is within when ``|error|`` is at most this (or the model is inside the 95% CI)."""

MIN_RUNS = 30
"""Fewest simulated transfers behind a resolved cell (as ``validate.MIN_N``)."""

MAX_RELATIVE_SE = WITHIN / 1.96
"""Largest ``sim_se / sim_mean`` of a resolved cell: the 95% half-width at most 5% of the mean."""

MODEL_TIMEOUT_S = 10.0
"""Default seconds a model call may run (``--model-timeout``); see :func:`run_accuracy`."""

MODEL_MAX_PACKETS = {"packet": 20}
"""Largest file size, packets, a model is asked for on the map (deterministic, unlike the time
limit): the packet model's level DP takes up to a few seconds for sizes up to 20 packets
and minutes to 200 packets (docs/packet-model.md, its cost).
Cells above are reported in ``not_computed`` with this reason."""

QUICK_MAX_PACKETS = {"packet": 8}
"""The same for the quick map."""

QUICK_MODEL_TIMEOUT_S = 2.0
"""The same for the quick map (``--quick``, ``reproduce --quick``): the fluid model's calls take
well under a second there; the packet model's take seconds from 20 packets at p = 0.1."""

N_WORST = 5
"""Worst cells listed per model."""

CLIP = 0.5
"""Widest colour range of the heat maps, ``+-50%``: larger errors saturate (their number is
still printed in the cell)."""

DEFAULT_SIZES_PACKETS = (1, 2, 3, 5, 8, 10, 15, 20, 30, 40, 60, 100, 200)
DEFAULT_P = (0.01, 0.02, 0.05, 0.1, 0.2)
DEFAULT_B = (1, 2)
DEFAULT_VARIANTS = ("newreno", "lt", "proposal")
DEFAULT_RUNS = 2000

COLUMNS = ["model", "variant", "b", "w0", "p", "size_packets", "size_bytes", "stack", "runs",
           "model_s", "sim_mean_s", "sim_se_s", "sim_ci95_low_s", "sim_ci95_high_s",
           "error", "error_se", "abs_error", "within", "resolved",
           "timeout_fraction", "mean_lost_packets", "point", "sim_key"]
"""Columns of the tidy CSV, one row per model and cell (seconds; error as a fraction)."""

_FLOATS = ("w0", "p", "size_packets", "size_bytes", "model_s", "sim_mean_s", "sim_se_s", "sim_ci95_low_s",
           "sim_ci95_high_s", "error", "error_se", "abs_error", "timeout_fraction", "mean_lost_packets")
_INTS = ("b", "runs", "point")


def _tuple(name: str, values, check) -> tuple:
    """``values`` (one value or a sequence) as a non-empty tuple, each checked, none twice."""
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        values = (values,)
    out = tuple(check(v) for v in values)
    if not out:
        raise ValueError(f"{name} must hold at least one value")
    for v in out:
        if out.count(v) > 1:
            raise ValueError(f"{name} lists {v!r} twice")
    return out


@dataclass(frozen=True)
class AccuracyMap:
    """The cells of an accuracy map and how to simulate them.

    Parameters
    ----------
    models : sequence of str or None
        Models of :data:`latency_model.model.registry.MODELS`. ``None`` (default): every
        installed model, each on the set-ups it covers; named models must cover every cell.
    sizes_packets : sequence of float
        File sizes, packets of MSS (> 0, whole bytes).
    p : sequence of float
        Loss probabilities per packet, in [0, 1).
    b : sequence of int
        Delayed-ACK factors, packets per ACK (>= 1).
    variants : sequence of str
        Recovery variants (:data:`latency_model.params.VARIANTS`, or ``size-based``).
    w0 : sequence of float or None
        Initial windows, packets; ``None``: the paper's (TcpParams' default, 2), or the stack
        profile's default for the simulator and the models alike (Linux: 10).
    runs : int
        Simulated transfers per cell (>= 1).
    seed : int
        Root seed (>= 0): cell i draws from ``SeedSequence(seed, spawn_key=(i,))``, cells
        numbered over variant x b x W0 x p x size (sizes innermost), as the sweep does.
    sim_config : SimConfig or None
        Simulated stack, path and timers (default ``SimConfig()``: the rfc profile).
    engine : {"auto", "python", "compiled"}
        Simulator engine (all give the same numbers).
    """

    models: tuple | None = None
    sizes_packets: tuple = DEFAULT_SIZES_PACKETS
    p: tuple = DEFAULT_P
    b: tuple = DEFAULT_B
    variants: tuple = DEFAULT_VARIANTS
    w0: tuple | None = None
    runs: int = DEFAULT_RUNS
    seed: int = 0
    sim_config: object = None
    engine: str = "auto"

    def __post_init__(self):
        from ..params import VARIANTS
        from ..sim.config import SimConfig
        from ..sim.runner import ENGINES
        from .sweep.plan import check_models

        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        if self.models is not None:
            models = self.models.split(",") if isinstance(self.models, str) else self.models
            put("models", check_models(models))
        put("sizes_packets", _tuple("size_packets", self.sizes_packets,
                                    lambda v: whole(check_real("size_packets", v, low=0.0, low_open=True))))
        put("p", _tuple("p", self.p, lambda v: check_real("p", v, low=0.0, high=1.0, high_open=True)))
        put("b", _tuple("b", self.b, lambda v: check_int("b", v, low=1)))
        put("variants", _tuple("variants", self.variants,
                               lambda v: check_choice("variants", v, [*VARIANTS, "size-based"])))
        if self.w0 is not None:
            put("w0", _tuple("w0", self.w0, lambda v: whole(check_real("w0", v, low=0.0, low_open=True))))
        put("runs", check_int("runs", self.runs, low=1))
        put("seed", check_int("seed", self.seed, low=0))
        check_choice("engine", self.engine, ENGINES)
        if self.sim_config is None:
            put("sim_config", SimConfig())
        elif not isinstance(self.sim_config, SimConfig):
            raise ValueError(f"sim_config must be a SimConfig, got {self.sim_config!r}")
        if self.w0 is not None:  # a W0 axis: every model run must read W0 (not PFTK)
            from ..model.registry import NO_INITIAL_WINDOW

            blind = [m for m in self.model_names() if m in NO_INITIAL_WINDOW]
            if blind:
                how = ("name the models without it (models; every installed one runs by default)" if self.models is None
                       else f"leave {' and '.join(blind)} out of the models")
                raise ValueError(f"w0 {','.join(map(str, self.w0))}: model {' and '.join(blind)} does not read it "
                                 f"(no initial window: a steady-state throughput); {how}")

    @property
    def strict(self) -> bool:
        """Whether every model must cover every cell (the models were named)."""
        return self.models is not None

    def model_names(self) -> tuple:
        """The models run: those named, else every installed one (registry order)."""
        from .sweep.plan import available_models

        return self.models if self.models is not None else tuple(available_models())

    @property
    def n_cells(self) -> int:
        """Cells of the map (sizes x p x b x variants x W0)."""
        return (len(self.sizes_packets) * len(self.p) * len(self.b) * len(self.variants)
                * (len(self.w0) if self.w0 else 1))

    def grid(self):
        """The sweep grid of the simulated cells: variant, b, [w0], p, size_packets (innermost)."""
        from .sweep import Axis, Grid

        axes = [Axis("variant", self.variants), Axis("b", self.b)]
        if self.w0 is not None:
            axes.append(Axis("w0", self.w0))
        axes += [Axis("p", self.p), Axis("size_packets", self.sizes_packets)]
        if self.sim_config.stack == "linux":  # the models are Reno's: not the profile's default CUBIC
            axes.insert(0, Axis("rule", ("standard",)))
        return Grid(tuple(axes))

    def sweep_spec(self):
        """The :class:`~latency_model.studies.sweep.SweepSpec` simulating every cell."""
        from .sweep import SweepSpec

        return SweepSpec(grid=self.grid(), what="simulation", runs=self.runs, seed=self.seed,
                         sim_config=self.sim_config, engine=self.engine)

    def comparison_notes(self) -> list[str]:
        """Where the models and this simulator differ by design, one sentence each
        (:meth:`~latency_model.studies.sweep.SweepSpec.comparison_notes`, each naming its model)."""
        from .sweep import Axis, Grid

        spec = self.sweep_spec()
        models = self.model_names()
        grid = Grid(spec.grid.axes + (Axis("model", models),))
        notes = dataclasses.replace(spec, grid=grid, what="both").comparison_notes()
        if "fluid" in models:  # the largest effect on small files, measured by validate
            notes.insert(0, "model fluid: its rate grows continuously and the transfer ends with the last "
                            "byte sent, where the simulated window is sent a round at a time and the transfer "
                            "ends with the last ACK: each loss-free stretch of a transfer can end up to "
                            "1.5 RTT earlier than simulated (validation/REPORT.md, L0_fluid_vs_staircase), "
                            "most of the latency of a file of a few packets")
        return notes

    def to_dict(self) -> dict:
        """JSON-ready description (the models resolved)."""
        return {"models": list(self.model_names()), "models_named": self.strict,
                "sizes_packets": list(self.sizes_packets), "p": list(self.p), "b": list(self.b),
                "variants": list(self.variants), "w0": None if self.w0 is None else list(self.w0),
                "runs": self.runs, "seed": self.seed, "cells": self.n_cells, "stack": self.sim_config.stack,
                "sim_config": self.sim_config.to_dict()}


DEFAULT_MAP = AccuracyMap()
"""``latency-model accuracy``: 13 sizes x 5 p x 2 b x 3 variants = 390 cells, 2,000 runs each."""

QUICK_MAP = AccuracyMap(sizes_packets=(1, 3, 8, 20), p=(0.02, 0.1), b=(1,), runs=400)
"""``--quick`` (and ``reproduce --quick``): 4 sizes x 2 p x 3 variants = 24 cells, 400 runs
(sizes up to 20 packets: the packet model's exact expectation takes seconds there, minutes
at 40)."""


# ---------------------------------------------------------------------------
# Running the map


def sim_table_path(amap: AccuracyMap, cache_dir) -> Path:
    """The simulated cells' sweep table in ``cache_dir``: its name hashes the grid, runs,
    seed, simulator settings, package version and the simulator's source code, so a change
    of any starts a new table and an unchanged map resumes (or reuses) the old one."""
    from . import cache

    spec = {"grid": amap.grid().to_dict(), "runs": amap.runs, "seed": amap.seed,
            "sim_config": amap.sim_config.to_dict()}
    code = cache.source_hash("sim", "params.py", "growth", "checks.py", "studies/sweep")
    return Path(cache_dir) / f"{cache.cache_key('accuracy_sim', spec, code)}.csv"


def _groups(plan) -> list:
    """(params, points) of the planned cells: the points sharing one parameter set."""
    groups: dict = {}
    for task in plan.tasks:
        for pt in task.points:
            groups.setdefault(pt.params, []).append(pt)
    return list(groups.items())


def _where(pt) -> str:
    c = pt.cells
    return f"variant={c['variant']}, b={c['b']}, w0={c['w0']:g}, p={c['p']:g}"


def _coverage(amap: AccuracyMap, models, groups) -> dict:
    """``{(model, i): reason}`` for the parameter sets (``groups[i]``) a model does not cover.

    Raises
    ------
    ValueError
        For named models (``amap.strict``): ``model M: <what M supports> (at variant=...)``.
    """
    from ..model.registry import check_supported

    missing = {}
    for m in models:
        for i, (params, pts) in enumerate(groups):
            try:
                check_supported(m, params)
            except ValueError as exc:
                if amap.strict:
                    raise ValueError(f"model {m}: {exc} (at {_where(pts[0])})") from None
                missing[m, i] = str(exc)
    return missing


def _model_options(model: str, sim_config) -> dict:
    """Keyword options of ``model``'s ``predict`` for a comparison with the simulator set up
    as ``sim_config``: the packet model follows its link and timers
    (:func:`~latency_model.studies.packet_setup.packet_options`); the others take none."""
    if model != "packet":
        return {}
    from .packet_setup import packet_options

    return packet_options(sim_config)


def _predict_job(job):
    """Expected latencies (seconds) of one model at one parameter set's sizes (bytes), with
    the model's options (``job``: model, params, sizes, options)."""
    from ..model.registry import predict

    model, params, sizes, options = job
    return [float(v) for v in predict(model, params, np.asarray(sizes, dtype=float), **options).expected_latency_s]


def _worker(conn, parent_pid: int) -> None:
    """One chain's model calls in a process of its own (so that a call can be stopped at the
    time limit), one after the other, until the parent sends None: what a call leaves in
    the model's module (the fluid model's tables, which do not depend on p) serves the
    chain's next call, as it would in one process."""
    from ..workers import watch_parent

    watch_parent(parent_pid)
    try:
        while True:
            try:
                job = conn.recv()
            except EOFError:
                return
            if job is None:
                return
            try:
                conn.send(("ok", _predict_job(job)))
            except ValueError as exc:
                conn.send(("value_error", str(exc)))
            except BaseException as exc:  # noqa: BLE001 - reported by the parent, which retires us
                conn.send(("error", f"{type(exc).__name__}: {exc}"))
                return
    finally:
        conn.close()


class _Calls:
    """Runs model calls: in this process (no time limit, one job), or in child processes,
    at most ``jobs`` at once, a call stopped after ``timeout_s`` seconds.

    Each chain (one model's series of parameter sets, :func:`_series`) has one child
    that runs its calls in turn (:func:`_worker`), so what a model keeps between calls
    serves the next call as it does in one process: the fluid model's tables do not depend
    on p, and the map's 30 fluid calls took 31 s of CPU in a process each against 8 s in
    six. A call stopped at the time limit or ended by an error ends its
    child; the chain's next call starts a new one. Children are forked where the platform
    allows, after the model's kernels are loaded here (:func:`latency_model.model.registry.warm`):
    loading them once per child cost the map's 30 packet-model calls nearly as much CPU as
    computing."""

    def __init__(self, jobs: int, timeout_s: float | None):
        import multiprocessing

        self.jobs, self.timeout_s = jobs, timeout_s
        self.inline = timeout_s is None and jobs == 1
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        # forked calls inherit this process's loaded kernels: each model is warmed
        # (registry.warm) here before its first call is forked, not in every child
        self.forks = not self.inline and self.ctx.get_start_method() == "fork"
        self.warmed: set = set()
        self.running: dict = {}  # id(chain) -> [process, connection, start of its call, chain]

    def run(self, chains: list) -> None:
        """Drive ``chains`` (generators yielding calls and receiving their outcomes) to the end."""
        live = []
        for ch in chains:
            call = next(ch, None)
            if call is not None:
                live.append((ch, call))
        if self.inline:
            while live:
                ch, call = live.pop(0)
                nxt = ch.send(self._inline(call))  # a chain yields None when done
                if nxt is not None:
                    live.append((ch, nxt))
            return
        waiting = live
        try:
            while waiting or self.running:
                while waiting and len(self.running) < self.jobs:
                    ch, call = waiting.pop(0)
                    self._start(ch, call)
                for ch, outcome, child in self._finished():
                    nxt = ch.send(outcome)
                    if nxt is None:
                        if child is not None:
                            self._stop(child)
                    elif child is not None:  # the chain's next call, in the same child
                        self._send(ch, nxt, child)
                    else:
                        waiting.insert(0, (ch, nxt))
        finally:
            for proc, conn, _, _ in self.running.values():
                proc.kill()
                proc.join()
                conn.close()
            self.running.clear()

    @staticmethod
    def _inline(call):
        try:
            return ("ok", _predict_job(call))
        except ValueError as exc:
            return ("value_error", str(exc))

    def _start(self, ch, call) -> None:
        """A new child for chain ``ch``, given ``call``."""
        if self.forks and call[0] not in self.warmed:
            from ..model.registry import warm

            warm(call[0])
            self.warmed.add(call[0])
        mine, theirs = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=_worker, args=(theirs, os.getpid()), daemon=True)
        proc.start()
        theirs.close()
        self._send(ch, call, (proc, mine))

    def _send(self, ch, call, child) -> None:
        import time

        proc, conn = child
        conn.send(call)
        self.running[id(ch)] = (proc, conn, time.monotonic(), ch)

    @staticmethod
    def _stop(child) -> None:
        """Tell an idle child to end, and wait for it."""
        proc, conn = child
        try:
            conn.send(None)
        except OSError:
            pass
        proc.join(timeout=5.0)
        if proc.is_alive():
            proc.kill()
            proc.join()
        conn.close()

    def _finished(self) -> list:
        """``[(chain, outcome, child)]`` of the calls that ended: ``child`` the idle
        ``(process, connection)`` that can take the chain's next call, None when the call
        ended it (time limit, error)."""
        import time
        from multiprocessing.connection import wait

        wait([conn for _, conn, _, _ in self.running.values()], timeout=0.05)
        done = []
        for key, (proc, conn, t0, ch) in list(self.running.items()):
            outcome = None
            if conn.poll():
                try:
                    outcome = conn.recv()
                except EOFError:
                    outcome = ("error", f"the model's process ended without an answer (exit code {proc.exitcode})")
            elif self.timeout_s is not None and time.monotonic() - t0 > self.timeout_s:
                proc.kill()
                outcome = ("timeout", None)
            elif not proc.is_alive() and not conn.poll():
                outcome = ("error", f"the model's process ended without an answer (exit code {proc.exitcode})")
            if outcome is None:
                continue
            del self.running[key]
            child = (proc, conn)
            if outcome[0] not in ("ok", "value_error"):
                proc.kill()
                proc.join()
                conn.close()
                child = None
            done.append((ch, outcome, child))
        return done


def _series(groups) -> dict:
    """Group indices by set-up series (variant, b, W0, rule...: everything but p), each in
    ascending p: the order in which a model's cost grows."""
    out: dict = {}
    for i, (params, pts) in enumerate(groups):
        key = (pts[0].cells["variant"], params.replace(p=0.0))
        out.setdefault(key, []).append(i)
    for idx in out.values():
        idx.sort(key=lambda i: groups[i][0].p)
    return out


def _chain_seconds(model: str, sets, max_packets=None, tree: bool = False) -> float:
    """Rough CPU seconds of one model's calls on the parameter sets ``sets`` (``[(params,
    points)]``), each with its sizes up to the model's cap: the sweep planner's estimates
    (:func:`~latency_model.checks.packet_model_seconds` for the packet model,
    :func:`~latency_model.checks.packet_tree_seconds` with ``tree``, where it runs the
    SACK sender, :func:`~latency_model.checks.model_cost` for the others). Only their
    order matters: :func:`_predictions` starts the dearest chains first."""
    from ..checks import model_cost, packet_model_seconds, packet_tree_seconds

    limit = (max_packets or {}).get(model, math.inf)
    total = 0.0
    for params, pts in sets:
        sizes = [pt.size_bytes / params.mss_bytes for pt in pts if pt.size_bytes <= limit * params.mss_bytes]
        if not sizes:
            continue
        if model == "packet" and tree:
            total += packet_tree_seconds(params.p, sizes)
        elif model == "packet":
            total += packet_model_seconds(params.p, max(sizes), params.w0, params.b, n_sizes=len(sizes))
        else:
            total += model_cost(params.p, params.mss_bytes, max(sizes) * params.mss_bytes, len(sizes))[1]
    return total


def _predictions(models, groups, missing, cache_dir, jobs, force, timeout_s=None, max_packets=None,
                 sim_config=None, tick=None):
    """Each covered (model, parameter set)'s latencies: ``({(model, i): [seconds or None per
    point]}, computed calls, cached calls, {(model, i): reason})``.

    One call per parameter set with all its sizes (cached by model, parameters, sizes and
    the models' source code). With ``timeout_s``, a call still running after that long is
    stopped and the set's sizes are then asked one at a time, smallest first, up to the first
    that runs out of time; as a model's cost grows with the size and with p, a set with a
    larger p of the same series starts one size at a time and stops below the size that ran
    out at the smaller p. Sizes so left out get None (reported, never guessed). A time-out is
    cached with its limit, so a rerun with the same limit gives the same cells. On more than
    one process the chains start dearest first (:func:`_chain_seconds`). Each model gets its
    options for the simulator's ``sim_config`` (:func:`_model_options`; they join the cache key
    where there are any).
    """
    from . import cache

    code = cache.source_hash("model", "params.py", "growth", "checks.py")
    out: dict = {}
    counts = {"computed": 0, "cached": 0}
    failures: dict = {}

    options = {m: _model_options(m, sim_config) for m in models}

    def keys(m, params, sizes):
        spec = {"model": m, "params": params.to_dict(), "sizes_bytes": list(sizes)}
        if options[m]:  # only then: the default set-up's cached calls stay valid
            spec["options"] = {k: dataclasses.asdict(v) for k, v in options[m].items()}
        return (cache.cache_key("accuracy_model", spec, code),
                cache.cache_key("accuracy_timeout", {**spec, "timeout_s": timeout_s}, code))

    def call(m, params, sizes):
        """Generator step: the cached outcome, or yield the call and take its outcome."""
        ok_key, late_key = keys(m, params, sizes)
        if not force:
            hit = cache.load(cache_dir, ok_key)
            if isinstance(hit, list) and len(hit) == len(sizes):
                counts["cached"] += 1
                return ("ok", hit)
            if timeout_s is not None and cache.load(cache_dir, late_key) is True:
                counts["cached"] += 1
                return ("timeout", None)
        outcome = yield (m, params, list(sizes), options[m])
        counts["computed"] += 1
        if tick is not None:
            tick(counts["computed"])
        if outcome[0] == "ok":
            cache.store(cache_dir, ok_key, outcome[1], spec={"model": m, "params": params.to_dict()})
        elif outcome[0] == "timeout":
            cache.store(cache_dir, late_key, True, spec={"model": m, "timeout_s": timeout_s})
        return outcome

    def chain(m, idx):
        cap = math.inf  # sizes from this one on ran out of time at a smaller p
        limit = (max_packets or {}).get(m, math.inf)  # the model's size cap, packets
        for i in idx:
            params, pts = groups[i]
            allowed = [j for j, pt in enumerate(pts) if pt.size_bytes <= limit * params.mss_bytes]
            sizes = [pts[j].size_bytes for j in allowed]
            values = [None] * len(pts)
            if not allowed:
                out[m, i] = values
                continue
            if cap == math.inf:
                outcome = yield from call(m, params, sizes)
                if outcome[0] != "timeout":
                    _keep(m, i, outcome, values, allowed)
                    out[m, i] = values
                    continue
            for j in sorted(allowed, key=lambda j: pts[j].size_bytes):
                if pts[j].size_bytes >= cap:
                    break
                outcome = yield from call(m, params, [pts[j].size_bytes])
                if outcome[0] == "timeout":
                    cap = pts[j].size_bytes
                    break
                _keep(m, i, outcome, values, [j])
                if (m, i) in failures:
                    break
            out[m, i] = values
        yield None

    def _keep(m, i, outcome, values, where):
        kind, payload = outcome
        if kind == "ok":
            for j, v in zip(where, payload):
                values[j] = v
        else:
            failures[m, i] = (kind, payload)

    series = [(m, [i for i in idx if (m, i) not in missing]) for m in models for idx in _series(groups).values()]
    series = [(m, idx) for m, idx in series if idx]
    if jobs > 1:  # the dearest chains first, so that the last to end are short ones
        pk = options.get("packet", {})
        tree = "config" in pk or (pk.get("path") is not None and pk["path"].object_engine_only)
        series.sort(key=lambda s: -_chain_seconds(s[0], [groups[i] for i in s[1]], max_packets, tree))
    _Calls(jobs, timeout_s).run([chain(m, idx) for m, idx in series])
    return out, counts["computed"], counts["cached"], failures


def _progress_line(enabled: bool):
    """``line(text, every_s=0)``: print ``text`` on stderr with the seconds since the start;
    a line with ``every_s`` (a tick) at most every ``every_s`` seconds after the last tick;
    nothing when not ``enabled``."""
    import time

    t0, last = time.monotonic(), [-math.inf]

    def line(text: str, every_s: float = 0.0) -> None:
        now = time.monotonic()
        if enabled and now - last[0] >= every_s:
            if every_s:
                last[0] = now
            print(f"{text}, {now - t0:.0f} s", file=sys.stderr, flush=True)

    return line


def _not_computed_groups(result) -> dict:
    """``{(model, reason): [not computed cells]}`` in first-seen order."""
    groups: dict = {}
    for nc in result["not_computed"]:
        groups.setdefault((nc["model"], nc["reason"]), []).append(nc)
    return groups


def _num(text):
    return None if text in ("", None) else float(text)


def accuracy_rows(models, groups, predictions: dict, sim_rows: dict) -> list[dict]:
    """The tidy rows (:data:`COLUMNS`): one per model and covered cell, model-major, cells
    in grid order.

    Parameters
    ----------
    models : sequence of str
        Model names, in order.
    groups : list of (TcpParams, list of PointSpec)
        The planned cells grouped by parameter set.
    predictions : dict
        ``{(model, group index): [model latency per point, seconds, or None]}``; a missing
        entry (a set-up the model does not cover) or None (a call over the time limit) gives
        no row.
    sim_rows : dict
        Simulated sweep rows (cell text) by key.

    Returns
    -------
    list of dict
        Typed values (None where undefined: no interval from fewer than two runs).
    """
    from scipy import stats

    t_cache: dict = {}
    cells = sorted(((pt.index, pt, i, j) for i, (_, pts) in enumerate(groups) for j, pt in enumerate(pts)),
                   key=lambda c: c[0])
    rows = []
    for m in models:
        for _, pt, i, j in cells:
            if (m, i) not in predictions or predictions[m, i][j] is None:
                continue
            sim = sim_rows[pt.key]
            model_s = float(predictions[m, i][j])
            mean = float(sim["expected_latency_s"])
            lo, hi = _num(sim["ci95_low_s"]), _num(sim["ci95_high_s"])
            runs = int(sim["runs"])
            se = None
            if lo is not None and hi is not None and runs >= 2:
                t = t_cache.setdefault(runs, float(stats.t.ppf(0.975, runs - 1)))
                se = (hi - lo) / (2.0 * t)
            err = (model_s - mean) / mean
            inside = lo is not None and hi is not None and lo <= model_s <= hi
            rows.append({
                "model": m, "variant": pt.cells["variant"], "b": int(pt.params.b), "w0": whole(pt.params.w0),
                "p": float(pt.params.p), "size_packets": pt.cells["size_packets"], "size_bytes": pt.cells["size_bytes"],
                "stack": pt.cells["stack"], "runs": runs, "model_s": model_s, "sim_mean_s": mean, "sim_se_s": se,
                "sim_ci95_low_s": lo, "sim_ci95_high_s": hi, "error": err,
                "error_se": None if se is None else model_s * se / mean ** 2, "abs_error": abs(err),
                "within": bool(abs(err) <= WITHIN or inside),
                "resolved": bool(runs >= MIN_RUNS and se is not None and se <= MAX_RELATIVE_SE * mean),
                "timeout_fraction": _num(sim["timeout_fraction"]), "mean_lost_packets": _num(sim["mean_lost_packets"]),
                "point": pt.index, "sim_key": pt.key,
            })
    return rows


def _stats(sel: list[dict]) -> dict:
    a = np.array([r["abs_error"] for r in sel])
    e = np.array([r["error"] for r in sel])
    n_within = sum(r["within"] for r in sel)
    return {"cells": len(sel), "within": int(n_within), "within_fraction": n_within / len(sel),
            "median_abs_error": float(np.median(a)), "p90_abs_error": float(np.percentile(a, 90)),
            "max_abs_error": float(a.max()), "mean_error": float(e.mean()),
            "unresolved": int(sum(not r["resolved"] for r in sel))}


def summarize(rows: list[dict], models, variants) -> list[dict]:
    """Per model (``variant = "all"``) and per model and variant: cells, cells within,
    median, 90th percentile (numpy's linear interpolation) and max of ``|error|``, mean signed
    error and unresolved cells. Models or variants without rows are left out."""
    out = []
    for m in models:
        for v in ("all", *variants):
            sel = [r for r in rows if r["model"] == m and v in ("all", r["variant"])]
            if sel:
                out.append({"model": m, "variant": v, **_stats(sel)})
    return out


def worst_cells(rows: list[dict], models, n: int = N_WORST) -> dict:
    """``{model: its n rows of largest |error|}`` (ties in grid order)."""
    return {m: sorted((r for r in rows if r["model"] == m), key=lambda r: -r["abs_error"])[:n] for m in models}


def run_accuracy(amap: AccuracyMap, *, cache_dir, jobs: int = 1, client=None, force: bool = False,
                 progress: bool = False, command: str | None = None,
                 model_timeout_s: float | None = MODEL_TIMEOUT_S, max_packets: dict | None = None) -> dict:
    """Simulate and predict every cell of ``amap``; the rows and their summary.

    Parameters
    ----------
    amap : AccuracyMap
        The cells.
    cache_dir : str or Path
        Folder of the simulated sweep table (:func:`sim_table_path`, resumable) and of the
        cached model predictions.
    jobs : int
        Local worker processes (>= 1), for the simulation and the models.
    client : distributed.Client, optional
        Run the simulation on this Dask cluster instead (the models run on ``jobs`` local
        processes, where a call can be stopped at its time limit).
    force : bool
        Recompute everything (the cached table and predictions are replaced).
    progress : bool
        Progress on stderr: a bar for the simulation on a terminal, and a line at most every
        5 s while the models' calls run (on a terminal or not).
    command : str, optional
        The command line, recorded in the JSON.
    model_timeout_s : float or None
        Seconds a model call may run (> 0; None: no limit). A call over it is stopped and
        the cells it would have given are reported in ``not_computed`` (see
        :func:`_predictions`). The fluid model needs about 1 s for the first call of a
        series and a quarter of that for the next (its tables do not depend on p, and a
        series' calls run in one process: :class:`_Calls`); the packet model's level DP up
        to a few seconds a call to 20 packets, minutes from about 40 packets at p = 0.2
        (docs/packet-model.md).
    max_packets : dict, optional
        ``{model: largest size, packets}`` asked of a model (default :data:`MODEL_MAX_PACKETS`);
        the cells above are reported in ``not_computed``. Unlike the time limit it does not
        depend on the machine: ``reproduce`` uses it alone.

    Returns
    -------
    dict
        ``map``, ``models``, ``rows`` (:func:`accuracy_rows`), ``summary``
        (:func:`summarize`), ``worst``, ``not_covered`` (set-ups a model does not cover),
        ``not_computed`` (cells over the time limit), ``notes``, ``command``, and how
        much was computed: ``sim_rows_computed``, ``sim_rows_resumed``,
        ``model_calls_computed``, ``model_calls_cached``, ``sim_table``.

    Raises
    ------
    ValueError
        For a bad cell (naming the parameter and the cell), an unknown or uninstalled model,
        or a named model not covering a set-up (naming what it supports).
    """
    from .sweep import plan_sweep, read_rows, run_sweep

    if not isinstance(amap, AccuracyMap):
        raise ValueError(f"amap must be an AccuracyMap, got {amap!r}")
    jobs = check_jobs("jobs", jobs)
    if model_timeout_s is not None:
        model_timeout_s = check_real("model_timeout_s", model_timeout_s, low=0.0, low_open=True)
    spec = amap.sweep_spec()
    plan = plan_sweep(spec)  # every cell validated before any work
    models = amap.model_names()
    groups = _groups(plan)
    missing = _coverage(amap, models, groups)
    cache_dir = Path(cache_dir)
    table = sim_table_path(amap, cache_dir)
    line = _progress_line(progress)
    line(f"accuracy map: {plan.n_rows} simulated cells")
    report = run_sweep(spec, table, jobs=jobs, client=client, force=force, progress=progress,
                       plan=plan, command=None if command is None else command.split())
    line(f"accuracy map: cells simulated ({report.rows_computed} computed, {report.rows_resumed} from the cache); "
         f"now the models' calls ({', '.join(models)})")
    _, sim = read_rows(table)
    max_packets = dict(MODEL_MAX_PACKETS if max_packets is None else max_packets)
    predictions, computed, cached, failures = _predictions(
        models, groups, missing, cache_dir, jobs, force, model_timeout_s, max_packets, amap.sim_config,
        tick=lambda n: line(f"accuracy map: {n} model calls computed", every_s=5.0))
    line(f"accuracy map: {computed} model calls computed, {cached} from the cache")
    for (m, i), (kind, text) in failures.items():
        if kind == "value_error" and not amap.strict:
            missing[m, i] = text
            predictions.pop((m, i), None)
        elif kind == "value_error":
            raise ValueError(f"model {m}: {text} (at {_where(groups[i][1][0])})")
        else:
            raise RuntimeError(f"model {m} failed at {_where(groups[i][1][0])}: {text}")
    rows = accuracy_rows(models, groups, predictions, {r["key"]: r for r in sim})

    def setup(m, i):
        params, pts = groups[i]
        return {"model": m, "variant": pts[0].cells["variant"], "b": int(params.b), "w0": whole(params.w0),
                "p": float(params.p)}

    not_covered = [{**setup(m, i), "reason": reason} for (m, i), reason in
                   sorted(missing.items(), key=lambda kv: (models.index(kv[0][0]), kv[0][1]))]
    def why(m, pt):
        if pt.cells["size_packets"] > max_packets.get(m, math.inf):
            return (f"above the {m} model's size cap of {max_packets[m]:g} packets (its calls take minutes "
                    "from about 40 packets at p >= 0.05: docs/packet-model.md; --packet-max-packets)")
        return f"the model call ran over the {model_timeout_s:g} s limit"

    not_computed = [{**setup(m, i), "size_packets": pt.cells["size_packets"], "reason": why(m, pt)}
                    for (m, i), values in sorted(predictions.items(), key=lambda kv: (models.index(kv[0][0]), kv[0][1]))
                    for pt, v in zip(groups[i][1], values) if v is None]
    return {"command": command, "map": amap.to_dict(), "models": list(models), "rows": rows,
            "summary": summarize(rows, models, amap.variants), "worst": worst_cells(rows, models),
            "not_covered": not_covered, "not_computed": not_computed, "notes": amap.comparison_notes(),
            "model_timeout_s": model_timeout_s, "model_max_packets": max_packets,
            "sim_table": table.name, "sim_rows_computed": report.rows_computed,
            "sim_rows_resumed": report.rows_resumed, "model_calls_computed": computed,
            "model_calls_cached": cached}


# ---------------------------------------------------------------------------
# Output


STATUS_DEFINITIONS = {
    "within": f"|error| <= {WITHIN:.0%}, or the model inside the simulated 95% interval",
    "unresolved": f"the simulated mean is too uncertain to grade the model: its 95% half-width is over "
                  f"{WITHIN:.0%} of the mean, or fewer than {MIN_RUNS} transfers are behind it (more --runs "
                  "resolve it); its error is counted but mostly noise",
    "not covered": "a set-up the model does not describe (CSA and PFTK: the standard rule and NewReno only): "
                   "no row",
    "not computed": "a cell above the model's size cap or over its time limit: no row",
}
"""What each status of a cell means, printed with every summary (text, report, JSON)."""


def status_lines() -> list[str]:
    """The definitions of :data:`STATUS_DEFINITIONS`, one line each (error = (model -
    simulation) / simulation first)."""
    return ["error = (model - simulated mean) / simulated mean, > 0 where the model is slower"] + \
        [f"{k}: {v}" for k, v in STATUS_DEFINITIONS.items()]


DEFINITIONS = {
    "error": "(model - sim_mean) / sim_mean; > 0 where the model is slower than the simulation",
    "sim_se_s": "standard error of the simulated mean: 95% Student-t half-width / t(0.975, runs - 1), seconds",
    "error_se": "model * sim_se / sim_mean^2 (delta method)",
    "within": f"|error| <= {WITHIN:g} or the model inside the simulated 95% interval",
    "resolved": f"runs >= {MIN_RUNS} and sim_se <= {MAX_RELATIVE_SE:.5f} x sim_mean (95% half-width <= "
                f"{WITHIN:.0%} of the mean); unresolved cells are hatched in the maps",
    "statuses": STATUS_DEFINITIONS,
    "summary": "per model (variant 'all') and per model and variant: median, 90th percentile (linear) and "
               "max of |error|, mean signed error, cells within, unresolved cells",
    "seeds": "cell i (grid order: variant, b, w0, p, size) draws from SeedSequence(seed, spawn_key=(i,)), "
             "run j from its spawn(runs)[j], as latency-model sweep",
}


def result_json(result: dict, *, run_stats: bool = False) -> dict:
    """The JSON document of a map (what ``--json`` prints and ``accuracy.json`` holds).

    Keys: ``command``, ``version``, ``map``, ``models``, ``definitions``, ``columns``,
    ``summary``, ``worst``, ``not_covered``, ``not_computed``, ``model_timeout_s``,
    ``model_max_packets``, ``notes``,
    ``rows``; with ``run_stats`` also
    ``run`` (rows and calls computed or reused: not in the file, which must not change
    when a rerun is served from the cache).
    """
    out = {"command": result.get("command"), "version": __version__, "map": result["map"],
           "models": result["models"], "definitions": DEFINITIONS, "columns": COLUMNS,
           "summary": result["summary"], "worst": result["worst"], "not_covered": result["not_covered"],
           "not_computed": result["not_computed"], "model_timeout_s": result["model_timeout_s"],
           "model_max_packets": result.get("model_max_packets"), "notes": result["notes"], "rows": result["rows"]}
    if run_stats:
        out["run"] = {k: result[k] for k in ("sim_table", "sim_rows_computed", "sim_rows_resumed",
                                             "model_calls_computed", "model_calls_cached")}
    return out


def _cell(v) -> str:
    from .sweep.table import _fmt

    return _fmt(v)


def write_outputs(result: dict, out_dir, stem: str = "accuracy", *, draw: bool = True) -> list[Path]:
    """Write ``<stem>.csv`` (tidy rows, exact floats), ``<stem>.json`` and, with ``draw``, the
    heat maps (:func:`draw_maps`) into ``out_dir``, each atomically. Returns the paths."""
    from .export import write_csv, write_json

    out_dir = Path(out_dir)
    csv_path = write_csv(out_dir / f"{stem}.csv", [{k: _cell(r[k]) for k in COLUMNS} for r in result["rows"]],
                         COLUMNS)
    paths = [csv_path, write_json(out_dir / f"{stem}.json", result_json(result))]
    if draw:
        paths += draw_maps(csv_path)
    return paths


def read_rows_csv(csv_path) -> list[dict]:
    """Rows of an accuracy CSV, typed (numbers parsed, ``within``/``resolved`` as bools)."""
    from .export import read_typed_csv

    rows = read_typed_csv(csv_path, COLUMNS, floats=_FLOATS, ints=_INTS)
    for r in rows:
        for k in ("within", "resolved"):
            if r[k] not in ("true", "false"):
                raise ValueError(f"{csv_path}: column {k} must be true or false, got {r[k]!r}")
            r[k] = r[k] == "true"
    return rows


def map_paths(rows: list[dict], out_dir, stem: str) -> dict:
    """``{(model, variant, b, w0): png path}`` of the maps of ``rows`` (W0 in the name only
    when the rows hold several)."""
    several_w0 = len({r["w0"] for r in rows}) > 1
    out = {}
    for r in rows:
        key = (r["model"], r["variant"], r["b"], r["w0"])
        if key not in out:
            tail = f"_w0-{r['w0']:g}" if several_w0 else ""
            out[key] = Path(out_dir) / f"{stem}_{r['model']}_{r['variant']}_b{r['b']}{tail}.png"
    return out


def colour_range(rows: list[dict]) -> float:
    """Half-width of the colour scale: the largest ``|error|`` rounded up to 5%, at least 5%
    and at most :data:`CLIP` (the same for every map of one CSV, so maps compare)."""
    top = max((r["abs_error"] for r in rows), default=0.0)
    return min(CLIP, max(WITHIN, math.ceil(top / 0.05 - 1e-9) * 0.05))


def draw_maps(csv_path, out_dir=None, stem: str | None = None) -> list[Path]:
    """Heat maps of an accuracy CSV: one PNG per model, variant, b (and W0 when several).

    File size (x, packets) against p (y); colour: the relative error, RdBu diverging centred
    on 0 over ``+-`` :func:`colour_range` (red: model faster than the simulation, blue:
    slower; beyond the range the colour saturates); each cell prints its error in percent;
    unresolved cells (see the module docstring) are hatched; cells without a row are grey.

    Parameters
    ----------
    csv_path : str or Path
        An accuracy CSV (:func:`write_outputs`).
    out_dir : str or Path, optional
        Folder of the PNGs (default: the CSV's).
    stem : str, optional
        File-name stem (default: the CSV's): ``<stem>_<model>_<variant>_b<b>.png``.

    Returns
    -------
    list of Path
        The PNGs, written atomically (same CSV, same bytes).
    """
    from .plots import pyplot, save_figure

    csv_path = Path(csv_path)
    rows = read_rows_csv(csv_path)
    out_dir = csv_path.parent if out_dir is None else Path(out_dir)
    stem = csv_path.stem if stem is None else stem
    vmax = colour_range(rows)
    sizes = sorted({r["size_packets"] for r in rows})  # every map on the same axes: a cell a
    ps = sorted({r["p"] for r in rows})  # model left out shows grey
    plt = pyplot()
    paths = []
    for (model, variant, b, w0), path in map_paths(rows, out_dir, stem).items():
        sel = [r for r in rows if (r["model"], r["variant"], r["b"], r["w0"]) == (model, variant, b, w0)]
        fig = _heat_map(plt, sel, sizes, ps, vmax, f"{model} against the simulator: {variant}, b = {b}, W0 = {w0:g}")
        paths.append(save_figure(fig, path, dpi=100))
    return paths


def _heat_map(plt, rows: list[dict], sizes: list, ps: list, vmax: float, title: str):
    from matplotlib.patches import Rectangle

    z = np.full((len(ps), len(sizes)), np.nan)
    hatch = np.zeros(z.shape, dtype=bool)
    for r in rows:
        i, j = ps.index(r["p"]), sizes.index(r["size_packets"])
        z[i, j] = r["error"]
        hatch[i, j] = not r["resolved"]
    # Fixed margins in inches (no tight_layout: it costs a draw and moves with the labels).
    width, height = max(6.0, 0.6 * len(sizes) + 3.2), max(3.2, 0.45 * len(ps) + 2.3)
    left, right, top, bottom = 0.9, 1.35, 0.45, 1.1
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes([left / width, bottom / height, 1 - (left + right) / width, 1 - (top + bottom) / height])
    cax = fig.add_axes([1 - (right - 0.15) / width, bottom / height, 0.15 / width, 1 - (top + bottom) / height])
    cmap = plt.get_cmap("RdBu").with_extremes(bad="0.85")
    im = ax.imshow(np.ma.masked_invalid(z), cmap=cmap, vmin=-vmax, vmax=vmax, origin="lower", aspect="auto",
                   interpolation="nearest")
    for i in range(len(ps)):
        for j in range(len(sizes)):
            if np.isfinite(z[i, j]):
                dark = abs(z[i, j]) > 0.6 * vmax
                pct = round(100 * z[i, j])
                ax.text(j, i, f"{pct:+d}" if pct else "0", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
            else:
                ax.text(j, i, "-", ha="center", va="center", fontsize=7, color="0.4")
            if hatch[i, j]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//", edgecolor="0.45",
                                       linewidth=0))
    ax.set_xticks(range(len(sizes)), [f"{s:g}" for s in sizes])
    ax.set_yticks(range(len(ps)), [f"{p:g}" for p in ps])
    mss = rows[0]["size_bytes"] / rows[0]["size_packets"]
    ax.set_xlabel(f"file size (packets of MSS = {mss:g} B)")
    ax.set_ylabel("loss probability p")
    clipped = max(abs(r["error"]) for r in rows) > vmax
    bar = fig.colorbar(im, cax=cax, extend="both" if clipped else "neither")
    bar.set_label("(model - simulation) / simulation", fontsize=8)
    bar.ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{100 * v:+.0f}%"))
    bar.ax.tick_params(labelsize=7)
    ax.set_title(title, fontsize=10)
    runs = rows[0]["runs"]
    fig.text(0.5 / width, 0.08 / height,
             f"Numbers: error in %. {runs} simulated transfers a cell, stack {rows[0]['stack']}.\n"
             f"Hatched: unresolved, the 95% interval wider than +-{WITHIN:.0%} of the mean, or fewer than {MIN_RUNS} runs.\n"
             "Red: model faster, blue: slower; grey: no model value (not covered, or over the time limit).",
             fontsize=6.5, color="0.3", va="bottom")
    return fig


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def summary_text(result: dict) -> str:
    """The text report: the summary table, the worst cells per model, what is not covered
    and where model and simulator differ by design."""
    m = result["map"]
    w0 = "" if m["w0"] is None else f" x {len(m['w0'])} W0"
    lines = [f"accuracy map: {m['cells']} cells ({len(m['sizes_packets'])} sizes x {len(m['p'])} p x "
             f"{len(m['b'])} b x {len(m['variants'])} variants{w0}), {m['runs']} simulated transfers each, "
             f"stack {m['stack']}; models {', '.join(result['models']) or 'none'}"]
    head = f"{'model':<8} {'variant':<10} {'cells':>5} {'within':>13} {'median |err|':>13} {'p90 |err|':>10} " \
           f"{'max |err|':>10} {'mean err':>9} {'unresolved':>10}"
    lines += ["", head, "-" * len(head)]
    for s in result["summary"]:
        within = f"{s['within']} ({s['within_fraction']:.0%})"
        lines.append(f"{s['model']:<8} {s['variant']:<10} {s['cells']:>5} {within:>13} "
                     f"{_pct(s['median_abs_error']):>13} {_pct(s['p90_abs_error']):>10} "
                     f"{_pct(s['max_abs_error']):>10} {100 * s['mean_error']:>+8.1f}% {s['unresolved']:>10}")
    lines += [""] + status_lines()
    for model, worst in result["worst"].items():
        if not worst:
            continue
        lines += ["", f"worst cells, {model}:",
                  f"  {'variant':<10} {'b':>2} {'w0':>4} {'p':>6} {'size':>6} {'model (s)':>10} "
                  f"{'sim (s)':>9} {'+-95%':>8} {'error':>8}"]
        for r in worst:
            half = "-" if r["sim_se_s"] is None else f"{1.96 * r['sim_se_s']:.3f}"
            lines.append(f"  {r['variant']:<10} {r['b']:>2} {r['w0']:>4g} {r['p']:>6g} {r['size_packets']:>6g} "
                         f"{r['model_s']:>10.3f} {r['sim_mean_s']:>9.3f} {half:>8} {100 * r['error']:>+7.1f}%"
                         + ("" if r["resolved"] else " (unresolved)"))
    by_model: dict = {}
    for nc in result["not_covered"]:
        by_model.setdefault(nc["model"], []).append(nc)
    for model, items in by_model.items():
        lines += ["", f"not covered by {model}: {len(items)} set-up{'s' if len(items) > 1 else ''} "
                      f"({', '.join(sorted({i['variant'] for i in items}))}): {items[0]['reason']}"]
    for (model, reason), items in _not_computed_groups(result).items():
        lines += ["", f"not computed by {model}: {len(items)} cell{'s' if len(items) > 1 else ''}, sizes from "
                      f"{min(i['size_packets'] for i in items):g} packets: {reason}"]
    if result["notes"]:
        lines += ["", "known differences by design:"] + [f"  - {n}" for n in result["notes"]]
    return "\n".join(lines)


def report_section(result: dict) -> list[str]:
    """Markdown lines of the validation report's "Accuracy map" section."""
    m = result["map"]
    lines = ["## Accuracy map", ""]
    lines.append(f"Every model against the simulated mean over {m['cells']} cells: sizes "
                 f"{', '.join(f'{s:g}' for s in m['sizes_packets'])} packets x p "
                 f"{', '.join(f'{p:g}' for p in m['p'])} x b {', '.join(str(b) for b in m['b'])} x "
                 f"{', '.join(m['variants'])}, {m['runs']} simulated transfers a cell (stack {m['stack']}, "
                 f"seed {m['seed']}). Error = (model - simulation) / simulation; a cell is *within* when "
                 f"|error| <= {WITHIN:.0%} or the model lies inside the simulated 95% interval. Data: "
                 "`figures/accuracy.csv` and `.json`; heat maps `figures/accuracy_<model>_<variant>_b<b>.png` "
                 "(`latency-model accuracy` draws the same for any grid).")
    lines += ["", "| model | variant | cells | within | median abs. error | p90 abs. error | max abs. error | "
                  "mean error | unresolved |", "|---|---|---|---|---|---|---|---|---|"]
    for s in result["summary"]:
        lines.append(f"| {s['model']} | {s['variant']} | {s['cells']} | {s['within']} ({s['within_fraction']:.0%}) | "
                     f"{_pct(s['median_abs_error'])} | {_pct(s['p90_abs_error'])} | {_pct(s['max_abs_error'])} | "
                     f"{100 * s['mean_error']:+.1f}% | {s['unresolved']} |")
    lines += [""] + [f"- {line}" for line in status_lines()]
    lines += ["", "Worst cells per model (model and simulated mean in seconds, the simulated 95% half-width):", "",
              "| model | variant | b | p | size (packets) | model (s) | simulation (s) | +-95% (s) | error |",
              "|---|---|---|---|---|---|---|---|---|"]
    for model, worst in result["worst"].items():
        for r in worst:
            half = "-" if r["sim_se_s"] is None else f"{1.96 * r['sim_se_s']:.3f}"
            lines.append(f"| {model} | {r['variant']} | {r['b']} | {r['p']:g} | {r['size_packets']:g} | "
                         f"{r['model_s']:.3f} | {r['sim_mean_s']:.3f} | {half} | {100 * r['error']:+.1f}% |")
    if result["not_covered"]:
        lines += ["", "Set-ups a model does not cover (left out of its rows):", ""]
        seen = set()
        for nc in result["not_covered"]:
            if (nc["model"], nc["reason"]) not in seen:
                seen.add((nc["model"], nc["reason"]))
                n = sum(1 for x in result["not_covered"] if (x["model"], x["reason"]) == (nc["model"], nc["reason"]))
                lines.append(f"- **{nc['model']}** ({n} set-ups): {nc['reason']}")
    if result["not_computed"]:
        lines += ["", "Cells a model was not asked for or did not finish (never estimated):", ""]
        for (model, reason), items in _not_computed_groups(result).items():
            lines.append(f"- **{model}**: {len(items)} cells, sizes from "
                         f"{min(i['size_packets'] for i in items):g} packets: {reason}")
    if result["notes"]:
        lines += ["", "Where model and simulator differ by design (the errors above include these effects):", ""]
        lines += [f"- {n}" for n in result["notes"]]
    lines.append("")
    return lines


def dumps(result: dict, run_stats: bool = True) -> str:
    """``result_json`` as one line of strict JSON (``--json``; NaN as null)."""
    from .export import json_text

    return json_text(result_json(result, run_stats=run_stats))
