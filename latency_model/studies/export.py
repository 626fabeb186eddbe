"""Data export: CSV and JSON written atomically (temp file in the same folder, then rename).

A reader never sees a half-written file, and an interrupted run leaves the previous
version (or nothing) in place. The file gets the mode a plain ``open(path, "w")`` would
give it: an existing file keeps its mode, a new one gets 0666 less the umask (0644 under
the usual umask 022), not the temp file's 0600.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import stat
import tempfile
import threading
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_path", "write_csv", "write_json", "file_mode",
           "undo_folders", "undo_files", "missing_folders", "record_created"]

_UMASK_LOCK = threading.Lock()
_RECORDERS: list = []  # lists of the files created by atomic writes inside undo_files blocks


def _umask() -> int:
    """The process's umask (read without changing it where the system allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:  # elsewhere: set and restore (the only way POSIX offers)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode(path) -> int:
    """The permission bits a plain write of ``path`` would leave: the existing file's,
    else ``0o666 & ~umask``."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def missing_folders(folder) -> list:
    """The folders on the way to ``folder`` (itself included) that do not exist, deepest first."""
    missing = []
    probe = Path(os.path.abspath(folder))
    while not os.path.lexists(probe) and probe.parent != probe:  # (False, never an error, on a bad name)
        missing.append(probe)
        probe = probe.parent
    return missing


@contextlib.contextmanager
def undo_folders(folder):
    """On an exception in the block, remove the folders on the way to ``folder`` (itself
    included) that did not exist on entering and are empty on leaving, deepest first: a
    failed command leaves no half-made folders. Nothing is created here."""
    missing = missing_folders(folder)
    try:
        yield
    except BaseException:
        for d in missing:  # deepest first; a folder holding anything stays, and so do its parents
            try:
                d.rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                break
        raise


@contextlib.contextmanager
def undo_files(keep=None):
    """On an exception in the block, remove the files that atomic writes inside it created
    (files that did not exist before; a file replaced stays replaced), except those for
    which ``keep(path)`` is true, and then their folders left empty: a failed command
    leaves no partial set of outputs. Yields the list of files created so far."""
    made: list = []
    _RECORDERS.append(made)
    try:
        yield made
    except BaseException:
        for path in reversed(made):
            if keep is not None and keep(path):
                continue
            with contextlib.suppress(OSError):
                os.unlink(path)
            with contextlib.suppress(OSError):
                os.rmdir(path.parent)  # only when left empty
        raise
    finally:
        _RECORDERS.remove(made)


def record_created(paths) -> None:
    """Count ``paths`` (files another process created for this command) as created inside the
    open :func:`undo_files` blocks."""
    for made in _RECORDERS:
        made.extend(Path(p) for p in paths)


def _with_path(exc: OSError, path, tmp=None) -> OSError:
    """``exc`` naming ``path`` when it names no file or the temp file ``tmp`` (a failed write
    or fsync names none: ``No space left on device`` alone would not say where)."""
    if exc.filename in (None, None if tmp is None else str(tmp)) and exc.errno is not None:
        return OSError(exc.errno, exc.strerror or str(exc), str(path))
    return exc


@contextlib.contextmanager
def atomic_path(path):
    """A temp path beside ``path`` to write to; on success it replaces ``path`` with the
    mode of :func:`file_mode`, on failure it is removed, and so are the parent folders it
    created; an OSError names ``path`` (a full disk's ``No space left on device`` says
    where).

    Yields
    ------
    Path
        The temp file (already created, empty).
    """
    path = Path(path)
    with undo_folders(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)  # its error names the folder
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:  # named after the file asked for, not the temp file's random name
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        os.close(fd)
        try:
            yield Path(tmp)
            os.chmod(tmp, file_mode(path))
            new = not os.path.lexists(path)
            os.replace(tmp, path)
            if new:
                for made in _RECORDERS:
                    made.append(path)
        except BaseException as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise _with_path(exc, path, tmp) from None
            raise


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; create parent folders (mode: :func:`file_mode`).

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
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
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


def json_safe(obj):
    """``obj`` with every non-finite float (NaN: no value, e.g. an extrapolated size's
    L_k; infinity) replaced by None, in dicts, lists and tuples, so that its JSON is
    strict: RFC 8259 has no NaN, and ``json.dumps`` would write one that JavaScript's,
    jq's and most other parsers reject."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def json_text(obj, **kwargs) -> str:
    """``obj`` as strict JSON (:func:`json_safe`; ``kwargs`` to ``json.dumps``): what every
    ``--json`` output and :func:`write_json` file holds."""
    return json.dumps(json_safe(obj), allow_nan=False, **kwargs)


def write_json(path, obj) -> Path:
    """Write ``obj`` as indented strict JSON (:func:`json_text`), atomically."""
    return atomic_write_text(path, json_text(obj, indent=2, sort_keys=False) + "\n")


def read_typed_csv(path, required, floats=(), ints=()) -> list[dict]:
    """Rows of a CSV written by this package, the ``floats`` and ``ints`` columns parsed
    (empty cells as ``None``).

    Raises
    ------
    ValueError
        If a column of ``required`` is missing, there is no row, or a cell does not parse
        (naming the file, the line, the column and the value, cut to 40 characters).
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"csv must have the columns {', '.join(required)}; {path} lacks {', '.join(missing)}")
        rows = []
        for raw in reader:
            row = dict(raw)
            for conv, columns in ((float, floats), (int, ints)):
                for column in columns:
                    text = raw[column]
                    if text in ("", None):
                        row[column] = None
                        continue
                    try:
                        row[column] = conv(text)
                    except ValueError:
                        shown = text if len(text) <= 40 else text[:40] + "..."
                        kind = "an integer" if conv is int else "a number"
                        raise ValueError(f"{path}, line {reader.line_num}, column {column}: "
                                         f"{shown!r} is not {kind}") from None
            rows.append(row)
    if not rows:
        raise ValueError(f"csv must have at least one row, {path} has none")
    return rows
