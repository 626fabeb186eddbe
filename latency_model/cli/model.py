"""``latency-model tables | thresholds | latency | rules``: the fluid model's commands.

Tables 1-2 (with the simulator's single-loss column, from :mod:`latency_model.studies.tables`),
y_to and FileSize_min for one parameter set, the expected and conditional latency of the
recursion, and the window-growth rules.
"""

from __future__ import annotations

import dataclasses
import math
import sys

from ..studies.export import json_text
from ..values import show
from .common import (FIELD_FLAGS, STACK_HELP, CliError, add_command, add_size_flags, add_stack_flag, add_tcp_flags,
                     cell, check_budget, check_out_dir, flag_message, hide, number, os_error_message, params_for_size,
                     params_from_args, sizes_from_args, warn)

__all__ = ["register", "rules_table"]


def cmd_tables(args) -> int:
    from ..model.thresholds import table_rows
    from ..studies.tables import tables_text, write_tables

    stack = TABLES_STACK if args.stack is None else args.stack
    if stack not in STACK_HELP.split(", "):  # checked even when the simulator is not run
        raise CliError(f"--stack must be one of {STACK_HELP}, got {show(stack)}")
    if args.stack is not None and args.sim_lt_mode == "none":
        # --stack sets up the simulated column only; the model's columns do not read it
        raise CliError("--stack sets up the simulated column, which --sim-lt-mode none leaves out: give "
                       "--sim-lt-mode rfc3042 or paper, or drop --stack")
    if args.out is not None:
        check_out_dir("--out", args.out)
    rows = table_rows()
    if args.sim_lt_mode != "none":
        from ..studies.tables import add_simulated_y_to  # the simulator, beside the model

        try:
            add_simulated_y_to(rows, lt_mode=args.sim_lt_mode, stack=stack)
        except ValueError as exc:
            raise CliError(flag_message(str(exc))) from None
    if args.out is not None:
        try:
            write_tables(rows, args.out)
        except OSError as exc:
            raise CliError(os_error_message(exc, "--out")) from None
    if args.json:
        print(json_text({"tables": rows}))
    else:
        print(tables_text(rows))
    return 0


def cmd_thresholds(args) -> int:
    from ..model.fluid import TIME_MODELS
    from ..model.thresholds import filesize_min, y_to

    from ..params import TcpParams

    # y_to and FileSize_min depend on the windows, MSS, b, dup_t and dup_lt, never on p, the
    # RTT or the RTO: an explicit --p, --rtt-s or --rto-s is refused (after its value is checked)
    unread = [flag for dest, flag in THRESHOLDS_UNREAD if getattr(args, dest) is not None]
    if args.p is None:
        args.p = TcpParams.p
    if args.rtt is None:
        args.rtt = TcpParams.rtt_s
    params = params_from_args(args)
    if unread:
        raise CliError(f"{' and '.join(unread)}: thresholds does not read {'it' if len(unread) == 1 else 'them'} "
                       "(y_to and FileSize_min depend on the windows, MSS, b and the duplicate-ACK thresholds, "
                       "not on p, the RTT or the RTO)")
    _check_model_reads("fluid", args, params, prefix="")
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
        print(json_text(out))
        return 0
    print(f"timeout threshold: {params.timeout_threshold} packets (1 + dup)")
    print(f"{'time model':<12}{'y_to (B)':>12}{'y_to (pkt)':>12}{'FileSize_min (B)':>18}{'(pkt)':>8}")
    for row in out["thresholds"]:
        cells = [row[k] for k in ("y_to_bytes", "y_to_packets", "filesize_min_bytes", "filesize_min_packets")]
        text = ["inf" if c is None else f"{c:.4g}" for c in cells]
        print(f"{row['time_model']:<12}" + "".join(cell(t, w, "") for t, w in zip(text, (12, 12, 18, 8))))
    return 0


def cmd_latency(args) -> int:
    base = params_from_args(args)
    sizes = sizes_from_args(args, base.mss_bytes, default=LATENCY_SIZES)
    _packet_options(args)
    if args.model != "fluid":
        return _latency_other_model(args, base, sizes)
    _check_model_reads("fluid", args, base, prefix="")
    time_model, note = _latency_time_model(args.time_model, base)
    _latency_budget(args, base, sizes)  # before the solver is imported: a refusal stays small

    from ..model.recursion import SolverOptions, conditional_latency, expected_latency
    from ..model.thresholds import filesize_min, y_to

    opts = SolverOptions(time_model=time_model)
    groups: dict = {}
    for i, size in enumerate(sizes):
        groups.setdefault(params_for_size(args, base, size), []).append(i)
    results: list = [None] * len(sizes)
    shown_k = list(range(4))
    for params, idx in groups.items():
        sz = [sizes[i] for i in idx]
        res = expected_latency(params, size_bytes=sz, law=args.law, options=opts)
        cond = res.conditional_latency_s
        if res.k_max < len(shown_k):  # few losses expected: the sum stopped early
            cond = conditional_latency(params, size_bytes=sz, k=shown_k, options=opts)
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
        "params": {**base.to_dict(), "variant": args.variant, "model": "fluid", "time_model": time_model,
                   "law": args.law},
        "results": results,
    }
    if note:
        out["note"] = note
    if args.json:
        print(json_text(out))
        return 0
    if note:
        print(note)
    head = f"{'size (B)':>10}{'pkts':>8}{'E[L] (s)':>11}" + "".join(f"{'L_' + str(k) + ' (s)':>11}" for k in shown_k)
    print(head + f"{'y_to (B)':>10}{'FSmin (B)':>11}")
    for r in results:
        cond_txt = "".join(cell(r["conditional_latency_s"][str(k)], 11, ".4f") for k in shown_k)
        yto = "inf" if r["y_to_bytes"] is None else r["y_to_bytes"]
        fmin = "inf" if r["filesize_min_bytes"] is None else r["filesize_min_bytes"]
        print(cell(r["size_bytes"], 10, ".0f") + cell(r["size_packets"], 8, ".3g")
              + cell(r["expected_latency_s"], 11, ".4f") + cond_txt + cell(yto, 10, ".0f") + cell(fmin, 11, ".0f"))
    return 0


def _latency_other_model(args, base, sizes: list) -> int:
    """``latency --model NAME`` for a model other than the paper's recursion (the registry's
    :func:`~latency_model.model.registry.predict`): the same ``--json`` contract
    (``results[].expected_latency_s``, ``conditional_latency_s`` when the model gives L_k)."""
    from ..model.registry import predict

    if args.time_model is not None:
        raise CliError(f"--time-model is the fluid model's option; --model {args.model} has none")
    if args.law != "paper":
        raise CliError(f"--law is the fluid model's option; --model {args.model} has none")
    _check_model_reads(args.model, args, base)
    if args.model == "packet":  # its cost grows with size (and at low p): say so first
        from ..checks import PROCESS_BYTES, packet_model_seconds, packet_tree_seconds
        from ..model._packet_flat import MAX_RWND
        from ..model.packet import binding_rwnd

        top = max(sizes) / base.mss_bytes
        # beyond the level DP's window (253 packets, with a longer file), for timestamps, the
        # tree DP runs; for the SACK sender (the linux profile), the simulator's transitions
        given = _packet_options(args)
        path = given.get("path")
        engine_only = (path is not None and path.object_engine_only) or "config" in given
        tree = args.p90 or binding_rwnd(base, max(sizes)) > MAX_RWND or engine_only
        # the level DP's estimate, or the tree DP's for the SACK sender (measured on it);
        # --p90 and wide windows (the RFC sender on the tree DP) are announced below
        if engine_only:
            seconds = packet_tree_seconds(base.p, [s / base.mss_bytes for s in sizes])
        else:
            seconds = 0.0 if tree else packet_model_seconds(base.p, top, base.w0, base.b,
                                                            n_sizes=len(set(sizes)))
        on = (f" (--stack {getattr(args, 'stack', None)}'s sender on the simulator's transitions)"
              if "config" in given else " (timestamps: the tree DP)" if engine_only else "")
        check_budget(f"the packet model{on} up to {top:g} packets at p = {base.p:g}", PROCESS_BYTES, seconds)
        if tree and not engine_only and top > P90_QUICK_PACKETS and base.p > 0.0:
            why = ("--p90 computes" if args.p90 else
                   f"an rwnd above {MAX_RWND} packets with files longer than that computes")
            warn(f"{why} every size with the tree DP, whose states multiply with the length: "
                 f"{top:g} packets may take minutes or more (docs/packet-model.md)")
    groups: dict = {}
    for i, size in enumerate(sizes):
        groups.setdefault(params_for_size(args, base, size), []).append(i)
    results: list = [None] * len(sizes)
    options = _packet_options(args)
    stack = getattr(args, "stack", None)
    not_followed = _stack_setup(stack)[1] if stack is not None else []
    for params, idx in groups.items():
        bar = _levels_bar() if args.model == "packet" else None
        try:
            pred = predict(args.model, params, [sizes[i] for i in idx], **options,
                           **({"progress": bar} if bar else {}))
        except ValueError as exc:
            raise CliError(f"--model {args.model}: {flag_message(str(exc))}") from None
        finally:
            if bar:
                bar.close()
        for row, i in enumerate(idx):
            r = {"size_bytes": sizes[i], "size_packets": sizes[i] / params.mss_bytes, "variant": args.variant,
                 "expected_latency_s": float(pred.expected_latency_s[row])}
            if pred.conditional_latency_s is not None:
                r["conditional_latency_s"] = {str(k): float(v) for k, v in enumerate(pred.conditional_latency_s[row])}
            if pred.p90_latency_s is not None:
                r["p90_latency_s"] = float(pred.p90_latency_s[row])
            results[i] = r
    shown = {k: (dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v) for k, v in options.items()}
    out = {"params": {**base.to_dict(), "variant": args.variant, "model": args.model, **shown},
           "results": results}
    if stack is not None:
        out["params"]["stack"] = stack
        out["not_followed"] = not_followed
    if args.json:
        print(json_text(out))
        return 0
    path = options.get("path")
    if path is not None and path.fixed_rto:
        print(f"timer: the paper's fixed RTO of {base.rto:g} s (--rto-s; no estimator, no back-off)")
    if not_followed:
        print(f"stack {stack}: the model follows its sender, link, timers, quick ACKs and back-off rule, not "
              + "; ".join(not_followed))
    shown_k = [k for k in range(4) if all(str(k) in r.get("conditional_latency_s", {}) for r in results)]
    p90 = all("p90_latency_s" in r for r in results)
    print(f"model: {args.model}")
    print(f"{'size (B)':>10}{'pkts':>8}{'E[L] (s)':>11}" + "".join(f"{'L_' + str(k) + ' (s)':>11}" for k in shown_k)
          + (f"{'p90 (s)':>11}" if p90 else ""))
    for r in results:
        print(cell(r["size_bytes"], 10, ".0f") + cell(r["size_packets"], 8, ".3g")
              + cell(r["expected_latency_s"], 11, ".4f")
              + "".join(cell(r["conditional_latency_s"][str(k)], 11, ".4f") for k in shown_k)
              + (cell(r["p90_latency_s"], 11, ".4f") if p90 else ""))
    return 0


def _given(args) -> set:
    """What the user set explicitly, as :func:`~latency_model.model.registry.check_given`
    names it: the TcpParams fields ``w0``, ``w_ss`` (flags whose default is None), ``iw``
    (the preset) and ``rule_param.X`` for each ``--rule-param X=...``."""
    given = {field for field, dest in (("w0", "w0"), ("w_ss", "wss"), ("iw", "iw"))
             if getattr(args, dest, None) is not None}
    for item in getattr(args, "rule_param", None) or []:
        key = item.partition("=")[0].strip()
        if key:
            given.add("rule_param." + key)
    return given


def _reads_message(text: str) -> str:
    """A registry refusal (:func:`~latency_model.model.registry.check_given`,
    :func:`~latency_model.model.registry.check_fluid_reads`) naming the flags."""
    text = flag_message(text)
    for old, new in (("equal rwnd", "equal --rwnd"), ("rule_param.", "--rule-param "),
                     ("early_retransmit (variant er,", "--variant er (early_retransmit,"),
                     ("leave w0 unset", "leave --w0 unset"), ("leave iw unset", "leave --iw unset")):
        text = text.replace(old, new)
    if text.startswith("iw "):
        text = "--iw " + text[3:]
    return text


def _check_model_reads(model: str, args, params, prefix: str | None = None) -> None:
    """Refuse a setting that ``model`` would not read (one line, exit 2): for ``fluid``
    Early Retransmit and the rule parameters the recursion ignores
    (:func:`~latency_model.model.registry.check_fluid_reads`), for every model the explicit
    flags of :func:`~latency_model.model.registry.check_given` (``--wss`` for CSA and PFTK,
    ``--w0``/``--iw`` for PFTK). ``prefix``: the message's start (default ``--model NAME: ``)."""
    from ..model.registry import check_fluid_reads, check_given

    try:
        if model == "fluid":
            check_fluid_reads(params)
        check_given(model, params, _given(args))
    except ValueError as exc:
        start = f"--model {model}: " if prefix is None else prefix
        raise CliError(start + _reads_message(str(exc))) from None


class _LevelsBar:
    """The packet model's levels (one per packet) as a tqdm bar on stderr: its calls take
    minutes from about 40 packets (docs/packet-model.md). A callable ``progress(done, total)``;
    the bar appears at the first call, when the total is known."""

    def __init__(self):
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="packet model", unit="level", file=sys.stderr, leave=False,
                            dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _levels_bar():
    """A :class:`_LevelsBar` when stderr is a terminal, else None (logs and pipes stay clean)."""
    return _LevelsBar() if sys.stderr.isatty() else None


LATENCY_SIZES = "1:30"
"""Sizes (packets) of ``latency`` when neither --size-packets nor --size-bytes is given."""

THRESHOLDS_UNREAD = (("p", "--p"), ("rtt", "--rtt-s"), ("rto", "--rto-s"))
"""``thresholds`` flags (argparse dest, flag) that y_to and FileSize_min never read: refused
when given (their default is None there)."""

TABLES_STACK = "rfc"
"""The stack of ``tables``' simulated column when ``--stack`` is not given."""

P90_QUICK_PACKETS = 20
"""Largest size (packets) ``latency --model packet --p90`` answers without a warning: the
tree DP takes seconds up to 20 packets (1..20 in one call: 1.2-21 s CPU at p = 0.01-0.2,
docs/packet-model.md) and minutes from about 40."""


def _latency_budget(args, params, sizes: list) -> None:
    """Refuse a ``latency`` request that cannot fit in memory, warn when it is long
    (:func:`~latency_model.checks.model_cost`; the size-based variant's solves, one per
    variant, are bounded by one solve of all sizes)."""
    from ..checks import model_cost

    flag = "--size-bytes" if args.size_bytes is not None else "--size-packets"
    given = args.size_bytes if args.size_bytes is not None else args.size_packets or LATENCY_SIZES
    memory, seconds = model_cost(params.p, params.mss_bytes, max(sizes), len(sizes))
    n = f"{len(sizes):,} size{'s' if len(sizes) > 1 else ''}"
    check_budget(f"the model at {flag} {show(given)[1:-1]} ({n}, p = {params.p:g})", memory, seconds)


def _latency_time_model(asked: str | None, params) -> tuple[str, str | None]:
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
    from ..growth import RULES, rule_parameters

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
        print(json_text({"rules": rows}))
        return 0
    for row in rows:
        params = ", ".join(f"{k}={v}" for k, v in row["params"].items()) or "(no parameters)"
        print(f"{row['name']:<14}{params}")
        print(f"{'':<14}source: {row['source']}")
    print()
    print("use: --rule NAME --rule-param KEY=VALUE (repeatable)")
    return 0


# ---------------------------------------------------------------------------
# Registration


def _tables_flags(p) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", default=None, metavar="DIR", help="also write DIR/table1.csv and DIR/table2.csv")
    p.add_argument(
        "--sim-lt-mode",
        choices=["rfc3042", "paper", "none"],
        default="rfc3042",
        help="Limited Transmit reading for the simulated column; none skips the simulator (%(default)s)",
    )
    add_stack_flag(p)
    # None: not given (refused with --sim-lt-mode none, which has no simulated column to set up)
    for action in p._actions:
        if action.dest == "stack":
            action.default = None
            action.help = (f"stack profile of the simulated column: {STACK_HELP} ({TABLES_STACK}); refused with "
                           "--sim-lt-mode none")


def _thresholds_flags(p) -> None:
    add_tcp_flags(p)
    # None: not given; y_to and FileSize_min do not read them, so a given one is refused
    for action in p._actions:
        if action.dest in ("p", "rtt", "rto"):
            action.default = None
            action.help = "not read by thresholds (y_to and FileSize_min do not depend on it): refused if given"
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _latency_flags(p) -> None:
    from ..model.fluid import TIME_MODELS

    from ..model.registry import available_models

    add_tcp_flags(p)
    add_size_flags(p, default=LATENCY_SIZES)
    hide(p.add_argument("--model", "--models", dest="model", choices=available_models(), default="fluid",
                   help="fluid: the paper's recursion (%(default)s); packet: the packet-level sender as "
                        "simulated; csa: Cardwell-Savage-Anderson 2000; pftk: Padhye et al. 1998"), "--models")
    p.add_argument("--time-model", choices=TIME_MODELS, default=None,
                   help="fluid or per-round (default: fluid, or rounds for a rule without a continuous law)")
    p.add_argument("--law", choices=["paper", "exact"], default="paper", help="loss-count law (%(default)s)")
    g = p.add_argument_group("packet model (--model packet; method, accuracy and cost: docs/packet-model.md)")
    g.add_argument("--eps", type=number, default=None,
                   help="truncation, 0 < EPS < 1 (default 1e-7): larger is faster, needs less memory and "
                        "errs lower")
    g.add_argument("--max-states", type=number, default=None,
                   help="states kept a level, >= 0, 0: no bound (default 16000; 32000 with --stack ns3's sender): "
                        "fewer is faster, needs less memory "
                        "and errs further (8000: about 0.85x the time, twice the high bias with b = 1 and a large "
                        "W0 and past 200 packets at small p)")
    g.add_argument("--stack", default=None, metavar="NAME",
                   help=f"the packet model set up as a simulated stack profile ({STACK_HELP}): its link, "
                        "timers, quick ACKs and back-off rule, its sender and RTT sampling, and its W0 unless "
                        "--w0 (Linux: 10) and rule (Linux: cubic) unless --rule; ns3's sender runs NewReno and LT only; "
                        "linux's runs on the simulator's own transitions (every mechanism of the profile), "
                        "half a minute a call at 20 packets and p = 0.1, and beyond some 20 packets at p of "
                        "several percent its states can reach the memory limit (docs/packet-model.md)")
    g.add_argument("--p90", action="store_true",
                   help="also the 90th percentile of the latency (a p90 column, results[].p90_latency_s): "
                        "computed by the tree DP, whose --eps and --max-states differ (defaults 1e-9, 3000) "
                        "and which takes minutes from about 40 packets (docs/packet-model.md)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _packet_options(args) -> dict:
    """``--eps``, ``--max-states``, ``--p90`` and ``--stack`` as
    :func:`~latency_model.model.packet.expected_latency` options (``--p90``: ``quantiles``;
    ``--stack``: ``path``, the profile's :func:`~latency_model.studies.packet_setup.packet_options`);
    any of them with another model than ``packet`` is an error."""
    given = {k: v for k, v in (("eps", args.eps), ("max_states", args.max_states)) if v is not None}
    if args.p90:
        given["quantiles"] = True
    stack = getattr(args, "stack", None)
    if (given or stack is not None) and args.model != "packet":
        flags = " and ".join([{**FIELD_FLAGS, "quantiles": "--p90"}[k] for k in given]
                             + (["--stack"] if stack is not None else []))
        raise CliError(f"{flags}: the packet model's options; --model {args.model} has none")
    if stack is not None:
        given.update(_stack_setup(stack)[0])
        config = given.get("config")
        if config is not None and config.linux_delack and getattr(args, "b", None) is not None:
            raise CliError(f"--b {args.b:g}: --stack {stack}'s receiver ACKs as Linux does (every second full "
                           "segment at once, a lone one after its delayed-ACK timer), so --b would change "
                           "nothing; drop it")
    if args.model == "packet" and getattr(args, "rto", None) is not None:
        # --rto-s is the paper's fixed timer for every model that reads it (fluid, CSA, PFTK);
        # the packet model runs it as the simulator's --rto-rule paper does, not RFC 6298's
        from ..model.packet import PathConfig

        try:
            given["path"] = dataclasses.replace(given.get("path", PathConfig()), fixed_rto=True)
        except ValueError as exc:
            raise CliError(f"--rto-s (the paper's fixed timer): {exc}") from None
    return given


def _stack_setup(stack: str) -> tuple[dict, list]:
    """(the packet model's options, what it does not follow) for ``--stack NAME``."""
    if stack not in STACK_HELP.split(", "):
        raise CliError(f"--stack must be one of {STACK_HELP}, got {show(stack)}")
    from ..sim.config import SimConfig
    from ..studies.packet_setup import packet_differences, packet_options

    config = SimConfig.profile(stack)
    return packet_options(config), packet_differences(config)


def _rules_flags(p) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object")


def register(sub) -> None:
    """Register ``tables``, ``thresholds``, ``latency`` and ``rules`` on the subparsers ``sub``."""
    add_command(sub, "tables", help="the paper's Tables 1-2 (y_to), computed beside the printed values",
                func=cmd_tables, flags=_tables_flags)
    add_command(sub, "thresholds", help="y_to and FileSize_min for one parameter set, both time models",
                func=cmd_thresholds, flags=_thresholds_flags)
    add_command(sub, "latency", help="expected and conditional latency of a model (the paper's by default)",
                func=cmd_latency, flags=_latency_flags)
    add_command(sub, "rules", help="list the window-growth rules with their parameters, defaults and sources",
                func=cmd_rules, flags=_rules_flags)
