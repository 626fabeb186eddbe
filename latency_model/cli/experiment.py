"""``latency-model experiment NAME``: the papers' multi-flow experiments on the shared bottleneck.

This module holds the ``experiment`` group and what its commands share (output as text or
JSON, ``--out`` files, flag names in errors); one module per experiment registers its
command (:mod:`.experiment_btcp`, :mod:`.experiment_smoothtcp`, :mod:`.experiment_ngwa`,
:mod:`.experiment_ass`). Errors are raised as :class:`~latency_model.cli.common.CliError`
or ``ValueError`` (one line, exit status 2).
"""

from __future__ import annotations

import math
from pathlib import Path

from ..studies.export import json_safe, json_text
from ..values import show
from .common import CliError, add_command, add_commands, check_out_dir

__all__ = ["register", "ci_text", "json_safe", "items", "names", "out_dir", "flag_error", "emit"]


def ci_text(mean: float, lo: float, hi: float, fmt: str) -> str:
    """``mean [lo, hi]`` in format ``fmt``; ``-`` without a mean, the mean alone without a CI."""
    if math.isnan(mean):
        return "-"
    if math.isnan(lo):
        return format(mean, fmt)
    return f"{format(mean, fmt)} [{format(lo, fmt)}, {format(hi, fmt)}]"


def items(flag: str, text: str, what: str) -> list[str]:
    """The stripped items of the comma-separated list ``text`` given as ``flag``; an empty
    item (``2,,10``, a trailing comma) or an empty list is a one-line error naming the flag,
    worded as the shared size flags' (``--size-packets must be a number, list or range, got ''``)."""
    parts = [t.strip() for t in str(text).split(",")]
    if not any(parts):
        raise CliError(f"{flag} must list at least one value, got {show(text)}")
    if not all(parts):
        raise CliError(f"{flag} must be a comma-separated list of {what}, got '' (an empty item in "
                       f"{show(text)})")
    return parts


def names(values, flag: str = "--variants") -> tuple:
    """Names (variants, rules) given as ``flag``: a list read by the list flag
    (:func:`~latency_model.cli.common.add_list`), or comma-separated text; an empty item is an
    error (:func:`items`)."""
    if isinstance(values, str):
        return tuple(items(flag, values, "names"))
    return tuple(values)


def out_dir(args) -> Path | None:
    """``--out`` as a directory path (None if not given), checked (and created) before any work
    (:func:`~latency_model.cli.common.check_out_dir`): a file there, an empty name or a folder
    that cannot be made is a one-line error naming ``--out``."""
    if args.out is None:
        return None
    if Path(args.out).is_file():
        raise CliError(f"--out must be a directory, got the file {show(args.out)}")
    from ..studies.export import missing_folders
    from ..studies.lock import OutputBusy, hold

    made = missing_folders(args.out)
    out = Path(check_out_dir("--out", args.out))
    try:  # one writer per folder until the command ends (released by main; the folders made go if left empty)
        hold(out, f"latency-model experiment {args.experiment}", remove_if_empty=made)
    except OutputBusy as exc:
        raise CliError(f"--{exc}") from None
    return out


def flag_error(exc: ValueError, flags: dict) -> CliError:
    """The experiment's ValueError with its leading field name replaced by the flag the
    user typed (``flags``: field -> flag)."""
    msg = str(exc)
    field = msg.split(" ", 1)[0]
    return CliError(flags.get(field, field) + msg[len(field):])


def emit(args, res, text, write) -> int:
    """Print an experiment's result: its JSON (``--json``; NaN as null, with the package
    version) or ``text``; with ``--out``, ``write(out_dir, data)`` first writes the files and
    returns their paths (listed after the text)."""
    from .. import __version__

    data = json_safe(res.to_dict())
    data["version"] = __version__
    out = out_dir(args)
    from ..studies.export import undo_files

    with undo_files():  # a failed write (a full disk) leaves none of the files
        paths = write(out, data) if out is not None else []
    if args.json:
        print(json_text(data))
    else:
        print(text)
        if paths:
            print("\nwrote " + ", ".join(str(p) for p in paths))
    return 0


def cmd_experiment_list(args) -> int:
    """``latency-model experiment`` alone: the experiments, one line each (``--json``: a list)."""
    rows = [{"name": a.dest, "help": a.help} for a in args.experiments_action._choices_actions]
    if args.json:
        print(json_text({"experiments": rows}))
        return 0
    width = max(len(r["name"]) for r in rows) + 2
    print("experiments (latency-model experiment NAME --help for each one's flags):")
    for r in rows:
        print(f"  {r['name']:<{width}}{r['help']}")
    return 0


def register(sub):
    """Register the ``experiment`` group on the subparsers ``sub``; returns its subparsers,
    on which each experiment module registers its command. The group alone lists them."""
    p = add_command(sub, "experiment", help="the papers' multi-flow experiments on the shared bottleneck "
                    "(alone: list them)", func=cmd_experiment_list)
    p.add_argument("--json", action="store_true", help="print the list as one JSON object")
    exps = add_commands(p, dest="experiment", metavar="NAME")
    exps.required = False
    p.set_defaults(experiments_action=exps)
    return exps
