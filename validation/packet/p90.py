"""The packet model's 90th percentile against the simulator's (rfc profile).

Usage::

    .venv/bin/python validation/packet/p90.py [--runs 20000] [--grid core] [--out validation/packet/results_p90.csv]
    .venv/bin/python validation/packet/p90.py --grid random --cells 40 --draw-seed 90 --out validation/packet/results_p90_random.csv
    .venv/bin/python validation/packet/p90.py --grid rtt --cells 60 --draw-seed 91 --out validation/packet/results_p90_rtt.csv
    .venv/bin/python validation/packet/p90.py --grid rtt --cells 60 --draw-seed 91 --serialisation rounds --out validation/packet/results_p90_rtt_rounds.csv
    .venv/bin/python validation/packet/p90.py --summary [--out ...]

The model's p90 comes from the tree DP with ``quantiles=True``
(:func:`latency_model.model.packet.expected_latency`: the level DP gives no distribution),
the mean time of the first ``bin_s`` = 1 ms bin where the (truncated) distribution it
carries reaches 0.9 (each bin keeps its paths' mean time: docs/packet-model.md;
``--serialisation rounds``, the time model of the runs of 2026-11-27, adds the loss-free
transfer's serialisation). The simulator's is the same definition on its transfers
(``numpy.quantile(..., method="inverted_cdf")``), with a distribution-free 95 %
confidence interval from the order statistics: ranks 0.9 R -+ 1.96 sqrt(0.09 R) of R
runs (the binomial normal approximation). The latency distribution has atoms (round
trips, the delayed-ACK timer, RTO multiples), so the two agree to the millisecond or miss
by a whole atom; a cell *agrees* when the model's p90 is inside the CI widened by
``SLACK_S`` = 2 ms: one 1 ms bin (paths within a bin share their mean time), plus the
serialisation the rounds time model moves (the loss-free transfer's is added to every
path: at most transmissions x 43 us, about 1 ms at 20 packets; docs/packet-model.md),
kept for both time models so that their runs compare.

Grids: ``core`` (NewReno, LT, proposal, ER x b = 1, 2 x W0 = 1, 4, 10 x p = 0.01, 0.05, 0.2
x n = 1, 3, 10, 20 packets), ``random`` (``validate.random_cells`` on sizes 1..20) and
``rtt`` (the same draw, each cell with its own round trip: :data:`RTT_RANGE`).
Resumable: cells already in the CSV are skipped.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import time

import numpy as np
from validate import cell_key, cell_seed, done_cells, random_cells  # this folder (a script's own folder is on sys.path)

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate
from latency_model.sim.runner import OUT_FIELDS

SLACK_S = 0.002
"""Seconds the model's p90 may lie outside the simulator's 95 % CI (module docstring)."""

CORE = dict(variant=["newreno", "lt", "proposal", "er"], b=[1, 2], w0=[1, 4, 10],
            p=[0.01, 0.05, 0.2], size_packets=[1, 3, 10, 20])

FIELDS = ["variant", "b", "w0", "p", "size_packets", "rtt_s", "model_p90_s", "sim_p90_s", "ci_lo_s",
          "ci_hi_s", "diff_s", "agrees", "model_mean_s", "sim_mean_s", "model_time_s", "runs"]


def quantile_ci(x: np.ndarray, q: float = 0.9) -> tuple[float, float, float]:
    """The inverted-CDF q-quantile of samples ``x`` and its 95 % order-statistic CI."""
    s = np.sort(np.asarray(x, float))
    r = s.size
    half = 1.959964 * np.sqrt(r * q * (1.0 - q))
    lo = s[max(int(np.floor(q * r - half)) - 1, 0)]
    hi = s[min(int(np.ceil(q * r + half)) - 1, r - 1)]
    return float(np.quantile(s, q, method="inverted_cdf")), float(lo), float(hi)


RTT_RANGE = (0.01, 0.5)
"""Round trips of ``--grid rtt`` (seconds, log-uniform): the paths of ``paths.py``."""


def combos(grid: str, cells: int, seed: int):
    """((variant, b, w0, p), sizes, rtt_s) of ``grid``: :data:`CORE` (RTT 0.1 s), or
    ``cells`` random cells of 1-20 packets drawn with ``seed`` (:func:`validate.random_cells`)
    on the paper's path (``random``) or each with a round trip drawn log-uniform on
    :data:`RTT_RANGE` (``rtt``, 3 significant digits; where a round trip reaches the
    0.2 s delayed-ACK timeout the rounds time model breaks ties the wrong way)."""
    if grid in ("random", "rtt"):
        drawn = random_cells(cells, seed, size_range=(1, 20))
        rng = np.random.default_rng([seed, 90])
        lo, hi = np.log(RTT_RANGE[0]), np.log(RTT_RANGE[1])
        return [(c, n, float(f"{np.exp(rng.uniform(lo, hi)):.3g}") if grid == "rtt" else 0.1)
                for c, n in drawn]
    g = CORE
    return [(v, g["size_packets"], 0.1)
            for v in itertools.product(g["variant"], g["b"], g["w0"], g["p"])]


def run(out: str, runs: int, grid: str, cells: int, seed: int, serialisation: str = "auto") -> None:
    """Append the cells of ``grid`` not yet in ``out`` (model p90, simulator p90 and CI)."""
    done = done_cells(out)
    new = not os.path.exists(out)
    col = OUT_FIELDS.index("completion_s")
    with open(out, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for (variant, b, w0, p), sizes, rtt in combos(grid, cells, seed):
            cell = dict(variant=variant, b=b, w0=w0, p=p)
            todo = [n for n in sizes if cell_key(dict(cell, size_packets=n)) not in done]
            if not todo:
                continue
            prm = apply_variant(TcpParams(p=p, b=b, w0=w0, rtt_s=rtt), variant)
            t = time.process_time()
            res = PM.expected_latency(prm, size_packets=todo, quantiles=True,
                                      serialisation=serialisation)
            mt = time.process_time() - t
            sims = simulate(prm, size_packets=todo, runs=runs, seed=cell_seed(variant, b, w0, p),
                            config=SimConfig(), engine="compiled").results
            for n, r, s in zip(todo, res, sims):
                q, lo, hi = quantile_ci(s.samples[:, col])
                m = r.p90_latency_s
                w.writerow(dict(cell, size_packets=n, rtt_s=rtt, model_p90_s=m, sim_p90_s=q, ci_lo_s=lo,
                                ci_hi_s=hi, diff_s=m - q,
                                agrees=int(lo - SLACK_S <= m <= hi + SLACK_S),
                                model_mean_s=r.expected_latency_s, sim_mean_s=s.mean_latency_s,
                                model_time_s=round(mt, 3) if n == max(todo) else 0.0, runs=runs))
            fh.flush()
            print(f"{variant} b={b} w0={w0} p={p} sizes {todo}: model {mt:.1f} s CPU", flush=True)


def summary(out: str) -> None:
    """Print how far the model's p90 is from the simulator's, and the cells that disagree."""
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    d = np.abs([float(r["diff_s"]) for r in rows])
    rel = d / np.array([float(r["sim_p90_s"]) for r in rows])
    agree = np.array([int(r["agrees"]) for r in rows], bool)
    print(f"cells {len(rows)}: model p90 - simulator p90: median {np.median(d) * 1e3:.2f} ms, "
          f"max {d.max() * 1e3:.1f} ms (max {rel.max():.2%} of the simulator's); agree (inside "
          f"the 95 % CI +- {SLACK_S * 1e3:g} ms) {agree.sum()}; model time "
          f"{sum(float(r['model_time_s']) for r in rows):.1f} s")
    for r in rows:
        if not int(r["agrees"]):
            print(f"  disagrees: {r['variant']} b={r['b']} W0={r['w0']} p={r['p']} RTT={r.get('rtt_s', 0.1)} "
                  f"n={r['size_packets']}: model {float(r['model_p90_s']):.4f} s, simulator "
                  f"{float(r['sim_p90_s']):.4f} s [{float(r['ci_lo_s']):.4f}, {float(r['ci_hi_s']):.4f}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--grid", choices=("core", "random", "rtt"), default="core")
    ap.add_argument("--cells", type=int, default=40, help="cells of --grid random (40)")
    ap.add_argument("--draw-seed", type=int, default=90, help="seed of --grid random's draw")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results_p90.csv"))
    ap.add_argument("--serialisation", choices=PM.SERIALISATION, default="auto",
                    help="the model's time model (auto: exact)")
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args()
    if not a.summary:
        run(a.out, a.runs, a.grid, a.cells, a.draw_seed, a.serialisation)
    summary(a.out)


if __name__ == "__main__":
    main()
