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
    python3 validation/ns3/run.py random            # R = 10000; resumes cell by cell
    python3 validation/ns3/run.py all
    python3 validation/ns3/run.py check             # summary lines == raw file?
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
import zlib

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
        # The process died while running run `last + 1` (every finished run prints a
        # flushed line).  Only the known segfault is accepted; anything else stops
        # the driver, which can be restarted and resumes.
        if proc.returncode != -11:
            raise RuntimeError(f"rc={proc.returncode} (not SIGSEGV): {cmd}\n{proc.stderr[-2000:]}")
        bad = last + 1
        # Confirm on its own: runs are deterministic and independent, so run `bad`
        # alone must die the same way without printing a line.
        one = ["nice", "-n", "10", BIN] + [f"--{k}={v}" for k, v in args.items()]
        one += [f"--runStart={bad}", "--runCount=1"]
        chk = subprocess.run(one, capture_output=True, text=True)
        if chk.returncode != -11 or chk.stdout.strip():
            raise RuntimeError(f"run {bad} did not crash again on its own "
                               f"(rc={chk.returncode}, out={chk.stdout.strip()!r}): {one}")
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


RANDOM_HDR = ("N,W0,b,lt,p,R,n_ok,n_crash,n_timeout,mean_s,std_s,"
              "mean_k0_s,n_k0,mean_k1_s,n_k1,mean_k2_s,n_k2,mean_rto,mean_retx\n")
RAW_HDR = "N,b,lt,run,completion_s,k,drops,rto,fr,retx,status\n"
RAW_FIELDS = RAW_HDR.strip().split(",")


def read_gz_tolerant(path: str) -> tuple[list[str], bool]:
    """Every complete line of a possibly truncated gzip file, and whether it was intact.

    Decompresses with zlib as far as the data goes (all members), drops a trailing
    partial line.  A file that ends in the middle of a member is reported as not
    intact instead of raising."""
    with open(path, "rb") as fh:
        data = fh.read()
    out: list[bytes] = []
    intact = True
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(d.decompress(data))
        if not d.eof:
            out.append(d.flush())
            intact = False
            break
        data = d.unused_data
    text = b"".join(out).decode()
    lines = text.split("\n")
    if lines[-1] != "":
        intact = False   # trailing partial line (or missing final newline)
    return [ln + "\n" for ln in lines[:-1]], intact


def _atomic_write(path: str, write) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_gz_atomic(path: str, lines: list[str]) -> None:
    """Rewrite `path` as one valid gzip member holding `lines` (temp file + rename)."""
    def w(fh):
        with gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9, mtime=0) as g:
            g.write("".join(lines).encode())
    _atomic_write(path, w)


def append_gz_atomic(path: str, lines: list[str]) -> None:
    """Append `lines` to the gzip file `path` as a new gzip member.

    The old bytes are copied to a temp file, the member is added, and the temp file
    replaces `path`, so `path` is always either the old or the new complete file."""
    with open(path, "rb") as fh:
        old = fh.read()

    def w(fh):
        fh.write(old)
        with gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9, mtime=0) as g:
            g.write("".join(lines).encode())
    _atomic_write(path, w)


def summary_row(n: int, w0: int, b: int, lt: int, p: float, R: int, rows: list[dict]) -> str:
    """One line of random_<p>.csv from the R rows of a cell.  Crashed and timed-out
    runs are counted (n_crash, n_timeout) and left out of every mean."""
    runs = sorted(r["run"] for r in rows)
    if runs != list(range(R)):
        raise RuntimeError(f"cell N={n} b={b} lt={lt}: runs are not exactly 0..{R - 1}")
    ok = [r for r in rows if r["status"] == "ok"]
    n_crash = sum(1 for r in rows if r["status"].startswith("crash"))
    n_to = sum(1 for r in rows if r["status"] == "timeout")
    if len(ok) + n_crash + n_to != R:
        raise RuntimeError(f"cell N={n} b={b} lt={lt}: unknown status")
    xs = [float(r["completion_s"]) for r in ok]
    m, s = _mean_std(xs)
    byk = {kk: [float(r["completion_s"]) for r in ok if int(r["k"]) == kk] for kk in (0, 1, 2)}
    mk = {kk: _mean_std(v)[0] for kk, v in byk.items()}
    mrto = math.fsum(int(r["rto"]) for r in ok) / max(1, len(ok))
    mretx = math.fsum(int(r["retx"]) for r in ok) / max(1, len(ok))
    return (f"{n},{w0},{b},{lt},{p:g},{R},{len(ok)},{n_crash},{n_to},{fmt(m)},{fmt(s)},"
            f"{fmt(mk[0])},{len(byk[0])},{fmt(mk[1])},{len(byk[1])},{fmt(mk[2])},{len(byk[2])},"
            f"{mrto:.6f},{mretx:.6f}\n")


def raw_line(n: int, b: int, lt: int, r: dict) -> str:
    return (f"{n},{b},{lt},{r['run']},{r['completion_s']},{r['k']},{r['drops']},"
            f"{r['rto']},{r['fr']},{r['retx']},{r['status']}\n")


def do_random(R: int, p: float = 0.1, w0: int = 2, n_max: int = 40) -> None:
    """The random-loss sweep, resumable cell by cell.

    A cell (N, b, lt) is done when it has a line in random_<p>.csv and all R runs in
    the raw file.  On start the raw file is read tolerantly (a truncated gzip keeps its
    complete lines and is rewritten as a valid file).  For each cell in sweep order:
    runs missing from the raw file are run (same per-run seeding, so the results do
    not depend on how the sweep was split), their lines are appended to the raw file
    as one gzip member (temp file + rename), and then the summary line is written
    (temp file + rename).  A summary line that already exists is kept, after checking
    that the raw runs reproduce it exactly."""
    tag = f"p{p:g}"
    out = os.path.join(RES, f"random_{tag}.csv")
    raw = os.path.join(RES, f"random_{tag}_raw.csv.gz")
    t0 = time.time()

    summary: dict[tuple[int, int, int], str] = {}
    if os.path.exists(out):
        with open(out) as fh:
            lines = fh.readlines()
        if lines and lines[0] != RANDOM_HDR:
            raise RuntimeError(f"{out}: unexpected header")
        for ln in lines[1:]:
            if not ln.endswith("\n"):
                continue    # partial last line: the cell is redone
            f = ln.split(",")
            if int(f[1]) != w0 or float(f[4]) != p or int(f[5]) != R:
                raise RuntimeError(f"{out}: line {ln.strip()} is not W0={w0} p={p:g} R={R}")
            summary[(int(f[0]), int(f[2]), int(f[3]))] = ln

    cells_raw: dict[tuple[int, int, int], dict[int, dict]] = {}
    if os.path.exists(raw):
        lines, intact = read_gz_tolerant(raw)
        if not lines or lines[0] != RAW_HDR:
            raise RuntimeError(f"{raw}: unexpected header")
        for ln in lines[1:]:
            f = ln.rstrip("\n").split(",")
            if len(f) != len(RAW_FIELDS):
                raise RuntimeError(f"{raw}: bad line {ln!r}")
            key = (int(f[0]), int(f[1]), int(f[2]))
            row = dict(zip(FIELDS, f[3:]))
            row["run"] = int(row["run"])
            cells_raw.setdefault(key, {})[row["run"]] = row
        if not intact:
            write_gz_atomic(raw, lines)
            print(f"repaired {raw}: kept {len(lines) - 1} complete lines", flush=True)
    else:
        write_gz_atomic(raw, [RAW_HDR])

    def write_summary() -> None:
        order = [(n, b, lt) for lt in (0, 1) for b in (1, 2) for n in range(1, n_max + 1)]
        text = RANDOM_HDR + "".join(summary[c] for c in order if c in summary)
        _atomic_write(out, lambda fh: fh.write(text.encode()))

    total_crash = 0
    added = []
    for lt in (0, 1):
        for b in (1, 2):
            for n in range(1, n_max + 1):
                key = (n, b, lt)
                have = cells_raw.setdefault(key, {})
                missing = [r for r in range(R) if r not in have]
                if not missing and key in summary:
                    continue
                new_rows: list[dict] = []
                i = 0
                while i < len(missing):   # contiguous stretches of missing run indices
                    j = i
                    while j + 1 < len(missing) and missing[j + 1] == missing[j] + 1:
                        j += 1
                    rows, _ = run_batch({"N": n, "W0": w0, "b": b, "lt": lt, "mode": "random",
                                         "p": p, "seed": 1}, missing[i], j - i + 1)
                    new_rows += rows
                    i = j + 1
                new_rows.sort(key=lambda x: x["run"])
                for r in new_rows:
                    have[r["run"]] = r
                line = summary_row(n, w0, b, lt, p, R, list(have.values()))
                if key in summary and summary[key] != line:
                    raise RuntimeError(f"cell N={n} b={b} lt={lt}: the raw runs give\n{line}"
                                       f"but {out} has\n{summary[key]}")
                if new_rows:
                    append_gz_atomic(raw, [raw_line(n, b, lt, r) for r in new_rows])
                if key not in summary:
                    summary[key] = line
                    write_summary()
                    added.append(key)
                nc = sum(1 for r in new_rows if r["status"].startswith("crash"))
                total_crash += nc
                print(f"  N={n} b={b} lt={lt}: ran {len(new_rows)} runs, crashes={nc}, "
                      f"summary: {line.strip()} [{time.time() - t0:.0f}s]", flush=True)
    # every cell must now be complete in both files
    for lt in (0, 1):
        for b in (1, 2):
            for n in range(1, n_max + 1):
                assert (n, b, lt) in summary and len(cells_raw[(n, b, lt)]) == R
    print(f"{out}: {len(added)} cells added, {total_crash} crashes in the new runs, "
          f"{time.time() - t0:.0f} s", flush=True)


def do_check_random(R: int, p: float = 0.1, w0: int = 2) -> int:
    """Recompute every summary line of random_<p>.csv from the raw file; report mismatches."""
    tag = f"p{p:g}"
    out = os.path.join(RES, f"random_{tag}.csv")
    raw = os.path.join(RES, f"random_{tag}_raw.csv.gz")
    lines, intact = read_gz_tolerant(raw)
    cells: dict[tuple[int, int, int], list[dict]] = {}
    for ln in lines[1:]:
        f = ln.rstrip("\n").split(",")
        row = dict(zip(FIELDS, f[3:]))
        row["run"] = int(row["run"])
        cells.setdefault((int(f[0]), int(f[1]), int(f[2])), []).append(row)
    bad = 0
    with open(out) as fh:
        summ = fh.readlines()[1:]
    for ln in summ:
        f = ln.split(",")
        key = (int(f[0]), int(f[2]), int(f[3]))
        rows = cells.get(key, [])
        try:
            mine = summary_row(key[0], w0, key[1], key[2], p, R, rows)
        except RuntimeError as e:
            print(f"N={key[0]} b={key[1]} lt={key[2]}: {e} ({len(rows)} raw rows)")
            bad += 1
            continue
        if mine != ln:
            print(f"N={key[0]} b={key[1]} lt={key[2]}: mismatch\n  csv {ln.strip()}\n  raw {mine.strip()}")
            bad += 1
    extra = set(cells) - {(int(l.split(",")[0]), int(l.split(",")[2]), int(l.split(",")[3])) for l in summ}
    print(f"raw intact={intact}, {len(lines) - 1} raw lines, {len(summ)} summary lines, "
          f"{bad} bad, raw-only cells: {sorted(extra)}")
    return 1 if bad or not intact else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["noloss", "single", "random", "all", "check"])
    ap.add_argument("--R", type=int, default=10000, help="runs per cell for the random sweep")
    ap.add_argument("--p", type=float, default=0.1)
    a = ap.parse_args()
    if a.what == "check":
        return do_check_random(a.R, a.p)
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
