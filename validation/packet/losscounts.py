"""Where the packet model's error sits: P(k losses) and L_k = E[T | k losses], model
against the simulator, for one cell (docs/packet-model.md).

Usage::

    .venv/bin/python validation/packet/losscounts.py --variant newreno --b 1 --w0 10 \\
        --p 0.2 --n 30 --runs 200000

Runs the level DP (``method="levels"``, stationarity off, ``k_max`` bins) and the
simulator (rfc profile, compiled engine, seed 7; the loss count of a run is its
``lost_packets``) and prints, per loss count k, both probabilities, both conditional
latencies and both contributions P(k) x L_k to E[T]. L_k close but P(k) short at large k
means that the model's approximations lose *later losses* (truncation and folding finish or
continue an improbable path as a less damaged one); L_k off at small k would mean a
mechanism differs. The model's P(k) of a folded state is its signature's
(docs/packet-model.md), so P(k) is approximate where much is folded; E[T] is not.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate
from latency_model.sim.kernel import OUT_FIELDS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--b", type=int, default=1)
    ap.add_argument("--w0", type=float, default=10)
    ap.add_argument("--p", type=float, required=True)
    ap.add_argument("--n", type=int, required=True, help="size, packets")
    ap.add_argument("--runs", type=int, default=100000)
    ap.add_argument("--k-max", type=int, default=25)
    a = ap.parse_args()
    prm = apply_variant(TcpParams(p=a.p, b=a.b, w0=a.w0), a.variant)
    s = simulate(prm, size_packets=[a.n], runs=a.runs, seed=7, config=SimConfig(),
                 engine="compiled").results[0]
    t_sim = s.samples[:, OUT_FIELDS.index("completion_s")]
    k_sim = s.samples[:, OUT_FIELDS.index("lost_packets")].astype(int)
    t = time.process_time()
    r = PM.expected_latency(prm, size_packets=[a.n], method="levels", stationary_tol=None,
                            k_max=a.k_max)[0]
    cpu = time.process_time() - t
    print(f"{a.variant} b={a.b} W0={a.w0:g} p={a.p:g} n={a.n}: model E[T] "
          f"{r.expected_latency_s:.4f} s ({cpu:.0f} s CPU), simulator {s.mean_latency_s:.4f} s "
          f"[{s.ci95_s[0]:.4f}, {s.ci95_s[1]:.4f}] ({a.runs} runs)")
    print(" k  P_sim    P_model  L_k sim   L_k model  P L_k sim  P L_k model")
    for k in range(a.k_max):
        m = k_sim == k
        ps, pm = m.mean(), r.loss_count_pmf[k]
        ls = t_sim[m].mean() if m.any() else np.nan
        lm = r.conditional_latency_s[k]
        print(f"{k:2d} {ps:.5f}  {pm:.5f}  {ls:8.3f}  {lm:8.3f}   {ps * ls if m.any() else 0:8.4f}"
              f"   {pm * lm if pm > 0 else 0:8.4f}")
    m = k_sim >= a.k_max
    print(f"{a.k_max}+ simulator {m.mean():.5f} (L {t_sim[m].mean() if m.any() else 0:.1f} s), "
          f"model {1.0 - r.loss_count_pmf.sum():.5f}")


if __name__ == "__main__":
    main()
