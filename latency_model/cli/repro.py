"""``latency-model reproduce | validate | plot``: the paper's Section 4, side by side.

``reproduce`` writes, under ``--out``: ``tables/table{1,2}.csv``; ``figures/figN.{csv,json,png,svg}``
for Figures 4 and 6-10 (model curves and simulated means with 95% CIs); and
``validation/REPORT.md``. Computed pieces are cached in ``--out/.cache`` (keyed by
parameters, seed, runs, package version and source code), so a rerun with unchanged
code and parameters only redraws; ``--force`` recomputes. The work is
:func:`latency_model.studies.reproduce.run_reproduction`, imported when a command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..studies.export import json_text
from ..values import show
from .common import (CliError, add_command, add_jobs_flag, add_stack_flag, check_out_dir, check_out_file,
                     check_workers, os_error_message, warn)

__all__ = ["register"]


def _command(args) -> str:
    """The command line, rebuilt from the parsed flags (the same however it was invoked)."""
    parts = ["latency-model", args.command]
    if args.quick:
        parts.append("--quick")
    if args.out != ".":
        parts += ["--out", str(args.out)]
    if args.jobs is not None:
        parts += ["--jobs", str(args.jobs)]
    if args.force:
        parts.append("--force")
    if getattr(args, "strict", False):
        parts.append("--strict")
    if getattr(args, "kernel_data", None) is not None:
        parts += ["--kernel-data", str(args.kernel_data)]
    if getattr(args, "json", False):
        parts.append("--json")
    return " ".join(parts)


def _jobs(args) -> int | None:
    """``--jobs``, checked as every command's worker count (:func:`~latency_model.cli.common.check_workers`:
    an integer from 1 to 4 x the CPUs); None: all CPUs."""
    if args.jobs is None:
        return None
    return check_workers("--jobs", args.jobs)


def _out(args) -> str:
    """``--out``, by default ``.`` for the rfc stack and ``stack-NAME`` for another, so that a
    run under another stack never overwrites the committed reproduction."""
    from ..sim.profiles import check_stack

    try:
        check_stack(args.stack)
    except ValueError as exc:
        raise CliError(f"--{exc}") from None
    out = args.out if args.out is not None else "." if args.stack == "rfc" else f"stack-{args.stack}"
    return check_out_dir("--out", out)  # before any work: a file, '' or an unwritable folder is refused


def _warn_long(args, jobs) -> None:
    """One warning line when the run is long work (most of its pieces not yet in the cache),
    as every long command gives (:func:`~latency_model.checks.long_work`)."""
    import dataclasses
    import os

    from ..checks import long_work
    from ..studies import reproduce
    from ..studies.figures import reproduce_seconds

    budget = reproduce.QUICK_BUDGET if args.quick else reproduce.DEFAULT_BUDGET  # the budget that will run
    if budget.stack != args.stack:
        budget = dataclasses.replace(budget, stack=args.stack)
    seconds = reproduce_seconds(budget, Path(args.out) / ".cache", jobs=jobs or os.cpu_count() or 1,
                                force=args.force)
    note = long_work(f"{args.command}{' --quick' if args.quick else ''} (pieces not in {Path(args.out) / '.cache'})",
                     seconds)
    if note:
        warn(note)


def _run(args, **options) -> dict:
    """``run_reproduction`` into ``--out``: a failed run leaves no folder it made; another
    run writing there, or a write error (a full disk), is one line naming ``--out``."""
    from ..studies.export import undo_folders
    from ..studies.lock import OutputBusy, hold
    from ..studies.reproduce import run_reproduction

    jobs = _jobs(args)
    with undo_folders(args.out if args.out is not None else "." if args.stack == "rfc" else f"stack-{args.stack}"):
        args.out = _out(args)
        try:
            hold(args.out, _command(args))  # a second writer is refused before any warning or work
            _warn_long(args, jobs)
            res = run_reproduction(args.out, quick=args.quick, jobs=jobs, force=args.force,
                                   command=_command(args), stack=args.stack, **options)
        except OutputBusy as exc:
            raise CliError(f"--{exc}") from None
        except OSError as exc:
            raise CliError(os_error_message(exc, "--out")) from None
    for line in res.get("cache_damaged", ()):  # never used: recomputed
        print(f"latency-model: note: damaged cache entry {line}", file=sys.stderr)
    return res


def cmd_reproduce(args) -> int:
    from ..studies.tables import tables_text
    from ..studies.validate import summary_text

    res = _run(args)
    ev = res["evaluation"]
    if args.json:
        print(json_text({"out": str(args.out), "stack": args.stack, "quick": bool(args.quick),
                         "files": [str(p) for p in res["paths"]], "claims": res["claims"],
                         "validation": {"passed": ev["passed"], "known": ev["known"], "failed": ev["failed"],
                                        "summary": summary_text(ev)},
                         "pieces_computed": res["computed"], "pieces_cached": res["cached"],
                         "seconds_total": res["seconds_total"]}))
        return 0
    print(tables_text(res["tables"]))
    print()
    for cl in res["claims"]:
        if isinstance(cl.get("paper"), float):
            sim = cl["simulation"]
            print(f"{cl['claim']}: model {cl['model']:.0%}, simulation "
                  f"{'-' if sim is None else format(sim, '.0%')}")
    print(f"validation: {summary_text(ev)} (see {Path(args.out) / 'validation' / 'REPORT.md'})")
    print(f"{len(res['paths'])} files under {args.out}; pieces computed {res['computed']}, "
          f"from cache {res['cached']}; {res['seconds_total']:.1f} s")
    return 0


def _kernel_folder(args):
    """``--kernel-data``, checked before any work (a folder with the campaign's ``cells.csv``
    and ``kernel.json``); None: the repository's committed campaign, when present."""
    if args.kernel_data is None:
        return None
    from ..kernel.cells import read_cells, read_path

    try:
        read_cells(args.kernel_data)
        read_path(args.kernel_data)
    except ValueError as exc:
        raise CliError(f"--kernel-data: {str(exc).removeprefix('kernel data: ')}") from None
    return args.kernel_data


def cmd_validate(args) -> int:
    """Exit status 0 when every case passes or fails only as a declared known difference (or
    known kernel gap), 1 on any other failure (``--strict``: on known ones too)."""
    from ..studies.export import atomic_write_text
    from ..studies.validate import (KNOWN_GAP_MEANING, error_text, evaluate_kernel, exit_status, kernel_line,
                                    kernel_report_markdown, kernel_status_text, kernel_summary_text, status_text,
                                    summary_text)

    folder = _kernel_folder(args)
    res = _run(args, progress=not args.json)
    ev = res["evaluation"]
    try:
        kernel = evaluate_kernel(folder, quick=args.quick, cache_dir=Path(args.out) / ".cache", force=args.force)
        report = atomic_write_text(Path(args.out) / "validation" / "KERNEL.md", kernel_report_markdown(kernel))
    except OSError as exc:
        raise CliError(os_error_message(exc, "--out")) from None
    except ValueError as exc:  # the committed data damaged: named, one line
        raise CliError(str(exc)) from None
    status = exit_status(ev, strict=args.strict, kernel=kernel)
    if args.json:
        keep = ("name", "status", "passed", "worst_relative_error", "tolerance", "tolerance_kind",
                "sizes_compared", "known_difference")
        print(json_text({"cases": [{k: c[k] for k in keep} for c in ev["cases"]],
                          "passed": ev["passed"], "known": ev["known"], "failed": ev["failed"],
                          "kernel": kernel, "strict": bool(args.strict), "exit_status": status}))
        return status
    for c in ev["cases"]:
        print(f"{status_text(c):<22}{c['name']:<36} {error_text(c)}")
        if c["status"] == "n/a":
            print(f"{'':<22}{c['why_failed'][:130]}")
        if c["status"] in ("known", "known_not_seen"):
            reason = c["known_difference"]
            print(f"{'':<22}known difference: {reason[:110] + '...' if len(reason) > 110 else reason}")
    if kernel["available"]:
        budget = "quick budget" if args.quick else "the cells' own runs"
        print(f"kernel cells ({kernel['folder']}, Linux {kernel['release']}) against --stack linux, "
              f"{budget} (± the kernel's 95% CI); allowed: 2.5 "
              f"combined SE + 2% of the kernel's mean; every comparison other than pass:")
        for c in kernel["comparisons"]:
            if c["status"] != "pass":
                print(f"{kernel_status_text(c):<26}{kernel_line(c)}")
        print(KNOWN_GAP_MEANING)
    rule = ("--strict: known differences and gaps fail" if args.strict
            else "known differences and gaps do not fail (--strict makes them)")
    print(f"{summary_text(ev)}; {kernel_summary_text(kernel)}; {rule}; exit status {status}; "
          f"report: {Path(args.out) / 'validation' / 'REPORT.md'} and {report.name}")
    return status


def cmd_plot(args) -> int:
    from ..studies.plots import REQUIRED_COLUMNS, check_csv_rows

    path = Path(args.csv)
    if not path.is_file():
        raise CliError(f"csv file not found: {path}")
    if (args.x is None) != (args.y is None):
        raise CliError("give --x and --y together (the columns to draw)")
    if args.x is None:
        given = [f for f, v in (("--hue", args.hue), ("--where", args.where), ("--logx", args.logx),
                                ("--logy", args.logy)) if v]
        if given:
            raise CliError(f"{', '.join(given)}: for a CSV drawn by its columns; give --x and --y with "
                           f"{'it' if len(given) == 1 else 'them'}")
    where = {}
    for item in args.where:
        column, sep, value = item.partition("=")
        if not sep or not column.strip():
            raise CliError(f"--where must be COLUMN=VALUE, got {show(item)}")
        where[column.strip()] = value.strip()
    try:
        header = check_csv_rows(path)  # a cut or non-UTF-8 file is named before any drawing
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.out is not None:  # a stem: STEM.png and STEM.svg are written
        check_out_file("--out", args.out)
    from ..studies.trace_plots import is_trace_csv

    try:
        if args.x is not None:
            from ..studies.plots import draw_columns

            written = draw_columns(path, args.x, args.y, args.hue, where, args.out, logx=args.logx, logy=args.logy)
        elif all(c in header for c in REQUIRED_COLUMNS) or is_trace_csv(path):
            from ..studies.draw import draw_csv

            written = draw_csv(path, args.out)
        else:
            raise CliError(f"csv must have the columns {', '.join(REQUIRED_COLUMNS)} to be drawn as a figure of "
                           f"reproduce; to draw any other CSV name its columns with --x and --y (and --hue, "
                           f"--where COLUMN=VALUE); {path} has {', '.join(header)}")
    except UnicodeDecodeError:
        raise CliError(f"csv file {path} is not UTF-8 text (a figure CSV written by reproduce?)") from None
    except (ValueError, KeyError) as exc:
        raise CliError(str(exc) or f"{path}: not a CSV this command can draw") from None
    if args.json:
        print(json_text({"csv": str(path), "x": args.x, "y": args.y, "hue": args.hue, "where": where,
                         "written": [str(p) for p in written]}))
        return 0
    for p in written:
        print(f"wrote {p}")
    return 0


def _run_flags(p) -> None:
    """Flags of ``reproduce`` and ``validate``."""
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output root: DIR/tables, DIR/figures, DIR/validation, DIR/.cache "
                        "(. for --stack rfc, else stack-NAME)")
    add_stack_flag(p)
    p.add_argument("--quick", action="store_true",
                   help="the same code on a smaller budget (11 simulated sizes x 200 runs, the quick accuracy "
                        "map; used by CI)")
    add_jobs_flag(p)
    p.add_argument("--force", action="store_true", help="recompute, ignoring the cache")


def _reproduce_flags(p) -> None:
    _run_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object (files written, claims, validation)")


def _validate_flags(p) -> None:
    _run_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 on a declared known difference or known kernel gap too (default: only on other "
                        "failures)")
    p.add_argument("--kernel-data", default=None, metavar="DIR",
                   help="the kernel campaign's results (cells.csv, kernel.json) compared with --stack linux "
                        "(default: the repository's validation/linux/results, when present)")


def _plot_flags(p) -> None:
    p.add_argument("csv", help="a tidy CSV written by latency-model: a figures/figN.csv of reproduce "
                               "(drawn as its figure), or any other (sweep, accuracy, experiment) with --x and --y")
    p.add_argument("--x", default=None, metavar="COLUMN", help="column on the horizontal axis (e.g. size_packets)")
    p.add_argument("--y", default=None, metavar="COLUMN", help="column on the vertical axis (e.g. expected_latency_s)")
    p.add_argument("--hue", default=None, metavar="COLUMN", help="one line per value of this column (e.g. variant)")
    p.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                   help="keep the rows with this value (repeatable), e.g. --where p=0.01")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument("--out", default=None, metavar="STEM", help="output path without extension (the CSV's)")
    p.add_argument("--json", action="store_true", help="print one JSON object (the files written)")


def register(sub) -> None:
    """Register ``reproduce``, ``validate`` and ``plot`` on the subparsers ``sub``."""
    add_command(sub, "reproduce", help="regenerate the paper's tables and figures (model and simulation), "
                "and the validation report", func=cmd_reproduce, flags=_reproduce_flags)
    add_command(sub, "validate", help="model against simulator, and the committed Linux kernel cells against "
                "--stack linux: write validation/REPORT.md and KERNEL.md; exit 1 if a case fails other than as a "
                "declared known difference or known kernel gap (--strict: any)", func=cmd_validate,
                flags=_validate_flags)
    add_command(sub, "plot", help="redraw a figure (PNG and SVG) from its tidy CSV", func=cmd_plot,
                flags=_plot_flags)
