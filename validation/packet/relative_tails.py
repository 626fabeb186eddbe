"""The relative-state method's file ends, before and after a change: one call for sizes
1..N (NewReno, b = 2, W0 = 2, the method's defaults) per p, its CPU time, peak memory and
the split of its CPU time, and E[T(N)] for every N, from the code in ``--code`` (a
checkout of the package; default: this one) under the label ``--label``.

Each call runs in its own process (its peak resident memory, ``getrusage``, is its own),
under an address-space limit (``--limit-gb``). Rows go to ``--out`` (a call per row:
label, p, CPU, peak, ...) and the sizes' E[T] and dropped mass to ``--values`` (a row per
label, p and size); a (label, p, max_packets) already there is skipped, so an
interrupted run resumes. ``--compare A B`` prints, per p both labels have, the largest
and median relative change of E[T] over the sizes and the CPU times.

Usage::

    python validation/packet/relative_tails.py --label before --code /path/to/old/checkout
        [--p 0.2 0.1 0.05 0.02] [--max-packets 1000]
    python validation/packet/relative_tails.py --label after
    python validation/packet/relative_tails.py --compare before after
    python validation/packet/relative_tails.py --label after --simulate 20 100 1000

``--simulate``: the compiled simulator (``--runs`` runs, seed 1) at those sizes beside the
label's E[T], rows to ``--sim-out``.
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

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def one(a) -> dict:
    """One call in this process: its cost and every size's E[T]."""
    from latency_model.model import _packet_relative as RS
    from latency_model.model import packet as PM
    from latency_model.params import TcpParams, apply_variant

    prm = apply_variant(TcpParams(p=a.p[0], b=a.b, w0=a.w0), a.variant)
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], method="relative")  # compile
    stats = {}
    solve = RS.solve

    def spy(*args, **kw):
        return solve(*args, **{**kw, "stats": stats})

    RS.solve = spy
    t = time.process_time()
    res = PM.expected_latency(prm, size_packets=list(range(1, a.max_packets + 1)),
                              method="relative")
    cpu = time.process_time() - t
    return {"cpu_s": cpu,
            "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
            "cpu_tails_s": stats["cpu_s"]["tails"], "cpu_kernels_s": stats["cpu_s"]["kernels"],
            "cpu_forward_s": stats["cpu_s"]["forward"], "states": stats["states"],
            "tail_nodes": stats["tail_nodes"],
            "expected_s": [r.expected_latency_s for r in res],
            "dropped": [r.dropped_mass for r in res]}


def compare(a) -> None:
    runs = pd.read_csv(a.out)
    vals = pd.read_csv(a.values)
    x, y = a.compare
    for p in sorted(set(vals.p[vals.label == x]) & set(vals.p[vals.label == y])):
        u = vals[(vals.label == x) & (vals.p == p)].set_index("size_packets")
        v = vals[(vals.label == y) & (vals.p == p)].set_index("size_packets")
        n = u.index.intersection(v.index)
        rel = (v.expected_s[n] / u.expected_s[n] - 1).abs()
        cx = runs[(runs.label == x) & (runs.p == p)].iloc[-1]
        cy = runs[(runs.label == y) & (runs.p == p)].iloc[-1]
        print(f"p = {p:g}, sizes 1..{n.max()}: |E[T] change| max {rel.max():.2e} "
              f"(at {rel.idxmax()}), median {rel.median():.2e}; CPU {cx.cpu_s:.1f} s "
              f"(tails {cx.cpu_tails_s:.1f}) -> {cy.cpu_s:.1f} s (tails {cy.cpu_tails_s:.1f}); "
              f"peak {cx.peak_gib:.2f} -> {cy.peak_gib:.2f} GiB")


def simulated(a) -> None:
    """The compiled simulator's mean and 95 % CI (``--runs`` runs, seed 1) at sizes
    ``--simulate`` beside label ``--label``'s E[T], per p in the values file."""
    from latency_model.params import TcpParams, apply_variant
    from latency_model.sim import SimConfig, simulate

    vals = pd.read_csv(a.values)
    rows = []
    for p in sorted(set(vals.p[vals.label == a.label])):
        v = vals[(vals.label == a.label) & (vals.p == p)].set_index("size_packets")
        prm = apply_variant(TcpParams(p=p, b=a.b, w0=a.w0), a.variant)
        for n in a.simulate:
            if n not in v.index:
                continue
            r = simulate(prm, size_packets=[n], runs=a.runs, seed=1, config=SimConfig(),
                         engine="compiled").results[0]
            half = (r.ci95_s[1] - r.ci95_s[0]) / 2
            m = float(v.expected_s[n])
            rows.append({"date": datetime.date.today().isoformat(), "label": a.label, "p": p,
                         "size_packets": n, "model_s": m, "dropped": float(v.dropped[n]),
                         "sim_s": r.mean_latency_s, "sim_ci95_s": half, "runs": a.runs,
                         "err_pct": 100 * (m / r.mean_latency_s - 1),
                         "ci_pct": 100 * half / r.mean_latency_s})
            print(rows[-1], flush=True)
    _append(a.sim_out, pd.DataFrame(rows))


def _append(path, frame) -> None:
    """``frame``'s rows after the file's (columns united), written atomically."""
    if os.path.exists(path):
        frame = pd.concat([pd.read_csv(path), frame], ignore_index=True)
    tmp = path + ".tmp"
    frame.to_csv(tmp, index=False)
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.2, 0.1, 0.05, 0.02])
    ap.add_argument("--max-packets", type=int, default=1000)
    ap.add_argument("--variant", default="newreno")
    ap.add_argument("--b", type=int, default=2)
    ap.add_argument("--w0", type=float, default=2.0)
    ap.add_argument("--label", default="current")
    ap.add_argument("--code", default=ROOT, help="the checkout whose latency_model runs")
    ap.add_argument("--limit-gb", type=float, default=4.0)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per call")
    ap.add_argument("--out", default=os.path.join(HERE, "results_relative_tails.csv"))
    ap.add_argument("--values", default=os.path.join(HERE, "values_relative_tails.csv"))
    ap.add_argument("--compare", nargs=2, default=None, metavar=("LABEL_A", "LABEL_B"))
    ap.add_argument("--simulate", type=int, nargs="+", default=None, metavar="N",
                    help="simulate these sizes beside --label's values")
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--sim-out", default=os.path.join(HERE, "results_relative_tails_sim.csv"))
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        limit = int(a.limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        print(json.dumps(one(a)))
        return
    if a.compare:
        compare(a)
        return
    if a.simulate:
        simulated(a)
        return
    old = pd.read_csv(a.out) if os.path.exists(a.out) else None
    for p in a.p:
        if old is not None and ((old.label == a.label) & (old.p == p)
                                & (old.max_packets == a.max_packets)).any():
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--one", "--p", str(p),
               "--max-packets", str(a.max_packets), "--variant", a.variant, "--b", str(a.b),
               "--w0", str(a.w0), "--limit-gb", str(a.limit_gb)]
        env = {**os.environ, "PYTHONPATH": os.path.abspath(a.code)}
        load = os.getloadavg()[0]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                 timeout=a.timeout)
            r = json.loads(run.stdout.strip().splitlines()[-1])
            status = "ok"
        except subprocess.TimeoutExpired:
            r, status = {}, f"over {a.timeout:g} s"
        except (IndexError, json.JSONDecodeError):
            r, status = {}, "failed: " + (run.stderr.strip().splitlines() or ["?"])[-1][:200]
        vals = {k: r.pop(k, None) for k in ("expected_s", "dropped")}
        row = {"date": datetime.date.today().isoformat(), "label": a.label,
               "variant": a.variant, "b": a.b, "w0": a.w0, "p": p,
               "max_packets": a.max_packets, "load1": load, "status": status, **r}
        _append(a.out, pd.DataFrame([row]))
        if vals["expected_s"] is not None:
            n = len(vals["expected_s"])
            v = pd.DataFrame({"label": a.label, "p": p, "size_packets": np.arange(1, n + 1),
                              "expected_s": vals["expected_s"], "dropped": vals["dropped"]})
            _append(a.values, v)
        print(row, flush=True)
        old = pd.read_csv(a.out)


if __name__ == "__main__":
    main()
