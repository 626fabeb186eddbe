"""The packet model on the simulator's own transitions (``expected_latency(config=...)``,
docs/packet-model.md section 6b): its cost and its distance to the simulator, per stack.

Usage::

    .venv/bin/python validation/packet/engine.py [--runs 200000] [--cells rfc-0.05,...]

For each cell (a stack profile with its W0 and rule, b = 1, a loss rate p, sizes 1..N in
one call): the CPU seconds of the call (process time, kernels compiled or loaded before
the clock starts), the process's peak memory, the level states, the truncation's reported
bound (``dropped_mass``) and E[T] at the sizes shown; beside it the simulator's mean with
its 95 % half-width at those sizes (``--runs`` transfers, seed 1, the same profile), the
difference in percent and in simulated standard errors. Writes ``results_engine.csv`` in
this folder (one row per cell and size; a run of some ``--cells`` keeps the others' rows).
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import time

from latency_model.model import packet as PM
from latency_model.params import TcpParams
from latency_model.sim import SimConfig, simulate
from latency_model.sim.profiles import profile_params

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results_engine.csv")
COLUMNS = ("cell", "stack", "rule", "w0", "b", "p", "max_packets", "cpu_s", "peak_gib", "level_states",
           "dropped_mass", "size_packets", "model_s", "sim_s", "sim_half95_s", "sim_runs", "error_pct",
           "error_se")

CELLS = {  # name -> (stack, p, largest size, sizes shown)
    "rfc-0.01": ("rfc", 0.01, 20, (1, 5, 10, 20)),
    "rfc-0.05": ("rfc", 0.05, 20, (1, 5, 10, 20)),
    "rfc-0.1": ("rfc", 0.1, 20, (1, 5, 10, 20)),
    "ns3-0.05": ("ns3", 0.05, 20, (1, 5, 10, 20)),
    "ns3-0.1": ("ns3", 0.1, 20, (1, 5, 10, 20)),
    "linux-0.01": ("linux", 0.01, 12, (1, 5, 10, 12)),
    "linux-0.05": ("linux", 0.05, 12, (1, 5, 10, 12)),
    "linux-0.1": ("linux", 0.1, 12, (1, 5, 10, 12)),
}


def run_cell(name: str, runs: int) -> list[dict]:
    """One cell's rows."""
    stack, p, nmax, shown = CELLS[name]
    config = SimConfig.profile(stack)
    prm = profile_params(stack, TcpParams(p=p, b=1), given=("b",))
    PM.expected_latency(prm.replace(p=0.1), size_packets=[2], config=config)  # compile / load the kernels
    t = time.process_time()
    res = PM.expected_latency(prm, size_packets=list(range(1, nmax + 1)), config=config)
    cpu = time.process_time() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30
    sim = simulate(prm, size_packets=list(shown), config=config, runs=runs, seed=1, engine="compiled").results
    rows = []
    for n, s in zip(shown, sim):
        m = res[n - 1]
        half = (s.ci95_s[1] - s.ci95_s[0]) / 2
        rows.append({"cell": name, "stack": stack, "rule": prm.rule.name, "w0": f"{prm.w0:g}", "b": prm.b,
                     "p": p, "max_packets": nmax, "cpu_s": f"{cpu:.2f}", "peak_gib": f"{peak:.2f}",
                     "level_states": res[-1].states, "dropped_mass": f"{float(m.dropped_mass):.3g}",
                     "size_packets": n, "model_s": f"{m.expected_latency_s:.6f}",
                     "sim_s": f"{s.mean_latency_s:.6f}", "sim_half95_s": f"{half:.6f}", "sim_runs": runs,
                     "error_pct": f"{100 * (m.expected_latency_s / s.mean_latency_s - 1):+.3f}",
                     "error_se": f"{(m.expected_latency_s - s.mean_latency_s) / (half / 1.96):+.2f}"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200_000, help="simulated transfers a size (200000)")
    ap.add_argument("--cells", default=",".join(CELLS), help=f"comma-separated, of {', '.join(CELLS)}")
    a = ap.parse_args()
    names = [c for c in a.cells.split(",") if c]
    unknown = [c for c in names if c not in CELLS]
    if unknown:
        ap.error(f"--cells: unknown {', '.join(unknown)}")
    kept = []
    if os.path.exists(OUT):
        with open(OUT, newline="") as f:
            kept = [r for r in csv.DictReader(f) if r["cell"] not in names]
    rows = []
    for name in names:
        new = run_cell(name, a.runs)
        for r in new:
            print(" ".join(f"{k}={r[k]}" for k in ("cell", "size_packets", "cpu_s", "peak_gib", "level_states",
                                                    "dropped_mass", "model_s", "sim_s", "sim_half95_s",
                                                    "error_pct", "error_se")), flush=True)
        rows += new
    order = {c: i for i, c in enumerate(CELLS)}
    out = sorted(kept + rows, key=lambda r: (order[r["cell"]], int(r["size_packets"])))
    tmp = OUT + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(out)
    os.replace(tmp, OUT)


if __name__ == "__main__":
    main()
