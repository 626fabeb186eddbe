"""The modern-recovery model (latency_model/model/modern.py): RACK-TLP's probe, SACK's merged
recovery and Early Retransmit in the paper's recursion.

Reference values are hand-worked from the fluid closed forms of the paper's Section 2 (written
out here, not read from latency_model.model.fluid): with b = 1, slow start from W0 sends
``y(w) = MSS (w - W0)/ln 2`` bytes by the time ``t(w) = RTT log2(w/W0)``, congestion avoidance
from c reaches ``w = sqrt(c^2 + 2 x/MSS)`` after x bytes at ``t = RTT (w - c)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from latency_model.growth import GeneralizedRule
from latency_model.model import modern, recursion
from latency_model.params import TcpParams, apply_variant

MSS = 500.0
RTT = 0.1
LN2 = math.log(2.0)


def _ss_time(y, w0):
    """Slow start (b = 1) from w0 packets: time to send y bytes, seconds."""
    return RTT * math.log((w0 + LN2 * y / MSS) / w0) / LN2


def _ss_window(y, w0):
    return w0 + LN2 * y / MSS


def _ca_time(x, c):
    """Congestion avoidance (b = 1) from window c: time to send x bytes, seconds."""
    return RTT * (math.sqrt(c * c + 2.0 * x / MSS) - c)


def test_pto_is_rfc8985_section_7_2():
    p = TcpParams()  # RTT 0.1 s, RTO max(1, 0.4) = 1 s
    assert modern.pto_s(p) == pytest.approx(2 * 0.1 + 0.2)  # one segment in flight: + WCDelAckT
    assert modern.pto_s(p, one_segment=False) == pytest.approx(0.2)
    assert modern.pto_s(p, rtt_sample=False) == 1.0  # no SRTT: 1 s
    assert modern.pto_s(p.replace(rto_s=0.3)) == pytest.approx(0.3)  # capped at the RTO
    assert modern.pto_s(p.replace(rtt_s=0.5)) == pytest.approx(1.2)  # RTO = 4 RTT = 2 s
    with pytest.raises(ValueError, match="one_segment"):
        modern.pto_s(p, one_segment=1)
    with pytest.raises(ValueError, match="params"):
        modern.pto_s(None)


def test_newreno_recovery_reproduces_the_papers_recursion():
    # Same recursion, independent solver (bilinear tables vs the reference's cubic ones):
    # measured within 3.7e-3 (E[L]) and 2.5e-4 (L_1) over 1..60 packets, p <= 0.1.
    sizes = [1, 2, 3, 5, 8, 13, 21, 34]
    for variant in ("newreno", "lt", "proposal"):
        par = apply_variant(TcpParams(p=0.05), variant)
        ours = modern.expected_latency(par, size_packets=sizes, recovery="newreno")
        ref = recursion.expected_latency(par, size_packets=sizes)
        np.testing.assert_allclose(ours.expected_latency_s, ref.expected_latency_s, rtol=5e-3)
        np.testing.assert_allclose(ours.conditional_latency_s[:, 1], ref.conditional_latency_s[:, 1], rtol=5e-4)


@pytest.mark.parametrize("w0", [2, 10])
def test_last_packet_loss_costs_the_pto_instead_of_the_rto(w0):
    # With W0 >= 2 RACK-TLP has the proposal's regions (no region 1, tail = the last packet);
    # only the last packet's timer differs: PTO = 0.4 s for RTO = 1 s, over a width of one
    # packet of the N, so N (L_1(proposal) - L_1(RACK-TLP)) = RTO - PTO. A one-packet file has no
    # RTT sample: its probe waits min(1 s, RTO) = the RTO, no difference.
    sizes = np.arange(1, 13)
    base = TcpParams(w0=w0, p=0.1)
    rack = modern.conditional_latency(base, k=1, size_packets=sizes, recovery="rack-tlp")
    prop = recursion.conditional_latency(apply_variant(base, "proposal"), k=1, size_packets=sizes)
    gap = (prop - rack) * sizes
    assert gap[0] == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(gap[1:], base.rto - modern.pto_s(base), atol=1e-3)


@pytest.mark.parametrize("n", [2, 5])
def test_l1_hand_worked_iw10(n):
    # W0 = 10: no region 1 (the window starts above 2 packets); region 2 [0, r - MSS):
    # L_0(y) + L_0(r - y; CA from c = W_f/2 - 1); region 3 [r - MSS, r]: L_0(y) + PTO + L_0(MSS;
    # slow start from 1). One loss, so SACK's merge changes nothing.
    r = n * MSS
    pto = 0.4

    def fr(y):
        c = max(_ss_window(y, 10.0) / 2.0 - 1.0, 1.0)
        return _ss_time(y, 10.0) + _ca_time(r - y, c)

    def tail(y):
        return _ss_time(y, 10.0) + pto + _ss_time(MSS, 1.0)

    expected = (integrate.quad(fr, 0.0, r - MSS)[0] + integrate.quad(tail, r - MSS, r)[0]) / r
    got = modern.conditional_latency(TcpParams(w0=10), k=1, size_packets=[n])[0]
    assert got == pytest.approx(expected, rel=2e-4)


def test_l2_hand_worked_with_the_sack_merge():
    # W0 = 10, 5 packets: the data sent in the RTT after any loss (>= 10 packets) covers the
    # rest of the file, so with SACK a second loss is repaired in the first one's recovery:
    # region 2 costs L_0(y) + L_0(r - y; c) whatever the second loss. Region 3 (the last
    # packet first): PTO, then the second loss hits the probe: RTO and one more packet,
    # L_1^RTO(MSS) = L_0(MSS; 1) + RTO + E[L_0(Y; 1)], Y uniform on [0, MSS].
    n, r, pto, rto = 5, 5 * MSS, 0.4, 1.0

    def dens(y):
        return 2.0 / r * (1.0 - y / r)

    def fr(y):
        c = max(_ss_window(y, 10.0) / 2.0 - 1.0, 1.0)
        return (_ss_time(y, 10.0) + _ca_time(r - y, c)) * dens(y)

    last = _ss_time(MSS, 1.0) + rto + integrate.quad(lambda y: _ss_time(y, 1.0), 0.0, MSS)[0] / MSS

    def tail(y):
        return (_ss_time(y, 10.0) + pto + last) * dens(y)

    expected = integrate.quad(fr, 0.0, r - MSS)[0] + integrate.quad(tail, r - MSS, r)[0]
    par = TcpParams(w0=10)
    got = modern.conditional_latency(par, k=2, size_packets=[n], recovery="rack-tlp")[0]
    assert got == pytest.approx(expected, rel=5e-4)
    # Without the merge (the paper's reading) a second loss is a new loss of the post-recovery
    # state, which costs more: L_2 is larger, and RACK-TLP's L_2 is even below its L_1 here
    # (two losses put the first one early more often, away from the probe).
    no_merge = modern.conditional_latency(par, k=2, size_packets=[n], recovery="newreno")[0]
    l1 = modern.conditional_latency(par, k=1, size_packets=[n], recovery="rack-tlp")[0]
    assert got < l1 < no_merge


def test_early_retransmit_ends_region_1_once_the_rest_fits_in_the_window():
    # W0 = 2, 5 packets. Slow start: W_f(y) = 2 + ln2 y/MSS. RFC 5827 applies once the 5 - y
    # packets after the loss fit in the window: 5 - y = 2 + ln2 y, y_er = 3/(1 + ln 2) packets;
    # NewReno's region 1 ends at min(y_to = 2/ln 2, 5 - 3 = 2) = 2 packets and its tail is 3.
    par = TcpParams(w0=2)
    er = modern.single_loss_timers(apply_variant(par, "er"), size_packets=[5], recovery="newreno")
    nr = modern.single_loss_timers(par, size_packets=[5], recovery="newreno")
    assert er["region1_packets"][0] == pytest.approx(3.0 / (1.0 + LN2), rel=1e-9)
    assert er["tail_packets"][0] == pytest.approx(1.0)
    assert er["rto_packets"][0] == pytest.approx(3.0 / (1.0 + LN2) + 1.0, rel=1e-9)
    assert (nr["region1_packets"][0], nr["tail_packets"][0]) == pytest.approx((2.0, 3.0))
    rack = modern.single_loss_timers(par, size_packets=[1, 5], recovery="rack-tlp")
    assert list(rack["rto_packets"]) == [0.0, 0.0]
    assert list(rack["probe_packets"]) == pytest.approx([1.0, 1.0])  # the last packet only


def test_expected_latency_is_eq1_over_its_levels():
    par = TcpParams(p=0.05, w0=10)
    res = modern.expected_latency(par, size_packets=[4, 20])
    assert res.expected_latency_s == pytest.approx((res.loss_pmf * res.conditional_latency_s).sum(axis=1))
    cond = modern.conditional_latency(par, k=[0, 1, 2], size_packets=[4, 20])
    np.testing.assert_allclose(cond, res.conditional_latency_s[:, :3], rtol=1e-12)
    pred = modern.predict(par, np.array([2000.0, 10000.0]))
    assert pred.model == "modern"
    np.testing.assert_allclose(pred.expected_latency_s, res.expected_latency_s, rtol=1e-12)


def test_bad_input_names_the_parameter():
    par = TcpParams()
    with pytest.raises(ValueError, match="positional size"):
        modern.expected_latency(par, [1000.0])
    with pytest.raises(ValueError, match="exactly one"):
        modern.expected_latency(par, size_bytes=[1000.0], size_packets=[2])
    with pytest.raises(ValueError, match="size_packets"):
        modern.conditional_latency(par, k=1, size_packets=[0])
    with pytest.raises(ValueError, match="recovery must be one of"):
        modern.conditional_latency(par, k=1, size_packets=[2], recovery="cubic")
    with pytest.raises(ValueError, match="k must be"):
        modern.conditional_latency(par, k=-1, size_packets=[2])
    with pytest.raises(ValueError, match="rule 'standard'"):
        modern.check_supported(par.replace(rule=GeneralizedRule(beta=4.0)))
    with pytest.raises(ValueError, match="options"):
        modern.expected_latency(par, size_packets=[2], options="fine")
    with pytest.raises(ValueError, match="nodes"):
        modern.ModernOptions(nodes=0)
    with pytest.raises(ValueError, match="tail"):
        modern.expected_latency(par, size_packets=[2], tail=0.0)


def test_model_loss_cost_against_the_simulator():
    # Model against simulator where the model's assumptions hold: the cost of losses,
    # E[L] - L_0 and L_1 - L_0 (the fluid L_0 of a first window is below the simulated one RTT
    # by construction of the paper's model, so L_0 is taken out on both sides). The model
    # charges no time to a fast recovery (the paper's region 2); the simulated one takes one
    # RTT more (and RACK's reo_wnd <= RTT/4), so the tolerance is one RTT per expected loss
    # (p N / (1 - p) RTT) plus 3 standard errors of the Monte Carlo mean.
    from latency_model.sim.config import SimConfig
    from latency_model.sim.montecarlo import simulate
    from latency_model.sim.transfer import run_transfer

    cfg = SimConfig.profile("rfc", sender="sack", rack_tlp=True, prr="off")
    for w0, n, p in ((10, 40, 0.01), (2, 20, 0.01)):
        par = TcpParams(w0=w0, p=p)
        l0_model = modern.conditional_latency(par, k=0, size_packets=[n])[0]
        e_model = modern.expected_latency(par, size_packets=[n]).expected_latency_s[0]
        res = simulate(par, size_packets=[n], runs=3000, seed=11, config=cfg, engine="auto").results[0]
        l0_sim = run_transfer(par.replace(p=0.0), size_packets=n, config=cfg).completion_s
        se = (res.ci95_s[1] - res.mean_latency_s) / 1.96
        tol = 3 * se + p * n / (1 - p) * RTT
        assert abs((res.mean_latency_s - l0_sim) - (e_model - l0_model)) <= tol
    # One loss, exactly (every position dropped once; no Monte Carlo error): within one RTT.
    par = TcpParams(w0=10, p=0.0)
    for n in (10, 20):
        runs = [run_transfer(par, size_packets=n, config=cfg, drops=[i]) for i in range(n)]
        l1_sim = np.mean([r.completion_s for r in runs])  # p -> 0: the positions weigh the same
        l0_sim = run_transfer(par, size_packets=n, config=cfg).completion_s
        l0m, l1m = modern.conditional_latency(par, k=[0, 1], size_packets=[n])[0]
        assert abs((l1_sim - l0_sim) - (l1m - l0m)) <= RTT
