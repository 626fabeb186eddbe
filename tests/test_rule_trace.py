"""`trace --rtts`, the drop-tail buffer and `latency --rule` (issue 5 contract)."""

import json

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.growth import RULES, StandardRule, make_rule
from latency_model.sim import SimConfig, run_many, run_transfer
from latency_model.sim.config import pipe_config
from latency_model.sim.rounds import packets_before_first_drop, rtt_rounds
from latency_model.sim.runner import fast_path_supported
from _cli import run


def test_trace_rtts_json_contract_btcp(capsys):
    code, out, err = run(capsys, "trace", "--rule", "btcp", "--rule-param", "f=4", "--rule-param", "mice_t=32",
                         "--rtts", "8", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["rule"] == "btcp" and d["params"] == {"f": 4, "mice_t": 32.0}
    assert d["closed_form"] == {"rtt": list(range(8)), "cwnd": [1, 8, 14, 18, 21, 23, 25, 26]}  # issue 5
    sim = d["simulated"]
    assert sim["rtt"] == list(range(8))
    # Per ACK: one ACK adds floor(31/4)/1 = 7; round 1's 8 ACKs reach 12.176 (tests/test_rules_vs_sim.py).
    assert sim["cwnd"][:3] == pytest.approx([1, 8, 12.176], abs=1e-3)
    assert sim["segments"][:3] == [1, 8, 12]
    assert "packets_before_loss" not in d


@pytest.mark.parametrize("beta,closed,simulated", [(2, 95, 64), (4, 53, 43)])
def test_trace_pipe_packets_burst_tcp_counts(capsys, beta, closed, simulated):
    code, out, _ = run(capsys, "trace", "--rule", "generalized", "--rule-param", f"beta={beta}", "--rtts", "3",
                       "--pipe-packets", "32", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["packets_before_loss"] == {"closed_form": closed, "simulated": simulated}
    assert d["pipe"]["bdp_packets"] + d["pipe"]["queue_packets"] == 32


def test_trace_rtts_table_and_csv(capsys):
    code, out, _ = run(capsys, "trace", "--rule", "generalized", "--rule-param", "beta=4", "--rtts", "3",
                       "--pipe-packets", "32")
    assert code == 0
    assert "closed form 53, simulated 43" in out and "BDP 16 + buffer 16" in out
    code, out, _ = run(capsys, "trace", "--rtts", "4", "--csv")
    lines = out.splitlines()
    assert lines[0] == "rtt,closed_form_cwnd,simulated_cwnd,simulated_segments,simulated_time_s"
    assert [line.split(",")[1] for line in lines[1:]] == ["1.0", "2.0", "4.0", "8.0"]


@pytest.mark.parametrize("argv,text", [
    (["trace", "--rule", "nope", "--rtts", "3"], ", ".join(sorted(RULES))),
    (["trace", "--rule", "btcp", "--rule-param", "g=1", "--rtts", "3"], "valid: f, mice_t"),
    (["trace", "--rtts", "0"], "--rtts"),
    (["trace", "--rtts", "3", "--pipe-packets", "1"], "--pipe-packets"),
    (["trace", "--rtts", "3", "--pipe-packets", "32", "--queue-packets", "31"], "--queue-packets"),
    (["trace", "--rtts", "3", "--drop", "2"], "--drop"),
    (["trace", "--size-packets", "5", "--pipe-packets", "32"], "--pipe-packets needs --rtts"),
    (["trace", "--size-packets", "5", "--json", "--csv"], "--csv or --json"),
    (["trace", "--rtts", "3", "--csv", "--pipe-packets", "32"], "--pipe-packets"),
    (["simulate", "--size-packets", "5", "--queue-packets", "-1"], "--queue-packets"),
    (["latency", "--rule", "btcp", "--time-model", "fluid", "--size-packets", "5"], "--time-model rounds"),
])
def test_rule_errors_one_line_exit_2(capsys, argv, text):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("latency-model: error: ") and text in lines[0]


def test_latency_picks_rounds_for_a_rule_without_continuous_law(capsys):
    code, out, _ = run(capsys, "latency", "--rule", "btcp", "--size-packets", "23", "--p", "0.02", "--w0", "1",
                       "--wss", "1000", "--rwnd", "1000", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["params"]["time_model"] == "rounds" and "rounds" in d["note"]
    # 23 packets = 1 + 8 + 14: three rounds of the flow-level B-TCP law.
    assert d["results"][0]["conditional_latency_s"]["0"] == pytest.approx(0.3)
    code, out, _ = run(capsys, "latency", "--rule", "btcp", "--size-packets", "5")
    assert out.splitlines()[0].startswith("time model: rounds")
    code, out, _ = run(capsys, "latency", "--size-packets", "5", "--json")
    assert json.loads(out)["params"]["time_model"] == "fluid" and "note" not in json.loads(out)


# ---------------------------------------------------------------------------
# The drop-tail buffer


def test_pipe_config_holds_the_pipe():
    cfg = pipe_config(0.1, 500, 32)
    s = 540 * 8 / cfg.link_rate_bps
    assert cfg.queue_packets == 16 and cfg.delay_s == 0.05
    assert 2 * cfg.delay_s / s + 1 == pytest.approx(16)  # BDP = 2d/s + 1 = pipe - buffer


@pytest.mark.parametrize("beta,queue,expected", [(2, 16, 64), (4, 16, 43), (2, 8, 48)])
def test_packets_before_first_drop_hand_derived(beta, queue, expected):
    # Large buffer (16): the binding limit is the pipe. Once the last window that fits
    # (32 for beta = 2, 16 for beta = 4) is out, each ACK takes one packet off the path and
    # puts beta on it. beta = 2: 63 sent, 32 outstanding; the first ACK of the 32-window
    # frees one place, its first packet fits, the second is dropped: 63 + 1 = 64.
    # beta = 4: 21 sent, 16 outstanding, +3 per ACK: after 5 ACKs 31 (20 more sent), the 6th
    # frees one: 2 fit, the 3rd is dropped: 21 + 22 = 43.
    # Small buffer (8, BDP 24): the ACK-clocked burst overflows the buffer first. Round 5's
    # packets are released two per ACK while the link drains one per ACK interval, so the
    # backlog after ACK j of round 4 is j; the 9th ACK's second packet finds 9 > 8:
    # 31 + 8 x 2 + 1 = 48.
    params = TcpParams(w0=1, w_ss=1e6, rwnd=1e6, rule=make_rule("generalized", beta=beta))
    assert packets_before_first_drop(params, pipe_config(0.1, 500, 32, queue)) == expected


def test_receiver_window_below_the_pipe_never_drops():
    params = TcpParams(w0=1, w_ss=1e6, rwnd=20)
    assert packets_before_first_drop(params, pipe_config(0.1, 500, 32), max_packets=300) is None


def test_unlimited_buffer_changes_nothing():
    # A buffer that never fills takes the queue code path and gives the same runs.
    params = TcpParams(p=0.1, rule=make_rule("btcp"))
    children = np.random.SeedSequence(5).spawn(40)
    a = run_many(params, 30 * 500, children, SimConfig())
    b = run_many(params, 30 * 500, children, SimConfig(queue_packets=10**9))
    assert np.array_equal(a, b)


def test_queue_runs_compiled_for_every_sender():
    # The flat engine's drop-tail buffer serves every sender: the Monte Carlo batch (auto:
    # compiled where numba is) and run_transfer's single runs agree, and the buffer drops.
    params = TcpParams(p=0.05, rule=StandardRule())
    cfg = SimConfig(queue_packets=3, link_rate_bps=1e6)
    children = np.random.SeedSequence(2).spawn(20)
    for c in (cfg, SimConfig.profile("ns3", queue_packets=3, link_rate_bps=1e6), cfg.replace(sender="sack"),
              SimConfig.profile("linux", queue_packets=3, link_rate_bps=1e6)):
        assert fast_path_supported(params, c)
        for engine in ("auto", "python"):
            out = run_many(params, 40 * 500, children, c, engine=engine)
            ref = [run_transfer(params, size_packets=40, config=c, rng=np.random.Generator(np.random.PCG64(ch)))
                   for ch in children]
            assert np.array_equal(out[:, 0], [r.completion_s for r in ref])
        # Without random loss only the buffer drops: slow start overflows 3 packets at 1 Mb/s.
        assert run_transfer(params.replace(p=0.0), size_packets=40, config=c).lost_packets > 0


@pytest.mark.parametrize("kwargs,match", [
    ({"queue_packets": -1}, "queue_packets"),
    ({"queue_packets": 1.5}, "queue_packets"),
])
def test_sim_config_rejects_bad_queue(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SimConfig(**kwargs)


def test_rounds_helpers_reject_bad_input():
    with pytest.raises(ValueError, match="n_rounds"):
        rtt_rounds(TcpParams(), 0)
    with pytest.raises(ValueError, match="queue_packets"):
        rtt_rounds(TcpParams(), 3, SimConfig(queue_packets=4))
    with pytest.raises(ValueError, match="n_rounds"):
        rtt_rounds(TcpParams(w0=1, w_ss=1e6, rwnd=1e6), 30, max_packets=1000)
    with pytest.raises(ValueError, match="queue_packets"):
        packets_before_first_drop(TcpParams(), SimConfig())
    with pytest.raises(ValueError, match="pipe_packets"):
        pipe_config(0.1, 500, 1)
