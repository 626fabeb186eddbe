"""Draw any figure CSV that ``latency-model reproduce`` writes, by its columns.

Figures 4 and 6-10 (latency against file size) go to :func:`latency_model.studies.plots.draw`,
Figures 1-3 and 5 (one transfer over time) to
:func:`latency_model.studies.trace_plots.draw_trace_figure`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["draw_csv"]


def draw_csv(csv_path, out_stem=None) -> list[Path]:
    """Draw ``csv_path`` as ``<stem>.png`` and ``<stem>.svg``, whichever kind of figure it is.

    Parameters
    ----------
    csv_path : str or Path
        A ``figures/figN.csv``.
    out_stem : str or Path, optional
        Output path without extension (default: the CSV path without ``.csv``).

    Returns
    -------
    list of Path
        The PNG and SVG paths, written atomically.
    """
    from .trace_plots import draw_trace_figure, is_trace_csv

    if is_trace_csv(csv_path):
        return draw_trace_figure(csv_path, out_stem)
    from .plots import draw

    return draw(csv_path, out_stem)
