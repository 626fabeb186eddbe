"""Settings a model does not read are refused (one line, exit 2 on the command line; a
ValueError naming them in the API), never ignored; the combinations they do read still run."""

import json

import pytest

from latency_model.growth import AssRule, SmoothStartRule, StandardRule
from latency_model.model import registry
from latency_model.model.recursion import check_supported as fluid_check_supported
from latency_model.params import TcpParams, apply_variant
from _cli import refused, run


# ---------------------------------------------------------------------------
# 7. the fluid model: Early Retransmit, byte counting, ASS's decrease


@pytest.mark.parametrize("argv, needles", [
    (["latency", "--size-packets", "1,3,6", "--variant", "er"], ["--variant er"]),
    (["thresholds", "--variant", "er"], ["--variant er"]),
    (["latency", "--b", "2", "--rule-param", "abc_l=2", "--size-packets", "3"], ["--rule-param abc_l"]),
    (["thresholds", "--b", "2", "--rule-param", "abc_l=2"], ["--rule-param abc_l"]),
    (["latency", "--rule", "ass", "--rule-param", "decrease=standard", "--size-packets", "3,8"],
     ["--rule-param decrease"]),
    # given explicitly, even at its default: the recursion halves whatever it says
    (["latency", "--rule", "ass", "--rule-param", "decrease=divide", "--size-packets", "3"],
     ["--rule-param decrease"]),
    (["latency", "--rule", "smooth-start", "--rule-param", "per_ack=euler", "--size-packets", "3"],
     ["--rule-param per_ack"]),
    (["latency", "--rule", "smoothtcp", "--rule-param", "alpha=0.25", "--size-packets", "3"], ["--rule-param alpha"]),
])
def test_fluid_refuses_what_it_does_not_read(capsys, argv, needles):
    refused(capsys, argv, "fluid model does not read", *needles)


def test_fluid_runs_what_it_reads(capsys):
    for argv in (["latency", "--size-packets", "1,3", "--variant", "lt", "--json"],
                 ["latency", "--size-packets", "1,3", "--variant", "proposal", "--json"],
                 ["latency", "--size-packets", "3", "--rule", "ass", "--rule-param", "algorithm=3", "--json"],
                 ["latency", "--size-packets", "3", "--rule", "smoothtcp", "--rule-param", "kappa=0.01", "--json"],
                 ["thresholds", "--variant", "lt", "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        json.loads(out)


def test_fluid_check_supported_raises_naming_the_setting():
    with pytest.raises(ValueError, match="early_retransmit"):
        fluid_check_supported(apply_variant(TcpParams(), "er"))
    with pytest.raises(ValueError, match="rule_param.abc_l"):
        fluid_check_supported(TcpParams(b=2, rule=StandardRule(abc_l=2)))
    with pytest.raises(ValueError, match="rule_param.decrease"):
        fluid_check_supported(TcpParams(rule=AssRule(decrease="standard")))
    with pytest.raises(ValueError, match="rule_param.per_ack"):
        fluid_check_supported(TcpParams(rule=SmoothStartRule(per_ack="euler")))
    # the registry's check and predict say the same
    with pytest.raises(ValueError, match="early_retransmit"):
        registry.check_supported("fluid", apply_variant(TcpParams(), "er"))
    with pytest.raises(ValueError, match="rule_param.abc_l"):
        registry.predict("fluid", TcpParams(rule=StandardRule(abc_l=2)), [500.0])
    for params in (TcpParams(), apply_variant(TcpParams(), "lt"), apply_variant(TcpParams(), "proposal"),
                   TcpParams(rule=AssRule(algorithm=3)), TcpParams(rule=AssRule())):
        fluid_check_supported(params)
    from latency_model.growth import RULES

    for rule in RULES.values():  # every rule at its defaults
        fluid_check_supported(TcpParams(rule=rule()))
    # an explicit rule parameter the recursion does not read, whatever its value
    with pytest.raises(ValueError, match="rule_param.decrease"):
        registry.check_given("fluid", TcpParams(rule=AssRule()), {"rule_param.decrease"})
    registry.check_given("fluid", TcpParams(rule=AssRule(algorithm=3)), {"rule_param.algorithm"})


# ---------------------------------------------------------------------------
# 9. PFTK has no initial window


@pytest.mark.parametrize("flags, needle", [(["--w0", "4"], "--w0"), (["--w0", "2"], "--w0"),
                                           (["--iw", "rfc3390"], "--iw")])
def test_pftk_refuses_an_explicit_initial_window(capsys, flags, needle):
    refused(capsys, ["latency", "--model", "pftk", "--size-packets", "1,3,20", *flags],
            f"{needle} is not read by model pftk")


def test_pftk_and_csa_run_without_it(capsys):
    assert run(capsys, "latency", "--model", "pftk", "--size-packets", "1,3,20")[0] == 0
    assert run(capsys, "latency", "--model", "csa", "--size-packets", "1,3", "--w0", "4")[0] == 0  # CSA reads w0


def test_pftk_check_given_api():
    with pytest.raises(ValueError, match="w0 is not read by model pftk"):
        registry.check_given("pftk", TcpParams(w0=4), {"w0"})
    with pytest.raises(ValueError, match="iw is not read by model pftk"):
        registry.check_given("pftk", TcpParams(), {"iw"})
    registry.check_given("csa", TcpParams(w0=4), {"w0"})
    registry.check_given("pftk", TcpParams(), set())


# ---------------------------------------------------------------------------
# 11. thresholds does not read p, RTT or RTO


@pytest.mark.parametrize("flags, needle", [(["--p", "0.3"], "--p:"), (["--p", "0.1"], "--p:"),
                                           (["--rtt-s", "0.5"], "--rtt-s:"), (["--rto", "2"], "--rto-s:"),
                                           (["--p", "0.3", "--rtt", "0.5"], "--p and --rtt-s:")])
def test_thresholds_refuses_p_rtt_rto(capsys, flags, needle):
    refused(capsys, ["thresholds", *flags], needle, "thresholds does not read")


def test_thresholds_checks_the_value_first_and_runs_without_them(capsys):
    refused(capsys, ["thresholds", "--p", "1"], "--p must be in [0, 1), got 1")
    code, out, _ = run(capsys, "thresholds", "--w0", "2", "--json")
    assert code == 0
    params = json.loads(out)["params"]
    assert (params["p"], params["rtt_s"], params["rto_s"]) == (TcpParams().p, TcpParams().rtt_s, None)


# ---------------------------------------------------------------------------
# 12. tables: --stack sets up the simulated column only


def test_tables_refuses_stack_without_a_simulated_column(capsys):
    refused(capsys, ["tables", "--sim-lt-mode", "none", "--stack", "linux", "--json"], "--stack", "--sim-lt-mode none")
    refused(capsys, ["tables", "--sim-lt-mode", "none", "--stack", "x"], "--stack must be one of")
    code, out, _ = run(capsys, "tables", "--sim-lt-mode", "none", "--json")
    assert code == 0 and json.loads(out)["tables"]


# ---------------------------------------------------------------------------
# 5. Early Retransmit has no effect under RACK-TLP (the linux profile's loss detection)


def test_simulator_refuses_early_retransmit_under_rack_tlp():
    import numpy as np

    from latency_model.sim import SimConfig, run_many, run_transfer

    er = apply_variant(TcpParams(p=0.1, w0=2), "er")
    linux = SimConfig.profile("linux")
    children = np.random.SeedSequence(1).spawn(3)
    with pytest.raises(ValueError, match=r"early_retransmit \(variant er\) has no effect under RACK-TLP"):
        run_transfer(er, size_packets=5, config=linux, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="rack_tlp"):
        run_many(er, 5 * 500, children, linux)
    with pytest.raises(ValueError, match="early_retransmit"):
        run_many(er, 5 * 500, children, SimConfig(sender="sack", rack_tlp=True), engine="python")
    # without RACK-TLP Early Retransmit runs (and changes the answer); with it, NewReno runs
    no_rack = SimConfig.profile("linux", rack_tlp=False)
    assert run_many(er, 5 * 500, children, no_rack).shape[0] == 3
    assert run_many(apply_variant(er, "newreno"), 5 * 500, children, linux).shape[0] == 3
    assert run_transfer(er, size_packets=3, config=SimConfig(), drops=[0]).completion_s > 0


def test_packet_model_refuses_early_retransmit_under_rack_tlp():
    from latency_model.model import packet as PM

    er = apply_variant(TcpParams(p=0.1, w0=2), "er")
    path = PM.PathConfig(sender="sack", rack_tlp=True)
    with pytest.raises(ValueError, match="early_retransmit .*RACK-TLP"):
        PM.expected_latency(er, size_packets=[2], path=path)
    with pytest.raises(ValueError, match="early_retransmit .*RACK-TLP"):
        PM.scripted_latency(er, size_bytes=1000, drops=[0], path=path)
    assert PM.scripted_latency(er, size_bytes=1000, drops=[0], path=PM.PathConfig(sender="sack")) > 0


@pytest.mark.parametrize("argv", [
    ["simulate", "--size-packets", "2,3", "--runs", "20", "--stack", "linux", "--w0", "2", "--variant", "er"],
    ["simulate", "--size-packets", "2", "--runs", "20", "--sender", "sack", "--rack-tlp", "--variant", "er"],
    ["latency", "--model", "packet", "--stack", "linux", "--w0", "2", "--size-packets", "2", "--variant", "er"],
])
def test_cli_refuses_early_retransmit_under_rack_tlp(capsys, argv):
    refused(capsys, argv, "variant er", "RACK-TLP", "--no-rack-tlp")


def test_cli_runs_early_retransmit_without_rack_tlp(capsys):
    code, out, err = run(capsys, "simulate", "--size-packets", "2,3", "--runs", "20", "--stack", "linux", "--w0", "2",
                         "--variant", "er", "--no-rack-tlp", "--json")
    assert code == 0, err
    json.loads(out)


def test_sweep_refuses_early_retransmit_under_rack_tlp(capsys, tmp_path):
    refused(capsys, ["sweep", "--param", "size-packets=2", "--param", "variant=newreno,er", "--stack", "linux",
                     "--what", "simulation", "--runs", "5", "--jobs", "1", "--quiet", "--out", str(tmp_path / "s.csv")],
            "variant er", "RACK-TLP")
    # refused when the simulator reaches the er cells: the sweep's plan (studies/sweep/plan.py)
    # does not ask the simulator's setup check of each resolved point yet


# ---------------------------------------------------------------------------
# the sweep asks the registry: fluid refuses er and unread rule parameters, PFTK a W0 axis


@pytest.mark.parametrize("params, needle", [
    (["variant=newreno,er", "model=fluid"], "early_retransmit"),
    (["rule-param.abc_l=2", "model=fluid"], "rule_param.abc_l"),
    (["w0=2,4", "model=fluid,pftk"], "w0 is not read by model pftk"),
])
def test_sweep_refuses_what_a_model_does_not_read(capsys, tmp_path, params, needle):
    argv = ["sweep", "--param", "size-packets=2,3"]
    for item in params:
        argv += ["--param", item]
    refused(capsys, argv + ["--what", "model", "--jobs", "1", "--quiet", "--out", str(tmp_path / "s.csv")], needle)


def test_sweep_runs_a_w0_axis_for_the_models_that_read_it(capsys, tmp_path):
    code, _, err = run(capsys, "sweep", "--param", "size-packets=2", "--param", "w0=2,4", "--param", "model=fluid,csa",
                       "--what", "model", "--jobs", "1", "--quiet", "--out", str(tmp_path / "s.csv"))
    assert code == 0, err


# ---------------------------------------------------------------------------
# 16 and 9: the accuracy map refuses flags none of its models read


@pytest.mark.parametrize("flags, needles", [
    (["--models", "fluid", "--packet-max-packets", "5"], ["--packet-max-packets", "--models fluid"]),
    (["--models", "fluid,csa", "--packet-max-packets", "0"], ["--packet-max-packets"]),
    (["--models", "fluid,pftk", "--w0", "4"], ["--w0", "pftk"]),
    (["--w0", "2", "4"], ["--w0", "pftk", "--models"]),
    (["--models", "fluid", "--variants", "er"], ["fluid model does not read early_retransmit"]),
    (["--models", "packet", "--variants", "er", "--stack", "linux"], ["--variants er", "RACK-TLP"]),
])
def test_accuracy_refuses_before_any_work(capsys, tmp_path, flags, needles):
    refused(capsys, ["accuracy", "--sizes", "2", "--p", "0.1", "--b", "1", "--runs", "20", "--jobs", "1", "--quiet",
                     "--cache", str(tmp_path / "cache"), *flags], *needles)
    assert not list((tmp_path / "cache").glob("*.csv"))


def test_accuracy_runs_with_the_flags_its_models_read(capsys, tmp_path):
    code, out, err = run(capsys, "accuracy", "--models", "packet,csa", "--sizes", "1,2", "--p", "0.1", "--b", "1",
                         "--variants", "newreno", "--w0", "2", "--runs", "20", "--packet-max-packets", "1",
                         "--jobs", "1", "--quiet", "--cache", str(tmp_path / "cache"), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert {r["model"] for r in result["rows"]} == {"packet", "csa"}
    assert [c["size_packets"] for c in result["not_computed"] if c["model"] == "packet"] == [2]
