"""SmoothTCP congestion avoidance (rule 'smoothtcp', Eq. 3-6) against hand-computed values,
the sign of D under Source Quench, and the sender's RTT hook."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from latency_model.growth import SmoothStartRule, SmoothTcpRule, StandardRule, make_rule
from latency_model.growth.smoothtcp import partial
from latency_model.params import TcpParams
from latency_model.sim.dumbbell import Dumbbell
from latency_model.sim.scenario import Flow, Scenario, run

MSS = 586
KAPPA, B_Q, C_Q = 0.005, 0.5493, 0.0625  # the paper's Section V


def ca_state(rule, w_packets, u_q=0.0):
    """A state past the smooth start (congestion avoidance) with window w and smoothed SQ rate u_q."""
    s = rule.new_state(w_packets * MSS, 1e9, MSS)
    s.active = False
    s.rate[4] = u_q
    return s


def sq(rule, s, n):
    for _ in range(n):
        rule.on_signal(s, "source_quench")


def test_eq5_partial_at_one_message_per_ack_is_half_of_c_q():
    # B_q = 0.5493 ~ atanh(1/2): tanh(B_q * 1) = 0.49999..., so dw/dq = C_q / 2 = 0.03125.
    assert partial(1.0, 0.0, B_Q, C_Q, 0.0) == pytest.approx(0.03125, rel=1e-4)
    assert partial(0.0, 0.0, B_Q, C_Q, 0.0) == 0.0
    assert partial(2.0, 0.1, 1.0, 0.2, -1.0) == pytest.approx(0.1 + 0.2 * math.tanh(1.0), rel=1e-15)


def test_without_signals_d_is_kappa_and_dw_is_kappa_over_w():
    rule = SmoothTcpRule()
    s = ca_state(rule, 10.0)
    rule.on_ack(s, MSS)
    assert s.last_d == KAPPA
    assert s.cwnd / MSS == pytest.approx(10.0 + KAPPA / 10.0, rel=1e-15)


def test_sustained_source_quench_cuts_w_by_d_times_w():
    # u_q = 1 and one message since the last ACK: u_q stays 1 (1 + (1 - 1)/8),
    # D = 0.005 - (0 + 0.0625 tanh(0.5493)) * 1 = -0.026249..., dw = D * w (Eq. 3, D <= 0).
    rule = SmoothTcpRule()
    s = ca_state(rule, 10.0, u_q=1.0)
    sq(rule, s, 1)
    rule.on_ack(s, MSS)
    d = 0.005 - 0.0625 * math.tanh(0.5493)
    assert s.last_d == pytest.approx(d, rel=1e-12) and d == pytest.approx(-0.026249, abs=1e-6)
    assert s.cwnd / MSS == pytest.approx(10.0 + d * 10.0, rel=1e-12)
    assert s.rate[4] == 1.0


def test_lone_source_quench_after_a_quiet_spell_is_smaller_than_kappa():
    # u_q = 0 -> 0 + (1 - 0)/8 = 0.125; D = 0.005 - 0.0625 tanh(0.5493 * 0.125) = +0.000713...,
    # so the window still grows, by D / w (vertical smoothness: a lone signal hardly counts).
    rule = SmoothTcpRule()
    s = ca_state(rule, 4.0)
    sq(rule, s, 1)
    rule.on_ack(s, MSS)
    d = 0.005 - 0.0625 * math.tanh(0.5493 * 0.125)
    assert s.rate[4] == 0.125
    assert s.last_d == pytest.approx(d, rel=1e-12) and 0.0007 < d < 0.00072
    assert s.cwnd / MSS == pytest.approx(4.0 + d / 4.0, rel=1e-12)


def test_d_sign_follows_source_quench_as_the_paper_says():
    # Section IV.B: kappa raises w each ACK (dw = D/w); once the queue is overloaded, signals
    # arrive and "the sender would start to decrease w by dw = D x w".
    rule = SmoothTcpRule()
    s = ca_state(rule, 8.0)
    ds = []
    for _ in range(12):  # one Source Quench per ACK
        sq(rule, s, 1)
        w = s.cwnd / MSS
        rule.on_ack(s, MSS)
        ds.append(s.last_d)
        if s.last_d <= 0:
            assert s.cwnd / MSS == pytest.approx(w * (1 + s.last_d), rel=1e-12)
        else:
            assert s.cwnd / MSS == pytest.approx(w + s.last_d / w, rel=1e-12)
    # u_q after k ACKs: 1 - (7/8)^k; D < 0 once 0.0625 tanh(0.5493 u_q) > 0.005, from k = 2 on.
    u = [1 - (7 / 8) ** k for k in range(1, 13)]
    assert ds == pytest.approx([0.005 - 0.0625 * math.tanh(0.5493 * x) for x in u], rel=1e-12)
    assert ds[0] > 0 and all(d < 0 for d in ds[1:])
    assert all(b < a for a, b in zip(ds, ds[1:]))  # tanh saturates: more negative as the rate builds
    w = s.cwnd / MSS
    rule.on_ack(s, MSS)  # the signals stop: D = kappa again, the window grows
    assert s.last_d == KAPPA and s.cwnd / MSS == pytest.approx(w + KAPPA / w, rel=1e-12)


def test_fairness_rule_large_windows_gain_less_and_lose_more():
    rule = SmoothTcpRule()
    small, large = ca_state(rule, 2.0), ca_state(rule, 20.0)
    for s in (small, large):
        rule.on_ack(s, MSS)
    assert small.cwnd / MSS - 2.0 == pytest.approx(KAPPA / 2.0) and large.cwnd / MSS - 20.0 == pytest.approx(KAPPA / 20.0)
    small, large = ca_state(rule, 2.0, u_q=1.0), ca_state(rule, 20.0, u_q=1.0)
    for s in (small, large):
        sq(rule, s, 1)
        rule.on_ack(s, MSS)
    d = 0.005 - 0.0625 * math.tanh(0.5493)
    assert small.cwnd / MSS - 2.0 == pytest.approx(2.0 * d) and large.cwnd / MSS - 20.0 == pytest.approx(20.0 * d)


def test_window_floor_is_one_packet():
    rule = SmoothTcpRule(c_q=100.0)
    s = ca_state(rule, 1.5, u_q=1.0)
    sq(rule, s, 3)
    rule.on_ack(s, MSS)
    assert s.last_d < -1 and s.cwnd == MSS


def test_rtt_metric_dj_by_hand():
    # A_j = 0.1 per second, B_j = C_j = 0: dw/dj = -0.1. First sample initialises u_j (dj = 0),
    # the second moves it by (2 - 1)/8 = 0.125 s: D = 0.005 - 0.1 * 0.125 = -0.0075.
    rule = SmoothTcpRule(a_j=0.1)
    s = ca_state(rule, 10.0)
    rule.on_rtt_sample(s, 1.0)
    rule.on_ack(s, MSS)
    assert s.rate[0] == 1.0 and s.last_d == KAPPA
    w = s.cwnd / MSS
    rule.on_rtt_sample(s, 2.0)
    rule.on_ack(s, MSS)
    assert s.rate[0] == 1.125 and s.last_d == pytest.approx(-0.0075, rel=1e-12)
    assert s.cwnd / MSS == pytest.approx(w * (1 - 0.0075), rel=1e-12)
    w = s.cwnd / MSS
    rule.on_ack(s, MSS)  # no sample (Karn's rule): u_j unchanged, dj = 0
    assert s.rate[0] == 1.125 and s.last_d == KAPPA


@pytest.mark.parametrize("event, index, coef", [
    ("timeout", 1, "x"), ("fast_retransmit", 2, "f"), ("ecn", 3, "e"), ("source_quench", 4, "q"),
])
def test_each_event_metric_counts_its_own_events(event, index, coef):
    # A = 0.2, B = 1, C = 0.4, M = 0.5 for one metric, all others 0: D = 0.005 - (0.2 + 0.4 tanh(1/8 + 0.5)).
    params = {f"a_{coef}": 0.2, f"b_{coef}": 1.0, f"c_{coef}": 0.4, f"m_{coef}": 0.5}
    if coef != "q":
        params.update(c_q=0.0)
    rule = SmoothTcpRule(**params)
    s = ca_state(rule, 5.0)
    if event in ("timeout", "fast_retransmit"):
        rule.on_congestion_event(s, event)
    else:
        rule.on_signal(s, event)
    assert s.pending[index] == 1.0
    rule.on_ack(s, MSS)
    assert s.rate[index] == 0.125
    assert s.last_d == pytest.approx(0.005 - (0.2 + 0.4 * math.tanh(0.125 + 0.5)), rel=1e-12)


def test_smooth_start_is_the_smooth_start_rules_and_signals_restart_it_only_with_ss_signal_all():
    # B_a = 0.05: D(a) = 40 (1 - tanh(0.05 a)) <= kappa from a ~ 96, so 150 ACKs reach avoidance.
    plain, rule = SmoothStartRule(b_a=0.05), SmoothTcpRule(b_a=0.05)
    a, b = plain.new_state(MSS, 1e9, MSS), rule.new_state(MSS, 1e9, MSS)
    for _ in range(150):
        plain.on_ack(a, MSS)
        rule.on_ack(b, MSS)
        assert b.cwnd == pytest.approx(a.cwnd, rel=1e-12) and b.active == a.active == b.in_slow_start
    assert not b.active
    # Source Quench in the smooth start: counted; halves and restarts (Eq. 10) only with "all".
    loss, every = SmoothTcpRule(), SmoothTcpRule(ss_signal="all")
    for r in (loss, every):
        s = r.new_state(MSS, 1e9, MSS)
        for _ in range(50):
            r.on_ack(s, MSS)
        w = s.cwnd
        r.on_signal(s, "source_quench")
        assert s.pending[4] == 1.0
        assert s.cwnd == (w if r is loss else w / 2)
        assert s.w_c == pytest.approx(135.1063, abs=1e-3) if r is loss else s.w_c == pytest.approx(w / MSS)
    # Other signals are not SmoothTCP metrics.
    s = loss.new_state(MSS, 1e9, MSS)
    loss.on_signal(s, "ngwa")
    assert s.pending[1:] == [0.0] * 4


def test_flow_level_law_is_the_smooth_starts():
    import numpy as np

    w = np.array([1.0, 5.0, 50.0, 200.0])
    assert np.array_equal(SmoothTcpRule().next_round_window(w, np.full(4, 64.0), 1),
                          SmoothStartRule().next_round_window(w, np.full(4, 64.0), 1))


def test_registry_and_describe():
    r = make_rule("smoothtcp", c_q=0.1)
    d = r.describe()
    assert d["name"] == "smoothtcp" and d["c_q"] == 0.1 and d["b_q"] == 0.5493 and d["kappa"] == 0.005
    assert d["a_q"] == 0.0 and d["m_q"] == 0.0 and d["alpha"] == 0.125 and d["ss_signal"] == "loss"
    with pytest.raises(ValueError, match="metric must be one of j, x, f, e, q"):
        r.coefficients("z")


@settings(deadline=None, max_examples=20)
@given(events=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["ack", "sq", "ecn", "fr", "to", "rtt"]),
                                 st.floats(0.01, 5.0)), min_size=1, max_size=40),
       w0=st.floats(1.0, 200.0), c_q=st.floats(0.0, 2.0))
def test_window_stays_finite_and_at_least_one_packet_and_grows_without_signals(events, w0, c_q):
    rule = SmoothTcpRule(c_q=c_q, a_j=0.05)
    s = ca_state(rule, w0)
    signals = False
    for n, kind, r in events:
        if kind == "ack":
            before = s.cwnd
            rule.on_ack(s, MSS)
            if not signals:
                assert s.cwnd >= before
            signals = False
        elif kind == "rtt":
            rule.on_rtt_sample(s, r)
            signals = True  # an RTT change may lower the window (a_j > 0)
        else:
            for _ in range(n):
                if kind in ("sq", "ecn"):
                    rule.on_signal(s, "source_quench" if kind == "sq" else "ecn")
                else:
                    rule.on_congestion_event(s, "fast_retransmit" if kind == "fr" else "timeout")
            signals = signals or n > 0
        assert math.isfinite(s.cwnd) and s.cwnd >= MSS


# --- the sender's hook and the scenario's RTT log -------------------------------------------

def test_the_scenario_log_holds_the_senders_rtt_samples():
    # Unlimited buffer, b = 1: no loss, every segment ACKed at once, so every ACK is new and
    # gives a Karn-valid sample: 60 samples. The first segment crosses an empty path: its
    # sample is the propagation round trip plus one packet's serialisation on the three links.
    tcp = TcpParams(mss_bytes=1000, p=0.0, w0=1, w_ss=64, rwnd=64)
    topo = Dumbbell(nodes=1, queue_packets=None)
    res = run(Scenario(flows=[Flow(0.0, 60 * 1000, tcp)], topology=topo, record_rtt=True))
    log = res.rtt[0]
    assert res.flows[0].completed and res.flows[0].bytes_acked == 60 * 1000
    ser = (1000 + 40) * 8 * (1 / 10e6 + 1 / 1.5e6 + 1 / 10e6)
    assert log.rtt_s.size == 60
    assert log.rtt_s[0] == pytest.approx(topo.round_trip_s + ser, abs=1e-12)
    # Every sample spans at least the propagation round trip plus one packet's serialisation.
    assert log.rtt_s.min() >= topo.round_trip_s + ser - 1e-12
    assert (log.time_s[1:] >= log.time_s[:-1]).all() and log.slow_start[0]
    assert log.cwnd_bytes[0] == 1000.0
    # Without record_rtt nothing is kept; the flag is validated.
    plain = run(Scenario(flows=[Flow(0.0, 60 * 1000, tcp)], topology=topo))
    assert plain.rtt == () and plain.flows == res.flows
    with pytest.raises(ValueError, match="record_rtt must be True or False"):
        Scenario(flows=[Flow(0.0, 1000, tcp)], record_rtt=1)


def test_a_scenario_refuses_a_rule_of_an_unregistered_class():
    class Spy(StandardRule):
        pass

    tcp = TcpParams(mss_bytes=1000, p=0.0, w0=1, w_ss=64, rwnd=64, rule=Spy())
    with pytest.raises(ValueError, match=r"flows\[0\]\.params\.rule 'standard' of class .*Spy is not a registered "
                                         "growth rule class"):
        run(Scenario(flows=[Flow(0.0, 1000, tcp)], topology=Dumbbell(nodes=1)))


def test_bytes_acked_of_a_censored_flow_is_its_cumulative_ack():
    # Unlimited buffer: no loss, so (b = 1, in-order delivery) each new ACK covers one more
    # segment and carries one RTT sample; bytes_acked = samples x MSS.
    tcp = TcpParams(mss_bytes=1000, p=0.0, w0=1, w_ss=64, rwnd=64)
    res = run(Scenario(flows=[Flow(0.0, 10**6, tcp)], topology=Dumbbell(nodes=1, queue_packets=None),
                       horizon_s=1.0, record_rtt=True))
    rec = res.flows[0]
    assert not rec.completed and rec.retransmissions == 0
    assert rec.bytes_acked == 1000 * res.rtt[0].rtt_s.size > 0
