"""The kernel campaign's committed cells (``validation/linux/results/``), the simulator's
columns beside them, and the agreement rule they are judged by.

One module for what the campaign script (``validation/linux/campaign.py``) writes and what
``latency-model validate`` reads back, so that both compute the simulator's columns and the
tolerance the same way:

- :func:`sim_columns`: the simulator's mean, standard error, timeout fraction and means
  given k = 0, 1, 2 lost data transmissions of one cell (``simulate --stack linux`` with
  the cell's set-up, :func:`~.measure.simulated`);
- :func:`tolerance_s`: the campaign's target, |sim - kernel| within 2.5 combined standard
  errors plus 2% of the kernel's mean;
- :func:`read_cells`, :func:`read_path`, :func:`read_transfers`, :func:`transfers_path`:
  the committed files.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

__all__ = ["CAMPAIGN_SEED", "TOLERANCE_SE", "TOLERANCE_RELATIVE", "tolerance_s", "sim_columns", "read_cells",
           "read_path", "read_transfers", "transfers_path", "default_results"]

CAMPAIGN_SEED = 46
"""Root seed of the campaign's cells (``campaign.py run --seed``): the simulator's run i of
a cell takes child i of ``SeedSequence(46).spawn(runs)``."""

TOLERANCE_SE = 2.5
"""Combined standard errors allowed between the kernel's and the simulator's means."""

TOLERANCE_RELATIVE = 0.02
"""Share of the kernel's mean allowed on top (the kernel's own timing: jiffies, timer slack)."""


def tolerance_s(kernel_mean_s: float, kernel_sem_s: float, sim_sem_s: float) -> float:
    """Allowed ``|sim - kernel|`` of one cell, seconds.

    ``TOLERANCE_SE * sqrt(kernel_sem_s**2 + sim_sem_s**2) + TOLERANCE_RELATIVE * kernel_mean_s``:
    2.5 standard errors of the difference of two independent means (the two sides see
    different loss streams) plus 2% of the kernel's mean.

    Parameters
    ----------
    kernel_mean_s, kernel_sem_s, sim_sem_s : float
        The kernel's mean and the two standard errors, seconds (>= 0, finite).
    """
    for name, v in (("kernel_mean_s", kernel_mean_s), ("kernel_sem_s", kernel_sem_s), ("sim_sem_s", sim_sem_s)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite number >= 0 (seconds), got {v!r}")
    return TOLERANCE_SE * math.hypot(kernel_sem_s, sim_sem_s) + TOLERANCE_RELATIVE * kernel_mean_s


def _sem_of(mean: float, ci) -> float | str:
    """A standard error from a 95% interval's half-width (Student t ~ z at these sizes)."""
    return (ci[1] - mean) / 1.96 if ci else ""


def sim_columns(cc: str, size_packets: int, p: float, runs: int, *, seed: int = CAMPAIGN_SEED, mss_bytes: int = 500,
                delay_s: float = 0.05, rate_bps: float = 100e6) -> dict:
    """The simulator's columns of one campaign cell (``cells.csv``'s ``sim_*``).

    ``simulate --stack linux`` on the kernel's path, growth rule ``standard`` for reno and
    ``cubic`` for cubic (:func:`~.measure.sim_setup`), ``runs`` transfers from root seed
    ``seed``.

    Returns
    -------
    dict
        ``sim_mean_s``, ``sim_sem_s``, ``sim_timeout_fraction`` and, for k = 0, 1, 2 lost data
        transmissions, ``sim_k{k}_n``, ``sim_k{k}_mean_s``, ``sim_k{k}_sem_s`` (``""`` where
        no or one transfer had k losses), seconds.
    """
    from .measure import simulated

    s = simulated(cc, size_packets * mss_bytes, mss_bytes=mss_bytes, delay_s=delay_s, rate_bps=rate_bps, p=p,
                  runs=runs, seed=seed)
    out = {"sim_mean_s": s["mean_latency_s"], "sim_sem_s": _sem_of(s["mean_latency_s"], s["ci95_s"]),
           "sim_timeout_fraction": s["timeout_fraction"]}
    for k in (0, 1, 2):
        c = s["conditional"].get(k) or s["conditional"].get(str(k))
        out[f"sim_k{k}_n"] = c["n"] if c else 0
        out[f"sim_k{k}_mean_s"] = c["mean_s"] if c else ""
        out[f"sim_k{k}_sem_s"] = _sem_of(c["mean_s"], c["ci95_s"]) if c else ""
    return out


def default_results() -> Path:
    """The repository's committed campaign, ``validation/linux/results`` beside the package
    (present in a clone of the repository, not in an installed wheel)."""
    return Path(__file__).resolve().parents[2] / "validation" / "linux" / "results"


def read_cells(folder) -> list[dict]:
    """Rows of ``folder/cells.csv``: ``cc`` a string, ``size_packets``, ``runs`` and ``*_n``
    integers, the other columns floats (``None`` where empty), sorted by (cc, p, N).

    Raises
    ------
    ValueError
        When the file is missing or lacks a column the comparison needs (naming it).
    """
    path = Path(folder) / "cells.csv"
    try:
        with open(path, newline="") as f:
            raw = list(csv.DictReader(f))
    except FileNotFoundError:
        raise ValueError(f"kernel data: {path} does not exist") from None
    need = ("cc", "p", "size_packets", "runs", "kernel_mean_s", "kernel_sem_s", "kernel_k1_n", "kernel_k1_mean_s",
            "kernel_k1_sem_s")
    rows = []
    for i, r in enumerate(raw, start=2):
        missing = [c for c in need if c not in r]
        if missing:
            raise ValueError(f"kernel data: {path} has no column {missing[0]}")
        row = {}
        for key, v in r.items():
            if key in ("cc", "date"):
                row[key] = v
            elif v in ("", None):
                row[key] = None
            else:
                try:
                    row[key] = int(v) if key in ("size_packets", "runs", "packets", "late_over_1ms") \
                        or key.endswith("_n") else float(v)
                except ValueError:
                    raise ValueError(f"kernel data: {path} line {i}: {key} = {v!r} is not a number") from None
        rows.append(row)
    return sorted(rows, key=lambda r: (r["cc"], r["p"], r["size_packets"]))


def read_path(folder) -> dict:
    """The campaign's path (``kernel.json``'s ``path``: ``mss_bytes``, ``delay_s``,
    ``link_rate_bps``) and the kernel's ``release`` and ``config_hz``."""
    path = Path(folder) / "kernel.json"
    try:
        meta = json.loads(path.read_text())
        return {**meta["path"], "release": meta["release"], "config_hz": meta["config_hz"]}
    except FileNotFoundError:
        raise ValueError(f"kernel data: {path} does not exist") from None
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"kernel data: {path} is not the campaign's kernel.json (path, release, config_hz)") from None


def transfers_path(folder, cc: str, p: float, n: int) -> Path:
    """``transfers_<cc>_p<p>_n<N>.csv.gz`` (or the plain CSV when that is what exists)."""
    gz = Path(folder) / f"transfers_{cc}_p{p:g}_n{n}.csv.gz"
    return gz if gz.exists() else gz.with_suffix("")


def read_transfers(path) -> list[dict]:
    """Rows of a per-transfer CSV (gzipped as committed, or plain), as strings."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        return list(csv.DictReader(f))
