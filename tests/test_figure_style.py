"""Figures 4 and 6-10 as drawn (issue 19, item 6): the setting in the subtitle, sizes with
their unit, simulated means from few transfers hollow (not dropped), Figure 9's series
apart. Synthetic tidy rows; the drawing is inspected before it is saved."""

from __future__ import annotations

import json

import pytest

from latency_model.params import TcpParams
from latency_model.studies.figures import figure_rows, setting_text
from latency_model.studies.plots import FEW_RUNS, build_figure, draw, pyplot, read_setting


def _row(fig, series, k, source, size, value, n=None, ci=None):
    return {"figure": fig, "series": series, "k": k, "source": source, "size_packets": float(size),
            "size_bytes": 500.0 * size, "value": value, "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None, "n": n}


def _sim_lines(ax):
    """The simulated-mean markers (not the error bars' caps, not the model lines)."""
    return [ln for ln in ax.get_lines()
            if ln.get_linestyle() in ("None", "none", "") and ln.get_marker() not in ("_", "|", "None", "", None)]


def test_setting_line_names_p_w0_b_rtt_mss_and_runs():
    text = setting_text(TcpParams(b=2), runs=1000)
    for part in ("p = 0.1", "W0 = 2", "W_SS = M = 30 packets", "b = 2", "RTT = 0.1 s", "MSS = 500 B",
                 "1000 transfers per size"):
        assert part in text
    assert "W_SS = 20, M = 30" in setting_text(TcpParams(w_ss=20))


def test_few_run_means_are_drawn_hollow_not_dropped():
    rows = [_row("fig6", "newreno", 1, "model", s, 1.0) for s in (1, 2, 3)]
    rows += [_row("fig6", "newreno", 1, "simulation", 1, 1.1, n=500, ci=(1.0, 1.2)),
             _row("fig6", "newreno", 1, "simulation", 2, 1.2, n=FEW_RUNS - 1, ci=(1.0, 1.4)),
             _row("fig6", "newreno", 1, "simulation", 3, 1.3, n=1)]  # one transfer: no interval
    fig = build_figure(rows, "t", "p = 0.1; simulation: x")
    ax = fig.axes[0]
    pts = {}
    for ln in _sim_lines(ax):
        for x in ln.get_xdata():
            pts[float(x)] = ln.get_markerfacecolor()
    assert set(pts) == {1.0, 2.0, 3.0}  # none dropped
    assert pts[1.0] != "white" and pts[2.0] == pts[3.0] == "white"
    labels = ax.get_legend().get_texts()
    assert any(f"fewer than {FEW_RUNS}" in t.get_text() for t in labels)
    pyplot().close(fig)


def test_sizes_are_in_packets_and_bytes_with_units_and_the_setting_is_shown():
    rows = [_row("fig6", "newreno", 0, "model", s, 0.1 * s) for s in (1, 2)]
    fig = build_figure(rows, "Figure 6", "p = 0.1, W0 = 2, b = 1, RTT = 0.1 s, MSS = 500 B; simulation: x")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "file size (packets of MSS = 500 B)"
    texts = [t.get_text() for t in fig.texts]
    assert any("MSS = 500 B\nsimulation" in t for t in texts)
    tops = [c for c in ax.child_axes if c.get_xlabel()]
    assert [c.get_xlabel() for c in tops] == ["file size (bytes)"]
    assert "KB" not in ax.get_xlabel()
    pyplot().close(fig)


def test_figure9_series_differ_in_line_style_marker_and_position():
    rows = []
    for series in ("newreno", "lt", "size-based"):
        rows += [_row("fig9", series, None, "model", s, 1.0) for s in (1, 2)]
        rows += [_row("fig9", series, None, "simulation", s, 1.0, n=1000, ci=(0.9, 1.1)) for s in (1, 2)]
    fig = build_figure(rows)
    ax = fig.axes[0]
    model = [ln for ln in ax.get_lines() if ln.get_label().startswith("model")]
    assert len({ln.get_linestyle() for ln in model}) == 3
    sims = _sim_lines(ax)
    assert len({ln.get_marker() for ln in sims}) == 3
    assert len({tuple(ln.get_xdata()) for ln in sims}) == 3  # dodged, not on top of each other
    pyplot().close(fig)


def test_figure10_keeps_reductions_from_few_transfers():
    def cond(n, m):
        return {"1": {"n": n, "mean_s": m, "ci95_s": [m - 0.1, m + 0.1]}}

    model = {"sizes_packets": [4.0], "L0_s": [0.1], "L1_s": [1.0], "L2_s": [2.0], "expected_s": [0.5]}
    results = {"model": {f"{s}_b1": model for s in ("newreno", "lt", "proposal")},
               "sim": {f"{s}_b1": {4: {"conditional": cond(5, 0.8)}} for s in ("newreno", "lt", "proposal")}}
    sim = [r for r in figure_rows("fig10", results) if r["source"] == "simulation"]
    assert [(r["series"], r["n"]) for r in sim] == [("lt", 5), ("proposal", 5)]


def test_draw_reads_title_and_setting_from_the_sidecar(tmp_path):
    csv_path = tmp_path / "fig6.csv"
    csv_path.write_text("figure,series,k,source,size_packets,size_bytes,value,ci_low,ci_high,n\n"
                        "fig6,newreno,0,model,1,500,0.1,,,\nfig6,newreno,0,model,2,1000,0.2,,,\n")
    assert read_setting(csv_path) == (None, None)
    (tmp_path / "fig6.json").write_text(json.dumps({"title": "T", "setting": "p = 0.1"}))
    assert read_setting(csv_path) == ("T", "p = 0.1")
    paths = draw(csv_path)
    svg = paths[1].read_text()
    assert "p = 0.1" in svg.replace("&#160;", " ") or "p = 0.1" in svg


@pytest.mark.parametrize("fig", ["fig4", "fig6", "fig7", "fig8", "fig9", "fig10"])
def test_committed_figure_json_states_the_setting(fig):
    from pathlib import Path

    meta = json.loads((Path(__file__).resolve().parent.parent / "figures" / f"{fig}.json").read_text())
    for part in ("p = 0.1", "W0 = 2", "RTT = 0.1 s", "MSS = 500 B", "b = "):
        assert part in meta["setting"]
