"""Plan of a sweep: every grid point validated up front and grouped into tasks.

:func:`plan_sweep` names the first bad parameter (and the grid values that produced
it) before any work; each point gets its table cells and its ``key``, the digest of
everything its row depends on (see :mod:`latency_model.studies.sweep`).

:func:`estimate_sweep` gives the cost of a sweep from its grid alone, in one cheap pass over
the parameter sets (no point is built): the rows, the peak memory of a worker and the CPU
time (:class:`SweepCost`); :meth:`SweepCost.check` refuses a sweep that cannot fit in memory
and words a warning for a long one. :func:`plan_sweep` refuses rows that cannot fit in
memory before building them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field

from ...checks import (PROCESS_BYTES, check_choice, check_instance, check_int, check_memory, check_real, checked_call,
                       format_bytes, long_work, model_cost, packet_model_seconds, packet_tree_seconds, simulation_cost,
                       transfer_seconds)
from ...growth import RULES, make_rule, rule_parameters
from ...params import VARIANTS, TcpParams, apply_variant
from ...sim.config import SimConfig
from ...sim.profiles import check_stack, profile_params, recovery_overrides
from ...sim.runner import ENGINES, runs_compiled
from ...values import whole
from ..packet_setup import packet_differences, packet_options
from .grid import (_FIELDS, _NONE_FIELDS, _RECOVERY_FIELDS, ROW_BYTES, RULE_PARAM, SIZE_AXES, Axis, Design, Grid,
                   grid_from_dict, grid_from_items)

__all__ = ["SOURCES", "WHAT", "N_CONDITIONAL", "COLUMNS", "SweepSpec", "PointSpec", "Task", "Plan",
           "SweepCost", "estimate_sweep", "plan_sweep", "columns_for", "model_axis", "available_models",
           "check_models"]

SOURCES = ("model", "simulation")
WHAT = ("model", "simulation", "both")
N_CONDITIONAL = 4
"""Conditional latencies L_0 .. L_3 written per row (``latency_k0_s`` ...)."""

PARAM_COLUMNS = ["size_packets", "size_bytes", "variant", "stack", "rule", "rule_params", *_FIELDS]
MODEL_COLUMNS = ["time_model", "law", "expected_latency_s"]
QUANTITY_COLUMNS = (["ci95_low_s", "ci95_high_s"]
                    + [f"latency_k{k}_s" for k in range(N_CONDITIONAL)]
                    + ["y_to_bytes", "filesize_min_bytes", "k_max", "truncated_mass",
                       "runs", "seed", "timeout_fraction", "mean_lost_packets"])
COLUMNS = ["point", "source", "key", *PARAM_COLUMNS, *MODEL_COLUMNS, *QUANTITY_COLUMNS]
"""Columns of every sweep table (``rule_param.X`` columns follow ``rule_params`` when
the grid varies rule parameter X, and a ``model`` column follows ``source`` when the grid
has a ``model`` axis). See :func:`columns_for`."""

MODEL_AXIS = "model"
RECOVERY_AXIS = "recovery"
"""The grid axis naming the analytic models (:data:`latency_model.model.registry.MODELS`).

It is not a point axis: grid point ``i`` (and simulation point ``i``, with its seeds) is the
same with or without it, and each point gets one model row per model (``source = model``,
``model = NAME``) besides its simulation row. Without the axis the model is ``fluid`` and
the table, its keys and its sidecar are exactly those of a sweep before the axis existed."""


def available_models() -> list[str]:
    """Models of :data:`~latency_model.model.registry.MODELS` whose module is installed
    (importable), in registry order: those a sweep or the accuracy map can run here."""
    import importlib.util

    from ...model.registry import MODELS

    out = []
    for name, module in MODELS.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            out.append(name)
    return out


def check_models(names) -> tuple:
    """``names`` as a tuple after checking each is a known and installed model.

    Parameters
    ----------
    names : sequence of str
        Model names (:data:`~latency_model.model.registry.MODELS`), each once.

    Raises
    ------
    ValueError
        ``model must be one of fluid, packet, csa, pftk (installed here: fluid), got 'x'``
        for an unknown name, ``model packet is not installed here (...)`` for a known one
        whose module is missing, or an empty or repeated list.
    """
    from ...model.registry import MODELS

    names = tuple(names)
    here = available_models()
    if not names:
        raise ValueError(f"model must name at least one model (installed here: {', '.join(here)})")
    for n in names:
        if not isinstance(n, str) or n not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)} (installed here: {', '.join(here)}), "
                             f"got {n!r}")
        if n not in here:
            raise ValueError(f"model {n} is not installed here ({MODELS[n]} is missing; installed: "
                             f"{', '.join(here)})")
        if names.count(n) > 1:
            raise ValueError(f"model lists {n!r} twice")
    return names


def model_axis(grid: Grid) -> tuple | None:
    """The model names of ``grid``'s ``model`` axis, or None when it has none."""
    for a in grid.axes:
        if a.name == MODEL_AXIS:
            return tuple(a.values)
    return None



@checked_call
@dataclass(frozen=True)
class SweepSpec:
    """What to compute over a grid.

    Parameters
    ----------
    grid : Grid, Design, dict or list of str
        The axes; without a size axis, ``size_packets = 1:30``. A ``model`` axis names the
        analytic models (:data:`MODEL_AXIS`; default: ``fluid`` alone). A dict
        ``{name: values}`` (:func:`~.grid.grid_from_dict`) or ``--param`` items
        (:func:`~.grid.grid_from_items`) are made a Grid; a :class:`~.grid.Design` lists
        arbitrary points.
    what : {"model", "simulation", "both"}
        Sources evaluated at every point.
    runs : int
        Simulated transfers per point (>= 1).
    seed : int
        Root seed (>= 0); point i uses ``SeedSequence(seed, spawn_key=(i,))``.
    time_model : {"fluid", "rounds"} or None
        Time model of the solver; ``None``: fluid, or rounds for a rule without a
        continuous law (as the ``latency`` command). The ``fluid`` model's only.
    law : {"paper", "exact"}
        Loss-count law of the expected latency (the ``fluid`` model's only).
    sim_config : SimConfig or None
        Simulated path and timers (default ``SimConfig()``). A ``stack`` axis replaces its
        profile per point (``SimConfig.profile(stack, base=sim_config, **sim_overrides)``).
    sim_overrides : dict or None
        SimConfig fields given explicitly (CLI flags): applied to ``sim_config``, and they
        win over every stack of a ``stack`` axis.
    engine : str
        Simulator engine (all give identical results).
    model_chunk : int
        Most sizes per model task (>= 1): large enough to vectorise, small enough to
        spread one long size axis over workers and resume in steps.
    """

    grid: Grid
    what: str = "model"
    runs: int = 1000
    seed: int = 0
    time_model: str | None = None
    law: str = "paper"
    sim_config: object = None
    sim_overrides: dict | None = None
    engine: str = "auto"
    model_chunk: int = 250

    def __post_init__(self):
        check_choice("what", self.what, WHAT)
        object.__setattr__(self, "runs", check_int("runs", self.runs, low=1))
        object.__setattr__(self, "seed", check_int("seed", self.seed, low=0))
        if self.time_model is not None:
            check_choice("time_model", self.time_model, ("fluid", "rounds"))
        check_choice("law", self.law, ("paper", "exact"))
        check_choice("engine", self.engine, ENGINES)
        object.__setattr__(self, "model_chunk", check_int("model_chunk", self.model_chunk, low=1))
        if isinstance(self.grid, dict):  # {"p": [0.01, 0.1], "size_packets": range(1, 21)}
            object.__setattr__(self, "grid", grid_from_dict(self.grid))
        elif isinstance(self.grid, (list, tuple)) and all(isinstance(i, str) for i in self.grid):
            object.__setattr__(self, "grid", grid_from_items(list(self.grid)))  # ["p=0.01,0.1", "size-packets=1:20"]
        if not isinstance(self.grid, (Grid, Design)):
            raise ValueError(f"grid must be a Grid, a Design, a dict of name: values or a list of 'NAME=VALUES' "
                             f"strings, got {self.grid!r}")
        if self.sim_config is not None:
            check_instance("sim_config", self.sim_config, SimConfig)
        if self.sim_overrides is not None:
            check_instance("sim_overrides", self.sim_overrides, dict, "dict of SimConfig fields")
            self._config()  # an unknown field or a value out of range is refused here
        # a setting no row of this sweep reads must not pass silently
        models = _models(self) if "model" in self.sources else ()
        for name, value, unset in (("time_model", self.time_model, None), ("law", self.law, "paper")):
            if value != unset and "fluid" not in models:
                raise ValueError(f"{name} is read by the fluid model only, and this sweep has no fluid rows "
                                 f"({_rows_desc(self, models)}); leave {name} unset")
        if "simulation" not in self.sources and "packet" not in models:
            for name in ("sim_config", "sim_overrides"):
                if getattr(self, name) is not None and getattr(self, name) != {}:
                    raise ValueError(f"{name} sets up the simulated rows and the packet model, and this sweep "
                                     f"has neither ({_rows_desc(self, models)}); leave {name} unset")

    @property
    def sources(self) -> tuple:
        return SOURCES if self.what == "both" else (self.what,)

    def settings(self) -> dict:
        """JSON-ready settings (for the sidecar)."""
        out = {"what": self.what, "time_model": self.time_model, "law": self.law,
               "model_chunk": self.model_chunk}
        models = model_axis(self.grid)
        if models is not None:  # only then: a sweep without the axis keeps its sidecar
            out["models"] = list(models)
        if "simulation" in self.sources:
            out.update(runs=self.runs, seed=self.seed, engine=self.engine,
                       sim_config=self._config().to_dict())
        elif self.sim_config is not None or self.sim_overrides:  # the packet model's set-up alone
            out["sim_config"] = self._config().to_dict()
        notes = self.comparison_notes()
        if notes:
            out["comparison_notes"] = notes
        return out

    def comparison_notes(self) -> list[str]:
        """For ``what="both"``: each assumption on which the model and the simulator of this
        sweep differ by design (validation/REPORT.md measures them), one sentence each."""
        if self.what != "both":
            return []
        cfg = self._config()
        axis = {a.name: a.values for a in self.grid.axes}
        models = model_axis(self.grid)
        notes = self._fluid_notes(cfg, axis)
        if models is None:
            return notes
        # With a model axis every note names the model it is about: the ones above are the
        # fluid model's assumptions (the paper's); the packet model's are the simulator's
        # settings it does not follow; the others declare none here.
        out = [f"model fluid: {n}" for n in notes] if "fluid" in models else []
        if "packet" in models:
            out += self._packet_notes(cfg, axis)
        others = [m for m in models if m not in ("fluid", "packet")]
        if "packet" in models and not any(n.startswith("model packet:") for n in out):
            others.insert(0, "packet")
        if others:
            out.append(f"model{'s' if len(others) > 1 else ''} {', '.join(others)}: no difference from the "
                       "simulator is declared here; their rows beside the simulated ones show where they "
                       "miss (latency-model accuracy maps it)")
        return out

    def _packet_notes(self, cfg, axis) -> list[str]:
        """The packet model follows the simulator's link and timers (:mod:`..packet_setup`):
        one note per simulated set-up (the ``stack`` and ``recovery`` axes' values) naming
        the settings it does not follow."""
        names = [n for n in ("stack", RECOVERY_AXIS) if n in axis]
        out = []
        for values in itertools.product(*[axis[n] for n in names]):
            combo = dict(zip(names, values))
            diffs = packet_differences(_combo_config(cfg, combo, self))
            if diffs:
                stack = combo.get("stack", cfg.stack)
                where = ", ".join(([f"stack {stack}"] if stack != "rfc" or "stack" in combo else [])
                                  + [f"{n} {v}" for n, v in combo.items() if n != "stack"])
                out.append(f"model packet: {where + ': ' if where else ''}the simulator's settings the model "
                           f"does not follow: {'; '.join(diffs)} (it follows the simulated sender, link, timers, quick "
                           "ACKs and back-off rule)")
        return out

    def _fluid_notes(self, cfg, axis) -> list[str]:
        notes = []
        stacks = axis.get("stack", (cfg.stack,))
        if any(s != "rfc" for s in stacks):
            notes.append("stack " + ", ".join(s for s in stacks if s != "rfc") + ": the simulator follows "
                         "that stack (docs/simulator.md), the model the paper's idealised sender")
        sack = [r for r in axis.get(RECOVERY_AXIS, ()) if r != "newreno"]
        if sack:
            notes.append("recovery " + ", ".join(sack) + ": the simulator repairs losses with SACK (RFC 6675; "
                         "RACK-TLP, RFC 8985, where named), the model with the paper's NewReno and RTO "
                         "(model/modern.py and experiment modern model SACK and RACK-TLP)")
        if cfg.rto_rule == "rfc6298":
            notes.append("the simulator's RTO backs off (RFC 6298) and the model's does not: where "
                         "timeouts repeat (p >= 0.05) the simulated mean is higher by design "
                         "(--rto-rule paper gives the simulator the model's fixed RTO)")
        if any(float(b) != 1.0 for b in axis.get("b", (1,))):
            notes.append("b = 2: the model's per-round law (x1.5 per round) is one round slower than "
                         "the delayed-ACK staircase at some sizes (a known difference, validation/REPORT.md)")
        if cfg.lt_mode == "rfc3042" and ("lt" in axis.get("variant", ()) or "dup_lt" in axis):
            notes.append("Limited Transmit: the simulator sends on duplicate ACKs 1..dup_lt (RFC 3042), "
                         "the model reads dup_LT as the paper does (--lt-mode paper matches it)")
        return notes

    def _config(self):
        base = SimConfig() if self.sim_config is None else self.sim_config
        return base.replace(**self.sim_overrides) if self.sim_overrides else base


@dataclass(frozen=True)
class PointSpec:
    """One grid point of one source: index, key, parameters, size and its table cells."""

    index: int
    source: str
    key: str
    params: TcpParams
    size_bytes: float
    cells: dict = field(compare=False)
    model: str = ""
    """The analytic model of a model row (``""`` for a simulation row)."""


@dataclass(frozen=True)
class Task:
    """Points computed together: all sizes (or a chunk) of one parameter set for the
    model, one point for the simulator. ``settings`` holds the method's settings."""

    source: str
    points: tuple
    settings: dict = field(compare=False)


@dataclass(frozen=True)
class Plan:
    """A validated sweep: every point, grouped into tasks in grid order."""

    spec: SweepSpec
    n_points: int
    tasks: tuple
    columns: tuple

    @property
    def n_rows(self) -> int:
        return sum(len(t.points) for t in self.tasks)


@dataclass(frozen=True)
class SweepCost:
    """Estimated cost of a sweep (:func:`estimate_sweep`).

    Attributes
    ----------
    n_rows : int
        Rows of the table (points x sources).
    task_bytes : float
        Peak memory of one worker computing the sweep's largest task, bytes
        (:func:`~latency_model.checks.model_cost`, :func:`~latency_model.checks.simulation_cost`).
    cpu_seconds : float
        CPU time of all tasks, seconds.
    """

    n_rows: int
    task_bytes: float
    cpu_seconds: float

    def budget(self, workers: int = 1) -> tuple[float, float]:
        """Peak memory (bytes: the rows, plus ``workers`` tasks at once) and wall seconds
        with ``workers`` workers (planning, about 0.1 ms a row, is serial)."""
        rows = PROCESS_BYTES + ROW_BYTES * float(self.n_rows)
        return rows + workers * self.task_bytes, self.cpu_seconds / workers + 1e-4 * self.n_rows

    def check(self, workers: int = 1) -> str | None:
        """Refuse (:class:`~latency_model.checks.BudgetError`) a sweep that cannot fit in
        memory with ``workers`` workers; return a warning line when it is long, else None."""
        memory, seconds = self.budget(workers)
        on = f"on {workers} worker{'s' if workers > 1 else ''}"
        check_memory(f"a sweep of {self.n_rows:,} rows {on} (each worker up to {format_bytes(self.task_bytes)})",
                     memory)
        return long_work(f"a sweep of {self.n_rows:,} rows {on}", seconds)


def _axes(grid: Grid) -> tuple:
    """The size axis (default ``size_packets = 1:30``) and the other point axes (all but the
    size and model axes)."""
    size_axis = next((a for a in grid.axes if a.name in SIZE_AXES), Axis("size_packets", tuple(range(1, 31))))
    return size_axis, [a for a in grid.axes if a.name not in SIZE_AXES and a.name != MODEL_AXIS]


def _groups(grid) -> tuple:
    """The size's name, the other point names, the number of points, and the points grouped
    by parameter set: an iterable of ``(values of the other names, [(point index, size),
    ...])``. A :class:`Grid`: every combination of its axes, each with every size (point
    ``ci * n_sizes + si``), generated as iterated (a grid is counted, never built, before its
    memory is checked); a :class:`~.grid.Design`: its points grouped by their values other
    than the size, in order of first appearance (point ``i`` is row ``i``)."""
    if isinstance(grid, Design):
        j = next(k for k, n in enumerate(grid.names) if n in SIZE_AXES)
        names = [n for n in grid.names if n not in SIZE_AXES]
        groups: dict = {}
        for i, pt in enumerate(grid.points):
            groups.setdefault(tuple(v for k, v in enumerate(pt) if k != j), []).append((i, pt[j]))
        return grid.names[j], names, len(grid.points), list(groups.items())
    size_axis, others = _axes(grid)
    sized = list(enumerate(size_axis.values))
    n = len(sized)
    n_points = n
    for a in others:
        n_points *= len(a.values)
    combos = itertools.product(*[a.values for a in others])
    return (size_axis.name, [a.name for a in others], n_points,
            ((values, [(ci * n + si, v) for si, v in sized]) for ci, values in enumerate(combos)))


def _models(spec) -> tuple:
    """The models of ``spec``'s model rows: its model axis, else ``("fluid",)``."""
    return model_axis(spec.grid) or ("fluid",)


def estimate_sweep(spec: SweepSpec) -> SweepCost:
    """The cost of ``spec`` from its grid alone, without planning its points.

    One pass over the parameter sets (cheap: a TcpParams each); a set that is invalid is
    left out (:func:`plan_sweep` reports it). Model: one solve per parameter set over all
    its sizes, a worker holding the tables of up to three sets (two cached, one being
    built). Simulation: ``runs`` transfers per point.

    Raises
    ------
    BudgetError
        (a ValueError) When the rows alone cannot fit in memory.
    """
    size_name, names, n_points, groups = _groups(spec.grid)
    n_rows = n_points * _rows_per_point(spec)
    check_memory(f"a sweep of {n_rows:,} rows", PROCESS_BYTES + ROW_BYTES * float(n_rows))
    in_packets = size_name == "size_packets"
    task_bytes = model_bytes = cpu_seconds = 0.0
    config = spec._config()
    n_sets = 0
    for values, sized in groups:
        n_sets += 1
        sizes = [float(v) for _, v in sized
                 if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")]
        if not sizes:
            continue
        top, total = max(sizes), sum(sizes)
        combo = dict(zip(names, values))
        try:
            base, _ = _combo_params(combo)
            config_c = (_combo_config(config, combo, spec)
                        if "simulation" in spec.sources or "packet" in _models(spec) else config)
        except ValueError:
            continue
        mss = base.mss_bytes
        top_pk, total_pk = (top, total) if in_packets else (top / mss, total / mss)
        if "model" in spec.sources:  # the fluid solver's cost for each model, the packet model's own
            m, t = model_cost(base.p, mss, top_pk * mss, min(len(sizes), spec.model_chunk))
            model_bytes = max(model_bytes, m - PROCESS_BYTES)
            models = _models(spec)
            cpu_seconds += sum(1 for x in models if x != "packet") * (t + 3e-4 * max(len(sizes) - spec.model_chunk, 0))
            if "packet" in models and _tree_dp(config_c, spec):  # each size about its own cost
                cpu_seconds += packet_tree_seconds(base.p, [x if in_packets else x / mss for x in sizes])
            elif "packet" in models:  # one call per chunk of sizes; each as costly as its largest size
                cpu_seconds += math.ceil(len(sizes) / spec.model_chunk) * packet_model_seconds(
                    base.p, top_pk, base.w0, base.b, n_sizes=min(len(sizes), spec.model_chunk))
        if "simulation" in spec.sources:
            compiled = runs_compiled(spec.engine, base, config_c)
            m, _ = simulation_cost(spec.runs, top_pk, base.p, compiled=compiled)
            task_bytes = max(task_bytes, m)
            # transfer_seconds is linear in the size: the sum over all sizes in one step
            per_size = transfer_seconds(0.0, base.p, compiled, config_c.sender)
            per_packet = transfer_seconds(1.0, base.p, compiled, config_c.sender) - per_size
            cpu_seconds += spec.runs * (len(sizes) * per_size + per_packet * total_pk)
    task_bytes = max(task_bytes, PROCESS_BYTES + min(3, n_sets) * model_bytes)
    return SweepCost(n_rows, task_bytes, cpu_seconds)


def _tree_dp(config, spec) -> bool:
    """Whether the sweep's packet model runs on the tree DP: beside the simulator it runs
    the simulated sender (:func:`~latency_model.studies.packet_setup.packet_options`), and
    timestamps run there only (``PathConfig.object_engine_only``); the SACK sender runs on the
    simulator's transitions (``config``), whose cost grows with the size much as the tree's."""
    if "simulation" not in spec.sources and not (spec.sim_config is not None or spec.sim_overrides
                                                 or any(a.name == "stack" for a in spec.grid.axes)):
        return False
    try:
        opts = packet_options(config)
    except ValueError:  # a set-up the model does not follow: the plan reports it
        return False
    path = opts.get("path")
    return "config" in opts or (path is not None and path.object_engine_only)


def _rows_desc(spec, models) -> str:
    """What rows ``spec`` computes, for a message: ``what model, models pftk``."""
    return f"what {spec.what}" + (f", model{'s' if len(models) > 1 else ''} {', '.join(models)}" if models else "")


def _follows_setup(spec, combo) -> bool:
    """Whether the model rows' packet model follows a simulator set-up (a stack profile)
    at this grid point: beside the simulator always; alone (``what="model"``), where the
    grid has a ``stack`` axis or ``sim_config``/``sim_overrides`` are given (as
    ``latency --model packet --stack NAME``)."""
    return "simulation" in spec.sources or "stack" in combo or spec.sim_config is not None or bool(spec.sim_overrides)


def _rows_per_point(spec) -> int:
    """Rows of one grid point: one per model (``what`` model or both) plus the simulation's."""
    return (len(_models(spec)) if "model" in spec.sources else 0) + ("simulation" in spec.sources)


def _time_model(asked, params: TcpParams) -> str:
    has_law = params.rule.continuous_law(params.b) is not None
    if asked is None:
        return "fluid" if has_law else "rounds"
    if asked == "fluid" and not has_law:
        raise ValueError(f"time_model fluid needs a continuous fluid law and rule {params.rule.name!r} "
                         "has none; use time model rounds")
    return asked


def _digest(obj) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _combo_config(config: SimConfig, combo: dict, spec) -> SimConfig:
    """The simulator's settings at one grid point: the ``stack`` axis's profile (or the base
    settings' stack) with the ``recovery`` axis's fields
    (:data:`~latency_model.sim.profiles.RECOVERIES`), then the user's flags
    (``spec.sim_overrides``), which win over both."""
    if "stack" not in combo and RECOVERY_AXIS not in combo:
        return config
    fields = recovery_overrides(combo[RECOVERY_AXIS]) if RECOVERY_AXIS in combo else {}
    return SimConfig.profile(combo.get("stack", config.stack), base=config,
                             **{**fields, **(spec.sim_overrides or {})})


def _combo_params(combo: dict) -> tuple[TcpParams, str]:
    """Base TcpParams of one combination of the non-size axes, and its variant name."""
    variant = combo.get("variant", "newreno")
    check_choice("variant", variant, [*VARIANTS, "size-based"])
    rule_name = combo.get("rule", "standard")
    if rule_name not in RULES:
        raise ValueError(f"rule must be one of {', '.join(sorted(RULES))}, got {rule_name!r}")
    rule_kw = {k[len(RULE_PARAM):]: v for k, v in combo.items() if k.startswith(RULE_PARAM)}
    known = rule_parameters(rule_name)
    for k in rule_kw:
        if k not in known:
            raise ValueError(f"rule-param.{k} is not a parameter of rule {rule_name!r} "
                             f"(its parameters: {', '.join(known) or 'none'})")
    fields = {k: v for k, v in combo.items() if k in _FIELDS and k not in _RECOVERY_FIELDS}
    for k, v in fields.items():
        if v is None and k not in _NONE_FIELDS:
            raise ValueError(f"{k} must be a value, got none")
    base = TcpParams(rule=make_rule(rule_name, **rule_kw), **fields)
    return base, variant


def _resolve(base: TcpParams, variant: str, combo: dict, size_bytes: float | None) -> TcpParams:
    params = apply_variant(base, variant, size_bytes if variant == "size-based" else None)
    overrides = {k: combo[k] for k in _RECOVERY_FIELDS if k in combo}  # as --dup-lt after --variant
    return params.replace(**overrides) if overrides else params


def columns_for(grid: Grid) -> list[str]:
    """Table columns of a sweep over ``grid``: :data:`COLUMNS` plus ``rule_param.X``,
    ``model`` after ``source`` when the grid has a model axis, and ``recovery`` after
    ``stack`` when it has a recovery axis."""
    extra = [a.name for a in grid.axes if a.name.startswith(RULE_PARAM)]
    i = COLUMNS.index("rule_params") + 1
    cols = COLUMNS[:i] + extra + COLUMNS[i:]
    if model_axis(grid) is not None:
        j = cols.index("source") + 1
        cols = cols[:j] + [MODEL_AXIS] + cols[j:]
    if any(a.name == RECOVERY_AXIS for a in grid.axes):
        j = cols.index("stack") + 1
        cols = cols[:j] + [RECOVERY_AXIS] + cols[j:]
    return cols


def row_order(point: PointSpec, models: tuple) -> tuple:
    """Sort key of a row in the table: grid point, then its models in axis order, then its
    simulation."""
    return (point.index, SOURCES.index(point.source), models.index(point.model) if point.model else 0)


def plan_sweep(spec: SweepSpec) -> Plan:
    """Validate every grid point and group the points into tasks.

    With a ``model`` axis, every model is checked against every point
    (:func:`latency_model.model.registry.check_supported`) and each point gets one model
    row per model, in the axis order, before its simulation row.

    Raises
    ------
    ValueError
        Naming the first bad parameter (and the grid values that produced it), before
        any computation; an unknown or uninstalled model, a model that does not cover a
        point's set-up (its message names what it supports), or a model axis without
        model rows (``what="simulation"``).
    """
    grid = spec.grid
    size_name, names, n_points, groups = _groups(grid)
    others = [a for a in grid.axes if a.name in names]
    axis_models = model_axis(grid)
    models = _models(spec)
    if axis_models is not None:
        check_models(axis_models)
        if "model" not in spec.sources:
            raise ValueError("model is an axis of the model rows: give what model or both, not "
                             f"{spec.what}")
    for a in others:
        if a.name == "stack":
            for v in a.values:
                check_stack(v)
            if "simulation" not in spec.sources and "packet" not in models:
                # only the simulator and the packet model read a stack: the rows would repeat
                raise ValueError(f"stack is an axis of the simulated rows and of the packet model, and this "
                                 f"sweep ({_rows_desc(spec, models)}) has neither: give what simulation or "
                                 "both, or model packet")
        if a.name == RECOVERY_AXIS:
            if "simulation" not in spec.sources:
                raise ValueError("recovery is an axis of the simulated rows: give what simulation or both, "
                                 f"not {spec.what}")
            for v in a.values:
                recovery_overrides(v)
        if a.name == "variant":
            for v in a.values:
                check_choice("variant", v, [*VARIANTS, "size-based"])
        if a.name == "rule":
            for v in a.values:
                if v not in RULES:
                    raise ValueError(f"rule must be one of {', '.join(sorted(RULES))}, got {v!r}")
    size_axis = grid.axis(size_name) if isinstance(grid, Design) else _axes(grid)[0]
    for v in size_axis.values:  # every size (a design's: each distinct one)
        check_real(size_name.replace("_", "-"), v, low=0.0, low_open=True)
    n_rows = n_points * _rows_per_point(spec)
    check_memory(f"a sweep of {n_rows:,} rows", PROCESS_BYTES + ROW_BYTES * float(n_rows))  # before building
    settings_model = {"law": spec.law}
    settings_sim = {}
    config = spec._config()
    if "simulation" in spec.sources:
        settings_sim = {"runs": spec.runs, "seed": spec.seed, "engine": spec.engine,
                        "sim_config": config}
    tasks = []
    combo_of = {}  # point index -> its values (for messages)
    for values, sized in groups:
        combo = dict(zip(names, values))
        where = ", ".join(f"{k}={v}" for k, v in combo.items())
        follows = _follows_setup(spec, combo)
        config_c = None
        try:
            base, variant = _combo_params(combo)
            if follows:
                config_c = _combo_config(config, combo, spec)
            if "simulation" in spec.sources:
                base = profile_params(config_c.stack, base, given=combo)  # Linux: IW 10 unless w0 given
            per_size = []
            for index, size in sized:
                size_b = size * base.mss_bytes if size_name == "size_packets" else float(size)
                params = _resolve(base, variant, combo, size_b)
                per_size.append((index, params, size_b))
                combo_of[index] = values
            tm = (_time_model(spec.time_model, per_size[0][1])
                  if "model" in spec.sources and "fluid" in models else None)
            if "model" in spec.sources:  # with or without a model axis (the default: fluid)
                from ...model.registry import check_given, check_supported

                for m in models:
                    for p in dict.fromkeys(params for _, params, _ in per_size):  # size-based: two
                        try:
                            check_supported(m, p)
                            check_given(m, p, combo)  # an axis it would not read must not pass silently
                        except ValueError as exc:
                            raise ValueError(f"model {m}: {exc}") from None
            packet_opts = {}
            if "packet" in models and "model" in spec.sources:
                packet_opts = _packet_model_options(spec, config_c if follows else None, base)
            if "simulation" in spec.sources:
                from ...sim.transfer import check_recovery

                for _, p, size_b in per_size:
                    if size_b != int(size_b):
                        raise ValueError(f"simulated sizes must be whole bytes, got {size_b:g} bytes")
                    check_recovery(p, config_c)  # before any row runs, not when this cell's turn comes
                if config_c.rto_rule != "paper" and any(p.rto_s is not None for _, p, _ in per_size):
                    # RFC 6298's timer reads its own bounds, never rto: it would pass silently
                    raise ValueError(f"rto is the paper timer's fixed RTO, which the simulated rows read only "
                                     f"with rto_rule paper (--rto-rule paper), not {config_c.rto_rule}")
        except ValueError as exc:
            raise ValueError(f"{exc} (at {where})" if where else str(exc)) from None
        rule_desc = base.rule.describe()
        rule_desc.pop("name")
        fixed = {"variant": variant, "stack": config_c.stack if follows else "",
                 **({RECOVERY_AXIS: combo[RECOVERY_AXIS]} if RECOVERY_AXIS in combo else {}),
                 "rule": base.rule.name, "rule_params": json.dumps(rule_desc, sort_keys=True),
                 **{k: combo[k] for k in combo if k.startswith(RULE_PARAM)}}
        runs = [("model", m) for m in models] if "model" in spec.sources else []
        if "simulation" in spec.sources:
            runs.append(("simulation", ""))
        for source, model in runs:
            fluid = model == "fluid"
            options = packet_opts if model == "packet" else {}
            points = []
            for index, params, size_b in per_size:
                pdict = params.to_dict()
                if source == "model":
                    # the fluid solver's settings; another model is run with its defaults, or
                    # with the options that make it follow the simulator (in the key only then)
                    method = ({"time_model": tm, "law": spec.law} if fluid
                              else {k: dataclasses.asdict(v) for k, v in options.items()})
                else:
                    method = {"runs": spec.runs, "seed": spec.seed, "point": index,
                              "sim_config": config_c.to_dict()}
                what_key = {"source": source, "params": pdict, "size_bytes": size_b, "method": method}
                if fixed["stack"]:  # one row per point and source, also where stacks share a model row
                    what_key["stack"] = fixed["stack"]
                if RECOVERY_AXIS in combo:  # likewise per recovery (without the axis: the keys as before)
                    what_key[RECOVERY_AXIS] = combo[RECOVERY_AXIS]
                if axis_models is not None and source == "model":  # without the axis: the keys as before
                    what_key["model"] = model
                key = _digest(what_key)
                head = {"point": index, "source": source}
                if axis_models is not None:
                    head[MODEL_AXIS] = model
                cells = {**head, "key": key, **fixed,
                         "size_bytes": whole(size_b), "size_packets": whole(size_b / params.mss_bytes),
                         **{f: getattr(params, f) for f in _FIELDS}}
                if source == "model":
                    cells.update(time_model=tm if fluid else "", law=spec.law if fluid else "")
                else:
                    cells.update(runs=spec.runs, seed=spec.seed)
                points.append(PointSpec(index, source, key, params, size_b, cells, model))
            if source == "model":
                st = {**settings_model, "time_model": tm, "model": model, "options": options}
                for lo in range(0, len(points), spec.model_chunk):
                    tasks.append(Task("model", tuple(points[lo:lo + spec.model_chunk]), st))
            else:
                st_sim = {**settings_sim, "sim_config": config_c}
                tasks.extend(Task("simulation", (pt,), st_sim) for pt in points)
    _check_keys(tasks, names, combo_of)
    # grid order: by first point, the models (in axis order) before the simulation
    tasks.sort(key=lambda t: row_order(t.points[0], models))
    return Plan(spec=spec, n_points=n_points, tasks=tuple(tasks), columns=tuple(columns_for(grid)))



def _packet_model_options(spec, config, base) -> dict:
    """The packet model's ``predict`` options at one grid point. Beside the simulator it
    follows the simulated link, timers and receiver (:func:`..packet_setup.packet_options`);
    alone it follows a stack profile where the point has one (``config``, as ``latency
    --model packet --stack NAME``), else runs with its defaults; alone, where ``rto`` is
    given, it runs the paper's fixed timer (as ``latency --model packet --rto``)."""
    options = packet_options(config) if config is not None else {}
    if "simulation" not in spec.sources and config is not None:
        # ACK serialisation (the ns3 profile's) moves times by one ACK's serialisation per
        # round trip (microseconds), no mechanism: alone it is named, not refused
        diffs = packet_differences(config.replace(ack_serialisation=False))
        if diffs:  # alone, nothing tells the user: refuse what it would not follow
            raise ValueError(f"the packet model does not follow {'; '.join(diffs)}")
    if base.rto_s is not None and ("simulation" not in spec.sources or not options):
        from ...model.packet import PathConfig

        try:
            options = {**options, "path": dataclasses.replace(options.get("path", PathConfig()), fixed_rto=True)}
        except ValueError as exc:
            raise ValueError(f"rto (the paper's fixed timer) with the packet model: {exc}") from None
    return options


def _check_keys(tasks, names, combo_of) -> None:
    """ValueError (an internal error) when two rows share a key: the table keeps one row
    per key, so the other would be lost while the sweep reports success."""
    seen = {}
    for t in tasks:
        for pt in t.points:
            other = seen.setdefault(pt.key, pt)
            if other is pt:
                continue
            a, b = combo_of[other.index], combo_of[pt.index]
            differ = [f"{n}={x} vs {y}" for n, x, y in zip(names, a, b) if x != y]
            raise ValueError(f"internal error: grid points {other.index} and {pt.index} ({pt.source}"
                             f"{' ' + pt.model if pt.model else ''} rows) get the same key, so one row would be "
                             f"lost; they differ in {', '.join(differ) or 'no axis'}, which their rows do not "
                             "read (please report this)")
