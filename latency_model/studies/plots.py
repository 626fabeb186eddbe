"""Figures drawn from the tidy CSV only (``figures/figN.csv``), never from live results.

matplotlib with the Agg backend (no display needed). The SVG and PNG files carry no
date and fixed element ids, so the same CSV gives byte-identical images.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .export import atomic_write_bytes

__all__ = ["read_tidy", "draw", "pyplot", "save_figure", "REQUIRED_COLUMNS"]

REQUIRED_COLUMNS = ("figure", "series", "k", "source", "size_packets", "size_bytes", "value", "ci_low", "ci_high", "n")
MIN_DRAWN_N = 10  # a simulated conditional mean from fewer transfers is not drawn

_COLORS = {0: "#1b9e77", 1: "#d95f02", 2: "#7570b3",
           "newreno": "#1b9e77", "lt": "#d95f02", "proposal": "#7570b3", "size-based": "#7570b3"}
_LABELS = {"newreno": "NewReno", "lt": "LT (dup_LT = 2)", "proposal": "proposal (dup = 1)",
           "size-based": "size-based proposal"}


def read_tidy(path) -> list[dict]:
    """Rows of a tidy figure CSV, numbers parsed (empty cells as ``None``).

    Raises
    ------
    ValueError
        If the file lacks a column of :data:`REQUIRED_COLUMNS` or has no rows.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"csv must have the columns {', '.join(REQUIRED_COLUMNS)}; {path} lacks {', '.join(missing)}")
        rows = []
        for raw in reader:
            row = dict(raw)
            for key in ("size_packets", "size_bytes", "value", "ci_low", "ci_high"):
                row[key] = float(raw[key]) if raw[key] not in ("", None) else None
            row["k"] = int(raw["k"]) if raw["k"] not in ("", None) else None
            row["n"] = int(raw["n"]) if raw["n"] not in ("", None) else None
            rows.append(row)
    if not rows:
        raise ValueError(f"csv must have at least one row, {path} has none")
    return rows


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, with the package's fixed style."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "latency_model", "font.size": 9})
    return plt


def draw(csv_path, out_stem=None, title: str | None = None) -> list[Path]:
    """Draw the figure of a tidy CSV as ``<stem>.png`` and ``<stem>.svg``.

    Parameters
    ----------
    csv_path : str or Path
        A ``figN.csv`` written by ``latency-model reproduce``.
    out_stem : str or Path, optional
        Output path without extension (default: the CSV path without ``.csv``).
    title : str, optional
        Figure title (default: from the figure name).

    Returns
    -------
    list of Path
        The PNG and SVG paths, written atomically.
    """
    rows = read_tidy(csv_path)
    stem = Path(out_stem) if out_stem is not None else Path(csv_path).with_suffix("")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    name = rows[0]["figure"]
    curves = [r for r in rows if r["series"] not in ("filesize_min", "filesize_min_fluid")]
    reduction = any(r["figure"] == name and name == "fig10" for r in rows[:1])
    scale = 100.0 if reduction else 1.0
    conditional = any(r["k"] is not None for r in curves) and not reduction
    groups: dict = {}
    for r in curves:
        key = (r["series"], r["k"])
        groups.setdefault(key, {"model": [], "simulation": []})[r["source"]].append(r)
    for (series, k), src in sorted(groups.items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
        color = _COLORS.get(k if conditional else series, "black")
        label = f"k = {k}" if conditional else _LABELS.get(series, series)
        m = sorted(src["model"], key=lambda r: r["size_bytes"])
        if m:
            ax.plot([r["size_bytes"] / 1000 for r in m], [r["value"] * scale for r in m], color=color,
                    lw=1.4, label=f"model, {label}")
        s = sorted((r for r in src["simulation"] if r["value"] is not None and (r["n"] or 0) >= MIN_DRAWN_N),
                   key=lambda r: r["size_bytes"])
        if s:
            x = [r["size_bytes"] / 1000 for r in s]
            y = [r["value"] * scale for r in s]
            lo = [max(0.0, (r["value"] - r["ci_low"]) * scale) if r["ci_low"] is not None else 0.0 for r in s]
            hi = [max(0.0, (r["ci_high"] - r["value"]) * scale) if r["ci_high"] is not None else 0.0 for r in s]
            ax.errorbar(x, y, yerr=[lo, hi], fmt="o", ms=3, color=color, ecolor=color, elinewidth=0.8,
                        capsize=2, alpha=0.85, label=f"simulation (95% CI), {label}")
    for r in rows:
        if r["series"] == "filesize_min":
            ax.axvline(r["size_bytes"] / 1000, color="grey", ls="--", lw=1)
            ax.annotate(f"FileSize_min = {r['size_packets']:g} pkts", (r["size_bytes"] / 1000, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points",
                        fontsize=8, color="dimgrey")
    ax.set_xlabel("file size (KB)")
    ax.set_ylabel("reduction of L_1 against NewReno (%)" if reduction
                  else ("conditional latency L_k (s)" if conditional else "expected latency (s)"))
    ax.set_title(title or _default_title(name))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.subplots_adjust(left=0.1, right=0.98, top=0.93, bottom=0.11)  # fixed: tight_layout costs a draw
    paths = [save_figure(fig, stem.with_suffix(f".{ext}"), dpi=110, close=False) for ext in ("png", "svg")]
    plt.close(fig)
    return paths


def save_figure(fig, path, dpi: int = 100, close: bool = True) -> Path:
    """Write ``fig`` to ``path`` atomically, in the format its suffix names (SVG without a
    date, so the same data gives the same bytes), and close it unless asked not to.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or Path
        Output file (.png or .svg).
    dpi : int
        Resolution, dots per inch.
    close : bool
        Close the figure afterwards (default).

    Returns
    -------
    Path
    """
    path = Path(path)
    ext = path.suffix.lstrip(".").lower()
    buf = io.BytesIO()
    fig.savefig(buf, format=ext, dpi=dpi, metadata={"Date": None} if ext == "svg" else None)
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())


def _default_title(name: str) -> str:
    from .figures import FIGURES

    return FIGURES.get(name, {}).get("title", name)


