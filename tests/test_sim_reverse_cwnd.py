"""Dumbbell extras: the optional reverse (ACK) port and the per-flow cwnd series."""

from __future__ import annotations

import math

import numpy as np
import pytest

from latency_model.growth import AssRule, StandardRule
from latency_model.params import TcpParams
from latency_model.sim.dumbbell import Dumbbell
from latency_model.sim.scenario import Flow, Scenario, random_flows, run
from latency_model.sim.sizes import ParetoSizes
from latency_model.sim.traces import CwndSeries

MSS = 1000


def _path(**reverse) -> Dumbbell:
    """No access links; the bottleneck serialises a 1040 B packet in 1 ms and delays 10 ms.
    A reverse port at 160 kb/s serialises a 40 B ACK in 2 ms."""
    return Dumbbell(nodes=1, access_rate_bps=None, access_delay_s=0.0, bottleneck_rate_bps=8.32e6,
                    bottleneck_delay_s=0.01, queue_packets=None, **reverse)


def _one_flow(segments: int, w0: int, topo: Dumbbell, rule=None):
    tcp = TcpParams(mss_bytes=MSS, p=0.0, w0=w0, w_ss=1000, rwnd=1000, b=1,
                    rule=rule if rule is not None else StandardRule())
    return run(Scenario(flows=(Flow(0.0, segments * MSS, tcp),), topology=topo, record_cwnd=True))


# Reverse port by hand ---------------------------------------------------------------------

def test_reverse_port_queues_acks_behind_each_other():
    # Data k leaves the bottleneck at (k+1) ms and reaches the receiver at 11 + k ms; its ACK
    # needs 2 ms at the reverse port, so ACKs leave it at 13, 15, 17, 19 ms and reach the
    # sender 10 ms later. Without the port: 21, 22, 23, 24 ms.
    res = _one_flow(4, 4, _path(reverse_rate_bps=160e3))
    cw = res.cwnd[0]
    np.testing.assert_allclose(cw.time_s, [0.0, 0.023, 0.025, 0.027, 0.029], atol=1e-12)
    assert cw.acked_bytes.tolist() == [0, 1000, 2000, 3000, 4000]
    assert cw.cwnd_packets.tolist() == [4.0, 5.0, 6.0, 7.0, 7.0]  # the last ACK completes: no growth
    assert res.flows[0].completion_s == pytest.approx(0.029, abs=1e-12)
    aq = res.ack_queue
    np.testing.assert_allclose(aq.arrival_s, [0.011, 0.012, 0.013, 0.014], atol=1e-12)
    assert aq.seen.tolist() == [0, 0, 0, 1]  # the ACK in service is not counted
    assert not aq.dropped.any() and res.flows[0].acks_lost == 0
    plain = _one_flow(4, 4, _path())
    np.testing.assert_allclose(plain.cwnd[0].time_s, [0.0, 0.021, 0.022, 0.023, 0.024], atol=1e-12)
    assert plain.ack_queue is None


@pytest.mark.parametrize("buffer, dropped, completion", [
    (0, [False, True, False], 0.025),   # ACK 2 finds ACK 1 in service and no room; ACK 3 covers it
    (1, [False, False, False], 0.027),  # room for one: ACK 2 waits 1 ms, ACK 3 leaves at 17 ms
])
def test_reverse_port_drops_acks_when_full(buffer, dropped, completion):
    res = _one_flow(3, 3, _path(reverse_rate_bps=160e3, reverse_queue_packets=buffer))
    assert res.ack_queue.dropped.tolist() == dropped
    assert res.flows[0].acks_lost == sum(dropped)
    assert res.flows[0].completion_s == pytest.approx(completion, abs=1e-12)
    assert res.flows[0].timeouts == 0  # a cumulative ACK makes up for a lost one


def test_reverse_queue_busy_scenario_keeps_drop_tail_and_conservation():
    tcp = TcpParams(mss_bytes=1024, p=0.0, w0=2, w_ss=64, rwnd=64, b=1)
    flows = random_flows(20, ParetoSizes(4.0, 1.2), tcp, start_window_s=2.0, nodes=5, seed=11)
    # 40 B ACKs at 32 kb/s take 10 ms each, the bottleneck's data 5.7 ms: ACKs pile up.
    topo = Dumbbell(queue_packets=5, reverse_rate_bps=32e3, reverse_queue_packets=2)
    res = run(Scenario(flows=flows, topology=topo, bin_s=0.5))
    aq = res.ack_queue
    lost = res.column("acks_lost")
    assert lost.sum() == aq.drops.sum() == aq.dropped.sum() > 0
    assert (aq.seen[aq.dropped] == 2).all() and (aq.seen[~aq.dropped] < 2).all()
    assert res.column("completed").all()
    assert (res.column("packets_sent") == res.column("packets_delivered") + res.column("packets_lost")).all()
    # Every accepted ACK holds the port 10 ms (busy time = accepted ACKs x 10 ms).
    busy = aq.busy_fraction.sum() * aq.bin_s
    assert busy == pytest.approx((~aq.dropped).sum() * 320 / 32e3, rel=1e-9)


def test_reverse_port_off_by_default_and_recording_changes_nothing():
    d = Dumbbell()
    assert (d.reverse_rate_bps, d.reverse_queue_packets, d.ack_bytes) == (None, None, 40)
    tcp = TcpParams(mss_bytes=1024, p=0.0, w0=1, w_ss=64, rwnd=64, b=1)
    flows = random_flows(20, ParetoSizes(4.0, 1.2), tcp, start_window_s=3.0, nodes=5, seed=4)
    plain = run(Scenario(flows=flows, topology=Dumbbell(queue_packets=3), bin_s=0.5))
    logged = run(Scenario(flows=flows, topology=Dumbbell(queue_packets=3), bin_s=0.5, record_cwnd=True))
    assert plain.flows == logged.flows and plain.end_s == logged.end_s
    assert plain.cwnd is None and plain.ack_queue is None and len(logged.cwnd) == 20
    assert sum(r.packets_lost for r in plain.flows) > 0  # the comparison covers loss recovery
    # Each series ends with the flow's whole transfer acknowledged.
    assert all(c.acked_bytes[-1] == r.size_bytes for c, r in zip(logged.cwnd, logged.flows))


@pytest.mark.parametrize("kwargs, name", [
    (dict(reverse_rate_bps=0.0), "reverse_rate_bps"),
    (dict(reverse_queue_packets=3), "reverse_queue_packets"),
    (dict(reverse_rate_bps=1e6, reverse_queue_packets=-1), "reverse_queue_packets"),
    (dict(ack_bytes=0), "ack_bytes"),
])
def test_reverse_port_parameters_are_validated(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Dumbbell(**kwargs)


# cwnd series --------------------------------------------------------------------------------

def test_cwnd_series_follows_rfc5681_slow_start():
    # No loss, one ACK per segment: cwnd = W0 + segments acknowledged (RFC 5681 Section 3.1).
    res = _one_flow(200, 2, _path())
    cw = res.cwnd[0]
    np.testing.assert_array_equal(cw.cwnd_packets[:-1], 2 + cw.acked_bytes[:-1] / MSS)
    assert (np.diff(cw.time_s) >= 0).all() and cw.ssthresh_packets.tolist() == [1000.0] * len(cw.time_s)


def test_cwnd_series_shows_algorithm_2_bands():
    # Algorithm 2 per ACK: +3 below 25, +2 in [25, 50), +1 in [50, 75), +0.5 in [75, 100),
    # then RFC 3742 with max_ssthresh 100: +1 up to cwnd = 100 ("cwnd <= max_ssthresh"),
    # +MSS/int(cwnd/50) = +0.5 packet in (100, 150).
    res = _one_flow(120, 1, _path(), rule=AssRule(algorithm=2))
    w = res.cwnd[0].cwnd_packets[:-1]  # the completing ACK does not grow cwnd
    step = np.diff(w)
    v = w[:-1]
    expect = np.select([v < 25, v < 50, v < 75, v < 100, v == 100, v < 150], [3.0, 2.0, 1.0, 0.5, 1.0, 0.5],
                       np.nan)
    np.testing.assert_array_equal(step, expect)
    assert w[-1] > 100  # the run reaches the LSS region


def test_cwnd_series_step_function_and_goodput_by_hand():
    cw = CwndSeries(time_s=np.array([0.0, 1.0, 2.5]), cwnd_packets=np.array([1.0, 2.0, 3.0]),
                    ssthresh_packets=np.array([9.0, 9.0, 9.0]), acked_bytes=np.array([0, 1000, 3000]))
    got = cw.cwnd_at([-1.0, 0.0, 0.5, 1.0, 3.0])
    assert math.isnan(got[0]) and got[1:].tolist() == [1.0, 1.0, 2.0, 3.0]
    assert cw.acked_at([0.99, 1.0, 2.6]).tolist() == [0, 1000, 3000]
    # Bins [0,1), [1,2), [2,3): the ACK at exactly 1.0 opens bin 2.
    np.testing.assert_allclose(cw.goodput_bps(3.0, 1.0), [0.0, 8000.0, 16000.0])
    # A last, shorter bin [2, 2.5] holds the ACK at its end (the horizon) over its own length.
    np.testing.assert_allclose(cw.goodput_bps(2.5, 1.0), [0.0, 8000.0, 16000.0 / 0.5])
    with pytest.raises(ValueError, match="bin_s"):
        cw.goodput_bps(3.0, 0.0)
