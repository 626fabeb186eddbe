"""`latency-model experiment modern`: Figures 9 and 10 for today's TCP (issue 17)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from latency_model.cli import main
from latency_model.experiments import modern as M
from latency_model.params import TcpParams
from latency_model.sim.config import SimConfig
from latency_model.sim.montecarlo import simulate
from latency_model.sim.transfer import run_transfer

SMALL = dict(variants=("newreno", "proposal", "sack-rack-tlp"), iw_packets=(2,), ps=(0.1,),
             sizes_packets=tuple(range(1, 9)), runs=200, seed=5)


@pytest.fixture(scope="module")
def small():
    return M.run_modern(M.ModernExperiment(**SMALL))


def _row(res, variant, n, iw=2, p=0.1):
    return next(r for r in res.series if r["variant"] == variant and r["size_packets"] == n
                and r["iw_packets"] == iw and r["p"] == p)


def test_series_cells_are_the_simulator_and_model_runs(small):
    assert len(small.series) == 3 * 8 and len(small.summary) == 3
    # A simulated cell is simulate() with the cell's seed: recompute one.
    par = TcpParams(w0=2, p=0.1)
    cfg = SimConfig.profile("rfc", sender="sack", rack_tlp=True, prr="off")
    ref = simulate(par, size_packets=[5], runs=200, seed=M.cell_seed(5, 2, 0.1), config=cfg).results[0]
    row = _row(small, "sack-rack-tlp", 5)
    assert row["sim_mean_s"] == pytest.approx(ref.mean_latency_s, rel=1e-12)
    assert (row["sim_ci_low_s"], row["sim_ci_high_s"]) == pytest.approx(ref.ci95_s, rel=1e-12)
    # The exact L_1: each position dropped once, weighted by (1 - p)^(transmissions - 1).
    runs = [run_transfer(par.replace(p=0.0), size_packets=5, config=cfg, drops=[i]) for i in range(5)]
    w = np.array([0.9 ** (r.data_packets_sent - 1) for r in runs])
    t = np.array([r.completion_s for r in runs])
    assert row["sim_l1_s"] == pytest.approx(float(w @ t / w.sum()), rel=1e-12)
    assert row["sim_rto_positions"] == sum(r.timeouts > 0 for r in runs) == 0
    assert row["sim_probe_positions"] == 1  # the last packet: a tail loss probe
    # Cuts against NewReno, from the same rows.
    base = _row(small, "newreno", 5)
    assert row["sim_cut_l1"] == pytest.approx(1 - row["sim_l1_s"] / base["sim_l1_s"])
    assert row["model_cut_expected"] == pytest.approx(1 - row["model_expected_s"] / base["model_expected_s"])
    assert row["sim_cut_expected_ci_low"] < row["sim_cut_expected"] < row["sim_cut_expected_ci_high"]
    assert base["sim_cut_l1"] is None  # NewReno against itself


def test_exact_single_loss_l1_matches_the_monte_carlo_within_3_se():
    # The Monte Carlo's mean over runs with exactly one lost transmission estimates the same
    # L_1 as the weighted single-loss runs; 3 standard errors (0.3% two-sided false alarm).
    ex = M.ModernExperiment(variants=("newreno", "sack-rack-tlp"), iw_packets=(2,), ps=(0.1,),
                            sizes_packets=(6, 12), runs=3000, seed=9)
    res = M.run_modern(ex)
    for r in res.series:
        se = (r["sim_l1_mc_ci_high_s"] - r["sim_l1_mc_s"]) / 1.96
        assert r["sim_l1_mc_n"] > 300
        assert abs(r["sim_l1_mc_s"] - r["sim_l1_s"]) <= 3 * se, r


def test_claims_are_computed_from_the_series_and_summary(small):
    claims = small.claims
    assert claims == M.claims_from(small.experiment, small.series, small.summary)
    rto = {c["claim"].split(",")[0]: c for c in claims if "ends in an RTO" in c["claim"]}
    # NewReno: every size has RTO positions (the last dup_t packets); RACK-TLP: none.
    nr = [r for r in small.series if r["variant"] == "newreno"]
    assert rto["NewReno"]["simulation"]["sizes"] == "1-8"
    assert rto["NewReno"]["simulation"]["positions"] == sum(r["sim_rto_positions"] for r in nr)
    assert rto["SACK+RACK-TLP"]["simulation"]["sizes"] == "none"
    assert rto["SACK+RACK-TLP"]["simulation"]["probe_sizes"] == "1-8"
    assert rto["SACK+RACK-TLP"]["agrees"] is True
    # The share of the proposal's gain, recomputed from the series.
    share = next(c for c in claims if c["claim"].startswith("SACK+RACK-TLP gives") and "expected" in c["claim"])
    gain = {v: np.mean([_row(small, "newreno", n)["sim_mean_s"] - _row(small, v, n)["sim_mean_s"]
                        for n in range(1, 9)]) for v in ("proposal", "sack-rack-tlp")}
    assert share["simulation"]["mean"] == pytest.approx(gain["sack-rack-tlp"] / gain["proposal"], rel=1e-9)
    lo, hi = share["simulation"]["ci95"]
    assert lo < share["simulation"]["mean"] < hi
    assert share["agrees"] == (lo <= share["model"] <= hi)
    l1 = next(c for c in claims if c["claim"].startswith("SACK+RACK-TLP gives") and "one loss" in c["claim"])
    g1 = {v: np.mean([_row(small, "newreno", n)["sim_l1_s"] - _row(small, v, n)["sim_l1_s"]
                      for n in range(1, 9)]) for v in ("proposal", "sack-rack-tlp")}
    assert l1["simulation"] == pytest.approx(g1["sack-rack-tlp"] / g1["proposal"], rel=1e-9)
    fig10 = next(c for c in claims if c["claim"].startswith("Figure 10"))
    assert fig10["simulation"] == _row(small, "proposal", 8)["sim_cut_l1"] and fig10["paper"] == 0.4
    assert fig10["agrees"] == (abs(fig10["simulation"] - 0.4) <= 0.05)


def test_compact_sizes():
    assert M.compact_sizes([]) == "none"
    assert M.compact_sizes([3, 1, 2, 7, 9, 10]) == "1-3, 7, 9-10"


def test_results_do_not_depend_on_workers_or_other_cells():
    kw = dict(variants=("newreno", "sack-rack-tlp"), iw_packets=(10,), sizes_packets=(2, 5), runs=40, seed=3)
    one = M.run_modern(M.ModernExperiment(ps=(0.05,), workers=1, **kw))
    two = M.run_modern(M.ModernExperiment(ps=(0.05, 0.1), workers=2, **kw))
    same = [r for r in two.series if r["p"] == 0.05]
    assert json.dumps(one.series) == json.dumps(same)


def test_stack_and_recovery_options_that_cannot_combine():
    with pytest.raises(ValueError, match="proposal cannot combine with stack ns3"):
        M.ModernExperiment(stack="ns3")
    with pytest.raises(ValueError, match="sack-rack-tlp cannot combine with stack ns3"):
        M.ModernExperiment(stack="ns3", variants=("newreno", "sack-rack-tlp"))
    with pytest.raises(ValueError, match="proposal cannot combine with stack ns3"):
        M.ModernExperiment(stack="ns3", variants=("newreno", "proposal"))
    with pytest.raises(ValueError, match="lt cannot combine with stack ns3"):
        M.ModernExperiment(stack="ns3", variants=("newreno", "lt"), lt_mode="paper")
    ok = M.ModernExperiment(stack="ns3", variants=("newreno", "lt"))
    assert ok.to_dict()["sim_configs"]["lt"]["sender"] == "ns3"
    linux = M.ModernExperiment(stack="linux")
    assert linux.to_dict()["model_rto_s"] == pytest.approx(0.3)  # RTT + max(2 RTT, 200 ms)
    assert linux.to_dict()["sim_configs"]["sack-rack-tlp-prr"]["prr"] == "ssrb"
    assert linux.to_dict()["sim_configs"]["sack-rack-tlp"]["prr"] == "off"
    for bad, match in ((dict(variants=("bbr",)), "variants"), (dict(ps=(0.0,)), "ps"),
                       (dict(iw_packets=(0,)), "iw_packets"), (dict(runs=1), "runs"),
                       (dict(prr="off"), "prr"), (dict(sizes_packets=()), "sizes_packets")):
        with pytest.raises(ValueError, match=match):
            M.ModernExperiment(**bad)


def test_cli_json_contract_and_files(capsys, tmp_path):
    args = ["experiment", "modern", "--variants", "newreno,lt,proposal,sack-rack-tlp", "--iw", "2",
            "--p", "0.1", "--size-packets", "1:8", "--runs", "60", "--seed", "2"]
    code = main(args + ["--json", "--out", str(tmp_path)])
    printed, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(printed)
    assert d["experiment"] == "modern" and {"params", "series", "claims", "summary"} <= set(d)
    assert d["params"]["sizes_packets"] == list(range(1, 9)) and d["params"]["runs"] == 60
    assert all({"claim", "model", "simulation", "paper", "agrees", "rule"} == set(c) for c in d["claims"])
    assert all(isinstance(c["agrees"], bool) for c in d["claims"])
    assert any(c["claim"].startswith("Figure 9") for c in d["claims"])
    assert json.loads((tmp_path / "modern.json").read_text()) == d
    rows = list(csv.DictReader((tmp_path / "modern.csv").open()))
    assert len(rows) == 5 * 8 and rows[0]["variant"] == "newreno"  # + size-based (Figure 9)
    assert float(rows[9]["sim_mean_s"]) == pytest.approx(d["series"][9]["sim_mean_s"])
    assert len(list(csv.DictReader((tmp_path / "modern_summary.csv").open()))) == 5
    # size-based: the proposal below 10 KB (20 packets), LT above; here all 8 sizes are below.
    sb = [r for r in d["series"] if r["variant"] == "size-based"]
    prop = [r for r in d["series"] if r["variant"] == "proposal"]
    assert [r["sim_mean_s"] for r in sb] == [r["sim_mean_s"] for r in prop]
    assert (tmp_path / "modern.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(args) == 0
    text, _ = capsys.readouterr()
    assert "IW 2, p = 0.1" in text and "claims agree" in text


@pytest.mark.parametrize("argv, flag", [
    (["--stack", "ns3"], "--variants proposal cannot combine with stack ns3"),
    (["--stack", "ns3", "--variants", "lt,sack-rack-tlp-prr"], "--variants sack-rack-tlp-prr cannot combine"),
    (["--prr", "crb", "--variants", "newreno,sack-rack-tlp"], "--prr applies to variant sack-rack-tlp-prr"),
    (["--prr", "off"], "--prr must be one of ssrb, crb"),
    (["--lt-mode", "paper", "--variants", "newreno,er"], "--lt-mode applies to variants lt and proposal"),
    (["--lt-mode", "paper", "--stack", "ns3", "--variants", "newreno,lt"], "--variants lt cannot combine"),
    (["--variants", "cubic"], "--variants must be a non-empty subset"),
    (["--p", "0"], "--p must be"),
    (["--iw", "2.5"], "--iw must be an integer, list or range"),
    (["--size-packets", "1.5"], "--size-packets must give whole packets"),
    (["--runs", "1"], "--runs must be"),
    (["--workers", "0"], "--jobs must be"),
    (["--stack", "bsd"], "--stack must be one of"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, flag):
    code = main(["experiment", "modern", "--runs", "2", "--size-packets", "2"] + argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("latency-model: error: ") and flag in err, err


def test_model_params_per_stack():
    base = TcpParams()
    assert M.model_params(base, "rfc") is base and M.model_params(base, "ns3").rto == 1.0
    assert M.model_params(base, "linux").rto == pytest.approx(0.3)
    assert M.cell_seed(1, 2, 0.1) == M.cell_seed(1, 2.0, 0.1) != M.cell_seed(1, 10, 0.1)
    assert not math.isnan(M.cell_seed(0, 2, 0.01))


def test_size_based_is_the_proposal_below_10kb_and_lt_from_there():
    res = M.run_modern(M.ModernExperiment(variants=("newreno", "lt", "proposal"), iw_packets=(2,), ps=(0.05,),
                                          sizes_packets=(19, 20), runs=20, seed=4))
    pick = {n: _row(res, "size-based", n, p=0.05) for n in (19, 20)}
    assert pick[19]["sim_mean_s"] == _row(res, "proposal", 19, p=0.05)["sim_mean_s"]  # 9500 B < 10 KB
    assert pick[19]["model_l1_s"] == _row(res, "proposal", 19, p=0.05)["model_l1_s"]
    assert pick[20]["sim_l1_s"] == _row(res, "lt", 20, p=0.05)["sim_l1_s"]  # 10000 B: LT
    assert pick[20]["model_expected_s"] == _row(res, "lt", 20, p=0.05)["model_expected_s"]
    sb = next(s for s in res.summary if s["variant"] == "size-based")
    assert sb["sim_gain_vs_lt_ci_low_s"] <= sb["sim_gain_vs_lt_s"] <= sb["sim_gain_vs_lt_ci_high_s"]
