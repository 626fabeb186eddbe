"""CUBIC with HyStart (growth/cubic.py) against values derived by hand from Linux's
net/ipv4/tcp_cubic.c and RFC 9438. Windows in packets of MSS bytes."""

import dataclasses
import math

import pytest

from latency_model import TcpParams
from latency_model.growth import RULES, make_rule
from latency_model.growth.cubic import CubicRule, cubic_root
from latency_model.sim import SimConfig, run_transfer

MSS = 500
INF = math.inf


def pkts(st) -> float:
    return st.cwnd / MSS


def test_registered_as_cubic():
    assert RULES["cubic"] is CubicRule and make_rule("cubic").beta == 717


@pytest.mark.parametrize("a, root", [
    (27, 3),  # table branch: (v[27] + 35) >> 6 = (190 + 35) >> 6
    (63, 4),  # (254 + 35) >> 6
    # fls64 = 20 -> b = 5, shift = 30, x = ((197 + 10) << 5) >> 6 = 103,
    # Newton: 206 + 10**6 // (103 * 102) = 301, (301 * 341) >> 10 = 100
    (10**6, 100),
])
def test_cubic_root_by_hand(a, root):
    assert cubic_root(a) == root


def test_cubic_root_within_the_kernels_stated_error():
    # tcp_cubic.c: "Avg err ~= 0.195%"; every value here within 1% (and +-1 for small roots)
    for a in [64, 100, 999, 12345, 2**20, 10**9, 16090414062, 2**40, 10**15]:
        exact = a ** (1 / 3)
        assert abs(cubic_root(a) - exact) <= max(0.01 * exact, 1.0), a


def test_k_after_a_loss_matches_rfc9438():
    # W_max = 20, cwnd = 14 after the loss: RFC 9438 Eq. 2, K = cbrt((20 - 14) / 0.4) = 2.466 s,
    # in 1/1024 s: 2525. The kernel: cubic_root(cube_factor * 6), cube_factor = 2**40 // 410.
    rule = CubicRule()
    assert rule.cube_factor == 2**40 // 410 == 2681735677
    assert abs(cubic_root(rule.cube_factor * 6) - 2525) <= 0.005 * 2525


def test_ssthresh_is_0_7_cwnd_with_fast_convergence():
    rule = CubicRule()
    st = rule.new_state(20 * MSS, INF, MSS)
    # cubictcp_recalc_ssthresh: max(20 * 717 // 1024, 2) = 14 packets, W_max = 20
    assert rule.ssthresh_after_loss(st, flight_bytes=99 * MSS) == 14 * MSS
    assert st.last_max_cwnd == 20
    st.cwnd = 14 * MSS
    # second loss below W_max: W_max = 14 * (1024 + 717) // 2048 = 11; ssthresh = 14 * 717 // 1024 = 9
    assert rule.ssthresh_after_loss(st, flight_bytes=0) == 9 * MSS
    assert st.last_max_cwnd == 11
    # never below 2 packets
    st.cwnd = 2 * MSS
    assert rule.ssthresh_after_loss(st, 0) == 2 * MSS


def test_slow_start_adds_every_acked_packet_up_to_ssthresh():
    rule = CubicRule()
    st = rule.new_state(10 * MSS, INF, MSS)
    rule.on_ack(st, 2 * MSS)  # tcp_slow_start: no ABC cap
    assert pkts(st) == 12
    st = rule.new_state(10 * MSS, 11 * MSS, MSS)
    rule.on_ack(st, 3 * MSS)  # capped at 11; the 2 left over go to congestion avoidance (cnt 20)
    assert pkts(st) == 11 and st.snd_cwnd_cnt == 2


def test_first_epoch_grows_one_packet_per_20_acked():
    # last_max_cwnd = 0 (no loss yet): the cubic target is cwnd itself at t = 0, cnt = 100 cwnd,
    # capped at 20 ("increase cwnd 5% per RTT"); TCP friendliness needs (cwnd * 15) >> 3 = 56
    # acked packets per Reno increment, so it does not lower cnt within 40 ACKs.
    rule = CubicRule()
    st = rule.new_state(30 * MSS, 30 * MSS, MSS)
    st.now_s = 0.0
    for i in range(40):
        rule.on_ack(st, MSS)
        if i == 18:
            assert pkts(st) == 30
        if i == 19:
            assert pkts(st) == 31
    assert pkts(st) == 32 and st.cnt == 20


def test_target_one_second_after_a_loss_follows_rfc9438():
    # W_max = 20, cwnd 14: the kernel's K = cubic_root(2681735677 * 6) = 2523 (RFC: 2525). At the
    # epoch start t = 0 the target is 20 - (410 * 2523**3 >> 40) = 20 - 5 = 15 (the truncated
    # delta puts it one packet above RFC 9438's W(0) = 14), cnt = 14 // (15 - 14) = 14. One second
    # later (t = 1024 in 1/1024 s) delta = 410 * 1499**3 >> 40 = 1, target 19 (RFC 9438 Eq. 1:
    # W(1) = 0.4 (1 - 2.466)**3 + 20 = 18.74), cnt = 14 // (19 - 14) = 2.
    rule = CubicRule()
    st = rule.new_state(20 * MSS, INF, MSS)
    st.ssthresh = rule.ssthresh_after_loss(st, 0)
    st.cwnd = st.ssthresh
    st.now_s = 10.0
    rule.on_ack(st, MSS)
    assert st.bic_k == 2523 and st.bic_origin_point == 20 and st.cnt == 14
    st.now_s = 11.0
    rule.on_ack(st, MSS)
    assert st.cnt == 2


def test_hystart_delay_ends_slow_start_at_the_ninth_sample_of_a_slower_round():
    # cwnd 16 (hystart_low_window). Round 1: 16 ACKs with 100 ms samples (delay_min 100 ms),
    # cwnd 16 -> 32. Round 2 opens at the 17th sample; its minimum over 8 samples of 120 ms
    # exceeds 100 + clamp(100/8, 4, 16) = 112.5 ms, so the 9th sample of the round (the 25th,
    # before its ACK, cwnd = 16 + 24 = 40) sets ssthresh = cwnd = 40.
    rule = CubicRule()
    st = rule.new_state(16 * MSS, INF, MSS)
    for i in range(30):
        rule.on_rtt_sample(st, 0.1 if i < 16 else 0.12)
        if i == 24:
            assert st.found and st.ssthresh == 40 * MSS
        rule.on_ack(st, MSS)
    assert st.delay_min_us == 100000


@pytest.mark.parametrize("rule, start, rtt", [(CubicRule(), 16, 0.1), (CubicRule(hystart=False), 16, 0.2),
                                              (CubicRule(), 8, 0.2)])
def test_hystart_stays_off_without_delay_growth_when_disabled_or_below_16(rule, start, rtt):
    st = rule.new_state(start * MSS, INF, MSS)
    for i in range(30):
        rule.on_rtt_sample(st, 0.1 if i < 4 else rtt)
        rule.on_ack(st, MSS)
        if pkts(st) >= 16 and start < 16:
            break
    if start >= 16:
        assert not st.found and st.ssthresh == INF and pkts(st) == start + 30


def test_timeout_resets_cubic_and_hystart():
    rule = CubicRule()
    st = rule.new_state(20 * MSS, INF, MSS)
    rule.on_rtt_sample(st, 0.1)
    rule.ssthresh_after_loss(st, 0)
    rule.on_congestion_event(st, "timeout")  # cubictcp_state(TCP_CA_Loss): bictcp_reset
    assert st.last_max_cwnd == 0 and st.delay_min_us == 0 and st.epoch_start == 0 and not st.found
    with pytest.raises(ValueError, match="kind"):
        rule.on_congestion_event(st, "ecn")


def test_the_simulator_runs_cubic_and_cuts_to_0_7_on_a_fast_retransmit():
    config = SimConfig.profile("linux", delay_s=0.05, link_rate_bps=100e6)
    params = TcpParams(mss_bytes=MSS, rtt_s=0.1, w0=10, rule=make_rule("cubic"), p=0.0)
    # loss-free: the same staircase as Reno (quick ACKs: one ACK per segment, +1 each)
    reno = TcpParams(mss_bytes=MSS, rtt_s=0.1, w0=10, p=0.0)
    for n in (1, 10, 11, 40):
        a = run_transfer(params, size_packets=n, config=config, drops=[]).completion_s
        b = run_transfer(reno, size_packets=n, config=config, drops=[]).completion_s
        assert a == b
    _, trace = run_transfer(params, size_packets=40, config=config, drops=[25], trace=True)
    fr = [row for row in trace if row.event == "fast_retransmit"]
    # slow start stops at w_ss = 30 packets (TcpParams' default); entering recovery,
    # ssthresh = max(30 * 717 // 1024, 2) = 21 packets (Reno would take 15)
    assert len(fr) == 1 and fr[0].ssthresh_bytes == 21 * MSS
    # the row shows cwnd when the retransmission leaves: with Linux's PRR (linux_prr) its first
    # step has run (in flight + 1 < 21 packets); with RFC 6937's order, the 30 packets of before
    assert fr[0].cwnd_bytes < 21 * MSS
    _, trace = run_transfer(params, size_packets=40, config=dataclasses.replace(config, linux_prr=False),
                            drops=[25], trace=True)
    fr = [row for row in trace if row.event == "fast_retransmit"]
    assert len(fr) == 1 and fr[0].cwnd_bytes == 30 * MSS and fr[0].ssthresh_bytes == 21 * MSS
