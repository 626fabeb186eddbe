"""Simulator throughput in the paper's setting (Section 4).

100 Mb/s, 50 ms one way, MSS 500 B, W0 = 2, W_SS = M = 30, b = 1, p = 0.1,
transfers of 40 packets, NewReno, RFC 6298 timer. Prints transfers and data packets
per CPU-second for each engine (CPU time of this process, one core).

Usage::

    python benchmarks/bench_sim.py [--runs 10000] [--engines python,compiled]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from latency_model import TcpParams
from latency_model.sim import OUT_FIELDS, SimConfig, run_many
from latency_model.sim.kernel import compiled_run_batch


def bench(engine: str, runs: int, seed: int = 1) -> tuple[float, float, np.ndarray]:
    params = TcpParams(mss_bytes=500, rtt_s=0.1, p=0.1, w0=2, w_ss=30, rwnd=30, b=1)
    config = SimConfig(link_rate_bps=100e6, delay_s=0.05)
    children = np.random.SeedSequence(seed).spawn(runs)
    t0 = time.process_time()
    out = run_many(params, 40 * 500, children, config, engine=engine)
    cpu = time.process_time() - t0
    sent = out[:, OUT_FIELDS.index("data_packets_sent")].sum()
    return runs / cpu, sent / cpu, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--engines", default="python,compiled")
    args = ap.parse_args()
    results = {}
    for engine in args.engines.split(","):
        if engine == "compiled":
            if compiled_run_batch() is None:
                print("compiled: numba not installed, skipped")
                continue
            bench("compiled", 10)  # load / compile outside the timing
        tps, pps, out = bench(engine, args.runs)
        results[engine] = out
        print(f"{engine:9s} {args.runs} transfers of 40 packets: "
              f"{tps:,.0f} transfers/CPU-s, {pps:,.0f} data packets/CPU-s, "
              f"mean latency {out[:, 0].mean():.4f} s")
    if len(results) == 2:
        a, b = results.values()
        print("identical results across engines:", bool(np.array_equal(a, b)))


if __name__ == "__main__":
    main()
