"""Results cache of the reproduction: one JSON file per computed piece.

A piece (a model curve, one simulated size) is stored under a key that hashes
everything it depends on: its parameters, seed and runs, the package version and
the source code of the modules that compute it. A rerun with unchanged code and
parameters reads the file instead of computing; any change makes a new key.
Files are written atomically, so an interrupted run never leaves a corrupt entry.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from .. import __version__
from .export import atomic_write_text

__all__ = ["cache_key", "load", "store", "source_hash"]

_PKG = Path(__file__).resolve().parent.parent  # the latency_model package


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
        Short label, used as the file-name prefix (``"model"``, ``"sim"``).
    spec : dict
        JSON-serialisable description: parameters, sizes, seed, runs.
    code : str
        Hash of the code that computes the piece (:func:`source_hash`).
    """
    if not kind.isidentifier():
        raise ValueError(f"kind must be an identifier, got {kind!r}")
    blob = json.dumps({"spec": spec, "code": code, "version": __version__}, sort_keys=True)
    return f"{kind}-{hashlib.sha256(blob.encode()).hexdigest()[:24]}"


def load(cache_dir, key: str):
    """The stored value of ``key``, or ``None`` when absent or unreadable."""
    path = Path(cache_dir) / f"{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))["value"]
    except (OSError, ValueError, KeyError):
        return None


def store(cache_dir, key: str, value, spec: dict | None = None) -> Path:
    """Store ``value`` (JSON-serialisable) under ``key``, atomically; ``spec`` is kept for reading."""
    return atomic_write_text(
        Path(cache_dir) / f"{key}.json",
        json.dumps({"key": key, "version": __version__, "spec": spec, "value": value}) + "\n",
    )
