"""The literature's baselines: PFTK's throughput (SIGCOMM 1998) and CSA's latency (INFOCOM 2000).

Every expected value is worked in the test from the papers' formulas, in plain arithmetic
written out here (not with the modules' helpers), with the intermediate numbers in the
comments (computed once with mpmath at 30 digits, /tmp script; they are quoted, not used).
Tolerances: 1e-12 relative where the test repeats the model's arithmetic in double
precision (the only difference is rounding order), 1e-9 against the quoted 30-digit
numbers (they are printed to 15+ digits).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from latency_model.growth import BtcpRule, StandardRule
from latency_model.model import csa, pftk, registry
from latency_model.params import TcpParams, apply_variant

REL = 1e-12  # same formula, same double arithmetic, another order of operations


# ---------------------------------------------------------------------------
# Plain transcriptions of the papers' formulas (independent of the modules)

def q_hat(p, w, k=3):
    """PFTK Section 2.2, closed form of Q-hat (CSA Eq. 17), threshold k."""
    q = 1.0 - p
    if w <= k:
        return 1.0
    return min(1.0, (1 - q**k) * (1 + q**k * (1 - q**(w - k))) / (1 - q**w))


def f_backoff(p):
    """PFTK Eq. (28): 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6."""
    return 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


# ---------------------------------------------------------------------------
# PFTK

def test_backoff_polynomial_at_one_half_is_four():
    # f(1/2) = 1 + 1/2 + 2/4 + 4/8 + 8/16 + 16/32 + 32/64 = 1 + 6 * 1/2 = 4 exactly.
    assert pftk.backoff_factor(0.5) == 4.0
    assert pftk.backoff_factor(0.0) == 1.0


def test_backoff_polynomial_is_the_mean_length_of_a_timeout_sequence():
    # PFTK Section 2.2 (restated in the Emory CS 558 notes, padhye-5.html): a timeout
    # sequence of k timeouts has probability p^(k-1) (1-p) and lasts L_k T_0 with
    # L_k = 2^k - 1 for k <= 6 (T0, 2T0, ..., 32T0) and 63 + 64 (k - 6) after (the
    # back-off stops at 64 T0). Summed directly (truncation p^4000 ~ 0), the mean length
    # is T0 f(p)/(1-p) with f of Eq. (28), and the mean number of packets sent is 1/(1-p).
    for p in (0.01, 0.1, 0.3, 0.5):
        lengths = [2**k - 1 if k <= 6 else 63 + 64 * (k - 6) for k in range(1, 4001)]
        mean_len = sum(length * p ** (k - 1) * (1 - p) for k, length in enumerate(lengths, 1))
        mean_pkts = sum(k * p ** (k - 1) * (1 - p) for k in range(1, 4001))
        assert mean_len == pytest.approx(pftk.backoff_factor(p) / (1 - p), rel=1e-12)
        assert mean_pkts == pytest.approx(1 / (1 - p), rel=1e-12)


@pytest.mark.parametrize("w,k", [(w, k) for k in (1, 3, 5) for w in (4, 7, 12, 30) if w > k])
def test_q_hat_closed_form_equals_pftk_definition_by_summation(w, k):
    # PFTK Section 2.2: Q(w) = sum_{j<k} A(w, j) + sum_{j=k}^{w-1} A(w, j) sum_{m<k} C(j, m)
    # with A(w, j) = (1-p)^j p / (1 - (1-p)^w) (the loss is packet j+1 of the window) and
    # C(n, m) = (1-p)^m p for m < n, (1-p)^n for m = n (m of the n packets of the last
    # round arrive). The closed form must equal this sum at integer windows w > k
    # (w <= k: Q = 1 by definition).
    p = 0.07
    q = 1 - p

    def a(j):
        return q**j * p / (1 - q**w)

    def c(n, m):
        return q**m * p if m < n else q**n

    total = sum(a(j) for j in range(k))
    total += sum(a(j) * sum(c(j, m) for m in range(k)) for j in range(k, w))
    assert pftk.timeout_probability(p, w, k) == pytest.approx(total, rel=1e-12)
    assert pftk.timeout_probability(p, 2.5, 3) == 1.0  # w <= 3: always a timeout


def test_expected_window_eq13_by_hand():
    # p = 0.05, b = 2: (2+b)/(3b) = 2/3; 8(1-p)/(3bp) = 7.6/0.3 = 25.3333...;
    # E[W] = 2/3 + sqrt(25.3333 + 0.4444) = 5.74384873724260552...
    assert pftk.expected_window(0.05, 2) == pytest.approx(5.74384873724260552, rel=1e-12)
    c = 2 / 3
    assert pftk.expected_window(0.05, 2) == pytest.approx(c + math.sqrt(7.6 / 0.3 + c * c), rel=REL)


def test_expected_window_b2_is_the_geant_slac_reduction():
    # GEANT PERT wiki / SLAC "Throughput versus loss" (Cottrell, 2000) quote PFTK Eq. (13)
    # with b = 2 as w(p) = (2/3)(1 + sqrt(3 (1-p)/p + 1)): with b = 2, (2+b)/(3b) = 2/3 and
    # 8(1-p)/(3bp) = (4/9) 3(1-p)/p, so the two forms are the same number.
    for p in (0.001, 0.01, 0.05, 0.3):
        geant = 2 / 3 * (1 + math.sqrt(3 * (1 - p) / p + 1))
        assert pftk.expected_window(p, 2) == pytest.approx(geant, rel=1e-13)


@pytest.mark.parametrize("b", [1, 2, 3])
def test_pftk_full_model_tends_to_the_rfc5348_simplified_equation(b):
    # RFC 5348 (and RFC 3448) Section 3.1, PFTK's simplified formula in packets/s:
    #   X = 1 / (R sqrt(2bp/3) + t_RTO 3 sqrt(3bp/8) p (1 + 32 p^2)).
    # Expanding Eq. (31) (first branch) in sqrt(p) by hand: with s = sqrt(8/(3bp)) and
    # c = (2+b)/(3b), E[W] = s + c + O(sqrt(p)), numerator (1/p)(1 + p s + O(p)),
    # RTT term RTT (b s/2)(1 + (c + 2/b)/s); p b s/2 = sqrt(2bp/3), and the timeout terms
    # agree to leading order (Q ~ 3/E[W]). Hence
    #   B / X = 1 + sqrt(8p/(3b)) - ((8+b)/(3b)) sqrt(3bp/8) + O(p) = 1 - sqrt(bp/24) + O(p).
    # A b misplaced in Eq. (13) or in b E[W]/2 would change the limit itself (B/X -> const != 1).
    # Tolerance 2p: the O(p) remainder measured 0.5p-0.7p at RTT 0.1 s, T0 1 s.
    for p in (1e-4, 1e-6, 1e-8):
        # T0 = params.rto = 1 s; rwnd the largest window TCP can advertise (2^30 bytes of
        # 500-byte segments: 2,147,483 packets), far above E[W] ~ sqrt(8/(3bp)) <= 16,330
        params = TcpParams(p=p, b=b, rtt_s=0.1, rwnd=2**30 // 500)
        rfc = 1 / (0.1 * math.sqrt(2 * b * p / 3)
                   + 1.0 * 3 * math.sqrt(3 * b * p / 8) * p * (1 + 32 * p * p))
        ratio = pftk.throughput_packets_per_s(params) / rfc
        assert abs(ratio - (1 - math.sqrt(b * p / 24))) <= 2 * p


def test_pftk_throughput_eq31_below_window_limit_by_hand():
    # p = 0.05, b = 2, RTT = 0.1 s, T0 = max(1, 4 RTT) = 1 s, W_max = rwnd = 30:
    #   E[W] = 5.743848737 < 30 (first branch of Eq. 31)
    #   Q(E[W]) = 0.621816842094209   f(p) = 1.0555555
    #   num = 0.95/0.05 + 5.743848737 + 0.621816842/0.95 = 25.3983927815523
    #   den = 0.1 (2 * 5.743848737/2 + 1) + 0.621816842 * 1 * 1.0555555/0.95 = 1.36529243968760
    #   B = 18.6028956458323 packets/s
    p, rtt, t0 = 0.05, 0.1, 1.0
    params = TcpParams(p=p, b=2, rtt_s=rtt, rwnd=30)
    w = 2 / 3 + math.sqrt(8 * (1 - p) / (3 * 2 * p) + (2 / 3) ** 2)
    qq = q_hat(p, w)
    num = (1 - p) / p + w + qq / (1 - p)
    den = rtt * (2 * w / 2 + 1) + qq * t0 * f_backoff(p) / (1 - p)
    assert qq == pytest.approx(0.621816842094209412, rel=1e-12)
    assert pftk.throughput_packets_per_s(params) == pytest.approx(num / den, rel=REL)
    assert pftk.throughput_packets_per_s(params) == pytest.approx(18.6028956458323385, rel=1e-9)


def test_pftk_throughput_eq31_window_limited_branch_by_hand():
    # p = 0.001, b = 2, RTT = 0.1 s, T0 = 1 s, W_max = 10: E[W] = 37.17 >= 10 (second branch):
    #   Q(10) = 0.303145974388740     f(p) = 1.001002004008016
    #   num = 999 + 10 + 0.303145974/0.999 = 1009.30344942381
    #   den = 0.1 (2*10/8 + 0.999/(0.001*10) + 2) + 0.303145974 * 1.001002004/0.999 = 10.7437534813514
    #   B = 93.9432807329132 packets/s
    p = 0.001
    params = TcpParams(p=p, b=2, rwnd=10)
    qq = q_hat(p, 10)
    num = (1 - p) / p + 10 + qq / (1 - p)
    den = 0.1 * (2 * 10 / 8 + (1 - p) / (p * 10) + 2) + qq * 1.0 * f_backoff(p) / (1 - p)
    assert pftk.throughput_packets_per_s(params) == pytest.approx(num / den, rel=REL)
    assert pftk.throughput_packets_per_s(params) == pytest.approx(93.9432807329132440, rel=1e-9)


def test_pftk_uses_dup_t_rto_and_rtt():
    # p = 0.05, b = 1, RTT = 0.2 s, T0 = rto_s = 1.5 s, dup_t = 5 (Q with K = 5):
    #   E[W] = 8.18795288428261, Q_5(E[W]) = 0.736633725782072, B = 12.4474211023408 packets/s
    params = TcpParams(p=0.05, b=1, rtt_s=0.2, rto_s=1.5, dup_t=5)
    assert pftk.throughput_packets_per_s(params) == pytest.approx(12.4474211023407693, rel=1e-9)


def test_pftk_p_zero_is_receiver_window_per_rtt():
    # Eq. (31), second branch, p -> 0: num ~ 1/p, den ~ RTT/(p W_max), so B -> W_max/RTT.
    params = TcpParams(p=0.0, rwnd=30, rtt_s=0.1)
    assert pftk.throughput_packets_per_s(params) == 300.0
    near = pftk.throughput_packets_per_s(params.replace(p=1e-9))
    assert near == pytest.approx(300.0, rel=1e-6)  # |B(1e-9) - 300|/300 ~ 2e-7 (W_max terms)


def test_pftk_transfer_time_is_segments_over_throughput():
    # 10 001 bytes with MSS 500 are d = 21 segments (the last one 1 byte): T = 21 / B.
    params = TcpParams(p=0.05, b=2)
    b_rate = 18.6028956458323385
    t = pftk.transfer_time_s(params, size_bytes=[10_000, 10_001])
    np.testing.assert_allclose(t, [20 / b_rate, 21 / b_rate], rtol=1e-9)


def test_pftk_byte_counting_grows_one_packet_per_round():
    # RFC 3465 byte counting in congestion avoidance: one MSS per cwnd of acknowledged
    # bytes, whatever b is, so PFTK's b is 1.
    abc = TcpParams(p=0.05, b=2, rule=StandardRule(abc_l=2))
    assert pftk.throughput_packets_per_s(abc) == pftk.throughput_packets_per_s(abc.replace(
        b=1, rule=StandardRule()))


# ---------------------------------------------------------------------------
# CSA

def csa_by_hand(p, b, w1, w_max, d, rtt=0.1, t0=1.0, delack=0.2, dup_t=3):
    """CSA Eqs. 5, 11, 15-25 (handshake excluded), transcribed term by term."""
    g = 1 + 1 / b                                        # slow-start growth per round
    d_ss = (1 - (1 - p) ** d) * (1 - p) / p + 1          # Eq. 5
    d_ss = min(d_ss, d)
    w_ss = min(d_ss * (g - 1) / g + w1 / g, w_max)       # Eq. 11, the window is at most W_max
    d1 = (g * w_max - w1) / (g - 1)                      # segments until the window is W_max
    if d_ss > d1:                                        # Eq. 15, window-limited
        t_ss = rtt * (math.log(w_max / w1, g) + 1 + (d_ss - d1) / w_max)
    else:                                                # Eq. 15, Eq. 7's rounds
        t_ss = rtt * math.log(d_ss * (g - 1) / w1 + 1, g)
    l_ss = 1 - (1 - p) ** d                              # Eq. 16
    qq = q_hat(p, w_ss, dup_t)                           # Eq. 17
    z_to = f_backoff(p) * t0 / (1 - p)                   # Eqs. 18-19
    t_loss = l_ss * (qq * z_to + (1 - qq) * rtt)         # Eq. 20
    w = (2 + b) / (3 * b) + math.sqrt(8 * (1 - p) / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)
    if w < w_max:                                        # Eqs. 22-23 = PFTK Eq. 31
        qw = q_hat(p, w, dup_t)
        r = ((1 - p) / p + w + qw / (1 - p)) / (rtt * (b * w / 2 + 1) + qw * t0 * f_backoff(p) / (1 - p))
    else:
        qw = q_hat(p, w_max, dup_t)
        r = ((1 - p) / p + w_max + qw / (1 - p)) / (
            rtt * (b * w_max / 8 + (1 - p) / (p * w_max) + 2) + qw * t0 * f_backoff(p) / (1 - p))
    t_ca = (d - d_ss) / r                                # Eqs. 21, 24
    first = min(d, max(1, math.floor(w1)))
    t_delack = delack if (first < b and d > first) else 0.0
    return dict(d_ss=d_ss, w_ss=w_ss, t_ss=t_ss, l_ss=l_ss, q=qq, t_loss=t_loss,
                t_ca=t_ca, t_delack=t_delack, total=t_ss + t_loss + t_ca + t_delack)


def test_csa_by_hand_slow_start_not_window_limited():
    # p = 0.05, b = 2 (gamma = 1.5), w1 = 2, W_max = 30, d = 20 segments, T0 = 1 s:
    #   E[d_ss] = (1 - 0.95^20) 0.95/0.05 + 1 = 13.1887674742377     (< d, not capped)
    #   E[W_ss] = 13.18877/3 + 2/1.5 = 5.72958915807923              (< W_max)
    #   E[T_ss] = 0.1 log_1.5(13.18877 * 0.5/2 + 1) = 0.359577612570959 s
    #   l_ss = 0.641514077591458, Q(5.7296) = 0.622842387087544, E[Z_TO] = 1.11111105263158 s
    #   E[T_loss] = 0.468153123379569 s
    #   R = 18.6028956458323 packets/s, E[d_ca] = 6.81123252576230, E[T_ca] = 0.366138296716632 s
    #   E[T_delack] = 0 (first flight 2 >= b), E[T] = 1.19386903266716 s
    params = TcpParams(p=0.05, b=2, w0=2, rwnd=30)
    terms = csa.csa_terms(params, size_packets=[20])
    hand = csa_by_hand(0.05, 2, 2, 30, 20)
    for name in ("d_ss", "w_ss", "t_ss", "l_ss", "q", "t_loss", "t_ca", "t_delack", "total"):
        assert getattr(terms, name)[0] == pytest.approx(hand[name], rel=REL, abs=1e-15), name
    assert terms.t_ss[0] == pytest.approx(0.359577612570959019, rel=1e-9)
    assert terms.t_loss[0] == pytest.approx(0.468153123379568516, rel=1e-9)
    assert terms.total[0] == pytest.approx(1.19386903266715955, rel=1e-9)


def test_csa_by_hand_window_limited_slow_start():
    # p = 0.01, b = 1 (gamma = 2), w1 = 2, W_max = 30, d = 100:
    #   E[d_ss] = (1 - 0.99^100) 0.99/0.01 + 1 = 63.7627982139503
    #   E[W_ss] = 63.76/2 + 1 = 32.88 > 30: the window reaches W_max after
    #   d_1 = (2*30 - 2)/1 = 58 segments in log2(15) + 1 rounds, the other 5.76 at 30/round:
    #   E[T_ss] = 0.1 (3.90689 + 1 + 5.76280/30) = 0.509898386940686 s
    #   Q(W_max = 30) = 0.140415144980270 (the window at the loss is W_max)
    #   E[T_loss] = 0.145330267875736 s, R = 98.8291205693662, E[T_ca] = 0.366665225565936 s
    #   E[T] = 1.02189388038236 s
    params = TcpParams(p=0.01, b=1, w0=2, rwnd=30)
    terms = csa.csa_terms(params, size_bytes=[50_000])
    hand = csa_by_hand(0.01, 1, 2, 30, 100)
    for name in ("d_ss", "w_ss", "t_ss", "q", "t_loss", "t_ca", "total"):
        assert getattr(terms, name)[0] == pytest.approx(hand[name], rel=REL), name
    assert terms.w_ss[0] == 30.0
    assert terms.t_ss[0] == pytest.approx(0.509898386940686116, rel=1e-9)
    assert terms.total[0] == pytest.approx(1.02189388038235789, rel=1e-9)


def test_csa_by_hand_first_flight_delayed_ack():
    # p = 0.1, b = 2, w1 = 1, d = 5: the first segment alone waits for the receiver's
    # delayed-ACK timer (0.2 s): E[T_delack] = 0.2 s.
    #   E[d_ss] = (1 - 0.9^5) 0.9/0.1 + 1 = 4.68559, E[W_ss] = 2.22853 (Q = 1: W <= 3)
    #   E[T_ss] = 0.297635298145069 s, E[T_loss] = 0.40951 * 1.24999111 = 0.511883859911111 s
    #   R = 9.10598939741599, E[T_ca] = 0.31441/R = 0.0345278240812822 s
    #   E[T] = 1.04404698213746 s
    params = TcpParams(p=0.1, b=2, w0=1)
    terms = csa.csa_terms(params, size_packets=[1, 5])
    hand = csa_by_hand(0.1, 2, 1, 30, 5)
    assert terms.q[1] == 1.0
    assert terms.t_delack.tolist() == [0.0, 0.2]  # one segment: it carries FIN, ACKed at once
    assert terms.total[1] == pytest.approx(hand["total"], rel=REL)
    assert terms.total[1] == pytest.approx(1.04404698213746227, rel=1e-9)
    no_delack = csa.expected_latency_csa(params, size_packets=[5], delack_s=0.0)
    assert no_delack[0] == pytest.approx(hand["total"] - 0.2, rel=REL)
    for w0, b in ((2, 2), (1, 1), (3, 2)):  # first flight >= b: no stall
        assert csa.csa_terms(TcpParams(p=0.1, b=b, w0=w0), size_packets=[5]).t_delack[0] == 0.0


@pytest.mark.parametrize("b,w1,d,rounds", [(1, 2, 14, 3), (2, 4, 19, 3), (3, 9, 37, 3)])
def test_csa_slow_start_window_grows_by_gamma_per_round(b, w1, d, rounds):
    # CSA Eqs. (6)-(7) with gamma = 1 + 1/b (restated in "Multihomed Communication with
    # SCTP", CRC 2012, ch. 18, Eq. 2.2: cwnd = init_cwnd (1 + 1/b)^(r - 1)):
    # round i sends w1 gamma^(i-1), so i rounds send w1 (gamma^i - 1)/(gamma - 1):
    # b = 1, w1 = 2: 2 + 4 + 8 = 14; b = 2, w1 = 4: 4 + 6 + 9 = 19; b = 3, w1 = 9:
    # 9 + 12 + 16 = 37, each in 3 rounds. Without loss E[d_ss] = d and Eq. (15) gives
    # E[T_ss] = RTT log_gamma(d (gamma-1)/w1 + 1) = 3 RTT exactly.
    params = TcpParams(p=0.0, b=b, w0=w1, rwnd=1000)
    assert csa.slow_start_gamma(params) == pytest.approx(1 + 1 / b, rel=1e-15)
    terms = csa.csa_terms(params, size_packets=[d])
    assert terms.t_ss[0] == pytest.approx(0.1 * rounds, rel=1e-12)
    assert terms.total[0] == pytest.approx(0.1 * rounds, rel=1e-12)  # first flight >= b: no stall


@pytest.mark.parametrize("b,d,expected", [
    # p = 0: no loss, E[d_ss] = d, the slow-start time alone (Eq. 15), w1 = 2, W_max = 30:
    (1, 20, 0.1 * math.log2(20 / 2 + 1)),                    # log2(11) = 3.4594 rounds
    (2, 20, 0.1 * math.log(20 * 0.5 / 2 + 1, 1.5)),          # log_1.5(6) = 4.4190 rounds
    (1, 200, 0.1 * (math.log2(15) + 1 + (200 - 58) / 30)),   # W_max reached after 58
])
def test_csa_without_loss_is_the_slow_start_time(b, d, expected):
    params = TcpParams(p=0.0, b=b, w0=2, rwnd=30)
    assert csa.expected_latency_csa(params, size_packets=[d])[0] == pytest.approx(expected, rel=REL)
    # ... and the limit p -> 0 (E[d_ss] = min(d, (1-(1-p)^(d+1))/p) -> d): within 1e-6
    # relative at p = 1e-9 (the loss terms are O(p d)).
    near = csa.expected_latency_csa(params.replace(p=1e-9), size_packets=[d])[0]
    assert near == pytest.approx(expected, rel=1e-6)


def test_csa_large_files_approach_size_over_pftk_throughput():
    # d -> infinity: E[d_ss] -> 1/p, E[T_ss] and E[T_loss] stay bounded, so
    # E[T] = (d - 1/p)/R + O(1): E[T] R / d - 1 = O(1/(p d)) ~ 2e-6 at d = 1e7, p = 0.05.
    for p in (0.01, 0.05, 0.2):
        params = TcpParams(p=p, b=2)
        d = 1e7
        t = csa.expected_latency_csa(params, size_packets=[d])[0]
        assert t * pftk.throughput_packets_per_s(params) / d == pytest.approx(1.0, abs=1e-4 / 1.0)
        assert pftk.transfer_time_s(params, size_packets=[d])[0] == pytest.approx(
            d / pftk.throughput_packets_per_s(params), rel=REL)


def test_csa_byte_counting_slow_start_doubles_with_b_2():
    # RFC 3465 with L = 2 and b = 2: each ACK of 2 packets adds 2 packets: gamma = 2, the
    # loss-free time of b = 1 without byte counting.
    abc = TcpParams(p=0.0, b=2, rule=StandardRule(abc_l=2))
    assert csa.slow_start_gamma(abc) == 2.0
    assert csa.slow_start_gamma(abc.replace(rule=StandardRule(abc_l=1))) == 1.5
    np.testing.assert_allclose(
        csa.expected_latency_csa(abc, size_packets=[5, 50]),
        csa.expected_latency_csa(TcpParams(p=0.0, b=1), size_packets=[5, 50]), rtol=REL)


# ---------------------------------------------------------------------------
# Properties

_params = st.builds(
    dict,
    b=st.integers(1, 3),
    w0=st.sampled_from([1.0, 2.0, 3.5, 10.0]),
    rwnd=st.sampled_from([10.0, 30.0, 100.0]),
    dup_t=st.integers(1, 5),
    rtt_s=st.sampled_from([0.01, 0.1, 0.5]),
)


@given(kw=_params, p=st.floats(0.0, 0.9), sizes=st.lists(st.integers(1, 5000), min_size=2, max_size=6))
def test_both_models_increase_with_size(kw, p, sizes):
    params = TcpParams(p=p, **kw)
    sizes = np.sort(np.array(sizes, dtype=float))
    for t in (csa.expected_latency_csa(params, size_packets=sizes),
              pftk.transfer_time_s(params, size_packets=sizes)):
        assert np.all(np.diff(t) >= -1e-12 * t[-1])
        assert np.all(t > 0)


@given(kw=_params, p1=st.floats(0.0, 0.9), p2=st.floats(0.0, 0.9), d=st.integers(1, 2000))
def test_both_models_increase_with_p(kw, p1, p2, d):
    lo, hi = sorted((p1, p2))
    a, b = TcpParams(p=lo, **kw), TcpParams(p=hi, **kw)
    for model in (csa.expected_latency_csa, pftk.transfer_time_s):
        t_lo, t_hi = model(a, size_packets=[d])[0], model(b, size_packets=[d])[0]
        assert t_hi >= t_lo * (1 - 1e-12)


# ---------------------------------------------------------------------------
# Bad input and the registry

@pytest.mark.parametrize("module", [csa, pftk])
def test_unsupported_rule_is_named(module):
    with pytest.raises(ValueError, match=(
            rf"model {module.MODEL} supports the standard rule and the newreno variant only, "
            r"got rule 'btcp'")):
        module.check_supported(TcpParams(rule=BtcpRule()))


@pytest.mark.parametrize("variant", ["lt", "proposal", "er"])
@pytest.mark.parametrize("name", ["csa", "pftk"])
def test_unsupported_variant_is_named(name, variant):
    params = apply_variant(TcpParams(), variant)
    with pytest.raises(ValueError, match=rf"newreno variant only, got variant '{variant}'"):
        registry.predict(name, params, [10_000])
    with pytest.raises(ValueError, match="newreno variant only, got variant 'dup_lt=1"):
        registry.check_supported(name, TcpParams(dup_lt=1))


def test_bad_arguments_name_the_parameter():
    params = TcpParams()
    with pytest.raises(ValueError, match="positional size is ambiguous"):
        csa.expected_latency_csa(params, [10_000])
    with pytest.raises(ValueError, match="positional size is ambiguous"):
        pftk.transfer_time_s(params, [10_000])
    with pytest.raises(ValueError, match="exactly one of size_bytes"):
        csa.expected_latency_csa(params, size_bytes=[1], size_packets=[1])
    with pytest.raises(ValueError, match="size_bytes must be finite and > 0"):
        csa.expected_latency_csa(params, size_bytes=[0])
    with pytest.raises(ValueError, match="delack_s must be >= 0"):
        csa.expected_latency_csa(params, size_bytes=[1], delack_s=-0.1)
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\)"):
        pftk.timeout_probability(0.0, 5)
    with pytest.raises(ValueError, match="w must be finite and > 0"):
        pftk.timeout_probability(0.1, 0.0)
    with pytest.raises(ValueError, match="dup_t must be"):
        pftk.timeout_probability(0.1, 5, dup_t=0)
    with pytest.raises(ValueError, match="b must be > 0"):
        pftk.expected_window(0.1, 0)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        pftk.backoff_factor(1.0)
    with pytest.raises(ValueError, match="params must be a TcpParams"):
        csa.expected_latency_csa({"p": 0.1}, size_bytes=[1])


def test_registry_predicts_csa_and_pftk():
    params = TcpParams(p=0.05, b=2)
    pred = registry.predict("csa", params, [10_000, 50_000])
    assert pred.model == "csa"
    np.testing.assert_array_equal(pred.sizes_bytes, [10_000, 50_000])
    np.testing.assert_allclose(pred.expected_latency_s[0], 1.19386903266715955, rtol=1e-9)
    assert pred.conditional_latency_s is None and pred.p90_latency_s is None
    no_delack = registry.predict("csa", params.replace(w0=1), [10_000], delack_s=0.0)
    with_delack = registry.predict("csa", params.replace(w0=1), [10_000])
    assert with_delack.expected_latency_s[0] - no_delack.expected_latency_s[0] == pytest.approx(0.2)
    pred = registry.predict("pftk", params, [10_000])
    assert pred.model == "pftk"
    np.testing.assert_allclose(pred.expected_latency_s, [20 / 18.6028956458323385], rtol=1e-9)
    with pytest.raises(ValueError, match="model csa has no option 'law'"):
        registry.predict("csa", params, [10_000], law="exact")
    with pytest.raises(ValueError, match="model pftk has no option 'delack_s'"):
        registry.predict("pftk", params, [10_000], delack_s=0.1)
