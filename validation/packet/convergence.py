"""The packet model's two approximations on one cell: truncation (``eps``, ``tail_eps``)
and folding (``max_states``), each varied alone (docs/packet-model.md).

Usage::

    .venv/bin/python validation/packet/convergence.py --variant proposal --b 1 --w0 4 \\
        --p 0.1 --n 40 --eps 1e-7 1e-8 --tail-eps 1e-7 1e-10 --max-states 0 8000

Runs the level DP (``method="levels"``, stationarity detection off) for every combination
of the values given and prints E[T], the folded mass and the CPU seconds, so the bias of
each approximation is the move of E[T] as it is tightened. ``--runs N`` adds the
simulator's mean and 95 % CI (``rfc`` profile, compiled engine, seed 17).
"""

from __future__ import annotations

import argparse
import itertools
import time

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--b", type=int, default=2)
    ap.add_argument("--w0", type=float, default=2)
    ap.add_argument("--p", type=float, required=True)
    ap.add_argument("--n", type=int, nargs="+", required=True, help="sizes, packets")
    ap.add_argument("--eps", type=float, nargs="+", default=[PM.LEVELS_EPS])
    ap.add_argument("--tail-eps", type=float, nargs="+", default=[None])
    ap.add_argument("--max-states", type=int, nargs="+", default=[PM.LEVELS_MAX_STATES])
    ap.add_argument("--runs", type=int, default=0)
    a = ap.parse_args()
    prm = apply_variant(TcpParams(p=a.p, b=a.b, w0=a.w0), a.variant)
    PM.expected_latency(prm, size_packets=[2])  # compile / load the kernels first
    if a.runs:
        from latency_model.sim import SimConfig, simulate

        sims = simulate(prm, size_packets=a.n, runs=a.runs, seed=17, config=SimConfig(),
                        engine="compiled").results
        for n, s in zip(a.n, sims):
            print(f"simulator n={n}: {s.mean_latency_s:.4f} s "
                  f"[{s.ci95_s[0]:.4f}, {s.ci95_s[1]:.4f}] ({a.runs} runs)", flush=True)
    for eps, teps, ms in itertools.product(a.eps, a.tail_eps, a.max_states):
        t = time.process_time()
        res = PM.expected_latency(prm, size_packets=a.n, method="levels", eps=eps,
                                  tail_eps=teps, max_states=ms, stationary_tol=None)
        dt = time.process_time() - t
        vals = ", ".join(f"n={n}: {r.expected_latency_s:.4f}" for n, r in zip(a.n, res))
        print(f"eps {eps:.0e} tail_eps {teps if teps is None else format(teps, '.0e')} "
              f"max_states {ms}: {vals} s; folded {res[-1].aggregated_mass:.3f}; "
              f"{dt:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
