"""Benchmark of the recursive solver (issue 3 targets; not part of the tests).

Run: python benchmarks/bench_solver.py
Prints wall times on one core for the paper's setting (W0 = 2, W_SS = M = 30, MSS 500, b = 1).
"""

import time

import numpy as np

from latency_model import TcpParams
from latency_model.recursion import SolverOptions, conditional_latency, conditional_latency_direct, expected_latency


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main():
    p = TcpParams()
    sizes100 = np.arange(1, 101) * 500.0
    _, t = timed(lambda: conditional_latency(p, sizes100, [0, 1, 2, 3]))
    print(f"L_0..L_3, sizes 1..100 packets: {t:.3f} s (target < 0.5 s)")
    for exact_l2 in (True, False):
        opts = SolverOptions(exact_l2=exact_l2)
        res, t = timed(lambda: expected_latency(p, np.arange(1, 1001) * 500.0, options=opts))
        print(
            f"expected latency, sizes 1..1000 packets, p = 0.1, exact_l2={exact_l2}: {t:.3f} s, "
            f"K = {res.k_max} (target < 2 s)"
        )
    for size, k in ((4000.0, 1), (4000.0, 2)):
        direct, t_direct = timed(lambda: conditional_latency_direct(p, size, k, epsrel=1e-8))
        fast, t_fast = timed(lambda: conditional_latency(p, [size], k)[0])
        print(
            f"L_{k}({size:.0f} B): nested quadrature {direct:.9f} s in {t_direct:.2f} s, "
            f"tables {fast:.9f} s in {t_fast:.3f} s, relative difference {abs(fast - direct) / direct:.1e}, "
            f"speed-up {t_direct / t_fast:.0f}x"
        )


if __name__ == "__main__":
    main()
