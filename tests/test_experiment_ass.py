"""ASS experiment runner and its CLI (`latency-model experiment ass`)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from latency_model.cli import main
from latency_model.experiments.ass import TIE, AssExperiment, run_ass, run_case
from latency_model.growth import AssRule, LssRule
from latency_model.sim.scenario import Flow, Scenario, run

# 5 s runs on the 0.3 Mb/s path: a few hundred packets each.
SMALL = dict(scale=0.02, bottlenecks_mbps=(0.3,), bins=10)


def test_setup_follows_the_paper():
    ex = AssExperiment(scale=1.0)
    assert ex.horizon_s == 250.0 and ex.queues == (5, 15, 25, 50, 100, 200)
    assert ex.bottlenecks_mbps == (0.3, 10.0) and ex.initial_windows == (1, 4)
    topo = ex.topology(0.3, 25)
    # n0 - n1 - n2 - n3, 10 ms per link; the reverse port at the bottleneck rate.
    assert (topo.nodes, topo.access_delay_s, topo.bottleneck_delay_s) == (1, 0.01, 0.01)
    assert (topo.bottleneck_rate_bps, topo.queue_packets, topo.reverse_rate_bps) == (0.3e6, 25, 0.3e6)
    assert isinstance(ex.tcp(1, 1).rule, LssRule) and ex.tcp(1, 1).rule.max_ssthresh == 100
    assert ex.tcp(3, 4).rule == AssRule(algorithm=3) and ex.tcp(3, 4).w0 == 4
    assert AssExperiment(reverse_queue_packets=None).topology(10.0, 5).reverse_rate_bps is None
    assert ex.to_dict()["rfc3390_iw_packets"] == 4  # min(4 MSS, max(2 MSS, 4380 B)) at MSS 1000


def test_run_case_measures_match_the_scenario_run():
    ex = AssExperiment(**SMALL)
    row = run_case(ex, 0.3, 1, 25, 2)
    tcp = ex.tcp(2, 1)
    res = run(Scenario(flows=(Flow(0.0, ex.flow_bytes(0.3), tcp),), topology=ex.topology(0.3, 25),
                       config=ex.config(), horizon_s=5.0, record_cwnd=True))
    cw = res.cwnd[0]
    assert row["throughput_kbps"] == pytest.approx(8 * cw.acked_at(5.0) / 5.0 / 1e3, rel=1e-12)
    assert row["packets_lost"] == res.flows[0].packets_lost > 0
    assert not res.flows[0].completed  # an FTP source: never runs out of data
    # Acknowledged payload cannot beat the bottleneck's payload capacity (1000 of 1040 B).
    assert row["throughput_kbps"] <= 300.0 * 1000 / 1040
    # The binned series add up to the run's total; cwnd is sampled at the bin ends.
    assert len(row["time_s"]) == len(row["cwnd_packets"]) == len(row["throughput_series_kbps"]) == 10
    assert np.sum(row["throughput_series_kbps"]) * 0.5 == pytest.approx(row["throughput_kbps"] * 5.0)
    assert row["cwnd_packets"][-1] == cw.cwnd_at(5.0)
    assert row["max_cwnd_packets"] == cw.cwnd_packets.max()


def test_faster_slow_start_overflows_the_queue_no_later():
    # Before its first loss Algorithm 2's window is never below Algorithm 1's (+3 vs +1 per
    # ACK from the same start), so the queue overflows no later.
    ex = AssExperiment(**SMALL)
    for q in (5, 25):
        a1, a2 = run_case(ex, 0.3, 1, q, 1), run_case(ex, 0.3, 1, q, 2)
        assert a2["first_loss_s"] <= a1["first_loss_s"]


def test_claims_follow_the_stated_rules():
    res = run_ass(AssExperiment(queues=(5,), **SMALL))
    assert len(res.runs) == 8  # IW 1 and 4 x Algorithms 1-4
    claims = {c["claim"]: c for c in res.claims}
    t = {(r["iw_packets"], r["algorithm"]): r["throughput_kbps"] for r in res.runs}
    best3 = claims["0.3 Mb/s, IW 1, IFQ 5: Algorithm 3 gets the best throughput"]
    top = max(t[(1, a)] for a in range(1, 5))
    assert best3["agrees"] == (t[(1, 3)] >= (1 - TIE) * top)
    assert best3["ours"]["best"] == max(range(1, 5), key=lambda a: t[(1, a)])
    worst2 = claims["0.3 Mb/s, IW 4, IFQ 5: Algorithm 2 gets the worst throughput"]
    assert worst2["agrees"] == (t[(4, 2)] <= (1 + TIE) * min(t[(4, a)] for a in range(1, 5)))
    gain = claims["Algorithm 2 vs 1, IW 1, mean throughput gain over bottlenecks and IFQs, %"]
    assert gain["ours"] == pytest.approx(100 * (t[(1, 2)] / t[(1, 1)] - 1))
    assert gain["agrees"] == (gain["ours"] > 100 * TIE)
    assert all(set(c) == {"claim", "ours", "paper", "agrees"} for c in res.claims)
    # Without all four algorithms there is nothing to rank.
    assert run_ass(AssExperiment(queues=(5,), algorithms=(1, 2), **SMALL)).claims == []


def test_result_does_not_depend_on_jobs():
    ex = AssExperiment(queues=(15,), algorithms=(1, 4), initial_windows=(1,), **SMALL)
    assert run_ass(ex, jobs=2).runs == run_ass(ex).runs


def test_cli_experiment_ass_json_contract_and_export(capsys, tmp_path):
    argv = ["experiment", "ass", "--scale", "0.02", "--bottlenecks-mbps", "0.3", "--queues", "25",
            "--bins", "10"]
    code = main(argv + ["--json", "--out", str(tmp_path)])
    printed, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(printed)
    assert d["experiment"] == "ass" and d["params"]["horizon_s"] == 5.0
    assert [(r["iw_packets"], r["queue_packets"], r["algorithm"]) for r in d["series"]] == [
        (w, 25, a) for w in (1, 4) for a in (1, 2, 3, 4)]
    assert d["claims"] and all(set(c) == {"claim", "ours", "paper", "agrees"} and isinstance(c["agrees"], bool)
                               for c in d["claims"])
    assert json.loads((tmp_path / "ass.json").read_text()) == d
    rows = list(csv.DictReader((tmp_path / "ass.csv").open()))
    assert len(rows) == 8 and "time_s" not in rows[0]
    assert float(rows[5]["throughput_kbps"]) == pytest.approx(d["series"][5]["throughput_kbps"])
    ts = list(csv.DictReader((tmp_path / "ass_timeseries.csv").open()))
    assert len(ts) == 80 and float(ts[9]["time_s"]) == pytest.approx(5.0)
    for name in ("ass_cwnd.png", "ass_throughput.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code = main(argv + ["--iw", "1", "--algorithms", "1,2"])
    text, _ = capsys.readouterr()
    assert code == 0 and "IFQ 25" in text and f"{d['series'][1]['throughput_kbps']:.1f}" in text


@pytest.mark.parametrize("argv, needle", [
    (["--queues", "0"], "--queues"),
    (["--queues", "5,x"], "--queues"),
    (["--algorithms", "5"], "--algorithms"),
    (["--algorithms", "1,1"], "--algorithms"),
    (["--iw", "0"], "--iw"),
    (["--bottlenecks-mbps", "-1"], "--bottlenecks-mbps"),
    (["--scale", "0"], "--scale"),
    (["--decrease", "halve"], "--decrease"),
    (["--out", __file__], "--out"),
])
def test_cli_experiment_ass_errors_are_one_line(capsys, argv, needle):
    code = main(["experiment", "ass", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("latency-model: error:") and needle in err and err.count("\n") == 1
