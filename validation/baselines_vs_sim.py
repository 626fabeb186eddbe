"""CSA and PFTK against the packet simulator on 32 cells: the data behind docs/baselines.md.

Run: ``python validation/baselines_vs_sim.py [--runs 10000] [--out validation/baselines_vs_sim.csv]``

Cells: MSS 500 B, RTT 0.1 s, W0 = 2 packets, W_SS = rwnd = 30 packets, dup_t 3, NewReno;
b = 1, 2; p = 0.01, 0.05, 0.1, 0.2; files of 5, 20, 100 and 200 packets. The simulator runs the
``rfc`` profile (RFC 6298 timer, Karn's rule, initial and minimum RTO 1 s), seed 2024, and with
``--timers`` also Linux-style timestamps (the back-off collapses on the next new ACK) and the
paper's fixed RTO, to separate the back-off's share of the gap. One row per cell and simulated
timer: the simulated mean and its 95% interval, CSA's and PFTK's d/B, each model's relative error
(model / simulated mean - 1). Imports both halves (the only kind of code allowed to).
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from latency_model import SimConfig, TcpParams, simulate
from latency_model.model import csa, pftk

SIZES = [5, 20, 100, 200]
TIMERS = {"karn": {}, "timestamps": {"rtt_sampling": "timestamps"}, "fixed_rto": {"rto_rule": "paper"}}


def rows(runs: int, timers: list[str]):
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    for b in (1, 2):
        for p in (0.01, 0.05, 0.1, 0.2):
            params = TcpParams(mss_bytes=500, rtt_s=0.1, p=p, w0=2, w_ss=30, rwnd=30, b=b)
            model_csa = csa.expected_latency_csa(params, size_packets=SIZES)
            model_pftk = pftk.transfer_time_s(params, size_packets=SIZES)
            for timer in timers:
                sim = simulate(params, size_packets=SIZES, runs=runs, seed=2024,
                               config=SimConfig.profile("rfc", **TIMERS[timer]))
                for n, r, c, f in zip(SIZES, sim.results, model_csa, model_pftk):
                    m = r.mean_latency_s
                    yield {"date": date, "b": b, "p": p, "size_packets": n, "timer": timer, "runs": runs,
                           "sim_mean_s": round(m, 6), "sim_ci95_low_s": round(r.ci95_s[0], 6),
                           "sim_ci95_high_s": round(r.ci95_s[1], 6), "sim_timeouts": round(r.mean_timeouts, 4),
                           "sim_fast_retransmits": round(r.mean_fast_retransmits, 4),
                           "csa_s": round(float(c), 6), "csa_error": round(float(c) / m - 1, 4),
                           "pftk_s": round(float(f), 6), "pftk_error": round(float(f) / m - 1, 4)}


def main(argv=None) -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000, help="simulated transfers per cell (10000)")
    ap.add_argument("--timers", action="store_true", help="also the timestamps and fixed-RTO timers")
    ap.add_argument("--out", default=str(here / "baselines_vs_sim.csv"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = list(rows(args.runs, list(TIMERS) if args.timers else ["karn"]))
    tmp = Path(args.out + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    os.replace(tmp, args.out)
    karn = [r for r in out if r["timer"] == "karn"]
    for model in ("csa", "pftk"):
        errs = [abs(r[f"{model}_error"]) for r in karn]
        print(f"{model}: within 20% on {sum(e <= 0.2 for e in errs)} of {len(errs)} cells, "
              f"within 10% on {sum(e <= 0.1 for e in errs)}")
    print(f"{len(out)} rows in {args.out} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
