"""``latency-model experiment modern``: the paper's Figures 9 and 10 for today's TCP.

Expected latency and the latency cut given one loss against NewReno, sizes 1..60 packets, for
NewReno, LT, the paper's proposal, Early Retransmit, SACK + RACK-TLP and SACK + RACK-TLP + PRR,
model and simulation side by side (:mod:`latency_model.experiments.modern`).
"""

from __future__ import annotations

import math

from ..values import show
from .common import CliError, add_command, add_jobs_flag, add_list, hide, integer, check_budget, check_workers, parse_sizes
from .experiment import ci_text, emit, flag_error, out_dir

__all__ = ["register"]

_FLAGS = {"variants": "--variants", "variant": "--variants", "iw_packets": "--iw", "ps": "--p",
          "sizes_packets": "--size-packets", "runs": "--runs", "seed": "--seed", "prr": "--prr",
          "lt_mode": "--lt-mode", "stack": "--stack", "workers": "--jobs", "engine": "--engine"}

_TRANSFERS_PER_S = 25_000.0
"""Simulated transfers per CPU-second for this experiment's sizes (compiled engine, measured
on the reference VM: 14,000-22,000 40-packet transfers per second)."""


def _fmt(x, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _text(res) -> str:
    from ..experiments.modern import LABELS

    ex = res.experiment
    lines = [
        f"Figures 9-10 for today's TCP: MSS 500 B, RTT 0.1 s, W_SS = M = 30, b = 1, stack "
        f"{ex.stack}; {len(ex.sizes_packets)} sizes ({ex.sizes_packets[0]}..{ex.sizes_packets[-1]} packets), "
        f"{ex.runs} runs per size, seed {ex.seed}",
        "means over sizes; gain = NewReno minus the variant, paired 95% CI; share = of the proposal's gain",
    ]
    for iw in ex.iw_packets:
        for p in ex.ps:
            lines += ["", f"IW {iw}, p = {p:g}",
                      f"{'variant':<19}{'E[L] model':>11}{'E[L] sim':>10}  {'gain sim s':<24}{'share model':>12}"
                      f"{'share sim':>11}{'L1 share m/s':>15}"]
            for s in (r for r in res.summary if r["iw_packets"] == iw and r["p"] == p):
                gain = ci_text(*(math.nan if s[k] is None else s[k]
                                 for k in ("sim_gain_s", "sim_gain_ci_low_s", "sim_gain_ci_high_s")), ".3f")
                l1 = (f"{_fmt(s['model_l1_share_of_proposal_gain'], '.2f')}/"
                      f"{_fmt(s['sim_l1_share_of_proposal_gain'], '.2f')}")
                lines.append(f"{LABELS[s['variant']]:<19}{s['model_mean_expected_s']:>11.3f}"
                             f"{s['sim_mean_expected_s']:>10.3f}  {gain:<24}"
                             f"{_fmt(s['model_share_of_proposal_gain'], '.2f'):>12}"
                             f"{_fmt(s['sim_share_of_proposal_gain'], '.2f'):>11}{l1:>15}")
    if res.claims:
        lines += ["", "claims (model beside simulation; each with its rule):"]
        for c in res.claims:
            verdict = "agrees" if c["agrees"] else "DISAGREES"
            paper = "" if c["paper"] is None else f", paper {c['paper']}"
            lines.append(f"  {verdict:<9} {c['claim']}: model {_short(c['model'])}, "
                         f"simulation {_short(c['simulation'])}{paper}")
        n = sum(bool(c["agrees"]) for c in res.claims)
        lines.append(f"  {n} of {len(res.claims)} claims agree")
    return "\n".join(lines)


def _short(value) -> str:
    if isinstance(value, float):
        return format(value, ".3f")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    return str(value)


def cmd_experiment_modern(args) -> int:
    from ..experiments.modern import (LT_MODES, PRR_MODES, QUICK_RUNS, QUICK_SIZES, SACK_VARIANTS, VARIANTS,
                                      ModernExperiment, run_modern)
    from ..studies.export import write_csv, write_json

    variants = tuple(args.variants) if args.variants is not None else VARIANTS
    # Recovery options that the chosen variants cannot use: one line, before any work.
    if args.prr is not None:
        if args.prr not in PRR_MODES:
            raise CliError(f"--prr must be one of {', '.join(PRR_MODES)} (the reduction bound of variant "
                           f"sack-rack-tlp-prr; prr off is variant sack-rack-tlp), got {show(args.prr)}")
        if "sack-rack-tlp-prr" not in variants:
            raise CliError("--prr applies to variant sack-rack-tlp-prr, which --variants leaves out")
    if args.lt_mode is not None:
        if args.lt_mode not in LT_MODES:
            raise CliError(f"--lt-mode must be one of {', '.join(LT_MODES)}, got {show(args.lt_mode)}")
        if not {"lt", "proposal"} & set(variants):
            raise CliError("--lt-mode applies to variants lt and proposal (dup_lt), which --variants "
                           "leaves out")
    sizes = (QUICK_SIZES if args.quick and args.size_packets is None
             else parse_sizes(args.size_packets or "1:60", "--size-packets"))
    runs = args.runs if args.runs is not None else (QUICK_RUNS if args.quick else 400)
    workers = check_workers("--jobs", args.jobs)
    try:
        ex = ModernExperiment(
            variants=variants, iw_packets=tuple(args.iw), ps=tuple(float(p) for p in args.p), sizes_packets=tuple(_int_size(s) for s in sizes),
            runs=runs, seed=args.seed, prr=args.prr or "ssrb", lt_mode=args.lt_mode,
            stack=args.stack, workers=workers, engine=args.engine)
    except ValueError as exc:
        raise flag_error(exc, _FLAGS) from None
    out_dir(args)  # checked (and created) once every flag is, before the run
    cells = len(ex.variants) * len(ex.iw_packets) * len(ex.ps) * len(ex.sizes_packets)
    mean_size = sum(ex.sizes_packets) / len(ex.sizes_packets)
    transfers = cells * ex.runs * max(mean_size / 30.0, 0.1)
    sack = sum(v in SACK_VARIANTS for v in ex.variants)
    single = len(ex.iw_packets) * sum(ex.sizes_packets) * (len(ex.variants) * 3e-4 + sack * 2e-3)
    check_budget(f"--runs {ex.runs} x {cells} cells", cells * ex.runs * 48.0,
                 (transfers / _TRANSFERS_PER_S + single) / workers)
    res = run_modern(ex)

    def write(out, data):
        from ..experiments.modern import SERIES_COLUMNS, SUMMARY_COLUMNS
        from ..experiments.plot_modern import plot_modern  # matplotlib only when a figure is asked for

        return [write_csv(out / "modern.csv", data["series"], SERIES_COLUMNS),
                write_csv(out / "modern_summary.csv", data["summary"], SUMMARY_COLUMNS),
                write_json(out / "modern.json", data), plot_modern(data, out / "modern.png")]

    return emit(args, res, _text(res), write)


def _int_size(value: float) -> int:
    if value != int(value):
        raise CliError(f"--size-packets must give whole packets, got {value:g}")
    return int(value)


def _modern_flags(a) -> None:
    from ..experiments.modern import VARIANTS

    hide(add_list(a, "--variants", "--variant", kind="name", default=None,
                  help=f"a subset of {', '.join(VARIANTS)} (all)"), "--variant")
    add_list(a, "--iw", kind="integer", default=[2, 10], help="initial windows, packets (2,10)")
    add_list(a, "--p", default=[0.01, 0.05, 0.1], help="loss probabilities (0.01,0.05,0.1)")
    add_list(a, "--size-packets", default=None, metavar="SIZES",
             help="file sizes in packets: N, a,b,c or a:b[:step] (1:60)")
    a.add_argument("--runs", type=integer, default=None,
                   help="simulated transfers per variant, IW, p and size (400; --quick: 100)")
    a.add_argument("--seed", type=integer, default=1, help="root seed (%(default)s)")
    add_jobs_flag(a, default=1)
    a.add_argument("--quick", action="store_true",
                   help="13 sizes from 1 to 60 packets and 100 runs (a few seconds of simulation)")
    a.add_argument("--prr", default=None,
                   help="PRR reduction bound of variant sack-rack-tlp-prr: ssrb or crb (ssrb)")
    a.add_argument("--lt-mode", default=None,
                   help="meaning of dup_lt for the simulated LT and proposal: paper (Section 2.1, as the "
                        "model) or rfc3042 (as reproduce) (paper; ns3 stack: rfc3042)")
    a.add_argument("--stack", default="rfc",
                   help="simulated stack profile: rfc, ns3 (NewReno and LT only) or linux (%(default)s)")
    a.add_argument("--engine", default="auto", help="simulator engine: auto, python, compiled (%(default)s)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/modern.csv (per variant, IW, p, size), DIR/modern_summary.csv, "
                        "DIR/modern.json, DIR/modern.png")


def register(exps) -> None:
    """Register ``modern`` on the ``experiment`` subparsers ``exps``."""
    add_command(exps, "modern", help="Figures 9-10 for today's TCP: NewReno, LT, proposal, ER, SACK + "
                                     "RACK-TLP (+ PRR), model and simulation, IW 2 and 10",
                func=cmd_experiment_modern, flags=_modern_flags)
