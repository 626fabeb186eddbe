"""SmoothTCP experiment runner and its CLI (`latency-model experiment smoothtcp`)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from latency_model.cli import main
from latency_model.experiments.smoothtcp import PAPER_BYTES, SmoothTcpExperiment, run_smoothtcp
from latency_model.sim.scenario import run

SMALL = dict(scale=0.1)  # 60 s of the paper's 600


@pytest.fixture(scope="module")
def small():
    return run_smoothtcp(SmoothTcpExperiment(**SMALL))


def test_experiment_is_the_papers_setup():
    ex = SmoothTcpExperiment()
    topo = ex.topology()
    assert ex.horizon_s == 600.0 and ex.flows == 2 and topo.nodes == 2
    assert (topo.access_rate_bps, topo.access_delay_s) == (1e6, 0.001)
    assert (topo.bottleneck_rate_bps, topo.bottleneck_delay_s) == (31250.0, 0.008)
    assert (topo.queue_packets, topo.signal, topo.signal_threshold_packets) == (20, "source_quench", 7)
    tcp = ex.tcp("smoothtcp")
    assert tcp.mss_bytes == 586 and tcp.w0 == 1 and tcp.p == 0.0
    r = tcp.rule.describe()
    assert (r["a_a"], r["b_a"], r["a_q"], r["b_q"], r["c_q"], r["m_q"], r["kappa"]) == (
        40.0, 0.003038, 0.0, 0.5493, 0.0625, 0.0, 0.005)
    # Long-lived: a flow cannot finish even if it had the whole bottleneck for twice the run.
    assert ex.flow_size_bytes() / 586 > 2 * 600 * 31250 / (8 * 626)
    assert SmoothTcpExperiment(scale=0.5).horizon_s == 300.0


def test_summary_rows_are_the_scenario_runs_measured(small):
    ex = small.experiment
    assert [r["rule"] for r in small.summary] == ["standard", "smoothtcp"]
    res = run(ex.scenario("smoothtcp"))  # deterministic: the same run again, measured by hand
    row = small.summary[1]
    ends = [float(log.time_s[np.flatnonzero(~log.slow_start)[0]]) for log in res.rtt]
    t_ss = max(ends)
    assert row["slow_start_end_s"] == t_ss
    rtt = np.concatenate([log.rtt_s[log.time_s >= t_ss] for log in res.rtt])
    assert row["rtt_std_s"] == pytest.approx(float(np.std(rtt)), rel=1e-12)
    assert row["rtt_range_s"] == pytest.approx(float(rtt.max() - rtt.min()), rel=1e-12)
    q = res.queue
    assert row["drops"] == int(q.dropped.sum()) == sum(f.packets_lost for f in res.flows)
    assert row["drops_during_ss"] == int((q.dropped & (q.arrival_s < t_ss)).sum())
    assert row["drops_during_ss"] + row["drops_after_ss"] == row["drops"]
    assert row["bytes_total"] == sum(f.bytes_acked for f in res.flows) > 0
    assert row["source_quench_sent"] == res.signals_sent == sum(f.signals for f in res.flows)
    assert row["flows_completed"] == 0
    # The bottleneck carries at most 31250 b/s of 626 B packets, 586 B of payload each.
    assert row["bytes_total"] <= ex.horizon_s * 31250 / 8 * 586 / 626
    flows = [f for f in small.flows if f["rule"] == "smoothtcp"]
    assert [f["bytes_acked"] for f in flows] == [f.bytes_acked for f in res.flows]
    series = [r for r in small.queue_series if r["rule"] == "smoothtcp"]
    assert len(series) == 12 and sum(r["drops"] for r in series) == row["drops"]


def test_claims_follow_the_stated_rules(small):
    by = {r["rule"]: r for r in small.summary}
    claims = {c["claim"].split(" (")[0]: c for c in small.claims}
    std = next(c for k, c in claims.items() if "standard deviation" in k)
    ratio = by["smoothtcp"]["rtt_std_s"] / by["standard"]["rtt_std_s"]
    assert std["ours"]["ratio"] == pytest.approx(ratio) and std["agrees"] == (ratio <= 0.5)
    after = next(c for k, c in claims.items() if k.startswith("SmoothTCP drops no packets"))
    assert after["ours"] == by["smoothtcp"]["drops_after_ss"] and after["agrees"] == (after["ours"] == 0)
    same = next(c for k, c in claims.items() if k.startswith("about the same throughput"))
    assert same["paper"] == pytest.approx(2_276_928 / 2_180_984)
    assert same["agrees"] == (0.9 <= same["ours"]["ratio"] <= 1.1)
    sq = next(c for k, c in claims.items() if "ICMP-SQ" in k)
    assert sq["agrees"] == (0.8 <= sq["ours"]["ratio"] <= 1.25)
    # The paper's byte counts are compared only for its own 600 s, two-flow run.
    assert not any("600 s" in c["claim"] for c in small.claims)
    assert all(set(c) == {"claim", "ours", "paper", "agrees"} and isinstance(c["agrees"], bool)
               for c in small.claims)


def test_paper_byte_claims_at_full_scale_use_the_papers_numbers(small):
    from latency_model.experiments.smoothtcp import _claims

    rows = [dict(r, bytes_total=b) for r, b in zip(small.summary, (2_000_000, 2_600_000))]
    claims = [c for c in _claims(SmoothTcpExperiment(), rows) if "600 s" in c["claim"]]
    assert [c["paper"] for c in claims] == [PAPER_BYTES["standard"], PAPER_BYTES["smoothtcp"]] == [2_180_984, 2_276_928]
    assert [c["agrees"] for c in claims] == [True, False]  # 0.917 within 10%; 1.142 not


def test_cli_experiment_smoothtcp_json_contract_and_export(capsys, tmp_path, small):
    code = main(["experiment", "smoothtcp", "--scale", "0.1", "--bin-s", "10", "--json", "--out", str(tmp_path)])
    printed, err = capsys.readouterr()
    assert code == 0 and err == ""
    d = json.loads(printed)
    assert d["experiment"] == "smoothtcp" and d["params"]["horizon_s"] == 60.0 and d["params"]["flows"] == 2
    assert [r["rule"] for r in d["series"]] == ["standard", "smoothtcp"]
    assert all(set(c) == {"claim", "ours", "paper", "agrees"} and isinstance(c["agrees"], bool) for c in d["claims"])
    assert d["series"][1]["rtt_std_s"] == pytest.approx(small.summary[1]["rtt_std_s"], rel=1e-12)
    assert json.loads((tmp_path / "smoothtcp.json").read_text()) == d
    rows = list(csv.DictReader((tmp_path / "smoothtcp.csv").open()))
    assert [r["rule"] for r in rows] == ["standard", "smoothtcp"]
    assert float(rows[0]["rtt_std_s"]) == pytest.approx(d["series"][0]["rtt_std_s"])
    rtt = list(csv.DictReader((tmp_path / "smoothtcp_rtt.csv").open()))
    assert len(rtt) == len(small.rtt_samples)
    assert len(list(csv.DictReader((tmp_path / "smoothtcp_flows.csv").open()))) == 4
    assert (tmp_path / "smoothtcp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Text: the table and the paper's claims.
    assert main(["experiment", "smoothtcp", "--scale", "0.1", "--rules", "smoothtcp"]) == 0
    text, _ = capsys.readouterr()
    assert "SmoothTCP experiment" in text and "1,046,272" in text
    assert f"{small.summary[1]['rtt_std_s']:.3f}" in text
    assert len(d["queue_series"]) == 2 * 6  # 60 s in 10 s bins, per rule


@pytest.mark.parametrize("argv, needle", [
    (["--queue-packets", "0"], "--queue-packets"),
    (["--flows", "0"], "--flows"),
    (["--rules", "standard,vegas"], "--rules"),
    (["--rules", ","], "--rules"),
    (["--ss-signal", "sometimes"], "--ss-signal"),
    (["--scale", "0"], "--scale"),
    (["--kappa", "-1"], "--kappa"),
    (["--out", __file__], "--out"),
])
def test_cli_experiment_smoothtcp_errors_are_one_line(capsys, argv, needle):
    code = main(["experiment", "smoothtcp", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("latency-model: error:") and needle in err and err.count("\n") == 1


def test_api_errors_name_the_parameter():
    for kwargs, word in (({"queue_packets": 0}, "queue_packets"), ({"flows": 0}, "flows"),
                         ({"rules": ("vegas",)}, "rules"), ({"rules": ()}, "rules"),
                         ({"rules": ("standard", "standard")}, "rules"), ({"bin_s": 0}, "bin_s"),
                         ({"tau": -1}, "tau"), ({"rwnd": 0}, "rwnd"), ({"min_rto_s": 0}, "min_rto_s"),
                         ({"packet_bytes": 0}, "packet_bytes")):
        with pytest.raises(ValueError, match=f"^{word}"):
            SmoothTcpExperiment(**kwargs)
    with pytest.raises(ValueError, match="experiment must be a SmoothTcpExperiment"):
        run_smoothtcp("600")
    assert math.isclose(SmoothTcpExperiment(scale=2).horizon_s, 1200.0)
