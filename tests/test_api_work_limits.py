"""Valid but extreme requests are refused up front with the work estimate (checks.check_work
and the estimates beside it), and the estimates' counts are the simulator's own.

Each refused request below ran away before (2026-11-28 audit; measured before and after in
the change's report): the fluid model at p = 0.999999 took 30-46 s and over 5 GB before a
MemoryError, the packet model at RTT 3600 s raised RuntimeError or grew to 5 GB, the
experiments with a million flows or sources ran for minutes and gigabytes.
"""

from __future__ import annotations

import numpy as np
import pytest

from latency_model import SimConfig, TcpParams, expected_latency, run_many, run_transfer, simulate
from latency_model.checks import (BudgetError, check_packet_path, rto_expiries, sends_per_segment, time_limit_s,
                                  uniform_batch)
from latency_model.experiments import BtcpExperiment, NgwaExperiment, SmoothTcpExperiment
from latency_model.model import packet
from latency_model.model.registry import predict

NEAR_ONE = TcpParams(p=0.999999)


@pytest.mark.parametrize("call, needle", [
    (lambda: expected_latency(NEAR_ONE, size_packets=np.arange(1, 21)),
     r"the fluid model of 20 size\(s\) up to 20 packets at p = 0.999999 would need about 2.04 TiB"),
    (lambda: predict("fluid", NEAR_ONE, np.arange(1, 21) * 500.0), r"at p = 0.999999 would need about"),
    (lambda: packet.expected_latency(TcpParams(p=0.0), size_bytes=1e18),
     r"the packet model \(tree DP\) of 1 size\(s\) up to 2e\+15 packets at p = 0 with k_max = 4 would take about "
     r"6.3e\+05 years"),
    (lambda: predict("packet", TcpParams(), [500.0], k_max=144_317), r"with k_max = 144,317 would need about 150 GiB"),
    (lambda: SmoothTcpExperiment(flows=1_000_000), r"smoothtcp with 1,000,000 flows .* would need about 294 GiB"),
    (lambda: BtcpExperiment(flows_per_node=10_000_000), r"btcp with 50,000,000 flows \(nodes x flows_per_node"),
    (lambda: NgwaExperiment(sources=1_000_000), r"ngwa with 1,000,000 sources .* would take about 9 days"),
])
def test_runaway_requests_are_refused_with_their_estimate(call, needle):
    with pytest.raises(BudgetError, match=needle):
        call()


def test_packet_model_refuses_a_round_trip_beyond_the_largest_rto():
    # RTT 3600 s against max_rto_s = 60 s: a RuntimeError ("a state needs more event slots")
    # or 5 GB before; at 60 s the same call runs (one packet, p = 0.5).
    with pytest.raises(ValueError, match=r"rtt_s must be at most max_rto_s \(60 s\) .* got 3600 s: the timer "
                                         r"would expire 64 times"):
        predict("packet", TcpParams(rtt_s=3600.0, p=0.5), [500.0, 1000.0])
    assert np.isfinite(predict("packet", TcpParams(rtt_s=60.0, p=0.5), [500.0]).expected_latency_s[0])
    check_packet_path(3600.0, 7200.0)  # a timer that outlasts the round trip: accepted


def test_at_audit_limits_the_simulator_refuses_p_near_one(monkeypatch):
    # Under the default hour the simulator runs these (about 2-3 min); with the audit's 60 s
    # and 2 GB they are refused before any run, with the estimate.
    monkeypatch.setenv("LATENCY_MODEL_TIME_LIMIT", "60")
    monkeypatch.setenv("LATENCY_MODEL_MEMORY_LIMIT", "2G")
    with pytest.raises(BudgetError, match=r"simulate: 20 runs of 1 size\(s\) up to 20 packets at p = 0.999999 would "
                                          r"take about 2.4 min .* limit of 1 min \(LATENCY_MODEL_TIME_LIMIT=60\)"):
        simulate(NEAR_ONE, size_packets=[20], runs=20, seed=1)
    with pytest.raises(BudgetError, match=r"simulating a transfer of 20 packets would take about 3.3 min"):
        run_transfer(NEAR_ONE, size_packets=20, rng=np.random.default_rng(1))
    with pytest.raises(BudgetError, match=r"would take about"):
        run_many(NEAR_ONE, 20 * 500, list(range(20)))


def test_time_limit_reads_its_variable(monkeypatch):
    monkeypatch.setenv("LATENCY_MODEL_TIME_LIMIT", "2h")
    assert time_limit_s()[0] == 7200.0
    monkeypatch.setenv("LATENCY_MODEL_TIME_LIMIT", "10min")
    assert time_limit_s()[0] == 600.0
    for bad in ("soon", "-5", "0", "inf"):
        monkeypatch.setenv("LATENCY_MODEL_TIME_LIMIT", bad)
        with pytest.raises(ValueError, match="LATENCY_MODEL_TIME_LIMIT must be a number of seconds"):
            time_limit_s()


@pytest.mark.parametrize("rtt_s", [0.5, 5.0, 100.0, 600.0, 3600.0])
def test_rto_expiries_are_the_simulators_timeouts(rtt_s):
    # One packet, no loss: the timer (initial 1 s, doubling to 60 s) expires until the ACK
    # returns one round trip later; the simulator counts the same expiries.
    r = run_transfer(TcpParams(rtt_s=rtt_s, p=0.0), size_packets=1)
    assert r.timeouts == rto_expiries(rtt_s, 1.0, 60.0)
    assert r.timeouts == {0.5: 0, 5.0: 2, 100.0: 6, 600.0: 14, 3600.0: 64}[rtt_s]


@pytest.mark.parametrize("p, n", [(0.1, 1), (0.5, 1), (0.3, 40), (0.5, 40)])
def test_sends_per_segment_is_the_simulators_mean(p, n):
    # Transmissions of a segment until one arrives are geometric, mean 1 / (1 - p): the
    # estimate's count. For one packet that is the whole transfer (4 standard errors); for
    # 40 the simulator sends up to 2 % more (segments resent after a timeout that had
    # arrived), so the estimate is within 5 % below.
    out = run_many(TcpParams(p=p), n * 500, list(range(4000)))
    sent = out[:, 4]  # OUT_FIELDS: data_packets_sent
    mean, se = sent.mean(), sent.std() / np.sqrt(sent.size)
    est = n * sends_per_segment(p)
    if n == 1:
        assert abs(mean - est) < 4 * se
    else:
        assert est - 4 * se < mean < 1.05 * est


def test_uniform_batch_bounds_the_draws_ahead():
    assert uniform_batch(2048, 1000) == 2048
    assert uniform_batch(2048, 4e7) == 1  # p = 0.999999, 20 packets: 320 MB a run
    assert uniform_batch(2048, 4e6) == 8  # 256 MiB / 32 MB


def test_estimates_of_the_default_experiments_run():
    # The paper's experiments at their defaults stay far inside the limits.
    for ex in (SmoothTcpExperiment(), BtcpExperiment(), NgwaExperiment()):
        memory, seconds = ex.work()
        assert memory < 1e9 and seconds < 600


def test_sim_config_max_rto_enters_the_estimate():
    from latency_model.checks import simulation_work

    slow_timer = SimConfig(max_rto_s=60.0)
    long_timer = SimConfig(max_rto_s=3600.0)
    far = TcpParams(rtt_s=3600.0, p=0.0)
    # RTT 3600 s with the timer capped at 60 s: up to 1 + 60 transmissions a segment
    # (sends_per_segment), against one with a timer that outlasts the round trip.
    assert simulation_work(far, slow_timer, 1, [20])[1] > 30 * simulation_work(far, long_timer, 1, [20])[1]
