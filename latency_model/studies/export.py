"""Data export: CSV and JSON written atomically (temp file in the same folder, then rename).

A reader never sees a half-written file, and an interrupted run leaves the previous
version (or nothing) in place.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text", "write_csv", "write_json"]


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; create parent folders.

    Parameters
    ----------
    path : str or Path
        Destination file.
    data : bytes
        Full content.

    Returns
    -------
    Path
        The destination path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8, no newline translation); see
    :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def write_csv(path, rows: list[dict], columns: list[str]) -> Path:
    """Write ``rows`` (dicts) as CSV with a header of ``columns``, atomically."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return atomic_write_text(path, buf.getvalue())


def write_json(path, obj) -> Path:
    """Write ``obj`` as indented JSON, atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")
