"""``latency-model kernel``: real transfers through this machine's Linux TCP (docs/kernel.md).

Flags describing the path, the sizes, the loss, the runs and the seed are ``simulate``'s
(:func:`~latency_model.cli.common.add_size_flags` and the same names and meanings for the
rest), plus ``--cc``, ``--drop``, ``--concurrency``, ``--compare`` (the simulator beside the
kernel on the same cells), ``--csv`` and ``--packet-log``. The testbed is imported when the
command runs; without root, ``/dev/net/tun`` or namespaces it is one line and exit 2.
"""

from __future__ import annotations

import csv
import io
import os
import signal

from ..studies.export import json_text
from .common import (
    CliError,
    add_command,
    add_size_flags,
    cell,
    check_out_file,
    hide,
    number,
    os_error_message,
    sizes_from_args,
    warn,
)

__all__ = ["register"]

CCS = ("reno", "cubic")


def _flags(p) -> None:
    from ..params import TcpParams

    d = TcpParams()
    g = p.add_argument_group("path and loss (as simulate's)")
    hide(g.add_argument("--mss-bytes", "--mss", dest="mss", type=number, default=d.mss_bytes,
                        help="segment payload MSS, bytes (%(default)s)"), "--mss")
    hide(g.add_argument("--rtt-s", "--rtt", dest="rtt", type=number, default=None,
                        help="round-trip time, seconds (default 2 x --delay-s)"), "--rtt")
    g.add_argument("--delay-s", type=number, default=None, help="one-way propagation delay d, seconds (0.05)")
    g.add_argument("--link-rate-bps", type=number, default=100e6, help="link rate C, bit/s (%(default)g)")
    g.add_argument("--p", type=number, default=None, help=f"loss probability of each data packet in [0, 1) "
                   f"({d.p:g}; 0 with --drop); SYNs, pure ACKs and pure FINs are never dropped")
    add_size_flags(p)
    p.add_argument("--runs", type=number, default=200, help="transfers per size (%(default)s)")
    p.add_argument("--seed", type=number, default=0, help="root seed of the loss streams (%(default)s)")
    k = p.add_argument_group("kernel testbed")
    k.add_argument("--cc", default="cubic",
                   help=f"congestion control: {', '.join(CCS)} (%(default)s: the kernel's default, "
                        "as the linux profile's rule)")
    k.add_argument("--drop", type=number, action="append", default=[], metavar="I",
                   help="drop the first transmission of segment I (0-based; repeatable; no random loss)")
    k.add_argument("--concurrency", type=number, default=16,
                   help="transfers at once, each on its own emulated link (%(default)s; same results)")
    k.add_argument("--compare", action="store_true", help="run the simulator beside the kernel on the same cells")
    k.add_argument("--stack", default="linux", metavar="NAME",
                   help="the simulator's stack profile for --compare and the self-check (%(default)s)")
    k.add_argument("--csv", default=None, metavar="FILE", help="write one row per transfer to FILE")
    k.add_argument("--packet-log", default=None, metavar="FILE", help="the link emulator's packet log (CSV)")
    k.add_argument("--json", action="store_true", help="print one JSON object")


def _check(args):
    """Validated (delay_s, sizes) and checked flags; every error names its flag."""
    from ..checks import check_int, check_real
    from ..params import TcpParams

    if args.p is None:
        args.p = 0.0 if args.drop else TcpParams.p
    try:
        mss = check_int("--mss-bytes", args.mss, low=40, high=1400)
        if args.delay_s is not None and args.rtt is not None and abs(2 * args.delay_s - args.rtt) > 1e-12:
            raise CliError(f"--rtt-s {args.rtt:g} with --delay-s {args.delay_s:g}: give one of them")
        delay = args.delay_s if args.delay_s is not None else (args.rtt / 2 if args.rtt is not None else 0.05)
        check_real("--delay-s" if args.rtt is None else "--rtt-s", delay, low=0.0, high=10.0)
        check_real("--link-rate-bps", args.link_rate_bps, low=1e5, high=1e10)
        check_real("--p", args.p, low=0.0, high=1.0, high_open=True)
        check_int("--runs", args.runs, low=1)
        check_int("--seed", args.seed, low=0, high=2**63)
        check_int("--concurrency", args.concurrency, low=1, high=256)
        drops = tuple(check_int("--drop", i, low=0, high=10**6) for i in args.drop)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.cc not in CCS:
        raise CliError(f"--cc must be one of {', '.join(CCS)}, got {args.cc!r}")
    if drops and args.p != 0:
        raise CliError(f"--drop scripts the losses: --p {args.p:g} would add random ones; give one of them")
    from ..sim.profiles import STACK_NAMES

    if args.stack not in STACK_NAMES:
        raise CliError(f"--stack must be one of {', '.join(STACK_NAMES)}, got {args.stack!r}")
    sizes = sizes_from_args(args, mss, default=None, whole=True)
    for s in sizes:
        if any(i * mss >= s for i in drops):
            raise CliError(f"--drop {max(drops)}: a {s}-byte transfer has segments 0..{-(-s // mss) - 1}")
    for flag, path in (("--csv", args.csv), ("--packet-log", args.packet_log)):
        if path is not None:
            check_out_file(flag, path)
    return mss, delay, sizes, drops


def cmd_kernel(args) -> int:
    mss, delay, sizes, drops = _check(args)
    from ..kernel.measure import load_problem, measure, self_check, simulated
    from ..kernel.testbed import Testbed, Unavailable, machine_problem

    problem = machine_problem()
    if problem:
        raise CliError(problem)

    def on_term(signum, frame):  # SIGTERM cleans up as Ctrl-C does
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        with Testbed(delay_s=delay, rate_bps=float(args.link_rate_bps), mss_bytes=mss,
                     packet_log=args.packet_log) as tb:
            check = self_check(tb, [s // mss for s in sizes], args.cc, args.stack)
            cells = [measure(tb, s, cc=args.cc, p=float(args.p), runs=int(args.runs), seed=int(args.seed),
                             drops=drops, concurrency=int(args.concurrency)) for s in sizes]
            info = {"release": tb.kernel_release, "config_hz": tb.hz, "sysctls": tb.sysctls, "sched_fifo": tb.fifo}
    except Unavailable as exc:
        raise CliError(str(exc)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    sims = None
    if args.compare:
        sims = [simulated(args.cc, s, mss_bytes=mss, delay_s=delay, rate_bps=float(args.link_rate_bps),
                          p=float(args.p), runs=int(args.runs), seed=int(args.seed), stack=args.stack,
                          drops=drops or None) for s in sizes]
    link = {}
    for c in cells:
        for key, v in c.link.items():
            link[key] = max(link.get(key, 0), v) if key == "max_us" else link.get(key, 0) + v
    if link.get("packets"):
        link["mean_us"] = sum(c.link["mean_us"] * c.link["packets"] for c in cells) / link["packets"]
    loaded = load_problem(link)
    if args.csv is not None:
        _write_csv(args.csv, cells)
    out = {
        "kernel": info,
        "path": {"mss_bytes": mss, "delay_s": delay, "link_rate_bps": float(args.link_rate_bps), "p": float(args.p),
                 "drops": list(drops)},
        "cc": args.cc, "runs": int(args.runs), "seed": int(args.seed), "concurrency": int(args.concurrency),
        "self_check": check,
        "link": link,
        "too_loaded": loaded,
        "load_average": os.getloadavg()[0],
        "results": [dict(c.summary, wall_s=c.wall_s) for c in cells],
    }
    if sims is not None:
        out["simulator"] = {"stack": args.stack, "results": sims}
    if args.json:
        print(json_text(out))
    else:
        _print(out)
    if not check["ok"]:
        warn(f"self-check: the loss-free staircase differs from the simulator's by up to {check['worst_ms']:.2f} ms "
             "(more than 1 ms)")
    if loaded:
        warn(f"the machine was too loaded to trust this run's timing: {loaded}")
    return 0


def _write_csv(path, cells) -> None:
    from ..kernel.measure import CSV_COLUMNS
    from ..studies.export import atomic_write_text

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("p", *CSV_COLUMNS))
    for c in cells:
        for t in c.transfers:
            d = t.to_dict()
            d["dropped_segments"] = " ".join(map(str, d["dropped_segments"]))
            w.writerow((c.p, *(d[k] for k in CSV_COLUMNS)))
    try:
        atomic_write_text(path, buf.getvalue())
    except OSError as exc:
        exc.filename = str(path)
        raise CliError(os_error_message(exc, "--csv")) from None


def _print(out: dict) -> None:
    k, path = out["kernel"], out["path"]
    loss = f"drops {path['drops']}" if path["drops"] else f"p {path['p']:g}"
    print(f"kernel {k['release']}: {out['runs']} transfers per size, {out['cc']}, {loss}, seed {out['seed']}, "
          f"{path['delay_s'] * 1e3:g} ms each way, {path['link_rate_bps'] / 1e6:g} Mb/s, MSS {path['mss_bytes']}")
    sc = out["self_check"]
    print(f"self-check (no loss, vs simulator --stack {out.get('simulator', {}).get('stack', 'linux')}): worst "
          f"{sc['worst_ms']:.3f} ms {'ok' if sc['ok'] else 'OUTSIDE 1 ms'}; link lateness mean "
          f"{out['link'].get('mean_us', 0):.0f} us, max {out['link'].get('max_us', 0) / 1e3:.2f} ms, "
          f"{out['link'].get('over_1ms', 0)} of {out['link'].get('packets', 0):,} packets > 1 ms late; "
          f"load average {out['load_average']:.1f}")
    sims = out.get("simulator", {}).get("results")
    print(f"{'size (pkt)':>10}{'mean (s)':>10}{'95% CI (s)':>22}{'p50':>8}{'p95':>8}{'P[timeout]':>11}{'lost':>7}"
          + (f"{'sim (s)':>10}{'sim TO':>8}" if sims else ""))
    for i, r in enumerate(out["results"]):
        ci = r["ci95_s"]
        ci_text = "-" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"
        line = (cell(r["size_packets"], 10, "g") + cell(r["mean_latency_s"], 10, ".4f") + cell(ci_text, 22, "")
                + cell(r["percentiles_s"]["p50"], 8, ".3f") + cell(r["percentiles_s"]["p95"], 8, ".3f")
                + cell(r["timeout_fraction"], 11, ".3f") + cell(r["mean_lost_packets"], 7, ".2f"))
        if sims:
            line += cell(sims[i]["mean_latency_s"], 10, ".4f") + cell(sims[i]["timeout_fraction"], 8, ".3f")
        print(line)
        cond = ", ".join(f"k={k}: {v['mean_s']:.3f} s (n={v['n']})" for k, v in list(r["conditional"].items())[:4])
        print(f"{'':>10}  given k lost packets: {cond}")
        if sims and sims[i]["conditional"]:
            cond = ", ".join(f"k={k}: {v['mean_s']:.3f} s (n={v['n']})"
                             for k, v in list(sims[i]["conditional"].items())[:4])
            print(f"{'':>10}  simulator:            {cond}")


def register(sub) -> None:
    add_command(sub, "kernel", help="real transfers through this machine's Linux TCP (namespaces, TUN, "
                "a link emulator); --compare puts the simulator beside it", func=cmd_kernel, flags=_flags)
