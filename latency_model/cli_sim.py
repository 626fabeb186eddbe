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

from .cli import CliError, add_tcp_flags, number, params_from_args
from .params import TcpParams, apply_variant
from .sim import LT_MODES, RTO_RULES, SimConfig, run_transfer, simulate, single_loss, y_to_packets
from .sim.runner import ENGINES

__all__ = ["add_sim_commands", "add_simulated_y_to", "SIM_FLAGS"]

SIM_FLAGS = {
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
    "runs": "--runs",
    "seed": "--seed",
    "size_packets": "--size-packets",
    "size_bytes": "--size-bytes",
    "workers": "--workers",
    "drops segment index": "--drop",
    "run": "--run",
}


def _sim_message(message: str) -> str:
    for field, flag in SIM_FLAGS.items():
        if message.startswith(field + " "):
            return flag + message[len(field):]
    return message


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
        raise CliError(_sim_message(str(exc))) from None


def _sizes_bytes(args, mss: int) -> list[int]:
    if (args.size_packets is None) == (args.size_bytes is None):
        raise CliError("give --size-packets or --size-bytes (one of them)")
    values = args.size_packets if args.size_packets is not None else args.size_bytes
    flag = "--size-packets" if args.size_packets is not None else "--size-bytes"
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v <= 0 or v != int(v):
            raise CliError(f"{flag} must be whole numbers > 0, got {v!r}")
        out.append(int(v) * (mss if flag == "--size-packets" else 1))
    return out


def _guard(fn, *a, **kw):
    try:
        return fn(*a, **kw)
    except ValueError as exc:
        raise CliError(_sim_message(str(exc))) from None


# ---------------------------------------------------------------------------
# simulate


def cmd_simulate(args) -> int:
    config = config_from_args(args)
    base = params_from_args(args)
    results = []
    params_out = None
    for size_b in _sizes_bytes(args, base.mss_bytes):
        params = params_from_args(args, size_b) if args.variant == "size-based" else base
        params_out = params_out or params
        summary = _guard(simulate, params, [size_b], args.runs, args.seed, config=config,
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
    n = args.size_packets
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n != n or n < 1 or n != int(n):
        raise CliError(f"--size-packets must be a whole number >= 1, got {n!r}")
    params = params_from_args(args)
    if args.variant == "size-based":
        params = params_from_args(args, int(n) * params.mss_bytes)
    res = _guard(single_loss, params, int(n), config)
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
    sizes = _sizes_bytes(args, base.mss_bytes)
    if len(sizes) != 1:
        raise CliError("trace takes one size")
    size_b = sizes[0]
    params = params_from_args(args, size_b) if args.variant == "size-based" else base
    seed = _guard(_check_nonneg, "seed", args.seed)
    run = _guard(_check_nonneg, "run", args.run)
    kwargs = {}
    if args.drop:
        kwargs["drops"] = [int(d) if float(d).is_integer() else d for d in args.drop]
    else:
        child = np.random.SeedSequence(seed).spawn(run + 1)[run]
        kwargs["rng"] = np.random.Generator(np.random.PCG64(child))
    result, rows = _guard(run_transfer, params, size_bytes=size_b, config=config,
                          trace=True, **kwargs)
    buf = io.StringIO() if args.out is None else None
    fh = buf if buf is not None else open(args.out, "w", newline="")
    try:
        w = csv.writer(fh)
        w.writerow(TRACE_COLUMNS)
        for r in rows:
            w.writerow([repr(r.time_s), r.event, r.segment, repr(r.cwnd_bytes),
                        repr(r.ssthresh_bytes), r.flight_bytes])
    finally:
        if buf is None:
            fh.close()
    if buf is not None:
        sys.stdout.write(buf.getvalue())
    else:
        print(f"wrote {args.out}: {len(rows)} events, completion {result.completion_s:.6f} s, "
              f"{result.lost_packets} lost, {result.timeouts} timeouts, "
              f"{result.fast_retransmits} fast retransmits")
    return 0


def _check_nonneg(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or value < 0 or value != int(value):
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


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
    p.add_argument("--size-packets", type=number, nargs="+", default=None, metavar="N",
                   help="transfer sizes, packets of MSS")
    p.add_argument("--size-bytes", type=number, nargs="+", default=None, metavar="B",
                   help="transfer sizes, bytes (last segment may be short)")
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
    p.add_argument("--size-packets", type=number, nargs=1, default=None, metavar="N", help="transfer size, packets")
    p.add_argument("--size-bytes", type=number, nargs=1, default=None, metavar="B", help="transfer size, bytes")
    p.add_argument("--seed", type=number, default=0, help="root seed (%(default)s)")
    p.add_argument("--run", type=number, default=0, help="which run of `simulate --seed` to trace (%(default)s)")
    p.add_argument("--drop", type=number, action="append", default=[], metavar="I",
                   help="drop the first transmission of packet I (0-based, repeatable; no random loss)")
    p.add_argument("--out", default=None, metavar="FILE", help="write the CSV to FILE (default stdout)")
    p.set_defaults(func=cmd_trace)
