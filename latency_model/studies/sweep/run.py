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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...checks import check_file_path, check_flag, check_instance, check_int, check_real, checked_call
from ...workers import PARENT_POLL_S, watch_parent  # re-exported: the sweep API had them
from ..export import write_json
from .plan import N_CONDITIONAL, Plan, SweepSpec, Task, _models, plan_sweep, row_order
from .table import _fmt, read_rows, require_pyarrow, sidecar_path, versions, write_rows

__all__ = ["run_task", "run_sweep", "SweepReport", "SweepInterrupted", "watch_parent", "PARENT_POLL_S"]

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


@checked_call
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
        (and at most every 10 times the last rewrite's duration) while tasks finish and at
        the end; it is a valid table at every moment.
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
    check_instance("spec", spec, SweepSpec)
    out = check_file_path("out", out)
    jobs = check_int("jobs", jobs, low=1)
    check_flag("force", force)
    check_flag("progress", progress)
    if command is not None:
        check_instance("command", command, (list, tuple), "list of str")
    if plan is not None:
        check_instance("plan", plan, Plan)
    if client is not None and not callable(getattr(client, "submit", None)):
        raise ValueError(f"client must be a distributed.Client, got {client!r}")
    flush_interval_s = check_real("flush_interval_s", flush_interval_s, low=0.0)
    require_pyarrow(out)
    plan = plan_sweep(spec) if plan is None else plan
    done = {} if force else _existing(plan, out)
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
            "points_order": "product of the grid axes in the order given, sizes innermost",
            "columns": list(plan.columns), "versions": versions()}

    save_s = [0.0]  # how long the last save took

    def save(status: str) -> int:
        t = time.monotonic()
        rows = sorted(done.values(), key=lambda r: order[r["key"]])
        write_rows(out, rows, plan.columns)
        write_json(sidecar_path(out), {**meta, "status": status, "rows_done": len(rows)})
        save_s[0] = time.monotonic() - t
        return len(rows)

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
        # Rewriting a large table takes a while: save at most every 10x that, so saving
        # never takes more than a tenth of the time.
        if time.monotonic() - last[0] >= max(flush_interval_s, 10 * save_s[0]):
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

