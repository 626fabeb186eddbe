"""Packet-level model against the simulator (rfc profile), cell by cell (issue 18).

Usage::

    .venv/bin/python validation/packet/validate.py [--runs 4000] [--out validation/packet/results.csv]
    .venv/bin/python validation/packet/validate.py --summary   # only read the CSV and summarise

Resumable: cells already in the CSV are skipped. Each cell: the model's E[T]
(``latency_model.model.packet.expected_latency``) and the simulator's mean with its 95 %
CI (``simulate(..., engine="compiled")``, seed fixed per cell). The summary prints the
median / p90 / max of |model - sim| / sim and the cells outside max(5 %, CI).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import time

import numpy as np

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate

FIELDS = ["variant", "b", "w0", "p", "size_packets", "model_s", "sim_s", "ci_lo_s", "ci_hi_s",
          "rel_err", "inside_ci", "states", "aggregated_mass", "dropped_mass", "model_time_s"]

GRID = dict(
    variant=["newreno", "lt", "proposal", "er"],
    b=[1, 2],
    w0=[1, 4],
    p=[0.001, 0.01, 0.05, 0.2],
    size_packets=[1, 2, 3, 5, 10],
)


def cells():
    keys = list(GRID)
    for values in itertools.product(*GRID.values()):
        yield dict(zip(keys, values))


def cell_key(c) -> tuple:
    return (c["variant"], int(c["b"]), float(c["w0"]), float(c["p"]), int(c["size_packets"]))


def run(out: str, runs: int) -> None:
    done = set()
    if os.path.exists(out):
        with open(out) as fh:
            for row in csv.DictReader(fh):
                done.add(cell_key(row))
    new = not os.path.exists(out)
    with open(out, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for i, c in enumerate(cells()):
            if cell_key(c) in done:
                continue
            prm = apply_variant(TcpParams(p=c["p"], b=c["b"], w0=c["w0"]), c["variant"])
            t = time.time()
            r = PM.expected_latency(prm, size_packets=[c["size_packets"]])[0]
            mt = time.time() - t
            s = simulate(prm, size_packets=[c["size_packets"]], runs=runs, seed=1000 + i,
                         config=SimConfig(), engine="compiled").results[0]
            lo, hi = s.ci95_s
            m = r.expected_latency_s
            w.writerow(dict(c, model_s=m, sim_s=s.mean_latency_s, ci_lo_s=lo, ci_hi_s=hi,
                            rel_err=(m - s.mean_latency_s) / s.mean_latency_s,
                            inside_ci=int(lo <= m <= hi), states=r.states,
                            aggregated_mass=r.aggregated_mass, dropped_mass=r.dropped_mass,
                            model_time_s=round(mt, 3)))
            fh.flush()


def summary(out: str) -> None:
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    err = np.array([abs(float(r["rel_err"])) for r in rows])
    inside = np.array([int(r["inside_ci"]) for r in rows], bool)
    half = np.array([(float(r["ci_hi_s"]) - float(r["ci_lo_s"])) / 2 / float(r["sim_s"])
                     for r in rows])
    ok = (err <= np.maximum(0.05, half)) | inside
    print(f"cells {len(rows)}: median |err| {np.median(err):.4f}, p90 {np.quantile(err, 0.9):.4f}, "
          f"max {err.max():.4f}; inside the 95% CI {inside.sum()}; outside max(5%, CI) "
          f"{(~ok).sum()}; model time total {sum(float(r['model_time_s']) for r in rows):.1f} s")
    for r, e, o in sorted(zip(rows, err, ok), key=lambda x: -x[1])[:10]:
        print(f"  {r['variant']:8s} b={r['b']} w0={r['w0']} p={r['p']} n={r['size_packets']}: "
              f"model {float(r['model_s']):.4f} sim {float(r['sim_s']):.4f} "
              f"[{float(r['ci_lo_s']):.4f}, {float(r['ci_hi_s']):.4f}] err {e:.4f}"
              f"{'' if o else '  MISS'} agg {float(r['aggregated_mass']):.3f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=4000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results.csv"))
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args()
    if not a.summary:
        run(a.out, a.runs)
    summary(a.out)
