"""Tables 1-2 of the paper (y_to in packets): the model beside the printed values and the
packet simulator's single-loss count, as text and as ``table1.csv`` / ``table2.csv``.

The model's rows come from :func:`latency_model.model.thresholds.table_rows`;
:func:`add_simulated_y_to` adds the simulator's column (this module is where the two
halves meet, as in the rest of :mod:`latency_model.studies`).
"""

from __future__ import annotations

from pathlib import Path

from ..params import TcpParams, apply_variant
from .export import write_csv

__all__ = ["TABLE_COLUMNS", "add_simulated_y_to", "tables_text", "write_tables"]

TABLE_COLUMNS = ["b", "phase", "lt", "w0", "paper", "model", "plain"]


def tables_text(rows: list[dict]) -> str:
    """Tables 1 and 2 as printed by ``latency-model tables``: model / paper [plain rule]
    per cell, every difference from the paper marked, and the simulated column if present."""
    lines = []
    for b, number in ((1, 1), (2, 2)):
        sub = {(r["phase"], r["lt"]): r for r in rows if r["b"] == b}
        cols = [
            ("slow_start", False, "SS no LT"),
            ("slow_start", True, "SS LT"),
            ("congestion_avoidance", False, "CA no LT"),
            ("congestion_avoidance", True, "CA LT"),
        ]
        lines.append(f"Table {number} (b = {b}): y_to in packets, model / paper [plain rule]")
        width = 24 if any("simulated" in r for r in rows) else 16
        lines.append("W0   " + "".join(f"{title:>{width}}" for _, _, title in cols))
        for i, w0 in enumerate(rows[0]["w0"]):
            cells = []
            for phase, lt, _ in cols:
                r = sub[(phase, lt)]
                m, pp, pl = r["model"][i], r["paper"][i], r["plain"][i]
                mark = "*" if m != pp else " "
                cell = f"{m} / {pp}{mark}" + (f" [{pl}]" if pl != m else "    ")
                if "simulated" in r:
                    cell += f" sim {r['simulated'][i]}"
                cells.append(f"{cell:>{width}}")
            lines.append(f"{w0:<5}" + "".join(cells))
        lines.append("")
    diff = sum(m != p for r in rows for m, p in zip(r["model"], r["paper"]))
    plain = sum(m != p for r in rows for m, p in zip(r["plain"], r["paper"]))
    lines.append(f"model cells differing from the paper: {diff} of {4 * len(rows)} (marked *)")
    lines.append(
        f"plain per-ACK rule differs from the paper in {plain} cells (shown in []): the "
        "congestion-avoidance cells with W0 at the threshold; see tables/README.md"
    )
    return "\n".join(lines)


def write_tables(rows: list[dict], out_dir) -> list[Path]:
    """Write ``table1.csv`` (b = 1) and ``table2.csv`` (b = 2), one row per cell."""
    paths = []
    for b in (1, 2):
        flat = []
        for r in rows:
            if r["b"] != b:
                continue
            for i, w0 in enumerate(r["w0"]):
                cell = {"b": b, "phase": r["phase"], "lt": r["lt"], "w0": w0}
                for key in ("paper", "model", "plain", "simulated"):
                    if key in r:
                        cell[key] = r[key][i]
                flat.append(cell)
        cols = TABLE_COLUMNS + (["simulated"] if any("simulated" in r for r in rows) else [])
        paths.append(write_csv(Path(out_dir) / f"table{b}.csv", flat, cols))
    return paths


def add_simulated_y_to(rows: list[dict], lt_mode: str = "rfc3042", dup_t: int = 3, dup_lt: int = 2,
                       stack: str = "rfc") -> None:
    """Add a ``"simulated"`` list (y_to in packets) to each row of ``table_rows()``.

    ``stack`` is the simulator's stack profile (``SimConfig.profile``), recorded in each
    row as ``"simulated_stack"``; ``lt_mode`` overrides the profile's Limited Transmit reading.

    Slow-start rows start with cwnd = W0 and ssthresh = 30 packets (> W0);
    congestion-avoidance rows with ssthresh = W0. ``y_to`` is the number of leading
    positions whose single loss ends in a timeout (:func:`~latency_model.sim.y_to_packets`).
    """
    from ..sim.config import SimConfig
    from ..sim.singleloss import y_to_packets

    config = SimConfig.profile(stack, lt_mode=lt_mode)
    for row in rows:
        sim = []
        for w0 in row["w0"]:
            w_ss = 30.0 if row["phase"] == "slow_start" else float(w0)
            p = TcpParams(p=0.0, w0=w0, w_ss=w_ss, rwnd=30.0, b=row["b"], dup_t=dup_t)
            if row["lt"]:
                p = apply_variant(p, "lt").replace(dup_lt=dup_lt)
            sim.append(y_to_packets(p, config))
        row["simulated"] = sim
        row["simulated_lt_mode"] = lt_mode
        row["simulated_stack"] = stack
