"""Shared CLI flags (cli/common.py) refuse an explicit flag that would have no effect with
the rest of the command line: one line on stderr naming the flag as typed and why, exit
status 2; the valid combination still runs."""

import json

import pytest
from _cli import refused, run


SIM = ["simulate", "--size-packets", "3", "--runs", "20", "--seed", "1"]


def runs(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return out


# --iw and --w0 (params_from_args) -----------------------------------------------------


@pytest.mark.parametrize("command", [["latency", "--size-packets", "1,3"], SIM])
def test_iw_with_w0_is_refused(capsys, command):
    err = refused(capsys, [*command, "--iw", "rfc3390", "--w0", "17"], "--iw", "--w0")
    assert "not both" in err


def test_iw_or_w0_alone_still_runs(capsys):
    a = runs(capsys, ["latency", "--size-packets", "1,3", "--iw", "rfc3390", "--json"])
    b = runs(capsys, ["latency", "--size-packets", "1,3", "--w0", "17", "--json"])
    assert json.loads(a)["params"]["w0"] != json.loads(b)["params"]["w0"]


# Messages name the flags (flag_message) --------------------------------------------------


def test_comparison_bound_names_its_flag(capsys):
    err = refused(capsys, ["thresholds", "--w0", "100"], "--w0", "--rwnd")
    assert "<= --rwnd (30 packets)" in err


def test_flag_message_leaves_short_fields_in_prose():
    from latency_model.cli.common import flag_message

    assert flag_message("p must be in [0, 1), got 1") == "--p must be in [0, 1), got 1"
    assert flag_message("w0 must be <= rwnd (30 packets), got 40") == \
        "--w0 must be <= --rwnd (30 packets), got 40"


# --rto-rule paper and RFC 6298's timer flags (config_from_args) ------------------------


@pytest.mark.parametrize("flag,value", [("--min-rto-s", "3"), ("--initial-rto-s", "2"), ("--max-rto-s", "9"),
                                        ("--clock-granularity-s", "0.5"), ("--rtt-sampling", "timestamps")])
def test_paper_timer_refuses_rfc6298_flags(capsys, flag, value):
    err = refused(capsys, [*SIM, "--rto-rule", "paper", flag, value], flag, "--rto-rule paper")
    assert err.count(flag) >= 1


@pytest.mark.parametrize("command", [["single-loss", "--size-packets", "5"], ["trace", "--size-packets", "5"]])
def test_paper_timer_refusal_covers_other_commands(capsys, command):
    refused(capsys, [*command, "--rto-rule", "paper", "--max-rto-s", "9"], "--max-rto-s", "--rto-rule paper")


def test_paper_timer_refusal_names_every_flag(capsys):
    refused(capsys, [*SIM, "--rto-rule", "paper", "--min-rto-s", "3", "--max-rto-s", "9"],
            "--min-rto-s", "--max-rto-s")


def test_paper_timer_runs_with_its_own_flags(capsys):
    runs(capsys, [*SIM, "--rto-rule", "paper"])
    runs(capsys, [*SIM, "--rto-rule", "paper", "--rto", "2"])
    runs(capsys, [*SIM, "--rto-rule", "paper", "--stack", "linux"])  # the profile's bounds: not typed
    runs(capsys, [*SIM, "--min-rto-s", "3"])  # RFC 6298's timer reads them
    # RACK-TLP reads RTT samples (min_RTT, PTO) even under the paper timer
    runs(capsys, [*SIM, "--rto-rule", "paper", "--recovery", "sack-rack-tlp", "--rtt-sampling", "timestamps"])


# --rtt with --delay-s ---------------------------------------------------------------


def test_rtt_with_a_different_delay_is_refused(capsys):
    err = refused(capsys, [*SIM, "--delay-s", "0.05", "--rtt", "0.3"], "--rtt", "--delay-s")
    assert "round trip comes from --delay-s" in err


def test_rtt_with_delay_runs_when_consistent_or_read(capsys):
    a = json.loads(runs(capsys, [*SIM, "--delay-s", "0.05", "--rtt", "0.1", "--json"]))
    b = json.loads(runs(capsys, [*SIM, "--rtt", "0.1", "--json"]))
    assert a["results"] == b["results"]
    runs(capsys, [*SIM, "--delay-s", "0.05"])
    runs(capsys, [*SIM, "--rtt", "0.3"])
    # the paper timer without --rto reads --rtt: RTO = max(1 s, 4 RTT)
    runs(capsys, [*SIM, "--delay-s", "0.05", "--rtt", "0.3", "--rto-rule", "paper"])


# --lt-mode without Limited Transmit ---------------------------------------------------


@pytest.mark.parametrize("variant", [[], ["--variant", "newreno"], ["--variant", "er"]])
def test_lt_mode_without_limited_transmit_is_refused(capsys, variant):
    refused(capsys, [*SIM, *variant, "--lt-mode", "paper"], "--lt-mode", "--variant")


def test_lt_mode_with_limited_transmit_runs(capsys):
    runs(capsys, [*SIM, "--variant", "lt", "--lt-mode", "paper"])
    runs(capsys, [*SIM, "--variant", "newreno", "--dup-lt", "1", "--lt-mode", "paper"])
    runs(capsys, [*SIM])  # the parser's default is not a given --lt-mode


# Delayed-ACK flags with --b 1 ---------------------------------------------------------


@pytest.mark.parametrize("flags,shown", [(["--delack-timeout-s", "0.1"], "--delack-timeout-s"),
                                         (["--quick-acks", "2"], "--quick-acks"),
                                         (["--no-fin"], "--no-fin"), (["--fin"], "--fin")])
def test_delack_flags_with_b1_are_refused(capsys, flags, shown):
    refused(capsys, [*SIM, "--b", "1", *flags], shown, "--b 1")
    refused(capsys, [*SIM, *flags], shown, "--b 1")  # b = 1 is the default


def test_delack_flags_with_b2_run(capsys):
    runs(capsys, [*SIM, "--b", "2", "--delack-timeout-s", "0.1", "--quick-acks", "2", "--no-fin"])
    # ns-3's sender reads --fin (FIN_WAIT_1) whatever b
    runs(capsys, [*SIM, "--stack", "ns3", "--no-fin"])


# ns-3's sender: messages name the flags typed --------------------------------------------


def test_ns3_refusals_name_the_typed_flags(capsys):
    err = refused(capsys, [*SIM, "--stack", "ns3", "--rto-rule", "paper"], "--rto-rule paper", "--stack ns3")
    assert not err.startswith("latency-model: error: --sender") and "rto_rule" not in err
    err = refused(capsys, [*SIM, "--stack", "ns3", "--rtt-sampling", "karn"], "--rtt-sampling karn", "--stack ns3")
    assert "'ns3' goes with" not in err
    refused(capsys, [*SIM, "--sender", "ns3", "--variant", "lt", "--lt-mode", "paper"], "--lt-mode paper",
            "--sender ns3")
    refused(capsys, [*SIM, "--rtt-sampling", "ns3"], "--rtt-sampling ns3")
    runs(capsys, [*SIM, "--stack", "ns3"])


# --b under Linux's delayed-ACK rule (linux_delack) -----------------------------------------


@pytest.mark.parametrize("command", [SIM, ["latency", "--model", "packet", "--size-packets", "3"]])
@pytest.mark.parametrize("b", ["1", "2"])
def test_b_under_the_linux_receiver_is_refused(capsys, command, b):
    # the linux profile's receiver ACKs as Linux does whatever b: an explicit --b changes nothing
    err = refused(capsys, [*command, "--stack", "linux", "--b", b], "--b")
    assert "change nothing" in err


def test_b_still_reaches_the_other_stacks_and_models(capsys):
    sim = [json.loads(runs(capsys, [*SIM, "--stack", "rfc", "--b", b, "--json"]))["results"][0]["mean_latency_s"]
           for b in ("1", "2")]
    assert sim[0] != sim[1]  # read: the delayed ACK moves the mean
    runs(capsys, [*SIM, "--stack", "linux"])  # not given: runs
    fluid = [json.loads(runs(capsys, ["latency", "--size-packets", "3", "--b", b, "--json"]))["results"][0]
             ["expected_latency_s"] for b in ("1", "2")]
    assert fluid[0] != fluid[1]
