"""Public simulator functions refuse invalid parameters with a ValueError naming them.

Each test here failed before its fix (a TypeError, an AttributeError, a numpy error, or
a result computed from a setting that was silently ignored or invalid).
"""

import math

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.sim import (Dumbbell, ScenarioResult, SimConfig, SimSummary, fast_path_supported,
                               mean_ci, profile_params, run_many, run_transfer)
from latency_model.sim.onoff import OnOffSource
from latency_model.sim.profiles import check_stack, profile_config, recovery_overrides
from latency_model.sim.scenario import Flow, Scenario, random_flows
from latency_model.sim.scenario import run as run_scenario
from latency_model.sim.sizes import FixedSizes, ParetoSizes

P = TcpParams()


def _children():
    return np.random.SeedSequence(1).spawn(5)


# 1. run_many, fast_path_supported -------------------------------------------------------

@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
@pytest.mark.parametrize("size", [1.5, 1500.7, True, math.nan, 0, -3, "1500", None])
def test_run_many_checks_size_bytes_on_every_engine(engine, size):
    with pytest.raises(ValueError, match=r"size_bytes must be an integer >= 1"):
        run_many(P, size, _children(), engine=engine)


@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
def test_run_many_checks_params_and_config(engine):
    with pytest.raises(ValueError, match=r"params must be a TcpParams, got 'x'"):
        run_many("x", 1000, _children(), engine=engine)
    with pytest.raises(ValueError, match=r"params must be a TcpParams, got None"):
        run_many(None, 1000, _children(), engine=engine)
    with pytest.raises(ValueError, match=r"config must be a SimConfig"):
        run_many(P, 1000, _children(), {"delay_s": 0.1}, engine=engine)


def test_fast_path_supported_checks_params_and_config():
    with pytest.raises(ValueError, match=r"params must be a TcpParams"):
        fast_path_supported(None)
    with pytest.raises(ValueError, match=r"config must be a SimConfig"):
        fast_path_supported(P, "x")
    assert fast_path_supported(P) and fast_path_supported(P, SimConfig())


@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
@pytest.mark.parametrize("children,match", [
    (-5, r"children must be an integer >= 0"),  # an int is a count of runs (seeded from rng)
    (None, r"children must be a sequence"),
    ("abc", r"children must be a sequence"),
    (np.random.SeedSequence(1), r"children must be a sequence"),  # one child, not a sequence
    ([np.random.default_rng(1)], r"children\[0\] must be a numpy.random.SeedSequence"),
    ([np.random.PCG64(1)], r"children\[0\] must be"),
    ([-1], r"children\[0\] must be a numpy.random.SeedSequence or an integer >= 0 .*got -1"),
    ([None], r"children\[0\] must be"),  # fresh OS entropy: not reproducible
    ([True], r"children\[0\] must be"),
    ([np.random.SeedSequence(1), 2.5], r"children\[1\] must be"),
])
def test_run_many_checks_children(engine, children, match):
    with pytest.raises(ValueError, match=match):
        run_many(P, 1000, children, engine=engine)


def test_run_many_still_takes_integer_seeds_and_agrees_across_engines():
    children = [np.random.SeedSequence(3), 5, np.uint8(7)]
    tcp = TcpParams(p=0.2)
    a = run_many(tcp, 4000, children, engine="python")
    b = run_many(tcp, 4000.0, children, engine="compiled")
    assert np.array_equal(a, b)


# 2. profiles, SimConfig.profile / replace ---------------------------------------------

@pytest.mark.parametrize("params", ["x", None, {"w0": 2}])
@pytest.mark.parametrize("name", ["rfc", "linux"])
def test_profile_params_checks_params(name, params):
    with pytest.raises(ValueError, match=r"params must be a TcpParams"):
        profile_params(name, params)


@pytest.mark.parametrize("given", [5, "w0", [1], None])
def test_profile_params_checks_given(given):
    with pytest.raises(ValueError, match=r"given must be an iterable of field names"):
        profile_params("linux", P, given=given)


def test_profile_params_still_applies_and_keeps_given():
    assert profile_params("linux", P).w0 == 10
    assert profile_params("linux", P, given=("w0",)).w0 == P.w0
    assert profile_params("linux", P, given={"w0": 3, "stack": "linux"}).w0 == P.w0  # a sweep's combo
    assert profile_params("rfc", P) is P


@pytest.mark.parametrize("name", [["rfc"], {"rfc": 1}, None, 3])
def test_check_stack_refuses_unhashable_and_other_names(name):
    with pytest.raises(ValueError, match=r"stack must be one of rfc, ns3, linux"):
        check_stack(name)
    with pytest.raises(ValueError, match=r"stack must be one of"):
        SimConfig.profile(name)


def test_recovery_overrides_refuses_unhashable_names():
    with pytest.raises(ValueError, match=r"recovery must be one of newreno"):
        recovery_overrides(["sack"])


@pytest.mark.parametrize("base", [{}, "rfc", TcpParams()])
def test_profile_checks_base(base):
    with pytest.raises(ValueError, match=r"base must be a SimConfig"):
        SimConfig.profile("rfc", base=base)
    with pytest.raises(ValueError, match=r"base must be a SimConfig"):
        profile_config("rfc", base)


def test_profile_and_replace_name_an_unknown_field():
    with pytest.raises(ValueError, match=r"unknown SimConfig field 'bogus'; valid fields: link_rate_bps, .*stack"):
        SimConfig.profile("rfc", bogus=1)
    with pytest.raises(ValueError, match=r"unknown SimConfig field 'bogus'; valid fields: .*min_rto_s"):
        SimConfig().replace(bogus=1)
    with pytest.raises(ValueError, match=r"unknown SimConfig fields 'a', 'b'"):
        SimConfig().replace(a=1, b=2)
    assert SimConfig().replace(min_rto_s=0.2).min_rto_s == 0.2
    assert SimConfig.profile("linux", quick_acks=2).quick_acks == 2


# 3. SimConfig: the RTO cap names both fields ------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"min_rto_s": 100}, r"min_rto_s must be <= max_rto_s \(60.0\), got min_rto_s=100.0"),
    ({"initial_rto_s": 100}, r"initial_rto_s must be <= max_rto_s \(60.0\), got initial_rto_s=100.0"),
    ({"max_rto_s": 0.5}, r"min_rto_s must be <= max_rto_s \(0.5\), got min_rto_s=1.0"),
    ({"max_rto_s": 0}, r"max_rto_s must be in \(0, 3600\], got 0"),
])
def test_rto_cap_message_names_both_fields(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SimConfig(**kwargs)


def test_rto_cap_still_accepts_equal_bounds():
    cfg = SimConfig(min_rto_s=2.0, initial_rto_s=2.0, max_rto_s=2.0)
    assert cfg.min_rto_s == cfg.max_rto_s == 2.0


# 4. run_transfer: drops, trace, rng ---------------------------------------------------

@pytest.mark.parametrize("drops", [7, 2.5, "12", b"1"])
def test_run_transfer_checks_drops_is_a_collection(drops):
    with pytest.raises(ValueError, match=r"drops must be a mapping of segment index to count or an "
                                         r"iterable of segment indices"):
        run_transfer(P, size_packets=3, drops=drops)


@pytest.mark.parametrize("trace", ["yes", 1, None, 0.0])
def test_run_transfer_checks_trace(trace):
    with pytest.raises(ValueError, match=r"trace must be True or False"):
        run_transfer(P, size_packets=3, drops=[1], trace=trace)


@pytest.mark.parametrize("kwargs", [{"params": TcpParams(p=0)}, {"params": P, "drops": [1]}])
@pytest.mark.parametrize("rng", [-1, "seed", 2.5, np.random.PCG64(1)])  # an int >= 0 or a SeedSequence seeds it
def test_run_transfer_checks_rng_even_when_it_draws_nothing(kwargs, rng):
    with pytest.raises(ValueError, match=r"rng must be"):
        run_transfer(size_packets=3, rng=rng, **kwargs)


def test_run_transfer_still_runs_with_valid_drops_trace_and_rng():
    a = run_transfer(P, size_packets=3, drops=(1,), trace=np.True_)
    b = run_transfer(P, size_packets=3, drops={1: 1}, rng=np.random.default_rng(0))
    assert isinstance(a, tuple) and a[0] == b
    assert run_transfer(TcpParams(p=0), size_packets=3, rng=np.random.default_rng(1)).lost_packets == 0


# 5. Scenario: flows, sources, and the SimConfig settings the dumbbell run implements ----

TCP0 = TcpParams(p=0.0, b=2, w0=1)
FLOW = Flow(0.0, 5 * TCP0.mss_bytes, TCP0)


@pytest.mark.parametrize("flows", [None, 5, FLOW, "ab", {"a": FLOW}])
def test_scenario_checks_flows(flows):
    with pytest.raises(ValueError, match=r"flows must be a non-empty sequence of Flow"):
        Scenario(flows=flows)


@pytest.mark.parametrize("sources", [None, 5, OnOffSource(1e6, stop_s=1.0)])
def test_scenario_checks_sources(sources):
    with pytest.raises(ValueError, match=r"sources must be a sequence of OnOffSource"):
        Scenario(flows=[FLOW], sources=sources)


@pytest.mark.parametrize("config,named", [
    (SimConfig(rtt_sampling="timestamps"), r"rtt_sampling='timestamps'"),  # was a TypeError in send_data
    (SimConfig.profile("linux"), r"sender='sack', rtt_sampling='timestamps', quick_acks=16, rack_tlp=True"),
    (SimConfig.profile("ns3"), r"sender='ns3', rtt_sampling='ns3', quick_acks=1"),
    (SimConfig(sender="ns3", rtt_sampling="ns3"), r"sender='ns3'"),  # silently ran the rfc sender
    (SimConfig(sender="sack"), r"sender='sack'"),
    (SimConfig(sender="sack", prr="crb"), r"prr='crb'"),
    (SimConfig(quick_acks=16), r"quick_acks=16"),  # silently ignored
    (SimConfig(fin=False), r"fin=False"),  # silently ignored
    (SimConfig(link_rate_bps=1e6), r"link_rate_bps=1000000.0"),  # replaced by the topology
    (SimConfig(delay_s=0.1), r"delay_s=0.1"),
    (SimConfig(queue_packets=3), r"queue_packets=3"),
])
def test_scenario_refuses_config_settings_it_does_not_implement(config, named):
    with pytest.raises(ValueError, match=r"config sets (.*, )?" + named + r".*dumbbell scenario does not "
                                         r"implement: it runs only the rfc sender"):
        Scenario(flows=[FLOW], config=config)


def test_scenario_quick_acks_were_ignored_but_the_supported_config_runs():
    # run_transfer honours quick_acks (0.500 s -> 0.300 s); the dumbbell ignored it (0.487 s both ways)
    quick = run_transfer(TCP0, size_packets=5, config=SimConfig(quick_acks=16)).completion_s
    plain = run_transfer(TCP0, size_packets=5).completion_s
    assert quick < plain - 0.1
    res = run_scenario(Scenario(flows=[FLOW]))
    assert res.flows[0].completed and res.flows[0].completion_s == pytest.approx(0.486992)
    # everything the dumbbell does implement is still accepted, profiles with defaults too
    cfg = SimConfig.profile("rfc", min_rto_s=0.2, initial_rto_s=0.5, max_rto_s=30.0, clock_granularity_s=0.01,
                            delack_timeout_s=0.1, lt_mode="paper", rto_rule="paper", header_bytes=52)
    other = run_scenario(Scenario(flows=(FLOW, Flow(0.01, 3000, TCP0, node=1)), config=cfg,
                                  sources=[OnOffSource(1e5, stop_s=0.5)], record_rtt=np.True_))
    assert all(r.completed for r in other.flows)


# 6. random_flows: params and seed -------------------------------------------------------

def _flows(**kwargs):
    args = {"params": TCP0, "seed": 1, **kwargs}
    return random_flows(3, ParetoSizes(), start_window_s=1.0, nodes=2, **args)


@pytest.mark.parametrize("params,match", [
    (None, r"params must be one TcpParams or a sequence of 3 of them, got None"),
    ("abc", r"params must be one TcpParams or a sequence of 3 of them, got 'abc'"),  # 3 letters
    (5, r"params must be one TcpParams"),
    ([None] * 3, r"params\[0\] must be a TcpParams, got None"),
    ([TCP0, TCP0, {"p": 0}], r"params\[2\] must be a TcpParams"),
    ([TCP0] * 2, r"params must be one TcpParams or a sequence of 3 of them, got 2 TcpParams"),
])
def test_random_flows_checks_params(params, match):
    with pytest.raises(ValueError, match=match):
        _flows(params=params)


@pytest.mark.parametrize("seed", [None, True, -1, 1.5, "1", np.random.default_rng(1)])
def test_random_flows_checks_seed(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0"):
        _flows(seed=seed)


def test_random_flows_same_draw_for_every_kind_of_valid_seed_and_params():
    a = _flows(seed=4)
    assert a == _flows(seed=np.random.SeedSequence(4)) == _flows(seed=4.0, params=(TCP0,) * 3)


# 7. Size generators: no int64 overflow ---------------------------------------------------

def test_pareto_whole_sizes_refuse_sizes_beyond_2_53_packets():
    # gave -9223372036854775808 packets
    with pytest.raises(ValueError, match=r"ParetoSizes\(scale=4.0, shape=0.001\) drew a size of .* "
                                         r"packets, above the largest whole size .*2\*\*53.*shape=0.001"):
        ParetoSizes(4, 0.001).sample_whole_packets(np.random.default_rng(0), 5)


@pytest.mark.parametrize("make,name", [
    (lambda: FixedSizes(1e30), "packets"),
    (lambda: FixedSizes(2.0**53 + 2**11), "packets"),
    (lambda: ParetoSizes(1e17, 1.2), "scale"),
])
def test_size_generators_refuse_sizes_that_do_not_fit(make, name):
    with pytest.raises(ValueError, match=name + r" must be in \(0, 9.0072e\+15\]"):
        make()


def test_size_generators_still_draw_the_same_sizes():
    x = ParetoSizes(4.0, 1.2).sample_whole_packets(np.random.default_rng(3), 5)
    assert x.tolist() == [5, 6, 13, 26, 6] and x.dtype == np.int64
    assert FixedSizes(2**53).sample_whole_packets(np.random.default_rng(0), 2).tolist() == [2**53] * 2


# 8. mean_ci ----------------------------------------------------------------------------

@pytest.mark.parametrize("level", [1.5, 0, 1, -0.5, math.nan, True, "0.9", None])
def test_mean_ci_checks_level(level):
    # level=1.5 gave (2.0, (nan, nan))
    with pytest.raises(ValueError, match=r"level must be .*in \(0, 1\)"):
        mean_ci([1.0, 2.0, 3.0], level)


@pytest.mark.parametrize("x,match", [
    ([], r"x must not be empty"),  # gave (nan, None)
    ([1.0, math.nan], r"x must be finite"),
    ([1.0, math.inf], r"x must be finite"),
    (["a"], r"x must be real numbers"),
    ([True, False], r"x must be real numbers"),
    (None, r"x must be real numbers"),
])
def test_mean_ci_checks_x(x, match):
    with pytest.raises(ValueError, match=match):
        mean_ci(x)


def test_mean_ci_still_gives_the_same_interval():
    m, ci = mean_ci([1, 2, 3])
    assert m == 2.0 and ci == pytest.approx((-0.48413771175033027, 4.48413771175033), rel=1e-15)
    assert mean_ci([2.0]) == (2.0, None)
    assert mean_ci(np.array([1.0, 2.0, 3.0]), 0.5)[1][1] < ci[1]


# 10. ScenarioResult.column, and numpydoc sections ----------------------------------------

@pytest.mark.parametrize("name", [["completion_s"], "bogus", 3])
def test_scenario_result_column_checks_name(name):
    res = run_scenario(Scenario(flows=[FLOW]))
    with pytest.raises(ValueError, match=r"name must be a FlowRecord field \(index, .*completion_s"):
        res.column(name)  # a list was a TypeError (unhashable)
    assert res.column("completion_s").tolist() == [res.flows[0].completion_s]


@pytest.mark.parametrize("obj,sections", [
    (fast_path_supported, ("Parameters", "Returns", "Raises")),
    (SimSummary, ("Attributes", "seconds")),
    (ParetoSizes.sample_packets, ("Parameters", "Returns", "packets")),
    (ParetoSizes.sample_whole_packets, ("Parameters", "Returns", "packets", "Raises")),
    (FixedSizes.sample_packets, ("Parameters", "Returns", "packets")),
    (Dumbbell.bdp_packets, ("Parameters", "Returns", "bytes")),
    (ScenarioResult.column, ("Parameters", "Returns", "Raises")),
    (SimConfig.replace, ("Parameters", "Returns", "Raises")),
])
def test_public_docstrings_have_numpydoc_sections(obj, sections):
    for section in sections:
        assert section in obj.__doc__, (obj, section)
