"""Benchmark of `latency-model reproduce` (issue 7 targets: full < 10 min, --quick < 1 min, cached rerun
in seconds on the 2-core machine; not part of the tests).

Run: python benchmarks/bench_reproduce.py [--full] [--jobs N]
Prints wall and CPU time (this process and its workers) of a fresh run and of a cached rerun, each
stage of a fresh run, and the load average, into a temporary folder.
"""

import argparse
import os
import resource
import tempfile
import time

from latency_model.studies.reproduce import run_reproduction


def cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="the built-in budget instead of --quick")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as out:
        for label in ("fresh", "cached"):
            t0, c0 = time.perf_counter(), cpu_s()
            res = run_reproduction(out, quick=not args.full, jobs=args.jobs, progress=False)
            print(f"{label:7s} {'full' if args.full else 'quick'}: {time.perf_counter() - t0:7.1f} s wall, "
                  f"{cpu_s() - c0:7.1f} s CPU, pieces computed {res['computed']}, cached {res['cached']} "
                  f"(model + simulation {res['seconds_compute']:.1f} s); load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
