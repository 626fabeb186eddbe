"""CLI contract of the simulator subcommands (issue 4)."""

import csv
import io
import json

import pytest
from _cli import run



def test_simulate_json_contract(capsys):
    code, out, err = run(capsys, "simulate", "--size-packets", "8", "--mss", "500", "--rtt", "0.1",
                         "--p", "0.1", "--w0", "2", "--wss", "30", "--rwnd", "30", "--b", "1",
                         "--variant", "lt", "--runs", "400", "--seed", "1", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["runs"] == 400 and d["seed"] == 1
    assert d["params"]["dup_lt"] == 2 and d["params"]["w0"] == 2
    (row,) = d["results"]
    assert row["size_packets"] == 8
    lo, hi = row["ci95_s"]
    assert lo < row["mean_latency_s"] < hi
    assert 0.0 <= row["timeout_fraction"] <= 1.0
    assert row["mean_lost_packets"] > 0
    assert sum(v["n"] for v in row["conditional"].values()) == 400
    assert set(row["conditional"]["0"]) == {"n", "mean_s", "ci95_s"}
    # Same seed, same numbers.
    _, out2, _ = run(capsys, "simulate", "--size-packets", "8", "--variant", "lt", "--runs", "400",
                     "--seed", "1", "--json")
    assert json.loads(out2)["results"][0]["mean_latency_s"] == row["mean_latency_s"]


def test_simulate_link_flags_change_the_path(capsys):
    base = ["simulate", "--size-packets", "3", "--p", "0", "--runs", "1", "--json"]
    _, out, _ = run(capsys, *base)
    _, out2, _ = run(capsys, *base, "--delay-s", "0.1", "--link-rate-bps", "1e6")
    t1 = json.loads(out)["results"][0]["mean_latency_s"]
    t2 = json.loads(out2)["results"][0]["mean_latency_s"]
    s1, s2 = 540 * 8 / 100e6, 540 * 8 / 1e6
    assert t1 == pytest.approx(2 * 0.1 + 2 * s1)  # b = 1 staircase: r = 2, k = 1: rR + (r-1+k)s
    assert t2 == pytest.approx(2 * 0.2 + 2 * s2)


def test_single_loss_json_contract(capsys):
    code, out, err = run(capsys, "single-loss", "--size-packets", "20", "--w0", "2", "--b", "1",
                         "--variant", "newreno", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["results"] == [{"size_packets": 20, "pattern": "TTFFFFFFFFFFFFFFFTTT", "y_to_packets": 2,
                             "tail_timeout_packets": 3}]
    assert d["sim_config"]["stack"] == "rfc" and d["params"]["b"] == 1  # what produced it


def test_trace_csv(capsys, tmp_path):
    code, out, _ = run(capsys, "trace", "--size-packets", "8", "--drop", "3")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["time_s", "event", "segment", "cwnd_bytes", "ssthresh_bytes", "flight_bytes",
                             "rto_s"]
    events = [r["event"] for r in rows]
    assert "fast_retransmit" in events and events[-1] == "done"
    path = tmp_path / "t.csv"
    code, out, _ = run(capsys, "trace", "--size-packets", "8", "--p", "0.2", "--seed", "4", "--out", str(path))
    assert code == 0 and "wrote" in out and path.read_text().startswith("time_s,")


def test_tables_json_has_simulated(capsys):
    code, out, _ = run(capsys, "tables", "--json")
    assert code == 0
    rows = json.loads(out)["tables"]
    by = {(r["b"], r["phase"], r["lt"]): r["simulated"] for r in rows}
    # Slow start without LT follows the same ACK clock as the paper's b = 1 table.
    assert by[(1, "slow_start", False)] == [3, 2, 1, 0]
    assert all(len(v) == 4 and all(isinstance(x, int) for x in v) for v in by.values())


@pytest.mark.parametrize("argv,flag", [
    (["simulate", "--size-packets", "8", "--runs", "0"], "--runs"),
    (["simulate", "--size-packets", "8", "--delay-s", "-1"], "--delay-s"),
    (["simulate", "--size-packets", "8", "--p", "1"], "--p"),
    (["simulate", "--size-packets", "0"], "--size-packets"),
    (["simulate", "--size-packets", "8", "--seed", "-2"], "--seed"),
    (["simulate", "--size-packets", "8", "--rto-rule", "x"], "--rto-rule"),
    (["simulate", "--size-packets", "8", "--min-rto-s", "0"], "--min-rto-s"),
    (["simulate", "--size-packets", "8", "--delack-timeout-s", "nan"], "--delack-timeout-s"),
    (["simulate"], "--size-packets"),
    (["single-loss", "--size-packets", "0"], "--size-packets"),
    (["single-loss", "--size-packets", "5", "--b", "0"], "--b"),
    (["trace", "--size-packets", "5", "--drop", "9"], "--drop"),
    (["trace", "--size-packets", "5", "--run", "-1"], "--run"),
])
def test_bad_input_one_line_exit_2(capsys, argv, flag):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("latency-model: error: ")
    assert flag in lines[0]


def test_simulate_takes_the_same_size_syntax_as_latency(capsys):
    # Lists and inclusive ranges, as for `latency`: 1:3 -> 1, 2, 3 packets (p = 0: one run each
    # completes in whole RTTs plus serialisation, so the means are ordered by size).
    code, out, _ = run(capsys, "simulate", "--size-packets", "1:3", "--p", "0", "--runs", "2", "--json")
    assert code == 0
    results = json.loads(out)["results"]
    assert [r["size_packets"] for r in results] == [1, 2, 3]
    code, _, err = run(capsys, "simulate", "--size-bytes", "750.5", "--runs", "2")
    assert code == 2 and "--size-bytes must give whole bytes" in err


@pytest.mark.parametrize("stack", ["ns3", "linux"])
def test_the_time_estimate_of_ns3_and_linux_runs_uses_their_compiled_kernels(stack, capsys):
    # Every sender has a compiled kernel: 5,000 runs x 30 sizes of the linux profile take
    # about 4 s of CPU, which the estimate put at 1.3 min (the pure engine's rate) and
    # warned about. At 1,000,000 runs x 40 packets the kernel's rate gives about 15-30 s
    # (no warning, under a minute), the pure engine's 10 min.
    import argparse

    from latency_model import TcpParams
    from latency_model.accel import numba_available
    from latency_model.checks import simulation_cost
    from latency_model.cli.sim import _simulate_budget
    from latency_model.sim import SimConfig

    config = SimConfig.profile(stack)
    params = TcpParams(p=0.1)
    args = argparse.Namespace(runs=1_000_000, seed=0, engine="auto", jobs=1)
    _simulate_budget(args, params, config, [40 * params.mss_bytes])
    warned = capsys.readouterr().err
    _, kernel_s = simulation_cost(1_000_000, 40, 0.1, compiled=True, sender=config.sender)
    _, pure_s = simulation_cost(1_000_000, 40, 0.1, compiled=False)
    assert 10 < kernel_s < 60 < pure_s
    if numba_available():
        assert warned == ""
    else:
        assert "may take about" in warned
