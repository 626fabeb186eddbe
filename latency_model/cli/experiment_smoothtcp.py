"""``latency-model experiment smoothtcp``: SmoothTCP's experiment (Section V).

Two long-lived flows with Source Quench above tau, Standard TCP against SmoothTCP
(:mod:`latency_model.experiments.smoothtcp`), each claim of the paper marked.
"""

from __future__ import annotations

from .common import CliError, add_command, add_list, hide, integer, number
from .experiment import emit, flag_error, names, out_dir

__all__ = ["register"]


# SmoothTcpExperiment field -> flag, so that errors name what the user typed.
_SMOOTHTCP_FLAGS = {"scale": "--scale", "flows": "--flows", "queue_packets": "--queue-packets", "tau": "--tau",
                    "rwnd": "--rwnd", "kappa": "--kappa", "ss_signal": "--ss-signal", "min_rto_s": "--min-rto-s",
                    "rules": "--rules", "bin_s": "--bin-s"}


def cmd_experiment_smoothtcp(args) -> int:
    from ..experiments.smoothtcp import SmoothTcpExperiment, run_smoothtcp
    from ..studies.export import write_csv, write_json

    rules = names(args.rules, "--rules")
    # kappa is SmoothTCP's and the smooth start's, ss_signal SmoothTCP's only: refused when given
    # (default None) and no rule of --rules reads it
    d = SmoothTcpExperiment.__dataclass_fields__
    if args.kappa is not None and not {"smoothtcp", "smooth-start"} & set(rules):
        raise CliError(f"--kappa is the smoothtcp and smooth-start rules' parameter, and --rules {','.join(rules)} "
                       "runs neither; drop --kappa or add smoothtcp to --rules")
    if args.ss_signal is not None and "smoothtcp" not in rules:
        raise CliError(f"--ss-signal is the smoothtcp rule's parameter, and --rules {','.join(rules)} does not "
                       "run it; drop --ss-signal or add smoothtcp to --rules")
    kappa = d["kappa"].default if args.kappa is None else args.kappa
    ss_signal = d["ss_signal"].default if args.ss_signal is None else args.ss_signal
    try:
        ex = SmoothTcpExperiment(scale=args.scale, flows=args.flows, queue_packets=args.queue_packets, tau=args.tau,
                                 rwnd=args.rwnd, kappa=kappa, ss_signal=ss_signal,
                                 min_rto_s=args.min_rto_s, rules=rules, bin_s=args.bin_s)
    except ValueError as exc:
        raise flag_error(exc, _SMOOTHTCP_FLAGS) from None
    out_dir(args)  # before the run
    res = run_smoothtcp(ex)

    def write(out, data):
        from ..experiments.plot_smoothtcp import plot_smoothtcp  # matplotlib only when a figure is asked for

        tables = (("smoothtcp.csv", res.summary), ("smoothtcp_flows.csv", res.flows),
                  ("smoothtcp_queue.csv", res.queue_series), ("smoothtcp_flow_series.csv", res.flow_series),
                  ("smoothtcp_rtt.csv", res.rtt_samples))
        paths = [write_csv(out / name, rows, list(rows[0].keys())) for name, rows in tables if rows]
        return paths + [write_json(out / "smoothtcp.json", data), plot_smoothtcp(data, out / "smoothtcp.png")]

    return emit(args, res, res.to_text(), write)


def _smoothtcp_flags(s) -> None:
    from ..experiments.smoothtcp import SmoothTcpExperiment

    d = SmoothTcpExperiment()
    s.add_argument("--scale", type=number, default=d.scale,
                   help="run length as a fraction of the paper's 600 s (%(default)s)")
    s.add_argument("--flows", type=integer, default=d.flows, help="long-lived flows from t = 0 (%(default)s)")
    s.add_argument("--queue-packets", type=integer, default=d.queue_packets,
                   help="router drop-tail buffer, packets (%(default)s)")
    s.add_argument("--tau", type=integer, default=d.tau, help="Source Quench threshold, packets (%(default)s)")
    s.add_argument("--rwnd", type=integer, default=d.rwnd,
                   help="receiver window and initial ssthresh, packets (%(default)s)")
    # None: not given (the experiment's default); given without a rule that reads it, refused
    s.add_argument("--kappa", type=number, default=None,
                   help=f"fairness factor of the smoothtcp and smooth-start rules ({d.kappa:g})")
    s.add_argument("--ss-signal", default=None,
                   help=f"what restarts SmoothTCP's smooth start: loss, or all (losses and signals) ({d.ss_signal}); "
                        "rule smoothtcp only")
    s.add_argument("--min-rto-s", type=number, default=d.min_rto_s,
                   help="minimum and initial RTO, seconds (%(default)s)")
    hide(add_list(s, "--rules", "--rule", kind="name", default=list(d.rules),
                  help=f"growth rules, one run each ({','.join(d.rules)})"), "--rule")
    s.add_argument("--bin-s", type=number, default=d.bin_s, help="time-series bin, seconds (%(default)s)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/smoothtcp.csv (per rule), smoothtcp_flows.csv, smoothtcp_queue.csv, "
                        "smoothtcp_flow_series.csv, smoothtcp_rtt.csv (every RTT sample), smoothtcp.json, smoothtcp.png")


def register(exps) -> None:
    """Register ``smoothtcp`` on the ``experiment`` subparsers ``exps``."""
    add_command(exps, "smoothtcp", help="SmoothTCP, Section V: RTT variation, queue, drops and bytes, "
                                        "Standard TCP vs SmoothTCP on a 0.03125 Mb/s bottleneck",
                func=cmd_experiment_smoothtcp, flags=_smoothtcp_flags)


