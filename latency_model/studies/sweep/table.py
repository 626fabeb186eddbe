"""The output table of a sweep: cell text, CSV or Parquet written atomically, read back,
and the JSON sidecar's path and versions.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np

from ..export import atomic_path, atomic_write_text

__all__ = ["require_pyarrow", "write_rows", "read_rows", "sidecar_path", "versions"]


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


def require_pyarrow(path) -> None:
    """Raise ValueError (one line) when ``path`` is .parquet and pyarrow is missing."""
    if _is_parquet(path):
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise ValueError(f"writing {Path(path).name} needs pyarrow (pip install pyarrow), "
                             "or give a .csv file name") from None


def _parquet_value(text: str):
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


def write_rows(path, rows: list[dict], columns) -> Path:
    """Write table rows (cell text) to ``path`` atomically: CSV, or Parquet for ``.parquet``."""
    path = Path(path)
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
        vals = [_parquet_value(r.get(c, "")) for r in rows]
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


def sidecar_path(out) -> Path:
    """The JSON sidecar of an output file: ``<out>.json``."""
    return Path(str(out) + ".json")


def versions() -> dict:
    """Versions of Python, this package and its (optional) dependencies in use."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for name in ("latency_model", "numpy", "scipy", "mpmath", "tqdm", "dask", "distributed", "pyarrow", "numba"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out

