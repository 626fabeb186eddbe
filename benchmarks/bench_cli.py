"""Start-up time of the CLI: each command's wall time beside ``python -c pass``.

Every command is run ``--repeat`` times in a fresh interpreter (the same one as this script)
and the median wall time is printed; the issue's target is <= 0.4 s for ``--help``,
``thresholds``, ``tables --sim-lt-mode none`` and ``rules``, and the modules a model command
imports are pinned by ``tests/test_startup.py``. ``tables`` with its simulated column and
``simulate`` are shown for comparison (they run the simulator).

Usage::

    python benchmarks/bench_cli.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ("import latency_model", [sys.executable, "-c", "import latency_model"]),
    ("--help", [sys.executable, "-m", "latency_model", "--help"]),
    ("thresholds", [sys.executable, "-m", "latency_model", "thresholds"]),
    ("tables --sim-lt-mode none", [sys.executable, "-m", "latency_model", "tables", "--sim-lt-mode", "none"]),
    ("rules", [sys.executable, "-m", "latency_model", "rules"]),
    ("tables (with the simulator)", [sys.executable, "-m", "latency_model", "tables"]),
    ("simulate --size-packets 10 --runs 1000",
     [sys.executable, "-m", "latency_model", "simulate", "--size-packets", "10", "--runs", "1000"]),
]


def wall(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    wall(COMMANDS[2][1], 1)  # warm the file cache
    for name, argv in COMMANDS:
        print(f"{name:42s} {wall(argv, args.repeat):6.3f} s wall (median of {args.repeat})", flush=True)


if __name__ == "__main__":
    main()
