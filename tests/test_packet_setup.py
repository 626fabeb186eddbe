"""The packet model beside the simulator follows the simulated link, timers, quick ACKs
and back-off rule, and names the simulator's settings it does not follow
(studies/packet_setup.py; issue 18: "the stack profiles where they change the answer")."""

from __future__ import annotations

import pytest

from latency_model import TcpParams
from latency_model.model import packet
from latency_model.model.packet import PathConfig
from latency_model.sim import SimConfig
from latency_model.studies.packet_setup import packet_differences, packet_options, packet_path
from latency_model.studies.sweep import SweepSpec, grid_from_items, read_rows, run_sweep


def test_the_options_are_the_simulated_link_and_timers():
    assert packet_options(None) == {} and packet_options(SimConfig()) == {}  # the rfc profile: the defaults
    ns3 = packet_options(SimConfig.profile("ns3"))["path"]
    assert ns3 == PathConfig(header_bytes=42, quick_acks=1, clock_granularity_s=0.001, backoff_collapses=True,
                             sender="ns3")
    linux = SimConfig.profile("linux")
    assert packet_options(linux) == {"config": linux}  # the SACK sender: the simulator's transitions
    assert packet_options(SimConfig(sender="sack", prr="crb")) == {"config": SimConfig(sender="sack", prr="crb")}
    timers = dict(header_bytes=52, delack_timeout_s=0.04, min_rto_s=0.2, initial_rto_s=1.0, max_rto_s=120.0,
                  quick_acks=16, clock_granularity_s=0.2, timestamps=True, handshake_rtt=True)
    assert packet_path(linux) == PathConfig(sender="sack", prr="ssrb", rack_tlp=True, **timers)
    assert packet_path(SimConfig.profile("linux", sender="rfc")) == PathConfig(**timers)
    assert packet_path(SimConfig(sender="sack", prr="crb")) == PathConfig(sender="sack", prr="crb")
    cfg = SimConfig(link_rate_bps=2e6, delay_s=0.03, min_rto_s=0.5, max_rto_s=30.0, fin=False)
    assert packet_path(cfg) == PathConfig(link_rate_bps=2e6, delay_s=0.03, min_rto_s=0.5, max_rto_s=30.0, fin=False)


def test_the_differences_name_each_setting_the_model_does_not_follow():
    assert packet_differences(SimConfig()) == []
    assert packet_differences(SimConfig(min_rto_s=0.2, delack_timeout_s=0.04, header_bytes=52, quick_acks=3,
                                        clock_granularity_s=0.2)) == []
    assert packet_differences(SimConfig(rto_rule="paper")) == []  # followed: PathConfig.fixed_rto
    assert packet_path(SimConfig(rto_rule="paper")) == PathConfig(fixed_rto=True)
    for cfg, says in [(SimConfig(lt_mode="paper"), "Limited Transmit"),
                      (SimConfig(p_ack=0.01), "p_ack = 0.01"), (SimConfig(queue_packets=5), "buffer of 5 packets")]:
        (only,) = packet_differences(cfg)
        assert says in only
    (ackser,) = packet_differences(SimConfig.profile("ns3"))  # its sender and timer: PathConfig.sender
    assert "serialisation of ACKs" in ackser  # but not ns-3's serialised ACKs
    assert packet_differences(SimConfig.profile("ns3", ack_serialisation=False)) == []
    # the SACK sender runs on the simulator's own transitions: every mechanism of the profile followed
    assert packet_differences(SimConfig.profile("linux")) == []
    assert packet_differences(SimConfig.profile("linux", queue_packets=5)) == []  # its drop-tail buffer too
    (acks,) = packet_differences(SimConfig.profile("linux", p_ack=0.01))
    assert "p_ack = 0.01" in acks and "refuses" in acks
    (cubic,) = packet_differences(SimConfig.profile("linux", sender="rfc", timer_hz=0))  # the model's own engines
    assert "default growth rule cubic" in cubic
    assert packet_differences(SimConfig.profile("linux", sender="rfc", timer_hz=0)) == [cubic]
    (rto, _) = packet_differences(SimConfig.profile("linux", sender="rfc"))  # the RTO in jiffies, no RACK
    assert "RTO in jiffies of 1/250 s" in rto and "RACK" not in rto
    with pytest.raises(ValueError, match="config must be a SimConfig"):
        packet_differences({"sender": "rfc"})
    with pytest.raises(ValueError, match="config must be a SimConfig"):
        packet_path("rfc")


TIMERS = dict(min_rto_s=0.3, delack_timeout_s=0.05)


def _packet_rows(path):
    _, rows = read_rows(path)
    return {r["size_packets"]: r for r in rows if r.get("model") == "packet"}


def test_a_sweep_gives_the_packet_model_the_simulated_timers(tmp_path):
    items = ["model=packet", "p=0.1", "b=1", "size-packets=1,3"]
    mine = run_sweep(SweepSpec(grid_from_items(items), what="both", runs=20, sim_config=SimConfig(**TIMERS)),
                     tmp_path / "a.csv")
    plain = run_sweep(SweepSpec(grid_from_items(items), what="both", runs=20), tmp_path / "b.csv")
    a, b = _packet_rows(mine.out), _packet_rows(plain.out)
    params = TcpParams(p=0.1, b=1)
    want = packet.expected_latency(params, size_packets=[1, 3], path=PathConfig(**TIMERS))
    default = packet.expected_latency(params, size_packets=[1, 3])
    for i, n in enumerate(("1", "3")):
        assert float(a[n]["expected_latency_s"]) == pytest.approx(want[i].expected_latency_s, rel=1e-12)
        assert float(b[n]["expected_latency_s"]) == pytest.approx(default[i].expected_latency_s, rel=1e-12)
        assert a[n]["key"] != b[n]["key"]
    # one segment waits the initial RTO (1 s in both) when lost; three segments lose also
    # after an RTT sample, when the RTO is its minimum (0.3 s instead of 1 s)
    assert want[0].expected_latency_s == pytest.approx(default[0].expected_latency_s, rel=1e-6)
    assert want[1].expected_latency_s < 0.9 * default[1].expected_latency_s


def test_the_map_gives_the_packet_model_the_simulated_timers_and_caches_them_apart(tmp_path):
    from latency_model.studies.accuracy import AccuracyMap, run_accuracy

    kw = dict(models=("packet",), sizes_packets=(1, 3), p=(0.1,), b=(1,), variants=("newreno",), runs=20)
    mine = run_accuracy(AccuracyMap(**kw, sim_config=SimConfig(**TIMERS)), cache_dir=tmp_path, model_timeout_s=None)
    plain = run_accuracy(AccuracyMap(**kw), cache_dir=tmp_path, model_timeout_s=None)
    assert mine["model_calls_computed"] == plain["model_calls_computed"] == 1  # not served from the other's cache
    params = TcpParams(p=0.1, b=1)
    want = packet.expected_latency(params, size_packets=[1, 3], path=PathConfig(**TIMERS))
    default = packet.expected_latency(params, size_packets=[1, 3])
    assert [r["model_s"] for r in mine["rows"]] == pytest.approx([w.expected_latency_s for w in want], rel=1e-12)
    assert [r["model_s"] for r in plain["rows"]] == pytest.approx([d.expected_latency_s for d in default], rel=1e-12)
    again = run_accuracy(AccuracyMap(**kw, sim_config=SimConfig(**TIMERS)), cache_dir=tmp_path, model_timeout_s=None)
    assert again["model_calls_computed"] == 0 and again["rows"] == mine["rows"]


def _both_dps(prm, sizes, path) -> list:
    """E[T] (s) of the level DP at ``sizes``, after checking that it equals the tree DP's
    (both unfolded and truncated at 1e-11: docs/model.md sections 2 and 3, rel. 2e-5 as
    in ``test_level_dp_equals_the_tree_dp``)."""
    lv = packet.expected_latency(prm, size_packets=sizes, path=path, method="levels", max_states=0, eps=1e-11,
                                 stationary_tol=None)
    tr = packet.expected_latency(prm, size_packets=sizes, path=path, method="tree", max_states=0, eps=1e-11)
    for x, y in zip(lv, tr):
        assert x.expected_latency_s == pytest.approx(y.expected_latency_s, rel=2e-5)
    return [x.expected_latency_s for x in lv]


@pytest.mark.parametrize("quick", [1, 16])
def test_quick_acks_in_the_level_dp_equal_the_tree_dp(quick):
    # the receiver's first ACKs at once (ns-3: 1, Linux: 16): the two DPs' engines agree
    from latency_model import apply_variant

    for variant, b, w0, p in (("newreno", 2, 2, 0.1), ("lt", 1, 3, 0.2)):
        prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
        _both_dps(prm, [1, 2, 3, 5, 8], PathConfig(quick_acks=quick))


def test_quick_acks_against_the_simulator():
    # One quick ACK with b = 2 and W0 = 2: segment 0 is acknowledged at once and segment 1
    # then waits for the delayed-ACK timer, so a 5-packet transfer is slower than without
    # (most of the ns3 profile's gap, docs/model.md 6.9; at 3 packets no difference). The tree DP (exact to 1e-9 truncation) against
    # 20,000 simulated transfers: within 4 standard errors (and the effect is > 10 SE).
    import numpy as np

    from latency_model.sim import OUT_FIELDS, run_many

    prm = TcpParams(p=0.02, b=2, w0=2)
    for n in (3, 5):
        model = {q: packet.expected_latency(prm, size_packets=[n], path=PathConfig(quick_acks=q), method="tree",
                                            eps=1e-9)[0].expected_latency_s for q in (0, 1)}
        runs = run_many(prm, n * prm.mss_bytes, np.random.SeedSequence(7).spawn(20000), SimConfig(quick_acks=1))
        lat = runs[:, OUT_FIELDS.index("completion_s")]
        mean, se = lat.mean(), lat.std(ddof=1) / np.sqrt(lat.size)
        assert abs(model[1] - mean) < 4 * se
        if n == 5:  # measured: 0.315 s without, 0.407 s with (simulated 0.319 s and 0.410 s)
            assert model[1] - model[0] > 10 * se


def test_the_clock_granularity_in_the_level_dp_equals_the_tree_dp_and_lengthens_the_rto():
    # RTO = SRTT + max(G, 4 RTTVAR) (RFC 6298 2.3): with Linux's G = 200 ms and minimum RTO
    # 200 ms the RTO after the first samples is about 0.3 s, not 0.2 s, so losses cost more
    from latency_model import apply_variant

    prm = apply_variant(TcpParams(p=0.1, b=2, w0=2), "newreno")
    sizes = [1, 2, 3, 5, 8]
    kw = dict(delack_timeout_s=0.04, min_rto_s=0.2)
    out = {}
    for g in (0.0, 0.2):
        out[g] = _both_dps(prm, sizes, PathConfig(clock_granularity_s=g, **kw))
    assert out[0.0][0] == pytest.approx(out[0.2][0], rel=1e-9)  # one segment: only the initial RTO
    assert all(b > 1.01 * a for a, b in zip(out[0.0][3:], out[0.2][3:]))  # 5 and 8 packets: +1.5 %, +2.9 %


def test_a_collapsing_back_off_in_the_level_dp_equals_the_tree_dp_and_shortens_repeated_timeouts():
    # ns-3 recomputes the RTO from its estimator at every new ACK: after a timeout the next
    # new ACK (no valid sample: it covers the resent segment) ends the back-off, where RFC
    # 6298 with Karn's rule keeps the doubled RTO until a valid sample
    from latency_model import apply_variant

    prm = apply_variant(TcpParams(p=0.2, b=1, w0=2), "newreno")
    sizes = [1, 2, 3, 5, 8]
    out = {}
    for collapse in (False, True):
        out[collapse] = _both_dps(prm, sizes, PathConfig(backoff_collapses=collapse))
    assert out[True][0] == out[False][0]  # one segment: no new ACK before the end
    assert all(b < 0.99 * a for a, b in zip(out[False][2:], out[True][2:]))


def test_latency_stack_sets_the_packet_model_up_as_the_profile():
    """``latency --model packet --stack NAME``: the profile's link, timers, quick ACKs and
    back-off rule (and its W0 unless --w0), what is not followed named; one line and exit
    2 for another model or an unknown stack."""
    import json

    from test_cli_fuzz import run_cli

    base = ["latency", "--model", "packet", "--size-packets", "5", "--p", "0.02", "--b", "2", "--json"]
    code, out, err, exc = run_cli(base + ["--stack", "ns3"])
    assert exc is None and code == 0, err
    doc = json.loads(out)
    path = PathConfig(header_bytes=42, quick_acks=1, clock_granularity_s=0.001, backoff_collapses=True,
                      sender="ns3")
    want = packet.expected_latency(TcpParams(p=0.02, b=2), size_packets=[5], path=path)[0].expected_latency_s
    assert doc["results"][0]["expected_latency_s"] == pytest.approx(want, rel=1e-12)
    assert doc["params"]["stack"] == "ns3" and doc["params"]["path"]["quick_acks"] == 1
    (ackser,) = doc["not_followed"]  # ns-3's serialised ACKs, which the model leaves out
    assert "serialisation of ACKs" in ackser
    code, out, _, _ = run_cli(base)
    assert json.loads(out)["results"][0]["expected_latency_s"] < 0.8 * want  # the quick ACK's delay
    code, out, _, _ = run_cli(["latency", "--model", "packet", "--size-packets", "2", "--stack", "linux", "--json"])
    assert code == 0 and json.loads(out)["params"]["w0"] == 10.0
    code, out, _, _ = run_cli(["latency", "--model", "packet", "--size-packets", "2", "--stack", "linux", "--w0", "3",
                               "--json"])
    assert code == 0 and json.loads(out)["params"]["w0"] == 3.0
    for argv, says in ((["latency", "--stack", "ns3"], "--stack: the packet model's options; --model fluid"),
                       (["latency", "--model", "packet", "--stack", "bsd"], "--stack must be one of rfc, ns3, linux")):
        code, out, err, exc = run_cli(argv + ["--size-packets", "2"])
        assert exc is None and code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_the_paper_s_fixed_rto_equals_in_both_dps_and_matches_the_simulator():
    # rto_rule "paper": RTO = TcpParams.rto (max(1 s, 4 RTT)) always, no estimator, no
    # back-off; against 20,000 simulated transfers with that rule, within 4 SE, and shorter
    # than RFC 6298's backed-off timeouts at p = 0.2
    import numpy as np

    from latency_model import apply_variant
    from latency_model.sim import OUT_FIELDS, run_many

    prm = apply_variant(TcpParams(p=0.2, b=1, w0=2), "newreno")
    lv = _both_dps(prm, [2, 5], PathConfig(fixed_rto=True))
    rfc = packet.expected_latency(prm, size_packets=[2, 5])
    for x, z in zip(lv, rfc):
        assert x < 0.95 * z.expected_latency_s
    for n, x in zip((2, 5), lv):
        runs = run_many(prm, n * prm.mss_bytes, np.random.SeedSequence(11).spawn(20000), SimConfig(rto_rule="paper"))
        lat = runs[:, OUT_FIELDS.index("completion_s")]
        assert abs(x - lat.mean()) < 4 * lat.std(ddof=1) / np.sqrt(lat.size)


def test_any_set_up_of_the_receiver_and_timer_gives_the_same_expectation_in_both_dps():
    """Property: for any quick-ACK count, back-off rule and timer, and any variant, ACK
    ratio, first window and loss rate, the level DP (states keyed relative to snd_max,
    merged across histories) equals the per-size tree DP, both untruncated to 1e-11 and
    unfolded (the two formulations of sections 2 and 3 of docs/model.md). The minimum RTO
    is 1 s (ten RTTs): where a sample lifts the RTO above its minimum (a 0.2 s minimum),
    states that differ only in SRTT and RTTVAR merge keeping the most probable one's
    estimator (docs/model.md section 3), differently in the two DPs: measured 3e-5 apart
    at p = 0.3, 7 packets, and the clock granularity's tests take such cells one by one."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from latency_model import apply_variant

    @settings(max_examples=30, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(quick=st.integers(0, 3), g=st.sampled_from([0.0, 0.2]), collapse=st.booleans(), fixed=st.booleans(),
           delack=st.sampled_from([0.04, 0.2]), variant=st.sampled_from(["newreno", "lt", "er", "proposal"]),
           b=st.integers(1, 2), w0=st.integers(1, 6), p=st.sampled_from([0.02, 0.1, 0.3]))
    def check(quick, g, collapse, fixed, delack, variant, b, w0, p):
        prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
        _both_dps(prm, [1, 2, 4, 7], PathConfig(quick_acks=quick, clock_granularity_s=g, backoff_collapses=collapse,
                                                fixed_rto=fixed, delack_timeout_s=delack))

    check()
