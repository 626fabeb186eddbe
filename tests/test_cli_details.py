"""CLI details: plot on any tidy CSV and on a cut file, flags named in the experiments' errors,
--initial-rto-s refused where the ns-3 sender never reads it, long-work warnings."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from latency_model.cli import main

from _cli import refused, run


@pytest.fixture(scope="module")
def modern_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("modern")
    code = main(["experiment", "modern", "--quick", "--variants", "newreno,lt", "--iw", "2", "--p", "0.1",
                 "--size-packets", "2:5", "--runs", "20", "--out", str(out)])
    assert code == 0
    return out / "modern.csv"


def test_plot_draws_any_tidy_csv_by_its_columns(modern_csv, tmp_path, capsys):
    from latency_model.studies.plots import columns_rows

    capsys.readouterr()
    stem = tmp_path / "m"
    code, out, err = run(capsys, "plot", modern_csv, "--x", "size_packets", "--y", "sim_mean_s",
                         "--hue", "variant", "--out", stem, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["written"] == [str(stem) + ".png", str(stem) + ".svg"]
    assert (tmp_path / "m.png").stat().st_size > 0
    series = columns_rows(modern_csv, "size_packets", "sim_mean_s", "variant")
    assert sorted(series) == ["lt", "newreno"] and [x for x, _ in series["lt"]] == [2, 3, 4, 5]
    svg = (tmp_path / "m.svg").read_text()
    assert "variant = lt" in svg and "variant = newreno" in svg  # one legend entry per value


def test_plot_names_what_is_left_free_and_what_is_missing(modern_csv, capsys):
    line = refused(capsys, ["plot", modern_csv, "--x", "size_packets", "--y", "sim_mean_s"],
                   "two rows at size_packets = 2", "variant", "--where", "--hue")
    assert str(modern_csv) in line
    refused(capsys, ["plot", modern_csv, "--x", "size_packets", "--y", "nope"], "'nope' is not in", "sim_mean_s")
    refused(capsys, ["plot", modern_csv], "--x and --y")
    refused(capsys, ["plot", modern_csv, "--x", "size_packets"], "--x and --y together")
    refused(capsys, ["plot", modern_csv, "--hue", "variant"], "--hue", "give --x and --y")
    code, _, _ = run(capsys, "plot", modern_csv, "--x", "size_packets", "--y", "sim_mean_s",
                     "--where", "variant=lt", "--out", modern_csv.parent / "lt")
    assert code == 0


@pytest.mark.parametrize("cut", [0.5, 0.75, 0.999])
def test_plot_of_a_csv_cut_mid_row_names_the_file(modern_csv, tmp_path, capsys, cut):
    text = modern_csv.read_text()
    body = text[:int(len(text) * cut)]
    if body.endswith("\n"):
        body = body[:-2]
    bad = tmp_path / "cut.csv"
    bad.write_text(body)
    line = refused(capsys, ["plot", bad, "--x", "size_packets", "--y", "sim_mean_s", "--hue", "variant"],
                   str(bad), "fields where the header has")
    assert "line" in line


def test_plot_of_a_figure_csv_cut_mid_row_names_the_file(tmp_path, capsys):
    bad = tmp_path / "fig4.csv"
    bad.write_text("figure,series,k,source,size_packets,size_bytes,value,ci_low,ci_high,n\n"
                   "fig4,newreno,0,model,1,500,0.0455,,,\nfig4,newreno,0,mo")
    refused(capsys, ["plot", bad], str(bad), "line 3")


def test_experiment_errors_name_the_flag_typed(capsys):
    refused(capsys, ["experiment", "ngwa", "--w-max-bytes", "99999999999999999999"], "--w-max-bytes")
    for value in ("1e305", "1e-310"):
        line = refused(capsys, ["experiment", "ass", "--access-rate-mbps", value], "--access-rate-mbps")
        assert "access_rate_bps" not in line
        refused(capsys, ["experiment", "ass", "--bottlenecks-mbps", value], "--bottlenecks-mbps")


def test_initial_rto_is_refused_with_the_ns3_sender(capsys):
    line = refused(capsys, ["simulate", "--stack", "ns3", "--size-packets", "4", "--initial-rto-s", "3"],
                   "--initial-rto-s", "--stack ns3")
    assert "handshake" in line
    refused(capsys, ["simulate", "--sender", "ns3", "--size-packets", "4", "--initial-rto-s", "3"],
            "--initial-rto-s", "--sender ns3")
    # the RFC sender on ns-3's path reads it
    code, _, err = run(capsys, "simulate", "--stack", "ns3", "--sender", "rfc", "--size-packets", "4",
                       "--initial-rto-s", "3", "--runs", "20")
    assert code == 0, err


def test_initial_rto_changes_nothing_in_the_ns3_sender():
    """Why it is refused: the ns-3 sender's first RTO comes from the SYN's sample."""
    from latency_model import TcpParams
    from latency_model.sim import SimConfig
    from latency_model.sim.montecarlo import simulate

    p = TcpParams(p=0.2)
    a = simulate(p, size_packets=6, runs=300, rng=1, config=SimConfig.profile("ns3"))
    b = simulate(p, size_packets=6, runs=300, rng=1, config=SimConfig.profile("ns3", initial_rto_s=7.0))
    assert (a.results[0].samples == b.results[0].samples).all()


def test_a_long_validate_or_reproduce_warns(tmp_path, capsys):
    from latency_model.cli.repro import _warn_long
    from latency_model.studies.figures import REPRODUCE_SECONDS

    args = argparse.Namespace(command="validate", quick=False, stack="rfc", out=str(tmp_path), force=False)
    _warn_long(args, 2)
    err = capsys.readouterr().err
    assert err.startswith("latency-model: warning: validate") and "may take about 2 min" in err
    assert REPRODUCE_SECONDS["full"] >= 60 > REPRODUCE_SECONDS["quick"]
    _warn_long(argparse.Namespace(command="validate", quick=True, stack="rfc", out=str(tmp_path), force=False), 2)
    assert capsys.readouterr().err == ""


def test_accuracy_progress_lines_reach_the_model_calls(capsys):
    from latency_model.studies.accuracy import _progress_line

    line = _progress_line(True)
    line("accuracy map: 3 simulated cells")
    line("accuracy map: 1 model calls computed", every_s=5.0)
    line("accuracy map: 2 model calls computed", every_s=5.0)  # within 5 s of the last: not shown
    err = capsys.readouterr().err.splitlines()
    assert [e.rsplit(",", 1)[0] for e in err] == ["accuracy map: 3 simulated cells",
                                                  "accuracy map: 1 model calls computed"]
    _progress_line(False)("x")
    assert capsys.readouterr().err == ""


def test_reproduce_json_and_progress_to_the_end(tmp_path, capsys, monkeypatch):
    from latency_model.studies import reproduce
    from latency_model.studies.figures import Budget

    monkeypatch.setattr(reproduce, "QUICK_BUDGET", Budget(model_sizes_packets=(2.0, 5.0), sim_sizes_packets=(2, 5),
                                                          extra_sim_sizes_packets=(5,), runs=30, seed=3,
                                                          engine="python"))
    code, out, err = run(capsys, "reproduce", "--quick", "--out", tmp_path, "--jobs", "1", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert {"files", "claims", "validation", "pieces_computed", "seconds_total"} <= set(d)
    assert all(os.path.exists(p) for p in d["files"])
    # every phase after the pieces says it has started, up to the heat maps
    marks = ["pieces computed", "reproduce: drawing ", "accuracy map: ", "now the models' calls",
             "model calls computed", "reproduce: drawing the accuracy heat maps"]
    at = [err.index(m) for m in marks]
    assert at == sorted(at), err
