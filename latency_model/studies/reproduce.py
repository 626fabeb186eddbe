"""The paper's Section 4 reproduced: tables, figures and the validation report.

:func:`run_reproduction` writes, under ``out``: ``tables/table{1,2}.csv``;
``figures/figN.{csv,json,png,svg}`` for Figures 4 and 6-10 (model curves and simulated
means with 95% CIs) and Figures 1-3 and 5 (the fluid sending rate beside one simulated
transfer with the same loss, :mod:`latency_model.studies.trace_figures`); the accuracy map
``figures/accuracy.{csv,json}`` and ``figures/accuracy_<model>_<variant>_b<b>.png`` (every
installed model against the simulator, :mod:`latency_model.studies.accuracy`; ``quick``: the
quick map); and ``validation/REPORT.md`` (with an "Accuracy map" section). Computed pieces are cached in
``out/.cache`` (keyed by parameters, seed, runs, package version and source code), so a
rerun with unchanged code and parameters only redraws; ``force`` recomputes. The
``reproduce`` and ``validate`` commands (:mod:`latency_model.cli.repro`) run it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .. import __version__
from ..checks import check_flag, check_instance, check_jobs, checked_call
from ..sim.profiles import check_stack
from . import cache
from .export import atomic_write_text, record_created, undo_files, undo_folders, write_csv, write_json
from .lock import output_lock
from ..workers import worker_init
from .figures import (CSV_COLUMNS, DEFAULT_BUDGET, Budget, FIGURES, QUICK_BUDGET, SIM_SETS, base_params,
                      budget_dict, compute, figure_rows, setting_text)
from .tables import add_simulated_y_to, write_tables
from .trace_figures import TRACE_COLUMNS, TRACE_FIGURES, trace_figure

__all__ = ["run_reproduction"]


def _tables(out: Path, cache_dir: Path, force: bool, stack: str = "rfc") -> tuple[list[dict], list[Path]]:
    from ..model.thresholds import table_rows

    what = {"lt_mode": "rfc3042"} if stack == "rfc" else {"lt_mode": "rfc3042", "stack": stack}
    key = cache.cache_key("tables", what,
                          cache.source_hash("model/thresholds.py", "model/fluid.py", "sim", "params.py", "growth",
                                            "studies/tables.py"))
    rows = None if force else cache.load(cache_dir, key)
    if rows is None:
        rows = table_rows()
        add_simulated_y_to(rows, stack=stack)  # the packet simulator's single-loss y_to beside model and paper
        cache.store(cache_dir, key, rows)
    return rows, write_tables(rows, out / "tables")


def _figure_meta(fig: str, budget, command: str) -> dict:
    spec = FIGURES[fig]
    sets = ([spec["set"]] if spec["kind"] == "conditional"
            else [f"{s}_b1" for s in ("newreno", "lt", "proposal")])
    b = SIM_SETS[sets[0]][1]
    return {
        "figure": fig,
        "title": spec["title"],
        "setting": setting_text(base_params("newreno", b), budget.runs),
        "source": "Ayesta & Avrachenkov, Section 4",
        "package": "latency_model",
        "version": __version__,
        "command": command,
        "columns": CSV_COLUMNS,
        "units": {"size_bytes": "bytes", "size_packets": "packets of MSS = 500 B",
                  "value": "fraction (1 - L_1/L_1 NewReno)" if spec["kind"] == "reduction" else "seconds",
                  "ci_low/ci_high": "95% Student-t interval of the simulated mean"
                                    + (" (delta method for the ratio)" if spec["kind"] == "reduction" else ""),
                  "n": "simulated transfers behind the value"},
        # The module is latency_model.model.recursion since the layout moved; the text keeps its old
        # name so that the committed figN.json stayed bit-identical through that move.
        "model": {"method": "latency_model.recursion (fluid time model, paper's loss law, normalised)",
                  "params": {s: base_params(SIM_SETS[s][0], SIM_SETS[s][1]).to_dict() for s in sets}},
        "simulation": {
            "sim_config": {s: {"variant": SIM_SETS[s][0], "b": SIM_SETS[s][1], "overrides": SIM_SETS[s][2],
                               "defaults": "SimConfig(): 100 Mb/s, one-way delay 50 ms, 40 B headers, "
                                           "delayed-ACK timer 200 ms, RFC 6298 RTO (min 1 s), RFC 3042 LT"}
                           for s in sets},
            **({} if budget.stack == "rfc" else {"stack": budget.stack}),
            "runs_per_size": budget.runs,
            "seed": budget.seed,
            "seeding": "run i of every size uses SeedSequence(seed).spawn(runs)[i] (common random numbers)",
        },
        "budget": budget_dict(budget),
        "filesize_min": "series filesize_min: y_to of Tables 1-2 (per-ACK count) + dup_t packets "
                        "(1 for the proposal); filesize_min_fluid: fluid y_to + the same tail",
    }


@checked_call
def run_reproduction(out, *, quick: bool = False, jobs: int | None = None, force: bool = False,
                     command: str = "latency-model reproduce", progress: bool = True,
                     budget=None, stack: str = "rfc") -> dict:
    """Tables, figures and the validation report under ``out``.

    Parameters
    ----------
    out : str or Path
        Output root (``tables/``, ``figures/``, ``validation/``, ``.cache/``).
    quick : bool
        Use :data:`~latency_model.studies.figures.QUICK_BUDGET`.
    jobs : int, optional
        Worker processes (default: the number of CPUs); results do not depend on it.
    force : bool
        Recompute every cached piece.
    command : str
        The command line recorded in the metadata.
    progress : bool
        Progress on stderr: bars on a terminal, else a line every 5 s and one per step.
    budget : Budget, optional
        Overrides ``quick`` (tests); the accuracy map is then the quick one.
    stack : {"rfc", "ns3", "linux"}
        The simulator's stack profile (the paper's reproduction: ``"rfc"``); set-ups the
        stack cannot run are left out and their validation cases reported ``n/a``.

    Returns
    -------
    dict
        Paths written, the evaluation, the paper's claims, cache counts and timings, and
        ``cache_damaged``: one line per cache entry found damaged (and recomputed; every
        entry is checked before use, :func:`latency_model.studies.cache.load`).

    Raises
    ------
    OutputBusy
        (a ValueError) When another process is writing ``out`` (its lock file
        ``out/.latency-model.lock`` names that process's pid).
    """
    # Every argument is checked before anything is written under ``out``.
    if not isinstance(out, (str, os.PathLike)) or str(out) == "":
        raise ValueError(f"out must be a directory path (str or Path), got {out!r}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a directory, got the file {str(out)!r}")
    for name, value in (("quick", quick), ("force", force), ("progress", progress)):
        check_flag(name, value)
    jobs = (os.cpu_count() or 1) if jobs is None else check_jobs("jobs", jobs)
    check_instance("command", command, str)
    if budget is not None:
        check_instance("budget", budget, Budget)
    check_stack(stack)
    quick_map = quick or budget is not None  # a test's budget gets the quick accuracy map
    budget = budget or (QUICK_BUDGET if quick else DEFAULT_BUDGET)
    if stack != budget.stack:
        budget = dataclasses.replace(budget, stack=stack)
    cache_dir = out / ".cache"
    # a failed run leaves no folder it made, and of its outputs only the cache (a rerun resumes from it)
    with undo_folders(out), undo_files(keep=lambda p: cache_dir in p.parents):
        out.mkdir(parents=True, exist_ok=True)
        with output_lock(out, command), warnings.catch_warnings(record=True) as caught:  # one writer per folder
            warnings.simplefilter("always", cache.DamagedCacheEntry)
            result = _reproduce(out, budget, quick_map=quick_map, jobs=jobs, force=force, command=command,
                                progress=progress)
    result["cache_damaged"] = [str(w.message) for w in caught if issubclass(w.category, cache.DamagedCacheEntry)]
    for w in caught:  # the others, as they would have been shown
        if not issubclass(w.category, cache.DamagedCacheEntry):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def _reproduce(out: Path, budget, *, quick_map: bool, jobs: int, force: bool, command: str, progress: bool) -> dict:
    """:func:`run_reproduction`'s work, with ``out`` locked."""
    from .validate import evaluate, paper_claims, report_markdown

    cache_dir = out / ".cache"
    t0 = time.perf_counter()
    table_rows, paths = _tables(out, cache_dir, force, budget.stack)
    results = compute(budget, cache_dir, jobs=jobs, force=force, progress=progress)
    t_compute = time.perf_counter() - t0
    to_draw = []
    for fig in FIGURES:
        rows = figure_rows(fig, results)
        csv_path = write_csv(out / "figures" / f"{fig}.csv", rows, CSV_COLUMNS)
        paths.append(csv_path)
        meta = _figure_meta(fig, budget, command)
        paths.append(write_json(out / "figures" / f"{fig}.json", meta))
        images = [csv_path.with_suffix(".png"), csv_path.with_suffix(".svg")]
        # The images depend only on the CSV, the sidecar's title and setting, and the drawing
        # code: skip them when all are unchanged.
        key = cache.cache_key("plot", {"csv": hashlib.sha256(csv_path.read_bytes()).hexdigest(),
                                       "title": meta["title"], "setting": meta["setting"]},
                              cache.source_hash("studies/plots.py"))
        if force or not all(p.exists() for p in images) or cache.load(cache_dir, key) is None:
            to_draw.append((csv_path, key))
        paths.extend(images)
    for fig in TRACE_FIGURES:  # Figures 1-3 and 5: one transfer each, seconds to compute
        csv_path, key, written = _trace_figure(out, fig, command)
        paths.extend(written)
        if force or not all(p.exists() for p in written[2:]) or cache.load(cache_dir, key) is None:
            to_draw.append((csv_path, key))
    if progress and to_draw:
        print(f"reproduce: drawing {len(to_draw)} figures", file=sys.stderr, flush=True)
    _draw_all(to_draw, jobs, cache_dir)
    accuracy, written = _accuracy_map(out, cache_dir, quick=quick_map, jobs=jobs, force=force, stack=budget.stack,
                                      command=command, progress=progress)
    paths.extend(written)
    evaluation = evaluate(results)
    claims = paper_claims(results)
    meta = {"command": command, "version": __version__, "runs": budget.runs, "seed": budget.seed}
    paths.append(atomic_write_text(out / "validation" / "REPORT.md",
                                   report_markdown(evaluation, claims, meta, accuracy=accuracy)))
    return {"paths": paths, "evaluation": evaluation, "claims": claims, "tables": table_rows, "accuracy": accuracy,
            "cached": results["cached"], "computed": results["computed"],
            "seconds_compute": t_compute, "seconds_total": time.perf_counter() - t0}


def _accuracy_map(out: Path, cache_dir: Path, *, quick: bool, jobs: int, force: bool, stack: str, command: str,
                  progress: bool) -> tuple[dict, list[Path]]:
    """The accuracy map (:data:`~latency_model.studies.accuracy.QUICK_MAP` when ``quick``, else
    :data:`~latency_model.studies.accuracy.DEFAULT_MAP`) under the ``stack`` profile: its
    simulated cells and model calls cached in ``cache_dir``, written as
    ``figures/accuracy.{csv,json}`` and its heat maps (redrawn only when the CSV or the
    drawing code changed). Returns the result and the paths."""
    from ..sim.config import SimConfig
    from .accuracy import (DEFAULT_MAP, MODEL_MAX_PACKETS, QUICK_MAP, QUICK_MAX_PACKETS, draw_maps, map_paths,
                           read_rows_csv, run_accuracy, write_outputs)

    config = SimConfig.profile(stack)
    amap = dataclasses.replace(QUICK_MAP if quick else DEFAULT_MAP, sim_config=config)
    if config.sender == "ns3":  # ns-3 has neither the proposal nor ER: their cells are left out
        from ..params import TcpParams, apply_variant
        from ..sim.ns3 import check_ns3_params

        def runs_on_ns3(variant: str) -> bool:
            try:
                check_ns3_params(apply_variant(TcpParams(), variant, 1.0), config)
            except ValueError:
                return False
            return True

        amap = dataclasses.replace(amap, variants=tuple(v for v in amap.variants if runs_on_ns3(v)))
    if not force:
        _check_sim_table(amap, cache_dir)
    result = run_accuracy(amap, cache_dir=cache_dir, jobs=jobs, force=force, command=command,
                          progress=progress,
                          model_timeout_s=None,  # the size caps alone: the same cells on every machine
                          max_packets=QUICK_MAX_PACKETS if quick else MODEL_MAX_PACKETS)
    csv_path, json_path = write_outputs(result, out / "figures", "accuracy", draw=False)
    images = list(map_paths(read_rows_csv(csv_path), out / "figures", "accuracy").values())
    key = cache.cache_key("plot", {"csv": hashlib.sha256(csv_path.read_bytes()).hexdigest(), "kind": "accuracy"},
                          cache.source_hash("studies/accuracy.py", "studies/plots.py"))
    if force or not all(p.exists() for p in images) or cache.load(cache_dir, key) is None:
        if progress:
            print("reproduce: drawing the accuracy heat maps", file=sys.stderr, flush=True)
        images = draw_maps(csv_path)
        cache.store(cache_dir, key, True)
    return result, [csv_path, json_path, *images]


def _check_sim_table(amap, cache_dir: Path) -> None:
    """Report the damaged rows of the accuracy map's cached simulation table (the sweep's
    resume recomputes them), and remove the table when it is not this map's table at all
    (cut inside its header, another form): it is then recomputed whole."""
    from .accuracy import sim_table_path
    from .sweep import plan_sweep
    from .sweep.run import read_resumable

    table = sim_table_path(amap, cache_dir)
    try:
        _, damaged = read_resumable(plan_sweep(amap.sweep_spec()), table)
    except ValueError as exc:
        warnings.warn(cache.DamagedCacheEntry(f"{table}: {str(exc).split(';')[0]}; recomputed"))
        table.unlink()
        return
    for line in damaged:
        warnings.warn(cache.DamagedCacheEntry(f"{table}: {line}; recomputed"))


def _trace_figure(out: Path, fig: str, command: str) -> tuple[Path, str, list[Path]]:
    """Write ``fig``'s CSV and JSON (:mod:`latency_model.studies.trace_figures`); return the
    CSV path, the images' cache key and the four paths (CSV, JSON, PNG, SVG)."""
    rows, meta = trace_figure(fig)
    meta = {**meta, "package": "latency_model", "version": __version__, "command": command}
    csv_path = write_csv(out / "figures" / f"{fig}.csv", rows, TRACE_COLUMNS)
    json_path = write_json(out / "figures" / f"{fig}.json", meta)
    key = cache.cache_key("plot", {"csv": hashlib.sha256(csv_path.read_bytes()).hexdigest(),
                                   "title": meta["title"], "setting": meta["setting"]},
                          cache.source_hash("studies/plots.py", "studies/trace_plots.py"))
    return csv_path, key, [csv_path, json_path, csv_path.with_suffix(".png"), csv_path.with_suffix(".svg")]


def _draw_all(todo: list, jobs: int, cache_dir: Path) -> None:
    """Draw the figures of ``todo`` ((csv path, cache key) pairs), in parallel when jobs > 1."""
    from .draw import draw_csv as draw

    if jobs > 1 and len(todo) > 1:
        new = [p for c, _ in todo for p in (c.with_suffix(".png"), c.with_suffix(".svg")) if not p.exists()]
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), initializer=worker_init,
                                 initargs=(os.getpid(),)) as ex:
            list(ex.map(draw, [c for c, _ in todo]))
        record_created([p for p in new if p.exists()])  # drawn in workers: a later failure removes them too
    else:
        for csv_path, _ in todo:
            draw(csv_path)
    for _, key in todo:
        cache.store(cache_dir, key, True)
