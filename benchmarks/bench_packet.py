"""Timing of the packet-level model (latency_model.model.packet), issue 18's speed targets.

Usage::

    .venv/bin/python benchmarks/bench_packet.py [--max-packets 1000] [--p 0.01 0.2]
        [--variants proposal] [--b 1] [--w0 10] [--eps 1e-6] [--max-states 2000]
    .venv/bin/python benchmarks/bench_packet.py --map [--p 0.01 0.1] [--variants newreno]
    .venv/bin/python benchmarks/bench_packet.py --method tree --max-packets 20

Default: one ``expected_latency`` call for sizes 1..max_packets (one DP for all sizes) at
p = 0.01, 0.05, 0.1, 0.2 (b = 2, W0 = 2, NewReno: the first of ``--variants``); prints CPU seconds (process time:
this VM is shared, wall time varies), the level where the distribution became
stationary (sizes beyond it are extrapolated), the folded mass and E[T] at a few sizes.
The numba kernels are compiled (or loaded from numba's cache) before the clock starts.
Every line ends with the process's peak resident memory so far (``getrusage``), so one
call alone (``--p 0.2 --w0 10 --b 1 --max-packets 40``) measures its peak.

``--map``: the accuracy map's model side, one call per (variant, b, p) with sizes 1..40,
60, 100, 200 (issue 18: the whole map in < 10 s); prints each call's CPU time and the
total, so a partial run (``--p``, ``--variants``) can be scaled to the whole map.
"""

from __future__ import annotations

import argparse
import time

from latency_model.model import packet as PM
from latency_model.model._packet_levels import peak_resident_bytes
from latency_model.params import TcpParams, apply_variant

MAP_SIZES = list(range(1, 41)) + [60, 100, 200]


def peak() -> str:
    """The process's peak resident memory so far, in words."""
    return f"peak {peak_resident_bytes() / 2**30:.2f} GiB"


SHOW = (10, 20, 40, 100, 200, 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-packets", type=int, default=1000)
    ap.add_argument("--method", choices=("levels", "tree"), default="levels")
    ap.add_argument("--max-states", type=int, default=None,
                    help="max_states (default: the model's)")
    ap.add_argument("--map", action="store_true", help="the accuracy map's model side")
    ap.add_argument("--p", type=float, nargs="+", default=None)
    ap.add_argument("--b", type=int, nargs="+", default=None, help="ACK ratios (map: 1 2; else 2)")
    ap.add_argument("--variants", nargs="+", default=["newreno", "lt", "proposal"])
    ap.add_argument("--w0", type=float, default=2.0, help="initial window, packets (2)")
    ap.add_argument("--eps", type=float, default=None, help="eps (default: the model's)")
    a = ap.parse_args()
    kw = {"method": a.method}
    if a.max_states is not None:
        kw["max_states"] = a.max_states
    if a.eps is not None:
        kw["eps"] = a.eps
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], **kw)  # compile / load kernels
    if a.map:
        total = 0.0
        cells = 0
        for variant in a.variants:
            for b in a.b or [1, 2]:
                for p in a.p or [0.01, 0.02, 0.05, 0.1, 0.2]:
                    prm = apply_variant(TcpParams(p=p, b=b, w0=a.w0), variant)
                    t = time.process_time()
                    res = PM.expected_latency(prm, size_packets=MAP_SIZES, **kw)
                    dt = time.process_time() - t
                    total += dt
                    cells += len(MAP_SIZES)
                    print(f"{variant:8s} b={b} p={p:<5}: {dt:7.2f} s CPU, E[T] at 200 packets "
                          f"{res[-1].expected_latency_s:.4f} s, folded "
                          f"{res[-1].aggregated_mass:.3f}; {peak()}", flush=True)
        print(f"map: {cells} cells, {total:.1f} s CPU")
        return
    sizes = list(range(1, a.max_packets + 1))
    for p in a.p or [0.01, 0.05, 0.1, 0.2]:
        for b in a.b or [2]:  # the table of docs/model.md 5.2: b = 2
            one(a, kw, sizes, p, b)


def one(a, kw, sizes, p, b) -> None:
    """One call for sizes 1..max_packets at loss rate p, ACK ratio b (the first variant)."""
    prm = apply_variant(TcpParams(p=p, b=b, w0=a.w0), a.variants[0])
    t = time.process_time()
    res = PM.expected_latency(prm, size_packets=sizes, **kw)
    dt = time.process_time() - t
    first = next((r.size_bytes // prm.mss_bytes for r in res if r.extrapolated), None)
    shown = ", ".join(f"{n}: {res[n - 1].expected_latency_s:.4f}" for n in SHOW if n <= len(res))
    print(f"{a.variants[0]} b={b} W0={a.w0:g} p={p:<5} sizes 1..{a.max_packets}: {dt:7.2f} s CPU; "
          f"extrapolated from {first} packets; folded {res[-1].aggregated_mass:.3f}; E[T] (s) "
          f"{shown}; {peak()}", flush=True)


if __name__ == "__main__":
    main()
