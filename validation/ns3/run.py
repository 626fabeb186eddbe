#!/usr/bin/env python3
"""Driver for the ns-3 reference runs (validation/ns3/).  Not used by tests.

Runs build/ns3_reference (see ns3_reference.cc) over the sweeps described in
NOTES.md and writes CSVs to results/.  Each invocation of the binary runs a
batch of transfers and prints one flushed line per finished transfer; if the
binary dies (the Debian ns-3.37 build segfaults in TcpRateLinux::SkbSent in
rare cases, see NOTES.md), the run that was in progress is recorded as
"crash" and the batch resumes at the next run index.

Usage:
    python3 validation/ns3/run.py noloss
    python3 validation/ns3/run.py single
    python3 validation/ns3/run.py random --R 2000
    python3 validation/ns3/run.py all --R 2000
Only the standard library is used.  One simulator process at a time, under
`nice`.
"""
from __future__ import annotations

import argparse
import gzip
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "build", "ns3_reference")
RES = os.path.join(HERE, "results")

FIELDS = ["run", "completion_s", "k", "drops", "rto", "fr", "retx", "status"]


def run_batch(args: dict, run_start: int, run_count: int) -> tuple[list[dict], list[int]]:
    """Run runs [run_start, run_start+run_count); returns (rows, crashed_runs)."""
    rows: list[dict] = []
    crashed: list[int] = []
    nxt = run_start
    end = run_start + run_count
    while nxt < end:
        cmd = ["nice", "-n", "10", BIN] + [f"--{k}={v}" for k, v in args.items()]
        cmd += [f"--runStart={nxt}", f"--runCount={end - nxt}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        last = nxt - 1
        for line in proc.stdout.splitlines():
            parts = line.strip().split(",")
            if len(parts) != len(FIELDS):
                continue
            row = dict(zip(FIELDS, parts))
            row["run"] = int(row["run"])
            rows.append(row)
            last = row["run"]
        if proc.returncode == 0:
            if last != end - 1:
                raise RuntimeError(f"batch ended early without error: {cmd}")
            break
        # crashed while running run `last + 1`
        bad = last + 1
        crashed.append(bad)
        rows.append({"run": bad, "completion_s": "nan", "k": "", "drops": "", "rto": "",
                     "fr": "", "retx": "", "status": f"crash(rc={proc.returncode})"})
        nxt = bad + 1
    return rows, crashed


def do_noloss() -> None:
    out = os.path.join(RES, "noloss.csv")
    n_crash = 0
    with open(out, "w") as f:
        f.write("N,W0,b,lt,completion_s,retx,status\n")
        for lt in (0, 1):
            for b in (1, 2):
                for w0 in (1, 2, 3, 4):
                    for n in range(1, 61):
                        rows, cr = run_batch({"N": n, "W0": w0, "b": b, "lt": lt, "mode": "none"}, 0, 1)
                        n_crash += len(cr)
                        r = rows[0]
                        f.write(f"{n},{w0},{b},{lt},{r['completion_s']},{r['retx']},{r['status']}\n")
    print(f"wrote {out} (crashes: {n_crash})")


def do_single() -> None:
    out = os.path.join(RES, "single_loss.csv")
    n_crash = 0
    with open(out, "w") as f:
        f.write("N,W0,b,lt,i,completion_s,rto,fr,retx,repaired_by,status\n")
        for lt in (0, 1):
            for b in (1, 2):
                for w0 in (1, 2, 3, 4):
                    for n in range(1, 21):
                        rows, cr = run_batch({"N": n, "W0": w0, "b": b, "lt": lt,
                                              "mode": "scripted", "drop": -1}, 0, n)
                        n_crash += len(cr)
                        for r in sorted(rows, key=lambda x: x["run"]):
                            if r["status"] == "ok":
                                rto, fr = int(r["rto"]), int(r["fr"])
                                how = "rto" if rto and not fr else ("fr" if fr and not rto else
                                                                    ("fr+rto" if fr and rto else "none"))
                            else:
                                how = ""
                            f.write(f"{n},{w0},{b},{lt},{r['run']},{r['completion_s']},{r['rto']},"
                                    f"{r['fr']},{r['retx']},{how},{r['status']}\n")
    print(f"wrote {out} (crashes: {n_crash})")


def _mean_std(xs: list[float]) -> tuple[float, float]:
    if not xs:
        return float("nan"), float("nan")
    m = math.fsum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    v = math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(v)


def fmt(x: float) -> str:
    return "nan" if x != x else f"{x:.9f}"


def do_random(R: int, p: float = 0.1, w0: int = 2, n_max: int = 40) -> None:
    tag = f"p{p:g}"
    out = os.path.join(RES, f"random_{tag}.csv")
    raw = os.path.join(RES, f"random_{tag}_raw.csv.gz")
    total_crash = 0
    t0 = time.time()
    with open(out, "w") as f, gzip.open(raw, "wt", compresslevel=9) as g:
        f.write("N,W0,b,lt,p,R,n_ok,n_crash,n_timeout,mean_s,std_s,"
                "mean_k0_s,n_k0,mean_k1_s,n_k1,mean_k2_s,n_k2,mean_rto,mean_retx\n")
        g.write("N,b,lt,run,completion_s,k,drops,rto,fr,retx,status\n")
        for lt in (0, 1):
            for b in (1, 2):
                for n in range(1, n_max + 1):
                    rows, cr = run_batch({"N": n, "W0": w0, "b": b, "lt": lt, "mode": "random",
                                          "p": p, "seed": 1}, 0, R)
                    total_crash += len(cr)
                    rows.sort(key=lambda x: x["run"])
                    ok = [r for r in rows if r["status"] == "ok"]
                    n_to = sum(1 for r in rows if r["status"] == "timeout")
                    xs = [float(r["completion_s"]) for r in ok]
                    m, s = _mean_std(xs)
                    byk = {kk: [float(r["completion_s"]) for r in ok if int(r["k"]) == kk] for kk in (0, 1, 2)}
                    mk = {kk: _mean_std(v)[0] for kk, v in byk.items()}
                    mrto = math.fsum(int(r["rto"]) for r in ok) / max(1, len(ok))
                    mretx = math.fsum(int(r["retx"]) for r in ok) / max(1, len(ok))
                    f.write(f"{n},{w0},{b},{lt},{p:g},{R},{len(ok)},{len(cr)},{n_to},{fmt(m)},{fmt(s)},"
                            f"{fmt(mk[0])},{len(byk[0])},{fmt(mk[1])},{len(byk[1])},{fmt(mk[2])},{len(byk[2])},"
                            f"{mrto:.6f},{mretx:.6f}\n")
                    f.flush()
                    for r in rows:
                        g.write(f"{n},{b},{lt},{r['run']},{r['completion_s']},{r['k']},{r['drops']},"
                                f"{r['rto']},{r['fr']},{r['retx']},{r['status']}\n")
                    print(f"  N={n} b={b} lt={lt}: mean={fmt(m)} crashes={len(cr)} "
                          f"[{time.time() - t0:.0f}s]", flush=True)
    print(f"wrote {out} and {raw} (crashes: {total_crash})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["noloss", "single", "random", "all"])
    ap.add_argument("--R", type=int, default=2000, help="runs per cell for the random sweep")
    ap.add_argument("--p", type=float, default=0.1)
    a = ap.parse_args()
    if not os.path.exists(BIN):
        print(f"{BIN} missing: run validation/ns3/build.sh first", file=sys.stderr)
        return 1
    os.makedirs(RES, exist_ok=True)
    if a.what in ("noloss", "all"):
        do_noloss()
    if a.what in ("single", "all"):
        do_single()
    if a.what in ("random", "all"):
        do_random(a.R, a.p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
