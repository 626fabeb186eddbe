"""Speed of the shared-bottleneck simulator on Burst TCP's experiment (prints figures only).

Run: python benchmarks/bench_dumbbell.py
"""

from __future__ import annotations

import time

import numpy as np

from latency_model.experiments.btcp import BtcpExperiment
from latency_model.sim.scenario import Scenario, random_flows, run
from latency_model.sim.sizes import ParetoSizes


def main() -> None:
    for per_node in (50, 250):
        ex = BtcpExperiment(flows_per_node=per_node)
        for v in ex.variants:
            times, packets = [], 0
            for child in np.random.SeedSequence(1).spawn(3):
                flows = random_flows(ex.n_flows, ParetoSizes(4.0, 1.2), ex.tcp(v),
                                     start_window_s=ex.start_window_s, nodes=ex.nodes, seed=child)
                t0 = time.perf_counter()
                res = run(Scenario(flows=flows, topology=ex.topology(), config=ex.config(),
                                   horizon_s=ex.horizon_s))
                times.append(time.perf_counter() - t0)
                packets += int(res.column("packets_sent").sum())
            print(f"{ex.n_flows:5d} flows {v:8s} {np.mean(times):6.2f} s per run, "
                  f"{packets / sum(times):8.0f} data packets per second ({packets} packets in 3 runs)")


if __name__ == "__main__":
    main()
