"""``latency-model sweep``: the model, the simulator or both over a parameter grid.

The engine is :mod:`latency_model.studies.sweep`; this module turns flags (and a TOML grid
file) into a :class:`~latency_model.studies.sweep.SweepSpec`, picks the executor and reports.
Errors are one line with exit status 2 (:class:`~latency_model.cli.common.CliError`), naming
the flag (``--param``, ``--grid``, ``--out`` ...); Ctrl-C saves every finished point and exits
with status 130 and one line. Before any work the output path is checked and the sweep's
memory and time are estimated: a sweep that cannot fit in memory is refused, a long one gets
one warning line.
"""

from __future__ import annotations

import os
import sys

from ..values import show
from .common import (CliError, add_command, add_jobs_flag, hide, add_link_flags, check_out_file, check_workers, config_from_args,
                     flag_message, link_overrides, number, os_error_message, warn)


def _grid_source(args) -> str:
    """The flag(s) a grid error comes from."""
    if getattr(args, "points", None) is not None:
        return f"--points {show(args.points)[1:-1]}"
    if args.grid is None:
        return "--param"
    return f"--grid {show(args.grid)[1:-1]}" if not args.param else "--param / --grid"


def _grid_message(message: str, args) -> str:
    """A grid or plan error naming its flag: ``--grid FILE: ...`` for the file's own
    errors, else the message with ``(in --param)`` added unless it names a flag already."""
    if message.startswith("grid file "):
        return "--grid " + message[len("grid file "):]
    message = message.replace("use time model rounds", "use --time-model rounds")
    if "--param" in message or "--grid" in message or "--time-model" in message:
        return message
    return f"{message} (in {_grid_source(args)})"

__all__ = ["register", "cmd_sweep"]


def _spec_from_args(args):
    from ..studies.sweep import SweepSpec, grid_from_items, grid_from_toml

    toml_params, settings = {}, {}
    if args.points is not None:
        grid = _points(args)
    else:
        try:  # grid errors name the grid parameter as typed in --param, and the flag
            if args.grid is not None:
                grid_file, settings = grid_from_toml(args.grid)
                toml_params = grid_file.to_dict()
            grid = grid_from_items(args.param, toml_params)
        except ValueError as exc:
            raise CliError(_grid_message(str(exc), args)) from None
    if not grid.axes:
        raise CliError("give at least one --param NAME=VALUES (or --grid FILE)")
    config = config_from_args(args, models_read_b=True)  # validated even for the model alone: no bad flag passes silently
    pick = lambda flag, key, default: (getattr(args, flag) if getattr(args, flag) is not None  # noqa: E731
                                       else settings.get(key, default))
    what = pick("what", "what", "model")
    simulated = what in ("simulation", "both")
    packet_alone = _check_read(args, settings, grid, what)
    try:
        return SweepSpec(grid=grid, what=what, runs=pick("runs", "runs", 1000), seed=pick("seed", "seed", 0),
                         time_model=pick("time_model", "time-model", None), law=pick("law", "law", "paper"),
                         sim_config=config if simulated or packet_alone else None,
                         sim_overrides=link_overrides(args) if simulated else None,
                         engine=args.engine if args.engine is not None else "auto")
    except ValueError as exc:
        raise CliError(flag_message(str(exc))) from None


def _points(args):
    """The design of ``--points FILE.csv`` (a header of names, one point per row), with the
    models of a ``--param model=...`` beside it."""
    import csv

    from ..studies.sweep import canonical_name, design_from_points, parse_values

    if args.grid is not None:
        raise CliError("give --points or --grid, not both")
    models = None
    for item in args.param:
        name, _, values = item.partition("=")
        try:
            is_model = canonical_name(name) == "model"
        except ValueError:
            is_model = False
        if not is_model:
            raise CliError(f"--param {show(item)[1:-1]}: --points lists every value of its points; only "
                           "--param model=NAMES may join it")
        try:
            models = parse_values("model", values)
        except ValueError as exc:
            raise CliError(f"{exc} (in --param)") from None
    where = show(str(args.points))[1:-1]
    try:
        with open(args.points, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise CliError(f"--points {where}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error, ValueError) as exc:  # ValueError: a NUL in the name
        raise CliError(f"--points {where}: not a CSV file of points ({exc})") from None
    if not rows:
        raise CliError(f"--points {where}: no points (a header of names, then one point per row)")
    for i, r in enumerate(rows):
        if None in r or None in r.values():
            raise CliError(f"--points {where}, line {i + 2}: {'more' if None in r else 'fewer'} values than names")
    try:
        return design_from_points(rows, models=models)
    except ValueError as exc:
        text = str(exc)
        for i in range(len(rows) - 1, -1, -1):  # points[i] is the file's line i + 2
            text = text.replace(f"points[{i}]", f"line {i + 2}")
        raise CliError(f"--points {where}: {text}") from None


def _given_link_flags(args) -> list[str]:
    """The simulator's flags (add_link_flags) given on the command line, as typed. Those
    with a default other than None (defined in cli/common.py) count where they differ
    from it; ``--stack`` is left to the caller."""
    from ..sim.config import SimConfig

    d = SimConfig()
    out = []
    for f in ("link_rate_bps", "delay_s", "header_bytes", "delack_timeout_s", "min_rto_s", "initial_rto_s",
              "max_rto_s", "clock_granularity_s", "sender", "rtt_sampling", "quick_acks", "fin", "prr",
              "rack_tlp", "recovery", "rto_rule", "lt_mode", "p_ack", "queue_packets"):
        v = getattr(args, f, None)
        default = getattr(d, f, None) if f in ("link_rate_bps", "rto_rule", "lt_mode", "p_ack",
                                               "queue_packets") else None
        if v is None or v == default:
            continue
        flag = "--" + f.replace("_", "-")
        out.append(flag.replace("--", "--no-", 1) if v is False else flag)
    return out


def _check_read(args, settings, grid, what) -> bool:
    """Refuse (one line, exit 2) a flag or grid-file setting that no row of this sweep
    reads: the simulator's (--runs, --seed, --engine, the link flags) when ``what`` is
    model, the fluid model's (--law, --time-model) when the sweep has no fluid rows, and
    --stack when neither the simulator nor the packet model runs. True when --stack sets
    up the packet model alone (``what`` model)."""
    from ..studies.sweep.plan import model_axis

    simulated = what in ("simulation", "both")
    models = (model_axis(grid) or ("fluid",)) if what != "simulation" else ()
    rows = f"--what {what}" + (f" with model{'s' if len(models) > 1 else ''} {', '.join(models)}"
                               if model_axis(grid) is not None and models else "")
    stack = getattr(args, "stack", None)
    stack_given = stack is not None and stack != "rfc"  # its default is rfc (cli/common.py)
    if args.engine is not None:  # a bad value is named as such first
        from ..checks import check_choice
        from ..sim.runner import ENGINES

        try:
            check_choice("--engine", args.engine, ENGINES)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    if not simulated:
        sim = [f for f, v in (("--runs", args.runs), ("--seed", args.seed), ("--engine", args.engine)) if v is not None]
        sim += [f"{k} in --grid" for k, a in (("runs", args.runs), ("seed", args.seed)) if k in settings and a is None]
        sim += _given_link_flags(args)
        if stack_given and "packet" not in models:
            sim.append("--stack")
        if sim:
            them = "it" if len(sim) == 1 else "them"
            raise CliError(f"{', '.join(sim)}: set{'s' if len(sim) == 1 else ''} up the simulated rows, and {rows} "
                           f"computes none{' (--stack also sets up the packet model)' if '--stack' in sim else ''}; "
                           f"give --what simulation or both, or drop {them}")
    if "fluid" not in models:
        fl = [f for f, a, k in (("--law", "law", "law"), ("--time-model", "time_model", "time-model"))
              if getattr(args, a) is not None or k in settings]
        if fl:
            them = "it" if len(fl) == 1 else "them"
            raise CliError(f"{', '.join(fl)}: read by the fluid model only, and {rows} computes no fluid rows; "
                           f"drop {them}")
    return not simulated and stack_given


def _check_out(args) -> None:
    """--out and --json: a file (.csv or .parquet), ``-`` (CSV on stdout) or JSON on stdout."""
    from ..studies.sweep.table import check_table_name

    if args.out is None and not args.json:
        raise CliError("give --out FILE (.csv or .parquet, resumable), --out - (CSV on stdout) or --json "
                       "(JSON on stdout)")
    if args.out == "-" and args.json:
        raise CliError("--out - and --json both print the table on stdout: give one")
    if args.out in (None, "-"):  # the table is computed whole and printed: nothing to resume or rewrite
        unread = [f for f, given in (("--force", args.force), ("--flush-every-s", args.flush_every != 1.0)) if given]
        if unread:
            raise CliError(f"{', '.join(unread)}: read{'s' if len(unread) == 1 else ''} with --out FILE only (a table "
                           f"printed on stdout is never resumed or rewritten); drop {'it' if len(unread) == 1 else 'them'}")
        return
    if not str(args.out).strip():
        raise CliError(f"--out must name a file, got {show(args.out)}")
    try:
        check_table_name(args.out)
    except ValueError as exc:
        raise CliError(f"--{exc}".replace("give one of those", "give one of those, or --out - for stdout"))


def cmd_sweep(args) -> int:
    from ..studies.sweep import estimate_sweep, plan_sweep, require_pyarrow

    from ..checks import BudgetError, check_real

    _check_out(args)
    spec = _spec_from_args(args)
    jobs_flag, jobs_value = "--jobs", args.jobs
    if sum(x is not None for x in (jobs_value, args.scheduler, args.dask_local)) > 1:
        raise CliError(f"give one of {jobs_flag}, --scheduler and --dask-local")
    jobs = (os.cpu_count() or 1) if jobs_value is None else check_workers(jobs_flag, jobs_value)
    if args.dask_local is not None:
        check_workers("--dask-local", args.dask_local)
    try:
        check_real("flush_interval_s", args.flush_every, low=0.0)
    except ValueError as exc:
        raise CliError(str(exc).replace("flush_interval_s", "--flush-every-s")) from None
    workers = args.dask_local or (jobs if args.scheduler is None else 1)
    try:  # the cost first (cheap), then every point validated, all before any work
        note = estimate_sweep(spec).check(workers)
    except BudgetError as exc:
        raise CliError(f"{exc} (in {_grid_source(args)}, --runs, --jobs)") from None
    if note:
        warn(note)
    try:
        plan = plan_sweep(spec)
        if args.out not in (None, "-"):
            require_pyarrow(args.out)
    except BudgetError as exc:
        raise CliError(f"{exc} (in {_grid_source(args)})") from None
    except ValueError as exc:
        raise CliError(_grid_message(str(exc), args) if not str(exc).startswith("writing ") else str(exc)) from None
    if args.out in (None, "-"):
        return _run(args, spec, plan, jobs)
    from ..studies.export import undo_folders

    with undo_folders(os.path.dirname(os.path.abspath(args.out))):  # a failed sweep leaves no folder it made
        check_out_file("--out", args.out)
        return _run(args, spec, plan, jobs)


def _run(args, spec, plan, jobs) -> int:
    from ..studies.export import json_text
    from ..studies.lock import OutputBusy
    from ..studies.sweep import SweepInterrupted, run_sweep

    to_file = args.out not in (None, "-")
    for note in spec.comparison_notes():  # model and simulator differ here by design: say so
        print(f"latency-model: note: {note}", file=sys.stderr)
    progress = not args.quiet and sys.stderr.isatty()
    client = cluster = None
    if args.scheduler is not None or args.dask_local is not None:
        client, cluster = _dask_client(args)
    try:
        report = run_sweep(spec, args.out if to_file else None, jobs=jobs, client=client, force=args.force,
                           progress=progress, command=["latency-model", *sys.argv[1:]], plan=plan,
                           flush_interval_s=args.flush_every)
    except OSError as exc:
        raise CliError(os_error_message(exc, "--out")) from None
    except OutputBusy as exc:  # another sweep (or command) is writing this file
        raise CliError(f"--{exc}") from None
    except SweepInterrupted as exc:
        r = exc.report
        if to_file:
            print(f"latency-model: interrupted: {r.rows_resumed + r.rows_computed} of {r.n_rows} rows saved "
                  f"in {args.out}; rerun the same command to resume", file=sys.stderr)
        else:
            print(f"latency-model: interrupted: {r.rows_computed} of {r.n_rows} rows computed, none printed "
                  "(the table is printed whole at the end; --out FILE saves and resumes)", file=sys.stderr)
        return 130
    except ValueError as exc:
        raise CliError(flag_message(str(exc)).replace("flush_interval_s", "--flush-every-s")) from None
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    if report.damaged:  # cut short by a crash or a full disk, or edited: never kept
        n = len(report.damaged)
        print(f"latency-model: note: {args.out}: {n} damaged row{'s' if n > 1 else ''} found on resuming and "
              f"recomputed ({'; '.join(report.damaged[:3])}{'; ...' if n > 3 else ''})", file=sys.stderr)
    if args.json:
        from .. import __version__

        print(json_text({**report.to_dict(), "version": __version__}))
    elif not to_file:
        import csv

        w = csv.DictWriter(sys.stdout, fieldnames=list(report.columns), lineterminator="\n")
        w.writeheader()
        w.writerows(report.rows)
    if to_file:
        print(f"wrote {report.out} ({report.n_rows} rows, {report.n_points} grid points; "
              f"{report.rows_resumed} resumed, {report.rows_computed} computed in {report.seconds:.1f} s) "
              f"and {report.out}.json", file=sys.stderr if args.json else sys.stdout)
    return 0


def _dask_client(args):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise CliError("--scheduler and --dask-local need dask.distributed "
                       "(pip install 'latency_model[dask]')") from None
    if args.scheduler is not None:
        try:
            return Client(args.scheduler, timeout="10s"), None
        except (OSError, TimeoutError) as exc:
            raise CliError(f"--scheduler: cannot reach the Dask scheduler at {show(args.scheduler)}: {exc}") from None
        except (ValueError, TypeError) as exc:
            raise CliError(f"--scheduler {show(args.scheduler)}: {exc}") from None
    n = check_workers("--dask-local", args.dask_local)
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, dashboard_address=None)
    return Client(cluster), cluster


def _sweep_flags(p) -> None:
    from ..studies.sweep import WHAT

    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUES",
                   help="a grid axis (repeatable): any TcpParams field (p, rtt, w0, wss, rwnd, b, dup-t, "
                        "dup-lt, mss, rto, ...), size-packets, size-bytes, variant, rule, stack, model (fluid, packet, "
                        "csa, pftk: one row per model) or rule-param.X; "
                        "VALUES a,b,c, a:b[:step] (inclusive) or logspace:a:b:n")
    p.add_argument("--grid", default=None, metavar="FILE.toml",
                   help="grid file: a [params] table plus optional what, runs, seed, time-model, law")
    p.add_argument("--what", choices=WHAT, default=None, help="model, simulation or both (model)")
    p.add_argument("--runs", type=number, default=None, help="simulated transfers per point (1000)")
    p.add_argument("--seed", type=number, default=None, help="root seed of the simulator (0)")
    p.add_argument("--time-model", choices=["fluid", "rounds"], default=None,
                   help="solver time model (default: fluid, or rounds for a rule without a continuous law)")
    p.add_argument("--law", choices=["paper", "exact"], default=None, help="loss-count law (paper)")
    p.add_argument("--engine", default=None, help="simulator engine (auto; same results)")
    p.add_argument("--points", default=None, metavar="FILE.csv",
                   help="evaluate these points instead of a grid: a header of names (as --param's), one point "
                        "per row, each with size-packets or size-bytes (a Latin hypercube, a SALib sample)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="output table, resumable: .csv, or .parquet (needs pyarrow); - prints CSV on stdout")
    p.add_argument("--json", action="store_true",
                   help="print the table as JSON on stdout (with --out FILE also written there)")
    p.add_argument("--force", action="store_true", help="start over instead of resuming from FILE")
    g = p.add_argument_group("executor (one of)")
    add_jobs_flag(g, help="local worker processes; the same results for any value (all cores)")
    g.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a running dask.distributed scheduler")
    g.add_argument("--dask-local", type=number, default=None, metavar="N", help="start a Dask LocalCluster of N workers")
    hide(p.add_argument("--flush-every-s", "--flush-every", dest="flush_every", type=number, default=1.0,
                        metavar="SECONDS", help="rewrite FILE with the finished points at most this often "
                                                "(%(default)s; always at the end and on Ctrl-C)"), "--flush-every")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_link_flags(p)


def register(sub) -> None:
    """Register ``sweep`` on the subparsers ``sub``."""
    add_command(sub, "sweep", help="the model, the simulator or both over a parameter grid -> one tidy "
                "table (CSV or Parquet), resumable, on local cores or a Dask cluster",
                func=cmd_sweep, flags=_sweep_flags)
