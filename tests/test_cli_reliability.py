"""Issue 20: no traceback, bounded work, no orphaned workers, outputs people can share.

The flag-by-flag fuzz is in ``test_cli_fuzz.py``, orphaned workers in
``test_sweep_orphans.py``, file modes in ``test_output_mode.py``; here: file-system errors
and the last-resort handler, refusals of what cannot fit in memory (peak memory of the
refusing process), and the specific messages the issue asked for.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from latency_model.cli import build_parser, main
from latency_model.cli.common import check_budget
from _cli import one_error_line, run


# ---------------------------------------------------------------------------
# 1. File-system errors and the last resort


def test_tables_out_naming_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    code, _, err = run(capsys, "tables", "--sim-lt-mode", "none", "--out", str(tmp_path / "f"))
    assert code == 2 and "--out" in one_error_line(err) and "not a directory" in err


@pytest.mark.parametrize("out,reason", [("f/x.csv", "is a file, not a directory"), ("", "must name a file"),
                                        ("dir", "is a directory")])
def test_sweep_out_that_cannot_be_written_is_one_line_before_any_work(tmp_path, capsys, out, reason):
    (tmp_path / "f").write_text("")
    (tmp_path / "dir").mkdir()
    path = str(tmp_path / out) if out else ""
    code, _, err = run(capsys, "sweep", "--param", "size-packets=1:3", "--out", path)
    assert code == 2 and "--out" in one_error_line(err) and reason in err, err


def test_an_os_error_no_command_reports_is_one_line_naming_the_path(capsys, monkeypatch):
    from latency_model.cli import model

    def broken(args):
        raise PermissionError(13, "Permission denied", "/some/where.csv")

    monkeypatch.setattr(model, "cmd_rules", broken)
    code, _, err = run(capsys, "rules")
    assert code == 2 and one_error_line(err) == "latency-model: error: /some/where.csv: Permission denied"


def test_a_memory_error_is_one_line(capsys, monkeypatch):
    from latency_model.cli import model

    def broken(args):
        raise MemoryError("Unable to allocate 858 GiB for an array")

    monkeypatch.setattr(model, "cmd_rules", broken)
    code, _, err = run(capsys, "rules")
    assert code == 2 and "out of memory: Unable to allocate 858 GiB" in one_error_line(err)


def test_a_bug_is_one_line_with_exit_1_unless_the_traceback_is_asked_for(capsys, monkeypatch):
    from latency_model.cli import model

    def broken(args):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(model, "cmd_rules", broken)
    monkeypatch.delenv("LATENCY_MODEL_TRACEBACK", raising=False)
    code, _, err = run(capsys, "rules")
    assert code == 1 and "internal error: ZeroDivisionError: boom" in one_error_line(err)
    monkeypatch.setenv("LATENCY_MODEL_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        main(["rules"])


# ---------------------------------------------------------------------------
# 2. Bounded work: refused before any allocation, with the estimate and the limit

PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(p.returncode); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.stderr.write(p.stderr)\n"
)


@pytest.mark.parametrize("argv,flag", [
    (["sweep", "--param", "size-packets=1:1e12", "--out", "{tmp}/x.csv"], "--param"),
    (["sweep", "--param", "p=0.001:0.999:0.001", "--param", "size-packets=1:1000000", "--out", "{tmp}/x.csv"],
     "--param"),
    (["sweep", "--param", "size-packets=1,2", "--what", "simulation", "--runs", "1e9", "--out", "{tmp}/x.csv"],
     "--runs"),
    (["latency", "--size-packets", "1:1000000"], "--size-packets"),
    (["latency", "--size-packets", "1000000"], "--size-packets"),
    (["latency", "--p", "0.999999", "--size-packets", "30"], "--size-packets"),
    (["simulate", "--runs", "100000000", "--size-packets", "8"], "--runs"),
    (["single-loss", "--size-packets", "1e12"], "--size-packets"),
])
def test_what_cannot_fit_in_memory_is_refused_with_the_estimate_and_the_limit_under_200_mb(tmp_path, argv, flag):
    env = {**os.environ, "LATENCY_MODEL_MEMORY_LIMIT": "8G"}  # the same limit on every machine
    cmd = [sys.executable, "-m", "latency_model.cli", *[a.format(tmp=tmp_path) for a in argv]]
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS, *cmd], capture_output=True, text=True, env=env,
                          timeout=120)
    code, peak_kb = (int(x) for x in proc.stdout.split())
    err = proc.stderr
    assert code == 2, err
    line = one_error_line(err)
    assert flag in line and "more than the limit of 8 GiB" in line and "LATENCY_MODEL_MEMORY_LIMIT=8G" in line
    assert peak_kb < 200 * 1024, peak_kb
    assert not (tmp_path / "x.csv").exists()


def test_a_range_is_counted_before_it_is_built(capsys):
    code, _, err = run(capsys, "latency", "--size-packets", "1:1e300")
    assert code == 2 and "gives about 1e+300 values, more than the 1,000,000" in one_error_line(err)


def test_long_work_gets_one_warning_line(capsys):
    check_budget("--runs 10,000,000 x 1 size", 1e6, 3600.0)
    err = capsys.readouterr().err
    assert err == "latency-model: warning: --runs 10,000,000 x 1 size may take about 60 min (a rough estimate)\n"
    check_budget("small", 1e6, 1.0)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv,message", [
    (["simulate", "--size-packets", "8", "--workers", "100000"], "--jobs must be an integer in [1, "),
    (["sweep", "--param", "p=0.1", "--jobs", "100000", "--out", "x.csv"], "--jobs must be an integer in [1, "),
])
def test_worker_counts_are_bounded_by_the_cpus(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in one_error_line(err)


# ---------------------------------------------------------------------------
# 5. Silently accepted or badly reported input


@pytest.mark.parametrize("argv,message", [
    (["thresholds", "--rule", "generalized", "--rule-param", "beta=4", "--rule-param", "beta=3"],
     "--rule-param 'beta' is given twice ('beta=4' and 'beta=3'); give each key once"),
    (["thresholds", "--rule", "generalized", "--rule-param", "beta=-1"], "--rule-param beta must be"),
    (["thresholds", "--rule-param", "nope=1"], "--rule-param: rule 'standard' has no parameter 'nope'"),
    (["thresholds", "--p", "1e-400"], "argument --p: '1e-400' underflows to 0"),
    (["sweep", "--param", "p=1e-400", "--out", "x.csv"], "p '1e-400' underflows to 0"),
    (["sweep", "--param", "p=0.1", "--out", ""], "--out must name a file, got ''"),
    (["simulate", "--size-packets", "8", "--engine", "x"], "--engine must be one of"),
    (["sweep", "--param", "p=0.1", "--engine", "x", "--out", "x.csv"], "--engine must be one of"),
    (["sweep", "--param", "p=0.1", "--flush-every", "-1", "--out", "x.csv"], "--flush-every-s must be"),
    # dask itself judges the address; without the [dask] extra (CI) the flag is refused first
    (["sweep", "--param", "p=0.1", "--scheduler", "x", "--out", "x.csv"],
     "--scheduler 'x'" if importlib.util.find_spec("distributed") else "--scheduler and --dask-local need dask"),
    (["sweep", "--grid", "/nonexistent.toml", "--out", "x.csv"], "--grid /nonexistent.toml: No such file"),
    (["sweep", "--param", "p=0.1", "--what", "model", "--link-rate-bps", "-1", "--out", "x.csv"],
     "--link-rate-bps must be"),
    (["tables", "--sim-lt-mode", "none", "--stack", "x"], "--stack must be one of"),
])
def test_bad_input_is_refused_naming_the_flag(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in one_error_line(err), err


def test_a_huge_argument_is_not_echoed_whole(capsys):
    code, _, err = run(capsys, "latency", "--size-packets", "x" * 100_000)
    line = one_error_line(err)
    assert code == 2 and len(line) < 300 and "(100,000 characters)" in line


def test_text_tables_never_fuse_columns(capsys):
    # The widest values the parameters allow (RTT an hour, the 16-bit MSS, the largest
    # window): every number keeps its column.
    code, out, _ = run(capsys, "latency", "--rtt", "3600", "--size-packets", "1:3,300")
    lines = out.splitlines()
    assert code == 0 and all(len(line.split()) == 9 for line in lines[1:]), out
    code, out, _ = run(capsys, "thresholds", "--mss", "65535", "--rwnd", "16384", "--wss", "16384")
    assert code == 0 and all(len(line.split()) == 5 for line in out.splitlines()[2:]), out


@pytest.mark.parametrize("command", ["simulate", "trace"])
def test_help_shows_no_size_default_that_does_not_apply(command):
    text = build_parser([command]).commands.choices[command].format_help()
    assert "(1:30)" not in text
    assert "(1:30)" in build_parser(["latency"]).commands.choices["latency"].format_help()


def test_sweep_with_an_interval_shorter_than_a_save_still_completes(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", "--param", "p=0.05,0.1", "--param", "size-packets=1:3", "--flush-every", "0",
                 "--out", str(out), "--quiet"]) == 0
    meta = json.loads(Path(str(out) + ".json").read_text())
    assert meta["status"] == "complete" and meta["rows_done"] == 6


def test_a_sweeps_cost_comes_from_its_grid_before_any_point_is_planned():
    import time

    from latency_model.studies.sweep import SweepSpec, estimate_sweep, grid_from_items

    t0 = time.perf_counter()
    cost = estimate_sweep(SweepSpec(grid=grid_from_items(["p=0.0001:0.1:0.0001", "size-packets=1:1000"])))
    assert time.perf_counter() - t0 < 10  # planning these million points takes minutes
    assert cost.n_rows == 10**6 and cost.cpu_seconds > 60
    assert cost.check(2).startswith("a sweep of 1,000,000 rows on 2 workers may take about")
    small = estimate_sweep(SweepSpec(grid=grid_from_items(["p=0.1", "size-packets=1:3"])))
    assert small.n_rows == 3 and small.check(1) is None
