"""The relative-state method on long files: one call for sizes 1..N (NewReno, b = 2,
W0 = 2 unless given), its CPU time, peak memory, where the cost goes, and E[T] beside the
compiled simulator's mean and 95 % CI at a few sizes.

Each (p, eps, eps_state) runs in its own process (``--one``), so its peak resident memory
(``getrusage``) is its own, under an address-space limit (``--limit-gb``, default 4: a
call that passes it is recorded as out of memory). Appends rows to ``--out`` (one per
(setting, compared size); rows already there are skipped: an interrupted run resumes)
with the date, the machine's load and the levels' light states.

Usage::

    python validation/packet/relative_long.py [--p 0.01 0.05 0.1 0.2] [--max-packets 1000]
        [--eps 1e-4] [--eps-state 1e-4] [--light-tier 0] [--compare 100 1000] [--runs 20000]
        [--out validation/packet/results_relative_long.csv]

``--light-tier``: ``_packet_relative.LIGHT_TIER`` for the call (column ``light_tier``; empty in
rows from before it existed, which ran with none, and with an unbounded store: column
``compactions`` empty).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import time

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))


def one(a) -> dict:
    """One call in this process: its cost, and the model at the compared sizes."""
    from latency_model.model import _packet_relative as RS
    from latency_model.model import packet as PM
    from latency_model.params import TcpParams, apply_variant

    prm = apply_variant(TcpParams(p=a.p[0], b=a.b, w0=a.w0), a.variant)
    RS.LIGHT_TIER = a.light_tier
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], method="relative")  # compile
    stats = {}
    solve = RS.solve

    def spy(*args, **kw):  # the call's own diagnostics
        return solve(*args, **{**kw, "stats": stats})

    RS.solve = spy
    t = time.process_time()
    try:
        res = PM.expected_latency(prm, size_packets=list(range(1, a.max_packets + 1)),
                                  method="relative", eps=a.eps, eps_state=a.eps_state)
    except MemoryError:
        return {"status": "out of memory", "cpu_s": time.process_time() - t}
    cpu = time.process_time() - t
    light = stats.get("light", [])
    first = next((r.size_bytes // prm.mss_bytes for r in res if r.extrapolated), None)
    return {
        "status": "ok", "cpu_s": cpu, "peak_gib": resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "cpu_tails_s": stats["cpu_s"]["tails"], "cpu_kernels_s": stats["cpu_s"]["kernels"],
        "cpu_forward_s": stats["cpu_s"]["forward"], "states": stats["states"],
        "full_kernels": stats["full_kernels"], "compactions": stats["compactions"],
        "stored": stats["stored"], "tail_nodes": stats["tail_nodes"],
        "largest_level": max(stats["level_states"]),
        "largest_light": max((x[1] for x in light), default=0),
        "largest_light_mass": max((x[2] for x in light), default=0.0),
        "stationary_from": first,
        "model": {n: [res[n - 1].expected_latency_s, res[n - 1].dropped_mass,
                      res[n - 1].aggregated_mass] for n in a.compare if n <= a.max_packets},
    }


def sim(prm, n, runs):
    from latency_model.sim import SimConfig, simulate

    r = simulate(prm, size_packets=[n], runs=runs, seed=1, config=SimConfig(),
                 engine="compiled").results[0]
    return r.mean_latency_s, (r.ci95_s[1] - r.ci95_s[0]) / 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.01, 0.05, 0.1, 0.2])
    ap.add_argument("--max-packets", type=int, default=1000)
    ap.add_argument("--eps", type=float, default=1e-4)
    ap.add_argument("--eps-state", type=float, default=1e-4)
    ap.add_argument("--light-tier", type=int, default=-1)
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--b", type=int, default=2)
    ap.add_argument("--w0", type=float, default=2.0)
    ap.add_argument("--compare", type=int, nargs="+", default=[20, 100, 1000])
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--limit-gb", type=float, default=4.0)
    ap.add_argument("--out", default=os.path.join(HERE, "results_relative_long.csv"))
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        limit = int(a.limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        print(json.dumps(one(a)))
        return
    from latency_model.params import TcpParams, apply_variant

    old = pd.read_csv(a.out) if os.path.exists(a.out) else None
    for p in a.p:
        key = dict(variant=a.variant, b=a.b, w0=a.w0, p=p, eps=a.eps, eps_state=a.eps_state,
                   max_packets=a.max_packets, light_tier=a.light_tier)
        if (old is not None and set(key) <= set(old.columns)
                and (old[list(key)] == pd.Series(key)).all(axis=1).any()):
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--one", "--p", str(p),
               "--max-packets", str(a.max_packets), "--eps", str(a.eps), "--eps-state",
               str(a.eps_state), "--variant", a.variant, "--b", str(a.b), "--w0", str(a.w0),
               "--limit-gb", str(a.limit_gb), "--light-tier", str(a.light_tier),
               "--compare", *map(str, a.compare)]
        load = os.getloadavg()[0]
        run = subprocess.run(cmd, capture_output=True, text=True)
        try:
            r = json.loads(run.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            r = {"status": "failed: " + (run.stderr.strip().splitlines() or ["?"])[-1][:200]}
        model = r.pop("model", {})
        prm = apply_variant(TcpParams(p=p, b=a.b, w0=a.w0), a.variant)
        rows = []
        for n in a.compare if model else [None]:
            row = {"date": datetime.date.today().isoformat(), **key, "load1": load,
                   **{k: v for k, v in r.items()}}
            if n is not None and str(n) in model:
                m, tr, lu = model[str(n)]
                s, half = sim(prm, n, a.runs)
                row.update(size_packets=n, model_s=m, truncated=tr, lumped=lu, sim_s=s,
                           sim_ci95_s=half, runs=a.runs, err_pct=100 * (m / s - 1))
            rows.append(row)
        frame = pd.DataFrame(rows)
        print(frame.to_string(index=False), flush=True)
        old = frame if old is None else pd.concat([old, frame], ignore_index=True)
        tmp = a.out + ".tmp"
        old.to_csv(tmp, index=False)
        os.replace(tmp, a.out)  # atomic: an interrupted run keeps the rows before


if __name__ == "__main__":
    main()
