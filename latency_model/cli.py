"""Command-line interface: ``latency-model <command> ...``.

Every command validates its input up front. Any bad value is reported on one line,
``latency-model: error: <what>``, with exit status 2; never a traceback.

Shared TCP flags live in :func:`add_tcp_flags` and are turned into a validated
:class:`~latency_model.params.TcpParams` by :func:`params_from_args`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from . import __version__
from .growth import RULES, make_rule, rule_parameters
from .params import IW_PRESETS, VARIANTS, TcpParams, apply_variant, initial_window_bytes
from .model.fluid import TIME_MODELS
from .model.thresholds import filesize_min, table_rows, y_to
from .studies.tables import tables_text, write_tables
from .values import expand_range, scalar

PROG = "latency-model"

# TcpParams field -> CLI flag, so that errors name what the user typed.
FIELD_FLAGS = {
    "mss_bytes": "--mss",
    "rtt_s": "--rtt",
    "p": "--p",
    "w0": "--w0",
    "w_ss": "--wss",
    "rwnd": "--rwnd",
    "b": "--b",
    "dup_t": "--dup-t",
    "dup_lt": "--dup-lt",
    "rto_s": "--rto",
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
    "pipe_packets": "--pipe-packets",
    "n_rounds": "--rtts",
    "runs": "--runs",
    "seed": "--seed",
    "run": "--run",
    "size_packets": "--size-packets",
    "size_bytes": "--size-bytes",
    "drops segment index": "--drop",
}


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage and exit; we want one line
        raise CliError(message)


# ---------------------------------------------------------------------------
# Shared flags


def number(text: str):
    """argparse type: an int when the text is one (so errors echo ``0``, not ``0.0``), else a float."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def add_tcp_flags(parser: argparse.ArgumentParser) -> None:
    """Add the TCP/path parameter flags shared by the model and simulator commands."""
    d = TcpParams()
    g = parser.add_argument_group("TCP parameters (paper defaults)")
    g.add_argument("--mss", type=number, default=d.mss_bytes, help="segment size MSS, bytes (%(default)s)")
    g.add_argument("--rtt", type=number, default=d.rtt_s, help="round-trip time, seconds (%(default)s)")
    g.add_argument("--p", type=number, default=d.p, help="packet loss probability in [0, 1) (%(default)s)")
    g.add_argument("--w0", type=number, default=None, help=f"initial window W0, packets ({d.w0:g})")
    g.add_argument("--iw", choices=sorted(IW_PRESETS), help="initial window preset (overrides --w0)")
    # None: the TcpParams default, or the command's own (see params_from_args ``defaults``).
    g.add_argument("--wss", type=number, default=None, help=f"initial slow-start threshold, packets ({d.w_ss:g})")
    g.add_argument("--rwnd", type=number, default=None, help=f"receiver window M, packets ({d.rwnd:g})")
    g.add_argument("--b", type=number, default=d.b, help="delayed-ACK factor, packets per ACK (%(default)s)")
    g.add_argument("--dup-t", type=number, default=d.dup_t, help="fast-retransmit threshold (%(default)s)")
    g.add_argument(
        "--variant",
        default="newreno",
        help=f"loss recovery: {', '.join([*VARIANTS, 'size-based'])} (%(default)s)",
    )
    g.add_argument("--dup-lt", type=number, default=None, help="Limited Transmit threshold (overrides --variant's)")
    g.add_argument("--rto", type=number, default=None, help="fixed RTO, seconds (default max(1 s, 4 RTT))")
    g.add_argument("--rule", default="standard", help="window-growth rule (see `latency-model rules`)")
    g.add_argument(
        "--rule-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="parameter of the growth rule (repeatable)",
    )


def _parse_rule_params(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--rule-param must be KEY=VALUE, got {item!r}")
        out[key.strip()] = scalar(value)
    return out


def parse_sizes(text: str, flag: str) -> list[float]:
    """Sizes from ``N``, ``a,b,c`` or an inclusive range ``a:b`` / ``a:b:step`` (all > 0)."""
    values: list[float] = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            try:
                rng = expand_range(flag, part)
            except ValueError as exc:
                raise CliError(str(exc)) from None
            if not rng[0] > 0:
                raise CliError(f"{flag} range must start above 0, got {part!r}")
            values.extend(float(v) for v in rng)
        else:
            try:
                v = float(part)
            except ValueError:
                raise CliError(f"{flag} must be a number, list or range, got {part!r}") from None
            if not (v > 0 and math.isfinite(v)):
                raise CliError(f"{flag} must be > 0, got {part!r}")
            values.append(v)
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


def add_size_flags(parser: argparse.ArgumentParser) -> None:
    """``--size-packets`` / ``--size-bytes``: N, a list a,b,c, or a range a:b[:step]."""
    parser.add_argument("--size-packets", default=None, help="file sizes in packets: N, a,b,c or a:b[:step] (1:30)")
    parser.add_argument("--size-bytes", default=None, help="file sizes in bytes, same syntax")


def _flag_message(message: str) -> str:
    """Rewrite a TcpParams error so it names the CLI flag (``b must`` -> ``--b must``)."""
    for field, flag in FIELD_FLAGS.items():
        if message.startswith(field + " "):
            return flag + message[len(field):]
    return message


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
    try:
        rule = make_rule(args.rule, **_parse_rule_params(args.rule_param))
        dflt = {"w0": TcpParams.w0, "w_ss": TcpParams.w_ss, "rwnd": TcpParams.rwnd, **(defaults or {})}
        mss = args.mss
        w0 = args.w0
        if args.iw is not None:
            mss_int = TcpParams(mss_bytes=mss).mss_bytes  # validates --mss first
            w0 = initial_window_bytes(args.iw, mss_int) / mss_int
        base = TcpParams(
            mss_bytes=mss,
            rtt_s=args.rtt,
            p=args.p,
            w0=dflt["w0"] if w0 is None else w0,
            w_ss=dflt["w_ss"] if args.wss is None else args.wss,
            rwnd=dflt["rwnd"] if args.rwnd is None else args.rwnd,
            b=args.b,
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
        raise CliError(_flag_message(str(exc))) from None


def params_for_size(args, base: TcpParams, size_bytes: float) -> TcpParams:
    """``base``, or for ``--variant size-based`` the variant this file size resolves to."""
    return params_from_args(args, size_bytes) if args.variant == "size-based" else base


# ---------------------------------------------------------------------------
# Commands


def cmd_tables(args) -> int:
    rows = table_rows()
    if args.sim_lt_mode != "none":
        from .studies.tables import add_simulated_y_to  # the simulator, beside the model

        add_simulated_y_to(rows, lt_mode=args.sim_lt_mode)
    if args.out is not None:
        write_tables(rows, args.out)
    if args.json:
        print(json.dumps({"tables": rows}))
    else:
        print(tables_text(rows))
    return 0


def cmd_thresholds(args) -> int:
    params = params_from_args(args)
    out = {"params": params.to_dict(), "thresholds": []}
    for model in TIME_MODELS:
        if model == "fluid" and params.rule.continuous_law(params.b) is None:
            continue  # e.g. B-TCP, LSS, ASS: only the per-round law exists
        yto = float(y_to(params, time_model=model))
        fmin = float(filesize_min(params, time_model=model))
        mss = params.mss_bytes
        out["thresholds"].append(
            {
                "time_model": model,
                "timeout_threshold_packets": params.timeout_threshold,
                "y_to_bytes": _json_number(yto),
                "y_to_packets": _json_number(yto / mss),
                "filesize_min_bytes": _json_number(fmin),
                "filesize_min_packets": _json_number(fmin / mss),
            }
        )
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"timeout threshold: {params.timeout_threshold} packets (1 + dup)")
    print(f"{'time model':<12}{'y_to (B)':>12}{'y_to (pkt)':>12}{'FileSize_min (B)':>18}{'(pkt)':>8}")
    for row in out["thresholds"]:
        cells = [row[k] for k in ("y_to_bytes", "y_to_packets", "filesize_min_bytes", "filesize_min_packets")]
        text = ["inf" if c is None else f"{c:.4g}" for c in cells]
        print(f"{row['time_model']:<12}{text[0]:>12}{text[1]:>12}{text[2]:>18}{text[3]:>8}")
    return 0


def cmd_latency(args) -> int:
    from .model.recursion import SolverOptions, conditional_latency, expected_latency

    base = params_from_args(args)
    sizes = sizes_from_args(args, base.mss_bytes)
    time_model, note = _latency_time_model(args.time_model, base)
    opts = SolverOptions(time_model=time_model)
    groups: dict = {}
    for i, size in enumerate(sizes):
        groups.setdefault(params_for_size(args, base, size), []).append(i)
    results: list = [None] * len(sizes)
    shown_k = list(range(4))
    for params, idx in groups.items():
        sz = [sizes[i] for i in idx]
        res = expected_latency(params, sz, law=args.law, options=opts)
        cond = res.conditional_latency_s
        if res.k_max < len(shown_k):  # few losses expected: the sum stopped early
            cond = conditional_latency(params, sz, shown_k, options=opts)
        yto = float(y_to(params, time_model=time_model))
        fmin = float(filesize_min(params, time_model=time_model))
        for row, i in enumerate(idx):
            results[i] = {
                "size_bytes": sizes[i],
                "size_packets": sizes[i] / params.mss_bytes,
                "variant": args.variant,
                "expected_latency_s": float(res.expected_latency_s[row]),
                "conditional_latency_s": {str(k): float(cond[row, k]) for k in shown_k},
                "loss_probability": {str(k): float(res.loss_pmf[row, k]) for k in shown_k if k < res.k_max},
                "k_max": res.k_max,
                "truncated_mass": float(res.truncated_mass[row]),
                "y_to_bytes": _json_number(yto),
                "filesize_min_bytes": _json_number(fmin),
            }
    out = {
        "params": {**base.to_dict(), "variant": args.variant, "time_model": time_model, "law": args.law},
        "results": results,
    }
    if note:
        out["note"] = note
    if args.json:
        print(json.dumps(out))
        return 0
    if note:
        print(note)
    head = f"{'size (B)':>10}{'pkts':>8}{'E[L] (s)':>11}" + "".join(f"{'L_' + str(k) + ' (s)':>11}" for k in shown_k)
    print(head + f"{'y_to (B)':>10}{'FSmin (B)':>11}")
    for r in results:
        cond_txt = "".join(f"{r['conditional_latency_s'][str(k)]:>11.4f}" for k in shown_k)
        yto_txt = "inf" if r["y_to_bytes"] is None else f"{r['y_to_bytes']:.0f}"
        fmin_txt = "inf" if r["filesize_min_bytes"] is None else f"{r['filesize_min_bytes']:.0f}"
        print(
            f"{r['size_bytes']:>10.0f}{r['size_packets']:>8.3g}{r['expected_latency_s']:>11.4f}"
            f"{cond_txt}{yto_txt:>10}{fmin_txt:>11}"
        )
    return 0


def _latency_time_model(asked: str | None, params: TcpParams) -> tuple[str, str | None]:
    """The time model of ``latency`` and a note when it was chosen for the user.

    Without ``--time-model``: the paper's ``fluid`` model when the rule has a
    continuous law (standard, generalized), else ``rounds`` with a note saying so
    (B-TCP, LSS, ASS and smooth-start only have a per-round law). An explicit
    ``--time-model fluid`` for such a rule is an error naming ``--time-model rounds``.
    """
    has_law = params.rule.continuous_law(params.b) is not None
    if asked is None:
        if has_law:
            return "fluid", None
        return "rounds", (f"time model: rounds (rule {params.rule.name!r} has no continuous fluid law; "
                          "L_0 counts whole windows per RTT)")
    if asked == "fluid" and not has_law:
        raise CliError(f"--time-model fluid needs a continuous fluid law and rule {params.rule.name!r} "
                       "has none; use --time-model rounds (the default for this rule)")
    return asked, None


def _json_number(x: float):
    """JSON has no infinity: an unreachable threshold is written as null."""
    return x if math.isfinite(x) else None


def rules_table() -> list[dict]:
    """Every registered growth rule: name, source, parameters with defaults, first docstring line."""
    out = []
    for name in sorted(RULES):
        cls = RULES[name]
        doc = (cls.__doc__ or "").strip().splitlines()
        out.append(
            {
                "name": name,
                "source": cls.source,
                "summary": doc[0] if doc else "",
                "params": rule_parameters(name),
            }
        )
    return out


def cmd_rules(args) -> int:
    rows = rules_table()
    if args.json:
        print(json.dumps({"rules": rows}))
        return 0
    for row in rows:
        params = ", ".join(f"{k}={v}" for k, v in row["params"].items()) or "(no parameters)"
        print(f"{row['name']:<14}{params}")
        print(f"{'':<14}source: {row['source']}")
    print()
    print("use: --rule NAME --rule-param KEY=VALUE (repeatable)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``latency-model`` argument parser with all subcommands."""
    parser = _Parser(prog=PROG, description="Latency of short TCP transfers: fluid model and packet simulator.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("tables", help="the paper's Tables 1-2 (y_to), computed beside the printed values")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", default=None, metavar="DIR", help="also write DIR/table1.csv and DIR/table2.csv")
    p.add_argument(
        "--sim-lt-mode",
        choices=["rfc3042", "paper", "none"],
        default="rfc3042",
        help="Limited Transmit reading for the simulated column; none skips the simulator (%(default)s)",
    )
    p.set_defaults(func=cmd_tables)

    p = sub.add_parser("thresholds", help="y_to and FileSize_min for one parameter set, both time models")
    add_tcp_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_thresholds)

    p = sub.add_parser("latency", help="expected and conditional latency of the fluid model")
    add_tcp_flags(p)
    add_size_flags(p)
    p.add_argument("--time-model", choices=TIME_MODELS, default=None,
                   help="fluid or per-round (default: fluid, or rounds for a rule without a continuous law)")
    p.add_argument("--law", choices=["paper", "exact"], default="paper", help="loss-count law (%(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_latency)

    p = sub.add_parser("rules", help="list the window-growth rules with their parameters, defaults and sources")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_rules)

    from .cli_repro import add_repro_commands  # reproduce, validate, plot

    add_repro_commands(sub)

    from .cli_sim import add_sim_commands  # simulate, single-loss, trace

    add_sim_commands(sub)
    from .cli_experiment import add_experiment_commands  # experiment btcp

    add_experiment_commands(sub)

    from .cli_sweep import add_sweep_command  # sweep

    add_sweep_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``latency-model`` console script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{PROG}: error: {_flag_message(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `latency-model tables --json | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    # `python -m latency_model.cli` runs this file as __main__; the subcommand modules raise
    # latency_model.cli.CliError, so run the imported module's main, which catches that one.
    from latency_model.cli import main as _main

    sys.exit(_main())
