"""Simulator throughput in the paper's setting (Section 4), for each stack profile.

100 Mb/s, 50 ms one way, MSS 500 B, W0 = 2, W_SS = M = 30, b = 1, p = 0.1, transfers of 40
packets, NewReno. Prints transfers and data packets per CPU-second for each profile
(``--stack rfc|ns3|linux``; the linux profile keeps W0 = 2 here so that the work compares;
it runs SACK + PRR + RACK-TLP) and engine (CPU time of this process, one core; the best and
the median of ``--repeat`` timings, since a shared machine's speed varies by 2x between
runs), and whether both engines agree bit for bit.
Targets: >= 30,000 transfers per CPU-second with the compiled engine (standard rule), and
every growth rule (``--rules``, default ``standard``; ``all`` for every registered rule, each
with its default parameters) at >= 10x its speed on the python engine. The ns3 stack runs
only the standard rule (ns-3's TcpNewReno); other rules are skipped there.

Usage::

    python benchmarks/bench_sim.py [--runs 10000] [--engines python,compiled] [--stacks rfc,ns3,linux]
                                   [--rules standard|all|cubic,btcp,...] [--python-runs 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from latency_model import TcpParams
from latency_model.growth import RULES, make_rule
from latency_model.sim import OUT_FIELDS, SimConfig, fast_path_supported, run_many
from latency_model.sim.kernel import compiled_run_batch


def _params(rule: str) -> TcpParams:
    return TcpParams(mss_bytes=500, rtt_s=0.1, p=0.1, w0=2, w_ss=30, rwnd=30, b=1, rule=make_rule(rule))


def bench(engine: str, config: SimConfig, runs: int, seed: int = 1,
          rule: str = "standard") -> tuple[float, float, np.ndarray]:
    params = _params(rule)
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
    ap.add_argument("--rules", default="standard", help="growth rules, comma-separated, or 'all'")
    ap.add_argument("--python-runs", type=int, default=None,
                    help="runs per timing on the python engine (default: --runs); the same seeds' first runs")
    args = ap.parse_args()
    rules = list(RULES) if args.rules == "all" else args.rules.split(",")
    for rule in rules:
        if rule not in RULES:
            ap.error(f"--rules: unknown rule {rule!r} (valid: {', '.join(RULES)}, all)")
    for rule in rules:
        params = _params(rule)
        for stack in args.stacks.split(","):
            config = SimConfig.profile(stack, link_rate_bps=100e6, delay_s=0.05)
            if stack == "ns3" and not fast_path_supported(params, config):
                print(f"{rule:12s} {stack:5s}: ns-3 runs only the standard rule, skipped")
                continue
            results, medians = {}, {}
            for engine in args.engines.split(","):
                runs = args.runs if engine == "compiled" or args.python_runs is None else args.python_runs
                if engine == "compiled":
                    if compiled_run_batch() is None or not fast_path_supported(params, config):
                        print(f"{rule:12s} {stack:5s} compiled: unavailable here (numba missing or no kernel), skipped")
                        continue
                    bench("compiled", config, 10, rule=rule)  # load / compile outside the timing
                timings = [bench(engine, config, runs, rule=rule) for _ in range(max(1, args.repeat))]
                tps = sorted(t[0] for t in timings)
                out = timings[0][2]
                results[engine] = out
                medians[engine] = tps[len(tps) // 2]
                print(f"{rule:12s} {stack:5s} {engine:9s} {runs} transfers of 40 packets: best {tps[-1]:,.0f}, "
                      f"median {medians[engine]:,.0f} transfers/CPU-s ({len(tps)} timings), "
                      f"{timings[0][1]:,.0f} data packets/CPU-s, mean latency {out[:, 0].mean():.4f} s", flush=True)
            if len(results) == 2:
                a, b = results.values()
                n = min(len(a), len(b))  # the same seeds: the shorter run is a prefix of the longer
                print(f"{rule:12s} {stack:5s} identical results across engines ({n} runs):",
                      bool(np.array_equal(a[:n], b[:n])), f"; compiled/python speed: "
                      f"{medians.get('compiled', np.nan) / medians.get('python', np.nan):.1f}x", flush=True)


if __name__ == "__main__":
    main()
