"""``latency-model experiment NAME``: the papers' multi-flow experiments on the shared bottleneck.

Kept apart from :mod:`latency_model.cli`; :func:`add_experiment_commands` registers the
subcommand. Errors are raised as :class:`~latency_model.cli.CliError` or ``ValueError``
(one line, exit status 2).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from . import __version__
from .cli import CliError, number
from .experiments.btcp import PAPER_CLAIMS, VARIANTS, BtcpExperiment, run_btcp
from .studies.export import write_csv, write_json

__all__ = ["add_experiment_commands"]

_LABELS = {"newreno": "NewReno", "btcp4": "B-TCP(4)", "btcp8": "B-TCP(8)"}


def _ci(mean: float, lo: float, hi: float, fmt: str) -> str:
    if math.isnan(mean):
        return "-"
    if math.isnan(lo):
        return format(mean, fmt)
    return f"{format(mean, fmt)} [{format(lo, fmt)}, {format(hi, fmt)}]"


def _btcp_text(res) -> str:
    ex = res.experiment
    lines = [
        f"Burst TCP experiment (Burst TCP, Section 4): {ex.n_flows} flows "
        f"({ex.flows_per_node} per node x {ex.nodes} nodes x scale {ex.scale:g}), starts in "
        f"[0, {ex.start_window_s:g}) s, run {ex.horizon_s:g} s, queue {ex.queue_packets} packets, "
        f"{ex.seeds} seeds (root {ex.seed}); mean over seeds [95% CI]",
        "",
        f"{'variant':<10}{'mice time s':<26}{'mice time cut vs NewReno %':<28}"
        f"{'mice loss %':<24}{'all loss %':<24}{'util %':<8}",
    ]
    for row in res.summary:
        g = lambda m, fmt: _ci(row[m], row[f"{m}_lo"], row[f"{m}_hi"], fmt)  # noqa: E731
        lines.append(
            f"{_LABELS[row['variant']]:<10}{g('mice_mean_s', '.3f'):<26}"
            f"{g('mice_time_reduction_pct', '.1f'):<28}{g('mice_loss_pct', '.2f'):<24}"
            f"{g('all_loss_pct', '.2f'):<24}{format(row['utilisation_pct'], '.2f'):<8}")
    lines += ["", "paper:"] + [f"  {text}" for text in PAPER_CLAIMS.values()]
    if res.claims:
        lines += ["", "claims (direction: our 95% CI excludes 0 on the paper's side; number: the "
                      "paper's value inside our 95% CI):"]
        for c in res.claims:
            o = c["ours"]
            ours = _ci(o["mean"], o["ci95"][0], o["ci95"][1], ".2f")
            verdict = "agrees" if c["agrees"] else "DISAGREES"
            lines.append(f"  {verdict:<9} {c['claim']}: ours {ours}, paper {c['paper']}")
    return "\n".join(lines)


def _json_safe(obj):
    """NaN (no value, e.g. B-TCP's reduction for NewReno itself) -> None, so the JSON is strict."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


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
    data = _json_safe(res.to_dict())
    data["version"] = __version__
    out = out_dir(args)
    paths = write(out, data) if out is not None else []
    if args.json:
        print(json.dumps(data, allow_nan=False))
    else:
        print(text)
        if paths:
            print("\nwrote " + ", ".join(str(p) for p in paths))
    return 0


def cmd_experiment_btcp(args) -> int:
    variants = names(args.variants)
    ex = BtcpExperiment(scale=args.scale, seeds=args.seeds, seed=args.seed,
                        flows_per_node=args.flows_per_node, queue_packets=args.queue_packets,
                        access_queue_packets=args.access_queue_packets, rwnd=args.rwnd, min_rto_s=args.min_rto_s, b=args.b, variants=variants)
    out_dir(args)  # before the run
    res = run_btcp(ex)

    def write(out, data):
        from .experiments.plot_btcp import plot_btcp  # matplotlib only when a figure is asked for

        return [write_csv(out / "btcp.csv", res.summary, list(res.summary[0].keys())),
                write_csv(out / "btcp_per_seed.csv", res.per_seed, list(res.per_seed[0].keys())),
                write_json(out / "btcp.json", data), plot_btcp(data, out / "btcp.png")]

    return emit(args, res, _btcp_text(res), write)


# SmoothTcpExperiment field -> flag, so that errors name what the user typed.
_SMOOTHTCP_FLAGS = {"scale": "--scale", "flows": "--flows", "queue_packets": "--queue-packets", "tau": "--tau",
                    "rwnd": "--rwnd", "kappa": "--kappa", "ss_signal": "--ss-signal", "min_rto_s": "--min-rto-s",
                    "rules": "--rules", "bin_s": "--bin-s"}


def cmd_experiment_smoothtcp(args) -> int:
    from .experiments.smoothtcp import SmoothTcpExperiment, run_smoothtcp

    rules = names(args.rules)
    try:
        ex = SmoothTcpExperiment(scale=args.scale, flows=args.flows, queue_packets=args.queue_packets, tau=args.tau,
                                 rwnd=args.rwnd, kappa=args.kappa, ss_signal=args.ss_signal,
                                 min_rto_s=args.min_rto_s, rules=rules, bin_s=args.bin_s)
    except ValueError as exc:
        raise flag_error(exc, _SMOOTHTCP_FLAGS) from None
    out_dir(args)  # before the run
    res = run_smoothtcp(ex)

    def write(out, data):
        from .experiments.plot_smoothtcp import plot_smoothtcp  # matplotlib only when a figure is asked for

        tables = (("smoothtcp.csv", res.summary), ("smoothtcp_flows.csv", res.flows),
                  ("smoothtcp_queue.csv", res.queue_series), ("smoothtcp_flow_series.csv", res.flow_series),
                  ("smoothtcp_rtt.csv", res.rtt_samples))
        paths = [write_csv(out / name, rows, list(rows[0].keys())) for name, rows in tables if rows]
        return paths + [write_json(out / "smoothtcp.json", data), plot_smoothtcp(data, out / "smoothtcp.png")]

    return emit(args, res, res.to_text(), write)


def add_smoothtcp_command(exps) -> None:
    """Register ``experiment smoothtcp`` on the ``experiment`` subparsers ``exps``."""
    from .experiments.smoothtcp import SmoothTcpExperiment

    d = SmoothTcpExperiment()
    s = exps.add_parser("smoothtcp", help="SmoothTCP, Section V: RTT variation, queue, drops and bytes, "
                                          "Standard TCP vs SmoothTCP on a 0.03125 Mb/s bottleneck")
    s.add_argument("--scale", type=number, default=d.scale,
                   help="run length as a fraction of the paper's 600 s (%(default)s)")
    s.add_argument("--flows", type=int, default=d.flows, help="long-lived flows from t = 0 (%(default)s)")
    s.add_argument("--queue-packets", type=int, default=d.queue_packets,
                   help="router drop-tail buffer, packets (%(default)s)")
    s.add_argument("--tau", type=int, default=d.tau, help="Source Quench threshold, packets (%(default)s)")
    s.add_argument("--rwnd", type=int, default=d.rwnd,
                   help="receiver window and initial ssthresh, packets (%(default)s)")
    s.add_argument("--kappa", type=number, default=d.kappa, help="SmoothTCP's fairness factor (%(default)s)")
    s.add_argument("--ss-signal", default=d.ss_signal,
                   help="what restarts SmoothTCP's smooth start: loss, or all (losses and signals) (%(default)s)")
    s.add_argument("--min-rto-s", type=number, default=d.min_rto_s,
                   help="minimum and initial RTO, seconds (%(default)s)")
    s.add_argument("--rules", default=",".join(d.rules),
                   help="comma-separated growth rules, one run each (%(default)s)")
    s.add_argument("--bin-s", type=number, default=d.bin_s, help="time-series bin, seconds (%(default)s)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/smoothtcp.csv (per rule), smoothtcp_flows.csv, smoothtcp_queue.csv, "
                        "smoothtcp_flow_series.csv, smoothtcp_rtt.csv (every RTT sample), smoothtcp.json, smoothtcp.png")
    s.set_defaults(func=cmd_experiment_smoothtcp)


def add_experiment_commands(sub) -> None:
    """Register ``experiment`` (with ``btcp``, ``smoothtcp``, ``ngwa`` and ``ass``) on the main parser's subparsers ``sub``."""
    p = sub.add_parser("experiment", help="the papers' multi-flow experiments on the shared bottleneck")
    exps = p.add_subparsers(dest="experiment", metavar="NAME")
    exps.required = True
    d = BtcpExperiment()
    b = exps.add_parser("btcp", help="Burst TCP, Section 4: mice transfer time and losses, "
                                     "NewReno vs B-TCP(4) vs B-TCP(8)")
    b.add_argument("--scale", type=number, default=d.scale,
                   help="fraction of the paper's flows and run length (1 = 1000 s runs) (%(default)s)")
    b.add_argument("--seeds", type=int, default=d.seeds, help="repetitions (paper: 50) (%(default)s)")
    b.add_argument("--seed", type=int, default=d.seed, help="root seed (%(default)s)")
    b.add_argument("--flows-per-node", type=int, default=d.flows_per_node,
                   help="flows per node at scale 1: 50 = light (250 flows), 250 = heavy (%(default)s)")
    b.add_argument("--queue-packets", type=int, default=d.queue_packets,
                   help="router drop-tail buffer, packets (%(default)s)")
    b.add_argument("--access-queue-packets", type=int, default=None,
                   help="drop-tail buffer of the sender access links, packets (default unlimited)")
    b.add_argument("--rwnd", type=int, default=d.rwnd, help="receiver window, packets (%(default)s)")
    b.add_argument("--min-rto-s", type=number, default=d.min_rto_s,
                   help="minimum and initial RTO, seconds (%(default)s)")
    b.add_argument("--b", type=int, default=d.b, help="delayed-ACK factor, packets per ACK (%(default)s)")
    b.add_argument("--variants", default=",".join(VARIANTS),
                   help="comma-separated subset of newreno, btcp4, btcp8 (%(default)s)")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/btcp.csv (per variant), DIR/btcp_per_seed.csv, DIR/btcp.json, DIR/btcp.png")
    b.set_defaults(func=cmd_experiment_btcp)
    add_smoothtcp_command(exps)

    from .cli_experiment_ngwa import add_ngwa_command  # experiment ngwa

    add_ngwa_command(exps)

    from .cli_ass import add_ass_command  # experiment ass

    add_ass_command(exps)
