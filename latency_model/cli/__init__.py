"""Command-line interface: ``latency-model <command> ...``.

One module per command group, each registering its commands on the parser built here:
:mod:`.model` (``tables``, ``thresholds``, ``latency``, ``rules``), :mod:`.repro`
(``reproduce``, ``validate``, ``plot``), :mod:`.sim` (``simulate``, ``single-loss``,
``trace``), :mod:`.experiment` (the ``experiment`` group; :mod:`.experiment_btcp`,
:mod:`.experiment_smoothtcp`, :mod:`.experiment_ngwa`, :mod:`.experiment_ass`,
:mod:`.experiment_modern`) and
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

from . import (accuracy, experiment, experiment_ass, experiment_btcp, experiment_modern, experiment_ngwa,
               experiment_smoothtcp, kernel, model, repro, sim, sweep)
from ..values import SHOW_CHARS
from .common import PROG, CliError, Parser, add_commands, add_flags, flag_message, os_error_message

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
    for module in (experiment_btcp, experiment_smoothtcp, experiment_ngwa, experiment_ass, experiment_modern):
        module.register(exps)
    sweep.register(sub)  # sweep
    accuracy.register(sub)  # accuracy
    kernel.register(sub)  # kernel
    add_flags(parser, argv)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``latency-model`` console script; returns the exit status.

    Every error is one line on stderr. A user error (bad value, unwritable path, a request
    that cannot fit in memory) exits with status 2; so does a file-system error or a
    MemoryError that a command did not report itself (the last resort: the path and the
    reason, or the allocation that failed). Anything else is a bug: one line saying so,
    exit status 1 (``LATENCY_MODEL_TRACEBACK=1`` shows the traceback).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except CliError as exc:
        return _error(str(exc))
    except ValueError as exc:
        return _error(flag_message(str(exc)))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `latency-model tables --json | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # last resort: commands report their own paths with the flag
        return _error(os_error_message(exc))
    except MemoryError as exc:
        return _error(f"out of memory{': ' + str(exc) if str(exc) else ''} (a smaller request fits; "
                      f"the estimates behind the memory limit are rough)")
    except Exception as exc:  # noqa: BLE001 - a bug: one line, unless asked for the traceback
        if os.environ.get("LATENCY_MODEL_TRACEBACK"):
            raise
        return _error(f"internal error: {type(exc).__name__}: {exc} (a bug: please report it with the "
                      "command line; LATENCY_MODEL_TRACEBACK=1 shows the traceback)", status=1)
    finally:  # the output locks a command took (studies/lock.py) end with it
        lock = sys.modules.get("latency_model.studies.lock")
        if lock is not None:
            lock.release_held()


ERROR_CHARS = 500
"""Longest error line printed (a message listing many names still fits)."""


def _error(message: str, status: int = 2) -> int:
    """Print ``latency-model: error: <message>`` as one line, every long word cut
    (a 100 kB argument is never echoed whole); return ``status``."""
    words = []
    for word in " ".join(str(message).split()).split(" "):
        if len(word) > SHOW_CHARS + 20:
            word = f"{word[:SHOW_CHARS - 20]}...({len(word):,} characters)"
        words.append(word)
    text = " ".join(words)
    if len(text) > ERROR_CHARS:
        text = text[:ERROR_CHARS - 3] + "..."
    print(f"{PROG}: error: {text}", file=sys.stderr)
    return status
