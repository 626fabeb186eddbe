"""Parameter sweeps: a grid of TcpParams and file sizes -> one tidy table, resumable.

A sweep is a :class:`Grid` (named axes of values, sizes innermost) evaluated by the
fluid model, the packet simulator or both. :func:`plan_sweep` validates every grid
point up front (one :class:`ValueError` naming the parameter, before any work) and
groups the points into :class:`Task` objects; :func:`run_sweep` runs the tasks
serially, in local processes or on a ``dask.distributed`` cluster and keeps the
output file complete and valid after every finished task.

Reproducibility
---------------
Points are numbered in grid order: the product of the axes in the order given, the
size axis innermost. Simulation point ``i`` draws only from child ``i`` of
``SeedSequence(seed)`` (``SeedSequence(seed, spawn_key=(i,))``, the same sequence as
``SeedSequence(seed).spawn(n)[i]``), run ``j`` of it from that child's ``spawn(runs)[j]``.
Model tasks hold all sizes of one parameter set (in chunks of a fixed number of
sizes), and the solver gives a size the same bits whatever other sizes share the call.
So rows depend on neither the executor, the number of workers nor the completion order,
and rows are written in grid order.

Resume
------
Every row carries ``key``: a SHA-256 digest of its source, full parameter set, size,
method settings (time model and loss law, or runs, root seed, point index and simulator
settings). Rerunning the same sweep reads the output file back, skips tasks whose rows
are all present and recomputes the rest.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .checks import check_choice, check_int, check_real
from .export import atomic_write_text, write_json
from .values import expand_range, finite_number, scalar
from .growth import RULES, make_rule, rule_parameters
from .params import VARIANTS, TcpParams, apply_variant

__all__ = [
    "SOURCES",
    "WHAT",
    "Axis",
    "Grid",
    "SweepSpec",
    "Task",
    "Plan",
    "SweepReport",
    "canonical_name",
    "parse_values",
    "parse_param",
    "grid_from_items",
    "grid_from_toml",
    "plan_sweep",
    "run_task",
    "run_sweep",
    "read_rows",
    "COLUMNS",
]

SOURCES = ("model", "simulation")
WHAT = ("model", "simulation", "both")
N_CONDITIONAL = 4
"""Conditional latencies L_0 .. L_3 written per row (``latency_k0_s`` ...)."""

# TcpParams fields a grid may vary, with the spellings of the other commands' flags.
_FIELDS = ("mss_bytes", "rtt_s", "p", "w0", "w_ss", "rwnd", "b", "dup_t", "dup_lt",
           "tail_retransmit", "early_retransmit", "rto_s")
_NONE_FIELDS = ("dup_lt", "rto_s")
_RECOVERY_FIELDS = ("dup_lt", "tail_retransmit", "early_retransmit")  # set by the variant, then these
_ALIASES = {"mss": "mss_bytes", "rtt": "rtt_s", "wss": "w_ss", "rto": "rto_s",
            "size_packets": "size_packets", "size_bytes": "size_bytes",
            "variant": "variant", "rule": "rule", **{f: f for f in _FIELDS}}
SIZE_AXES = ("size_packets", "size_bytes")
RULE_PARAM = "rule_param."

PARAM_COLUMNS = ["size_packets", "size_bytes", "variant", "rule", "rule_params", *_FIELDS]
MODEL_COLUMNS = ["time_model", "law", "expected_latency_s"]
QUANTITY_COLUMNS = (["ci95_low_s", "ci95_high_s"]
                    + [f"latency_k{k}_s" for k in range(N_CONDITIONAL)]
                    + ["y_to_bytes", "filesize_min_bytes", "k_max", "truncated_mass",
                       "runs", "seed", "timeout_fraction", "mean_lost_packets"])
COLUMNS = ["point", "source", "key", *PARAM_COLUMNS, *MODEL_COLUMNS, *QUANTITY_COLUMNS]
"""Columns of every sweep table (``rule_param.X`` columns follow ``rule_params`` when
the grid varies rule parameter X). See :func:`columns_for`."""


# ---------------------------------------------------------------------------
# Grid syntax


def canonical_name(name: str) -> str:
    """The grid name of a parameter: a TcpParams field (CLI spellings accepted, ``-`` or
    ``_``), ``size_packets``, ``size_bytes``, ``variant``, ``rule`` or ``rule_param.X``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    text = str(name).strip()
    for prefix in ("rule-param.", "rule_param."):
        if text.startswith(prefix) and len(text) > len(prefix):
            return RULE_PARAM + text[len(prefix):]
    key = text.replace("-", "_")
    if key in _ALIASES:
        return _ALIASES[key]
    known = ", ".join([*_FIELDS, "size-packets", "size-bytes", "variant", "rule", "rule-param.X"])
    raise ValueError(f"unknown sweep parameter {text!r} (known: {known})")


def _scalar(text: str):
    """int, float, bool, None or the text itself."""
    return None if text.strip().lower() == "none" else scalar(text)


def _range(name: str, part: str) -> list:
    """``a:b[:step]`` (inclusive) or ``logspace:a:b:n`` (n values geometric from a to b)."""
    bits = part.split(":")
    if bits[0].strip().lower() == "logspace":
        if len(bits) != 4:
            raise ValueError(f"{name} logspace must be logspace:a:b:n, got {part!r}")
        a, b = finite_number(name, bits[1]), finite_number(name, bits[2])
        n = _scalar(bits[3])
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} logspace count n must be an integer >= 1, got {bits[3]!r}")
        if not (a > 0 and b > 0):
            raise ValueError(f"{name} logspace bounds must be > 0, got {part!r}")
        if n == 1:
            return [float(a)]
        return [float(v) for v in np.geomspace(a, b, n)]
    if len(bits) not in (2, 3):
        raise ValueError(f"{name} range must be a:b, a:b:step or logspace:a:b:n, got {part!r}")
    return expand_range(name, part)


def parse_values(name: str, text) -> list:
    """Values of one axis from ``a,b,c``, ranges ``a:b[:step]``, ``logspace:a:b:n``
    (any mix, comma separated), or a list (from TOML).

    Parameters
    ----------
    name : str
        Canonical parameter name (for messages and typing).
    text : str, number or list
        The values.

    Returns
    -------
    list
        Typed values (numbers, bools, None or text), in the order given.

    Raises
    ------
    ValueError
        For an empty list or range, a repeated value or a malformed range.
    """
    if isinstance(text, (list, tuple)):
        values = []
        for item in text:
            values.extend(parse_values(name, item) if isinstance(item, str) else [item])
    elif isinstance(text, str):
        values = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                raise ValueError(f"{name} has an empty value in {text!r}")
            numeric = name not in ("variant", "rule") and not name.startswith(RULE_PARAM)
            if ":" in part and (numeric or part.lower().startswith("logspace:")):
                values.extend(_range(name, part))
            else:
                values.append(_scalar(part))
    else:
        values = [text]
    if not values:
        raise ValueError(f"{name} has no values")
    seen = []
    for v in values:
        if any(type(v) is type(s) and v == s for s in seen):
            raise ValueError(f"{name} lists {v!r} twice")
        seen.append(v)
    return values


@dataclass(frozen=True)
class Axis:
    """One grid axis: a canonical parameter name and its values, in order."""

    name: str
    values: tuple


@dataclass(frozen=True)
class Grid:
    """Axes of a sweep; the size axis (``size_packets`` or ``size_bytes``) is innermost.

    Use :func:`grid_from_items` or :func:`grid_from_toml`; :func:`plan_sweep` validates.
    """

    axes: tuple

    def axis(self, name: str) -> Axis | None:
        for a in self.axes:
            if a.name == name:
                return a
        return None

    def to_dict(self) -> dict:
        """JSON-ready ``{name: [values]}`` in axis order."""
        return {a.name: list(a.values) for a in self.axes}


def parse_param(item: str) -> Axis:
    """One ``NAME=VALUES`` item of ``--param`` as an :class:`Axis`."""
    name, sep, values = str(item).partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--param must be NAME=VALUES, got {item!r}")
    cname = canonical_name(name)
    return Axis(cname, tuple(parse_values(name.strip(), values)))


def grid_from_items(items, toml_params: dict | None = None) -> Grid:
    """A :class:`Grid` from ``--param`` items and, optionally, a TOML ``[params]`` table.

    Raises
    ------
    ValueError
        For a name given twice (in any spelling), both size axes, or a bad value list.
    """
    axes: list[Axis] = []
    for name, values in (toml_params or {}).items():
        axes.append(Axis(canonical_name(name), tuple(parse_values(str(name), values))))
    axes.extend(parse_param(item) for item in items)
    names = [a.name for a in axes]
    for n in names:
        if names.count(n) > 1:
            raise ValueError(f"sweep parameter {n} is given twice")
    sizes = [a for a in axes if a.name in SIZE_AXES]
    if len(sizes) > 1:
        raise ValueError("give size-packets or size-bytes, not both")
    rest = [a for a in axes if a.name not in SIZE_AXES]
    return Grid(tuple(rest + sizes))


TOML_KEYS = ("params", "what", "runs", "seed", "time-model", "law")


def grid_from_toml(path) -> tuple[Grid, dict]:
    """Read a grid file: a ``[params]`` table (``name = "values"`` or a list) and optional
    ``what``, ``runs``, ``seed``, ``time-model``, ``law``.

    Returns
    -------
    (Grid, dict)
        The grid and the other settings found (keys as in the file).
    """
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ValueError(f"grid file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"grid file {path}: {exc}") from None
    for key in data:
        if key not in TOML_KEYS:
            raise ValueError(f"grid file {path}: unknown key {key!r} (known: {', '.join(TOML_KEYS)})")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"grid file {path}: params must be a table")
    settings = {k: v for k, v in data.items() if k != "params"}
    return grid_from_items([], params), settings


# ---------------------------------------------------------------------------
# Plan: validated points grouped into tasks


@dataclass(frozen=True)
class SweepSpec:
    """What to compute over a grid.

    Parameters
    ----------
    grid : Grid
        The axes; without a size axis, ``size_packets = 1:30``.
    what : {"model", "simulation", "both"}
        Sources evaluated at every point.
    runs : int
        Simulated transfers per point (>= 1).
    seed : int
        Root seed (>= 0); point i uses ``SeedSequence(seed, spawn_key=(i,))``.
    time_model : {"fluid", "rounds"} or None
        Time model of the solver; ``None``: fluid, or rounds for a rule without a
        continuous law (as the ``latency`` command).
    law : {"paper", "exact"}
        Loss-count law of the expected latency.
    sim_config : SimConfig or None
        Simulated path and timers (default ``SimConfig()``).
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
    engine: str = "auto"
    model_chunk: int = 250

    def __post_init__(self):
        check_choice("what", self.what, WHAT)
        object.__setattr__(self, "runs", check_int("runs", self.runs, low=1))
        object.__setattr__(self, "seed", check_int("seed", self.seed, low=0))
        if self.time_model is not None:
            check_choice("time_model", self.time_model, ("fluid", "rounds"))
        check_choice("law", self.law, ("paper", "exact"))
        object.__setattr__(self, "model_chunk", check_int("model_chunk", self.model_chunk, low=1))
        if not isinstance(self.grid, Grid):
            raise ValueError(f"grid must be a Grid, got {self.grid!r}")

    @property
    def sources(self) -> tuple:
        return SOURCES if self.what == "both" else (self.what,)

    def settings(self) -> dict:
        """JSON-ready settings (for the sidecar)."""
        out = {"what": self.what, "time_model": self.time_model, "law": self.law,
               "model_chunk": self.model_chunk}
        if "simulation" in self.sources:
            out.update(runs=self.runs, seed=self.seed, engine=self.engine,
                       sim_config=self._config().to_dict())
        return out

    def _config(self):
        from .sim import SimConfig

        return SimConfig() if self.sim_config is None else self.sim_config


@dataclass(frozen=True)
class PointSpec:
    """One grid point of one source: index, key, parameters, size and its table cells."""

    index: int
    source: str
    key: str
    params: TcpParams
    size_bytes: float
    cells: dict = field(compare=False)


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


def _fmt(v) -> str:
    """Table cell text: exact (repr) for floats, empty for None."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def _whole(x):
    """Sizes read better as 20 than 20.0: whole numbers as int."""
    return int(x) if float(x).is_integer() else float(x)


def columns_for(grid: Grid) -> list[str]:
    """Table columns of a sweep over ``grid``: :data:`COLUMNS` plus ``rule_param.X``."""
    extra = [a.name for a in grid.axes if a.name.startswith(RULE_PARAM)]
    i = COLUMNS.index("rule_params") + 1
    return COLUMNS[:i] + extra + COLUMNS[i:]


def plan_sweep(spec: SweepSpec) -> Plan:
    """Validate every grid point and group the points into tasks.

    Raises
    ------
    ValueError
        Naming the first bad parameter (and the grid values that produced it), before
        any computation.
    """
    grid = spec.grid
    size_axis = next((a for a in grid.axes if a.name in SIZE_AXES), Axis("size_packets", tuple(range(1, 31))))
    others = [a for a in grid.axes if a.name not in SIZE_AXES]
    for a in others:
        if a.name == "variant":
            for v in a.values:
                check_choice("variant", v, [*VARIANTS, "size-based"])
        if a.name == "rule":
            for v in a.values:
                if v not in RULES:
                    raise ValueError(f"rule must be one of {', '.join(sorted(RULES))}, got {v!r}")
    for v in size_axis.values:
        name = size_axis.name.replace("_", "-")
        check_real(name, v, low=0.0, low_open=True)
    n_sizes = len(size_axis.values)
    combos = list(itertools.product(*[a.values for a in others]))
    n_points = len(combos) * n_sizes
    settings_model = {"law": spec.law}
    settings_sim = {}
    if "simulation" in spec.sources:
        config = spec._config()
        settings_sim = {"runs": spec.runs, "seed": spec.seed, "engine": spec.engine,
                        "sim_config": config}
        config_dict = config.to_dict()
    tasks = []
    for ci, values in enumerate(combos):
        combo = dict(zip([a.name for a in others], values))
        where = ", ".join(f"{k}={v}" for k, v in combo.items())
        try:
            base, variant = _combo_params(combo)
            per_size = []
            for si, size in enumerate(size_axis.values):
                size_b = size * base.mss_bytes if size_axis.name == "size_packets" else float(size)
                params = _resolve(base, variant, combo, size_b)
                per_size.append((ci * n_sizes + si, params, size_b))
            tm = _time_model(spec.time_model, per_size[0][1]) if "model" in spec.sources else None
            if "simulation" in spec.sources:
                for _, _, size_b in per_size:
                    if size_b != int(size_b):
                        raise ValueError(f"simulated sizes must be whole bytes, got {size_b:g} bytes")
        except ValueError as exc:
            raise ValueError(f"{exc} (at {where})" if where else str(exc)) from None
        rule_desc = base.rule.describe()
        rule_desc.pop("name")
        fixed = {"variant": variant, "rule": base.rule.name, "rule_params": json.dumps(rule_desc, sort_keys=True),
                 **{k: combo[k] for k in combo if k.startswith(RULE_PARAM)}}
        for source in spec.sources:
            points = []
            for index, params, size_b in per_size:
                pdict = params.to_dict()
                if source == "model":
                    method = {"time_model": tm, "law": spec.law}
                else:
                    method = {"runs": spec.runs, "seed": spec.seed, "point": index, "sim_config": config_dict}
                key = _digest({"source": source, "params": pdict, "size_bytes": size_b, "method": method})
                cells = {"point": index, "source": source, "key": key, **fixed,
                         "size_bytes": _whole(size_b), "size_packets": _whole(size_b / params.mss_bytes),
                         **{f: getattr(params, f) for f in _FIELDS}}
                if source == "model":
                    cells.update(time_model=tm, law=spec.law)
                else:
                    cells.update(runs=spec.runs, seed=spec.seed)
                points.append(PointSpec(index, source, key, params, size_b, cells))
            if source == "model":
                st = {**settings_model, "time_model": tm}
                for lo in range(0, len(points), spec.model_chunk):
                    tasks.append(Task("model", tuple(points[lo:lo + spec.model_chunk]), st))
            else:
                tasks.extend(Task("simulation", (pt,), settings_sim) for pt in points)
    # grid order: by first point, model before simulation
    tasks.sort(key=lambda t: (t.points[0].index, SOURCES.index(t.source)))
    return Plan(spec=spec, n_points=n_points, tasks=tuple(tasks), columns=tuple(columns_for(grid)))


# ---------------------------------------------------------------------------
# Tasks


def _model_rows(task: Task) -> list[dict]:
    from .recursion import SolverOptions, conditional_latency, expected_latency
    from .thresholds import filesize_min, y_to

    tm, law = task.settings["time_model"], task.settings["law"]
    opts = SolverOptions(time_model=tm)
    groups: dict = {}
    for pt in task.points:  # size-based: the variant differs by size
        groups.setdefault(pt.params, []).append(pt)
    rows = {}
    for params, pts in groups.items():
        sizes = [pt.size_bytes for pt in pts]
        res = expected_latency(params, sizes, law=law, options=opts)
        cond = res.conditional_latency_s
        if res.k_max < N_CONDITIONAL:  # few losses expected: the sum stopped early
            cond = conditional_latency(params, sizes, list(range(N_CONDITIONAL)), options=opts)
        yto = float(y_to(params, time_model=tm))
        fmin = float(filesize_min(params, time_model=tm))
        for i, pt in enumerate(pts):
            q = {"expected_latency_s": float(res.expected_latency_s[i]),
                 **{f"latency_k{k}_s": float(cond[i, k]) for k in range(N_CONDITIONAL)},
                 "y_to_bytes": yto, "filesize_min_bytes": fmin,
                 # this size's own K (the call's K is the largest over its sizes)
                 "k_max": int(np.flatnonzero(res.loss_pmf[i])[-1]) + 1,
                 "truncated_mass": float(res.truncated_mass[i])}
            rows[pt.index] = {**pt.cells, **q}
    return [rows[pt.index] for pt in task.points]


def _simulation_rows(task: Task) -> list[dict]:
    from .sim import OUT_FIELDS, mean_ci, run_many

    s = task.settings
    out = []
    for pt in task.points:
        child = np.random.SeedSequence(s["seed"], spawn_key=(pt.index,))
        samples = run_many(pt.params, int(pt.size_bytes), child.spawn(s["runs"]), s["sim_config"],
                           engine=s["engine"])
        col = {name: samples[:, i] for i, name in enumerate(OUT_FIELDS)}
        lat, lost = col["completion_s"], col["lost_packets"]
        mean, ci = mean_ci(lat)
        q = {"expected_latency_s": mean,
             "ci95_low_s": None if ci is None else ci[0], "ci95_high_s": None if ci is None else ci[1],
             "timeout_fraction": float(np.mean(col["timeouts"] > 0)),
             "mean_lost_packets": float(lost.mean())}
        for k in range(N_CONDITIONAL):  # the simulator's mean given exactly k lost packets
            sel = lat[lost == k]
            q[f"latency_k{k}_s"] = float(sel.mean()) if sel.size else None
        out.append({**pt.cells, **q})
    return out


def run_task(task: Task) -> list[dict]:
    """Compute one task: table rows (cell text by column name), in point order.

    Pure: the result depends only on ``task`` (no worker state, no global RNG).
    """
    rows = _model_rows(task) if task.source == "model" else _simulation_rows(task)
    return [{k: _fmt(v) for k, v in r.items()} for r in rows]


# ---------------------------------------------------------------------------
# Output file: CSV or Parquet, rewritten atomically


def _is_parquet(path) -> bool:
    return str(path).lower().endswith(".parquet")


def require_pyarrow(path) -> None:
    """Raise ValueError (one line) when ``path`` is .parquet and pyarrow is missing."""
    if _is_parquet(path):
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise ValueError(f"writing {Path(path).name} needs pyarrow (pip install pyarrow), "
                             "or give a .csv file name") from None


def _parquet_value(text: str):
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def write_rows(path, rows: list[dict], columns) -> Path:
    """Write table rows (cell text) to ``path`` atomically: CSV, or Parquet for ``.parquet``."""
    path = Path(path)
    if not _is_parquet(path):
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return atomic_write_text(path, buf.getvalue())
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    data = {}
    for c in columns:
        vals = [_parquet_value(r.get(c, "")) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if kinds == {int, float}:
            vals = [None if v is None else float(v) for v in vals]
        elif len(kinds) > 1:
            vals = [r.get(c, "") for r in rows]
        data[c] = vals
    table = pa.table(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def read_rows(path) -> tuple[list[str], list[dict]]:
    """Columns and rows (cell text) of a sweep table written by :func:`write_rows`."""
    path = Path(path)
    if not _is_parquet(path):
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            return list(reader.fieldnames or []), rows
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    cols = table.column_names
    data = table.to_pydict()
    rows = [{c: _fmt(data[c][i]) for c in cols} for i in range(table.num_rows)]
    return cols, rows


def sidecar_path(out) -> Path:
    """The JSON sidecar of an output file: ``<out>.json``."""
    return Path(str(out) + ".json")


def versions() -> dict:
    """Versions of Python, this package and its (optional) dependencies in use."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in ("latency_model", "numpy", "scipy", "mpmath", "tqdm", "dask", "distributed", "pyarrow", "numba"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


# ---------------------------------------------------------------------------
# Executors


def _ignore_sigint():  # workers: Ctrl-C is the parent's to handle (flush, then exit)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _serial(tasks, on_done):
    for t in tasks:
        on_done(t, run_task(t))


def _processes(tasks, jobs, on_done):
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint)
    try:
        futures = {pool.submit(run_task, t): t for t in tasks}
        for f in as_completed(futures):
            on_done(futures[f], f.result())
    except BaseException:
        # Stop now: queued tasks are cancelled, running ones would finish first otherwise.
        procs = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.terminate()
        raise
    pool.shutdown()


def _dask(tasks, client, on_done):
    from distributed import as_completed

    futures = [client.submit(run_task, t, pure=False) for t in tasks]
    task_of = {f.key: t for f, t in zip(futures, tasks)}
    try:
        for f in as_completed(futures):
            on_done(task_of[f.key], f.result())
    except BaseException:
        client.cancel(futures)
        raise


# ---------------------------------------------------------------------------
# The sweep


@dataclass
class SweepReport:
    """Outcome of :func:`run_sweep`: points and rows, how many were resumed, seconds."""

    out: Path
    n_points: int
    n_rows: int
    rows_resumed: int
    rows_computed: int
    seconds: float
    complete: bool


class SweepInterrupted(Exception):
    """Raised by :func:`run_sweep` after a KeyboardInterrupt, once finished rows are saved."""

    def __init__(self, report: SweepReport):
        super().__init__(f"interrupted: {report.rows_resumed + report.rows_computed} of "
                         f"{report.n_rows} rows saved")
        self.report = report


def _existing(plan: Plan, out: Path) -> dict:
    """Finished rows of ``out`` by key; ValueError when the file is another sweep's."""
    if not out.exists():
        return {}
    try:
        cols, rows = read_rows(out)
    except (OSError, ValueError, csv.Error) as exc:
        raise ValueError(f"cannot resume from {out}: {exc}; use --force to start over") from None
    if tuple(cols) != plan.columns:
        raise ValueError(f"{out} has other columns than this sweep; use --force to start over "
                         "or another --out")
    keys = {pt.key for t in plan.tasks for pt in t.points}
    found = {}
    for r in rows:
        if r.get("key") not in keys:
            raise ValueError(f"{out} holds points of another sweep (grid or settings differ); "
                             "use --force to start over or another --out")
        found[r["key"]] = r
    return found


def run_sweep(
    spec: SweepSpec,
    out,
    *,
    jobs: int = 1,
    client=None,
    force: bool = False,
    progress: bool = False,
    command: list | None = None,
    flush_interval_s: float = 1.0,
    plan: Plan | None = None,
) -> SweepReport:
    """Run a sweep and write its table to ``out`` (and ``<out>.json``), resuming.

    Parameters
    ----------
    spec : SweepSpec
        Grid and settings.
    out : str or Path
        Output table: CSV, or Parquet when it ends in ``.parquet`` (needs pyarrow).
        Rewritten atomically, in grid order, at most every ``flush_interval_s`` seconds
        while tasks finish and at the end; it is a valid table at every moment.
    jobs : int
        Local worker processes (>= 1; 1 runs in this process). Ignored with ``client``.
    client : distributed.Client, optional
        Run the tasks on this Dask cluster.
    force : bool
        Ignore (and replace) an existing ``out``; otherwise its finished rows are kept
        and only the missing tasks run.
    progress : bool
        Show a tqdm bar on stderr (points done / total, rate, ETA).
    command : list of str, optional
        Command line recorded in the sidecar.
    flush_interval_s : float
        Least seconds between two rewrites of ``out`` (>= 0).
    plan : Plan, optional
        ``plan_sweep(spec)`` if already computed.

    Returns
    -------
    SweepReport

    Raises
    ------
    ValueError
        For a bad grid, missing pyarrow, or an ``out`` holding another sweep.
    SweepInterrupted
        On KeyboardInterrupt, after saving every finished row.
    """
    t0 = time.perf_counter()
    out = Path(out)
    jobs = check_int("jobs", jobs, low=1)
    flush_interval_s = check_real("flush_interval_s", flush_interval_s, low=0.0)
    require_pyarrow(out)
    plan = plan_sweep(spec) if plan is None else plan
    done = {} if force else _existing(plan, out)
    todo = [t for t in plan.tasks if not all(pt.key in done for pt in t.points)]
    resumed = sum(len(t.points) for t in plan.tasks) - sum(len(t.points) for t in todo)
    order = {pt.key: (pt.index, SOURCES.index(pt.source)) for t in plan.tasks for pt in t.points}
    done = {k: v for k, v in done.items() if k in order}
    computed = 0

    meta = {"command": command, "grid": spec.grid.to_dict(), "points": plan.n_points,
            "rows": plan.n_rows, "settings": spec.settings(),
            "seeds": ("simulation point i uses numpy SeedSequence(seed, spawn_key=(i,)) = "
                      "SeedSequence(seed).spawn(points)[i]; run j its spawn(runs)[j]")
            if "simulation" in spec.sources else None,
            "points_order": "product of the grid axes in the order given, sizes innermost",
            "columns": list(plan.columns), "versions": versions()}

    def save(status: str):
        rows = sorted(done.values(), key=lambda r: order[r["key"]])
        write_rows(out, rows, plan.columns)
        write_json(sidecar_path(out), {**meta, "status": status, "rows_done": len(rows)})

    bar = None
    if progress:
        from tqdm import tqdm

        n_src = len(spec.sources)
        bar = tqdm(total=plan.n_rows, initial=resumed, unit="pt", file=sys.stderr, dynamic_ncols=True,
                   desc="sweep" if n_src == 1 else "sweep (points x sources)")
    last = [time.monotonic()]

    def on_done(task, rows):
        nonlocal computed
        for pt, row in zip(task.points, rows):
            done[pt.key] = row
        computed += len(rows)
        if bar is not None:
            bar.update(len(rows))
        if time.monotonic() - last[0] >= flush_interval_s:
            save("running")
            last[0] = time.monotonic()

    def report(complete):
        return SweepReport(out, plan.n_points, plan.n_rows, resumed, computed,
                           time.perf_counter() - t0, complete)

    try:
        save("running" if todo else "complete")
        if client is not None:
            _dask(todo, client, on_done)
        elif jobs == 1 or len(todo) <= 1:
            _serial(todo, on_done)
        else:
            _processes(todo, min(jobs, len(todo)), on_done)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        _save_uninterrupted(save, "interrupted")
        raise SweepInterrupted(report(False)) from None
    except BaseException:
        if bar is not None:
            bar.close()
        _save_uninterrupted(save, "failed")
        raise
    if bar is not None:
        bar.close()
    save("complete")
    return report(True)


def _save_uninterrupted(save, status):
    """Save with Ctrl-C held back, so a second Ctrl-C cannot cut the final save short."""
    old = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: cannot hold it back
        save(status)
        return
    try:
        save(status)
    finally:
        signal.signal(signal.SIGINT, old)
