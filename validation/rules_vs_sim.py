"""Model vs simulator for every growth rule: L_0 (per-round staircase) and L_1.

Run: ``python validation/rules_vs_sim.py [--l1-runs N]``; prints the tables of
``validation/RULES.md``. Imports both halves (the only kind of code allowed to).

L_0: the model's round count ``fluid.l0(..., time_model="rounds") / RTT`` against
the simulator's loss-free completion in RTTs, ``floor(completion / RTT)``: with b = 1
the completion is ``r RTT + (r - 1 + k) s`` (tests/test_sim_noloss.py), so the floor
is the round count r while the file's serialisation ``(r - 1 + k) s`` stays below one
RTT (default path: s = 43.2 us, RTT = 0.1 s, BDP 2315 packets > every window here).

L_1: ``recursion.conditional_latency(params, size_bytes=sizes, k=1, options=rounds)`` against the
simulator's latency given exactly one lost packet, ``rto_rule="paper"`` (the model's
fixed RTO): exactly, as the mean over the n positions of the lost packet (given one
loss its position is uniform), and by Monte Carlo (``p = 0.02``, the runs with exactly
one loss, mean and 95% CI), which must cover the exact value.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from latency_model import TcpParams
from latency_model.model.fluid import l0
from latency_model.growth import make_rule
from latency_model.model.recursion import SolverOptions, conditional_latency
from latency_model.sim import SimConfig, run_transfer, simulate

RULES = [
    ("standard", {}),
    ("standard", {"abc_l": 2}),
    ("generalized", {"beta": 4}),
    ("generalized", {"beta": 1.5}),
    ("btcp", {}),
    ("btcp", {"f": 8}),
    ("lss", {"max_ssthresh": 8}),
    ("ass", {"algorithm": 2}),
    ("ass", {"algorithm": 3}),
    ("ass", {"algorithm": 4}),
    ("smooth-start", {}),
]
SETTINGS = {"paper": dict(w_ss=30.0, rwnd=30.0), "open": dict(w_ss=1e6, rwnd=1e6)}


def label(name, kw):
    return name + ("(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")" if kw else "")


def l0_rounds(params, sizes_packets):
    """(model rounds, simulated rounds) per size, b = 1 path with BDP above every window."""
    model = l0(params, np.asarray(sizes_packets, float) * params.mss_bytes, time_model="rounds") / params.rtt_s
    sim = []
    for n in sizes_packets:
        r = run_transfer(params.replace(p=0.0), size_packets=int(n))
        sim.append(math.floor(r.completion_s / params.rtt_s))
    return np.rint(model).astype(int), np.array(sim)


def l0_table(max_packets=100, setting="paper"):
    rows = []
    sizes = list(range(1, max_packets + 1))
    for name, kw in RULES:
        for w0 in (1, 2, 3, 4):
            p = TcpParams(p=0.0, w0=w0, b=1, rule=make_rule(name, **kw), **SETTINGS[setting])
            m, s = l0_rounds(p, sizes)
            diff = s - m
            bad = [n for n, d in zip(sizes, diff) if d]
            rows.append((label(name, kw), w0, len(sizes) - len(bad), int(diff.min()), int(diff.max()), bad))
    return rows


def single_loss_mean(params, n, config):
    """The simulator's L_1 without sampling: given exactly one lost packet, the loss is the
    first transmission of a uniformly chosen segment, so L_1 is the mean of the n
    deterministic completions with segment i dropped (i = 0..n-1)."""
    return float(np.mean([run_transfer(params, size_packets=n, config=config, drops=[i]).completion_s for i in range(n)]))


def l1_table(runs, seed=1, sizes=(10, 30, 60)):
    """Rows (rule, size, model L_1, simulated L_1 exact, Monte Carlo mean, CI, n)."""
    rows = []
    cfg = SimConfig(rto_rule="paper")
    opts = SolverOptions(time_model="rounds")
    for name, kw in RULES:
        p = TcpParams(p=0.02, w0=2, b=1, rule=make_rule(name, **kw))
        model = conditional_latency(p, size_bytes=[n * p.mss_bytes for n in sizes], k=[1], options=opts)[:, 0]
        summ = simulate(p, size_packets=list(sizes), runs=runs, seed=seed, config=cfg) if runs else None
        for j, n in enumerate(sizes):
            exact = single_loss_mean(p, n, cfg)
            c = summ.results[j].conditional[1] if summ else {"mean_s": math.nan, "ci95_s": (math.nan,) * 2, "n": 0}
            rows.append((label(name, kw), n, float(model[j]), exact, c["mean_s"], c["ci95_s"], c["n"]))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--l1-runs", type=int, default=20000, help="0: no Monte Carlo")
    ap.add_argument("--max-packets", type=int, default=100)
    ap.add_argument("--skip-l1", action="store_true")
    a = ap.parse_args(argv)
    for setting in SETTINGS:
        print(f"## L_0 rounds, b = 1, sizes 1..{a.max_packets} packets, W_SS/M {setting}")
        print("| rule | W0 | sizes agreeing | sim - model (min, max) | sizes that differ |")
        print("|---|---|---|---|---|")
        for lab, w0, ok, lo, hi, bad in l0_table(a.max_packets, setting):
            shown = ", ".join(map(str, bad[:12])) + (" ..." if len(bad) > 12 else "")
            print(f"| {lab} | {w0} | {ok}/{a.max_packets} | {lo}, {hi} | {shown} |")
        print()
    if a.skip_l1:
        return 0
    t = time.time()
    print(f"## L_1 (exactly one loss), p = 0.02, W0 = 2, b = 1, W_SS = M = 30, rto_rule paper; "
          f"Monte Carlo {a.l1_runs} runs, seed 1")
    print("| rule | size (pkt) | model L_1 (s) | sim, mean over loss positions (s) | model - sim (s) "
          "| Monte Carlo mean [95% CI] (n) |")
    print("|---|---|---|---|---|---|")
    for lab, n, mod, exact, mean, ci, k in l1_table(a.l1_runs):
        mc = f"{mean:.4f} [{ci[0]:.4f}, {ci[1]:.4f}] ({k})" if k else "-"
        print(f"| {lab} | {n} | {mod:.4f} | {exact:.4f} | {mod - exact:+.4f} | {mc} |")
    print(f"\n({time.time() - t:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
