"""Shared parts of the ``latency-model`` command: errors, the parser, the shared flags
(TCP parameters, file sizes, the simulated path) and how a command registers itself.

Every command validates its input up front. Any bad value is reported on one line,
``latency-model: error: <what>``, with exit status 2; never a traceback: a command
raises :class:`CliError` (or ``ValueError``) and :func:`latency_model.cli.main` prints it,
naming the flag (never the internal field) and echoing at most about 80 characters of a
value (:func:`~latency_model.values.show`). Output paths are checked before any work
(:func:`check_out_file`, :func:`check_out_dir`); the cost of a request is estimated first
(:func:`check_budget`): what cannot fit in memory is refused with the estimate and the
limit, what is merely long gets one warning line on stderr (:func:`warn`).

Start-up: a command module registers each command with :func:`add_command` (name, help
line, handler and a function adding its flags) and imports its implementation inside the
handler. :func:`add_flags` adds the flags of the command named on the command line only,
so ``latency-model thresholds`` never imports the simulator, scipy, matplotlib or numba.
Shared TCP flags live in :func:`add_tcp_flags` and are turned into a validated
:class:`~latency_model.params.TcpParams` by :func:`params_from_args`.

One grammar for every command (``tests/test_cli_grammar.py`` walks every parser):
- a flag that takes several values is a list flag (:func:`add_list`): items separated by
  commas or spaces, each number item a value or an inclusive range ``a:b[:step]``
  (``--p 0.01,0.1``, ``--p 0.01 0.1``, ``--size-packets 1:30,40``);
- a parallel command's worker count is ``--jobs`` (:func:`add_jobs_flag`);
- a time is in seconds and its flag ends in ``-s``, a size in bytes ends in ``-bytes``; an old
  name stays a hidden alias (:func:`hide`: ``--rtt`` of ``--rtt-s``);
- every command has ``--json``; a numeric flag refuses a number beyond the float range.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import re
import sys
from typing import TYPE_CHECKING

from ..values import MAX_RANGE_VALUES, range_count, scalar, show

if TYPE_CHECKING:  # annotations only: params imports numpy, which --help does not need
    from ..params import TcpParams
    from ..sim.config import SimConfig

__all__ = [
    "PROG",
    "FIELD_FLAGS",
    "CliError",
    "Parser",
    "add_command",
    "add_flags",
    "number",
    "integer",
    "parse_list",
    "ListAction",
    "add_list",
    "hide",
    "hidden_aliases",
    "add_jobs_flag",
    "add_tcp_flags",
    "add_size_flags",
    "add_link_flags",
    "parse_sizes",
    "sizes_from_args",
    "flag_message",
    "os_error_message",
    "check_out_file",
    "check_out_dir",
    "check_budget",
    "check_workers",
    "warn",
    "cell",
    "params_from_args",
    "params_for_size",
    "config_from_args",
]

PROG = "latency-model"

# TcpParams field -> CLI flag, so that errors name what the user typed.
FIELD_FLAGS = {
    "mss_bytes": "--mss-bytes",
    "rtt_s": "--rtt-s",
    "p": "--p",
    "w0": "--w0",
    "w_ss": "--wss",
    "rwnd": "--rwnd",
    "b": "--b",
    "dup_t": "--dup-t",
    "dup_lt": "--dup-lt",
    "rto_s": "--rto-s",
    "variant": "--variant",
    "rule": "--rule",
    # simulator (SimConfig and the simulate / trace commands)
    "link_rate_bps": "--link-rate-bps",
    "delay_s": "--delay-s",
    "header_bytes": "--header-bytes",
    "delack_timeout_s": "--delack-timeout-s",
    "min_rto_s": "--min-rto-s",
    "initial_rto_s": "--initial-rto-s",
    "max_rto_s": "--max-rto-s",
    "rto_rule": "--rto-rule",
    "lt_mode": "--lt-mode",
    "p_ack": "--p-ack",
    "queue_packets": "--queue-packets",
    "clock_granularity_s": "--clock-granularity-s",
    "sender": "--sender",
    "rtt_sampling": "--rtt-sampling",
    "quick_acks": "--quick-acks",
    "fin": "--fin",
    "prr": "--prr",
    "rack_tlp": "--rack-tlp",
    "recovery": "--recovery",
    "stack": "--stack",
    "pipe_packets": "--pipe-packets",
    "n_rounds": "--rtts",
    "runs": "--runs",
    "seed": "--seed",
    "run": "--run",
    "size_packets": "--size-packets",
    "size_bytes": "--size-bytes",
    "drops segment index": "--drop",
    # command settings
    "engine": "--engine",
    "workers": "--jobs",
    "jobs": "--jobs",
    "flush_interval_s": "--flush-every-s",
    "what": "--what",
    "time_model": "--time-model",
    "law": "--law",
    "eps": "--eps",
    "max_states": "--max-states",
    "iw preset": "--iw",
}



class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def hidden_aliases(action) -> frozenset:
    """The old names of a flag that work but stay out of ``--help`` (:func:`hide`): ``--rtt``
    of ``--rtt-s``, ``--workers`` of ``--jobs``, ..."""
    return getattr(action, "hidden_aliases", frozenset())


class _Formatter(argparse.HelpFormatter):
    """Help without the hidden aliases (:func:`hidden_aliases`) of a flag."""

    def _format_action_invocation(self, action):
        shown = [s for s in action.option_strings if s not in hidden_aliases(action)]
        if shown != list(action.option_strings):
            action = copy.copy(action)
            action.option_strings = shown
        return super()._format_action_invocation(action)

    def _format_args(self, action, default_metavar):
        if isinstance(action, ListAction):  # "--p LIST", not "--p LIST [LIST ...]": commas or spaces
            return self._metavar_formatter(action, default_metavar)(1)[0]
        return super()._format_args(action, default_metavar)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (:class:`CliError`), and whose
    commands add their flags on demand (:func:`add_command`, :func:`add_flags`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self.deferred_flags = None  # function adding this command's flags, until called
        self.commands = None  # the subparsers action of a parser that holds commands

    def error(self, message):  # argparse would print usage and exit; we want one line
        # "argument --jobs/--workers: ..." names the flag by its shown name only
        def name(m):
            for action in self._actions:
                if "/".join(action.option_strings) == m.group(1) and hidden_aliases(action):
                    return "argument " + "/".join(s for s in action.option_strings
                                                  if s not in hidden_aliases(action)) + ":"
            return m.group(0)
        raise CliError(re.sub(r"^argument (\S+?):", name, message))


# ---------------------------------------------------------------------------
# Registration


def add_commands(parser: Parser, dest: str, metavar: str):
    """The (required) subcommands of ``parser``: pass the result to :func:`add_command`."""
    parser.commands = parser.add_subparsers(dest=dest, metavar=metavar)
    parser.commands.required = True
    return parser.commands


def add_command(sub, name: str, *, help: str, func=None, flags=None) -> Parser:
    """Register command ``name`` on the subparsers ``sub``.

    Parameters
    ----------
    sub : argparse subparsers action
        From :func:`add_commands`.
    name, help : str
        The command and its line in ``latency-model --help``.
    func : callable, optional
        Handler ``func(args) -> int`` (exit status); it imports what it runs.
    flags : callable, optional
        ``flags(parser)`` adds the command's flags; called by :func:`add_flags` only
        when the command is the one run (or asked for ``--help``).

    Returns
    -------
    Parser
    """
    p = sub.add_parser(name, help=help)
    if func is not None:
        p.set_defaults(func=func)
    p.deferred_flags = flags
    return p


def add_flags(parser: Parser, argv: list[str] | None = None) -> None:
    """Add the deferred flags of the command that ``argv`` names, through command groups
    (``experiment NAME``); with ``argv`` None, of every command (the full parser)."""
    if parser.deferred_flags is not None:
        flags, parser.deferred_flags = parser.deferred_flags, None
        flags(parser)
    if parser.commands is None:
        return
    if argv is None:
        for child in parser.commands.choices.values():
            add_flags(child)
        return
    # A parser that holds commands takes no option with a value (only -h, --version), so the
    # first word that is not an option names the command (argparse reports a wrong one).
    for i, word in enumerate(argv):
        if not word.startswith("-"):
            if word in parser.commands.choices:
                add_flags(parser.commands.choices[word], argv[i + 1:])
            return


# ---------------------------------------------------------------------------
# Shared flags


def _too_large(text: str, value: int) -> str | None:
    """Why an integer is refused: beyond the float range (every numeric setting becomes a
    float somewhere, and ``float(10**400)`` raises OverflowError)."""
    if abs(value) > FLOAT_MAX:
        return f"{show(text)} is too large (beyond the float range, about {FLOAT_MAX:.1e})"
    return None


FLOAT_MAX = sys.float_info.max


def number(text: str):
    """argparse type: an int when the text is one (so errors echo ``0``, not ``0.0``), else a
    float; a non-zero number that underflows to 0 (``1e-400``) is refused, and so is an
    integer too large for a float (``10**400``: argparse names the flag)."""
    try:
        v = int(text)
    except ValueError:
        pass
    else:
        why = _too_large(text, v)
        if why:
            raise argparse.ArgumentTypeError(why)
        return v
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {show(text)}") from None
    try:
        return scalar(text, "") if v == 0.0 else v
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def integer(text: str) -> int:
    """argparse type: a whole number written as one (``12``), no larger than a float holds."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {show(text)}") from None
    why = _too_large(text, v)
    if why:
        raise argparse.ArgumentTypeError(why)
    return v


# ---------------------------------------------------------------------------
# One grammar for lists: every flag that takes several values


LIST_KINDS = ("number", "integer", "name")


def parse_list(words, flag: str, kind: str = "number") -> list:
    """The values of a list flag: words (spaces) of comma-separated items, each a value or,
    for numbers, an inclusive range ``a:b`` / ``a:b:step`` (``--p 0.01,0.05 0.1``,
    ``--size-packets 1:30,40,50:100:10``).

    At most :data:`~latency_model.values.MAX_RANGE_VALUES` values in all, counted before any
    range is expanded (``1:1e12`` is refused without being built).

    Parameters
    ----------
    words : str or sequence of str
        The text after the flag (argparse gives one string per word).
    flag : str
        The flag, named in every error.
    kind : {"number", "integer", "name"}
        ``number``: ints and floats; ``integer``: whole numbers; ``name``: text, no ranges.

    Raises
    ------
    CliError
        An empty item (``2,,10``), an empty list, a bad number or range, or too many values.
    """
    words = [words] if isinstance(words, str) else list(words)
    parts = []
    for word in words:
        items = [t.strip() for t in str(word).split(",")]
        if not any(items) and len(words) == 1:
            raise CliError(f"{flag} must list at least one value, got {show(word)}")
        if not all(items):
            raise CliError(f"{flag} must be a comma-separated list, got '' (an empty item in {show(word)})")
        parts += items
    if kind == "name":
        return parts
    total = 0
    for part in parts:  # count first
        if ":" in part:
            try:
                total += range_count(flag, part)[3]
            except ValueError as exc:
                raise CliError(str(exc)) from None
        else:
            total += 1
    if total > MAX_RANGE_VALUES:
        count = f"{total:,}" if total < 1e15 else f"about {float(total):.2g}"
        raise CliError(f"{flag} {show(' '.join(words))} gives {count} values, more than the "
                       f"{MAX_RANGE_VALUES:,} one command may take")
    values: list = []
    for part in parts:
        if ":" in part:
            a, b, step, n = range_count(flag, part)
            if all(isinstance(v, int) for v in (a, step)):
                values.extend(a + i * step for i in range(n))
            else:
                values.extend(float(a + i * step) for i in range(n))
            continue
        try:
            values.append((integer if kind == "integer" else number)(part))
        except argparse.ArgumentTypeError as exc:
            if str(exc).startswith("not "):
                what = "an integer" if kind == "integer" else "a number"
                raise CliError(f"{flag} must be {what}, list or range, got {show(part)}") from None
            raise CliError(f"{flag}: {exc}") from None
    if kind == "integer":
        for v in values:
            if v != int(v):
                raise CliError(f"{flag} must give whole numbers, got {v:g}")
        values = [int(v) for v in values]
    return values


class ListAction(argparse.Action):
    """A flag taking several values (:func:`parse_list`): ``--p 0.01,0.1``, ``--p 0.01 0.1`` and
    ``--p 0.01:0.1:0.01`` all work. The flag given again replaces the list, as any flag."""

    def __init__(self, option_strings, dest, kind: str = "number", nargs="+", **kwargs):
        if kind not in LIST_KINDS:
            raise ValueError(f"kind must be one of {LIST_KINDS}, got {kind!r}")
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)
        self.kind = kind

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, parse_list(values, self.option_strings[0], self.kind))


def add_list(group, *flags, kind: str = "number", **kwargs):
    """Add a list flag (:class:`ListAction`) to ``group``; returns the action."""
    kwargs.setdefault("metavar", "NAMES" if kind == "name" else "LIST")
    return group.add_argument(*flags, action=ListAction, kind=kind, **kwargs)


def hide(action, *aliases: str):
    """Keep the old names ``aliases`` of ``action`` working (already among its option strings)
    but out of ``--help``; returns the action."""
    missing = [a for a in aliases if a not in action.option_strings]
    if missing:
        raise ValueError(f"{missing} are not option strings of {action.option_strings}")
    action.hidden_aliases = hidden_aliases(action) | frozenset(aliases)
    return action


JOBS_HELP = "worker processes; the same results for any value"


def add_jobs_flag(group, default=None, help: str | None = None):
    """``--jobs N`` (``--workers`` a hidden alias): the worker processes of a parallel command."""
    shown = help or (f"{JOBS_HELP} (%(default)s)" if default is not None else f"{JOBS_HELP} (all CPUs)")
    return hide(group.add_argument("--jobs", "--workers", dest="jobs", type=number, default=default,
                                   metavar="N", help=shown), "--workers")


def add_tcp_flags(parser: argparse.ArgumentParser) -> None:
    """Add the TCP/path parameter flags shared by the model and simulator commands."""
    from ..params import IW_PRESETS, VARIANTS, TcpParams

    d = TcpParams()
    g = parser.add_argument_group("TCP parameters (paper defaults)")
    hide(g.add_argument("--mss-bytes", "--mss", dest="mss", type=number, default=d.mss_bytes,
                        help="segment size MSS, bytes (%(default)s)"), "--mss")
    # None: not given (the TcpParams default; the simulator refuses an explicit --rtt-s it would ignore)
    hide(g.add_argument("--rtt-s", "--rtt", dest="rtt", type=number, default=None,
                        help=f"round-trip time, seconds ({d.rtt_s:g})"), "--rtt")
    g.add_argument("--p", type=number, default=d.p, help="packet loss probability in [0, 1) (%(default)s)")
    g.add_argument("--w0", type=number, default=None, help=f"initial window W0, packets ({d.w0:g})")
    g.add_argument("--iw", choices=sorted(IW_PRESETS), help="initial window preset (instead of --w0)")
    # None: the TcpParams default, or the command's own (see params_from_args ``defaults``).
    g.add_argument("--wss", type=number, default=None, help=f"initial slow-start threshold, packets ({d.w_ss:g})")
    g.add_argument("--rwnd", type=number, default=None, help=f"receiver window M, packets ({d.rwnd:g})")
    # None: not given (TcpParams' 1; the linux profile's receiver refuses an explicit one it ignores)
    g.add_argument("--b", type=number, default=None, help=f"delayed-ACK factor, packets per ACK ({d.b:g})")
    g.add_argument("--dup-t", type=number, default=d.dup_t, help="fast-retransmit threshold (%(default)s)")
    hide(g.add_argument("--variant", "--variants", dest="variant", default="newreno",
                        help=f"loss recovery: {', '.join([*VARIANTS, 'size-based'])} (%(default)s)"), "--variants")
    g.add_argument("--dup-lt", type=number, default=None, help="Limited Transmit threshold (overrides --variant's)")
    hide(g.add_argument("--rto-s", "--rto", dest="rto", type=number, default=None,
                   help="the paper's fixed RTO (no estimator, no back-off), seconds (default max(1 s, 4 RTT)); "
                        "the packet model and the simulator run RFC 6298's timer unless it is given "
                        "(the simulator with --rto-rule paper)"), "--rto")
    g.add_argument("--rule", default=None,
                   help="window-growth rule (see `latency-model rules`; default standard, --stack linux: cubic)")
    g.add_argument(
        "--rule-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="parameter of the growth rule (repeatable)",
    )


def _parse_rule_params(items: list[str]) -> dict:
    """``--rule-param KEY=VALUE`` items as a dict; a key given twice is an error."""
    out, seen = {}, {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CliError(f"--rule-param must be KEY=VALUE, got {show(item)}")
        if key in out:
            raise CliError(f"--rule-param {show(key)} is given twice ({show(seen[key])} and "
                           f"{show(item.strip())}); give each key once")
        seen[key] = item.strip()
        try:
            out[key] = scalar(value, f"--rule-param {key}")
        except ValueError as exc:
            raise CliError(str(exc)) from None
        why = _too_large(value.strip(), out[key]) if type(out[key]) is int else None
        if why:
            raise CliError(f"--rule-param {key}: {why}")
    return out


def _rule_error(message: str) -> str:
    """A growth-rule error naming the flag: ``--rule`` for the name, ``--rule-param`` for
    a parameter (``beta must be > 0`` -> ``--rule-param beta must be > 0``)."""
    if message.startswith("rule must be"):
        return "--" + message
    if message.startswith("rule ") and " has no parameter " in message:
        return "--rule-param: " + message
    return "--rule-param " + message


def parse_sizes(text, flag: str) -> list[float]:
    """Sizes from ``N``, ``a,b,c`` or an inclusive range ``a:b`` / ``a:b:step`` (all > 0), or
    from a list already read by :class:`ListAction`; at most
    :data:`~latency_model.values.MAX_RANGE_VALUES` sizes in all (:func:`parse_list`)."""
    if isinstance(text, (int, float)):  # a one-size flag (trace)
        text = [text]
    if isinstance(text, str) or not all(isinstance(v, (int, float)) for v in text):
        text = parse_list(text, flag)
    values = []
    for v in text:
        if not (v > 0 and math.isfinite(v)):
            raise CliError(f"{flag} must be finite numbers > 0, got {v:g}")
        values.append(float(v))
    return values


def sizes_from_args(args, mss_bytes: int, *, default: str | None = "1:30", whole: bool = False) -> list[float]:
    """File sizes in bytes from ``--size-packets`` or ``--size-bytes``.

    ``default`` (packets) is used when neither flag is given; ``None`` makes one of
    them required. ``whole`` requires whole bytes (the simulator sends whole segments).
    """
    if args.size_packets is not None and args.size_bytes is not None:
        raise CliError("give --size-packets or --size-bytes, not both")
    if args.size_bytes is not None:
        flag, values = "--size-bytes", parse_sizes(args.size_bytes, "--size-bytes")
    elif args.size_packets is not None or default is not None:
        flag = "--size-packets"
        text = args.size_packets if args.size_packets is not None else default
        values = [v * mss_bytes for v in parse_sizes(text, flag)]
    else:
        raise CliError("give --size-packets or --size-bytes")
    if whole:
        for v in values:
            if v != int(v):
                raise CliError(f"{flag} must give whole bytes, got {v:g} bytes")
        values = [int(v) for v in values]
    return values


def add_size_flags(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    """``--size-packets`` / ``--size-bytes``: N, a list a,b,c, or a range a:b[:step].

    ``default`` is the text shown as the sizes used when neither flag is given (as
    :func:`sizes_from_args` ``default``); ``None`` shows no default (``simulate`` needs one of
    the flags, ``trace`` one size or none with ``--rtts``).
    """
    shown = f" ({default})" if default is not None else ""
    add_list(parser, "--size-packets", default=None, metavar="SIZES",
             help=f"file sizes in packets: N, a,b,c or a:b[:step]{shown}")
    add_list(parser, "--size-bytes", default=None, metavar="SIZES", help="file sizes in bytes, same syntax")


def flag_message(message: str) -> str:
    """Rewrite a TcpParams or SimConfig error so it names the CLI flags (``b must`` ->
    ``--b must``). The leading field is always rewritten; a field elsewhere in the message
    only when its name has an underscore (``max_rto_s``), so a one-letter field such as
    ``p`` or ``b`` in a sentence is left alone, except as the bound of a comparison
    (``w0 must be <= rwnd (30 packets), got 40`` -> ``--w0 must be <= --rwnd (30 packets),
    got 40``). A cross-field message such as ``min_rto_s must be <= max_rto_s (0.5), got min_rto_s=1.0``
    names both flags, whichever was typed.
    """
    for field, flag in FIELD_FLAGS.items():
        if message.startswith(field + " "):
            message = flag + message[len(field):]
            break
    for field, flag in FIELD_FLAGS.items():
        if "_" in field:
            message = re.sub(rf"(?<![\w-]){re.escape(field)}(?=[\s=(),:.]|$)", flag, message)
        elif " " not in field:
            message = re.sub(rf"([<>]=? ){re.escape(field)}(?=[\s=(),:.]|$)", rf"\g<1>{flag}", message)
    return message


# ---------------------------------------------------------------------------
# Output paths, work budgets, warnings and text tables


def os_error_message(exc: OSError, flag: str | None = None) -> str:
    """One line for a file-system error: the flag, the path and the reason
    (``--out f/x.csv: cannot write f/x.csv: Not a directory``)."""
    path = exc.filename if exc.filename is not None else None
    reason = exc.strerror or type(exc).__name__
    where = f"{show(str(path))[1:-1]}: " if path is not None else ""
    text = f"{where}{reason}"
    return f"{flag}: {text}" if flag else text


def check_out_file(flag: str, path) -> str:
    """Check an output file before any work: not empty, not a folder, its folder
    creatable (created now) and writable. Returns the path as given.

    Raises
    ------
    CliError
        ``--out '': give a file name``, ``--out x is a directory ...``, ``--out f/x.csv:
        f is a file, not a directory``, or the reason a folder cannot be made.
    """
    text = str(path)
    if not text.strip():
        raise CliError(f"{flag} must name a file, got {show(text)}")
    if "\0" in text:
        raise CliError(f"{flag} must not contain a NUL character, got {show(text)}")
    if os.path.isdir(text):
        raise CliError(f"{flag} {show(text)} is a directory; give a file name inside it")
    _check_parent(flag, text, os.path.dirname(os.path.abspath(text)))
    return text


def check_out_dir(flag: str, path) -> str:
    """Check an output folder before any work: not empty, not a file, creatable (created
    now) and writable. Returns the path as given."""
    text = str(path)
    if not text.strip():
        raise CliError(f"{flag} must name a directory, got {show(text)}")
    if "\0" in text:
        raise CliError(f"{flag} must not contain a NUL character, got {show(text)}")
    if os.path.exists(text) and not os.path.isdir(text):
        raise CliError(f"{flag} {show(text)} exists and is not a directory")
    _check_parent(flag, text, os.path.abspath(text))
    return text


def _check_parent(flag: str, given: str, folder: str) -> None:
    """Create ``folder`` (and its parents) or say why not; check it is writable."""
    probe = folder
    while not os.path.exists(probe):  # the nearest existing ancestor must be a folder
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if os.path.exists(probe) and not os.path.isdir(probe):
        raise CliError(f"{flag} {show(given)}: {show(probe)[1:-1]} is a file, not a directory")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{flag} {show(given)}: cannot create the directory: {os_error_message(exc)}") from None
    except RecursionError:  # os.makedirs recurses once per missing level
        raise CliError(f"{flag} {show(given)}: cannot create the directory: too many levels") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CliError(f"{flag} {show(given)}: cannot write in {show(folder)[1:-1]} (permission denied)")


def check_budget(what: str, memory_bytes: float, seconds: float) -> None:
    """Refuse a request that cannot fit in memory or would run past the time limit
    (:func:`~latency_model.checks.check_work`); warn (one line) when it is long.

    ``what`` names the request by its flags (``--runs 100000000 x 1 size``).

    Raises
    ------
    CliError
        With the estimate and the limit.
    """
    from ..checks import BudgetError, check_work, long_work

    try:
        check_work(what, memory_bytes, seconds)
    except BudgetError as exc:
        raise CliError(str(exc)) from None
    note = long_work(what, seconds)
    if note:
        warn(note)


def check_workers(flag: str, value) -> int:
    """A worker count: :func:`latency_model.checks.check_jobs` (1 to 4 x the CPUs)."""
    from ..checks import check_jobs

    try:
        return check_jobs(flag, value)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def warn(message: str) -> None:
    """One warning line on stderr: ``latency-model: warning: <message>``."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def cell(value, width: int, fmt: str) -> str:
    """``value`` right-aligned in ``width`` characters with at least one space before it:
    formatted with ``fmt`` (e.g. ``".4f"``), or with ``.4g`` when that would not fit, so
    that extreme values (``--rtt-s 1e12``) never fuse two columns."""
    if isinstance(value, str):
        text = value
    else:
        text = format(value, fmt)
        if len(text) >= width:
            text = format(value, ".4g")
    return " " + text if len(text) >= width else f"{text:>{width}}"


def params_from_args(
    args: argparse.Namespace, size_bytes: float | None = None, defaults: dict | None = None
) -> TcpParams:
    """Validated TcpParams from the shared flags (variant applied; size needed for size-based).

    ``defaults`` replaces the TcpParams defaults of ``w0``, ``w_ss`` and ``rwnd`` for
    flags the user did not give (``trace --rtts`` starts from one packet, no threshold).

    Raises
    ------
    CliError
        With a one-line message naming the flag.
    """
    from ..growth import make_rule
    from ..params import TcpParams, apply_variant, initial_window_bytes

    rule_params = _parse_rule_params(args.rule_param)
    stack = getattr(args, "stack", None)
    rule_name = args.rule
    if rule_name is None:  # a simulated stack's own rule (Linux: cubic), for the packet model too
        rule_name = "standard"
        if stack is not None:
            from ..sim.profiles import check_stack

            try:
                rule_name = check_stack(stack).params.get("rule", (rule_name, ""))[0]
            except ValueError as exc:
                raise CliError(flag_message(str(exc))) from None
    try:
        rule = make_rule(rule_name, **rule_params)
    except ValueError as exc:
        raise CliError(_rule_error(str(exc))) from None
    try:
        dflt = {"w0": TcpParams.w0, "w_ss": TcpParams.w_ss, "rwnd": TcpParams.rwnd, **(defaults or {})}
        mss = args.mss
        w0 = args.w0
        if getattr(args, "iw", None) is not None and w0 is not None:
            # the preset sets W0: a --w0 given with it was silently replaced
            raise CliError(f"give --iw or --w0, not both (--iw {args.iw} sets the initial window W0)")
        if args.iw is not None:
            mss_int = TcpParams(mss_bytes=mss).mss_bytes  # validates --mss-bytes first
            w0 = initial_window_bytes(args.iw, mss_int) / mss_int
        if w0 is None and stack is not None:  # a stack's own default (Linux: IW 10)
            from ..sim.profiles import check_stack

            w0 = check_stack(stack).params.get("w0", (None, ""))[0]
        base = TcpParams(
            mss_bytes=mss,
            rtt_s=TcpParams.rtt_s if args.rtt is None else args.rtt,
            p=args.p,
            w0=dflt["w0"] if w0 is None else w0,
            w_ss=dflt["w_ss"] if args.wss is None else args.wss,
            rwnd=dflt["rwnd"] if args.rwnd is None else args.rwnd,
            b=TcpParams.b if args.b is None else args.b,
            dup_t=args.dup_t,
            rto_s=args.rto,
            rule=rule,
        )
        if args.variant == "size-based" and size_bytes is None:
            size_bytes = base.mss_bytes  # any size: the caller re-applies per size
        params = apply_variant(base, args.variant, size_bytes)
        if args.dup_lt is not None:
            params = params.replace(dup_lt=args.dup_lt)
        return params
    except ValueError as exc:
        raise CliError(flag_message(str(exc))) from None


def params_for_size(args, base: TcpParams, size_bytes: float) -> TcpParams:
    """``base``, or for ``--variant size-based`` the variant this file size resolves to."""
    return params_from_args(args, size_bytes) if args.variant == "size-based" else base


STACK_HELP = "rfc, ns3, linux"


def add_stack_flag(parser) -> None:
    """``--stack rfc|ns3|linux``: the simulator's stack profile (``SimConfig.profile``).

    The names are spelled out here (:data:`STACK_HELP`, checked against
    ``sim.profiles.STACK_NAMES`` by the tests) so that building the parser of a model
    command does not import the simulator; the value is validated when the profile is built.
    """
    parser.add_argument("--stack", default="rfc", metavar="NAME",
                        help=f"simulated stack profile: {STACK_HELP} (%(default)s); "
                             "explicit flags override its values (docs/simulator.md)")


# Link flags whose default comes from the stack profile: None means "the profile's".
_PROFILE_FLAGS = ("header_bytes", "delack_timeout_s", "min_rto_s", "initial_rto_s", "max_rto_s",
                  "clock_granularity_s", "sender", "rtt_sampling", "quick_acks", "fin", "prr",
                  "rack_tlp")
_LINK_FLAGS = ("link_rate_bps", "delay_s", "rto_rule", "lt_mode", "p_ack", "queue_packets")


def add_link_flags(parser) -> None:
    """Flags of :class:`~latency_model.sim.SimConfig` (stack profile, path, timers, rule choices)."""
    from ..sim.config import LT_MODES, RTO_RULES, RTT_SAMPLING, SENDERS, SimConfig
    from ..sim.profiles import RECOVERIES

    d = SimConfig()
    g = parser.add_argument_group("simulated stack, path and timers (--stack sets the defaults marked *)")
    add_stack_flag(g)
    g.add_argument("--link-rate-bps", type=number, default=d.link_rate_bps,
                   help="bottleneck rate C, bit/s (%(default)g)")
    g.add_argument("--delay-s", type=number, default=None,
                   help="one-way propagation delay d, seconds (default rtt/2)")
    g.add_argument("--header-bytes", type=number, default=None,
                   help=f"* per-packet header overhead, bytes ({d.header_bytes})")
    g.add_argument("--delack-timeout-s", type=number, default=None,
                   help=f"* delayed-ACK timer, seconds ({d.delack_timeout_s:g})")
    g.add_argument("--min-rto-s", type=number, default=None,
                   help=f"* RFC 6298 minimum RTO, seconds ({d.min_rto_s:g})")
    g.add_argument("--initial-rto-s", type=number, default=None,
                   help=f"* RFC 6298 initial RTO, seconds ({d.initial_rto_s:g})")
    g.add_argument("--max-rto-s", type=number, default=None,
                   help=f"* RFC 6298 maximum RTO, seconds ({d.max_rto_s:g})")
    g.add_argument("--clock-granularity-s", type=number, default=None,
                   help=f"* RFC 6298 clock granularity G, seconds ({d.clock_granularity_s:g})")
    g.add_argument("--sender", default=None,
                   help=f"* sender machinery: {', '.join(SENDERS)} ({d.sender})")
    g.add_argument("--rtt-sampling", default=None,
                   help=f"* RTT samples: {', '.join(RTT_SAMPLING)} ({d.rtt_sampling})")
    g.add_argument("--quick-acks", type=number, default=None,
                   help=f"* ACKs sent at once at connection start ({d.quick_acks})")
    g.add_argument("--fin", action=argparse.BooleanOptionalAction, default=None,
                   help="* the last segment carries FIN and is ACKed at once (--fin); --no-fin: "
                        "the connection stays open (ns-2's one-way TCP)")
    g.add_argument("--prr", default=None,
                   help="* cwnd reduction in SACK recovery: ssrb, crb, off (RFC 6937; off: RFC 6675's "
                        "cwnd = ssthresh); sender sack only")
    g.add_argument("--rack-tlp", action=argparse.BooleanOptionalAction, default=None,
                   help="* RACK-TLP loss detection and tail loss probe (RFC 8985); sender sack only")
    g.add_argument("--recovery", default=None,
                   help="loss recovery by name, instead of --sender/--prr/--rack-tlp: "
                        + ", ".join(RECOVERIES) + " (the stack's)")
    g.add_argument("--rto-rule", default=d.rto_rule,
                   help=f"timer rule: {', '.join(RTO_RULES)} (%(default)s; paper = fixed max(1 s, 4 RTT) or --rto-s)")
    # None: not given (SimConfig's default); an explicit one without Limited Transmit is refused
    g.add_argument("--lt-mode", default=None,
                   help=f"meaning of dup_lt: {', '.join(LT_MODES)} ({d.lt_mode}); needs Limited Transmit "
                        "(--variant lt, proposal, size-based or --dup-lt)")
    g.add_argument("--p-ack", type=number, default=d.p_ack,
                   help="ACK loss probability in [0, 1) (%(default)s)")
    g.add_argument("--queue-packets", type=number, default=d.queue_packets, metavar="B",
                   help="drop-tail buffer of the bottleneck, packets waiting (default unlimited)")


def link_overrides(args) -> dict:
    """The profile-controlled SimConfig fields the user gave as flags (they win over any stack);
    ``--recovery NAME`` gives its fields (:data:`~latency_model.sim.profiles.RECOVERIES`)."""
    given = {f: getattr(args, f) for f in _PROFILE_FLAGS if getattr(args, f, None) is not None}
    recovery = getattr(args, "recovery", None)
    if recovery is None:
        return given
    from ..sim.profiles import recovery_overrides

    clash = [FIELD_FLAGS.get(f, f) for f in ("sender", "prr", "rack_tlp") if f in given]
    if clash:
        raise CliError(f"--recovery sets the sender, PRR and RACK-TLP; give it or {', '.join(clash)}, not both")
    try:
        return {**recovery_overrides(recovery), **given}
    except ValueError as exc:
        raise CliError("--" + str(exc)) from None


def _sender_source(args, name: str) -> str:
    """The flag that chose the simulated sender, as typed: ``--sender ns3``, ``--recovery
    NAME`` or ``--stack NAME`` (the profile's sender)."""
    if getattr(args, "sender", None) is not None:
        return f"--sender {args.sender}"
    if getattr(args, "recovery", None) is not None:
        return f"--recovery {args.recovery}"
    return f"--stack {name}"


def _check_ns3_flags(args, name: str, values: dict) -> None:
    """Refuse, naming the flags typed, what ns-3's sender cannot run: a timer other than
    its RFC 6298 one, RTT sampling other than its own, the paper's Limited Transmit
    (SimConfig / sim.ns3 would name the fields ``sender``, ``rtt_sampling``, ``rto_rule``)."""
    from ..sim.profiles import check_stack

    try:
        prof_sender = check_stack(name).config.get("sender", ("rfc", ""))[0]
    except ValueError:
        return  # an unknown --stack: SimConfig.profile reports it
    sender = values.get("sender", prof_sender)
    sampling = getattr(args, "rtt_sampling", None)
    if sender == "ns3":
        who = _sender_source(args, name)
        if sampling is not None and sampling != "ns3":
            raise CliError(f"--rtt-sampling {sampling}: {who} samples RTTs as ns-3 does (its timer is part "
                           "of its sender); drop --rtt-sampling, or choose another --sender")
        if values.get("rto_rule") == "paper":
            raise CliError(f"--rto-rule paper: {who} runs ns-3's own RFC 6298 timer, not the paper's fixed "
                           "RTO; drop --rto-rule paper, or choose another --stack or --sender")
        if values.get("initial_rto_s") is not None and getattr(args, "initial_rto_s", None) is not None:
            # sim/ns3.py ns3_initial_rtt: the first RTO comes from the handshake's sample, as in
            # ns-3's tcp-socket-base.cc (the SYN-ACK's RTT feeds the estimator before any data)
            raise CliError(f"--initial-rto-s: {who} takes its first RTO from the handshake's RTT sample, as "
                           "ns-3 does (max(SRTT + 4 RTTVAR, --min-rto-s) after the SYN-ACK), so it does not "
                           "read it; drop --initial-rto-s, or choose another --sender")
        if values.get("lt_mode") not in (None, "rfc3042"):
            raise CliError(f"--lt-mode {values['lt_mode']}: {who} implements Limited Transmit as ns-3 does "
                           "(--lt-mode rfc3042)")
    elif sampling == "ns3":
        raise CliError(f"--rtt-sampling ns3 is ns-3's sender's own sampling: give it only with the ns3 sender "
                       f"(--stack ns3 or --sender ns3), not with sender {sender}")


# SimConfig fields the paper timer (rto_rule "paper": a fixed RTO, no estimator) never reads
_RFC6298_ONLY = ("min_rto_s", "initial_rto_s", "max_rto_s", "clock_granularity_s")
# Receiver settings that only change when an ACK is sent: with b = 1 every segment is ACKed at once
_DELACK_FLAGS = ("delack_timeout_s", "quick_acks", "fin")


def _flag_typed(args, field: str) -> str:
    """The flag of ``field`` as typed (``--no-fin`` for fin False)."""
    if field == "fin":
        return "--fin" if args.fin else "--no-fin"
    return FIELD_FLAGS[field]


def _check_unread(args, config) -> None:
    """Refuse an explicit link or TCP flag the simulator would not read with the rest of
    the command line (one line naming the flags and why)."""
    if config.rto_rule == "paper":
        unread = [FIELD_FLAGS[f] for f in _RFC6298_ONLY if getattr(args, f, None) is not None]
        # RTT samples feed RFC 6298's estimator and RACK's min_RTT and PTO: with the paper
        # timer only RACK-TLP reads them
        if getattr(args, "rtt_sampling", None) is not None and not config.rack_tlp:
            unread.append("--rtt-sampling")
        if unread:
            them = "it" if len(unread) == 1 else "them"
            raise CliError(f"{', '.join(unread)}: --rto-rule paper runs a fixed RTO (max(1 s, 4 RTT) or --rto-s) "
                           f"with no RTT estimator, so it does not read {them}; drop {them} or give --rto-rule "
                           "rfc6298")
    rtt, delay = getattr(args, "rtt", None), getattr(args, "delay_s", None)
    if getattr(args, "pipe_packets", None) is not None:
        rtt = None  # trace --rtts --pipe-packets builds its path from --rtt (pipe_config)
    if rtt is not None and delay is not None and not math.isclose(2.0 * delay, rtt, rel_tol=1e-12, abs_tol=0.0):
        # --delay-s wins for the path; --rtt-s is still read by the paper timer's default RTO
        if not (config.rto_rule == "paper" and getattr(args, "rto", None) is None):
            raise CliError(f"--rtt-s {rtt:g} with --delay-s {delay:g}: the simulated round trip comes from "
                           "--delay-s (2 x --delay-s), or from --rtt-s when --delay-s is not given; give one "
                           f"of them (or --rtt-s {2.0 * delay:g})")
    variant = getattr(args, "variant", None)
    if getattr(args, "lt_mode", None) is not None and isinstance(variant, str):
        from ..params import VARIANTS

        if variant in VARIANTS and VARIANTS[variant]["dup_lt"] is None and getattr(args, "dup_lt", None) is None:
            raise CliError(f"--lt-mode {args.lt_mode}: --variant {variant} has no Limited Transmit, so the "
                           "mode has nothing to set; give --variant lt, proposal or size-based, or --dup-lt, "
                           "or drop --lt-mode")
    b = getattr(args, "b", None)
    if b is None and hasattr(args, "b"):  # not given: TcpParams' default
        from ..params import TcpParams

        b = TcpParams.b
    bs = b if isinstance(b, (list, tuple)) else [b]
    # linux_delack: Linux's receiver delays a lone segment whatever b is (pack_params sets 2)
    if b is not None and bs and all(isinstance(x, (int, float)) and x == 1 for x in bs) and not config.linux_delack:
        # ns-3's sender stops in FIN_WAIT_1 when --fin: there --fin / --no-fin is read even with b = 1
        fields = [f for f in _DELACK_FLAGS if getattr(args, f, None) is not None
                  and not (f == "fin" and config.sender == "ns3")]
        if fields:
            unread = [_flag_typed(args, f) for f in fields]
            them = "it" if len(unread) == 1 else "them"
            they = "it" if len(unread) == 1 else "they"
            raise CliError(f"{', '.join(unread)}: with --b 1 the receiver ACKs every segment at once (no "
                           f"delayed ACK), so {they} would change nothing; drop {them} or give --b 2")


def config_from_args(args, stack: str | None = None, models_read_b: bool = False) -> SimConfig:
    """Validated :class:`SimConfig`: the ``--stack`` profile (or ``stack``), then every link
    flag the user gave (errors name the flag). An explicit flag the simulator would not read
    with the rest of the command line is refused (:func:`_check_unread`), and so is an
    explicit ``--b`` under Linux's delayed-ACK rule (``linux_delack``) unless
    ``models_read_b`` (models run beside the simulator read it)."""
    from ..sim.config import SimConfig

    name = args.stack if stack is None else stack
    try:
        values = {f: getattr(args, f) for f in _LINK_FLAGS}
        if values.get("lt_mode") is None:  # not given: SimConfig's
            values.pop("lt_mode", None)
        values.update(link_overrides(args))
        _check_ns3_flags(args, name, values)
        config = SimConfig.profile(name, **values)
    except ValueError as exc:
        raise CliError(flag_message(str(exc))) from None
    if getattr(args, "rto", None) is not None and config.rto_rule != "paper":
        # RFC 6298's timer reads its own bounds, never TcpParams.rto: a --rto it ignored
        # would pass silently
        raise CliError(f"--rto-s is the paper timer's fixed RTO: give --rto-rule paper with it (the "
                       f"{config.rto_rule} timer's are --min-rto-s, --initial-rto-s and --max-rto-s)")
    _check_unread(args, config)
    if config.linux_delack and getattr(args, "b", None) is not None and not models_read_b:
        raise CliError(f"--b {args.b:g}: the linux profile's receiver ACKs as Linux does (every second "
                       "full segment at once, a lone one after its delayed-ACK timer), so --b would "
                       "change nothing; drop it")
    return config
