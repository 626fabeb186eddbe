"""``latency-model experiment btcp``: Burst TCP's experiment (Section 4).

Mean mice transfer time and loss with 95% CIs over seeds for NewReno, B-TCP(4) and B-TCP(8)
(:mod:`latency_model.experiments.btcp`), each claim of the paper marked.
"""

from __future__ import annotations

from .common import add_command, add_list, hide, integer, number
from .experiment import ci_text, emit, flag_error, names, out_dir

__all__ = ["register"]

# BtcpExperiment field -> flag, so that errors name what the user typed.
_FLAGS = {"scale": "--scale", "seeds": "--seeds", "seed": "--seed", "flows_per_node": "--flows-per-node",
          "queue_packets": "--queue-packets", "access_queue_packets": "--access-queue-packets",
          "rwnd": "--rwnd", "min_rto_s": "--min-rto-s", "b": "--b", "variants": "--variants",
          "variant": "--variants"}

_LABELS = {"newreno": "NewReno", "btcp4": "B-TCP(4)", "btcp8": "B-TCP(8)"}


def _btcp_text(res) -> str:
    from ..experiments.btcp import PAPER_CLAIMS

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
        g = lambda m, fmt: ci_text(row[m], row[f"{m}_lo"], row[f"{m}_hi"], fmt)  # noqa: E731
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
            ours = ci_text(o["mean"], o["ci95"][0], o["ci95"][1], ".2f")
            verdict = "agrees" if c["agrees"] else "DISAGREES"
            lines.append(f"  {verdict:<9} {c['claim']}: ours {ours}, paper {c['paper']}")
    return "\n".join(lines)


def cmd_experiment_btcp(args) -> int:
    from ..experiments.btcp import BtcpExperiment, run_btcp
    from ..studies.export import write_csv, write_json

    variants = names(args.variants)
    try:
        ex = BtcpExperiment(scale=args.scale, seeds=args.seeds, seed=args.seed,
                            flows_per_node=args.flows_per_node, queue_packets=args.queue_packets,
                            access_queue_packets=args.access_queue_packets, rwnd=args.rwnd,
                            min_rto_s=args.min_rto_s, b=args.b, variants=variants)
    except ValueError as exc:
        raise flag_error(exc, _FLAGS) from None
    out_dir(args)  # before the run
    res = run_btcp(ex)

    def write(out, data):
        from ..experiments.plot_btcp import plot_btcp  # matplotlib only when a figure is asked for

        return [write_csv(out / "btcp.csv", res.summary, list(res.summary[0].keys())),
                write_csv(out / "btcp_per_seed.csv", res.per_seed, list(res.per_seed[0].keys())),
                write_json(out / "btcp.json", data), plot_btcp(data, out / "btcp.png")]

    return emit(args, res, _btcp_text(res), write)


def _btcp_flags(b) -> None:
    from ..experiments.btcp import VARIANTS, BtcpExperiment

    d = BtcpExperiment()
    b.add_argument("--scale", type=number, default=d.scale,
                   help="fraction of the paper's flows and run length (1 = 1000 s runs) (%(default)s)")
    b.add_argument("--seeds", type=integer, default=d.seeds, help="repetitions (paper: 50) (%(default)s)")
    b.add_argument("--seed", type=integer, default=d.seed, help="root seed (%(default)s)")
    b.add_argument("--flows-per-node", type=integer, default=d.flows_per_node,
                   help="flows per node at scale 1: 50 = light (250 flows), 250 = heavy (%(default)s)")
    b.add_argument("--queue-packets", type=integer, default=d.queue_packets,
                   help="router drop-tail buffer, packets (%(default)s)")
    b.add_argument("--access-queue-packets", type=integer, default=None,
                   help="drop-tail buffer of the sender access links, packets (default unlimited)")
    b.add_argument("--rwnd", type=integer, default=d.rwnd, help="receiver window, packets (%(default)s)")
    b.add_argument("--min-rto-s", type=number, default=d.min_rto_s,
                   help="minimum and initial RTO, seconds (%(default)s)")
    b.add_argument("--b", type=integer, default=d.b, help="delayed-ACK factor, packets per ACK (%(default)s)")
    hide(add_list(b, "--variants", "--variant", kind="name", default=list(VARIANTS),
                  help=f"a subset of newreno, btcp4, btcp8 ({','.join(VARIANTS)})"), "--variant")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--out", default=None, metavar="DIR",
                   help="also write DIR/btcp.csv (per variant), DIR/btcp_per_seed.csv, DIR/btcp.json, DIR/btcp.png")


def register(exps) -> None:
    """Register ``btcp`` on the ``experiment`` subparsers ``exps``."""
    add_command(exps, "btcp", help="Burst TCP, Section 4: mice transfer time and losses, "
                                   "NewReno vs B-TCP(4) vs B-TCP(8)",
                func=cmd_experiment_btcp, flags=_btcp_flags)
