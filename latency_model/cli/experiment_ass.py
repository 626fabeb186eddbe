"""``latency-model experiment ass``: Advanced Slow Start (Petrov & Janevski, Sections 3-4).

Registered on the ``experiment`` group (:mod:`latency_model.cli.experiment`). Errors are
raised as :class:`~latency_model.cli.common.CliError` or ``ValueError`` (one line, exit status 2).
"""

from __future__ import annotations

import math

from .common import CliError, add_command, add_jobs_flag, add_list, check_workers, integer, number
from .experiment import emit, flag_error, out_dir

__all__ = ["register"]

# AssExperiment field -> flag, so a ValueError names what the user typed.
_FLAGS = {"bottlenecks_mbps": "--bottlenecks-mbps", "queues": "--queues", "algorithms": "--algorithms",
          "initial_windows": "--iw", "reverse_queue_packets": "--reverse-queue-packets",
          "access_rate_mbps": "--access-rate-mbps", "min_rto_s": "--min-rto-s", "startup_s": "--startup-s",
          "scale": "--scale", "bins": "--bins", "rwnd": "--rwnd", "decrease": "--decrease", "jobs": "--jobs"}


def _list(flag: str, values, conv) -> tuple:
    return tuple(conv(v) for v in values)  # read by the list flag (add_list)


def _fmt(x, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _text(res) -> str:
    from ..experiments.ass import PAPER_CLAIMS

    ex = res.experiment
    algs = ex.algorithms
    lines = [
        f"ASS experiment (Petrov & Janevski, Sections 3-4): one flow over n0-n1-n2-n3, links "
        f"{ex.link_delay_s * 1e3:g} ms, {ex.horizon_s:g} s runs (scale {ex.scale:g}), NewReno, "
        f"reverse ACK queue {ex.reverse_queue_packets if ex.reverse_queue_packets is not None else 'off'}",
        "throughput = payload acknowledged over the run; start-up = the same over the first "
        f"{ex.startup_window_s:g} s; lost/TO = router drops / timeouts",
        "",
        f"{'case':<26}" + "".join(f"{'Alg ' + str(a) + ' kb/s':<14}" for a in algs)
        + "".join(f"{'start ' + str(a):<10}" for a in algs) + "".join(f"{'lost/TO ' + str(a):<11}" for a in algs),
    ]
    by = {(r["bottleneck_mbps"], r["iw_packets"], r["queue_packets"], r["algorithm"]): r for r in res.runs}
    for bn in ex.bottlenecks_mbps:
        for w0 in ex.initial_windows:
            for q in ex.queues:
                rs = [by[(bn, w0, q, a)] for a in algs]
                case = f"{bn:g} Mb/s IW {w0} IFQ {q}"
                lines.append(f"{case:<26}" + "".join(f"{_fmt(r['throughput_kbps'], '.1f'):<14}" for r in rs)
                             + "".join(f"{_fmt(r['startup_kbps'], '.0f'):<10}" for r in rs)
                             + "".join(f"{str(r['packets_lost']) + '/' + str(r['timeouts']):<11}" for r in rs))
    lines += ["", "paper:"] + [f"  {text}" for text in PAPER_CLAIMS.values()]
    if res.claims:
        lines += ["", "claims (whole-run throughput; equal = within 2%; aggregate = mean % beyond 2% "
                      "on the paper's side):"]
        for c in res.claims:
            o = c["ours"]
            ours = f"best {o['best']}" if isinstance(o, dict) else _fmt(o, ".1f")
            verdict = "agrees" if c["agrees"] else "DISAGREES"
            lines.append(f"  {verdict:<9} {c['claim']}: ours {ours}, paper {c['paper']}")
        n = sum(c["agrees"] for c in res.claims)
        lines.append(f"  {n} of {len(res.claims)} claims agree")
    return "\n".join(lines)


def cmd_experiment_ass(args) -> int:
    from ..experiments.ass import SERIES_KEYS, AssExperiment, run_ass
    from ..studies.export import write_csv, write_json

    d = AssExperiment.__dataclass_fields__
    algorithms = _list("--algorithms", args.algorithms, int)
    # --decrease and --reverse-queue-packets: None when not given; refused where nothing reads them
    if args.decrease is not None and all(a == 1 for a in algorithms):
        raise CliError(f"--decrease is the ASS rule's (algorithms 2-4), and --algorithms {','.join(map(str, algorithms))} runs "
                       "only algorithm 1 (LSS, standard decrease); drop --decrease or add algorithm 2, 3 or 4")
    if args.no_reverse_queue and args.reverse_queue_packets is not None:
        raise CliError("--reverse-queue-packets: --no-reverse-queue has no reverse ACK queue to size; give one "
                       "of them")
    decrease = d["decrease"].default if args.decrease is None else args.decrease
    reverse = (None if args.no_reverse_queue else d["reverse_queue_packets"].default
               if args.reverse_queue_packets is None else args.reverse_queue_packets)
    try:
        ex = AssExperiment(
            scale=args.scale,
            bottlenecks_mbps=_list("--bottlenecks-mbps", args.bottlenecks_mbps, float),
            queues=_list("--queues", args.queues, int),
            algorithms=algorithms,
            initial_windows=_list("--iw", args.iw, int),
            access_rate_mbps=args.access_rate_mbps,
            reverse_queue_packets=reverse,
            rwnd=args.rwnd, min_rto_s=args.min_rto_s, decrease=decrease, bins=args.bins,
            startup_s=args.startup_s)
    except ValueError as exc:
        raise flag_error(exc, _FLAGS) from None
    jobs = check_workers("--jobs", args.jobs)  # at most 4 x the CPUs, as every worker flag
    out_dir(args)  # checked (and created) once every flag is, before the run
    try:
        res = run_ass(ex, jobs=jobs)
    except ValueError as exc:
        raise flag_error(exc, _FLAGS) from None

    def write(out, data):
        from ..experiments.plot_ass import plot_ass  # matplotlib only when a figure is asked for

        cols = [k for k in res.runs[0] if k not in SERIES_KEYS]
        ts = [{"bottleneck_mbps": r["bottleneck_mbps"], "iw_packets": r["iw_packets"],
               "queue_packets": r["queue_packets"], "algorithm": r["algorithm"], "time_s": t,
               "cwnd_packets": c, "throughput_kbps": g}
              for r in res.runs for t, c, g in zip(*(r[k] for k in SERIES_KEYS))]
        return [write_csv(out / "ass.csv", res.runs, cols),
                write_csv(out / "ass_timeseries.csv", ts, list(ts[0].keys())),
                write_json(out / "ass.json", data),
                plot_ass(data, out / "ass_cwnd.png", "cwnd"), plot_ass(data, out / "ass_throughput.png", "throughput")]

    return emit(args, res, _text(res), write)


def _ass_flags(a) -> None:
    from ..experiments.ass import AssExperiment

    d = AssExperiment()
    a.add_argument("--scale", type=number, default=d.scale,
                   help="fraction of the paper's 250 s runs (%(default)s)")
    add_list(a, "--bottlenecks-mbps", default=list(d.bottlenecks_mbps),
             help=f"bottleneck rates, Mb/s ({','.join(f'{x:g}' for x in d.bottlenecks_mbps)})")
    add_list(a, "--queues", kind="integer", default=list(d.queues),
             help=f"router IFQ sizes, packets ({','.join(map(str, d.queues))})")
    add_list(a, "--algorithms", kind="integer", default=list(d.algorithms),
             help=f"slow-start algorithms from 1-4 ({','.join(map(str, d.algorithms))})")
    add_list(a, "--iw", kind="integer", default=list(d.initial_windows),
             help=f"initial windows, packets; 4 = RFC 3390 at 1000 B ({','.join(map(str, d.initial_windows))})")
    a.add_argument("--access-rate-mbps", type=number, default=d.access_rate_mbps,
                   help="rate of the two access links, Mb/s (%(default)s)")
    a.add_argument("--reverse-queue-packets", type=integer, default=None,
                   help=f"drop-tail buffer of the reverse ACK port at the bottleneck rate ({d.reverse_queue_packets})")
    a.add_argument("--no-reverse-queue", action="store_true", help="ACKs return uncongested")
    a.add_argument("--rwnd", type=integer, default=d.rwnd, help="receiver window, packets (%(default)s)")
    a.add_argument("--min-rto-s", type=number, default=d.min_rto_s,
                   help="minimum and initial RTO, seconds (%(default)s)")
    a.add_argument("--decrease", default=None,
                   help=f"ASS decrease reading (algorithms 2-4): divide, fraction or standard ({d.decrease})")
    a.add_argument("--bins", type=integer, default=d.bins, help="time bins of the series (%(default)s)")
    a.add_argument("--startup-s", type=number, default=d.startup_s,
                   help="start-up window for the slow-start goodput, seconds (%(default)s)")
    add_jobs_flag(a, default=1)
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/ass.csv (per run), DIR/ass_timeseries.csv, DIR/ass.json, "
                        "DIR/ass_cwnd.png, DIR/ass_throughput.png")


def register(exps) -> None:
    """Register ``ass`` on the ``experiment`` subparsers ``exps``."""
    add_command(exps, "ass", help="Advanced Slow Start (Petrov & Janevski): throughput and cwnd over "
                                  "time, Algorithms 1-4, 0.3 and 10 Mb/s, IFQ 5-200",
                func=cmd_experiment_ass, flags=_ass_flags)
