"""``latency-model accuracy``: every analytic model against the simulated mean, cell by cell.

The work is :mod:`latency_model.studies.accuracy`: the simulator runs on the sweep machinery
(cached in ``--cache``, resumable, on local cores or Dask), the models through the registry.
Prints the summary per model (and per model and variant) and the worst cells, or with
``--json`` one JSON object; ``--out DIR`` writes ``accuracy.csv``, ``accuracy.json`` and one
heat map per model, variant and b. Every bad value is one line naming its flag, exit status
2, before any work: an unknown or uninstalled model, a named model that does not cover a
variant (naming what it covers), a bad size, p, b, W0 or variant, and a flag no model of the
map reads (``--packet-max-packets`` without the packet model, ``--w0`` with PFTK).
"""

from __future__ import annotations

import os
import sys

from ..values import show
from .common import (CliError, add_command, add_jobs_flag, add_link_flags, add_list, check_out_dir, check_workers,
                     config_from_args, flag_message, hide, number, parse_sizes, warn)

__all__ = ["register", "cmd_accuracy"]

# Field names in the map's errors -> the flags that set them.
_FLAGS = {"models": "--models", "model": "--models", "size_packets": "--size-packets", "sizes_packets":
          "--size-packets", "p": "--p", "b": "--b", "variants": "--variants", "variant": "--variants",
          "w0": "--w0", "runs": "--runs", "seed": "--seed", "engine": "--engine", "jobs": "--jobs"}


def _message(text: str) -> str:
    """An error of the map or its plan naming the flag (``p must ...`` -> ``--p must ...``)."""
    if text.startswith("w0 ") and "(models;" in text:  # the map's W0 axis beside PFTK
        return "--w0" + text[2:].replace("(models;", "(--models;")
    for field, flag in _FLAGS.items():
        if text.startswith(field + " "):
            if field == "model" and not text.startswith("model must"):
                return f"{flag}: {text}"  # "model pftk: ..." keeps the model's name
            return flag + text[len(field):]
    if text.startswith("simulated sizes"):
        return f"--size-packets: {text}"
    return flag_message(text)


NS3_VARIANTS = ("newreno", "lt")
"""The recovery variants ns-3.37's sender runs without SACK (``sim.ns3.check_ns3_params``)."""


def _names(values, flag: str) -> list[str]:
    """Names from ``--models a,b c`` (commas and spaces), none empty."""
    out = []
    for v in values:
        for part in str(v).split(","):
            if not part.strip():
                raise CliError(f"{flag} has an empty name in {show(v)}")
            out.append(part.strip())
    return out


def _map_from_args(args):
    from ..studies.accuracy import DEFAULT_MAP, QUICK_MAP, AccuracyMap

    base = QUICK_MAP if args.quick else DEFAULT_MAP
    config = config_from_args(args, models_read_b=True)
    variants = base.variants
    if args.variants is None and config.sender == "ns3":
        # ns-3.37 without SACK has no tail rule and no Early Retransmit (sim.ns3.check_ns3_params):
        # the default map keeps the variants its sender runs
        variants = tuple(v for v in variants if v in NS3_VARIANTS)
        warn(f"--stack {args.stack}: variants {', '.join(variants)} (ns-3.37's sender runs only "
             f"{' and '.join(NS3_VARIANTS)}; --variants names others)")
    sizes = base.sizes_packets
    if args.size_packets is not None:
        sizes = parse_sizes(args.size_packets, "--size-packets")
    try:
        return AccuracyMap(
            models=None if args.models is None else _names(args.models, "--models"),
            sizes_packets=sizes,
            p=base.p if args.p is None else args.p,
            b=base.b if args.b is None else args.b,
            variants=variants if args.variants is None else _names(args.variants, "--variants"),
            w0=args.w0,
            runs=base.runs if args.runs is None else args.runs,
            seed=args.seed,
            sim_config=config,
            engine=args.engine,
        )
    except ValueError as exc:
        raise CliError(_message(str(exc))) from None


def _check_models_read(args, models) -> None:
    """Refuse an explicit flag no model of the map would read (one line, exit 2):
    ``--packet-max-packets`` without the packet model. (``--w0`` with PFTK, which has no
    initial window, is refused by :class:`~latency_model.studies.accuracy.AccuracyMap`.)"""
    if args.packet_max_packets is not None and "packet" not in models:
        raise CliError(f"--packet-max-packets is the packet model's option, and --models {','.join(models)} "
                       "does not run it")


def _check_variants_run(amap) -> None:
    """Refuse, before any work, a variant the simulated stack would not run as asked: Early
    Retransmit under RACK-TLP (:func:`~latency_model.sim.transfer.check_recovery`; the
    simulator refuses it too, but only once its cells start)."""
    from ..params import TcpParams, apply_variant
    from ..sim.transfer import check_recovery

    for variant in amap.variants:
        if variant != "size-based":  # the proposal or LT, neither with Early Retransmit
            try:
                check_recovery(apply_variant(TcpParams(), variant), amap.sim_config)
            except ValueError as exc:
                raise CliError(f"--variants {variant}: {flag_message(str(exc))}") from None


def _cache_dir(args) -> str:
    if args.cache is not None:
        return check_out_dir("--cache", args.cache)
    if args.out is not None:
        return os.path.join(args.out, ".cache")
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "latency_model")


def cmd_accuracy(args) -> int:
    from ..checks import BudgetError
    from .sweep import _dask_client

    amap = _map_from_args(args)
    _check_models_read(args, amap.model_names())
    _check_variants_run(amap)
    from ..checks import check_real
    from ..studies.accuracy import MODEL_MAX_PACKETS, MODEL_TIMEOUT_S, QUICK_MAX_PACKETS, QUICK_MODEL_TIMEOUT_S

    try:
        if args.model_timeout is None:
            timeout = QUICK_MODEL_TIMEOUT_S if args.quick else MODEL_TIMEOUT_S
        else:
            timeout = check_real("--model-timeout-s", args.model_timeout, low=0.0) or None  # 0: no limit
        max_packets = dict(QUICK_MAX_PACKETS if args.quick else MODEL_MAX_PACKETS)
        if args.packet_max_packets is not None:  # 0: no cap
            cap = check_real("--packet-max-packets", args.packet_max_packets, low=0.0)
            if cap:
                max_packets["packet"] = cap
            else:
                max_packets.pop("packet", None)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if sum(x is not None for x in (args.jobs, args.scheduler, args.dask_local)) > 1:
        raise CliError("give one of --jobs, --scheduler and --dask-local")
    jobs = (os.cpu_count() or 1) if args.jobs is None else check_workers("--jobs", args.jobs)
    if args.dask_local is not None:
        check_workers("--dask-local", args.dask_local)
    if args.out is not None:
        check_out_dir("--out", args.out)
    cache_dir = _cache_dir(args)
    check_out_dir("--cache", cache_dir)
    from ..studies.accuracy import dumps, run_accuracy, summary_text, write_outputs
    from ..studies.sweep import SweepInterrupted, SweepSpec, estimate_sweep, plan_sweep

    try:  # the cost first (models counted as the fluid solver), then every cell, before any work
        spec = amap.sweep_spec()
        from ..studies.sweep import Axis, Grid

        both = SweepSpec(grid=Grid(spec.grid.axes + (Axis("model", amap.model_names()),)), what="both",
                         runs=amap.runs, seed=amap.seed, sim_config=amap.sim_config, engine=amap.engine)
        workers = args.dask_local or (jobs if args.scheduler is None else 1)
        note = estimate_sweep(both).check(workers)
        plan_sweep(spec)
    except BudgetError as exc:
        raise CliError(f"{exc} (in --size-packets, --p, --b, --variants, --w0, --runs)") from None
    except ValueError as exc:
        raise CliError(_message(str(exc))) from None
    if note:
        warn(note)
    cfg = amap.sim_config
    if (timeout is not None and cfg is not None and "packet" in amap.model_names()
            and (cfg.sender == "sack" or cfg.rtt_sampling == "timestamps")):
        warn(f"--stack {args.stack}: the packet model runs this sender on the simulator's transitions or the tree DP, minutes a call from "
             f"about 20 packets at p of several percent; calls over the {timeout:g} s --model-timeout-s are reported as not computed "
             "(--model-timeout-s 0 lifts it)")
    client = cluster = None
    if args.scheduler is not None or args.dask_local is not None:
        client, cluster = _dask_client(args)
    try:
        result = run_accuracy(amap, cache_dir=cache_dir, jobs=jobs, client=client, force=args.force,
                              progress=not args.quiet and not args.json and sys.stderr.isatty(),
                              command=" ".join(["latency-model", *sys.argv[1:]]), model_timeout_s=timeout,
                              max_packets=max_packets)
    except SweepInterrupted as exc:
        r = exc.report
        print(f"latency-model: interrupted: {r.rows_resumed + r.rows_computed} of {r.n_rows} simulated cells saved "
              f"in {r.out}; rerun the same command to resume", file=sys.stderr)
        return 130
    except ValueError as exc:
        raise CliError(_message(str(exc))) from None
    except OSError as exc:
        from .common import os_error_message

        raise CliError(os_error_message(exc, "--cache")) from None
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    paths = []
    if args.out is not None:
        try:
            paths = write_outputs(result, args.out)
        except OSError as exc:
            from .common import os_error_message

            raise CliError(os_error_message(exc, "--out")) from None
    if args.json:
        print(dumps(result))
        return 0
    print(summary_text(result))
    print()
    print(f"simulation: {result['sim_rows_computed']} cells computed, {result['sim_rows_resumed']} from "
          f"{os.path.join(cache_dir, result['sim_table'])}; model calls: {result['model_calls_computed']} "
          f"computed, {result['model_calls_cached']} cached")
    for p in paths:
        print(f"wrote {p}")
    return 0


def _accuracy_flags(p) -> None:
    from ..params import VARIANTS
    from ..studies.accuracy import (DEFAULT_MAP, MODEL_MAX_PACKETS, MODEL_TIMEOUT_S, QUICK_MAP, QUICK_MAX_PACKETS,
                                    QUICK_MODEL_TIMEOUT_S)

    d, q = DEFAULT_MAP, QUICK_MAP
    g = p.add_argument_group("cells (default: the map below; --quick: a smaller one)")
    hide(add_list(g, "--models", "--model", kind="name", default=None,
                  help="models (fluid, packet, csa, pftk); default: every installed "
                       "model, each on the set-ups it covers (named models must cover every cell)"), "--model")
    hide(add_list(g, "--size-packets", "--sizes", dest="size_packets", default=None, metavar="SIZES",
                  help="file sizes in packets: N, a,b,c or a:b[:step] "
                       f"({','.join(f'{s:g}' for s in d.sizes_packets)}; --quick "
                       f"{','.join(f'{s:g}' for s in q.sizes_packets)})"), "--sizes")
    add_list(g, "--p", default=None,
             help=f"loss probabilities in [0, 1) ({','.join(f'{v:g}' for v in d.p)}; --quick "
                  f"{','.join(f'{v:g}' for v in q.p)})")
    add_list(g, "--b", default=None,
             help=f"delayed-ACK factors ({','.join(str(v) for v in d.b)}; --quick "
                  f"{','.join(str(v) for v in q.b)})")
    hide(add_list(g, "--variants", "--variant", kind="name", default=None,
                  help=f"recovery variants: {', '.join([*VARIANTS, 'size-based'])} "
                       f"({','.join(d.variants)})"), "--variant")
    add_list(g, "--w0", default=None, help="initial windows, packets (default: the paper's 2, or the stack's)")
    g.add_argument("--runs", type=number, default=None,
                   help=f"simulated transfers per cell ({d.runs}; --quick {q.runs})")
    g.add_argument("--seed", type=number, default=0, help="root seed of the simulator (%(default)s)")
    g.add_argument("--quick", action="store_true", help="the small map (seconds, not minutes)")
    p.add_argument("--json", action="store_true", help="print one JSON object (map, summary, worst cells, rows)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write DIR/accuracy.csv, accuracy.json and accuracy_<model>_<variant>_b<b>.png")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="cache of the simulated cells and the model calls (DIR/.cache with --out, "
                        "else ~/.cache/latency_model)")
    p.add_argument("--force", action="store_true", help="recompute, ignoring the cache")
    hide(p.add_argument("--model-timeout-s", "--model-timeout", dest="model_timeout", type=number, default=None,
                        metavar="SECONDS",
                   help=f"longest a model call may run ({MODEL_TIMEOUT_S:g}; --quick {QUICK_MODEL_TIMEOUT_S:g}; "
                        "0: no limit); the cells of a call stopped there are listed as not computed"), "--model-timeout")
    p.add_argument("--packet-max-packets", type=number, default=None, metavar="N",
                   help=f"largest size the packet model is asked for ({MODEL_MAX_PACKETS['packet']:g}; --quick "
                        f"{QUICK_MAX_PACKETS['packet']:g}; 0: no cap, with --model-timeout-s 0 the whole map: its "
                        "calls take minutes from 40 packets); larger cells are listed as not computed")
    p.add_argument("--engine", default="auto", help="simulator engine (auto; same results)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    g = p.add_argument_group("executor (one of)")
    add_jobs_flag(g, help="local worker processes; the same results for any value (all cores)")
    g.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a running dask.distributed scheduler")
    g.add_argument("--dask-local", type=number, default=None, metavar="N",
                   help="start a Dask LocalCluster of N workers")
    add_link_flags(p)


def register(sub) -> None:
    """Register ``accuracy`` on the subparsers ``sub``."""
    add_command(sub, "accuracy", help="every model against the simulated mean over a grid of sizes, p, b and "
                "variants: relative errors, a summary per model, heat maps", func=cmd_accuracy,
                flags=_accuracy_flags)
