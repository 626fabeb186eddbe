"""Simulator throughput in the paper's setting (Section 4), for each stack profile.

100 Mb/s, 50 ms one way, MSS 500 B, W0 = 2, W_SS = M = 30, b = 1, p = 0.1, transfers of 40
packets, NewReno. Prints transfers and data packets per CPU-second for each profile
(``--stack rfc|ns3|linux``; the linux profile keeps W0 = 2 here so that the work compares;
it runs SACK + PRR + RACK-TLP) and engine (CPU time of this process, one core; the best and
the median of ``--repeat`` timings, since a shared machine's speed varies by 2x between
runs), and whether both engines agree bit for bit.
The issue's target: >= 30,000 transfers per CPU-second with the compiled engine.

Usage::

    python benchmarks/bench_sim.py [--runs 10000] [--engines python,compiled] [--stacks rfc,ns3,linux]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from latency_model import TcpParams
from latency_model.sim import OUT_FIELDS, SimConfig, fast_path_supported, run_many
from latency_model.sim.kernel import compiled_run_batch


def bench(engine: str, config: SimConfig, runs: int, seed: int = 1) -> tuple[float, float, np.ndarray]:
    params = TcpParams(mss_bytes=500, rtt_s=0.1, p=0.1, w0=2, w_ss=30, rwnd=30, b=1)
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
    ap.add_argument("--stacks", default="rfc,ns3,linux")
    ap.add_argument("--repeat", type=int, default=3, help="timings per engine; the best and the median are printed")
    args = ap.parse_args()
    params = TcpParams(p=0.1)
    for stack in args.stacks.split(","):
        config = SimConfig.profile(stack, link_rate_bps=100e6, delay_s=0.05)
        results = {}
        for engine in args.engines.split(","):
            if engine == "compiled":
                if compiled_run_batch() is None or not fast_path_supported(params, config):
                    print(f"{stack:5s} compiled: unavailable here (numba missing or no kernel), skipped")
                    continue
                bench("compiled", config, 10)  # load / compile outside the timing
            timings = [bench(engine, config, args.runs) for _ in range(max(1, args.repeat))]
            tps = sorted(t[0] for t in timings)
            out = timings[0][2]
            results[engine] = out
            print(f"{stack:5s} {engine:9s} {args.runs} transfers of 40 packets: best {tps[-1]:,.0f}, "
                  f"median {tps[len(tps) // 2]:,.0f} transfers/CPU-s ({len(tps)} timings), "
                  f"{timings[0][1]:,.0f} data packets/CPU-s, mean latency {out[:, 0].mean():.4f} s", flush=True)
        if len(results) == 2:
            a, b = results.values()
            print(f"{stack:5s} identical results across engines:", bool(np.array_equal(a, b)))


if __name__ == "__main__":
    main()
