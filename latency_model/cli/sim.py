"""``latency-model simulate | single-loss | trace``: the packet simulator's commands.

The simulated path's flags are shared (:func:`~latency_model.cli.common.add_link_flags`);
each handler imports the simulator when it runs. Errors are raised as
:class:`~latency_model.cli.common.CliError` (one line, exit status 2).
"""

from __future__ import annotations

import csv
import io
import sys
from typing import TYPE_CHECKING

from ..studies.export import json_text
from ..values import show
from .common import (
    CliError,
    add_command,
    add_jobs_flag,
    add_link_flags,
    add_list,
    add_size_flags,
    add_tcp_flags,
    cell,
    check_budget,
    check_out_file,
    check_workers,
    config_from_args,
    flag_message,
    number,
    os_error_message,
    params_for_size,
    params_from_args,
    sizes_from_args,
)

if TYPE_CHECKING:  # annotations only
    from ..params import TcpParams
    from ..sim.config import SimConfig

__all__ = ["register", "rule_trace"]


# Flags whose shared default (cli/common.py) is a value, not None: the commands that may not
# read them set their default to None (``_unset_defaults``) so that a given one can be told
# from the default, and put the default back (``_given``) before the shared code reads them.
_UNSET_FLAGS = {"p": "--p", "p_ack": "--p-ack", "dup_t": "--dup-t", "variant": "--variant",
                "rto_rule": "--rto-rule", "seed": "--seed", "run": "--run"}


def _unset_defaults(p, dests) -> None:
    """Make the default of each flag in ``dests`` None (help text keeps the value); the values
    are kept in ``args.unset_defaults`` for :func:`_given`."""
    kept = {}
    for action in p._actions:
        if action.dest in dests:
            kept[action.dest] = action.default
            if action.help:
                action.help = action.help.replace("%(default)s", str(action.default))
            action.default = None
    p.set_defaults(unset_defaults=kept)


def _given(args) -> set:
    """The flags of :func:`_unset_defaults` the user gave (their flag names); the others get
    their default back."""
    given = set()
    for dest, default in getattr(args, "unset_defaults", {}).items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)
        else:
            given.add(_UNSET_FLAGS[dest])
    return given


def _refuse_unread(unread: list, why: str) -> None:
    """One line naming the flags in ``unread`` (in command-line order of the help) and why
    the command does not read them."""
    if unread:
        them = "it" if len(unread) == 1 else "them"
        raise CliError(f"{', '.join(unread)}: {why}, so it does not read {them}; drop {them}")


def _write(flag: str, path, text: str) -> None:
    """Write ``text`` to ``path`` (atomically); a file-system error names ``flag`` and the path
    given, never a temporary file."""
    from ..studies.export import atomic_write_text

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        exc.filename = str(path)
        raise CliError(os_error_message(exc, flag)) from None


def _check_outputs(args, plot) -> None:
    """``--out`` and ``--plot`` checked before any work (:func:`check_out_file`)."""
    if args.out is not None:
        check_out_file("--out", args.out)
    if plot is not None:
        check_out_file("--plot", args.plot)
        if args.out is not None:
            import os

            if os.path.abspath(args.out) == os.path.abspath(args.plot):
                raise CliError(f"--out and --plot name the same file {show(args.out)}; give two files")


# ---------------------------------------------------------------------------
# simulate


def cmd_simulate(args) -> int:
    config = config_from_args(args)
    base = params_from_args(args)
    sizes = sizes_from_args(args, base.mss_bytes, default=None, whole=True)
    _simulate_budget(args, base, config, sizes)  # before the simulator is imported

    from ..sim.montecarlo import simulate

    results = []
    params_out = None
    for size_b in sizes:
        params = params_for_size(args, base, size_b)
        params_out = params_out or params
        summary = simulate(params, size_bytes=[size_b], runs=args.runs, seed=args.seed, config=config,
                           engine=args.engine, workers=args.jobs)
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
        print(json_text(out))
        return 0
    recovery = ("NewReno" if config.sender == "rfc" else "ns-3 NewReno" if config.sender == "ns3" else
                "SACK" + (" + RACK-TLP" if config.rack_tlp else "") + (f" + PRR-{config.prr.upper()}"
                                                                       if config.prr != "off" else ""))
    print(f"{args.runs} transfers per size, seed {args.seed}, stack {config.stack}, {recovery}, "
          f"variant {args.variant}, growth rule {base.rule.name}, rto rule {config.rto_rule}")
    print(f"{'size (pkt)':>10}{'mean (s)':>10}{'95% CI (s)':>22}{'p50':>8}{'p95':>8}"
          f"{'P[timeout]':>11}{'lost':>7}{'FR':>7}")
    for r in results:
        ci = r["ci95_s"]
        ci_text = "-" if ci is None else f"[{_short(ci[0])}, {_short(ci[1])}]"
        print(cell(r["size_packets"], 10, "g") + cell(r["mean_latency_s"], 10, ".4f") + cell(ci_text, 22, "")
              + cell(r["percentiles_s"]["p50"], 8, ".3f") + cell(r["percentiles_s"]["p95"], 8, ".3f")
              + cell(r["timeout_fraction"], 11, ".3f") + cell(r["mean_lost_packets"], 7, ".2f")
              + cell(r["mean_fast_retransmits"], 7, ".2f"))
        cond = ", ".join(f"k={k}: {v['mean_s']:.3f} s (n={v['n']})"
                         for k, v in list(r["conditional"].items())[:5])
        print(f"{'':>10}  given k lost packets: {cond}")
    return 0


def _short(x: float) -> str:
    """A CI bound: 4 decimals, or 4 significant digits when that is too long."""
    text = f"{x:.4f}"
    return text if len(text) <= 9 else f"{x:.4g}"


def _simulate_budget(args, params, config, sizes: list) -> None:
    """Validate --runs, --seed, --engine and --jobs, then refuse a Monte Carlo that
    cannot fit in memory and warn when it is long (:func:`~latency_model.checks.simulation_cost`)."""
    from ..checks import check_int, simulation_cost
    from ..sim.runner import ENGINES, runs_compiled

    runs = check_int("runs", args.runs, low=1)
    check_int("seed", args.seed, low=0)
    if args.engine not in ENGINES:
        raise CliError(f"--engine must be one of {', '.join(ENGINES)}, got {show(args.engine)}")
    workers = check_workers("--jobs", args.jobs)
    compiled = runs_compiled(args.engine, params, config)
    memory, seconds = simulation_cost(runs, max(sizes) / params.mss_bytes, params.p, len(sizes), compiled=compiled,
                                      sender=config.sender)
    n = f"{len(sizes):,} size{'s' if len(sizes) > 1 else ''}"
    check_budget(f"--runs {runs:,} x {n}", memory + (workers - 1) * simulation_cost(runs // workers, 1, 0)[0],
                 seconds / workers)


# ---------------------------------------------------------------------------
# single-loss


def cmd_single_loss(args) -> int:
    from ..checks import check_int, simulation_cost, transfer_seconds
    from ..sim.singleloss import single_loss

    given = _given(args)
    _refuse_unread([f for f in ("--p", "--p-ack") if f in given],
                   "single-loss drops exactly the first transmission of one packet per transfer (no random "
                   "loss of data or ACKs)")
    config = config_from_args(args)
    sizes = [check_int("size_packets", v, low=1) for v in args.size_packets]
    base = params_from_args(args)
    # n transfers of n packets per size, each with one drop, on the pure-Python path
    memory = max(simulation_cost(1, n, 0.0)[0] for n in sizes)
    seconds = sum(n * transfer_seconds(n, 0.0, compiled=False) for n in sizes)
    check_budget(f"single-loss --size-packets {_sizes_text(sizes)}", memory, seconds)
    results = []
    for n in sizes:
        params = params_for_size(args, base, n * base.mss_bytes)
        res = single_loss(params, size_packets=n, config=config)
        row = {"size_packets": n, "pattern": res.pattern, "y_to_packets": res.y_to_packets,
               "tail_timeout_packets": res.tail_timeout_packets}
        if args.variant == "size-based":
            row["params"] = params.to_dict()
        results.append(row)
    out = {"params": base.to_dict(), "sim_config": config.to_dict(), "variant": args.variant, "results": results}
    if args.json:
        print(json_text(out))
        return 0
    print("single loss of packet i (0-based) in an n-packet transfer: "
          "T = timeout, F = fast retransmit" + (", P = tail loss probe" if config.rack_tlp else ""))
    width = len(str(max(sizes)))
    for r in results:
        print(f"n = {r['size_packets']:>{width}}  {r['pattern']}  (y_to = {r['y_to_packets']}, "
              f"tail = {r['tail_timeout_packets']} packets)")
    return 0


def _sizes_text(sizes: list) -> str:
    """Sizes for a message: ``12``, or ``1..30 (30 sizes)``."""
    return str(sizes[0]) if len(sizes) == 1 else f"{min(sizes):,}..{max(sizes):,} ({len(sizes):,} sizes)"


# ---------------------------------------------------------------------------
# trace

TRACE_COLUMNS = ["time_s", "event", "segment", "cwnd_bytes", "ssthresh_bytes", "flight_bytes", "rto_s"]
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _plot_path(args):
    """The ``--plot`` file, checked (its suffix names the format), or ``None``."""
    from pathlib import Path

    if args.plot is None:
        return None
    path = Path(args.plot)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise CliError(f"--plot must name a {', '.join(PLOT_SUFFIXES)} file, got {args.plot!r}")
    return path


def cmd_trace(args) -> int:
    """The event trace of one transfer (CSV, or JSON with --json), every lost transmission
    marked ``drop``; ``--plot FILE`` also draws it with the fluid model's path for the same
    losses overlaid (:mod:`latency_model.studies.trace_plots`)."""
    if args.rtts is not None:
        return cmd_rule_trace(args)
    given = _given(args)
    if args.pipe_packets is not None:
        raise CliError("--pipe-packets needs --rtts N (the RTT-by-RTT window trace)")
    if args.csv and args.json:
        raise CliError("give --csv or --json, not both")
    plot = _plot_path(args)
    if args.drop:
        _refuse_unread([f for f in ("--p", "--p-ack", "--seed", "--run") if f in given],
                       "--drop scripts the losses (no random loss of data or ACKs)")
    import numpy as np

    from ..checks import check_int
    from ..studies.trace_figures import simulated_trace

    config = config_from_args(args)
    base = params_from_args(args)
    sizes = sizes_from_args(args, base.mss_bytes, default=None, whole=True)
    if len(sizes) != 1:
        flag = "--size-bytes" if args.size_bytes is not None else "--size-packets"
        raise CliError(f"{flag} gives {len(sizes):,} sizes: trace follows one transfer, so give one (simulate and "
                       "single-loss take lists and ranges)")
    size_b = sizes[0]
    params = params_for_size(args, base, size_b)
    seed = check_int("seed", args.seed, low=0)
    run = check_int("run", args.run, low=0)
    if not args.drop and params.p == 0.0 and config.p_ack == 0.0:
        _refuse_unread([f for f in ("--seed", "--run") if f in given],
                       "with --p 0 and --p-ack 0 nothing is lost at random (the transfer draws no random number)")
    _check_outputs(args, plot)  # before the transfer is simulated
    kwargs = {}
    if args.drop:
        kwargs["drops"] = [int(d) if float(d).is_integer() else d for d in args.drop]
    else:
        child = np.random.SeedSequence(seed).spawn(run + 1)[run]
        kwargs["rng"] = np.random.Generator(np.random.PCG64(child))
    result, rows = simulated_trace(params, size_b, config, **kwargs)
    if args.json:
        how = {"drops": kwargs["drops"]} if args.drop else {"seed": seed, "run": run}
        text = json_text({"params": params.to_dict(), "sim_config": config.to_dict(), "size_bytes": size_b,
                           **how, "result": result.to_dict(), "columns": TRACE_COLUMNS,
                           "events": [{c: getattr(r, c) for c in TRACE_COLUMNS} for r in rows]}) + "\n"
    else:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(TRACE_COLUMNS)
        for r in rows:
            w.writerow([repr(r.time_s), r.event, r.segment, repr(r.cwnd_bytes), repr(r.ssthresh_bytes),
                        r.flight_bytes, repr(r.rto_s)])
        text = buf.getvalue()
    if plot is not None:
        _plot_event_trace(plot, params, config, size_b, result, rows,
                          f"drops {', '.join(str(d) for d in kwargs['drops'])} (0-based, placed)" if args.drop
                          else f"p = {params.p:g}, seed {seed}, run {run}")
    summary = (f"{len(rows)} events, completion {result.completion_s:.6f} s, {result.lost_packets} lost, "
               f"{result.timeouts} timeouts, {result.fast_retransmits} fast retransmits")
    if args.out is None:
        sys.stdout.write(text)
    else:
        _write("--out", args.out, text)
        print(f"wrote {args.out}: {summary}")
    if plot is not None:
        print(f"wrote {plot}: the trace with the model overlaid", file=sys.stderr if args.out is None else sys.stdout)
    return 0


def _plot_event_trace(path, params, config, size_b, result, rows, how) -> None:
    from ..studies.plots import pyplot, save_figure
    from ..studies.trace_figures import dropped_segments, model_trace, trace_rows, trace_setting_text
    from ..studies.trace_plots import build_trace_figure

    model = model_trace(params, size_b, dropped_segments(rows))
    tidy = trace_rows("trace", model, rows, params.mss_bytes)
    note = f"; model ({model.time_model}): drops {list(model.unmodelled_drops)} not reached by its states" \
        if model.unmodelled_drops else ""
    def count(k, what):
        return f"{k} {what}{'' if k == 1 else 's'}"

    fig = build_trace_figure(tidy, f"latency-model trace: {result.n_segments} packets, "
                                   f"{result.lost_packets} lost, {count(result.timeouts, 'timeout')}, "
                                   f"{count(result.fast_retransmits, 'fast retransmit')}",
                             trace_setting_text(params, size_b, how + note, config))
    try:
        save_figure(fig, path, dpi=110, close=False)
    except OSError as exc:
        exc.filename = str(path)
        raise CliError(os_error_message(exc, "--plot")) from None
    finally:
        pyplot().close(fig)


# ---------------------------------------------------------------------------
# trace --rtts: a rule's flow-level windows beside the simulator's, RTT by RTT

RULE_TRACE_DEFAULTS = {"w0": 1.0, "w_ss": 1e9, "rwnd": None}
"""``trace --rtts`` starts like the papers' figures: one packet, no slow-start threshold (10^9
packets) and no receiver window (``rwnd`` None: the largest TCP allows, 2^30 bytes / MSS,
:func:`rule_trace_defaults`) unless --w0/--iw, --wss, --rwnd are given."""


def rule_trace_defaults(mss_bytes: int) -> dict:
    """:data:`RULE_TRACE_DEFAULTS` for segments of ``mss_bytes``: M is the largest receiver
    window TCP can advertise (:data:`~latency_model.params.MAX_WINDOW_BYTES` / MSS)."""
    from ..params import MAX_WINDOW_BYTES

    return {**RULE_TRACE_DEFAULTS, "rwnd": float(MAX_WINDOW_BYTES // mss_bytes)}

RULE_TRACE_COLUMNS = ["rtt", "closed_form_cwnd", "simulated_cwnd", "simulated_segments", "simulated_time_s"]


def rule_trace(params: TcpParams, n_rtts: int, config: SimConfig, pipe_packets=None,
               queue_packets=None) -> dict:
    """The ``trace --rtts`` result: closed-form and simulated windows (and pipe counts).

    Parameters
    ----------
    params : TcpParams
        Rule, W0, W_SS, M, b, MSS and RTT (``p`` is ignored: both traces are loss-free).
    n_rtts : int
        RTTs shown (>= 1).
    config : SimConfig
        Path of the simulated trace (its drop-tail buffer is ignored there).
    pipe_packets : int, optional
        Also count packets sent before the first loss on a path holding this many
        packets (:func:`~latency_model.sim.config.pipe_config`; buffer ``queue_packets``,
        default half the pipe).

    Returns
    -------
    dict
        JSON-ready: ``rule``, ``params`` (the rule's), ``tcp``, ``closed_form``,
        ``simulated`` and, with a pipe, ``packets_before_loss`` and ``pipe``.
        Windows in packets, capped at M.
    """
    from ..checks import check_int
    from ..growth.flow import flow_windows, rule_packets_before_loss
    from ..sim.config import pipe_config
    from ..sim.rounds import packets_before_first_drop, rtt_rounds

    m = params.rwnd
    closed = flow_windows(params.rule, params.w0, n_rtts, w_ss=params.w_ss, b=params.b, rwnd=m)
    sim = rtt_rounds(params, n_rtts, config.replace(queue_packets=None))
    rule = params.rule.describe()
    out = {
        "rule": rule.pop("name"),
        "params": rule,
        "tcp": {k: v for k, v in params.to_dict().items() if k in ("mss_bytes", "rtt_s", "w0", "w_ss", "rwnd", "b")},
        "closed_form": {"rtt": list(range(n_rtts)), "cwnd": closed},
        "simulated": {"rtt": list(range(n_rtts)), "cwnd": [min(c, m) for c in sim.cwnd_packets],
                      "segments": sim.segments, "time_s": sim.time_s,
                      "transfer_packets": sim.size_packets},
        "sim_config": config.replace(queue_packets=None).to_dict(),
    }
    if pipe_packets is not None:
        pipe = check_int("pipe_packets", pipe_packets, low=2)
        path = pipe_config(params.rtt_s, params.mss_bytes, pipe, queue_packets, base=config)
        cf = rule_packets_before_loss(params.rule, pipe, params.w0, w_ss=params.w_ss, b=params.b, rwnd=m)
        sim_n = packets_before_first_drop(params, path)
        out["packets_before_loss"] = {"closed_form": None if cf == float("inf") else int(cf),
                                      "simulated": sim_n}
        out["pipe"] = {"pipe_packets": pipe, "queue_packets": path.queue_packets,
                       "bdp_packets": pipe - path.queue_packets,
                       "link_rate_bps": path.link_rate_bps, "delay_s": path.delay_s}
    return out


def _rule_trace_text(d: dict) -> str:
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in d["params"].items())
    tcp = d["tcp"]
    from ..params import MAX_WINDOW_BYTES

    top = {"w_ss": 1e9, "rwnd": MAX_WINDOW_BYTES // tcp["mss_bytes"]}  # no threshold, no receiver window
    limits = ", ".join(f"{name} = {tcp[key]:g}" if tcp[key] < top[key] else f"{name} none"
                      for name, key in (("W_SS", "w_ss"), ("M", "rwnd")))
    lines = [f"rule {d['rule']} ({params or 'no parameters'}), W0 = {tcp['w0']:g}, b = {tcp['b']}, {limits}",
             "cwnd in packets at the start of each RTT (simulated: once the previous round is acknowledged)",
             f"{'RTT':>4}{'closed form':>13}{'simulated':>11}{'segments':>10}{'time (s)':>10}"]
    cf, sm = d["closed_form"], d["simulated"]
    for k, c, w, n, t in zip(cf["rtt"], cf["cwnd"], sm["cwnd"], sm["segments"], sm["time_s"]):
        lines.append(f"{k:>4}{c:>13.3f}{w:>11.3f}{n:>10}{t:>10.4f}")
    if "packets_before_loss" in d:
        pb, pipe = d["packets_before_loss"], d["pipe"]
        show = lambda v: "never" if v is None else str(v)  # noqa: E731
        lines.append(f"packets sent before the first loss, pipe of {pipe['pipe_packets']} packets "
                     f"(BDP {pipe['bdp_packets']} + buffer {pipe['queue_packets']}): "
                     f"closed form {show(pb['closed_form'])}, simulated {show(pb['simulated'])}")
    return "\n".join(lines) + "\n"


def _rule_trace_csv(d: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(RULE_TRACE_COLUMNS)
    cf, sm = d["closed_form"], d["simulated"]
    for row in zip(cf["rtt"], cf["cwnd"], sm["cwnd"], sm["segments"], sm["time_s"]):
        w.writerow([row[0], repr(row[1]), repr(row[2]), row[3], repr(row[4])])
    return buf.getvalue()


RULE_TRACE_UNREAD = (("p", "--p"), ("p_ack", "--p-ack"), ("seed", "--seed"), ("run", "--run"),
                     ("dup_t", "--dup-t"), ("variant", "--variant"), ("dup_lt", "--dup-lt"),
                     ("lt_mode", "--lt-mode"), ("recovery", "--recovery"), ("prr", "--prr"),
                     ("rack_tlp", "--rack-tlp"))
"""``trace --rtts`` flags that a loss-free transfer never reads (no loss, so no random draw, no
duplicate ACK, no recovery): refused when given."""


def cmd_rule_trace(args) -> int:
    from ..checks import check_int
    from ..sim.rounds import NotLossFree

    given = _given(args)
    if args.drop or args.size_packets is not None or args.size_bytes is not None:
        raise CliError("--rtts traces a long loss-free transfer: --drop, --size-packets and --size-bytes "
                       "belong to the event trace (without --rtts)")
    unread = [flag for dest, flag in RULE_TRACE_UNREAD
              if flag in given or (flag not in _UNSET_FLAGS.values() and getattr(args, dest, None) is not None)]
    _refuse_unread(unread, "--rtts traces a loss-free transfer (no random loss, no duplicate ACK, no recovery)")
    if args.pipe_packets is None and args.queue_packets is not None:  # the windows are traced without a buffer
        raise CliError("--queue-packets: --rtts traces the windows on a path without a buffer; the buffer is "
                       "the --pipe-packets path's: give --pipe-packets P with it, or drop it")
    if args.csv and args.json:
        raise CliError("give --csv or --json, not both")
    if args.csv and args.pipe_packets is not None:
        raise CliError("--pipe-packets counts are in the table and --json output, not in --csv")
    plot = _plot_path(args)
    n = check_int("n_rounds", args.rtts, low=1, high=1000)
    from ..params import TcpParams

    try:
        mss = TcpParams(mss_bytes=args.mss).mss_bytes
    except ValueError as exc:
        raise CliError(flag_message(str(exc))) from None
    params = params_from_args(args, defaults=rule_trace_defaults(mss)).replace(p=0.0)
    config = config_from_args(args)
    _check_outputs(args, plot)  # before the transfer is simulated
    try:
        d = rule_trace(params, n, config, args.pipe_packets, args.queue_packets)
    except NotLossFree as exc:  # no loss is drawn here: only a timer shorter than the round trip
        timer = (f"the paper's fixed RTO ({params.rto:g} s: --rto-s, or max(1 s, 4 RTT))"
                 if config.rto_rule == "paper" else
                 f"the RTO (--initial-rto-s {config.initial_rto_s:g}, --min-rto-s {config.min_rto_s:g})")
        raise CliError(f"--rtts: the loss-free trace retransmitted ({exc.event!r} event): {timer} expired "
                       f"before an ACK came back (RTT {params.rtt_s:g} s); give a longer timer") from None
    except ValueError as exc:
        raise CliError(flag_message(str(exc))) from None
    text = json_text(d) + "\n" if args.json else _rule_trace_csv(d) if args.csv else _rule_trace_text(d)
    if args.out is None:
        sys.stdout.write(text)
    else:
        _write("--out", args.out, text)
        print(f"wrote {args.out}: {n} RTTs of rule {d['rule']}")
    if plot is not None:
        from ..studies.trace_plots import save_rule_trace_plot

        try:
            save_rule_trace_plot(d, plot)
        except OSError as exc:
            exc.filename = str(plot)
            raise CliError(os_error_message(exc, "--plot")) from None
        print(f"wrote {plot}: closed form and simulated window per RTT",
              file=sys.stderr if args.out is None else sys.stdout)
    return 0


# ---------------------------------------------------------------------------
# Registration


def _simulate_flags(p) -> None:
    from ..sim.runner import ENGINES

    add_tcp_flags(p)
    add_link_flags(p)
    add_size_flags(p)  # no default size: one of the two flags is needed
    p.add_argument("--runs", type=number, default=1000, help="transfers per size (%(default)s)")
    p.add_argument("--seed", type=number, default=0, help="root seed (%(default)s)")
    p.add_argument("--engine", default="auto", help=f"{', '.join(ENGINES)} (%(default)s; same results)")
    add_jobs_flag(p, default=1)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _single_loss_flags(p) -> None:
    add_tcp_flags(p)
    add_link_flags(p)
    _unset_defaults(p, ("p", "p_ack"))  # not read: refused when given
    add_list(p, "--size-packets", required=True, metavar="SIZES",
             help="transfer sizes, packets: N, a,b,c or a:b[:step] (one pattern per size)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _trace_flags(p) -> None:
    add_tcp_flags(p)
    add_link_flags(p)
    # the shared grammar, one transfer: a list or range is refused with the count it gives
    add_list(p, "--size-packets", default=None, metavar="N", help="transfer size, packets (one transfer: one value)")
    add_list(p, "--size-bytes", default=None, metavar="N", help="transfer size, bytes (one transfer: one value)")
    p.add_argument("--seed", type=number, default=0, help="root seed (%(default)s)")
    p.add_argument("--run", type=number, default=0, help="which run of `simulate --seed` to trace (%(default)s)")
    p.add_argument("--drop", type=number, action="append", default=[], metavar="I",
                   help="drop the first transmission of packet I (0-based, repeatable; no random loss)")
    p.add_argument("--out", default=None, metavar="FILE", help="write the CSV (or JSON) to FILE (default stdout)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (event trace: params, sim_config, result, events)")
    p.add_argument("--csv", action="store_true",
                   help="print CSV (the event trace's default; with --rtts one row per RTT)")
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="also draw the trace to FILE (.png, .svg or .pdf): the simulated cwnd and packets "
                        "with the fluid model for the same losses overlaid (with --rtts: the windows)")
    g = p.add_argument_group("window trace (--rtts): closed form vs simulator, loss-free, "
                             "from W0 = 1 with no W_SS or M unless given")
    g.add_argument("--rtts", type=number, default=None, metavar="N",
                   help="show the window at the start of RTTs 0..N-1 instead of the event trace")
    g.add_argument("--pipe-packets", type=number, default=None, metavar="P",
                   help="also count packets sent before the first loss on a path holding P packets "
                        "(BDP + --queue-packets buffer, default P/2)")
    # --drop or --rtts leave some unread: refused when given
    _unset_defaults(p, ("p", "p_ack", "seed", "run", "dup_t", "variant"))


def register(sub) -> None:
    """Register ``simulate``, ``single-loss`` and ``trace`` on the subparsers ``sub``."""
    add_command(sub, "simulate", help="Monte Carlo of the packet-level simulator: latency, CI, per-loss means",
                func=cmd_simulate, flags=_simulate_flags)
    add_command(sub, "single-loss", help="T/F per position when only that packet's first transmission is lost",
                func=cmd_single_loss, flags=_single_loss_flags)
    add_command(sub, "trace", help="event trace of one simulated transfer as CSV or JSON (lost "
                "transmissions marked drop; --plot FILE draws it with the model overlaid); with --rtts, "
                "a rule's closed-form window beside the simulated one, RTT by RTT",
                func=cmd_trace, flags=_trace_flags)
