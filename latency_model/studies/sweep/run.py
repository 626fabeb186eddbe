"""Running a sweep: tasks computed serially, in local processes or on a Dask cluster,
the output table rewritten after finished tasks, resumed from its finished rows.

Local worker processes exit on their own when the sweep's process dies, even by SIGKILL
(:func:`latency_model.workers.watch_parent`): none is left running under PID 1.
"""

from __future__ import annotations

import csv
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...checks import check_file_path, check_flag, check_instance, check_jobs, check_real, checked_call
from ...workers import PARENT_POLL_S, watch_parent  # re-exported: the sweep API had them
from ..export import undo_folders, write_json
from ..lock import output_lock
from .grid import Design
from .plan import N_CONDITIONAL, Plan, SweepSpec, Task, _axes, _models, plan_sweep, row_order
from .table import (ROW_CHECK, _fmt, cell_value, check_table_name, read_checked, read_rows, require_pyarrow,
                    row_check, sidecar_path, versions, write_rows)

__all__ = ["run_task", "run_sweep", "evaluate_points", "read_resumable", "SweepReport", "SweepInterrupted", "watch_parent",
           "PARENT_POLL_S"]

# ---------------------------------------------------------------------------
# Tasks


def _model_rows(task: Task) -> list[dict]:
    if task.settings.get("model", "fluid") != "fluid":
        return _registry_rows(task)
    from ...model.recursion import SolverOptions, conditional_latency, expected_latency
    from ...model.thresholds import filesize_min, y_to

    tm, law = task.settings["time_model"], task.settings["law"]
    opts = SolverOptions(time_model=tm)
    groups: dict = {}
    for pt in task.points:  # size-based: the variant differs by size
        groups.setdefault(pt.params, []).append(pt)
    rows = {}
    for params, pts in groups.items():
        sizes = [pt.size_bytes for pt in pts]
        res = expected_latency(params, size_bytes=sizes, law=law, options=opts)
        cond = res.conditional_latency_s
        if res.k_max < N_CONDITIONAL:  # few losses expected: the sum stopped early
            cond = conditional_latency(params, size_bytes=sizes, k=list(range(N_CONDITIONAL)), options=opts)
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


def _registry_rows(task: Task) -> list[dict]:
    """Rows of a model other than ``fluid``, through the registry (one call per parameter
    set, all its sizes at once, with the task's ``options``: the packet model's path and
    timers of the simulator beside it): its expected latency, and L_0 .. L_3 where it
    gives them."""
    from ...model.registry import predict

    name = task.settings["model"]
    groups: dict = {}
    for pt in task.points:
        groups.setdefault(pt.params, []).append(pt)
    rows = {}
    for params, pts in groups.items():
        pred = predict(name, params, [pt.size_bytes for pt in pts], **task.settings.get("options", {}))
        cond = pred.conditional_latency_s
        for i, pt in enumerate(pts):
            q = {"expected_latency_s": float(pred.expected_latency_s[i])}
            for k in range(N_CONDITIONAL):
                has = cond is not None and k < cond.shape[1] and np.isfinite(cond[i, k])
                q[f"latency_k{k}_s"] = float(cond[i, k]) if has else None
            rows[pt.index] = {**pt.cells, **q}
    return [rows[pt.index] for pt in task.points]


def _simulation_rows(task: Task) -> list[dict]:
    from ...sim import OUT_FIELDS, mean_ci, run_many

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
# Executors


def _worker_init(parent_pid: int) -> None:
    """Initializer of the local workers: exit with the parent; Ctrl-C is the parent's to
    handle (it saves the finished rows, then exits)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent(parent_pid)


def _serial(tasks, on_done):
    for t in tasks:
        on_done(t, run_task(t))


def _processes(tasks, jobs, on_done):
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init, initargs=(os.getpid(),))
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
    """Outcome of :func:`run_sweep`: points and rows, how many were resumed, seconds, and
    the table itself: :meth:`records`, :meth:`to_dict`, :meth:`to_frame` (pandas) and
    :meth:`values` (one column as an array shaped like the grid).

    ``out`` is the table's file, or None for a sweep kept in memory (``rows`` then holds
    its rows as cell text, in grid order; with a file, the methods read the file)."""

    out: Path | None
    n_points: int
    n_rows: int
    rows_resumed: int
    rows_computed: int
    seconds: float
    complete: bool
    damaged: tuple = ()
    """Rows of ``out`` found damaged on resuming (cut short, fields added, cells edited), one
    description each (``line 12: cut short (5 of 38 fields)``); their points were recomputed."""
    columns: tuple = ()
    """The table's columns (a file also ends with ``row_crc32``)."""
    shape: tuple = ()
    """Points as an array: the grid's axes' lengths (size innermost), or (points,) for a design."""
    rows: list | None = field(default=None, repr=False)

    def _cells(self) -> list[dict]:
        if self.rows is not None:
            return self.rows
        if self.out is None:
            return []
        _, rows = read_rows(self.out)
        return [{c: r.get(c, "") for c in self.columns} for r in rows]

    def records(self) -> list[dict]:
        """The rows as dicts of typed values (numbers, bools, text; None for an empty cell),
        in grid order."""
        return [{c: cell_value(r.get(c, "")) for c in self.columns} for r in self._cells()]

    def to_dict(self) -> dict:
        """JSON-ready: the counts, the columns and the rows (:meth:`records`)."""
        return {"out": None if self.out is None else str(self.out), "n_points": self.n_points,
                "n_rows": self.n_rows, "rows_resumed": self.rows_resumed, "rows_computed": self.rows_computed,
                "seconds": self.seconds, "complete": self.complete, "damaged": list(self.damaged),
                "shape": list(self.shape), "columns": list(self.columns), "rows": self.records()}

    def to_frame(self):
        """The table as a pandas DataFrame (pandas is imported here, and needed only here)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame needs pandas (pip install pandas, or 'latency_model[pandas]'); records() "
                              "gives the rows as dicts") from None
        return pd.DataFrame.from_records(self.records(), columns=list(self.columns))

    def values(self, column: str = "expected_latency_s", *, source: str | None = None,
               model: str | None = None) -> np.ndarray:
        """One column as a float array of :attr:`shape` (NaN for an empty cell): point ``i``
        at flat index ``i``, so a grid's array is indexed ``[axis 1, axis 2, ..., size]`` in
        the grid's axis order and a design's (a SALib sample's) follows its rows.

        Parameters
        ----------
        column : str
            A numeric column (seconds, bytes ...).
        source, model : str, optional
            Which row of each point (``"model"``/``"simulation"``, and the model's name with
            a model axis): needed where a point has several rows.

        Raises
        ------
        ValueError
            For an unknown column, or several rows per point left to choose from.
        """
        if column not in self.columns:
            raise ValueError(f"column must be one of {', '.join(self.columns)}, got {column!r}")
        rows = [r for r in self._cells() if (source is None or r.get("source") == source)
                and (model is None or r.get("model", "fluid" if r.get("source") == "model" else "") == model)]
        out = np.full(self.n_points, np.nan)
        seen = np.zeros(self.n_points, dtype=bool)
        for r in rows:
            i = int(r["point"])
            if seen[i]:
                kinds = sorted({(r2.get("source"), r2.get("model", "")) for r2 in rows})
                raise ValueError("this sweep has several rows per point (" + ", ".join(
                    f"source {a}" + (f" model {b}" if b else "") for a, b in kinds)
                    + "): give source= and, with a model axis, model=")
            seen[i] = True
            text = r.get(column, "")
            try:
                out[i] = float(text) if text != "" else np.nan
            except ValueError:
                raise ValueError(f"column {column} holds text ({text!r}), not numbers") from None
        return out.reshape(self.shape) if self.shape else out


class SweepInterrupted(Exception):
    """Raised by :func:`run_sweep` after a KeyboardInterrupt, once finished rows are saved."""

    def __init__(self, report: SweepReport):
        super().__init__(f"interrupted: {report.rows_resumed + report.rows_computed} of "
                         f"{report.n_rows} rows saved")
        self.report = report


def read_resumable(plan: Plan, out: Path) -> tuple[dict, list[str]]:
    """Whole rows of ``out`` by key, and a description of each damaged row (recomputed);
    ValueError when the file is another sweep's."""
    if not out.exists():
        return {}, []
    try:
        rows, damaged = read_checked(out, plan.columns)
    except (OSError, ValueError, csv.Error) as exc:
        text = str(exc)
        if "other columns" in text:
            raise ValueError(f"{out} has other columns than this sweep; use --force to start over "
                             "or another --out") from None
        raise ValueError(f"cannot resume from {out}: {text}; use --force to start over") from None
    keys = {pt.key for t in plan.tasks for pt in t.points}
    found = {}
    for r in rows:
        if r.get("key") not in keys:
            raise ValueError(f"{out} holds points of another sweep (grid or settings differ); "
                             "use --force to start over or another --out")
        found[r["key"]] = r
    return found, damaged


@checked_call
def run_sweep(
    spec: SweepSpec,
    out=None,
    *,
    jobs: int = 1,
    client=None,
    force: bool = False,
    progress: bool = False,
    command: list | None = None,
    flush_interval_s: float = 1.0,
    plan: Plan | None = None,
) -> SweepReport:
    """Run a sweep: its table kept in memory, or written to ``out`` (and ``<out>.json``),
    resuming.

    Parameters
    ----------
    spec : SweepSpec
        Grid and settings (``SweepSpec({"p": [0.01, 0.1], "size_packets": range(1, 21)})``).
    out : str or Path, optional
        None (default): the table stays in memory (the report's :meth:`~SweepReport.records`,
        :meth:`~SweepReport.to_frame`, :meth:`~SweepReport.values`); nothing is written and
        nothing resumes. Else the output table: CSV, or Parquet when it ends in ``.parquet``
        (needs pyarrow); a name promising another format (``.json``) is refused.
        Rewritten atomically, in grid order, at most every ``flush_interval_s`` seconds
        (and at most every 10 times the last rewrite's duration) while tasks finish and at
        the end; it is a valid table at every moment.
    jobs : int
        Local worker processes (>= 1; 1 runs in this process). Ignored with ``client``.
    client : distributed.Client, optional
        Run the tasks on this Dask cluster.
    force : bool
        Ignore (and replace) an existing ``out``; otherwise its whole rows (their
        ``row_crc32`` matches their cells) are kept and only the missing tasks run; a
        damaged row is recomputed and listed in :attr:`SweepReport.damaged`.
    progress : bool
        Show progress on stderr: a tqdm bar on a terminal (points done / total, rate, ETA),
        else a line ``sweep: 120/720 points, 14 s`` every 5 s and at the end.
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
    OutputBusy
        (a ValueError) When another process is writing ``out`` (its lock file
        ``<out>.lock`` names that process's pid).
    SweepInterrupted
        On KeyboardInterrupt, after saving every finished row.
    """
    t0 = time.perf_counter()
    check_instance("spec", spec, SweepSpec)
    if out is not None:
        out = check_file_path("out", out)
        check_table_name(out)
    jobs = check_jobs("jobs", jobs)
    check_flag("force", force)
    check_flag("progress", progress)
    if command is not None:
        check_instance("command", command, (list, tuple), "list of str")
    if plan is not None:
        check_instance("plan", plan, Plan)
    if client is not None and not callable(getattr(client, "submit", None)):
        raise ValueError(f"client must be a distributed.Client, got {client!r}")
    flush_interval_s = check_real("flush_interval_s", flush_interval_s, low=0.0)
    plan = plan_sweep(spec) if plan is None else plan
    if out is None:
        return _run_in_memory(spec, plan, jobs=jobs, client=client, progress=progress, t0=t0)
    require_pyarrow(out)
    with undo_folders(out.parent):  # a failed sweep leaves no folder it made
        out.parent.mkdir(parents=True, exist_ok=True)
        with output_lock(out, " ".join(command) if command else "run_sweep"):  # one writer per file
            return _run_to_file(spec, out, plan, jobs=jobs, client=client, force=force, progress=progress,
                                command=command, flush_interval_s=flush_interval_s, t0=t0)


def _shape(grid) -> tuple:
    """The points as an array: each point axis's length in grid order, the size's last; a
    design's points in a row."""
    if isinstance(grid, Design):
        return (len(grid.points),)
    size_axis, others = _axes(grid)
    return (*[len(a.values) for a in others], len(size_axis.values))


def _bar(spec, plan, resumed, progress, every_s: float = 5.0):
    """The progress shown while tasks finish: a tqdm bar on a terminal; on a log (stderr not a
    terminal) a line ``sweep: 120/720 points, 14 s`` at most every ``every_s`` seconds and at
    the end; None without ``progress``."""
    if not progress:
        return None
    one = plan.n_rows == plan.n_points  # one row per point
    if not sys.stderr.isatty():
        from ..figures import _progress

        return _progress(plan.n_rows, True, "sweep", sys.stderr, every_s, initial=resumed,
                         noun="points" if one else "rows (points x sources)")
    from tqdm import tqdm

    return tqdm(total=plan.n_rows, initial=resumed, unit="pt", file=sys.stderr, dynamic_ncols=True,
                desc="sweep" if one else "sweep (points x sources)")


def _execute(todo, jobs, client, on_done) -> None:
    """Run ``todo`` on the executor asked for, calling ``on_done(task, rows)`` as each ends."""
    if client is not None:
        _dask(todo, client, on_done)
    elif jobs == 1 or len(todo) <= 1:
        _serial(todo, on_done)
    else:
        _processes(todo, min(jobs, len(todo)), on_done)


def _run_in_memory(spec, plan, *, jobs, client, progress, t0) -> SweepReport:
    """:func:`run_sweep` without a file: every task run, the rows kept, in grid order."""
    models = _models(plan.spec)
    done: dict = {}
    bar = _bar(spec, plan, 0, progress)

    def on_done(task, rows):
        for pt, row in zip(task.points, rows):
            done[row_order(pt, models)] = row
        if bar is not None:
            bar.update(len(rows))

    def report():
        rows = [done[k] for k in sorted(done)]
        return SweepReport(None, plan.n_points, plan.n_rows, 0, len(rows), time.perf_counter() - t0,
                           len(rows) == plan.n_rows, (), plan.columns, _shape(spec.grid), rows)

    try:
        _execute(list(plan.tasks), jobs, client, on_done)
    except KeyboardInterrupt:
        raise SweepInterrupted(report()) from None
    finally:
        if bar is not None:
            bar.close()
    return report()


def _run_to_file(spec, out, plan, *, jobs, client, force, progress, command, flush_interval_s, t0) -> SweepReport:
    """:func:`run_sweep`'s work, with ``out`` locked."""
    done, damaged = ({}, []) if force else read_resumable(plan, out)
    todo = [t for t in plan.tasks if not all(pt.key in done for pt in t.points)]
    resumed = sum(len(t.points) for t in plan.tasks) - sum(len(t.points) for t in todo)
    models = _models(plan.spec)
    order = {pt.key: row_order(pt, models) for t in plan.tasks for pt in t.points}
    done = {k: v for k, v in done.items() if k in order}
    computed = 0

    meta = {"command": command, "grid": spec.grid.to_dict(), "points": plan.n_points,
            "rows": plan.n_rows, "settings": spec.settings(),
            "seeds": ("simulation point i uses numpy SeedSequence(seed, spawn_key=(i,)) = "
                      "SeedSequence(seed).spawn(points)[i]; run j its spawn(runs)[j]")
            if "simulation" in spec.sources else None,
            "points_order": ("the design's points in the order given" if isinstance(spec.grid, Design)
                             else "product of the grid axes in the order given, sizes innermost"),
            "columns": [*plan.columns, ROW_CHECK], "versions": versions(),
            **({"damaged_rows_recomputed": damaged} if damaged else {})}

    save_s = [0.0]  # how long the last save took

    def save(status: str) -> int:
        t = time.monotonic()
        rows = sorted(done.values(), key=lambda r: order[r["key"]])
        write_rows(out, rows, plan.columns)
        write_json(sidecar_path(out), {**meta, "status": status, "rows_done": len(rows)})
        save_s[0] = time.monotonic() - t
        return len(rows)

    bar = _bar(spec, plan, resumed, progress)
    last = [time.monotonic()]

    file_columns = [*plan.columns, ROW_CHECK]

    def on_done(task, rows):
        nonlocal computed
        for pt, row in zip(task.points, rows):
            done[pt.key] = {**row, ROW_CHECK: row_check(row, file_columns)}  # once, not at every save
        computed += len(rows)
        if bar is not None:
            bar.update(len(rows))
        # Rewriting a large table takes a while: save at most every 10x that, so saving
        # never takes more than a tenth of the time.
        if time.monotonic() - last[0] >= max(flush_interval_s, 10 * save_s[0]):
            save("running")
            last[0] = time.monotonic()

    def report(complete):
        return SweepReport(out, plan.n_points, plan.n_rows, resumed, computed,
                           time.perf_counter() - t0, complete, tuple(damaged), plan.columns, _shape(spec.grid))

    try:
        save("running" if todo else "complete")
        _execute(todo, jobs, client, on_done)
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
    written = len(done)
    if written != plan.n_rows:  # rows sharing a key (plan_sweep refuses them): never report success
        save("failed")
        raise ValueError(f"internal error: the sweep planned {plan.n_rows} rows and wrote {written} to {out} "
                         "(rows share a key; please report this)")
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



@checked_call
def evaluate_points(points, names=None, *, models=None, what: str = "model", runs: int = 1000, seed: int = 0,
                    time_model: str | None = None, law: str = "paper", sim_config=None, engine: str = "auto",
                    out=None, jobs: int = 1, client=None, force: bool = False, progress: bool = False) -> SweepReport:
    """The model, the simulator or both at an arbitrary design of points (a Latin
    hypercube, a SALib sample, a list of set-ups): each point a grid point of its own.

    Parameters
    ----------
    points : list of dict, pandas.DataFrame or 2-D array-like
        One point per row, named as a sweep's axes (``p``, ``rtt``, ``w0``, ``variant``,
        ``rule-param.X`` ...), each with a size (``size_packets`` or ``size_bytes``).
        A SALib sample works as it is: ``evaluate_points(X, names=problem)``.
    names : sequence of str or dict, optional
        Column names of a 2-D array (or a SALib problem dict with ``"names"``).
    models : sequence of str, optional
        Analytic models of every point (default ``fluid``): one model row each.
    what, runs, seed, time_model, law, sim_config, engine
        As :class:`SweepSpec`; simulation point ``i`` (row ``i``) draws from
        ``SeedSequence(seed, spawn_key=(i,))``.
    out, jobs, client, force, progress
        As :func:`run_sweep` (``out`` None: the table stays in memory).

    Returns
    -------
    SweepReport
        ``values("expected_latency_s", source=...)`` is an array of one value per point, in
        the order of ``points`` (what SALib's ``analyze`` takes).

    Raises
    ------
    ValueError
        For a malformed design (:func:`~.grid.design_from_points`) or a bad point (naming the
        parameter and the point's values), before any work.
    """
    from .grid import design_from_points

    design = design_from_points(points, names, models)
    spec = SweepSpec(grid=design, what=what, runs=runs, seed=seed, time_model=time_model, law=law,
                     sim_config=sim_config, engine=engine)
    return run_sweep(spec, out, jobs=jobs, client=client, force=force, progress=progress)
