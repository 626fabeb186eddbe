"""Sweep throughput with 1 and 2 local worker processes, and the scaling.

Model grid: 20 p values (logspace 0.005 .. 0.2) x N sizes (1..N packets, N = 1000 in
the issue) x 3 variants (newreno, lt, proposal), one model task per (p, variant) and
size chunk. Simulation grid: 4 p values x 10 sizes (2..20 packets) x 2 variants,
``--runs`` transfers per point. Prints grid points per wall-clock second for each
worker count and the speed-up, and checks that the tables are identical.

Usage::

    python benchmarks/bench_sweep.py [--sizes 1000] [--runs 500] [--jobs 1,2] [--skip-model]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from latency_model.studies.sweep import SweepSpec, grid_from_items, run_sweep


def bench(spec: SweepSpec, jobs: int, folder: Path) -> tuple[float, int, str]:
    out = folder / f"{spec.what}-{jobs}.csv"
    t0 = time.perf_counter()
    rep = run_sweep(spec, out, jobs=jobs, force=True)
    return time.perf_counter() - t0, rep.n_points, out.read_text()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, default=1000, help="sizes 1..N packets in the model grid (1000)")
    ap.add_argument("--runs", type=int, default=500, help="simulated transfers per point (500)")
    ap.add_argument("--jobs", default="1,2", help="worker counts to compare (1,2)")
    ap.add_argument("--engine", default="auto", help="simulator engine (auto)")
    ap.add_argument("--skip-model", action="store_true")
    ap.add_argument("--skip-simulation", action="store_true")
    args = ap.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]
    grids = []
    if not args.skip_model:
        grids.append(("model", SweepSpec(grid_from_items(
            ["p=logspace:0.005:0.2:20", "variant=newreno,lt,proposal", f"size-packets=1:{args.sizes}"]))))
    if not args.skip_simulation:
        grids.append(("simulation", SweepSpec(grid_from_items(
            ["p=0.02,0.05,0.1,0.2", "variant=newreno,lt", "size-packets=2:20:2"]),
            what="simulation", runs=args.runs, engine=args.engine)))
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in grids:
            base = None
            texts = []
            for j in jobs:
                secs, n, text = bench(spec, j, Path(tmp))
                texts.append(text)
                rate = n / secs
                base = base or rate
                print(f"{name:<10} {n:>6} points  jobs={j}  {secs:8.1f} s  {rate:10.2f} points/s  "
                      f"scaling x{rate / base:.2f}", flush=True)
            print(f"{name:<10} tables identical across worker counts: {all(t == texts[0] for t in texts)}")


if __name__ == "__main__":
    main()
