"""Kernel testbed throughput: transfers a minute at N = 20 packets, p = 0.1 (target >= 1,000).

    sudo python benchmarks/bench_kernel.py [--runs 400] [--concurrency 8,16,32]

Prints, per concurrency, transfers a minute, the mean completion time and the emulator's
lateness (a concurrency that makes the emulator late is too high for this machine).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from latency_model.kernel.testbed import Testbed, TransferSpec, Unavailable, transfer_seeds


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--size-packets", type=int, default=20)
    ap.add_argument("--p", type=float, default=0.1)
    ap.add_argument("--concurrency", default="8,16,32")
    args = ap.parse_args()
    seeds = transfer_seeds(0, args.runs)
    try:
        with Testbed() as tb:
            print(f"kernel {tb.kernel_release}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
                  f"emulator SCHED_FIFO: {tb.fifo}")
            for c in (int(x) for x in args.concurrency.split(",")):
                tb.link_stats()
                t0 = time.monotonic()
                got = tb.run([TransferSpec(i, args.size_packets * 500, "reno", seeds[i], args.p)
                              for i in range(args.runs)], concurrency=c)
                wall = time.monotonic() - t0
                link = tb.link_stats()
                mean = np.mean([t.completion_s for t in got])
                print(f"concurrency {c:3d}: {args.runs / wall * 60:7.0f} transfers/min (N={args.size_packets}, "
                      f"p={args.p}), mean {mean:.4f} s; lateness mean {link.mean_us:.0f} us, max "
                      f"{link.max_us / 1e3:.2f} ms, {link.over_1ms} of {link.packets} > 1 ms")
    except Unavailable as exc:
        print(f"bench_kernel: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
