"""Each rule's per-ACK law against its flow-level law, parameter checks, invariants, fluid use, CLI."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from latency_model.cli import main
from latency_model.model.fluid import l0, w_f, y_f
from latency_model.growth import RULES, make_rule
from latency_model.growth.flow import flow_windows, per_ack_windows, smooth_a_of_w, smooth_integral, smooth_w
from latency_model.params import TcpParams

MSS = 1000
INF = np.array([np.inf])


def one_round(rule, w, b, mss=MSS):
    """Per-ACK window after one round from ``w`` (same convention as per_ack_windows)."""
    return per_ack_windows(rule, w, 2, b=b, mss_bytes=mss)[1]


def flow_step(rule, w, b):
    return float(rule.next_round_window(np.array([w]), INF, b)[0])


# --- exact agreement where ACK counts are whole -------------------------------------------------


@pytest.mark.parametrize("rule", [make_rule("standard"), make_rule("generalized", beta=2)])
def test_slow_start_per_ack_equals_flow_law_b1(rule):
    assert per_ack_windows(rule, 1, 10) == flow_windows(rule, 1, 10) == [2.0**k for k in range(10)]


@pytest.mark.parametrize("beta", [3, 4])
def test_generalized_per_ack_equals_flow_law_integer_beta(beta):
    rule = make_rule("generalized", beta=beta)
    assert per_ack_windows(rule, 1, 6) == flow_windows(rule, 1, 6) == [float(beta**k) for k in range(6)]


def test_generalized_delayed_ack_bounded_by_one_ack():
    # b = 2: floor(w) packets give ceil(floor(w)/2) ACKs against w/2 in the flow law: at most one
    # ACK (beta - 1 packets) apart, plus (beta - 1)/2 for a fractional window's dropped packet.
    rule = make_rule("generalized", beta=3)
    for w in [1.0, 2.0, 3.0, 4.5, 7.0, 10.25, 33.0]:
        assert abs(one_round(rule, w, 2) - flow_step(rule, w, 2)) <= 2.0 * 1.5 + 1e-9


# --- B-TCP: the paper's packet-level formula lags its flow-level law ---------------------------


def _btcp_figure4_in_packets(w0, n_rtts, f=4, mice_t=32):
    """Figure 4 in packets, written out independently of the rule (which works in bytes)."""
    out, cwnd = [], float(w0)
    for _ in range(n_rtts):
        out.append(cwnd)
        for _ in range(max(1, math.floor(cwnd + 1e-9))):
            inc = math.floor((mice_t - cwnd) / f)
            if inc <= 0:
                inc = 1
            cwnd += inc / cwnd
    return out


def test_btcp_per_ack_trace_matches_figure4_and_lags_flow_law():
    rule = make_rule("btcp", f=4, mice_t=32)
    per_ack = per_ack_windows(rule, 1, 12, mss_bytes=1460)
    assert per_ack == pytest.approx(_btcp_figure4_in_packets(1, 12), rel=1e-12)
    flow = flow_windows(rule, 1, 12)
    # RTT 1 agrees (one ACK adds floor(31/4)/1 = 7); later the per-ACK increments are divided by
    # a window that grows during the round and recomputed on it, so the per-ACK trace lags:
    # 1, 8, 12.18, 15.66, 18.43, 20.79, ... against 1, 8, 14, 18, 21, 23, ...
    assert per_ack[:2] == [1.0, 8.0]
    assert per_ack[2] == pytest.approx(12.18, abs=0.01)
    assert all(p < f for p, f in zip(per_ack[2:], flow[2:]))
    for w in per_ack:
        step = one_round(rule, w, 1)
        # From the same window, one round of the per-ACK law gains at least 1/2 packet and at most
        # the flow law's increment: each ACK adds increment(c)/c <= increment(w)/w for c >= w.
        assert w + 0.5 < step <= flow_step(rule, w, 1) + 1e-9


def test_btcp_disabled_after_congestion_event_is_standard_slow_start():
    rule = make_rule("btcp")
    for kind in ("fast_retransmit", "timeout"):
        st_ = rule.new_state(4 * MSS, 64 * MSS, MSS)
        rule.on_congestion_event(st_, kind)
        rule.on_ack(st_, MSS)
        assert st_.cwnd == 5 * MSS and not st_.enabled
    with pytest.raises(ValueError, match="kind"):
        rule.on_congestion_event(rule.new_state(MSS, MSS, MSS), "dupack")


# --- LSS and ASS: band edges crossed by whole ACKs -------------------------------------------


@pytest.mark.parametrize("name, params", [("lss", {"max_ssthresh": 100}), ("ass", {"algorithm": 2}),
                                          ("ass", {"algorithm": 3}), ("ass", {"algorithm": 4})])
@pytest.mark.parametrize("b", [1, 2])
def test_banded_rules_per_ack_within_one_ack_per_edge_of_flow_law(name, params, b):
    """The flow law crosses a band edge with a fraction of an ACK; the per-ACK law overshoots the
    edge by at most one ACK's increment (<= 3 packets), once per edge crossed, and drops the
    fractional packet of the window (<= one increment); RFC 3742's int(MSS/K) loses < 1 byte/ACK."""
    rule = make_rule(name, **params)
    for w in np.linspace(1.0, 400.0, 97):
        got, want = one_round(rule, float(w), b, mss=1460), flow_step(rule, float(w), b)
        edges = 4  # at most 4 band edges are crossed in one RTT from any window (x4 at most)
        assert abs(got - want) <= 3.0 * (edges + 1)
        if w >= 100:  # LSS region: increments <= 1/2, one edge per RTT
            assert abs(got - want) <= 1.0 + w / 1460.0


def test_lss_per_ack_growth_past_max_ssthresh():
    rule = make_rule("lss", max_ssthresh=100)
    trace = per_ack_windows(rule, 100, 40, mss_bytes=1460)
    growth = np.diff(trace)
    # At most max_ssthresh/2 plus one ACK's 1/K overshoot; int(1460/K) bytes keep it just below 50.
    assert np.all(growth <= 50.5) and np.all(growth >= 49.0)


def test_ass_per_ack_first_rtts_by_hand():
    # Algorithm 2, b = 1: 16 -> 3 ACKs (+3) to 25, 10 ACKs (+2) to 45... 13th: 49 < 50, +2 -> 51
    rule = make_rule("ass", algorithm=2)
    assert per_ack_windows(rule, 1, 5) == [1, 4, 16, 51, 88.5]


@pytest.mark.parametrize(
    "decrease, expected",
    [
        # losses at cwnd = flight = 8, 30, 40, 80 packets: bands <25 (factor 4), [25,50) (3), [75,100) (2)
        ("divide", [8 / 4, 30 / 3, 40 / 3, 80 / 2]),
        ("fraction", [8 * 3 / 4, 30 * 2 / 3, 40 * 2 / 3, 80 / 2]),
        ("standard", [4.0, 15.0, 20.0, 40.0]),
    ],
)
def test_ass_decrease_factor_by_band(decrease, expected):
    rule = make_rule("ass", algorithm=2, decrease=decrease)
    got = []
    for cwnd in (8, 30, 40, 80):
        st_ = rule.new_state(cwnd * MSS, 1e9, MSS)
        got.append(rule.ssthresh_after_loss(st_, cwnd * MSS) / MSS)
    assert got == pytest.approx(expected)
    # the 2 MSS floor
    assert rule.ssthresh_after_loss(rule.new_state(MSS, 1e9, MSS), 2 * MSS) == 2 * MSS


# --- SmoothTCP ------------------------------------------------------------------------------


def test_smooth_exact_per_ack_follows_eq8_at_every_ack():
    rule = make_rule("smooth-start")
    st_ = rule.new_state(MSS, math.inf, MSS)
    for a in range(1, 1201):
        rule.on_ack(st_, MSS)
        if a in (1, 10, 100, 1200):
            assert st_.cwnd / MSS == pytest.approx(float(smooth_w(a)), rel=1e-9)


def test_smooth_euler_per_ack_overshoots_eq8_by_its_exact_error_sum():
    """Euler step u += D/u (u = w for T = 1) gives u_n^2 - U_n^2 = sum(2 (D_k - int_k^{k+1} D) + D_k^2/u_k^2),
    both terms >= 0 (D decreasing): the per-ACK Euler trace is above Eq. 8 by that exact amount."""
    rule = make_rule("smooth-start", per_ack="euler")
    st_ = rule.new_state(MSS, math.inf, MSS)
    excess = 0.0
    for k in range(200):
        u = st_.cwnd / MSS
        d = 40.0 - 40.0 * math.tanh(0.003038 * k)
        excess += 2 * (d - float(smooth_integral(k + 1, 40.0, 0.003038) - smooth_integral(k, 40.0, 0.003038))) + d * d / (u * u)
        rule.on_ack(st_, MSS)
        u_new, exact = st_.cwnd / MSS, float(smooth_w(k + 1))
        assert u_new >= exact
        assert u_new**2 - exact**2 == pytest.approx(excess, rel=1e-9)
    assert per_ack_windows(rule, 1, 2)[1] == 41.0  # 1 + 40/1 on the first ACK (Eq. 8: 8.99)


def test_smooth_per_ack_vs_flow_law_one_ack_apart():
    # floor(w) ACKs per round against w in the flow law: per-ACK <= flow, at most one ACK's step.
    rule = make_rule("smooth-start")
    for w in [1.0, 2.5, 8.99, 30.2, 77.7, 120.0, 134.0]:
        got, want = one_round(rule, w, 1), flow_step(rule, w, 1)
        a = float(smooth_a_of_w(w))
        one_ack = (40.0 - 40.0 * math.tanh(0.003038 * a)) / w
        assert got <= want + 1e-9
        assert want - got <= one_ack + 1e-9


def test_smooth_restart_on_signal_sets_limit_to_window_and_halves():
    rule = make_rule("smooth-start")
    st_ = rule.new_state(MSS, math.inf, MSS)
    for _ in range(100):
        rule.on_ack(st_, MSS)
    w = st_.cwnd / MSS
    rule.on_signal(st_, "ecn")
    assert st_.w_c == pytest.approx(w, rel=1e-9)
    assert st_.cwnd == pytest.approx(w / 2 * MSS)
    rule.on_ack(st_, MSS)
    assert w / 2 < st_.cwnd / MSS < w


# --- parameter validation: one test per parameter ------------------------------------------

BAD = [
    ("standard", "abc_l", 0, "abc_l"),
    ("generalized", "beta", 1.0, "beta"),
    ("btcp", "f", 0, "f must"),
    ("btcp", "mice_t", 0.5, "mice_t"),
    ("lss", "max_ssthresh", 0, "max_ssthresh"),
    ("ass", "algorithm", 5, "algorithm"),
    ("ass", "decrease", "half", "decrease"),
    ("smooth-start", "a_a", 0, "a_a"),
    ("smooth-start", "b_a", -1, "b_a"),
    ("smooth-start", "t", 0, "t must"),
    ("smooth-start", "kappa", 2, "kappa"),
    ("smooth-start", "per_ack", "rk4", "per_ack"),
    ("smoothtcp", "a_a", 0, "a_a"),
    ("smoothtcp", "b_a", -1, "b_a"),
    ("smoothtcp", "t", 0, "t must"),
    ("smoothtcp", "kappa", 2, "kappa"),
    ("smoothtcp", "per_ack", "rk4", "per_ack"),
    *[("smoothtcp", f"{c}_{m}", bad, f"{c}_{m}") for m in "jxfeq"
      for c, bad in (("a", 1e4), ("b", -0.5), ("c", float("nan")), ("m", 2e6))],
    ("smoothtcp", "alpha", 0, "alpha"),
    ("smoothtcp", "ss_signal", "ecn", "ss_signal"),
    ("cubic", "beta", 1024, "beta"),
    ("cubic", "hystart", "yes", "hystart"),
    ("cubic", "hz", 200, "hz"),
]


@pytest.mark.parametrize("rule, param, value, word", BAD, ids=[f"{r}-{p}" for r, p, _, _ in BAD])
def test_bad_rule_parameter_names_parameter_value_and_range(rule, param, value, word):
    with pytest.raises(ValueError) as exc:
        make_rule(rule, **{param: value})
    msg = str(exc.value)
    assert msg.startswith(param) and word in msg and repr(value) in msg
    assert any(tok in msg for tok in ("[", "(", ">", "<", "one of"))


def test_every_parameter_of_every_rule_has_a_validation_test():
    covered = {(r, p) for r, p, _, _ in BAD}
    import dataclasses

    for name, cls in RULES.items():
        for f in dataclasses.fields(cls):
            assert (name, f.name) in covered


def test_unknown_rule_and_parameter_name_the_valid_ones():
    with pytest.raises(ValueError, match="btcp.*smooth-start"):
        make_rule("vegas")
    with pytest.raises(ValueError, match="valid: f, mice_t"):
        make_rule("btcp", beta=2)


# --- invariants (hypothesis) ---------------------------------------------------------------

RULE_STRATEGY = st.one_of(
    st.just(make_rule("standard")),
    st.just(make_rule("standard", abc_l=2)),
    st.floats(1.05, 8).map(lambda x: make_rule("generalized", beta=x)),
    st.tuples(st.integers(1, 16), st.floats(2, 200)).map(lambda t: make_rule("btcp", f=t[0], mice_t=t[1])),
    st.floats(2, 500).map(lambda m: make_rule("lss", max_ssthresh=m)),
    st.tuples(st.sampled_from([2, 3, 4]), st.sampled_from(["divide", "fraction", "standard"])).map(
        lambda t: make_rule("ass", algorithm=t[0], decrease=t[1])
    ),
    st.tuples(st.floats(1, 100), st.floats(1e-4, 0.05), st.floats(0.1, 10), st.sampled_from(["exact", "euler"])).map(
        lambda t: make_rule("smooth-start", a_a=t[0], b_a=t[1], t=t[2], per_ack=t[3])
    ),
)


@settings(deadline=None, max_examples=80)
@given(
    rule=RULE_STRATEGY,
    w0=st.floats(0.5, 300),
    ssthresh=st.floats(2, 1e4),
    acks=st.lists(st.integers(1, 4), min_size=1, max_size=60),
    flight=st.floats(0, 1e6),
)
def test_windows_never_decrease_without_loss_stay_finite_and_ssthresh_at_least_2_mss(rule, w0, ssthresh, acks, flight):
    s = rule.new_state(w0 * MSS, ssthresh * MSS, MSS)
    prev = s.cwnd
    for k in acks:
        rule.on_ack(s, k * MSS)
        assert math.isfinite(s.cwnd) and s.cwnd >= prev
        prev = s.cwnd
    assert rule.ssthresh_after_loss(s, flight) >= 2 * MSS
    w = np.array([w0, w0 * 2])
    nxt = rule.next_round_window(w, np.array([ssthresh, ssthresh]), 1)
    assert np.all(np.isfinite(nxt)) and np.all(nxt >= w)


# --- the fluid model with every rule -------------------------------------------------------

ALL_RULES = [make_rule(n) for n in sorted(RULES)]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.name)
def test_fluid_rounds_time_model_works_with_every_rule(rule):
    p = TcpParams(rule=rule, w0=2, w_ss=30, rwnd=30)
    sizes = np.array([1, 10, 100, 1000]) * p.mss_bytes
    t = l0(p, sizes, time_model="rounds")
    assert np.all(np.isfinite(t)) and np.all(np.diff(t) >= 0) and t[0] == p.rtt_s
    wf = w_f(p, sizes, time_model="rounds")
    assert np.all((wf >= 2) & (wf <= 30))
    yf = y_f(p, np.array([2.0, 5.0, 30.0]), time_model="rounds")
    assert yf[0] == 0 and np.all(np.isfinite(yf)) and np.all(np.diff(yf) > 0)


def test_fluid_rounds_btcp_staircase_by_hand():
    # B-TCP(4) from 1: windows 1, 8, 14, 18 -> cumulative 1, 9, 23, 41 packets
    p = TcpParams(rule=make_rule("btcp"), w0=1, w_ss=30, rwnd=30)
    sizes = np.array([1, 2, 9, 10, 23, 24, 41, 42]) * p.mss_bytes
    assert l0(p, sizes, time_model="rounds") / p.rtt_s == pytest.approx([1, 2, 2, 3, 3, 4, 4, 5])


def test_fluid_generalized_beta2_equals_standard():
    sizes = np.array([3, 30, 300]) * 500
    for model in ("fluid", "rounds"):
        a = l0(TcpParams(rule=make_rule("generalized", beta=2)), sizes, time_model=model)
        b = l0(TcpParams(), sizes, time_model=model)
        assert a == pytest.approx(b)


@pytest.mark.parametrize("name", ["btcp", "lss", "ass", "smooth-start"])
def test_fluid_time_model_rejects_rules_without_continuous_law(name):
    p = TcpParams(rule=make_rule(name))
    with pytest.raises(ValueError, match=f"rule '{name}' has no continuous fluid law; use time_model='rounds'"):
        l0(p, 1000, time_model="fluid")


# --- CLI -------------------------------------------------------------------------------------


def test_cli_rules_lists_every_rule_with_params_and_source(capsys):
    assert main(["rules", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rules"]}
    assert set(rows) == set(RULES)
    assert rows["btcp"]["params"] == {"f": 4, "mice_t": 32.0}
    assert rows["smooth-start"]["params"]["a_a"] == 40.0 and rows["smooth-start"]["params"]["b_a"] == 0.003038
    assert all(r["source"] for r in rows.values())
    assert main(["rules"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in RULES) and "max_ssthresh=100.0" in text


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["thresholds", "--rule", "vegas"], ", ".join(sorted(RULES))),
        (["thresholds", "--rule", "btcp", "--rule-param", "g=2"], "valid: f, mice_t"),
        (["thresholds", "--rule", "lss", "--rule-param", "max_ssthresh=0"], "max_ssthresh must be"),
    ],
)
def test_cli_bad_rule_one_line_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_cli_thresholds_with_rule_without_continuous_law(capsys):
    assert main(["thresholds", "--rule", "btcp", "--rule-param", "f=4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["time_model"] for r in out["thresholds"]] == ["rounds"]
    assert out["params"]["rule"] == {"name": "btcp", "f": 4, "mice_t": 32.0}


def test_banded_law_window_landing_on_an_edge_moves_to_the_next_band():
    # Found by hypothesis: 172 -> lands on an LSS edge where w/(m/2) rounds just below an integer.
    rule = make_rule("lss", max_ssthresh=342.2082077029835)
    nxt = rule.next_round_window(np.array([172.0, 342.2082077029835, 513.3123115544752]), np.full(3, np.inf), 1)
    assert np.all(np.isfinite(nxt)) and np.all(nxt > [172.0, 342.2082077029835, 513.3123115544752])


@pytest.mark.parametrize("per_ack", ["exact", "euler"])
def test_smooth_start_below_one_packet_grows_as_from_one_packet(per_ack):
    # Found by the invariant test: with T = 0.25, w + sqrt(T) - 1 is 0 at w = 0.5 packet
    # (Euler divided by it). Below one packet, Eq. 7 runs from w = 1 and keeps the offset.
    rule = make_rule("smooth-start", t=0.25, per_ack=per_ack)
    low, one = rule.new_state(0.5 * MSS, 1e4 * MSS, MSS), rule.new_state(1.0 * MSS, 1e4 * MSS, MSS)
    low.acks = one.acks  # the same point of the a-curve
    rule.on_ack(low, MSS)
    rule.on_ack(one, MSS)
    assert math.isfinite(low.cwnd)
    assert low.cwnd - 0.5 * MSS == pytest.approx(one.cwnd - 1.0 * MSS, rel=1e-12)


# --- Linux's reno in whole packets (tcp_cong.c tcp_reno_cong_avoid) -------------------------------
def _linux_reno_trace(law):
    """cwnd (packets) after each step of a hand-made ACK sequence, run through ``law``."""
    from latency_model.growth.base import ACK, BYTES_ACKED, CWND, LOSS, SSTHRESH

    rule = make_rule("linux-reno")
    R = rule.law_params
    S = [10.0 * MSS, 12.0 * MSS, 0.0]
    out = []
    for acked_bytes in (4 * MSS, 2 * MSS, 2 * MSS, 2 * MSS, 2 * MSS, 2 * MSS, 30 * MSS, 300):
        law(ACK, S, R, MSS, acked_bytes)
        out.append((S[CWND] / MSS, S[BYTES_ACKED]))
    out.append(law(LOSS, S, R, MSS, 99.0 * MSS) / MSS)
    out.append(S[BYTES_ACKED])
    S[CWND], S[SSTHRESH], S[BYTES_ACKED] = 10.0 * MSS, 10.0 * MSS, 14.0  # credit left from w = 15
    law(ACK, S, R, MSS, MSS)
    out.append((S[CWND] / MSS, S[BYTES_ACKED]))
    return out


def test_linux_reno_follows_tcp_reno_cong_avoid_by_hand():
    # By hand from tcp_cong.c. cwnd 10, ssthresh 12, snd_cwnd_cnt 0 (packets):
    # ACK 4: tcp_slow_start -> min(14, 12) = 12, 2 left; tcp_cong_avoid_ai(w = 12): cnt 2.
    # ACK 2 x 5: cnt 4, 6, 8, 10, 12 >= 12 -> cwnd 13, cnt 0.
    # ACK 30 (a stretch ACK): cnt 30 >= 13 -> delta 2, cwnd 15, cnt 4.
    # ACK of 300 bytes: one (short) packet, cnt 5.
    # loss: tcp_reno_ssthresh = max(15 >> 1, 2) = 7 packets (from cwnd, not FlightSize 99), cnt 0.
    # cwnd 10 = ssthresh (congestion avoidance), cnt 14 >= w = 10: the credit adds one packet at
    # once (cnt 0, cwnd 11), then cnt += 1.
    want = [(12, 2), (12, 4), (12, 6), (12, 8), (12, 10), (13, 0), (15, 4), (15, 5), 7, 0, (11, 1)]
    assert _linux_reno_trace(RULES["linux-reno"].law) == want


def test_linux_reno_compiled_law_is_the_interpreted_one():
    from latency_model.growth import laws

    compiled = laws.compiled_laws()
    if compiled is None:
        pytest.skip("numba not installed")
    k = list(RULES).index("linux-reno")
    assert _linux_reno_trace(compiled[f"law_{k}"]) == _linux_reno_trace(RULES["linux-reno"].law)




def test_cubic_cube_wraps_as_the_kernels_u64_at_1000_s_in_both_engines():
    from latency_model.growth import laws
    from latency_model.growth.base import ACK
    from latency_model.growth.cubic import (BIC_K, BIC_ORIGIN_POINT, CNT, DELAY_MIN_US, EPOCH_START, LAST_CWND, LAST_MAX_CWND,
                                            NOW_S, cubic_root)

    rule = make_rule("cubic")
    mss = 500

    def run(law):
        st = rule.new_state(100 * mss, 50 * mss, mss)
        S = np.array(st.v)
        S[LAST_MAX_CWND], S[EPOCH_START], S[DELAY_MIN_US], S[NOW_S] = 120.0, 1.0, 100_000.0, 1000.0
        S[BIC_K], S[LAST_CWND] = float(cubic_root(rule.cube_factor * 20)), 0.0
        S[BIC_ORIGIN_POINT] = 120.0
        law(ACK, S, np.array(rule.law_params), mss, float(mss))
        return S

    interpreted = run(RULES["cubic"].law)
    # by hand, bictcp_update in u64: t = (250,000 jiffies + usecs_to_jiffies(100 ms) = 25) << 10 / HZ
    t = ((1000 * 250 + 25) << 10) // 250
    offs = t - cubic_root(rule.cube_factor * 20)
    delta = ((410 * offs ** 3) % 2 ** 64) >> 40  # wraps: 410 offs^3 is ~ 2**76 here
    assert 410 * offs ** 3 > 2 ** 64
    target = 120 + delta
    cnt = 100 // (target - 100) if target > 100 else 100 * 100
    assert interpreted[CNT] == max(cnt, 2)
    compiled = laws.compiled_laws()
    if compiled is None:
        pytest.skip("numba not installed")
    assert list(run(compiled[f"law_{list(RULES).index('cubic')}"])) == list(interpreted)
