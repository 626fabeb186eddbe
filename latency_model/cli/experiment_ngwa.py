"""``latency-model experiment ngwa``: NGWA's lost packets and triple dupACKs per mode (Table 2).

Registered on the ``experiment`` group (:mod:`latency_model.cli.experiment`); errors are raised
as :class:`~latency_model.cli.common.CliError` or ``ValueError`` (one line, exit status 2).
"""

from __future__ import annotations

import math

from .common import CliError, add_command, add_list, hide, integer, number
from .experiment import emit, flag_error, json_safe, names, out_dir

__all__ = ["register"]

# NgwaExperiment field -> flag, so that errors name what the user typed.
_FLAGS = {"scale": "--scale", "rounds": "--rounds", "seed": "--seed", "queue_bytes": "--queue-bytes",
          "w_max_bytes": "--w-max-bytes", "alpha": "--alpha", "bottleneck_rate_bps": "--bottleneck-rate-bps",
          "sources": "--sources", "source_on_s": "--source-on-s", "source_off_s": "--source-off-s",
          "variants": "--variants", "variant": "--variants"}


def _mean_ci(row: dict, m: str, fmt: str) -> str:
    lo, hi = row[f"{m}_lo"], row[f"{m}_hi"]
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return format(row[m], fmt)
    return f"{format(row[m], fmt)} [{format(lo, fmt)}, {format(hi, fmt)}]"


def _text(res) -> str:
    ex = res.experiment
    lines = [
        f"NGWA experiment (Talau & Wille, Section 3.3): 4 flows, {ex.horizon_s:g} s runs (scale {ex.scale:g}), "
        f"queue {ex.queue_packets} packets ({ex.queue_bytes} B), W_max {ex.w_max_bytes} B, alpha {ex.alpha:g}, "
        f"{ex.sources} x {ex.source_rate_bps / 1e3:g} kb/s on-off source(s), {ex.rounds} rounds "
        f"(root seed {ex.seed}); mean per round [95% CI]",
        "",
        f"{'variant':<9}{'lost':<24}{'paper':>7}  {'triple dupACKs':<22}{'paper':>7}  {'fairness':<9}{'util %':<7}",
    ]
    d = json_safe(res.to_dict())
    for row in d["series"]:
        pt = row["paper_triple_dupacks"]
        lines.append(f"{row['variant']:<9}{_mean_ci(row, 'lost', '.1f'):<24}{row['paper_lost']:>7}  "
                     f"{_mean_ci(row, 'triple_dupacks', '.1f'):<22}{'-' if pt is None else pt:>7}  "
                     f"{row['jain_fairness']:<9.3f}{row['utilisation_pct']:<7.1f}")
    lines += ["", "claims (counts compared by kind, zero or nonzero; orderings by our means):"]
    for c in res.claims:
        verdict = "agrees" if c["agrees"] else "DISAGREES"
        ours = c["ours"]
        if isinstance(ours, dict):
            ours = ", ".join(f"{k} {v:.4g}" for k, v in ours.items())
        elif isinstance(ours, float):
            ours = format(ours, ".4g")
        lines.append(f"  {verdict:<9} {c['claim']}: ours {ours}, paper {c['paper']}")
    return "\n".join(lines)


SMOOTHED_MODES = ("mode2", "mode4", "mode6", "mode8")
"""The NGWA modes with the smoothing equation (SE), the only ones that read alpha (Table 1)."""


def _check_reads(ex, given: dict) -> None:
    """Refuse a flag given explicitly that no run of ``ex`` reads: ``--alpha`` without a
    smoothed mode, ``--source-on-s`` without on/off sources (``--sources 0`` or
    ``--source-off-s 0``: always on), ``--source-off-s`` with ``--sources 0``."""
    if given["alpha"] is not None and not set(SMOOTHED_MODES) & set(ex.variants):
        raise CliError(f"--alpha is the smoothing constant of modes {', '.join(m[4:] for m in SMOOTHED_MODES)} "
                       f"(SE), and --variants {','.join(ex.variants)} runs none of them; drop --alpha or add "
                       "one of them to --variants")
    if ex.sources == 0:
        unread = [flag for k, flag in (("source_on_s", "--source-on-s"), ("source_off_s", "--source-off-s"))
                  if given[k] is not None]
        if unread:
            them = "it" if len(unread) == 1 else "them"
            raise CliError(f"{', '.join(unread)}: --sources 0 runs no on/off source, so nothing reads {them}; "
                           f"drop {them} or give --sources 1 or more")
    elif given["source_on_s"] is not None and ex.source_off_s == 0:
        raise CliError("--source-on-s: with --source-off-s 0 (the default) the sources are always on, so the "
                       "on period is not read; give --source-off-s > 0 with it, or drop it")


def cmd_experiment_ngwa(args) -> int:
    from ..experiments.ngwa import NgwaExperiment, run_ngwa
    from ..studies.export import write_csv, write_json

    variants = tuple(v.lower() for v in names(args.variants))
    # alpha, source_on_s, source_off_s: None when not given (the experiment's defaults)
    d = NgwaExperiment.__dataclass_fields__
    given = {k: getattr(args, k) for k in ("alpha", "source_on_s", "source_off_s")}
    values = {k: d[k].default if v is None else v for k, v in given.items()}
    try:
        ex = NgwaExperiment(scale=args.scale, rounds=args.rounds, seed=args.seed, queue_bytes=args.queue_bytes,
                            w_max_bytes=args.w_max_bytes, bottleneck_rate_bps=args.bottleneck_rate_bps,
                            sources=args.sources, variants=variants, **values)
    except ValueError as exc:
        raise flag_error(exc, _FLAGS) from None
    _check_reads(ex, given)
    out_dir(args)  # before the run
    res = run_ngwa(ex)

    def write(out, data):
        from ..experiments.plot_ngwa import plot_ngwa  # matplotlib only when a figure is asked for

        return [write_csv(out / "ngwa.csv", data["series"], list(data["series"][0].keys())),
                write_csv(out / "ngwa_per_round.csv", data["per_round"], list(data["per_round"][0].keys())),
                write_json(out / "ngwa.json", data), plot_ngwa(data, out / "ngwa.png")]

    return emit(args, res, _text(res), write)


def _ngwa_flags(p) -> None:
    from ..experiments.ngwa import VARIANTS, NgwaExperiment

    d = NgwaExperiment()
    p.add_argument("--scale", type=number, default=d.scale,
                   help="run length as a fraction of the paper's 600 s (%(default)s)")
    p.add_argument("--rounds", type=integer, default=d.rounds, help="repetitions (paper: 30) (%(default)s)")
    p.add_argument("--seed", type=integer, default=d.seed, help="root seed (%(default)s)")
    p.add_argument("--queue-bytes", type=integer, default=d.queue_bytes,
                   help="router drop-tail buffer, bytes (paper: 97 KB) (%(default)s)")
    p.add_argument("--w-max-bytes", type=integer, default=d.w_max_bytes,
                   help="maximum window W_max, bytes (paper: 64 KB) (%(default)s)")
    # alpha and the source periods: None when not given; given where no run reads them, refused
    p.add_argument("--alpha", type=number, default=None,
                   help=f"smoothing constant of modes 2, 4, 6 and 8 ({d.alpha:g})")
    p.add_argument("--bottleneck-rate-bps", type=number, default=d.bottleneck_rate_bps,
                   help="bottleneck rate, bit/s (our choice; the paper's Figure 2 is not in its text) (%(default)s)")
    p.add_argument("--sources", type=integer, default=d.sources,
                   help="500 kb/s on-off sources feeding the router (%(default)s)")
    p.add_argument("--source-on-s", type=number, default=None,
                   help=f"on period, s, with --source-off-s > 0 ({d.source_on_s:g})")
    p.add_argument("--source-off-s", type=number, default=None,
                   help=f"off period, s; 0 = always on ({d.source_off_s:g})")
    hide(add_list(p, "--variants", "--variant", kind="name", default=list(VARIANTS),
                  help="a subset of " + ", ".join(VARIANTS) + " (default: all)"), "--variant")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/ngwa.csv (per variant), DIR/ngwa_per_round.csv, DIR/ngwa.json, DIR/ngwa.png")


def register(exps) -> None:
    """Register ``ngwa`` on the ``experiment`` subparsers ``exps``."""
    add_command(exps, "ngwa", help="NGWA, Section 3.3: lost packets and triple dupACKs per mode "
                                   "(Table 2) vs NewReno and RFC 793",
                func=cmd_experiment_ngwa, flags=_ngwa_flags)
