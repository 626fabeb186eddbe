"""NGWA experiment runner and its CLI (`latency-model experiment ngwa`)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from latency_model.cli import main
from latency_model.experiments.ngwa import PAPER_LOST, NgwaExperiment, _scenario, run_ngwa
from latency_model.sim.scenario import run

SMALL = dict(scale=0.01, rounds=2, seed=5)  # 6 s runs


def test_experiment_settings_follow_the_paper():
    ex = NgwaExperiment(scale=1.0)
    assert ex.horizon_s == 600.0  # 10 minutes
    assert ex.queue_packets == 97000 // 1040 == 93  # 97 KB of 1000 B segments + 40 B headers
    tcp = ex.tcp()
    assert tcp.mss_bytes == 1000 and tcp.rwnd * 1000 > ex.w_max_bytes == 65536  # W_max binds
    assert ex.flow_bytes() * 8 > ex.bottleneck_rate_bps * ex.horizon_s  # flows outlast the run
    assert NgwaExperiment(variants=("mode5", "rfc793")).variants == ("rfc793", "mode5")


def test_rows_are_the_scenario_runs_summarised():
    ex = NgwaExperiment(**SMALL, variants=("rfc793", "mode3", "mode6"))
    res = run_ngwa(ex)
    assert [(r["round"], r["variant"]) for r in res.per_round] == [
        (i, v) for i in range(2) for v in ("rfc793", "mode3", "mode6")]
    # Recompute round 1 of mode 3 from the scenario API directly.
    child = np.random.SeedSequence(5).spawn(2)[1]
    sc = _scenario(ex, "mode3", child)
    assert [f.ngwa.name for f in sc.flows] == ["mode3"] * 4 and len(sc.sources) == 1
    r = run(sc)
    row = res.per_round[4]
    assert row["lost"] == int(r.column("packets_lost").sum())
    assert row["triple_dupacks"] == int(r.column("triple_dupacks").sum())
    d = r.column("packets_delivered").astype(float)
    assert row["jain_fairness"] == pytest.approx(d.sum() ** 2 / (4 * (d ** 2).sum()), rel=1e-12)
    s = {x["variant"]: x for x in res.summary}
    vals = [x["lost"] for x in res.per_round if x["variant"] == "mode3"]
    assert s["mode3"]["lost"] == pytest.approx(np.mean(vals)) and s["mode3"]["lost_max"] == max(vals)
    assert s["rfc793"]["paper_lost"] == PAPER_LOST["rfc793"] == 4001
    # Claims: a zero row agrees only if every round lost nothing; a nonzero row if the mean is > 0.
    by = {c["claim"].split(":")[0]: c for c in res.claims if "lost packets per round" in c["claim"]}
    assert by["mode6"]["agrees"] == (s["mode6"]["lost_max"] == 0)
    assert by["rfc793"]["agrees"] == (s["rfc793"]["lost"] > 0)


def test_cli_experiment_ngwa_json_contract_and_export(capsys, tmp_path):
    argv = ["experiment", "ngwa", "--scale", "0.01", "--rounds", "2", "--seed", "5",
            "--variants", "rfc793,mode5"]
    code = main(argv + ["--json", "--out", str(tmp_path)])
    printed, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(printed)
    assert d["experiment"] == "ngwa" and d["params"]["horizon_s"] == pytest.approx(6.0)
    assert [r["variant"] for r in d["series"]] == ["rfc793", "mode5"]
    assert all(set(c) == {"claim", "ours", "paper", "agrees"} and isinstance(c["agrees"], bool)
               for c in d["claims"])
    assert json.loads((tmp_path / "ngwa.json").read_text()) == d
    rows = list(csv.DictReader((tmp_path / "ngwa.csv").open()))
    assert [r["variant"] for r in rows] == ["rfc793", "mode5"]
    assert float(rows[0]["lost"]) == pytest.approx(d["series"][0]["lost"])
    assert len(list(csv.DictReader((tmp_path / "ngwa_per_round.csv").open()))) == 4
    assert (tmp_path / "ngwa.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The text table carries the paper's Table 2 column.
    assert main(argv[:-1] + ["rfc793"]) == 0
    text, _ = capsys.readouterr()
    assert "4001" in text and "rfc793" in text and "claims" in text


@pytest.mark.parametrize("argv, name", [
    (["--queue-bytes", "0"], "queue_bytes"),
    (["--rounds", "0"], "rounds"),
    (["--variants", "mode9"], "variants"),
    (["--alpha", "1.5"], "alpha"),
    (["--scale", "0"], "scale"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, name):
    code = main(["experiment", "ngwa", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("latency-model: error:") and name.replace("_", "") in \
        err.replace("_", "").replace("-", "")


def test_out_must_be_a_directory(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["experiment", "ngwa", "--scale", "0.01", "--rounds", "1", "--out", str(f)]) == 2
    assert "--out must be a directory" in capsys.readouterr().err
