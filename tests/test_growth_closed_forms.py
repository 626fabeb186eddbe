"""Flow-level closed forms of the papers' growth rules, against values worked out by hand."""

import math

import numpy as np
import pytest

from latency_model.growth import make_rule
from latency_model.growth.flow import (
    btcp_windows,
    flow_windows,
    generalized_packets_before_loss,
    lss_rtts_to_reach,
    packets_before_first_loss,
    smooth_a_of_w,
    smooth_restart_a_a,
    smooth_w,
    smooth_w_limit,
)

INF = np.array([np.inf])


def test_btcp4_mice32_flow_law_matches_paper_sequence():
    # Burst TCP, Section 3: "After the first packet arrival ... B-TCP(4) increases its window to 8".
    # 1 + floor(31/4)=8, +floor(24/4)=14, +floor(18/4)=18, +3=21, +2=23, +2=25, +1=26, then +1 (at least 1).
    expected = [1, 8, 14, 18, 21, 23, 25, 26, 27, 28, 29, 30, 31, 32, 33]
    assert btcp_windows(15, f=4, mice_t=32) == expected
    assert flow_windows(make_rule("btcp", f=4, mice_t=32), 1, 15) == expected


def test_btcp8_flow_law():
    # floor(31/8)=3 -> 4, floor(28/8)=3 -> 7, floor(25/8)=3 -> 10, floor(22/8)=2 -> 12, floor(20/8)=2 -> 14
    assert btcp_windows(6, f=8, mice_t=32) == [1, 4, 7, 10, 12, 14]


@pytest.mark.parametrize("beta, expected", [(2, 95), (4, 53)])
def test_generalized_slow_start_packets_before_first_loss_burst_tcp(beta, expected):
    assert generalized_packets_before_loss(beta, 32) == expected


def test_packets_before_first_loss_counting_convention():
    # A window equal to the pipe gets through whole; the first larger one loses its (pipe+1)-th packet.
    assert packets_before_first_loss([1, 2, 4], 4) == math.inf
    assert packets_before_first_loss([1, 2, 4, 8], 4) == 7 + 4
    assert packets_before_first_loss([1, 3, 9, 27, 81], 32) == 1 + 3 + 9 + 27 + 32


def test_generalized_flow_law_is_beta_per_rtt():
    rule = make_rule("generalized", beta=3)
    assert flow_windows(rule, 1, 5) == [1, 3, 9, 27, 81]
    # b = 2: factor 1 + (3 - 1)/2 = 2 per RTT
    assert flow_windows(rule, 1, 4, b=2) == [1, 2, 4, 8]
    assert rule.continuous_law(1).ss_log_growth == pytest.approx(math.log(3))


def test_smooth_limit_eq9_default_constants():
    # sqrt(2 * 40/0.003038 * ln 2 + 1): 40/0.003038 = 13166.557; * 2 ln 2 = 18252.62; +1 -> 135.106
    assert smooth_w_limit() == pytest.approx(135.1063, abs=1e-3)
    assert float(smooth_w(1e7)) == pytest.approx(smooth_w_limit(), rel=1e-12)
    assert float(smooth_w(0)) == 1.0


def test_smooth_eq8_solves_eq7_by_fine_euler_steps():
    """Independent check of the closed form: integrate dw/da = (A - A tanh(B a))/w from w(0) = 1.

    Euler with step h = 0.01 ACK has global error O(h); measured here below 0.6 % at a = 1
    (the steep start, D/w = 40) and below 0.1 % from a = 10 on, so the tolerances are 1 % and 0.2 %.
    """
    a_a, b_a, h = 40.0, 0.003038, 0.01
    w, a, got = 1.0, 0.0, {}
    for k in range(1, 301):
        for _ in range(100):
            w += h * (a_a - a_a * math.tanh(b_a * a)) / w
            a += h
        got[k] = w
    assert got[1] == pytest.approx(float(smooth_w(1)), rel=1e-2)
    for k in (10, 100, 300):
        assert got[k] == pytest.approx(float(smooth_w(k)), rel=2e-3)


@pytest.mark.parametrize("t", [0.25, 1.0, 9.0])
def test_smooth_eq11_inverts_eq8_and_eq10_moves_limit_to_current_window(t):
    a = np.array([1.0, 10.0, 100.0, 1000.0])
    assert smooth_a_of_w(smooth_w(a, t=t), t=t) == pytest.approx(a, rel=1e-6)
    w_c = smooth_w_limit(t=t)
    for w in (5.0, 60.0, 120.0):
        new_a = smooth_restart_a_a(40.0, 0.003038, t, w_c - w)
        assert smooth_w_limit(new_a, 0.003038, t) == pytest.approx(w, rel=1e-9)
    assert math.isinf(float(smooth_a_of_w(w_c + 1.0, t=t)))


def test_lss_flow_growth_past_max_ssthresh_is_at_most_half_max_ssthresh():
    rule = make_rule("lss", max_ssthresh=100)
    w = np.linspace(50.0, 20000.0, 4001)
    growth = rule.next_round_window(w, np.full_like(w, np.inf), 1) - w
    # From max_ssthresh/2 on, a round always crosses one band edge and gains exactly 100/2.
    assert np.all(growth <= 50.0 + 1e-9)
    assert growth == pytest.approx(np.full_like(w, 50.0), abs=1e-9)
    # b = 2: w/2 ACKs need not cross an edge: gain w/(2K) in [25, 25 (K+1)/K), still <= 50.
    g2 = rule.next_round_window(w, np.full_like(w, np.inf), 2) - w
    assert np.all(g2 <= 50.0 + 1e-9) and np.all(g2 >= 25.0 - 1e-9)
    assert g2.max() > 30.0


def test_lss_below_max_ssthresh_is_standard_slow_start():
    assert flow_windows(make_rule("lss", max_ssthresh=100), 1, 7) == [1, 2, 4, 8, 16, 32, 64]
    # 64 -> 36 ACKs to 100, 28 ACKs at 1/2 -> 114, then +50 per RTT
    assert flow_windows(make_rule("lss", max_ssthresh=100), 1, 10)[7:] == [114, 164, 214]


@pytest.mark.parametrize("m", [16, 100, 1000])
@pytest.mark.parametrize("target", [3000, 83000])
def test_lss_rfc3742_time_to_reach(m, target):
    rule = make_rule("lss", max_ssthresh=m)
    w, rtts = np.array([1.0]), 0
    while w[0] < target:
        w = rule.next_round_window(w, INF, 1)
        rtts += 1
    formula = lss_rtts_to_reach(target, m)
    # The per-round law counts whole RTTs: within one RTT of the RFC's formula.
    assert abs(rtts - formula) <= 1.0
    assert lss_rtts_to_reach(64, 100) == pytest.approx(6.0)


@pytest.mark.parametrize(
    "algorithm, expected",
    [
        # +3 below 25: 1 -> 4 -> 16; 16: 3 ACKs to 25, 12.5 ACKs (+2) to 50, 0.5 ACK (+1) -> 50.5;
        # 50.5: 24.5 ACKs to 75, 26 ACKs at +0.5 -> 88; 88: 24 ACKs to 100, 64 at 1/2 -> 132
        (2, [1, 4, 16, 50.5, 88, 132, 182]),
        # +2 below 25: 1 -> 3 -> 9; 9: 8 ACKs to 25, 1 at +1 -> 26 -> 52; 52: 48 to 100, 4 at 1/2 -> 102
        (3, [1, 3, 9, 26, 52, 102, 152]),
        # +2 below 50: 1 -> 3 -> 9 -> 27; 27: 11.5 ACKs to 50, 15.5 at +1 -> 65.5; 65.5: 34.5 to 100, 31 at 1/2
        (4, [1, 3, 9, 27, 65.5, 115.5, 165.5]),
    ],
)
def test_ass_per_rtt_window_by_band(algorithm, expected):
    got = flow_windows(make_rule("ass", algorithm=algorithm), 1, len(expected))
    assert got == pytest.approx(expected, abs=1e-9)


def test_ass_band_growth_factor_per_rtt():
    # Inside one band of per-ACK increment c, one RTT multiplies the window by 1 + c/b.
    rule = make_rule("ass", algorithm=2)
    assert rule.next_round_window(np.array([5.0]), INF, 1)[0] == pytest.approx(20.0)  # x4 below 25
    assert rule.next_round_window(np.array([5.0]), INF, 2)[0] == pytest.approx(12.5)  # x2.5
    # 26, b = 2: 13 ACKs, 12 at +2 reach 50, the 13th at +1 -> 51 (crosses a band edge)
    assert rule.next_round_window(np.array([26.0]), INF, 2)[0] == pytest.approx(51.0)
