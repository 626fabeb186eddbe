"""The relative-state method (``expected_latency(..., method="relative")``) on the cells of
``results_current.csv``: beside the simulator's 10,000-run means and 95 % CIs recorded
there and the level DP's values of that run (2026-11-27).

One call per (variant, b, W0, p) with all that group's sizes (the method gives every size
from one pass). Writes ``results_relative.csv`` (one row per cell) and prints a summary.

Usage::

    python validation/packet/relative.py [--max-packets 40] [--eps 1e-5] [--eps-state 1e-5]
        [--light-tier 0] [--out validation/packet/results_relative.csv]

``--light-tier``: lump the light states no heavy state shares a signature with among
themselves by that signature tier (``_packet_relative.LIGHT_TIER``; -1: not lumped).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-packets", type=int, default=40,
                    help="groups whose largest size is at most this (40)")
    ap.add_argument("--eps", type=float, default=None)
    ap.add_argument("--eps-state", type=float, default=None)
    ap.add_argument("--light-tier", type=int, default=None)
    ap.add_argument("--out", default=os.path.join(HERE, "results_relative.csv"))
    a = ap.parse_args()
    if a.light_tier is not None:
        from latency_model.model import _packet_relative as RS

        RS.LIGHT_TIER = a.light_tier
    grid = pd.read_csv(os.path.join(HERE, "results_current.csv"))
    kw = {"method": "relative"}
    if a.eps is not None:
        kw["eps"] = a.eps
    if a.eps_state is not None:
        kw["eps_state"] = a.eps_state
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], **kw)  # compile / load kernels
    rows = []
    done = set()
    if os.path.exists(a.out):  # resume
        old = pd.read_csv(a.out)
        rows = old.to_dict("records")
        done = {(r["variant"], r["b"], r["w0"], r["p"]) for r in rows}
    for (variant, b, w0, p), g in grid.groupby(["variant", "b", "w0", "p"]):
        if g.size_packets.max() > a.max_packets or (variant, b, w0, p) in done:
            continue
        prm = apply_variant(TcpParams(p=float(p), b=int(b), w0=float(w0)), variant)
        sizes = sorted(int(n) for n in g.size_packets)
        t = time.process_time()
        res = PM.expected_latency(prm, size_packets=sizes, **kw)
        cpu = time.process_time() - t
        by = {r.size_bytes // prm.mss_bytes: r for r in res}
        for _, c in g.iterrows():
            r = by[int(c.size_packets)]
            rows.append(dict(
                variant=variant, b=int(b), w0=w0, p=p, size_packets=int(c.size_packets),
                relative_s=r.expected_latency_s, levels_s=c.model_s, sim_s=c.sim_s,
                ci_lo_s=c.ci_lo_s, ci_hi_s=c.ci_hi_s, runs=int(c.runs),
                err_sim=r.expected_latency_s / c.sim_s - 1.0,
                err_levels=r.expected_latency_s / c.model_s - 1.0,
                inside_ci=int(c.ci_lo_s <= r.expected_latency_s <= c.ci_hi_s),
                truncated_mass=r.dropped_mass, lumped_mass=r.aggregated_mass,
                states=r.states, group_cpu_s=cpu))
        print(f"{variant:8s} b={b} W0={w0:<3g} p={p:<6g} sizes {sizes[0]}..{sizes[-1]}: "
              f"{cpu:6.2f} s CPU; errors vs sim "
              + " ".join(f"{100 * (by[n].expected_latency_s / s - 1):+.2f}%"
                         for n, s in zip(g.size_packets, g.sim_s)), flush=True)
        tmp = a.out + ".tmp"
        pd.DataFrame(rows).to_csv(tmp, index=False)
        os.replace(tmp, a.out)
    summary(pd.DataFrame(rows))


def summary(d: pd.DataFrame) -> None:
    if d.empty:
        return
    e = d.err_sim.abs() * 100
    el = d.err_levels.abs() * 100
    half = (d.ci_hi_s - d.ci_lo_s) / 2 / d.sim_s * 100
    out_ci = (~d.inside_ci.astype(bool)) & (e > np.maximum(2.0, half))
    print(f"{len(d)} cells: vs simulator median {e.median():.2f} %, max {e.max():.2f} %, "
          f"inside CI {int(d.inside_ci.sum())}, outside max(2 %, CI) {int(out_ci.sum())}; "
          f"vs level DP median {el.median():.2f} %, max {el.max():.2f} %; "
          f"CPU per group median {d.groupby(['variant', 'b', 'w0', 'p']).group_cpu_s.first().median():.2f} s, "
          f"max {d.group_cpu_s.max():.2f} s")


if __name__ == "__main__":
    main()
