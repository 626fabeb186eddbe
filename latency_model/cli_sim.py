"""Simulator subcommands of ``latency-model``: ``simulate``, ``single-loss``, ``trace``,
and the ``"simulated"`` column of ``tables``.

Kept apart from :mod:`latency_model.cli` so the simulator's flags live in one place;
:func:`add_sim_commands` registers the subcommands on the main parser. Errors are
raised as :class:`~latency_model.cli.CliError` (one line, exit status 2).
"""

from __future__ import annotations

import csv
import io
import json
import sys

import numpy as np

from .checks import check_int
from .cli import (
    CliError,
    _flag_message,
    add_size_flags,
    add_tcp_flags,
    number,
    params_for_size,
    params_from_args,
    sizes_from_args,
)
from .export import atomic_write_text
from .params import TcpParams, apply_variant
from .sim import LT_MODES, RTO_RULES, SimConfig, run_transfer, simulate, single_loss, y_to_packets
from .sim.runner import ENGINES

__all__ = ["add_sim_commands", "add_simulated_y_to"]

def add_link_flags(parser) -> None:
    """Flags of :class:`~latency_model.sim.SimConfig` (path, timers, rule choices)."""
    d = SimConfig()
    g = parser.add_argument_group("simulated path and timers")
    g.add_argument("--link-rate-bps", type=number, default=d.link_rate_bps,
                   help="bottleneck rate C, bit/s (%(default)g)")
    g.add_argument("--delay-s", type=number, default=None,
                   help="one-way propagation delay d, seconds (default rtt/2)")
    g.add_argument("--header-bytes", type=number, default=d.header_bytes,
                   help="per-packet header overhead, bytes (%(default)s)")
    g.add_argument("--delack-timeout-s", type=number, default=d.delack_timeout_s,
                   help="delayed-ACK timer, seconds (%(default)s)")
    g.add_argument("--min-rto-s", type=number, default=d.min_rto_s,
                   help="RFC 6298 minimum RTO, seconds (%(default)s)")
    g.add_argument("--initial-rto-s", type=number, default=d.initial_rto_s,
                   help="RFC 6298 initial RTO, seconds (%(default)s)")
    g.add_argument("--max-rto-s", type=number, default=d.max_rto_s,
                   help="RFC 6298 maximum RTO, seconds (%(default)s)")
    g.add_argument("--rto-rule", default=d.rto_rule,
                   help=f"timer rule: {', '.join(RTO_RULES)} (%(default)s; paper = fixed max(1 s, 4 RTT) or --rto)")
    g.add_argument("--lt-mode", default=d.lt_mode,
                   help=f"meaning of dup_lt: {', '.join(LT_MODES)} (%(default)s)")
    g.add_argument("--p-ack", type=number, default=d.p_ack,
                   help="ACK loss probability in [0, 1) (%(default)s)")


def config_from_args(args) -> SimConfig:
    """Validated :class:`SimConfig` from the link flags (errors name the flag)."""
    try:
        return SimConfig(
            link_rate_bps=args.link_rate_bps,
            delay_s=args.delay_s,
            header_bytes=args.header_bytes,
            delack_timeout_s=args.delack_timeout_s,
            min_rto_s=args.min_rto_s,
            initial_rto_s=args.initial_rto_s,
            max_rto_s=args.max_rto_s,
            rto_rule=args.rto_rule,
            lt_mode=args.lt_mode,
            p_ack=args.p_ack,
        )
    except ValueError as exc:
        raise CliError(_flag_message(str(exc))) from None


# ---------------------------------------------------------------------------
# simulate


def cmd_simulate(args) -> int:
    config = config_from_args(args)
    base = params_from_args(args)
    results = []
    params_out = None
    for size_b in sizes_from_args(args, base.mss_bytes, default=None, whole=True):
        params = params_for_size(args, base, size_b)
        params_out = params_out or params
        summary = simulate(params, [size_b], args.runs, args.seed, config=config,
                           size_unit="bytes", engine=args.engine, workers=args.workers)
        row = summary.results[0].to_dict()
        if args.variant == "size-based":
            row["params"] = params.to_dict()
        results.append(row)
    out = {
        "params": params_out.to_dict(),
        "sim_config": config.to_dict(),
        "variant": args.variant,
        "runs": int(args.runs),
        "seed": int(args.seed),
        "results": results,
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.runs} transfers per size, seed {args.seed}, variant {args.variant}, "
          f"rto rule {config.rto_rule}")
    print(f"{'size (pkt)':>10}{'mean (s)':>10}{'95% CI (s)':>22}{'p50':>8}{'p95':>8}"
          f"{'P[timeout]':>11}{'lost':>7}{'FR':>7}")
    for r in results:
        ci = r["ci95_s"]
        ci_text = "-" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"
        print(f"{r['size_packets']:>10}{r['mean_latency_s']:>10.4f}{ci_text:>22}"
              f"{r['percentiles_s']['p50']:>8.3f}{r['percentiles_s']['p95']:>8.3f}"
              f"{r['timeout_fraction']:>11.3f}{r['mean_lost_packets']:>7.2f}"
              f"{r['mean_fast_retransmits']:>7.2f}")
        cond = ", ".join(f"k={k}: {v['mean_s']:.3f} s (n={v['n']})"
                         for k, v in list(r["conditional"].items())[:5])
        print(f"{'':>10}  given k lost packets: {cond}")
    return 0


# ---------------------------------------------------------------------------
# single-loss


def cmd_single_loss(args) -> int:
    config = config_from_args(args)
    n = check_int("size_packets", args.size_packets, low=1)
    params = params_for_size(args, params_from_args(args), n * args.mss)
    res = single_loss(params, n, config)
    out = {"pattern": res.pattern, "y_to_packets": res.y_to_packets,
           "tail_timeout_packets": res.tail_timeout_packets}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"single loss of packet i (0-based) in a {int(n)}-packet transfer: "
          "T = timeout, F = fast retransmit")
    print(res.pattern)
    print(f"y_to = {res.y_to_packets} packets, tail = {res.tail_timeout_packets} packets")
    return 0


# ---------------------------------------------------------------------------
# trace

TRACE_COLUMNS = ["time_s", "event", "segment", "cwnd_bytes", "ssthresh_bytes", "flight_bytes"]


def cmd_trace(args) -> int:
    config = config_from_args(args)
    base = params_from_args(args)
    sizes = sizes_from_args(args, base.mss_bytes, default=None, whole=True)
    if len(sizes) != 1:
        raise CliError("trace takes one size")
    size_b = sizes[0]
    params = params_for_size(args, base, size_b)
    seed = check_int("seed", args.seed, low=0)
    run = check_int("run", args.run, low=0)
    kwargs = {}
    if args.drop:
        kwargs["drops"] = [int(d) if float(d).is_integer() else d for d in args.drop]
    else:
        child = np.random.SeedSequence(seed).spawn(run + 1)[run]
        kwargs["rng"] = np.random.Generator(np.random.PCG64(child))
    result, rows = run_transfer(params, size_bytes=size_b, config=config, trace=True, **kwargs)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TRACE_COLUMNS)
    for r in rows:
        w.writerow([repr(r.time_s), r.event, r.segment, repr(r.cwnd_bytes), repr(r.ssthresh_bytes), r.flight_bytes])
    if args.out is None:
        sys.stdout.write(buf.getvalue())
    else:
        atomic_write_text(args.out, buf.getvalue())
        print(f"wrote {args.out}: {len(rows)} events, completion {result.completion_s:.6f} s, "
              f"{result.lost_packets} lost, {result.timeouts} timeouts, "
              f"{result.fast_retransmits} fast retransmits")
    return 0


# ---------------------------------------------------------------------------
# tables: the "simulated" list


def add_simulated_y_to(rows: list[dict], lt_mode: str = "rfc3042", dup_t: int = 3, dup_lt: int = 2) -> None:
    """Add a ``"simulated"`` list (y_to in packets) to each row of ``table_rows()``.

    Slow-start rows start with cwnd = W0 and ssthresh = 30 packets (> W0);
    congestion-avoidance rows with ssthresh = W0. ``y_to`` is the number of leading
    positions whose single loss ends in a timeout (:func:`~latency_model.sim.y_to_packets`).
    """
    config = SimConfig(lt_mode=lt_mode)
    for row in rows:
        sim = []
        for w0 in row["w0"]:
            w_ss = 30.0 if row["phase"] == "slow_start" else float(w0)
            p = TcpParams(p=0.0, w0=w0, w_ss=w_ss, rwnd=30.0, b=row["b"], dup_t=dup_t)
            if row["lt"]:
                p = apply_variant(p, "lt").replace(dup_lt=dup_lt)
            sim.append(y_to_packets(p, config))
        row["simulated"] = sim
        row["simulated_lt_mode"] = lt_mode


# ---------------------------------------------------------------------------
# registration


def add_sim_commands(sub) -> None:
    """Register ``simulate``, ``single-loss`` and ``trace`` on the subparsers ``sub``."""
    p = sub.add_parser("simulate", help="Monte Carlo of the packet-level simulator: latency, CI, per-loss means")
    add_tcp_flags(p)
    add_link_flags(p)
    add_size_flags(p)
    p.add_argument("--runs", type=number, default=1000, help="transfers per size (%(default)s)")
    p.add_argument("--seed", type=number, default=0, help="root seed (%(default)s)")
    p.add_argument("--engine", default="auto", help=f"{', '.join(ENGINES)} (%(default)s; same results)")
    p.add_argument("--workers", type=number, default=1, help="worker processes (%(default)s; same results)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("single-loss", help="T/F per position when only that packet's first transmission is lost")
    add_tcp_flags(p)
    add_link_flags(p)
    p.add_argument("--size-packets", type=number, required=True, metavar="N", help="transfer size, packets")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_single_loss)

    p = sub.add_parser("trace", help="event trace of one simulated transfer as CSV")
    add_tcp_flags(p)
    add_link_flags(p)
    add_size_flags(p)
    p.add_argument("--seed", type=number, default=0, help="root seed (%(default)s)")
    p.add_argument("--run", type=number, default=0, help="which run of `simulate --seed` to trace (%(default)s)")
    p.add_argument("--drop", type=number, action="append", default=[], metavar="I",
                   help="drop the first transmission of packet I (0-based, repeatable; no random loss)")
    p.add_argument("--out", default=None, metavar="FILE", help="write the CSV to FILE (default stdout)")
    p.set_defaults(func=cmd_trace)
