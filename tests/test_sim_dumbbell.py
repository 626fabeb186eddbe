"""Shared-bottleneck simulator: dumbbell ports, multi-flow scenarios, size generators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from latency_model.growth import BtcpRule, StandardRule, make_rule
from latency_model.params import TcpParams
from latency_model.sim import SimConfig, run_transfer
from latency_model.sim.dumbbell import Dumbbell, Port, QueueSeries
from latency_model.sim.scenario import Flow, Scenario, random_flows, run
from latency_model.sim.sizes import FixedSizes, ParetoSizes

MSS = 1024
TCP = TcpParams(mss_bytes=MSS, p=0.0, w0=1.0, w_ss=64.0, rwnd=64.0, b=1)


def _busy_scenario(seed: int, queue: int = 3, horizon: float | None = None) -> Scenario:
    """20 flows of Pareto(4, 1.2) packets starting within 3 s on a 5-node dumbbell: drops happen."""
    flows = random_flows(20, ParetoSizes(4.0, 1.2), TCP, start_window_s=3.0, nodes=5, seed=seed)
    return Scenario(flows=flows, topology=Dumbbell(queue_packets=queue), horizon_s=horizon, bin_s=0.5)


# Port: drop-tail by hand ------------------------------------------------------------------

def test_port_drops_exactly_when_b_packets_wait():
    # 1000 wire bytes at 8000 b/s: 1 s per packet. B = 2.
    port = Port(8000.0, 2, record=True)
    ends = [port.offer(0.0, 1000) for _ in range(5)]
    assert ends == [1.0, 2.0, 3.0, None, None]  # one in service, two waiting, then full
    assert port.seen == [0, 0, 1, 2, 2]
    # At t = 1 the first packet has left (exact tie counts as gone): one place is free.
    assert port.offer(1.0, 1000) == 4.0
    assert port.offer(1.0, 1000) is None
    assert port.dropped == [False, False, False, True, True, False, True]


def test_port_with_zero_buffer_drops_while_busy():
    port = Port(8000.0, 0)
    assert port.offer(0.0, 1000) == 1.0
    assert port.offer(0.5, 1000) is None
    assert port.offer(1.0, 1000) == 2.0


def test_port_without_rate_is_instantaneous():
    port = Port(None, 0)
    assert [port.offer(2.5, 1500) for _ in range(3)] == [2.5, 2.5, 2.5]


def test_queue_series_time_average_by_hand():
    # Packet waits over [0.2, 1.0) and [0.5, 2.0); bins of 1 s.
    s = QueueSeries.from_log([0.2, 0.5, 0.7], [0, 1, 2], [False, False, True], [1.0, 2.0],
                             [2.0, 3.0], end_s=3.0, bin_s=1.0)
    assert s.arrivals.tolist() == [3, 0, 0]
    assert s.drops.tolist() == [1, 0, 0]
    np.testing.assert_allclose(s.mean_length, [0.8 + 0.5, 1.0, 0.0])
    np.testing.assert_allclose(s.busy_fraction, [0.0, 1.0, 1.0])
    assert s.max_seen.tolist() == [2, 0, 0]
    np.testing.assert_allclose(s.arrivals_per_s, [3.0, 0.0, 0.0])


# Single flow: the dumbbell reproduces the single-flow simulator ---------------------------

@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 60),
    queue=st.one_of(st.none(), st.integers(0, 12)),
    w0=st.integers(1, 8),
    rule=st.sampled_from([StandardRule(), BtcpRule(f=4), BtcpRule(f=8)]),
    b=st.integers(1, 2),
    dup_lt=st.sampled_from([None, 2]),
)
def test_single_flow_matches_single_flow_simulator(n, queue, w0, rule, b, dup_lt):
    rate, d = 2e6, 0.02
    params = TcpParams(mss_bytes=MSS, rtt_s=2 * d, p=0.0, w0=w0, w_ss=64, rwnd=64, b=b,
                       dup_lt=dup_lt, rule=rule)
    ref = run_transfer(params, size_packets=n, config=SimConfig(link_rate_bps=rate, delay_s=d, queue_packets=queue))
    topo = Dumbbell(nodes=1, access_rate_bps=None, access_delay_s=0.0, bottleneck_rate_bps=rate,
                    bottleneck_delay_s=d, queue_packets=queue)
    res = run(Scenario(flows=[Flow(0.0, n * MSS, params)], topology=topo))
    rec = res.flows[0]
    assert rec.completed
    assert rec.completion_s == ref.completion_s  # same mechanics, same event order: bit for bit
    assert rec.packets_lost == ref.lost_packets
    assert rec.packets_sent == ref.data_packets_sent
    assert rec.retransmissions == ref.retransmissions
    assert rec.timeouts == ref.timeouts
    assert rec.fast_retransmits == ref.fast_retransmits


def test_single_flow_start_time_only_shifts_completion():
    params = TcpParams(mss_bytes=MSS, p=0.0, w0=2, w_ss=64, rwnd=64)
    a = run(Scenario(flows=[Flow(0.0, 30 * MSS, params)])).flows[0]
    b = run(Scenario(flows=[Flow(7.25, 30 * MSS, params)])).flows[0]
    assert b.completion_s == pytest.approx(a.completion_s, abs=1e-12)


def test_one_packet_through_access_links_by_hand():
    # Store and forward over three links, then the ACK over the three delays.
    topo = Dumbbell(nodes=1, access_rate_bps=10e6, access_delay_s=0.005, bottleneck_rate_bps=1.5e6,
                    bottleneck_delay_s=0.035, queue_packets=7)
    rec = run(Scenario(flows=[Flow(0.0, 500, TCP)], topology=topo)).flows[0]
    wire = (500 + 40) * 8.0
    expect = wire / 10e6 + 0.005 + wire / 1.5e6 + 0.035 + wire / 10e6 + 0.005 + (0.005 + 0.035 + 0.005)
    assert rec.completion_s == pytest.approx(expect, rel=1e-12)


def test_two_segments_queue_behind_each_other_at_the_bottleneck():
    # W0 = 2: both leave at 0; the second waits for the first at each link. The ACK of the
    # second (the last, FIN: acknowledged at once) ends the transfer.
    params = TcpParams(mss_bytes=MSS, p=0.0, w0=2, w_ss=64, rwnd=64, b=2)
    topo = Dumbbell(nodes=1)
    rec = run(Scenario(flows=[Flow(0.0, 2 * MSS, params)], topology=topo)).flows[0]
    sa, sb = (MSS + 40) * 8.0 / 10e6, (MSS + 40) * 8.0 / 1.5e6
    # Second packet: leaves access at 2 sa, bottleneck at sa + 5 ms + 2 sb (the first keeps
    # it busy), receiver access one sa later (the receiver port is free by then).
    last_arrival = (sa + 0.005 + 2 * sb) + 0.035 + sa + 0.005
    assert rec.completion_s == pytest.approx(last_arrival + topo.ack_delay_s, rel=1e-12)


def test_full_sender_access_buffer_drops_before_the_router():
    # 4 packets at once onto a 1 packet/s access link with no buffer: the first is
    # serialised, the other three are dropped there and never reach the router.
    topo = Dumbbell(nodes=1, access_rate_bps=(MSS + 40) * 8.0, access_delay_s=0.0,
                    access_queue_packets=0, queue_packets=None)
    params = TcpParams(mss_bytes=MSS, p=0.0, w0=4, w_ss=64, rwnd=64)
    res = run(Scenario(flows=[Flow(0.0, 4 * MSS, params)], topology=topo))
    rec = res.flows[0]
    assert res.queue.arrival_s[:1].tolist() == [1.0]
    assert rec.completed and rec.packets_lost >= 3
    assert rec.packets_sent == rec.packets_delivered + rec.packets_lost
    assert res.queue.arrivals.sum() == rec.packets_sent - rec.packets_lost  # router saw no access drop


# Many flows: conservation, drop-tail and series invariants, reproducibility ----------------

@pytest.mark.parametrize("seed", [1, 2])
def test_packets_are_conserved_per_flow(seed):
    res = run(_busy_scenario(seed))
    assert res.in_flight == 0
    assert sum(r.packets_lost for r in res.flows) > 0  # the case exercises drops
    for r in res.flows:
        assert r.completed
        assert r.packets_sent == r.packets_delivered + r.packets_lost
        assert r.packets_sent == r.n_segments + r.retransmissions


def test_conservation_with_a_horizon_counts_packets_in_flight():
    res = run(_busy_scenario(4, horizon=2.0))
    assert res.end_s == 2.0
    sent = sum(r.packets_sent for r in res.flows)
    assert sent == sum(r.packets_delivered + r.packets_lost for r in res.flows) + res.in_flight
    assert res.in_flight > 0
    assert not all(r.completed for r in res.flows)
    assert all(math.isnan(r.completion_s) for r in res.flows if not r.completed)


@pytest.mark.parametrize("queue", [0, 2, 5])
def test_router_drops_exactly_when_its_buffer_is_full(queue):
    res = run(_busy_scenario(5, queue=queue))
    qs = res.queue
    assert qs.dropped.any()
    assert (qs.seen[qs.dropped] == queue).all()
    assert (qs.seen[~qs.dropped] <= queue).all()
    # An arrival finding B waiting is accepted only if the link was idle - impossible with B > 0.
    if queue > 0:
        assert (qs.seen[~qs.dropped] < queue).all()


def test_queue_series_agrees_with_flow_records():
    sc = _busy_scenario(6)
    res = run(sc)
    qs = res.queue
    assert qs.arrivals.sum() == sum(r.packets_sent for r in res.flows)  # no access losses
    assert qs.drops.sum() == sum(r.packets_lost for r in res.flows)
    assert np.all(np.diff(qs.arrival_s) >= 0)
    accepted = qs.arrivals.sum() - qs.drops.sum()
    assert accepted == sum(r.packets_delivered for r in res.flows)
    # Busy time = serialisation of every accepted packet (all done by end_s): all
    # segments are full-size (whole-packet sizes), so it is exact.
    busy_s = qs.busy_fraction.sum() * qs.bin_s
    assert busy_s == pytest.approx(accepted * (MSS + 40) * 8 / 1.5e6, rel=1e-9)


def test_queue_time_average_obeys_littles_law():
    port = Port(1e6, 4, record=True)
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.exponential(0.008, 2000))
    for now in t:
        port.offer(float(now), 1000)
    end = float(t[-1]) + 1.0
    s = port.series(end, 0.25)
    acc = np.asarray(port.arrival_s)[~np.asarray(port.dropped)]
    total_wait = float(np.sum(np.asarray(port.service_start_s) - acc))
    # Area under the waiting-count curve = total waiting time (Little), to rounding.
    assert s.mean_length.sum() * s.bin_s == pytest.approx(total_wait, rel=1e-9)
    assert s.busy_fraction.sum() * s.bin_s == pytest.approx(len(acc) * 8000 / 1e6, rel=1e-9)


def test_runs_are_reproducible_by_seed():
    a, b, c = run(_busy_scenario(7)), run(_busy_scenario(7)), run(_busy_scenario(8))
    assert a.flows == b.flows
    np.testing.assert_array_equal(a.queue.arrival_s, b.queue.arrival_s)
    assert a.flows != c.flows


def test_random_flows_same_seed_same_flows_for_every_variant():
    ss = np.random.SeedSequence(11)
    x = random_flows(30, ParetoSizes(), TCP, start_window_s=100.0, nodes=5, seed=ss)
    y = random_flows(30, ParetoSizes(), TcpParams(mss_bytes=MSS, p=0.0, w0=1, rwnd=64, w_ss=64,
                                                   rule=BtcpRule()), start_window_s=100.0, nodes=5, seed=ss)
    assert [(f.start_s, f.size_bytes, f.node) for f in x] == [(f.start_s, f.size_bytes, f.node) for f in y]
    assert all(0.0 <= f.start_s < 100.0 and f.size_bytes >= 4 * MSS for f in x)
    assert [f.node for f in x[:7]] == [0, 1, 2, 3, 4, 0, 1]


# Size generators ------------------------------------------------------------------------

def test_pareto_mean_and_tail_match_closed_form():
    gen = ParetoSizes(scale=4.0, shape=3.0)  # finite variance: the standard error exists
    n = 200_000
    x = gen.sample_packets(np.random.default_rng(2024), n)
    assert gen.mean_packets == 6.0 and gen.var_packets == 12.0
    assert abs(x.mean() - gen.mean_packets) < 3.0 * math.sqrt(gen.var_packets / n)
    assert x.min() >= 4.0
    # P(X > 8) = (4/8)^3 = 1/8, binomial standard error.
    p = 0.125
    assert abs((x > 8.0).mean() - p) < 3.0 * math.sqrt(p * (1 - p) / n)


def test_pareto_whole_packets_and_burst_tcp_parameters():
    gen = ParetoSizes()  # Burst TCP: scale 4, shape 1.2, mean 24 packets
    assert gen.mean_packets == pytest.approx(24.0)
    assert math.isinf(gen.var_packets)
    k = gen.sample_whole_packets(np.random.default_rng(1), 10_000)
    assert k.dtype == np.int64 and k.min() >= 4
    # Median of the continuous law 4 * 2^(1/1.2) = 7.13; rounding up gives 8.
    assert np.median(k) == 8
    assert ParetoSizes(4.0, 0.9).mean_packets == math.inf


def test_fixed_sizes():
    gen = FixedSizes(12.5)
    assert gen.sample_whole_packets(np.random.default_rng(0), 3).tolist() == [13, 13, 13]
    assert gen.mean_packets == 12.5


# Validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("make, name", [
    (lambda: Dumbbell(nodes=0), "nodes"),
    (lambda: Dumbbell(queue_packets=-1), "queue_packets"),
    (lambda: Dumbbell(bottleneck_rate_bps=0), "bottleneck_rate_bps"),
    (lambda: Dumbbell(access_delay_s=-1), "access_delay_s"),
    (lambda: Dumbbell(access_queue_packets=-1), "access_queue_packets"),
    (lambda: Flow(-1.0, 10, TCP), "start_s"),
    (lambda: Flow(0.0, 0, TCP), "size_bytes"),
    (lambda: Flow(0.0, 10, TcpParams()), "params.p"),
    (lambda: Scenario(flows=[]), "flows"),
    (lambda: Scenario(flows=[Flow(0.0, 10, TCP, node=5)]), "node"),
    (lambda: Scenario(flows=[Flow(0.0, 10, TCP)], horizon_s=0), "horizon_s"),
    (lambda: Scenario(flows=[Flow(0.0, 10, TCP)], config=SimConfig(p_ack=0.1)), "p_ack"),
    (lambda: ParetoSizes(scale=0), "scale"),
    (lambda: ParetoSizes(shape=-1), "shape"),
    (lambda: FixedSizes(0), "packets"),
    (lambda: ParetoSizes().sample_packets(None, 3), "rng"),
    (lambda: random_flows(0, ParetoSizes(), TCP, start_window_s=1, nodes=1, seed=1), "n_flows"),
    (lambda: run("x"), "scenario"),
])
def test_invalid_parameters_are_named(make, name):
    with pytest.raises(ValueError, match=name):
        make()


# Router signals (Source Quench / ECN above tau) ---------------------------------------------

# smooth-start restarts its smooth start and halves cwnd (>= 1 MSS) on every router signal.
_HALVING = make_rule("smooth-start")


def _signal_topology(signal, tau, queue=None):
    # No access links: a packet reaches the router when it is sent, and a Source Quench
    # reaches the sender at once; 1 packet per 10 ms at the bottleneck.
    return Dumbbell(nodes=1, access_rate_bps=None, access_delay_s=0.0,
                    bottleneck_rate_bps=(MSS + 40) * 8 / 0.01, bottleneck_delay_s=0.02,
                    queue_packets=queue, signal=signal, signal_threshold_packets=tau)


def test_source_quench_for_each_arrival_at_or_above_tau_by_hand():
    # A 4-packet file sent at once (W0 = 4): the arrivals find 0, 0, 1, 2 packets waiting;
    # with tau = 1 the 3rd and 4th arrivals each trigger a Source Quench.
    params = TcpParams(mss_bytes=MSS, p=0.0, w0=4, w_ss=4, rwnd=4, rule=_HALVING)
    res = run(Scenario(flows=[Flow(0.0, 4 * MSS, params)], topology=_signal_topology("source_quench", 1)))
    assert res.queue.seen.tolist() == [0, 0, 1, 2]
    assert res.signals_sent == 2 and res.flows[0].signals == 2


@pytest.mark.parametrize("signal", ["source_quench", "ecn"])
def test_signal_count_matches_the_queue_log(signal):
    topo = Dumbbell(queue_packets=6, signal=signal, signal_threshold_packets=3)
    flows = random_flows(20, ParetoSizes(4.0, 1.2), TCP, start_window_s=3.0, nodes=5, seed=9)
    res = run(Scenario(flows=flows, topology=topo))
    qs = res.queue
    above = qs.seen >= 3
    expect = int(above.sum()) if signal == "source_quench" else int((above & ~qs.dropped).sum())
    assert expect > 0 and res.signals_sent == expect
    assert sum(r.signals for r in res.flows) <= expect  # signals after completion are ignored


@pytest.mark.parametrize("signal", ["source_quench", "ecn"])
def test_signals_change_nothing_for_a_rule_that_ignores_them(signal):
    flows = random_flows(20, ParetoSizes(4.0, 1.2), TCP, start_window_s=3.0, nodes=5, seed=10)
    plain = run(Scenario(flows=flows, topology=Dumbbell(queue_packets=6)))
    sig = run(Scenario(flows=flows, topology=Dumbbell(queue_packets=6, signal=signal,
                                                      signal_threshold_packets=2)))
    assert sig.signals_sent > 0
    assert [r.completion_s for r in sig.flows] == [r.completion_s for r in plain.flows]
    assert [r.packets_lost for r in sig.flows] == [r.packets_lost for r in plain.flows]


@pytest.mark.parametrize("signal", ["source_quench", "ecn"])
def test_a_rule_that_backs_off_on_signals_loses_fewer_packets(signal):
    halving = TcpParams(mss_bytes=MSS, p=0.0, w0=1, w_ss=64, rwnd=64, rule=_HALVING)
    topo = _signal_topology(None, None, queue=10)
    flows = [Flow(0.0, 200 * MSS, halving)]
    plain = run(Scenario(flows=flows, topology=topo)).flows[0]
    sig_topo = _signal_topology(signal, 3, queue=10)
    sig = run(Scenario(flows=flows, topology=sig_topo)).flows[0]
    assert plain.packets_lost > 0  # slow start overflows the 10-packet buffer
    assert sig.signals > 0
    assert sig.packets_lost < plain.packets_lost


def test_signal_options_are_validated():
    with pytest.raises(ValueError, match="signal"):
        Dumbbell(signal="red", signal_threshold_packets=3)
    with pytest.raises(ValueError, match="signal_threshold_packets"):
        Dumbbell(signal="ecn")
    with pytest.raises(ValueError, match="signal"):
        Dumbbell(signal_threshold_packets=3)
    with pytest.raises(ValueError, match="signal_threshold_packets"):
        Dumbbell(signal="ecn", signal_threshold_packets=-1)


def test_module_example_runs_as_documented():
    import doctest

    import latency_model.sim.scenario as mod

    assert doctest.testmod(mod).failed == 0


def test_compiled_and_interpreted_flows_give_the_same_bits(monkeypatch):
    # Every event of every flow runs kernel.flow_event, compiled by numba or interpreted from the
    # same source: a busy scenario (drops, timeouts, signals, record_rtt / record_cwnd) must give
    # the same records and series either way.
    import latency_model.sim.kernel_multi as km
    from latency_model.sim import kernel

    compiled = kernel.compiled_flow_event()
    if compiled is None:
        pytest.skip("numba unavailable")
    tcp = TcpParams(mss_bytes=MSS, p=0.0, w0=2, w_ss=16, rwnd=32, dup_lt=1, early_retransmit=True,
                    rule=make_rule("smooth-start"))
    flows = random_flows(30, ParetoSizes(4.0, 1.2), tcp, start_window_s=2.0, nodes=5, seed=11)
    topo = Dumbbell(queue_packets=3, signal="ecn", signal_threshold_packets=2)
    results = []
    for fn in (compiled, kernel.flow_event):
        monkeypatch.setattr(km, "_FN", [fn])
        results.append(run(Scenario(flows=flows, topology=topo, record_rtt=True, record_cwnd=True)))
    a, b = results
    assert sum(r.timeouts for r in a.flows) > 0 and a.signals_sent > 0
    assert [r.to_dict() for r in a.flows] == [r.to_dict() for r in b.flows]
    assert np.array_equal(a.queue.arrival_s, b.queue.arrival_s)
    for x, y in zip(a.rtt, b.rtt):
        assert np.array_equal(x.rtt_s, y.rtt_s) and np.array_equal(x.cwnd_bytes, y.cwnd_bytes)
    for x, y in zip(a.cwnd, b.cwnd):
        assert np.array_equal(x.time_s, y.time_s) and np.array_equal(x.cwnd_packets, y.cwnd_packets)
