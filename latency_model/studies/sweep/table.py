"""The output table of a sweep: cell text, CSV or Parquet written atomically, read back,
and the JSON sidecar's path and versions.

Every row written to a file ends with :data:`ROW_CHECK`, a CRC-32 of its other cells, so a
resumed sweep keeps a row only when it is whole (:func:`read_checked`): a line cut short by
a crash or a full disk, one with fields added or a value edited by hand fails the check and
is recomputed. The check reads each cell as a number where it is one (``1`` and ``1.0``
alike), so a Parquet file (which stores numbers, not text) checks the same.
"""

from __future__ import annotations

import csv
import io
import sys
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..export import atomic_path, atomic_write_text

__all__ = ["require_pyarrow", "write_rows", "read_rows", "read_checked", "row_check", "cell_value", "sidecar_path",
           "versions", "check_table_name", "ROW_CHECK"]

ROW_CHECK = "row_crc32"
"""Last column of a sweep file: CRC-32 (8 hex digits) of the row's other cells (:func:`row_check`)."""


def _fmt(v) -> str:
    """Table cell text: exact (repr) for floats, empty for None."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def _is_parquet(path) -> bool:
    return str(path).lower().endswith(".parquet")


_NOT_TABLES = (".json", ".jsonl", ".tsv", ".xlsx", ".xls", ".ods", ".png", ".svg", ".pdf", ".toml", ".yaml", ".yml",
               ".gz", ".bz2", ".xz", ".zst", ".zip", ".feather", ".arrow", ".h5", ".hdf5", ".pkl", ".pickle", ".npy",
               ".npz", ".lock")


def check_table_name(path) -> None:
    """Refuse (ValueError naming ``out``) a file name whose suffix promises a format a sweep
    does not write (``s.json`` would hold CSV): a table is CSV (``.csv`` or no suffix) or
    Parquet (``.parquet``); JSON goes to stdout (``--json``, or :meth:`SweepReport.to_dict`)."""
    suffix = Path(str(path)).suffix.lower()
    if suffix in _NOT_TABLES:
        raise ValueError(f"out {Path(str(path)).name} names a {suffix[1:]} file, and a sweep table is written as "
                         f"CSV (.csv) or Parquet (.parquet; its sidecar is <out>.json); give one of those"
                         + (" (--json prints the table as JSON)" if suffix in (".json", ".jsonl") else ""))


def require_pyarrow(path) -> None:
    """Raise ValueError (one line) when ``path`` is .parquet and pyarrow is missing."""
    if _is_parquet(path):
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise ValueError(f"writing {Path(path).name} needs pyarrow (pip install pyarrow), "
                             "or give a .csv file name") from None


def cell_value(text: str):
    """A cell's value: None when empty, a bool, int or float where the text is one, else the text."""
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _canonical(text: str) -> str:
    """A cell as the check reads it: numbers as ``repr(float)``, anything else as written."""
    if text in ("", "true", "false"):
        return text
    try:
        return repr(float(text))
    except ValueError:
        return text


def row_check(row: dict, columns) -> str:
    """:data:`ROW_CHECK` of ``row`` (cell text by column): CRC-32 of its cells in the order of
    ``columns`` (all but the check), numbers read as numbers; 8 hex digits."""
    text = "\x1f".join(_canonical(row.get(c) or "") for c in columns if c != ROW_CHECK)
    return f"{zlib.crc32(text.encode('utf-8')):08x}"


def write_rows(path, rows: list[dict], columns) -> Path:
    """Write table rows (cell text) to ``path`` atomically: CSV, or Parquet for ``.parquet``,
    each row ending with its :data:`ROW_CHECK` (added to ``columns`` when missing; a row
    that holds its check already is written with it)."""
    path = Path(path)
    columns = list(columns)
    if columns[-1:] != [ROW_CHECK]:
        columns.append(ROW_CHECK)
    rows = [r if r.get(ROW_CHECK) else {**r, ROW_CHECK: row_check(r, columns)} for r in rows]  # computed once
    if not _is_parquet(path):
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return atomic_write_text(path, buf.getvalue())
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = {}
    for c in columns:
        vals = [cell_value(r.get(c, "")) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if kinds == {int, float}:
            vals = [None if v is None else float(v) for v in vals]
        elif len(kinds) > 1:
            vals = [r.get(c, "") for r in rows]
        data[c] = vals
    table = pa.table(data)
    with atomic_path(path) as tmp:
        pq.write_table(table, str(tmp))
    return path


def read_rows(path) -> tuple[list[str], list[dict]]:
    """Columns and rows (cell text) of a sweep table written by :func:`write_rows`."""
    path = Path(path)
    if not _is_parquet(path):
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            return list(reader.fieldnames or []), rows
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    cols = table.column_names
    data = table.to_pydict()
    rows = [{c: _fmt(data[c][i]) for c in cols} for i in range(table.num_rows)]
    return cols, rows


def read_checked(path, columns) -> tuple[list[dict], list[str]]:
    """The whole rows of a sweep file written with ``columns`` (and :data:`ROW_CHECK`), and
    a description of each damaged one (``line 12: cut short (5 of 38 fields)``).

    A CSV is read line by line, so a damaged line (cut short by a crash or a full disk,
    with fields added, or edited) costs that row only; a file holding only the start of
    the header (cut before any row) has no rows. Rows come back with their (verified) check.

    Raises
    ------
    ValueError
        When the file has other columns (another sweep's, or not a sweep table), or a
        Parquet file cannot be read.
    OSError
        When the file cannot be read.
    """
    path = Path(path)
    want = [*columns, ROW_CHECK]
    damaged, found = [], []
    if _is_parquet(path):
        cols, rows = read_rows(path)
        if cols != want:
            raise ValueError(f"{path} has other columns than this sweep")
        numbered = [(i + 1, r) for i, r in enumerate(rows)]
        where = "row"
    else:
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
        lines = text.split("\n")
        header_text = ",".join(want)
        if len(lines) == 1 and header_text.startswith(lines[0]):  # cut inside the header: no row yet
            return [], [f"line 1: the header cut short ({len(lines[0])} of {len(header_text)} characters)"]
        header = next(csv.reader([lines[0]]), [])
        if header != want:
            raise ValueError(f"{path} has other columns than this sweep")
        numbered = []
        for n, line in enumerate(lines[1:], start=2):
            if line == "" and n == len(lines):  # after the last newline
                continue
            cells = next(csv.reader([line]), [])
            if len(cells) != len(want):
                end = "" if n < len(lines) else ", no line end"
                damaged.append(f"line {n}: {'cut short' if len(cells) < len(want) else 'too many fields'} "
                               f"({len(cells)} of {len(want)} fields{end})")
                continue
            numbered.append((n, dict(zip(want, cells))))
        where = "line"
    for n, row in numbered:
        if row.get(ROW_CHECK) != row_check(row, want):
            damaged.append(f"{where} {n}: its cells do not match its {ROW_CHECK}")
            continue
        found.append({c: row[c] for c in want})
    return found, damaged


def sidecar_path(out) -> Path:
    """The JSON sidecar of an output file: ``<out>.json``."""
    return Path(str(out) + ".json")


@lru_cache(maxsize=1)
def _versions() -> tuple:
    from importlib.metadata import PackageNotFoundError, version

    out = [("python", sys.version.split()[0])]
    for name in ("latency_model", "numpy", "scipy", "mpmath", "tqdm", "dask", "distributed", "pyarrow", "numba"):
        try:
            out.append((name, version(name)))
        except PackageNotFoundError:
            pass
    return tuple(out)


def versions() -> dict:
    """Versions of Python, this package and its (optional) dependencies in use (looked up
    once per process: each look-up reads the installed packages' metadata)."""
    return dict(_versions())

