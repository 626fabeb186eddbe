"""Packet-level model against the simulator (rfc profile), cell by cell.

Usage::

    .venv/bin/python validation/packet/validate.py [--runs 10000] [--grid core]
    .venv/bin/python validation/packet/validate.py --runs 10000 --grid long
    .venv/bin/python validation/packet/validate.py --summary   # only read the CSV and summarise
    .venv/bin/python validation/packet/validate.py --table     # the error table: a row per band and p

Resumable: cells already in the CSV (``--out``, default validation/packet/results.csv) are
skipped. The model is called once per (variant, b, W0, p) with all the missing sizes of
that combination (one DP, ``latency_model.model.packet.expected_latency`` with its
defaults: the level DP); its CPU time is recorded on the call's largest size
(``model_time_s``, 0 on the others). The simulator's mean and 95 % CI come from ``simulate(..., runs,
engine="compiled")`` with a seed fixed per cell. The summary prints the median / p90 / max
of |model - sim| / sim, the cells inside the CI and those outside max(5 %, CI), overall
and per size band. ``--sims-from OLD.csv`` re-runs only the model: the simulated columns of
the cells OLD.csv has (with the same ``--runs``) are reused, as the simulator and each
cell's seed are fixed, so a new run would give the same numbers. ``--max-states N`` runs the
model with that ``max_states`` instead of its default (name ``--out`` after it). ``--stack
ns3`` (or ``linux``) simulates that profile and gives the model its link, timers, receiver
and back-off rule (``studies/packet_setup.packet_options``; docs/packet-model.md).

Grids (the accuracy grid: 1-200 packets, p = 0.001-0.2, as far as the model's speed allows):

* ``core``: NewReno, LT, proposal, ER x b = 1, 2 x W0 = 1, 4, 10 x p = 0.001, 0.01, 0.05,
  0.2 x n = 1, 2, 3, 5, 10, 20 packets;
* ``long``: NewReno, LT, proposal, ER x b = 1, 2 x W0 = 2, 10 x p = 0.001, 0.01, 0.02,
  0.05, 0.1, 0.2 x n = 40, 60, 100, 200 packets;
* ``sample``: the part of ``long`` run so far: NewReno, proposal x b = 1, 2 x W0 = 2 x
  p = 0.01, 0.05, 0.1, 0.2 x n = 40, 100, 200;
* ``sample-w10``: LT, ER x b = 1, 2 x W0 = 10 x p = 0.02, 0.1 x n = 40, 100;
* ``sample-lt-er``: LT, ER x b = 1, 2 x W0 = 2 x p = 0.02, 0.1 x n = 40, 100, 200;
* ``sample-w1-w4``: NewReno, proposal x b = 1, 2 x W0 = 1, 4 x p = 0.001, 0.1 x n = 40,
  100;
* ``sample-w6-w10``: NewReno, proposal x b = 1, 2 x W0 = 6, 10 x p = 0.05, 0.2 x n = 40,
  100 (large first windows under heavy loss, where the model errs low);
* ``sample-lt-er-p``: LT, ER x b = 1, 2 x W0 = 2 x p = 0.01, 0.05, 0.2 x n = 40, 100;
* ``sample-w-mid``: NewReno, ER x b = 1, 2 x W0 = 3, 5, 8 x p = 0.01, 0.1 x n = 10, 40;
* ``sample-long-w``: NewReno, proposal x b = 1, 2 x W0 = 1, 10 x p = 0.001, 0.01 x
  n = 200;
* ``random``: ``--cells`` cells drawn uniformly from the whole domain (``--draw-seed``,
  ``--size-law``, ``--p-range``, ``--size-range``; :func:`random_cells`), an estimate of
  the error on cells nobody chose.

The tree DP's run of 2026-11-25 (the ``core`` grid and 40-60 packets at p <= 0.01) is kept
in results_tree.csv and summary_tree.txt; docs/packet-model.md reports both.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import time

import numpy as np

from latency_model.checks import packet_model_seconds
from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate
from latency_model.sim.ns3 import check_ns3_params
from latency_model.studies.packet_setup import packet_options

FIELDS = ["variant", "b", "w0", "p", "size_packets", "model_s", "sim_s", "ci_lo_s", "ci_hi_s",
          "rel_err", "inside_ci", "states", "aggregated_mass", "dropped_mass", "model_time_s",
          "runs", "extrapolated"]

GRIDS = {
    "core": dict(variant=["newreno", "lt", "proposal", "er"], b=[1, 2], w0=[1, 4, 10],
                 p=[0.001, 0.01, 0.05, 0.2], size_packets=[1, 2, 3, 5, 10, 20]),
    "long": dict(variant=["newreno", "lt", "proposal", "er"], b=[1, 2], w0=[2, 10],
                 p=[0.001, 0.01, 0.02, 0.05, 0.1, 0.2], size_packets=[40, 60, 100, 200]),
    "sample": dict(variant=["newreno", "proposal"], b=[1, 2], w0=[2],
                   p=[0.01, 0.05, 0.1, 0.2], size_packets=[40, 100, 200]),
    "sample-w10": dict(variant=["lt", "er"], b=[1, 2], w0=[10], p=[0.02, 0.1],
                       size_packets=[40, 100]),
    "sample-lt-er": dict(variant=["lt", "er"], b=[1, 2], w0=[2], p=[0.02, 0.1],
                         size_packets=[40, 100, 200]),
    "sample-w1-w4": dict(variant=["newreno", "proposal"], b=[1, 2], w0=[1, 4],
                         p=[0.001, 0.1], size_packets=[40, 100]),
    "sample-w6-w10": dict(variant=["newreno", "proposal"], b=[1, 2], w0=[6, 10],
                          p=[0.05, 0.2], size_packets=[40, 100]),
    "sample-lt-er-p": dict(variant=["lt", "er"], b=[1, 2], w0=[2], p=[0.01, 0.05, 0.2],
                           size_packets=[40, 100]),
    "sample-w-mid": dict(variant=["newreno", "er"], b=[1, 2], w0=[3, 5, 8], p=[0.01, 0.1],
                         size_packets=[10, 40]),
    "sample-long-w": dict(variant=["newreno", "proposal"], b=[1, 2], w0=[1, 10],
                          p=[0.001, 0.01], size_packets=[200]),
}


def combos(grid: dict):
    """(variant, b, w0, p) combinations of a grid, with its sizes."""
    for values in itertools.product(grid["variant"], grid["b"], grid["w0"], grid["p"]):
        yield values, grid["size_packets"]


RANDOM_VARIANTS = ("newreno", "lt", "proposal", "er")


def random_cells(count: int, seed: int, sizes: str = "log", p_range=(0.001, 0.2),
                 size_range=(1, 200)) -> list:
    """``count`` cells drawn independently and uniformly from the whole accuracy
    domain, as a stand-in for the cells it keeps unshared: variant (NewReno, LT, proposal,
    ER), b = 1, 2 and W0 = 1..10 uniform, p log-uniform on [0.001, 0.2] (3 significant
    digits), n log-uniform on [1, 200] packets (rounded; ``sizes="linear"``: uniform on
    1..200, which weighs the long transfers). ``p_range`` and ``size_range`` narrow the
    domain (a region drawn on its own). Returned as
    ``((variant, b, w0, p), [n])``, cheapest first by :func:`checks.packet_model_seconds`,
    so an interrupted run has the most cells (the CSV says which were run)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        variant = RANDOM_VARIANTS[int(rng.integers(len(RANDOM_VARIANTS)))]
        b = int(rng.integers(1, 3))
        w0 = float(rng.integers(1, 11))
        p = float(f"{np.exp(rng.uniform(np.log(p_range[0]), np.log(p_range[1]))):.3g}")
        lo, hi = size_range
        n = (int(round(np.exp(rng.uniform(np.log(lo), np.log(hi))))) if sizes == "log"
             else int(rng.integers(lo, hi + 1)))
        out.append(((variant, b, w0, p), [n]))
    return sorted(out, key=lambda c: packet_model_seconds(c[0][3], c[1][0], c[0][2], c[0][1]))


def grid_combos(name: str, cells: int = 40, seed: int = 18, sizes: str = "log", p_range=(0.001, 0.2),
                size_range=(1, 200)):
    """The combinations of a named grid (:data:`GRIDS`), or of ``random`` (:func:`random_cells`)."""
    if name == "random":
        return random_cells(cells, seed, sizes, p_range, size_range)
    return list(combos(GRIDS[name]))


def cell_key(c) -> tuple:
    return (c["variant"], int(c["b"]), float(c["w0"]), float(c["p"]), int(c["size_packets"]))


def done_cells(out: str) -> set:
    """:func:`cell_key` of the cells already in the CSV ``out`` (none if it does not exist)."""
    if not os.path.exists(out):
        return set()
    with open(out) as fh:
        return {cell_key(row) for row in csv.DictReader(fh)}


def cell_seed(variant: str, b: int, w0: float, p: float) -> int:
    """The simulator's seed of a (variant, b, W0, p) combination, fixed so a re-run (or
    ``--sims-from``) gives the same simulated numbers."""
    return sum(ord(ch) for ch in variant) * 1000003 + b * 1009 + int(w0 * 101) + int(p * 1e6)


def run(out: str, runs: int, grids: list, sims_from: str | None = None, cells: int = 40,
        seed: int = 18, size_law: str = "log", p_range=(0.001, 0.2), size_range=(1, 200),
        max_states: int | None = None, stack: str = "rfc") -> None:
    config = SimConfig.profile(stack)
    options = packet_options(config)  # the model follows the simulated link, timers and receiver
    known = {}  # simulated columns to reuse: the simulator and each cell's seed are fixed
    if sims_from:
        other = set()
        with open(sims_from) as fh:
            for row in csv.DictReader(fh):
                if int(row["runs"]) == runs:
                    known[cell_key(row)] = row
                else:
                    other.add(int(row["runs"]))
        if other:  # (their cells are simulated again, with --runs)
            print(f"--sims-from {sims_from}: {len(known)} cells with {runs} runs reused; cells "
                  f"with {sorted(other)} runs are simulated again (give --runs to reuse them)",
                  flush=True)
    done = done_cells(out)
    new = not os.path.exists(out)
    with open(out, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for g in grids:
            for (variant, b, w0, p), sizes in grid_combos(g, cells, seed, size_law, p_range,
                                                              size_range):
                cell = dict(variant=variant, b=b, w0=w0, p=p)
                if config.sender == "ns3":
                    try:  # ns-3.37's TcpNewReno has neither the proposal nor ER
                        check_ns3_params(apply_variant(TcpParams(p=p, b=b, w0=w0), variant), config)
                    except ValueError:
                        continue
                todo = [n for n in sizes if cell_key(dict(cell, size_packets=n)) not in done]
                if not todo:
                    continue
                prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
                t = time.process_time()
                res = PM.expected_latency(prm, size_packets=todo, max_states=max_states, **options)
                mt = time.process_time() - t
                sim_seed = cell_seed(variant, b, w0, p)
                keys = [cell_key(dict(cell, size_packets=n)) for n in todo]
                if all(k in known for k in keys):
                    sims = [(float(known[k]["sim_s"]), float(known[k]["ci_lo_s"]),
                             float(known[k]["ci_hi_s"])) for k in keys]
                else:
                    sims = [(s.mean_latency_s, *s.ci95_s) for s in simulate(
                        prm, size_packets=todo, runs=runs, seed=sim_seed, config=config,
                        engine="compiled").results]
                for n, r, (sm, lo, hi) in zip(todo, res, sims):
                    m = r.expected_latency_s
                    w.writerow(dict(cell, size_packets=n, model_s=m, sim_s=sm,
                                    ci_lo_s=lo, ci_hi_s=hi,
                                    rel_err=(m - sm) / sm,
                                    inside_ci=int(lo <= m <= hi), states=r.states,
                                    aggregated_mass=r.aggregated_mass,
                                    dropped_mass=r.dropped_mass,
                                    model_time_s=round(mt, 3) if n == max(todo) else 0.0,
                                    runs=runs, extrapolated=int(r.extrapolated)))
                fh.flush()
                print(f"{variant} b={b} w0={w0} p={p} sizes {todo}: model {mt:.1f} s CPU",
                      flush=True)


def _measures(rows):
    """Signed relative errors, inside the 95 % CI, and within max(5 %, CI half-width) or
    inside the CI (the issue's target), one entry per row."""
    signed = np.array([float(r["rel_err"]) for r in rows])
    inside = np.array([int(r["inside_ci"]) for r in rows], bool)
    half = np.array([(float(r["ci_hi_s"]) - float(r["ci_lo_s"])) / 2 / float(r["sim_s"])
                     for r in rows])
    return signed, inside, (np.abs(signed) <= np.maximum(0.05, half)) | inside


def _stats(rows) -> str:
    signed, inside, ok = _measures(rows)
    err = np.abs(signed)
    return (f"cells {len(rows)}: median |err| {np.median(err):.4f}, p90 "
            f"{np.quantile(err, 0.9):.4f}, max {err.max():.4f}; inside the 95% CI "
            f"{inside.sum()}; outside max(5%, CI) {(~ok).sum()}")


P_BANDS = ((0.0, 0.01), (0.01, 0.05), (0.05, 0.2))
"""The p bands of :func:`summary` when a file has more than eight p values (drawn cells)."""


def summary(out: str) -> None:
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    print(f"all {_stats(rows)}; model time total "
          f"{sum(float(r['model_time_s']) for r in rows):.1f} s")
    for lo, hi in ((1, 10), (11, 20), (21, 60), (61, 200)):
        band = [r for r in rows if lo <= int(r["size_packets"]) <= hi]
        if band:
            print(f"  n = {lo}..{hi}: {_stats(band)}")
    ps = sorted({float(r["p"]) for r in rows})
    if len(ps) <= 8:
        for p in ps:
            band = [r for r in rows if float(r["p"]) == p]
            print(f"  p = {p:g}: {_stats(band)}")
    else:  # drawn p (--grid random): bands
        for lo, hi in P_BANDS:
            band = [r for r in rows if lo < float(r["p"]) <= hi]
            if band:
                print(f"  p in ({lo:g}, {hi:g}]: {_stats(band)}")
    err = [abs(float(r["rel_err"])) for r in rows]
    for r, e in sorted(zip(rows, err), key=lambda x: -x[1])[:12]:
        half = (float(r["ci_hi_s"]) - float(r["ci_lo_s"])) / 2 / float(r["sim_s"])
        miss = not int(r["inside_ci"]) and e > max(0.05, half)
        print(f"  {r['variant']:8s} b={r['b']} w0={r['w0']} p={r['p']} n={r['size_packets']}: "
              f"model {float(r['model_s']):.4f} sim {float(r['sim_s']):.4f} "
              f"[{float(r['ci_lo_s']):.4f}, {float(r['ci_hi_s']):.4f}] err {e:.4f}"
              f"{'  MISS' if miss else ''} agg {float(r['aggregated_mass']):.3f} "
              f"dropped {float(r['dropped_mass']):.1e}")


BANDS = [
    ("all", lambda n, w0, b, p: True),
    ("n = 1..20", lambda n, w0, b, p: n <= 20),
    ("n = 40..200", lambda n, w0, b, p: n >= 40),
    ("40-200, W0 <= 4", lambda n, w0, b, p: n >= 40 and w0 <= 4),
    ("40-200, W0 = 2, b = 2", lambda n, w0, b, p: n >= 40 and w0 == 2 and b == 2),
    ("40-200, W0 = 2, b = 1", lambda n, w0, b, p: n >= 40 and w0 == 2 and b == 1),
    ("40-200, W0 = 1, 4", lambda n, w0, b, p: n >= 40 and w0 in (1, 4)),
    ("10-40, W0 = 3, 5, 8", lambda n, w0, b, p: w0 in (3, 5, 8)),
    ("40-100, W0 = 6", lambda n, w0, b, p: n >= 40 and w0 == 6),
    ("40-200, W0 = 10, p <= 0.05", lambda n, w0, b, p: n >= 40 and w0 == 10 and p <= 0.05),
    ("40-100, W0 = 10, p = 0.1", lambda n, w0, b, p: n >= 40 and w0 == 10 and p == 0.1),
    ("40-100, W0 = 10, p = 0.2", lambda n, w0, b, p: n >= 40 and w0 == 10 and p == 0.2),
]


def table(out: str) -> None:
    """The error table: one markdown row per band and per p."""
    with open(out) as fh:
        rows = list(csv.DictReader(fh))
    key = [(int(r["size_packets"]), float(r["w0"]), int(r["b"]), float(r["p"])) for r in rows]
    bands = list(BANDS) + [(f"p = {q:g}", (lambda q: lambda n, w0, b, p: p == q)(q))
                           for q in sorted({k[3] for k in key})]
    print("| cells | median abs. error | p90 | max | inside the 95 % CI | outside max(5 %, CI) "
          "| mean signed |")
    print("|---|---|---|---|---|---|---|")
    for name, sel in bands:
        band = [r for r, k in zip(rows, key) if sel(*k)]
        if not band:
            continue
        err, inside, ok = _measures(band)
        a = np.abs(err)
        print(f"| {name} ({len(band)}) | {100 * np.median(a):.2f} % | "
              f"{100 * np.quantile(a, 0.9):.1f} % | {100 * a.max():.1f} % | {inside.sum()} | "
              f"{(~ok).sum()} | {100 * err.mean():+.2f} % |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10000,
                    help="simulated transfers a cell (10000, as the committed grids' results)")
    ap.add_argument("--grid", nargs="+", default=["core"], choices=sorted(GRIDS) + ["random"])
    ap.add_argument("--cells", type=int, default=40, help="cells of --grid random (40)")
    ap.add_argument("--draw-seed", type=int, default=18, help="seed of --grid random's draw")
    ap.add_argument("--size-law", choices=("log", "linear"), default="log",
                    help="--grid random's sizes: log-uniform (default) or uniform")
    ap.add_argument("--p-range", type=float, nargs=2, default=(0.001, 0.2), metavar=("LO", "HI"),
                    help="--grid random's p range (0.001 0.2)")
    ap.add_argument("--size-range", type=int, nargs=2, default=(1, 200), metavar=("LO", "HI"),
                    help="--grid random's size range, packets (1 200)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results.csv"))
    ap.add_argument("--max-states", type=int, default=None,
                    help="the model's max_states (default: its own, 16000, 32000 for the ns3 sender); name --out after it")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--stack", default="rfc", choices=("rfc", "ns3", "linux"),
                    help="the simulator's stack profile; the model follows its link, timers and receiver "
                         "(studies/packet_setup.py; docs/packet-model.md). Default rfc")
    ap.add_argument("--table", action="store_true",
                    help="print the markdown table of --out's errors (a row per size band and p), only")
    ap.add_argument("--sims-from", default=None,
                    help="a results CSV whose simulated columns are reused for the cells it "
                         "has with the same --runs (re-running only the model)")
    a = ap.parse_args()
    if a.table:
        table(a.out)
        raise SystemExit(0)
    if not a.summary:
        run(a.out, a.runs, a.grid, a.sims_from, a.cells, a.draw_seed, a.size_law,
            tuple(a.p_range), tuple(a.size_range), a.max_states, a.stack)
    summary(a.out)
