"""Results cache of the reproduction: one JSON file per computed piece, checked when read.

A piece (a model curve, one simulated size) is stored under a key that hashes
everything it depends on: its parameters, seed and runs, the package version and
the source code of the modules that compute it. A rerun with unchanged code and
parameters reads the file instead of computing; any change makes a new key.
Files are written atomically, so an interrupted run never leaves a corrupt entry.

An entry is used only when it is whole (:func:`load`): valid JSON of the entry's form, its
own key, this package version, a SHA-256 of its key, spec and value that matches, and a
value of the shape its kind has (:data:`SHAPES`: a model curve's lists as long as its
sizes, a simulated summary of its size and runs ...). Anything else (a file cut short,
``[1, 2, 3]``, ``{"value": []}``, a value edited by hand) is reported with a
:class:`DamagedCacheEntry` warning naming the file and what is wrong, and read as absent,
so the caller recomputes and overwrites it.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from functools import lru_cache
from pathlib import Path

from .. import __version__
from .export import atomic_write_text

__all__ = ["cache_key", "load", "store", "source_hash", "DamagedCacheEntry", "SHAPES", "FORMAT"]

_PKG = Path(__file__).resolve().parent.parent  # the latency_model package

FORMAT = 2
"""Form of an entry: ``{"format", "key", "version", "spec", "value", "sha256"}``."""


class DamagedCacheEntry(UserWarning):
    """A cache entry that was present but not whole: it is recomputed (the message names
    the file and what is wrong)."""


@lru_cache(maxsize=None)
def source_hash(*parts: str) -> str:
    """SHA-256 of the package sources under the given module paths (files or folders).

    Parameters
    ----------
    parts : str
        Paths relative to the package folder, e.g. ``"sim"``, ``"model/recursion.py"``.

    Returns
    -------
    str
        Hex digest; changes whenever one of those files changes.
    """
    h = hashlib.sha256()
    for part in sorted(parts):
        path = _PKG / part
        if not path.exists():
            raise ValueError(f"parts must name files or folders of the package, got {part!r}")
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            h.update(str(f.relative_to(_PKG)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def cache_key(kind: str, spec: dict, code: str) -> str:
    """Key of one piece: ``kind`` plus a hash of ``spec``, ``code`` and the package version.

    Parameters
    ----------
    kind : str
        Short label, used as the file-name prefix (``"model"``, ``"sim"``) and to pick the
        value's shape (:data:`SHAPES`).
    spec : dict
        JSON-serialisable description: parameters, sizes, seed, runs.
    code : str
        Hash of the code that computes the piece (:func:`source_hash`).
    """
    if not kind.isidentifier():
        raise ValueError(f"kind must be an identifier, got {kind!r}")
    blob = json.dumps({"spec": spec, "code": code, "version": __version__}, sort_keys=True)
    return f"{kind}-{hashlib.sha256(blob.encode()).hexdigest()[:24]}"


def _digest(key: str, spec, value) -> str:
    """SHA-256 of an entry's key, spec and value (canonical JSON: sorted keys, no spaces)."""
    text = json.dumps({"key": key, "spec": spec, "value": value}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------
# Shapes of the values, by kind (the key's prefix)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _numbers(x, n: int | None = None, none: bool = True) -> bool:
    """A list (of length ``n`` when given) of numbers (or None where ``none``)."""
    return (isinstance(x, list) and (n is None or len(x) == n)
            and all(_number(v) or (none and v is None) for v in x))


def _ci(x) -> bool:
    return x is None or (_numbers(x, 2, none=False))


def _model_shape(value, spec) -> str | None:
    """A model curve (``studies.figures``): lists over its sizes."""
    if not isinstance(value, dict) or not isinstance(spec, dict):
        return "not a model curve (a JSON object)"
    sizes = spec.get("sizes_packets")
    if value.get("sizes_packets") != sizes or not _numbers(sizes, none=False):
        return "its sizes are not the ones it was computed for"
    n = len(sizes)
    curves = [k for k in value if re.fullmatch(r"L\d+_s", k)]
    if not curves or not all(_numbers(value[k], n) for k in curves):
        return f"its conditional latencies L_k are not lists of {n} numbers"
    if spec.get("what") == "expected":
        if not _numbers(value.get("expected_s"), n):
            return f"its expected latency is not a list of {n} numbers"
        if not (isinstance(value.get("k_max"), int) and _number(value.get("truncated_mass_max"))):
            return "its k_max or truncated mass is missing"
    for k in ("filesize_min_fluid_packets", "filesize_min_table_packets"):
        if not _number(value.get(k)):
            return f"its {k} is not a number"
    return None


def _sim_shape(value, spec) -> str | None:
    """A simulated summary of one size (``studies.figures``)."""
    if not isinstance(value, dict) or not isinstance(spec, dict):
        return "not a simulated summary (a JSON object)"
    if value.get("size_packets") != spec.get("size_packets") or value.get("runs") != spec.get("runs"):
        return "its size or runs are not the ones it was computed for"
    for k in ("size_bytes", "mean_latency_s", "timeout_fraction", "mean_lost_packets"):
        if not _number(value.get(k)):
            return f"its {k} is not a number"
    if not 0.0 <= value["timeout_fraction"] <= 1.0 or not _ci(value.get("ci95_s")):
        return "its timeout fraction or confidence interval is out of shape"
    cond = value.get("conditional")
    if not isinstance(cond, dict):
        return "its conditional means are missing"
    for k, c in cond.items():
        if not (k.isdigit() and isinstance(c, dict) and isinstance(c.get("n"), int) and c["n"] >= 1
                and _number(c.get("mean_s")) and _ci(c.get("ci95_s"))):
            return f"its conditional mean for k = {k} is out of shape"
    if sum(c["n"] for c in cond.values()) > value["runs"]:
        return "its conditional counts exceed its runs"
    return None


def _tables_shape(value, spec) -> str | None:
    """Tables 1-2 (``studies.tables``): one row per table line, lists over W0."""
    if not isinstance(value, list) or not value:
        return "not a list of table rows"
    for row in value:
        if not isinstance(row, dict) or not isinstance(row.get("b"), int) or not isinstance(row.get("phase"), str) \
                or not isinstance(row.get("lt"), bool):
            return "a table row is out of shape"
        w0 = row.get("w0")
        if not _numbers(w0, none=False) or not w0:
            return "a table row has no W0 values"
        for k in ("model", "plain", "paper", "simulated"):
            if k in row and not _numbers(row[k], len(w0)):
                return f"a table row's {k} column is not {len(w0)} numbers"
        if not all(k in row for k in ("model", "plain", "paper")):
            return "a table row lacks a column"
    return None


def _true(value, spec) -> str | None:
    return None if value is True else "its value is not true"


def _predictions_shape(value, spec) -> str | None:
    return None if _numbers(value) and value else "not a list of predicted latencies"


SHAPES = {
    "model": _model_shape,
    "sim": _sim_shape,
    "tables": _tables_shape,
    "plot": _true,
    "accuracy_model": _predictions_shape,
    "accuracy_timeout": _true,
}
"""What a value of each kind (the key's prefix) must look like: ``check(value, spec)``
returns None, or what is wrong. A kind not listed is checked by its digest alone."""


def _problem(entry, key: str) -> str | None:
    """What is wrong with a parsed entry (None: whole)."""
    if not isinstance(entry, dict):
        return f"not a cache entry (a JSON {type(entry).__name__})"
    missing = [k for k in ("format", "key", "version", "spec", "value", "sha256") if k not in entry]
    if missing:
        return f"not a whole cache entry (no {', '.join(missing)})"
    if entry["format"] != FORMAT:
        return f"an entry of another form ({entry['format']!r})"
    if entry["key"] != key:
        return f"the entry of another key ({str(entry['key'])[:40]!r})"
    if entry["version"] != __version__:
        return f"written by version {entry['version']!r}"
    if entry["sha256"] != _digest(key, entry["spec"], entry["value"]):
        return "its value does not match its SHA-256 (edited, or written by other code)"
    shape = SHAPES.get(key.split("-", 1)[0])
    return None if shape is None else shape(entry["value"], entry["spec"])


def load(cache_dir, key: str):
    """The stored value of ``key``; ``None`` when absent, or when present but not whole.

    A present entry that is not whole (see the module's text) is reported with a
    :class:`DamagedCacheEntry` warning (``<path>: <what is wrong>; recomputed``), never used.
    """
    path = Path(cache_dir) / f"{key}.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return _damaged(path, f"unreadable ({getattr(exc, 'strerror', None) or exc})")
    try:
        entry = json.loads(text)
    except ValueError:
        return _damaged(path, "not JSON (cut short?)")
    problem = _problem(entry, key)
    if problem is not None:
        return _damaged(path, problem)
    return entry["value"]


def _damaged(path: Path, why: str) -> None:
    warnings.warn(DamagedCacheEntry(f"{path}: {why}; recomputed"), stacklevel=3)
    return None


def store(cache_dir, key: str, value, spec: dict | None = None) -> Path:
    """Store ``value`` (JSON-serialisable) under ``key``, atomically, with its SHA-256;
    ``spec`` is kept for reading (and checked with the value)."""
    value = json.loads(json.dumps(value))  # the digest is of what a reader will see
    spec = json.loads(json.dumps(spec))
    entry = {"format": FORMAT, "key": key, "version": __version__, "spec": spec, "value": value,
             "sha256": _digest(key, spec, value)}
    return atomic_write_text(Path(cache_dir) / f"{key}.json", json.dumps(entry) + "\n")

