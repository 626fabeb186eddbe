"""Benchmark of the recursive solver (issue 3 targets; not part of the tests).

Run: python benchmarks/bench_solver.py [--skip-direct]

Prints, for the paper's setting (W0 = 2, W_SS = M = 30, MSS 500, b = 1, p = 0.1), the wall
time and the CPU time of this process (one core) for each level-sum engine: ``numpy``
(``LATENCY_MODEL_NO_NUMBA=1``) and ``numba`` (the default; same results bit for bit).
The machine's speed varies (other processes, a shared VM); the first line times a fixed
numpy reference workload so that runs on different days can be compared.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def calibration() -> float:
    """CPU seconds of a fixed workload (50 exp/multiply passes over 2e6 doubles)."""
    x = np.linspace(0.0, 1.0, 2_000_000)
    c0 = time.process_time()
    for _ in range(50):
        np.exp(x) * x
    return time.process_time() - c0


def run(engine: str, direct: bool) -> None:
    # Imported here so that LATENCY_MODEL_NO_NUMBA is read for this engine.
    from latency_model import TcpParams
    from latency_model.model import _levels, _nodes
    from latency_model.model.recursion import (
        SolverOptions, clear_table_cache, conditional_latency, conditional_latency_direct, expected_latency,
    )

    _levels._checked, _levels._compiled = False, None
    _nodes._checked, _nodes._compiled = False, None
    if engine == "numba" and _levels.compiled_level_sums() is None:
        print("numba: unavailable (not installed, or LATENCY_MODEL_NO_NUMBA set), skipped")
        return
    p = TcpParams()
    conditional_latency(p, size_bytes=[4000.0], k=2)  # warm-up (numba compilation, caches)
    sizes100 = np.arange(1, 101) * 500.0
    clear_table_cache()  # every first call below builds its tables
    _, wall, cpu = timed(lambda: conditional_latency(p, size_bytes=sizes100, k=[0, 1, 2, 3]))
    print(f"[{engine}] L_0..L_3, sizes 1..100 packets: wall {wall:.2f} s, cpu {cpu:.2f} s (target < 0.5 s)")
    for exact_l2 in (True, False):
        opts = SolverOptions(exact_l2=exact_l2)
        clear_table_cache()
        res, wall, cpu = timed(lambda: expected_latency(p, size_bytes=np.arange(1, 1001) * 500.0, options=opts))
        print(
            f"[{engine}] expected latency, sizes 1..1000 packets, p = 0.1, exact_l2={exact_l2}: "
            f"wall {wall:.2f} s, cpu {cpu:.2f} s, K = {res.k_max} (target < 2 s)"
        )
    # The tables do not depend on p: a second loss rate reuses the levels already built.
    p2 = p.replace(p=0.05)
    res, wall, cpu = timed(lambda: expected_latency(p2, size_bytes=np.arange(1, 1001) * 500.0))
    print(f"[{engine}]   the same sizes again at p = 0.05 (tables kept): wall {wall:.2f} s, cpu {cpu:.2f} s, K = {res.k_max}")
    if not direct:
        return
    for size, k in ((4000.0, 1), (4000.0, 2)):
        ref, _, t_direct = timed(lambda: conditional_latency_direct(p, size, k, epsrel=1e-8))
        clear_table_cache()  # the tables solve for this size from scratch
        fast, _, t_fast = timed(lambda: conditional_latency(p, size_bytes=[size], k=k)[0])
        print(
            f"[{engine}] L_{k}({size:.0f} B): nested quadrature {ref:.9f} s in {t_direct:.2f} s cpu, "
            f"tables {fast:.9f} s in {t_fast:.3f} s cpu, relative difference {abs(fast - ref) / ref:.1e}, "
            f"speed-up {t_direct / t_fast:.0f}x"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-direct", action="store_true", help="skip the (slow) nested-quadrature reference")
    ap.add_argument("--engines", default="numpy,numba")
    args = ap.parse_args()
    print(f"calibration: {calibration():.2f} cpu s for a fixed numpy workload")
    for engine in args.engines.split(","):
        if engine == "numpy":
            os.environ["LATENCY_MODEL_NO_NUMBA"] = "1"
        else:
            os.environ.pop("LATENCY_MODEL_NO_NUMBA", None)
        run(engine, direct=not args.skip_direct and engine == args.engines.split(",")[-1])


if __name__ == "__main__":
    main()
