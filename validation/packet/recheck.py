"""Re-simulate the worst cells of validation/packet/results.csv with many more runs.

Usage::

    .venv/bin/python validation/packet/recheck.py [--top 12] [--runs 100000]

At p = 0.2 the latency is heavy-tailed (RTO back-off up to 60 s) and the grid's runs give a CI
that is both wide and, by its normal approximation, too optimistic. This script takes the
``--top`` cells with the largest |model - sim| / sim that lie outside the simulator's
95 % CI (sizes >= ``--min-size``) and re-runs the simulator with ``--runs`` runs (new
seed; compiled engine), keeping the model value of the CSV. Output:
validation/packet/recheck.csv and a printed table (the tree DP's recheck of 2026-11-25
is kept in recheck_tree.csv).

``--rescore NEW.csv`` simulates nothing: it takes the cells of recheck.csv (or of the
``--base`` files: a cell in several keeps the last file's simulation) that NEW.csv (a
``validate.py`` output of a newer model) also has, replaces their model values by
NEW.csv's and scores them against the same re-simulated means (output ``--out``, default
recheck_rescored.csv).
"""

from __future__ import annotations

import argparse
import csv
import os

from validate import cell_key  # this folder (a script's own folder is on sys.path)

from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate

HERE = os.path.dirname(__file__)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--min-size", type=int, default=2,
                    help="skip smaller sizes (n = 1 is exact by the closed form, tested)")
    ap.add_argument("--csv", default=os.path.join(HERE, "results.csv"))
    ap.add_argument("--out", default=None,
                    help="default recheck.csv (recheck_rescored.csv with --rescore)")
    ap.add_argument("--rescore", default=None, metavar="NEW_CSV",
                    help="re-score recheck.csv's cells with NEW_CSV's model values")
    ap.add_argument("--base", nargs="+", default=[os.path.join(HERE, "recheck.csv")],
                    help="--rescore: the re-simulated cells (recheck.py outputs; default recheck.csv)")
    a = ap.parse_args()
    if a.rescore:
        rescore(a.rescore, a.out or os.path.join(HERE, "recheck_rescored.csv"), a.base)
        return
    a.out = a.out or os.path.join(HERE, "recheck.csv")
    with open(a.csv) as fh:
        rows = [r for r in csv.DictReader(fh)
                if not int(r["inside_ci"]) and int(r["size_packets"]) >= a.min_size]
    rows.sort(key=lambda r: -abs(float(r["rel_err"])))
    out = []
    for i, r in enumerate(rows[:a.top]):
        prm = apply_variant(TcpParams(p=float(r["p"]), b=int(r["b"]), w0=float(r["w0"])),
                            r["variant"])
        n = int(r["size_packets"])
        s = simulate(prm, size_packets=[n], runs=a.runs, seed=777_000 + i, config=SimConfig(),
                     engine="compiled").results[0]
        m = float(r["model_s"])
        lo, hi = s.ci95_s
        row = dict(variant=r["variant"], b=r["b"], w0=r["w0"], p=r["p"], size_packets=n,
                   model_s=m, sim_grid_s=float(r["sim_s"]), grid_runs=int(r["runs"]),
                   sim_s=s.mean_latency_s,
                   ci_lo_s=lo, ci_hi_s=hi, runs=a.runs,
                   rel_err=(m - s.mean_latency_s) / s.mean_latency_s,
                   inside_ci=int(lo <= m <= hi))
        out.append(row)
        print(f"{r['variant']:8s} b={r['b']} w0={r['w0']} p={r['p']} n={n}: model {m:.4f} "
              f"sim({r['runs']}) {float(r['sim_s']):.4f} -> sim({a.runs}) {s.mean_latency_s:.4f} "
              f"[{lo:.4f}, {hi:.4f}] err {row['rel_err']:+.4f} "
              f"{'inside' if row['inside_ci'] else 'OUTSIDE'}", flush=True)
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)


def rescore(new_csv: str, out_path: str, bases=(os.path.join(HERE, "recheck.csv"),)) -> None:
    """The re-simulated cells of ``bases`` (recheck.py outputs; a cell in several keeps the
    last one's simulation) against the model values of ``new_csv``."""
    with open(new_csv) as fh:
        new = {cell_key(r): float(r["model_s"]) for r in csv.DictReader(fh)}
    cells = {}
    for base in bases:
        with open(base) as fh:
            for r in csv.DictReader(fh):
                if cell_key(r) in new:
                    cells[cell_key(r)] = r
    old = list(cells.values())
    out = []
    for r in old:
        m = new[cell_key(r)]
        sim, lo, hi = float(r["sim_s"]), float(r["ci_lo_s"]), float(r["ci_hi_s"])
        row = dict(r, model_before_s=r["model_s"], rel_err_before=r["rel_err"], model_s=m,
                   rel_err=(m - sim) / sim, inside_ci=int(lo <= m <= hi))
        out.append(row)
        print(f"{r['variant']:8s} b={r['b']} w0={r['w0']} p={r['p']} n={r['size_packets']}: "
              f"model {float(r['model_s']):.4f} -> {m:.4f}, sim({r['runs']}) {sim:.4f} "
              f"[{lo:.4f}, {hi:.4f}] err {float(r['rel_err']):+.4f} -> {row['rel_err']:+.4f} "
              f"{'inside' if row['inside_ci'] else 'OUTSIDE'}")
    if out:
        tmp = out_path + ".tmp"
        with open(tmp, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
        os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
