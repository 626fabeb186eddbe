"""Compare a stack profile of the simulator with the committed ns-3.37 results.

    python validation/ns3/compare.py deterministic --stack ns3
    python validation/ns3/compare.py random --stack ns3 --runs 10000 [--cells b,lt ...]

``deterministic``: every no-loss cell (results/noloss.csv) and every single-loss cell
(results/single_loss.csv): how many completion times differ by more than 1 ms, the worst
difference, and how many cells are repaired differently (timeout against fast retransmit).
``random``: per cell of results/random_p0.1.csv, the simulated mean and the means given
k = 1 and k = 2 first-transmission losses against ns-3's, PASS when within 3 combined
standard errors + 2% of ns-3's mean (for the conditional means ns-3's standard error is
taken as ours scaled by the square root of the run counts: its per-k deviations are not
in the summary). Prints one line per cell and a summary; exit status 1 on any FAIL.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import numpy as np

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_transfer
from latency_model.sim.runner import OUT_FIELDS, run_many

RESULTS = Path(__file__).resolve().parent / "results"
MS = 1e-3


def _params(row, p=0.0):
    return TcpParams(w0=int(row["W0"]), b=int(row["b"]), p=p, dup_lt=2 if row["lt"] == "1" else None)


def _rows(name):
    with open(RESULTS / name, newline="") as f:
        return list(csv.DictReader(f))


def deterministic(cfg) -> int:
    worst, bad = 0.0, 0
    for r in _rows("noloss.csv"):
        d = abs(run_transfer(_params(r), size_packets=int(r["N"]), config=cfg).completion_s - float(r["completion_s"]))
        worst, bad = max(worst, d), bad + (d > MS)
    print(f"no loss: {bad} of 960 cells differ by more than 1 ms; worst {worst * 1e3:.4f} ms")
    worst, bad, repair = 0.0, 0, 0
    rows = _rows("single_loss.csv")
    for r in rows:
        res = run_transfer(_params(r), size_packets=int(r["N"]), config=cfg, drops=[int(r["i"])])
        d = abs(res.completion_s - float(r["completion_s"]))
        worst, bad = max(worst, d), bad + (d > MS)
        repair += (res.timeouts > 0) != (r["repaired_by"] == "rto")
    print(f"single loss: {bad} of {len(rows)} cells differ by more than 1 ms; worst {worst * 1e3:.4f} ms; "
          f"{repair} repaired differently")
    return 0


def random(cfg, runs: int, cells) -> int:
    ic, ik = OUT_FIELDS.index("completion_s"), OUT_FIELDS.index("first_transmissions_lost")
    fails = checks = 0
    rel = []
    for r in _rows("random_p0.1.csv"):
        if cells and f"{r['b']},{r['lt']}" not in cells:
            continue
        n = int(r["N"])
        ss = np.random.SeedSequence([12345, n, int(r["b"]), int(r["lt"])])
        out = run_many(_params(r, p=float(r["p"])), n * 500, ss.spawn(runs), cfg)
        t, k = out[:, ic], out[:, ik]
        line = [f"b={r['b']} lt={r['lt']} N={n:2d}"]
        for label, mask, mcol, ncol in (("all", np.ones(len(t), bool), "mean_s", "n_ok"),
                                        ("k=1", k == 1, "mean_k1_s", "n_k1"), ("k=2", k == 2, "mean_k2_s", "n_k2")):
            x, n_ref, m_ref = t[mask], int(r[ncol]), float(r[mcol])
            if len(x) < 30 or n_ref < 30 or math.isnan(m_ref):
                continue
            se = x.std(ddof=1) / math.sqrt(len(x))
            se_ref = float(r["std_s"]) / math.sqrt(n_ref) if mcol == "mean_s" else se * math.sqrt(len(x) / n_ref)
            ok = abs(x.mean() - m_ref) <= 3 * math.hypot(se, se_ref) + 0.02 * m_ref
            fails += not ok
            checks += 1
            rel.append((x.mean() - m_ref) / m_ref)
            line.append(f"{label} {x.mean():.4f}/{m_ref:.4f} ({rel[-1] * 100:+.1f}%){'' if ok else ' FAIL'}")
        print("  ".join(line), flush=True)
    rel = np.array(rel)
    print(f"{fails} of {checks} means outside 3 combined SE + 2%; mean relative difference "
          f"{rel.mean() * 100:+.2f}%, median |difference| {np.median(np.abs(rel)) * 100:.2f}%, "
          f"max |difference| {np.abs(rel).max() * 100:.1f}%")
    return 1 if fails else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("deterministic", "random"))
    ap.add_argument("--stack", default="ns3")
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--cells", nargs="*", default=None, help="b,lt pairs, e.g. 1,0 2,1 (default all)")
    ap.add_argument("--quick-acks", type=int, default=None, help="override the profile's quick ACKs")
    ap.add_argument("--header-bytes", type=int, default=None, help="override the profile's header size")
    a = ap.parse_args(argv)
    over = {k: v for k, v in (("quick_acks", a.quick_acks), ("header_bytes", a.header_bytes)) if v is not None}
    cfg = SimConfig.profile(a.stack, **over)
    print(f"stack {a.stack} {over or ''}")
    return deterministic(cfg) if a.what == "deterministic" else random(cfg, a.runs, a.cells)


if __name__ == "__main__":
    sys.exit(main())
