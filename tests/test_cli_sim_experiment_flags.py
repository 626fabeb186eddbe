"""single-loss, trace, experiment and reproduce/validate/plot: flags that would have no effect
are refused (one line naming the flag, exit 2), list items are never dropped, output paths are
checked before any work and errors name the flag, not a field or a temporary file."""

import json
import os

import pytest

from latency_model.cli import main
from _cli import refused, run


@pytest.fixture
def afile(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    return f


# ---------------------------------------------------------------------------
# 13: scripted-loss commands refuse the loss and seed flags they do not read


@pytest.mark.parametrize("extra,flag", [
    (["--p", "0.5"], "--p"), (["--p", "0"], "--p"), (["--p-ack", "0.5"], "--p-ack"),
])
def test_single_loss_refuses_loss_flags(capsys, extra, flag):
    line = refused(capsys, ["single-loss", "--size-packets", "12", *extra], flag + ":")
    assert "single-loss" in line


def test_single_loss_still_runs(capsys):
    code, out, _ = run(capsys, "single-loss", "--size-packets", "12", "--json")
    assert code == 0 and json.loads(out)["results"][0]["pattern"] == "TTFFFFFFFTTT"
    code, out, _ = run(capsys, "single-loss", "--size-packets", "12", "--variant", "lt", "--json")
    assert code == 0 and json.loads(out)["results"][0]["pattern"] != "TTFFFFFFFTTT"  # --variant is read


@pytest.mark.parametrize("extra,flag", [
    (["--p", "0.5"], "--p"), (["--seed", "7"], "--seed"), (["--run", "3"], "--run"),
    (["--p-ack", "0.5"], "--p-ack"),
])
def test_trace_drop_refuses_random_loss_flags(capsys, tmp_path, extra, flag):
    out = tmp_path / "t.csv"
    refused(capsys, ["trace", "--size-packets", "6", "--drop", "1", *extra, "--out", out], flag + ":", "--drop")
    assert not out.exists()


def test_trace_seed_without_random_loss_refused(capsys):
    refused(capsys, ["trace", "--size-packets", "6", "--p", "0", "--seed", "7"], "--seed:", "--p 0")


def test_trace_random_and_scripted_still_run(capsys):
    code, a, _ = run(capsys, "trace", "--size-packets", "6", "--drop", "1", "--json")
    assert code == 0 and json.loads(a)["drops"] == [1]
    code, b, _ = run(capsys, "trace", "--size-packets", "20", "--p", "0.3", "--seed", "7", "--json")
    code2, c, _ = run(capsys, "trace", "--size-packets", "20", "--p", "0.3", "--seed", "8", "--json")
    assert code == code2 == 0 and json.loads(b)["seed"] == 7 and b != c


@pytest.mark.parametrize("extra,flag", [
    (["--p", "0.5"], "--p"), (["--seed", "7"], "--seed"), (["--run", "3"], "--run"),
    (["--p-ack", "0.5"], "--p-ack"), (["--queue-packets", "3"], "--queue-packets"),
    (["--variant", "lt"], "--variant"), (["--dup-t", "5"], "--dup-t"), (["--dup-lt", "1"], "--dup-lt"),
])
def test_rule_trace_refuses_flags_a_loss_free_trace_does_not_read(capsys, extra, flag):
    refused(capsys, ["trace", "--rtts", "5", "--json", *extra], flag + ":", "--rtts")


def test_rule_trace_still_runs(capsys):
    code, out, _ = run(capsys, "trace", "--rtts", "5", "--json")
    d = json.loads(out)
    assert code == 0 and d["simulated"]["cwnd"] == [1, 2, 4, 8, 16]
    code, out, _ = run(capsys, "trace", "--rtts", "3")
    assert code == 0 and "W_SS none, M none" in out
    code, out, _ = run(capsys, "trace", "--rtts", "3", "--pipe-packets", "32", "--queue-packets", "8", "--json")
    assert code == 0 and json.loads(out)["pipe"]["queue_packets"] == 8


# ---------------------------------------------------------------------------
# 20: output paths are checked before any work, errors name the flag


@pytest.mark.parametrize("cmd", [["trace", "--size-packets", "3"], ["trace", "--rtts", "3"]])
def test_trace_out_checked_first(capsys, tmp_path, afile, cmd):
    line = refused(capsys, [*cmd, "--out", tmp_path], "--out", "is a directory")
    assert ".tmp" not in line
    refused(capsys, [*cmd, "--out", ""], "--out must name a file")
    refused(capsys, [*cmd, "--out", afile / "x.csv"], "--out", "is a file, not a directory")
    refused(capsys, [*cmd, "--plot", afile / "x.png"], "--plot", "is a file, not a directory")
    refused(capsys, [*cmd, "--plot", ""], "--plot")
    assert os.listdir(tmp_path) == ["afile"]


def test_trace_out_and_plot_write(capsys, tmp_path):
    out = tmp_path / "sub" / "t.csv"
    code, text, _ = run(capsys, "trace", "--size-packets", "3", "--out", out)
    assert code == 0 and out.read_text().startswith("time_s,event") and "wrote" in text


def test_plot_out_checked_first(capsys, tmp_path, afile):
    csv = tmp_path / "fig.csv"
    csv.write_text("a,b\n1,2\n")
    refused(capsys, ["plot", csv, "--out", ""], "--out must name a file")
    refused(capsys, ["plot", csv, "--out", tmp_path], "--out", "is a directory")
    refused(capsys, ["plot", csv, "--out", afile / "x"], "--out", "is a file, not a directory")


@pytest.mark.parametrize("cmd", [
    ["experiment", "btcp", "--scale", "0.01", "--seeds", "1", "--variants", "newreno"],
    ["experiment", "smoothtcp", "--scale", "0.01", "--rules", "standard"],
    ["experiment", "modern", "--quick", "--size-packets", "2", "--runs", "2", "--variants", "newreno",
     "--iw", "2", "--p", "0.1"],
])
def test_experiment_out_checked_before_the_run(capsys, afile, cmd):
    refused(capsys, [*cmd, "--out", afile / "sub"], "--out", "is a file, not a directory")
    refused(capsys, [*cmd, "--out", afile], "--out must be a directory")
    refused(capsys, [*cmd, "--out", ""], "--out must name a directory")
    if os.geteuid() != 0:
        refused(capsys, [*cmd, "--out", "/proc/sys"], "--out")


@pytest.mark.parametrize("cmd", ["reproduce", "validate"])
def test_reproduce_validate_out_and_jobs(capsys, afile, cmd):
    refused(capsys, [cmd, "--out", afile], "--out", "not a directory")
    refused(capsys, [cmd, "--quick", "--out", afile / "sub"], "--out", "is a file, not a directory")
    refused(capsys, [cmd, "--quick", "--jobs", "100000"], "--jobs must be an integer in [1, ")
    refused(capsys, [cmd, "--quick", "--jobs", "0"], "--jobs must be an integer in [1, ")


# ---------------------------------------------------------------------------
# 19: empty list items are refused, naming the flag


@pytest.mark.parametrize("argv,flag", [
    (["experiment", "modern", "--quick", "--iw", "2,,10"], "--iw"),
    (["experiment", "modern", "--quick", "--p", "0.1,,0.05"], "--p"),
    (["experiment", "modern", "--quick", "--variants", "newreno,,lt"], "--variants"),
    (["experiment", "btcp", "--variants", "newreno,,btcp4"], "--variants"),
    (["experiment", "ngwa", "--variants", "newreno,"], "--variants"),
    (["experiment", "smoothtcp", "--rules", ",standard"], "--rules"),
    (["experiment", "ass", "--queues", "5,,6"], "--queues"),
    (["experiment", "ass", "--algorithms", "1,"], "--algorithms"),
    (["experiment", "ass", "--iw", " , "], "--iw"),
])
def test_empty_list_items_refused(capsys, argv, flag):
    refused(capsys, argv, flag + " must ")


# ---------------------------------------------------------------------------
# 15: experiment flags that no run reads


@pytest.mark.parametrize("argv,flag", [
    (["experiment", "smoothtcp", "--scale", "0.01", "--rules", "standard", "--kappa", "0.01"], "--kappa"),
    (["experiment", "smoothtcp", "--scale", "0.01", "--rules", "standard", "--ss-signal", "all"], "--ss-signal"),
    (["experiment", "smoothtcp", "--scale", "0.01", "--rules", "smooth-start", "--ss-signal", "all"],
     "--ss-signal"),
    (["experiment", "ngwa", "--scale", "0.01", "--rounds", "1", "--variants", "newreno", "--alpha", "0.9"],
     "--alpha"),
    (["experiment", "ngwa", "--scale", "0.01", "--rounds", "1", "--variants", "newreno", "--source-on-s", "5"],
     "--source-on-s"),
    (["experiment", "ngwa", "--scale", "0.01", "--rounds", "1", "--sources", "0", "--source-off-s", "5"],
     "--source-off-s"),
    (["experiment", "ass", "--scale", "0.01", "--algorithms", "1", "--iw", "1", "--decrease", "standard"],
     "--decrease"),
    (["experiment", "ass", "--scale", "0.01", "--no-reverse-queue", "--reverse-queue-packets", "2"],
     "--reverse-queue-packets"),
])
def test_experiment_flags_no_run_reads_refused(capsys, tmp_path, argv, flag):
    out = tmp_path / "out"
    refused(capsys, [*argv, "--out", out], flag)
    assert not out.exists()


@pytest.mark.parametrize("argv", [
    ["experiment", "smoothtcp", "--scale", "0.01", "--rules", "smoothtcp", "--kappa", "0.01", "--ss-signal", "all"],
    ["experiment", "ngwa", "--scale", "0.01", "--rounds", "1", "--variants", "mode2", "--alpha", "0.9",
     "--source-on-s", "2", "--source-off-s", "1"],
    ["experiment", "ass", "--scale", "0.01", "--algorithms", "2", "--iw", "1", "--queues", "5",
     "--bottlenecks-mbps", "0.3", "--decrease", "standard", "--reverse-queue-packets", "2"],
])
def test_experiment_flags_that_apply_still_run(capsys, argv):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    ex = json.loads(out)["experiment"]
    if "kappa" in ex:
        assert ex["kappa"] == 0.01 and ex["ss_signal"] == "all"
    if "alpha" in ex:
        assert ex["alpha"] == 0.9 and ex["source_on_s"] == 2 and ex["source_off_s"] == 1
    if "decrease" in ex:
        assert ex["decrease"] == "standard" and ex["reverse_queue_packets"] == 2


# ---------------------------------------------------------------------------
# 23: experiment errors name the flag, not the field


@pytest.mark.parametrize("argv,start", [
    (["experiment", "btcp", "--scale", "0"], "--scale must be in (0, 10]"),
    (["experiment", "btcp", "--flows-per-node", "0"], "--flows-per-node must"),
    (["experiment", "btcp", "--access-queue-packets", "-1"], "--access-queue-packets must"),
    (["experiment", "ngwa", "--source-off-s", "-1"], "--source-off-s must be >= 0"),
    (["experiment", "ngwa", "--queue-bytes", "1"], "--queue-bytes must"),
    (["experiment", "ngwa", "--w-max-bytes", "0"], "--w-max-bytes must"),
    (["experiment", "ngwa", "--bottleneck-rate-bps", "0"], "--bottleneck-rate-bps must"),
    (["experiment", "ngwa", "--rounds", "0"], "--rounds must"),
])
def test_experiment_errors_name_the_flag(capsys, argv, start):
    line = refused(capsys, argv)
    assert line.startswith("latency-model: error: " + start), line


@pytest.mark.parametrize("argv,flag", [
    (["experiment", "ass", "--iw", "x"], "--iw"),
    (["experiment", "ass", "--scale", "0.01", "--jobs", "100000"], "--jobs"),
    (["experiment", "modern", "--quick", "--iw", "2.5"], "--iw"),
])
def test_experiment_out_not_created_for_a_refused_command(capsys, tmp_path, argv, flag):
    out = tmp_path / "out"
    refused(capsys, [*argv, "--out", out], flag)
    assert not out.exists()


@pytest.mark.parametrize("flags, needle", [
    (["--initial-rto-s", "0.05"], "the RTO (--initial-rto-s 0.05, --min-rto-s 1) expired"),
    (["--rto-rule", "paper", "--rto", "0.01"], "the paper's fixed RTO (0.01 s: --rto"),
])
def test_trace_rtts_timer_shorter_than_the_round_trip_names_the_flags(capsys, flags, needle):
    # The message named an internal function (rtt_rounds) instead of the timer flags.
    from latency_model.cli import main

    assert main(["trace", "--rtts", "4", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and "rtt_rounds" not in err
