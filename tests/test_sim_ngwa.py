"""NGWA (Talau & Wille, Sections 2-2.3): stamping, flow division, Eq. (1), Eq. (4); on-off sources."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import latency_model.sim.scenario as scenario_mod
from latency_model.params import TcpParams
from latency_model.sim import SimConfig
from latency_model.sim.dumbbell import Dumbbell
from latency_model.sim.flat import P_DUPT
from latency_model.sim.kernel import FLOW_ACK, FLOW_SEND
from latency_model.sim.kernel_multi import FlatFlow, ensure_queues
from latency_model.sim.ngwa import (MODES, NgwaMode, NgwaReceiver, advertised_window,
                                    lower_stamp, mode_names, ngwa_mode, node_value, send_limit, smooth)
from latency_model.sim.onoff import OnOffSource
from latency_model.sim.scenario import Flow, Scenario, random_flows, run
from latency_model.sim.sizes import ParetoSizes

MSS = 1000
WIRE = MSS + 40  # SimConfig's 40 B headers
BIG = 64  # receiver buffer, packets: never the binding limit below


def _tcp(w0: float = 1.0) -> TcpParams:
    return TcpParams(mss_bytes=MSS, p=0.0, w0=w0, w_ss=float(BIG), rwnd=float(BIG), b=1)


class _Recording(NgwaReceiver):
    """NgwaReceiver that keeps the SYN stamp and every segment's stamp."""

    log: dict = {}

    def on_syn(self, stamp):
        self.log.setdefault("syn", []).append(stamp)
        super().on_syn(stamp)

    def on_segment(self, seg, now, stamp=None):
        self.log.setdefault(id(self), []).append((seg, stamp))
        super().on_segment(seg, now, stamp)


@pytest.fixture
def recorded(monkeypatch):
    log: dict = {}
    monkeypatch.setattr(_Recording, "log", log)
    monkeypatch.setattr(scenario_mod, "NgwaReceiver", _Recording)
    return log


def _stamps(log) -> list:
    """Stamps per receiver, in arrival order of first transmissions."""
    return [[s for _, s in v] for k, v in log.items() if k != "syn"]


# Table 1 and the pure formulas ------------------------------------------------------------

def test_table_1_modes_by_number_and_name():
    # Table 1: CW on in 1, 2, 5, 6; SE on in 2, 4, 6, 8; FD on in 5-8.
    for k in range(1, 9):
        m = ngwa_mode(k)
        assert (m.cw, m.se, m.fd) == (k in (1, 2, 5, 6), k % 2 == 0, k >= 5) == MODES[k]
        assert ngwa_mode(f"mode{k}") == ngwa_mode(str(k)) == m and m.stamping
    assert ngwa_mode("newreno") == NgwaMode("newreno", cw=True, stamping=False)
    assert ngwa_mode("RFC793").cw is False and not ngwa_mode("rfc793").stamping
    assert mode_names() == ("rfc793", "newreno") + tuple(f"mode{k}" for k in range(1, 9))


@pytest.mark.parametrize("bad", [0, 9, "mode0", "reno", True, 2.5])
def test_unknown_mode_is_named(bad):
    with pytest.raises(ValueError, match="mode must be one of 1..8"):
        ngwa_mode(bad)


def test_mode_parameters_are_validated():
    with pytest.raises(ValueError, match="alpha"):
        ngwa_mode(2, alpha=1.0)
    with pytest.raises(ValueError, match="w_max_bytes"):
        ngwa_mode(2, w_max_bytes=0)
    with pytest.raises(ValueError, match="stamping"):
        NgwaMode("x", cw=True, se=True, stamping=False)
    with pytest.raises(ValueError, match="free_bytes"):
        node_value(-1.0, 1, False)
    with pytest.raises(ValueError, match="n_flows"):
        node_value(100.0, 0, True)


def test_flow_division_and_advertised_window_by_hand():
    assert node_value(97000.0, 4, fd=True) == pytest.approx(0.98 * 97000 / 4)  # Eq. (3): 23765
    assert node_value(97000.0, 4, fd=False) == 97000.0
    assert lower_stamp(math.inf, 5200.0) == 5200.0 and lower_stamp(1040.0, 5200.0) == 1040.0
    assert advertised_window(66000, 65536, 23765.0) == 23765.0  # Eq. (2), NGWA on
    assert advertised_window(66000, 65536, None) == 65536  # NGWA off
    assert advertised_window(30000, 65536, math.inf) == 30000


def test_send_limit_is_equation_1():
    assert send_limit(w_a=8000, w_c=3000, w_u=1000, cw=True) == 2000  # min(W_a, W_c) - W_u
    assert send_limit(w_a=8000, w_c=3000, w_u=1000, cw=False) == 7000  # W_a - W_u
    assert send_limit(w_a=2000, w_c=3000, w_u=1000, cw=True) == 1000


def test_smoothing_equation_by_hand():
    # Eq. (4) with alpha = 0.3: 10000, then 0.7 * 10000 + 0.3 * 20000 = 13000,
    # then 0.7 * 13000 + 0.3 * 5000 = 10600.
    w = smooth(None, 10000.0, 0.3)
    assert w == 10000.0
    w = smooth(w, 20000.0, 0.3)
    assert w == pytest.approx(13000.0, rel=1e-15)
    assert smooth(w, 5000.0, 0.3) == pytest.approx(10600.0, rel=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1e6), min_size=1, max_size=30), st.floats(0.01, 0.99))
def test_smoothed_window_stays_within_its_samples(samples, alpha):
    w = None
    for x in samples:
        w = smooth(w, x, alpha)
    assert min(samples) * (1 - 1e-12) <= w <= max(samples) * (1 + 1e-12)


# Receiver and sender ends -------------------------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("mode1", [10000.0, 20000.0, 5000.0]),        # the latest stamp
    ("mode2", [10000.0, 13000.0, 10600.0]),       # Eq. (4), alpha = 0.3 (by hand above)
    ("newreno", [30000.0, 30000.0, 30000.0]),     # NGWA off: min(W_b, W_max)
])
def test_receiver_advertises_equation_2(name, expected):
    rcv = NgwaReceiver(ngwa_mode(name), w_b_bytes=30000.0)
    windows = []
    for seg, stamp in enumerate([10000.0, 20000.0, 5000.0]):
        rcv.on_segment(seg, 0.01 * seg, stamp)
        windows.append(rcv.window())
    assert windows == expected


@pytest.mark.parametrize("name", mode_names())
def test_each_mode_sends_what_equation_1_allows(name):
    # cwnd = W0 = 2 segments, W_a = 5000 B (5 segments): min(W_a, W_c) = 2000 with CW, 5000 without.
    mode = ngwa_mode(name)
    ensure_queues(20, BIG)
    snd = FlatFlow(_tcp(w0=2.0), 20 * MSS, SimConfig(), cwnd_on=mode.cw, window_bytes=5000.0)
    snd.event(FLOW_SEND, 0, 0.0, 0)
    sent = len(list(snd.take_data()))
    assert sent == (2 if mode.cw else 5)
    # A window update alone (a duplicate ACK carrying W_a = 8000) opens room only without CW.
    snd.event(FLOW_ACK, 0, 0.1, snd.seq, 8000.0)
    sent += len(list(snd.take_data()))
    assert sent == (2 if mode.cw else 8)
    assert snd.PI[P_DUPT] == (3 if mode.cw else 1 << 62)  # RFC 793: no fast retransmit


# Stamping on the dumbbell ----------------------------------------------------------------------

def _one_flow(recorded, access_queue, mode="mode3", w0=1.0):
    # Instantaneous or 10 Mb/s access, 1 Mb/s bottleneck (8.32 ms per 1040 B), router buffer 5.
    topo = Dumbbell(nodes=1, access_rate_bps=None if access_queue is None else 10e6, access_delay_s=0.001,
                    bottleneck_rate_bps=1e6, bottleneck_delay_s=0.01, queue_packets=5,
                    access_queue_packets=access_queue)
    run(Scenario(flows=[Flow(0.0, 5 * MSS, _tcp(w0), ngwa=ngwa_mode(mode))], topology=topo))
    return recorded


def test_router_stamps_its_free_space_in_bytes(recorded):
    # SYN: empty buffer, 5 x 1040 B = 5200 B free -> W_a = 5200: five segments leave at t = 0
    # (a sixth would need 6000). The first goes into service (5 places left), the others wait.
    _one_flow(recorded, access_queue=None)
    assert recorded["syn"] == [5200.0]
    assert _stamps(recorded) == [[5200.0, 4160.0, 3120.0, 2080.0, 1040.0]]


def test_smallest_value_along_the_path_wins(recorded):
    # Access buffer 2: the SYN sees 2 x 1040 = 2080 there (router 5200) -> two segments.
    # Segment 0: access 2080, router 5200 -> 2080; segment 1: access 1040 (one waits behind
    # segment 0), router 4160 (segment 0 in service) -> 1040.
    _one_flow(recorded, access_queue=2)
    assert recorded["syn"] == [2080.0]
    assert _stamps(recorded)[0][:2] == [2080.0, 1040.0]


def test_a_larger_access_buffer_leaves_the_router_value(recorded):
    # Access buffer 50 (>= 46 places free for these packets): the router's values win.
    _one_flow(recorded, access_queue=50)
    assert _stamps(recorded) == [[5200.0, 4160.0, 3120.0, 2080.0, 1040.0]]


def test_flow_division_counts_active_flows_from_start_to_completion(recorded):
    # A: one segment at t = 0, done long before t = 1. B at t = 1: n_f = 1 (A has left), empty
    # buffer -> SYN 0.98 x 5200 = 5096 -> five segments at once. C at t = 1 + 1e-6: n_f = 2
    # (A gone, B active), one place free behind B's four waiting segments -> 0.98 x 1040 / 2.
    # No access links: B's segments are in the router at t = 1.
    topo = Dumbbell(nodes=3, access_rate_bps=None, access_delay_s=0.0, bottleneck_rate_bps=1e6,
                    bottleneck_delay_s=0.01, queue_packets=5)
    m = ngwa_mode(7)
    flows = [Flow(0.0, MSS, _tcp(), node=0, ngwa=m), Flow(1.0, 5 * MSS, _tcp(), node=1, ngwa=m),
             Flow(1.0 + 1e-6, MSS, _tcp(), node=2, ngwa=m)]
    res = run(Scenario(flows=flows, topology=topo))
    assert recorded["syn"] == pytest.approx([0.98 * 5200, 0.98 * 5200, 0.98 * 1040 / 2], rel=1e-12)
    # B's segments: n_f = 1 when they are stamped (C starts later).
    assert _stamps(recorded)[1] == pytest.approx([0.98 * x for x in (5200, 4160, 3120, 2080, 1040)],
                                                 rel=1e-12)
    assert all(r.completed for r in res.flows) and res.column("packets_lost").sum() == 0


# Without NGWA nothing changes --------------------------------------------------------------------

def test_newreno_through_the_ngwa_ends_equals_the_plain_simulator():
    # NGWA off with W_max above the receiver buffer: Eq. (1) is the base sender's limit, so the
    # NGWA ends (Eq. 1 with W_a as the receiver window) must reproduce every record of the plain
    # ends (drops included).
    tcp = TcpParams(mss_bytes=1024, p=0.0, w0=1.0, w_ss=64.0, rwnd=64.0, b=1)
    flows = random_flows(20, ParetoSizes(4.0, 1.2), tcp, start_window_s=3.0, nodes=5, seed=4)
    plain = run(Scenario(flows=flows, topology=Dumbbell(queue_packets=3)))
    nr = ngwa_mode("newreno", w_max_bytes=10**6)
    same = run(Scenario(flows=[Flow(f.start_s, f.size_bytes, f.params, f.node, ngwa=nr) for f in flows],
                        topology=Dumbbell(queue_packets=3)))
    assert plain.column("packets_lost").sum() > 0
    assert [r.to_dict() for r in same.flows] == [r.to_dict() for r in plain.flows]


def test_flow_rejects_a_non_mode():
    with pytest.raises(ValueError, match="ngwa must be an NgwaMode"):
        Flow(0.0, MSS, _tcp(), ngwa="mode3")


# On-off sources --------------------------------------------------------------------------------

def test_on_off_source_times_by_hand():
    # 1040 B at 500 kb/s: one packet every 16.64 ms.
    src = OnOffSource(500e3, 1040, start_s=0.0, on_s=0.1, off_s=0.1, stop_s=1.0)
    assert src.interval_s == pytest.approx(0.01664)
    times, t = [0.0], 0.0
    while (t := src.next_send(t)) is not None:
        times.append(t)
    # 0, 16.64, ..., 99.84 ms (7 packets) in each of the 5 on periods [0.2 k, 0.2 k + 0.1).
    assert len(times) == 35
    assert times[7] == pytest.approx(0.2) and times[6] == pytest.approx(0.09984)
    always = OnOffSource(500e3, 1040, stop_s=1.0)
    n, t = 1, 0.0
    while (t := always.next_send(t)) is not None:
        n += 1
    assert n == 61  # k * 16.64 ms < 1 s for k = 0..60


def test_sources_fill_the_router_and_are_counted():
    # 5 Mb/s of 1040 B packets into a 1 Mb/s bottleneck with a 5-packet buffer for 1 s:
    # 601 packets offered (every 1.664 ms), the link serves one per 8.32 ms.
    src = OnOffSource(5e6, 1040, stop_s=1.0)
    res = run(Scenario(flows=[Flow(5.0, MSS, _tcp())], sources=(src,), horizon_s=2.0,
                       topology=Dumbbell(nodes=1, bottleneck_rate_bps=1e6, queue_packets=5)))
    assert res.source_sent == 601 == int(res.queue.arrivals[:1].sum())
    served = 601 - res.source_lost
    assert served == 1 + 5 + math.floor((1.0 - 1e-9) / 0.00832)  # in service + buffer + served by t = 1
    with pytest.raises(ValueError, match="horizon_s must be set"):
        Scenario(flows=[Flow(0.0, MSS, _tcp())], sources=(OnOffSource(5e6, 1040),))
    with pytest.raises(ValueError, match="rate_bps"):
        OnOffSource(0.0)
