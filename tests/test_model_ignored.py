"""Settings a model does not read are refused (one line, exit 2 on the command line; a
ValueError naming them in the API), never ignored; the combinations they do read still run."""

import json

import pytest

from latency_model.cli import main
from latency_model.growth import AssRule, SmoothStartRule, StandardRule
from latency_model.model import registry
from latency_model.model.recursion import check_supported as fluid_check_supported
from latency_model.params import TcpParams, apply_variant


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, argv, *needles):
    code, out, err = run(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert err.startswith("latency-model: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


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
])
def test_fluid_refuses_what_it_does_not_read(capsys, argv, needles):
    refused(capsys, argv, "fluid model does not read", *needles)


def test_fluid_runs_what_it_reads(capsys):
    for argv in (["latency", "--size-packets", "1,3", "--variant", "lt", "--json"],
                 ["latency", "--size-packets", "1,3", "--variant", "proposal", "--json"],
                 ["latency", "--size-packets", "3", "--rule", "ass", "--rule-param", "algorithm=3", "--json"],
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
                                           (["--rtt", "0.5"], "--rtt:"), (["--rto", "2"], "--rto:"),
                                           (["--p", "0.3", "--rtt", "0.5"], "--p and --rtt:")])
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
