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
from .common import CliError, add_command, add_commands

__all__ = ["register", "ci_text", "json_safe", "names", "out_dir", "flag_error", "emit"]


def ci_text(mean: float, lo: float, hi: float, fmt: str) -> str:
    """``mean [lo, hi]`` in format ``fmt``; ``-`` without a mean, the mean alone without a CI."""
    if math.isnan(mean):
        return "-"
    if math.isnan(lo):
        return format(mean, fmt)
    return f"{format(mean, fmt)} [{format(lo, fmt)}, {format(hi, fmt)}]"


def names(text: str) -> tuple:
    """A comma-separated list of names (variants, rules), blanks dropped."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def out_dir(args) -> Path | None:
    """``--out`` as a directory path (None if not given); a file there is a one-line error."""
    if args.out is None:
        return None
    if Path(args.out).is_file():
        raise CliError(f"--out must be a directory, got the file {args.out!r}")
    return Path(args.out)


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
    paths = write(out, data) if out is not None else []
    if args.json:
        print(json_text(data))
    else:
        print(text)
        if paths:
            print("\nwrote " + ", ".join(str(p) for p in paths))
    return 0


def register(sub):
    """Register the ``experiment`` group on the subparsers ``sub``; returns its subparsers,
    on which each experiment module registers its command."""
    p = add_command(sub, "experiment", help="the papers' multi-flow experiments on the shared bottleneck")
    return add_commands(p, dest="experiment", metavar="NAME")
