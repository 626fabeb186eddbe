"""Timing of the packet-level model (latency_model.model.packet).

Usage: .venv/bin/python benchmarks/bench_packet.py [--max-packets 20]

Prints the time of the expected latency for sizes 1..max_packets (one DP per size) at
p = 0.01, 0.05, 0.1, 0.2 (b = 2, W0 = 2, NewReno), and the states expanded.
"""

from __future__ import annotations

import argparse
import time

from latency_model.model import packet as PM
from latency_model.params import TcpParams


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-packets", type=int, default=20)
    ap.add_argument("--max-states", type=int, default=3000)
    a = ap.parse_args()
    sizes = list(range(1, a.max_packets + 1))
    for p in (0.01, 0.05, 0.1, 0.2):
        prm = TcpParams(p=p, b=2, w0=2)
        t = time.perf_counter()
        res = PM.expected_latency(prm, size_packets=sizes, max_states=a.max_states)
        dt = time.perf_counter() - t
        print(f"p={p:<5} sizes 1..{a.max_packets}: {dt:7.2f} s, states {sum(r.states for r in res):,}, "
              f"E[T] at {sizes[-1]} packets {res[-1].expected_latency_s:.4f} s")


if __name__ == "__main__":
    main()
