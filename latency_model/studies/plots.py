"""Figures drawn from the tidy CSV only (``figures/figN.csv``), never from live results.

matplotlib with the Agg backend (no display needed). The SVG and PNG files carry no
date and fixed element ids, so the same CSV gives byte-identical images.
"""

from __future__ import annotations

import io
from pathlib import Path

from .export import atomic_write_bytes, read_typed_csv

__all__ = ["read_tidy", "read_setting", "draw", "build_figure", "pyplot", "save_figure", "check_csv_rows",
           "columns_rows", "draw_columns", "legend_below", "REQUIRED_COLUMNS", "FEW_RUNS"]

REQUIRED_COLUMNS = ("figure", "series", "k", "source", "size_packets", "size_bytes", "value", "ci_low", "ci_high", "n")
FEW_RUNS = 30  # a simulated mean from fewer transfers is drawn hollow (figures.FEW_RUNS)

_COLORS = {0: "#1b9e77", 1: "#d95f02", 2: "#7570b3",
           "newreno": "#1b9e77", "lt": "#d95f02", "proposal": "#7570b3", "size-based": "#7570b3"}
_LABELS = {"newreno": "NewReno", "lt": "LT (dup_LT = 2)", "proposal": "proposal (dup = 1)",
           "size-based": "size-based (= LT from 10,000 B)"}
# Figure 9's size-based series equals LT above 10,000 B (model and simulation): line style,
# marker and a small horizontal dodge of the simulated points keep the three apart.
_STYLES = {"newreno": ("-", "o", 0.0), "lt": ("--", "s", -0.2), "size-based": (":", "^", 0.2),
           "proposal": ("-.", "^", 0.2)}
_K_MARKERS = {0: "o", 1: "s", 2: "^"}


def read_setting(csv_path) -> tuple[str | None, str | None]:
    """Title and setting line from the JSON sidecar of a figure CSV (``None`` when absent).

    Parameters
    ----------
    csv_path : str or Path
        ``figN.csv``; the sidecar is ``figN.json`` beside it (keys ``title``, ``setting``).
    """
    import json

    side = Path(csv_path).with_suffix(".json")
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    return meta.get("title"), meta.get("setting")


def read_tidy(path) -> list[dict]:
    """Rows of a tidy figure CSV, numbers parsed (empty cells as ``None``).

    Raises
    ------
    ValueError
        If the file lacks a column of :data:`REQUIRED_COLUMNS` or has no rows.
    """
    return read_typed_csv(path, REQUIRED_COLUMNS, floats=("size_packets", "size_bytes", "value", "ci_low", "ci_high"),
                          ints=("k", "n"))


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend, with the package's fixed style."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "latency_model", "font.size": 9})
    return plt


def draw(csv_path, out_stem=None, title: str | None = None) -> list[Path]:
    """Draw the figure of a tidy CSV as ``<stem>.png`` and ``<stem>.svg``.

    Model curves are lines; simulated means are markers with their 95% interval, hollow
    when fewer than :data:`FEW_RUNS` transfers are behind them. File sizes are in
    packets (bottom axis) and bytes (top axis). The subtitle gives the setting from the
    JSON sidecar (:func:`read_setting`) when there is one.

    Parameters
    ----------
    csv_path : str or Path
        A ``figN.csv`` of Figures 4 and 6-10 written by ``latency-model reproduce``
        (:func:`latency_model.studies.draw.draw_csv` also takes the trace figures').
    out_stem : str or Path, optional
        Output path without extension (default: the CSV path without ``.csv``).
    title : str, optional
        Figure title (default: the sidecar's, else from the figure name).

    Returns
    -------
    list of Path
        The PNG and SVG paths, written atomically.
    """
    return draw_with(build_figure, read_tidy(csv_path), csv_path, out_stem, title)


def draw_with(build, rows, csv_path, out_stem=None, title=None) -> list[Path]:
    """``build(rows, title, setting)`` saved as ``<stem>.png`` and ``<stem>.svg`` (the stem
    defaults to the CSV path without ``.csv``; title and setting from its JSON sidecar)."""
    stem = Path(out_stem) if out_stem is not None else Path(csv_path).with_suffix("")
    side_title, setting = read_setting(csv_path)
    fig = build(rows, title or side_title, setting)
    paths = [save_figure(fig, stem.with_suffix(f".{ext}"), dpi=110, close=False) for ext in ("png", "svg")]
    pyplot().close(fig)
    return paths


def build_figure(rows: list[dict], title: str | None = None, setting: str | None = None):
    """The matplotlib figure of tidy rows (:func:`read_tidy`), not saved; see :func:`draw`.

    Parameters
    ----------
    rows : list of dict
        Rows of one figure.
    title : str, optional
        Title (default from the figure name).
    setting : str, optional
        Setting line(s) under the title; clauses separated by ``"; "`` go on separate lines.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = pyplot()
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(6.4, 5.3))
    name = rows[0]["figure"]
    curves = [r for r in rows if r["series"] not in ("filesize_min", "filesize_min_fluid")]
    reduction = name == "fig10"
    scale = 100.0 if reduction else 1.0
    conditional = any(r["k"] is not None for r in curves) and not reduction
    mss = _mss(rows)
    groups: dict = {}
    for r in curves:
        key = (r["series"], r["k"])
        groups.setdefault(key, {"model": [], "simulation": []})[r["source"]].append(r)
    any_hollow = False
    for (series, k), src in sorted(groups.items(), key=lambda t: (str(t[0][0]), t[0][1] or 0)):
        color = _COLORS.get(k if conditional else series, "black")
        label = f"k = {k}" if conditional else _LABELS.get(series, series)
        ls, marker, dodge = ("-", _K_MARKERS.get(k, "o"), 0.0) if conditional else _STYLES.get(series, ("-", "o", 0.0))
        m = sorted(src["model"], key=lambda r: r["size_packets"])
        if m:
            ax.plot([r["size_packets"] for r in m], [r["value"] * scale for r in m], color=color, ls=ls,
                    lw=1.8 if ls == ":" else 1.4, label=f"model, {label}")
        s = sorted((r for r in src["simulation"] if r["value"] is not None), key=lambda r: r["size_packets"])
        for few in (False, True):
            pts = [r for r in s if ((r["n"] or 0) < FEW_RUNS) == few]
            if not pts:
                continue
            any_hollow |= few
            x = [r["size_packets"] + dodge for r in pts]
            y = [r["value"] * scale for r in pts]
            lo = [max(0.0, (r["value"] - r["ci_low"]) * scale) if r["ci_low"] is not None else 0.0 for r in pts]
            hi = [max(0.0, (r["ci_high"] - r["value"]) * scale) if r["ci_high"] is not None else 0.0 for r in pts]
            ax.errorbar(x, y, yerr=[lo, hi], fmt=marker, ms=3.5, color=color, ecolor=color,
                        mfc="white" if few else color, mec=color, elinewidth=0.8, capsize=2,
                        alpha=0.6 if few else 0.85, label=None if few else f"simulation (95% CI), {label}")
    for r in rows:
        if r["series"] == "filesize_min":
            # named in the legend, not over the data
            ax.axvline(r["size_packets"], color="grey", ls="--", lw=1,
                       label=f"FileSize_min = {r['size_packets']:g} packets ({r['size_bytes']:g} B)")
    ax.set_xlabel(f"file size (packets of MSS = {mss:g} B)")
    top = ax.secondary_xaxis("top", functions=(lambda x: x * mss, lambda b: b / mss))
    top.set_xlabel("file size (bytes)", fontsize=8)
    top.tick_params(labelsize=7)
    ax.set_ylabel("reduction of L_1 against NewReno (%)" if reduction
                  else ("conditional latency L_k (s)" if conditional else "expected latency (s)"))
    fig.suptitle(title or _default_title(name), fontsize=10, y=0.985)
    if setting:  # one line per clause: "p = ..., MSS = 500 B" and "simulation: ..."
        fig.text(0.5, 0.945, setting.replace("; ", "\n"), ha="center", va="top", fontsize=7.5, color="0.25")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if any_hollow:
        handles.append(Line2D([], [], ls="none", marker="o", mfc="white", mec="dimgrey", ms=4))
        labels.append(f"hollow: fewer than {FEW_RUNS} simulated transfers")
    if not conditional and len(groups) > 1:
        labels.append("simulated points dodged by 0.2 packets")
        handles.append(Line2D([], [], ls="none"))
    ax.legend(handles, labels, fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.11),
              frameon=False)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.79, bottom=0.25)  # fixed: tight_layout costs a draw
    return fig


def legend_below(fig, handles, labels, ncol: int = 4, fontsize: float = 7) -> None:
    """One legend for the whole figure, under its panels (never over the data), and the
    panels laid out above it (``tight_layout`` in the rest of the figure)."""
    rows = -(-len(labels) // ncol)
    fig.legend(handles, labels, loc="lower center", ncol=min(ncol, len(labels)), fontsize=fontsize, frameon=False)
    fig.tight_layout(rect=(0, (0.08 + 0.17 * rows) / fig.get_figheight(), 1, 1))


def _mss(rows) -> float:
    """Segment size, bytes, from the rows' size_bytes / size_packets (500 when unknown)."""
    for r in rows:
        if r["size_packets"] and r["size_bytes"]:
            return r["size_bytes"] / r["size_packets"]
    return 500.0


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




# ---------------------------------------------------------------------------
# Any tidy CSV: one column against another, one line per value of a third


def check_csv_rows(path) -> list[str]:
    """The header of a CSV written by this package, every row checked whole.

    Raises
    ------
    ValueError
        Naming the file: not UTF-8, empty, or a row with fewer or more fields than the header
        (a file cut mid-row by a crash or a full disk).
    """
    import csv

    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise ValueError(f"{path} is empty (no header row)")
            for row in reader:
                if row and len(row) != len(header):
                    raise ValueError(f"{path}, line {reader.line_num}: {len(row)} fields where the header has "
                                     f"{len(header)} (a row cut short, e.g. by a crash or a full disk)")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text (not a CSV written by latency-model)") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable CSV ({exc})") from None
    return header


def _number_or_none(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def columns_rows(csv_path, x: str, y: str, hue: str | None = None, where: dict | None = None) -> dict:
    """The points of ``y`` against ``x`` per value of ``hue`` in a tidy CSV.

    Parameters
    ----------
    csv_path : str or Path
        Any tidy CSV this package writes (sweep, accuracy, experiments, figures).
    x, y : str
        Numeric columns (rows with an empty or non-numeric cell are left out).
    hue : str, optional
        Column whose values each get a line.
    where : dict, optional
        ``{column: value}``: keep only the rows whose cell equals ``value`` (compared as
        numbers when both parse, else as text).

    Returns
    -------
    dict
        ``{hue value: [(x, y), ...]}`` sorted by x (one key ``None`` without ``hue``).

    Raises
    ------
    ValueError
        A column that is not in the file (the message lists the file's columns), no point
        left, or two rows with the same hue and x (a column left free: the message names
        the columns that differ, to fix with ``where`` or ``hue``).
    """
    import csv

    header = check_csv_rows(csv_path)
    where = dict(where or {})
    for role, column in (("x", x), ("y", y), ("hue", hue), *(("where", c) for c in where)):
        if column is not None and column not in header:
            raise ValueError(f"{role} column {column!r} is not in {csv_path}; its columns: {', '.join(header)}")
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))

    def matches(row):
        for column, want in where.items():
            a, b = _number_or_none(row[column]), _number_or_none(want)
            if not (a == b if a is not None and b is not None else row[column] == str(want)):
                return False
        return True

    series: dict = {}
    first: dict = {}
    for row in filter(matches, rows):
        xv, yv = _number_or_none(row[x]), _number_or_none(row[y])
        if xv is None or yv is None:
            continue
        key = row[hue] if hue is not None else None
        if (key, xv) in first:
            free = [c for c in header if c not in (x, y, hue) and row[c] != first[key, xv][c]]
            raise ValueError(f"{csv_path}: two rows at {x} = {xv:g}{'' if hue is None else f', {hue} = {key}'}; "
                             f"they differ in {', '.join(free[:6]) or 'no other column'}: pick one with "
                             f"--where COLUMN=VALUE or draw one line each with --hue")
        first[key, xv] = row
        series.setdefault(key, []).append((xv, yv))
    if not series:
        raise ValueError(f"{csv_path}: no row has numbers in both {x} and {y}"
                         + (f" where {', '.join(f'{k}={v}' for k, v in where.items())}" if where else ""))
    return {k: sorted(v) for k, v in series.items()}


def draw_columns(csv_path, x: str, y: str, hue: str | None = None, where: dict | None = None,
                 out_stem=None, logx: bool = False, logy: bool = False) -> list[Path]:
    """Draw ``y`` against ``x``, one line per ``hue`` value, from any tidy CSV of this package
    (:func:`columns_rows`), as ``<stem>.png`` and ``<stem>.svg``.

    Every line is labelled with its hue value (the legend holds every value present); the
    title names the file and the filters. Returns the PNG and SVG paths (written atomically).
    """
    series = columns_rows(csv_path, x, y, hue, where)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for key, pts in sorted(series.items(), key=lambda t: (_number_or_none(t[0]) is None, _number_or_none(t[0]) or 0,
                                                          str(t[0]))):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, lw=1.2,
                label=None if hue is None else f"{hue} = {key}")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    subtitle = ", ".join(f"{k} = {v}" for k, v in (where or {}).items())
    ax.set_title(Path(csv_path).name + (f" ({subtitle})" if subtitle else ""), fontsize=9)
    if hue is not None:
        ax.legend(fontsize=7, title=hue, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  frameon=False)
    fig.subplots_adjust(left=0.11, right=0.75 if hue is not None else 0.97, top=0.92, bottom=0.11)
    stem = Path(out_stem) if out_stem is not None else Path(csv_path).with_suffix("")
    paths = [save_figure(fig, stem.with_suffix(f".{ext}"), dpi=110, close=False) for ext in ("png", "svg")]
    plt.close(fig)
    return paths
