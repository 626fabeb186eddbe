"""Burst TCP's mice, one at a time on the paper's dumbbell: the transfer-time cut B-TCP can give
when a mouse has the network to itself (the light-load limit of `latency-model experiment btcp`).

For each mouse size N = 5..31 packets (a Pareto(4, 1.2) size rounded up is never 4 with
probability > 0), one flow alone on the dumbbell (7-packet router queue, so self-inflicted drops
still happen), weighted by P(ceil(X) = N | mouse). Printed for the default settings and for the
settings the paper leaves open. Run from the repository root:

    PYTHONPATH=. python validation/btcp_alone.py
"""

from __future__ import annotations

import numpy as np

from latency_model.experiments.btcp import BtcpExperiment
from latency_model.sim.scenario import Flow, Scenario, run

SIZES = np.arange(5, 32)
WEIGHTS = (4.0 / (SIZES - 1)) ** 1.2 - (4.0 / SIZES) ** 1.2  # P(ceil(X) = N), X ~ Pareto(4, 1.2)
WEIGHTS = WEIGHTS / WEIGHTS.sum()


def alone(ex: BtcpExperiment, variant: str) -> np.ndarray:
    """Completion time of each mouse size alone on the dumbbell, seconds."""
    return np.array([
        run(Scenario(flows=[Flow(0.0, int(n) * 1024, ex.tcp(variant))], topology=ex.topology(),
                     config=ex.config())).flows[0].completion_s
        for n in SIZES])


def main() -> None:
    for kw in (dict(), dict(min_rto_s=0.2), dict(min_rto_s=3.0), dict(b=2), dict(rwnd=20),
               dict(queue_packets=14), dict(queue_packets=3)):
        ex = BtcpExperiment(**kw)
        mean = {v: float(WEIGHTS @ alone(ex, v)) for v in ex.variants}
        cut = {v: 100.0 * (1.0 - mean[v] / mean["newreno"]) for v in ("btcp4", "btcp8")}
        label = ", ".join(f"{k}={v}" for k, v in kw.items()) or "default"
        print(f"{label:<18} mean mice time alone: NewReno {mean['newreno']:.3f} s, "
              f"B-TCP(4) {mean['btcp4']:.3f} s ({cut['btcp4']:.1f}% less), "
              f"B-TCP(8) {mean['btcp8']:.3f} s ({cut['btcp8']:.1f}% less)")


if __name__ == "__main__":
    main()
