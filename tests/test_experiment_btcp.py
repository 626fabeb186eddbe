"""Burst TCP experiment runner and its CLI (`latency-model experiment btcp`)."""

from __future__ import annotations

import csv
import json
import math

import pytest

from latency_model.cli import main
from latency_model.experiments.btcp import BtcpExperiment, ci95, run_btcp
from latency_model.sim.scenario import Scenario, random_flows, run
from latency_model.sim.sizes import ParetoSizes

SMALL = dict(scale=0.08, seeds=2, seed=3)


def test_ci95_matches_student_t_by_hand():
    m, lo, hi = ci95([1.0, 2.0, 3.0])
    # mean 2, s = 1, t_{0.975, 2} = 4.302653, half = 4.302653 / sqrt(3)
    assert m == 2.0
    assert hi - m == pytest.approx(4.302652729749464 / math.sqrt(3), rel=1e-12)
    assert m - lo == pytest.approx(hi - m)
    assert math.isnan(ci95([5.0])[1]) and math.isnan(ci95([])[0])


def test_experiment_scales_flows_and_time_together():
    ex = BtcpExperiment(scale=0.2)
    assert (ex.n_flows, ex.start_window_s, ex.horizon_s) == (50, 180.0, 200.0)
    full = BtcpExperiment(scale=1.0, flows_per_node=250)
    assert (full.n_flows, full.start_window_s, full.horizon_s) == (1250, 900.0, 1000.0)
    assert full.topology().queue_packets == 7 and full.topology().bottleneck_rate_bps == 1.5e6


def test_run_btcp_rows_are_the_scenario_runs_summarised():
    ex = BtcpExperiment(**SMALL)
    res = run_btcp(ex)
    assert [(r["seed_index"], r["variant"]) for r in res.per_seed] == [
        (i, v) for i in range(2) for v in ("newreno", "btcp4", "btcp8")]
    # Recompute one row from the scenario API directly.
    import numpy as np

    child = np.random.SeedSequence(3).spawn(2)[1]
    flows = random_flows(ex.n_flows, ParetoSizes(4.0, 1.2), ex.tcp("btcp8"),
                         start_window_s=ex.start_window_s, nodes=5, seed=child)
    r = run(Scenario(flows=flows, topology=ex.topology(), config=ex.config(), horizon_s=ex.horizon_s))
    mice = [f for f in r.flows if f.size_bytes < 32 * 1024 and f.completed]
    row = res.per_seed[5]
    assert row["mice_mean_s"] == pytest.approx(sum(f.completion_s for f in mice) / len(mice), rel=1e-12)
    base = res.per_seed[3]["mice_mean_s"]
    assert row["mice_time_reduction_pct"] == pytest.approx(100 * (1 - row["mice_mean_s"] / base))
    s = {x["variant"]: x for x in res.summary}
    vals = [x["mice_mean_s"] for x in res.per_seed if x["variant"] == "btcp8"]
    assert s["btcp8"]["mice_mean_s"] == pytest.approx(sum(vals) / 2)
    assert s["btcp8"]["mice_mean_s_lo"] < s["btcp8"]["mice_mean_s"] < s["btcp8"]["mice_mean_s_hi"]


def test_cli_experiment_btcp_json_contract_and_export(capsys, tmp_path):
    code = main(["experiment", "btcp", "--scale", "0.08", "--seeds", "2", "--seed", "3",
                 "--json", "--out", str(tmp_path)])
    printed, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(printed)
    # The contract: experiment, params, series, claims [{claim, ours, paper, agrees}].
    assert d["experiment"] == "btcp" and d["params"]["n_flows"] == 20
    assert [r["variant"] for r in d["series"]] == ["newreno", "btcp4", "btcp8"]
    assert all(set(c) == {"claim", "ours", "paper", "agrees"} and isinstance(c["agrees"], bool)
               for c in d["claims"])
    assert d["per_seed"][0]["mice_time_reduction_pct"] is None  # NewReno against itself
    assert json.loads((tmp_path / "btcp.json").read_text()) == d
    rows = list(csv.DictReader((tmp_path / "btcp.csv").open()))
    assert [r["variant"] for r in rows] == ["newreno", "btcp4", "btcp8"]
    assert float(rows[1]["mice_mean_s"]) == pytest.approx(d["series"][1]["mice_mean_s"])
    assert len(list(csv.DictReader((tmp_path / "btcp_per_seed.csv").open()))) == 6
    assert (tmp_path / "btcp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Same seed, same numbers; the text table carries the paper's claim.
    code = main(["experiment", "btcp", "--scale", "0.08", "--seeds", "2", "--seed", "3",
                 "--variants", "newreno"])
    text, _ = capsys.readouterr()
    assert code == 0 and "38%" in text and "NewReno" in text
    assert f"{d['series'][0]['mice_mean_s']:.3f}" in text


def test_claims_follow_the_stated_rules():
    res = run_btcp(BtcpExperiment(scale=0.08, seeds=3, seed=5))
    by = {r["variant"]: r for r in res.summary}
    claims = {c["claim"]: c for c in res.claims}
    faster4 = next(c for k, c in claims.items() if k.startswith("B-TCP(4) mean mice transfer time below"))
    assert faster4["agrees"] == (by["btcp4"]["mice_time_reduction_pct_lo"] > 0)
    number4 = next(c for k, c in claims.items() if k.startswith("B-TCP(4) mice transfer time reduction"))
    lo, hi = number4["ours"]["ci95"]
    assert number4["paper"] == 38.0 and number4["agrees"] == (lo <= 38.0 <= hi)
    more = next(c for k, c in claims.items() if k.startswith("B-TCP(4) loses"))
    diffs = [r["mice_loss_diff_pct"] for r in res.per_seed if r["variant"] == "btcp4"]
    assert more["ours"]["mean"] == pytest.approx(sum(diffs) / 3)
    # Away from the paper's loads only the direction claims remain.
    off = run_btcp(BtcpExperiment(scale=0.08, seeds=2, flows_per_node=20))
    assert all(not isinstance(c["paper"], float) for c in off.claims)


@pytest.mark.parametrize("argv, needle", [
    (["--scale", "0"], "scale"),
    (["--seeds", "0"], "seeds"),
    (["--variants", "cubic"], "variants"),
    (["--queue-packets", "0"], "--queue-packets"),
    (["--out", __file__], "--out"),
])
def test_cli_experiment_btcp_errors_are_one_line(capsys, argv, needle):
    code = main(["experiment", "btcp", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("latency-model: error:") and needle in err and err.count("\n") == 1
