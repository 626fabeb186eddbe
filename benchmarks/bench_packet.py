"""Timing of the packet-level model (latency_model.model.packet), issue 18's speed targets.

Usage::

    .venv/bin/python benchmarks/bench_packet.py [--max-packets 20] [--max-states 300]
    .venv/bin/python benchmarks/bench_packet.py --map [--p 0.01 0.1] [--variants newreno]

Default: one ``expected_latency`` call for sizes 1..max_packets (one shared DP) at
p = 0.01, 0.05, 0.1, 0.2 (b = 2, W0 = 2, NewReno); prints CPU seconds (process time: this
VM is shared, wall time varies 2-3x), the states expanded and E[T] at the largest size.

``--map``: the accuracy map's model side, one call per (variant, b, p) with sizes 1..40,
60, 100, 200 (issue 18: ~1,300 cells, target < 10 s); prints each call's CPU time and the
total, so a partial run (``--p``, ``--variants``) can be scaled to the whole map.
"""

from __future__ import annotations

import argparse
import time

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant

MAP_SIZES = list(range(1, 41)) + [60, 100, 200]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-packets", type=int, default=20)
    ap.add_argument("--max-states", type=int, default=None,
                    help="max_states (default: the model's)")
    ap.add_argument("--map", action="store_true", help="the accuracy map's model side")
    ap.add_argument("--p", type=float, nargs="+", default=None)
    ap.add_argument("--b", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--variants", nargs="+", default=["newreno", "lt", "proposal"])
    a = ap.parse_args()
    kw = {} if a.max_states is None else {"max_states": a.max_states}
    if a.map:
        total = 0.0
        cells = 0
        for variant in a.variants:
            for b in a.b:
                for p in a.p or [0.01, 0.02, 0.05, 0.1, 0.2]:
                    prm = apply_variant(TcpParams(p=p, b=b, w0=2), variant)
                    t = time.process_time()
                    res = PM.expected_latency(prm, size_packets=MAP_SIZES, **kw)
                    dt = time.process_time() - t
                    total += dt
                    cells += len(MAP_SIZES)
                    print(f"{variant:8s} b={b} p={p:<5}: {dt:7.2f} s CPU, states "
                          f"{res[-1].states:,}, E[T] at 200 packets "
                          f"{res[-1].expected_latency_s:.4f} s", flush=True)
        print(f"map: {cells} cells, {total:.1f} s CPU")
        return
    sizes = list(range(1, a.max_packets + 1))
    for p in a.p or [0.01, 0.05, 0.1, 0.2]:
        prm = TcpParams(p=p, b=2, w0=2)
        t = time.process_time()
        res = PM.expected_latency(prm, size_packets=sizes, **kw)
        dt = time.process_time() - t
        print(f"p={p:<5} sizes 1..{a.max_packets}: {dt:7.2f} s CPU, states "
              f"{sum(r.states for r in res):,}, E[T] at {sizes[-1]} packets "
              f"{res[-1].expected_latency_s:.4f} s", flush=True)


if __name__ == "__main__":
    main()
