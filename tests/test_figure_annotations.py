"""Figures: notes stay clear of the data, legends hold every series of the CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("fig", ["fig1", "fig2", "fig3", "fig5"])
def test_trace_figure_notes_sit_above_the_panels(fig):
    from latency_model.studies.plots import pyplot
    from latency_model.studies.trace_plots import build_trace_figure, read_trace_rows

    rows = read_trace_rows(ROOT / "figures" / f"{fig}.csv")
    figure = build_trace_figure(rows, fig, "setting")
    top, bot = figure.axes[:2]
    try:
        for ax in (top, bot):
            for t in ax.texts:  # a note inside an axes would be drawn over the curves
                x, y = t.get_position()
                assert t.get_transform() == ax.transAxes and y >= 1.0, (fig, t.get_text())
        notes = "\n".join(t.get_text() for t in top.texts)
        assert "model: done at" in notes and "simulation: last ACK at" in notes
        # the notes end below the setting lines and above the panel
        renderer = figure.canvas.get_renderer()
        box = top.texts[0].get_window_extent(renderer)
        assert box.y0 >= top.get_window_extent(renderer).y1
        setting = [t for t in figure.texts if t.get_text() == "setting"][0].get_window_extent(renderer)
        assert box.y1 <= setting.y0
    finally:
        pyplot().close(figure)


def test_size_figures_name_filesize_min_in_the_legend_not_over_the_data():
    from latency_model.studies.plots import build_figure, pyplot, read_tidy

    rows = read_tidy(ROOT / "figures" / "fig6.csv")
    fig = build_figure(rows)
    try:
        ax = fig.axes[0]
        assert not ax.texts
        assert any(lab.startswith("FileSize_min = ") for lab in ax.get_legend_handles_labels()[1])
    finally:
        pyplot().close(fig)


def test_modern_legend_has_every_variant_of_its_csv(tmp_path, monkeypatch):
    import latency_model.experiments.plot_modern as pm
    from latency_model.cli import main
    from latency_model.studies.plots import pyplot

    assert main(["experiment", "modern", "--quick", "--iw", "2", "--p", "0.1", "--size-packets", "2,6,12",
                 "--runs", "20", "--variants", "newreno,lt,proposal,er", "--out", str(tmp_path)]) == 0
    with open(tmp_path / "modern.csv", newline="") as fh:
        in_csv = {r["variant"] for r in csv.DictReader(fh)}
    assert "size-based" in in_csv and len(in_csv) == 5  # the 4 asked + the paper's size-based

    labels = []
    save = pm.save_figure

    def spy(fig, path, **kw):
        labels.extend(t.get_text() for lg in fig.legends for t in lg.get_texts())
        return save(fig, path, **kw)

    monkeypatch.setattr(pm, "save_figure", spy)
    pm.plot_modern(json.loads((tmp_path / "modern.json").read_text()), tmp_path / "again.png")
    pyplot().close("all")
    assert len(labels) == len(in_csv)
