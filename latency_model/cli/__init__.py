"""Command-line interface: ``latency-model <command> ...``.

One module per command group, each registering its commands on the parser built here:
:mod:`.model` (``tables``, ``thresholds``, ``latency``, ``rules``), :mod:`.repro`
(``reproduce``, ``validate``, ``plot``), :mod:`.sim` (``simulate``, ``single-loss``,
``trace``), :mod:`.experiment` (the ``experiment`` group; :mod:`.experiment_btcp`,
:mod:`.experiment_smoothtcp`, :mod:`.experiment_ngwa`, :mod:`.experiment_ass`) and
:mod:`.sweep`. What they share (errors, the TCP, size and path flags, registration) is in
:mod:`.common`; they import from there, never from this package.

Start-up: only the flags of the command being run are added, and a command imports its
implementation when it runs, so ``latency-model --help``, ``thresholds``, ``tables`` and
``rules`` import neither scipy, matplotlib, numba nor (but for the simulated column of
``tables``) the simulator.
"""

from __future__ import annotations

import os
import sys

from . import (experiment, experiment_ass, experiment_btcp, experiment_ngwa, experiment_smoothtcp, model, repro,
               sim, sweep)
from .common import PROG, CliError, Parser, add_commands, add_flags, flag_message

__all__ = ["main", "build_parser", "CliError"]


def build_parser(argv: list[str] | None = None) -> Parser:
    """The ``latency-model`` argument parser.

    Parameters
    ----------
    argv : list of str, optional
        The command line to be parsed: only the flags of the command it names are added
        (cheap start-up). ``None`` adds every command's flags.
    """
    from .. import __version__

    parser = Parser(prog=PROG, description="Latency of short TCP transfers: fluid model and packet simulator.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = add_commands(parser, dest="command", metavar="COMMAND")
    model.register(sub)  # tables, thresholds, latency, rules
    repro.register(sub)  # reproduce, validate, plot
    sim.register(sub)  # simulate, single-loss, trace
    exps = experiment.register(sub)  # experiment NAME
    for module in (experiment_btcp, experiment_smoothtcp, experiment_ngwa, experiment_ass):
        module.register(exps)
    sweep.register(sub)  # sweep
    add_flags(parser, argv)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``latency-model`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{PROG}: error: {flag_message(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `latency-model tables --json | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
