"""Sweeps as data in Python and on stdout: grids as dicts, tables kept in memory (records,
DataFrame, one column as an array shaped like the grid), arbitrary designs of points
(``evaluate_points``, ``sweep --points``; SALib's samples as they are), ``--json`` and
``--out -``, and output names that promise another format refused."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

import latency_model as lm
from latency_model import TcpParams, apply_variant
from latency_model.model.recursion import expected_latency
from latency_model.sim import OUT_FIELDS, mean_ci, run_many
from latency_model.studies.sweep import SweepSpec, grid_from_items, read_rows, run_sweep

from _cli import refused, run


def _fluid(p, sizes_packets, variant="newreno"):
    """The solver's E[L] at these sizes, called directly (one size at a time: the sweep's
    rows must not depend on which sizes share a call)."""
    params = apply_variant(TcpParams(p=p), variant)
    return np.array([expected_latency(params, size_bytes=[s * params.mss_bytes]).expected_latency_s[0]
                     for s in sizes_packets])


def test_a_dict_grid_is_the_grid_of_the_same_items(tmp_path):
    a = run_sweep(SweepSpec({"p": [0.01, 0.1], "size_packets": range(1, 6)}), tmp_path / "a.csv")
    b = run_sweep(SweepSpec(grid_from_items(["p=0.01,0.1", "size-packets=1:5"])), tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert a.shape == b.shape == (2, 5)
    c = SweepSpec({"p": np.array([0.01, 0.1]), "size-packets": "1:5"})  # arrays and the --param syntax
    assert c.grid == SweepSpec(["p=0.01,0.1", "size-packets=1:5"]).grid


def test_without_a_file_the_table_stays_in_memory_and_equals_the_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = SweepSpec({"p": [0.01, 0.1], "size_packets": range(1, 6)})
    mem = run_sweep(spec)
    assert mem.out is None and list(tmp_path.iterdir()) == []  # nothing written
    on_file = run_sweep(spec, tmp_path / "f.csv")
    assert mem.records() == on_file.records()
    cols, rows = read_rows(tmp_path / "f.csv")
    assert [r["key"] for r in rows] == [r["key"] for r in mem.records()]
    values = mem.values()  # [p, size]
    assert values.shape == (2, 5)
    for i, p in enumerate((0.01, 0.1)):
        np.testing.assert_allclose(values[i], _fluid(p, range(1, 6)), rtol=1e-12)
    data = mem.to_dict()
    assert json.loads(json.dumps(data))["rows"][3]["size_packets"] == 4 and data["shape"] == [2, 5]


def test_to_frame_is_the_records_as_a_dataframe():
    pytest.importorskip("pandas")  # an optional extra (pip install 'latency_model[pandas]')
    mem = run_sweep(SweepSpec({"p": [0.01, 0.1], "size_packets": range(1, 6)}))
    frame = mem.to_frame()
    assert list(frame.columns) == list(mem.columns) and len(frame) == 10
    assert frame["expected_latency_s"].to_numpy().reshape(2, 5).tolist() == mem.values().tolist()


def test_to_frame_without_pandas_says_how_to_get_it(monkeypatch):
    import sys

    mem = run_sweep(SweepSpec({"p": [0.01], "size_packets": [1]}))
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    with pytest.raises(ImportError, match="pip install"):
        mem.to_frame()


def test_values_asks_which_row_where_a_point_has_several(tmp_path):
    rep = run_sweep(SweepSpec({"p": [0.05], "size_packets": [2, 3]}, what="both", runs=30))
    with pytest.raises(ValueError, match="several rows per point"):
        rep.values()
    assert rep.values(source="model").shape == rep.values(source="simulation").shape == (1, 2)
    with pytest.raises(ValueError, match="column must be one of"):
        rep.values("latency")


def test_evaluate_points_takes_a_salib_sample_as_it_is_and_keeps_its_order():
    problem = {"num_vars": 2, "names": ["p", "size_packets"], "bounds": [[0.005, 0.2], [1, 30]]}
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.uniform(0.005, 0.2, 12), rng.integers(1, 31, 12).astype(float)])  # as SALib gives
    rep = lm.evaluate_points(X, names=problem)
    Y = rep.values()
    assert Y.shape == (12,) and rep.shape == (12,)
    expect = np.array([_fluid(p, [s])[0] for p, s in X])
    np.testing.assert_allclose(Y, expect, rtol=1e-12)


def test_points_as_dicts_or_a_dataframe_give_the_same_rows():
    pd = pytest.importorskip("pandas")

    pts = [{"p": 0.02, "size_packets": 4, "variant": "lt"}, {"p": 0.02, "size_packets": 9, "variant": "newreno"},
           {"p": 0.05, "size_packets": 4, "variant": "lt"}]
    a = lm.evaluate_points(pts)
    b = lm.evaluate_points(pd.DataFrame(pts))
    assert a.records() == b.records()
    np.testing.assert_allclose(a.values(), [_fluid(0.02, [4], "lt")[0], _fluid(0.02, [9])[0],
                                            _fluid(0.05, [4], "lt")[0]], rtol=1e-12)


def test_a_simulated_point_i_draws_from_child_i_of_the_root_seed():
    pts = [{"p": 0.1, "size_packets": 6}, {"p": 0.05, "size_packets": 3}]
    rep = lm.evaluate_points(pts, what="simulation", runs=40, seed=7, engine="python")
    params = TcpParams(p=0.05)
    child = np.random.SeedSequence(7, spawn_key=(1,))
    samples = run_many(params, 1500, child.spawn(40), lm.SimConfig(), engine="python")
    mean, _ = mean_ci(samples[:, OUT_FIELDS.index("completion_s")])
    assert rep.values()[1] == mean


def test_a_design_on_file_resumes(tmp_path):
    pts = [{"p": 0.02, "size_packets": 4}, {"p": 0.03, "size_packets": 2}]
    first = lm.evaluate_points(pts, out=tmp_path / "d.csv")
    again = lm.evaluate_points(pts, out=tmp_path / "d.csv")
    assert (again.rows_resumed, again.rows_computed) == (2, 0) and again.records() == first.records()


@pytest.mark.parametrize("points, names, match", [
    ([{"p": 0.1, "size_packets": 2}, {"p": 0.1, "size_packets": 2}], None, r"points\[0\] and points\[1\] are the same"),
    ([{"p": 0.1}], None, "each point needs a size"),
    (np.zeros((3, 2)), ["p"], "one name per column"),
    (np.zeros(3), ["p"], "2-D array"),
    ([{"p": 0.1, "size_packets": 2}, {"w0": 2, "size_packets": 2}], None, "same parameters"),
    ([{"p": 2.0, "size_packets": 2}], None, "p must be"),
])
def test_bad_designs_are_one_value_error(points, names, match):
    with pytest.raises(ValueError, match=match):
        lm.evaluate_points(points, names=names)


def test_cli_points_file_prints_csv_on_stdout(tmp_path, capsys):
    pts = tmp_path / "pts.csv"
    pts.write_text("p,size-packets\n0.02,4\n0.05,2\n")
    code, out, err = run(capsys, "sweep", "--points", pts, "--out", "-", "--jobs", 1)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [float(r["expected_latency_s"]) for r in rows] == pytest.approx(
        [_fluid(0.02, [4])[0], _fluid(0.05, [2])[0]], rel=1e-12)
    assert "row_crc32" not in rows[0] and sorted(p.name for p in tmp_path.iterdir()) == ["pts.csv"]


def test_cli_json_on_stdout_and_with_a_file(tmp_path, capsys):
    argv = ["sweep", "--param", "p=0.02", "--param", "size-packets=1,2", "--jobs", 1]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["size_packets"] for r in data["rows"]] == [1, 2] and data["shape"] == [1, 2]
    code, out2, err = run(capsys, *argv, "--json", "--out", tmp_path / "s.csv")
    assert code == 0 and "wrote" in err and json.loads(out2)["rows"] == data["rows"]


@pytest.mark.parametrize("argv, needle", [
    (["--out", "s.json"], "--out s.json names a json file"),
    (["--out", "s.tsv"], "names a tsv file"),
    ([], "give --out FILE"),
    (["--out", "-", "--json"], "both print the table on stdout"),
    (["--out", "-", "--force"], "--force: reads with --out FILE only"),
    (["--json", "--flush-every", "5"], "--flush-every-s: reads with --out FILE only"),
])
def test_cli_refuses_outputs_it_would_not_write_as_named(tmp_path, capsys, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    refused(capsys, ["sweep", "--param", "p=0.02", "--param", "size-packets=1", *argv], needle)
    assert list(tmp_path.iterdir()) == []


def test_cli_points_errors_name_the_file_and_line(tmp_path, capsys):
    pts = tmp_path / "p.csv"
    pts.write_text("p,size-packets\n0.02,4\n0.02,4\n")
    refused(capsys, ["sweep", "--points", pts, "--out", "-"], "--points", "line 2 and line 3 are the same point")
    pts.write_text("p,size-packets\n0.02,4,9\n")
    refused(capsys, ["sweep", "--points", pts, "--out", "-"], "line 2: more values than names")
    refused(capsys, ["sweep", "--points", pts, "--param", "p=0.1", "--out", "-"], "only --param model=NAMES")


def test_workers_is_a_hidden_alias_of_jobs(tmp_path, capsys):
    code, out, err = run(capsys, "sweep", "--param", "p=0.02", "--param", "size-packets=1", "--out", "-",
                         "--workers", 1)
    assert code == 0, err
    from latency_model.cli import main

    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = capsys.readouterr().out
    assert "--jobs" in text and "--workers" not in text
