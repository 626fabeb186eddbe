"""Cost of the per-row check of a sweep file: writing rows with their ``row_crc32`` and
reading them back verified (a resume), against the plain CSV write and read. A running
sweep computes a row's check once, when the row is computed; its saves write the rows as
they are (the "save" figure).

The rows are those of a real model sweep (one row per point, 39 columns), repeated to
``--rows`` rows with distinct keys. Prints seconds and microseconds per row.

Usage::

    python benchmarks/bench_sweep_resume.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import csv
import io
import tempfile
import time
from pathlib import Path

from latency_model.studies.sweep import SweepSpec, run_sweep
from latency_model.studies.sweep.table import ROW_CHECK, read_checked, row_check, write_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000, help="rows of the table (100000)")
    args = ap.parse_args()
    rep = run_sweep(SweepSpec({"p": [0.02], "size_packets": range(1, 11)}))
    cols = list(rep.columns)
    rows = [{**rep.rows[i % len(rep.rows)], "key": f"{i:020x}"} for i in range(args.rows)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t.csv"
        t0 = time.perf_counter()
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        (Path(tmp) / "plain.csv").write_text(buf.getvalue())
        t_plain_write = time.perf_counter() - t0
        t0 = time.perf_counter()
        write_rows(out, rows, cols)
        t_write = time.perf_counter() - t0
        held = [{**r, ROW_CHECK: row_check(r, [*cols, ROW_CHECK])} for r in rows]  # as a running sweep holds them
        t0 = time.perf_counter()
        write_rows(out, held, cols)
        t_save = time.perf_counter() - t0
        t0 = time.perf_counter()
        with open(Path(tmp) / "plain.csv", newline="") as fh:
            plain = list(csv.DictReader(fh))
        t_plain_read = time.perf_counter() - t0
        t0 = time.perf_counter()
        kept, damaged = read_checked(out, cols)
        t_read = time.perf_counter() - t0
        assert len(kept) == len(plain) == args.rows and not damaged
        t0 = time.perf_counter()
        for r in rows[:10_000]:
            row_check(r, cols)
        t_crc = (time.perf_counter() - t0) / min(10_000, args.rows)
    n = args.rows
    print(f"{n:,} rows x {len(cols)} columns")
    print(f"write: plain CSV {t_plain_write:.2f} s, with row_crc32 (atomic, fsync) {t_write:.2f} s "
          f"({t_write / n * 1e6:.1f} us/row); a save of rows holding their check {t_save:.2f} s")
    print(f"read:  plain CSV {t_plain_read:.2f} s, verified {t_read:.2f} s ({t_read / n * 1e6:.1f} us/row)")
    print(f"row_check alone: {t_crc * 1e6:.1f} us/row")


if __name__ == "__main__":
    main()
