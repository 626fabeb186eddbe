"""Packet-level model against the simulator on set-ups other than the paper's defaults.

Usage::

    .venv/bin/python validation/packet/setups.py [--runs 10000] [--out validation/packet/results_setups.csv]
    .venv/bin/python validation/packet/setups.py --summary

``validate.py``'s grids vary the variant, b, W0, p and the size on the paper's set-up (MSS
500 B, RTT 0.1 s, rwnd = W_SS = 30 packets, dup_t = 3, RFC 6298's RTO). Each cell here
changes one or two of those: a short and a long RTT (the delayed-ACK timer's 0.2 s is 10
round trips at 20 ms and under one at 300-500 ms), MSS 1460 B, a small rwnd, a small
initial ssthresh, dup_t = 2 and 4, a fixed RTO, a size that is not a whole number of
segments. The model is :func:`latency_model.model.packet.expected_latency` with its
defaults; the simulator's mean and 95 % CI come from ``simulate(..., runs,
engine="compiled")`` with the seed fixed per cell. Resumable: cells already in the CSV are
skipped.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time

from validate import _stats  # this folder (a script's own folder is on sys.path)

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate

CELLS = [
    dict(variant="newreno", b=2, w0=2, p=0.05, size_bytes=15000, rtt_s=0.02),
    dict(variant="lt", b=1, w0=4, p=0.05, size_bytes=15000, rtt_s=0.5),
    dict(variant="er", b=2, w0=4, p=0.1, size_bytes=6000, rtt_s=0.3, rwnd=12),
    dict(variant="newreno", b=1, w0=3, p=0.02, size_bytes=87600, mss_bytes=1460),
    dict(variant="proposal", b=2, w0=3, p=0.1, size_bytes=29200, mss_bytes=1460),
    dict(variant="proposal", b=2, w0=4, p=0.1, size_bytes=12500, rwnd=8),
    dict(variant="newreno", b=2, w0=2, p=0.05, size_bytes=20000, w_ss=8),
    dict(variant="lt", b=1, w0=2, p=0.05, size_bytes=15000, dup_t=2),
    dict(variant="newreno", b=2, w0=2, p=0.05, size_bytes=15000, dup_t=4),
    dict(variant="newreno", b=1, w0=2, p=0.1, size_bytes=10000, rto_s=1.5),
    dict(variant="lt", b=2, w0=2, p=0.1, size_bytes=10250),
    dict(variant="er", b=1, w0=1, p=0.05, size_bytes=2730),
]
"""One cell per line: the variant, the size (bytes) and the TcpParams fields that differ
from the defaults."""

FIELDS = ["cell", "model_s", "sim_s", "ci_lo_s", "ci_hi_s", "rel_err", "inside_ci", "model_time_s", "runs"]


def run(out: str, runs: int) -> None:
    done = set()
    if os.path.exists(out):
        with open(out) as fh:
            done = {row["cell"] for row in csv.DictReader(fh)}
    new = not os.path.exists(out)
    with open(out, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for i, cell in enumerate(CELLS):
            name = json.dumps(cell, sort_keys=True)
            if name in done:
                continue
            c = dict(cell)
            variant, size = c.pop("variant"), c.pop("size_bytes")
            prm = apply_variant(TcpParams(**c), variant)
            t = time.process_time()
            m = PM.expected_latency(prm, size_bytes=[size])[0].expected_latency_s
            mt = time.process_time() - t
            s = simulate(prm, size_bytes=[size], runs=runs, seed=1000 + i, config=SimConfig(),
                         engine="compiled").results[0]
            lo, hi = s.ci95_s
            w.writerow(dict(cell=name, model_s=m, sim_s=s.mean_latency_s, ci_lo_s=lo, ci_hi_s=hi,
                            rel_err=(m - s.mean_latency_s) / s.mean_latency_s, inside_ci=int(lo <= m <= hi),
                            model_time_s=round(mt, 3), runs=runs))
            fh.flush()
            print(f"{name}: model {m:.4f} s, simulator {s.mean_latency_s:.4f} s [{lo:.4f}, {hi:.4f}] "
                  f"({mt:.1f} s CPU)", flush=True)


def summary(out: str) -> None:
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    print(_stats(rows))  # validate.py's: the same columns
    for r in rows:
        print(f"  {r['cell']}: model {float(r['model_s']):.4f} sim {float(r['sim_s']):.4f} "
              f"[{float(r['ci_lo_s']):.4f}, {float(r['ci_hi_s']):.4f}] err {100 * float(r['rel_err']):+.2f} %"
              f"{'' if int(r['inside_ci']) else '  outside the CI'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results_setups.csv"))
    ap.add_argument("--summary", action="store_true", help="only read the CSV and summarise")
    a = ap.parse_args()
    if not a.summary:
        run(a.out, a.runs)
    summary(a.out)
