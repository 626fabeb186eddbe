"""`latency-model sweep`: the issue's contract, bad grids, executors, progress, Ctrl-C and resume."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from latency_model import TcpParams, apply_variant
from latency_model.cli import main
from latency_model.model.recursion import expected_latency

ROOT = Path(__file__).resolve().parents[1]


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _contract(tmp_path, capsys, n):
    out = tmp_path / "sweep.csv"
    argv = ["sweep", "--param", "p=0.01,0.1", "--param", f"size-packets=1:{n}", "--param", "variant=newreno,lt",
            "--what", "model", "--out", str(out)]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out} ({4 * n} rows, {4 * n} grid points;")
    rows = _rows(out)
    assert len(rows) == 4 * n
    for col in ("p", "size_packets", "variant", "expected_latency_s", "latency_k0_s", "latency_k3_s",
                "y_to_bytes", "filesize_min_bytes", "source", "key"):
        assert col in rows[0]
    # grid order: p, then variant, sizes innermost
    assert [(r["p"], r["variant"], r["size_packets"]) for r in rows[:2]] == [("0.01", "newreno", "1"),
                                                                            ("0.01", "newreno", "2")]
    r = rows[n + n - 1]  # p = 0.01, lt, the largest size
    assert (r["p"], r["variant"], r["size_packets"]) == ("0.01", "lt", str(n))
    want = expected_latency(apply_variant(TcpParams(p=0.01), "lt"), size_bytes=[500.0 * n]).expected_latency_s[0]
    assert float(r["expected_latency_s"]) == want
    meta = json.loads(Path(str(out) + ".json").read_text())
    assert meta["grid"] == {"p": [0.01, 0.1], "variant": ["newreno", "lt"], "size_packets": list(range(1, n + 1))}
    assert meta["status"] == "complete" and meta["rows_done"] == 4 * n
    assert meta["command"][0] == "latency-model" and meta["settings"]["what"] == "model"
    assert {"python", "latency_model", "numpy", "scipy", "tqdm"} <= set(meta["versions"])


def test_issue_contract_command_small(tmp_path, capsys):
    _contract(tmp_path, capsys, 2)


@pytest.mark.slow
@pytest.mark.full_budget
def test_issue_contract_command(tmp_path, capsys):
    _contract(tmp_path, capsys, 20)  # the issue's exact command (about a minute here)


@pytest.mark.parametrize("argv,message", [
    (["--param", "bogus=1"], "unknown sweep parameter 'bogus'"),
    (["--param", "p=0.2:0.1"], "p range '0.2:0.1' is empty (b < a)"),
    (["--param", "size-packets=5:1"], "size-packets range '5:1' is empty (b < a)"),
    (["--param", "p"], "--param must be NAME=VALUES"),
    (["--param", "p=0.1,2"], "p must be in [0, 1), got 2 (at p=2)"),
    (["--param", "variant=reno"], "variant must be one of"),
    (["--param", "rule=btcp", "--param", "rule-param.beta=2"], "rule-param.beta is not a parameter of rule 'btcp'"),
    (["--param", "b=0"], "b must be an integer in [1, 2147483], got 0"),
    (["--param", "p=0.1", "--what", "simulation", "--runs", "0"], "--runs must be an integer >= 1, got 0"),
    (["--param", "p=0.1", "--jobs", "0"], "--jobs must be an integer in [1, "),
    (["--param", "rule=btcp", "--time-model", "fluid"], "time_model fluid needs a continuous fluid law"),
    ([], "give at least one --param"),
])
def test_bad_grids_exit_2_with_one_line_before_any_work(tmp_path, capsys, argv, message):
    out = tmp_path / "x.csv"
    assert main(["sweep", *argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("latency-model: error: " + message)
    assert "Traceback" not in err and not out.exists()


def test_parquet_without_pyarrow_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert main(["sweep", "--param", "p=0.1", "--out", str(tmp_path / "x.parquet")]) == 2
    err = capsys.readouterr().err
    assert err == ("latency-model: error: writing x.parquet needs pyarrow (pip install pyarrow), "
                   "or give a .csv file name\n")


def test_toml_grid_file_equals_the_flags(tmp_path, capsys):
    f = tmp_path / "grid.toml"
    f.write_text('what = "model"\n[params]\np = [0.05, 0.1]\n"size-packets" = "1"\n')
    assert main(["sweep", "--grid", str(f), "--out", str(tmp_path / "a.csv")]) == 0
    assert main(["sweep", "--param", "p=0.05,0.1", "--param", "size-packets=1",
                 "--out", str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


SIM = ["--param", "p=0.05,0.2", "--param", "variant=newreno,lt", "--param", "size-packets=1",
       "--what", "both", "--runs", "40", "--seed", "3", "--engine", "python", "--quiet"]


def test_jobs_1_and_jobs_2_write_identical_tables(tmp_path, capsys):
    assert main(["sweep", *SIM, "--jobs", "1", "--out", str(tmp_path / "one.csv")]) == 0
    assert main(["sweep", *SIM, "--jobs", "2", "--out", str(tmp_path / "two.csv")]) == 0
    assert (tmp_path / "one.csv").read_text() == (tmp_path / "two.csv").read_text()
    assert len(_rows(tmp_path / "one.csv")) == 8
    # rerun: everything is resumed, nothing recomputed
    assert main(["sweep", *SIM, "--out", str(tmp_path / "one.csv")]) == 0
    assert "8 resumed, 0 computed" in capsys.readouterr().out


def test_progress_bar_on_a_terminal_only(tmp_path, capsys, monkeypatch):
    argv = ["sweep", "--param", "w0=1,2", "--param", "size-packets=1", "--jobs", "1"]
    assert main([*argv, "--out", str(tmp_path / "a.csv")]) == 0
    assert capsys.readouterr().err == ""  # stderr is not a terminal here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main([*argv, "--out", str(tmp_path / "b.csv")]) == 0
    assert "2/2" in capsys.readouterr().err
    assert main([*argv, "--out", str(tmp_path / "c.csv"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_sigint_half_way_then_rerun_gives_exactly_the_serial_table(tmp_path, capsys):
    # 40 runs a point: enough work left after the second row that a loaded machine cannot
    # finish the sweep before the signal lands.
    grid = ["--param", "p=0.1", "--param", "size-packets=2:41", "--what", "simulation", "--runs", "40",
            "--seed", "9", "--engine", "python", "--jobs", "1", "--quiet"]
    out = tmp_path / "run.csv"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # In the full CI run (twice, not alone) the child ran to the end, status 0, despite the
    # signal. A child inherits an ignored SIGINT and Python then keeps it ignored, so give it
    # the default disposition; which earlier test could leave SIGINT ignored was not found
    # (no test's call changes the handler, checked with a hook over the whole suite).
    parent_sigint = signal.getsignal(signal.SIGINT)
    proc = subprocess.Popen([sys.executable, "-m", "latency_model.cli", "sweep", *grid, "--flush-every", "0",
                             "--out", str(out)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and len(_rows(out)) >= 2:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stderr, parent_sigint)
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert stderr.startswith("latency-model: interrupted: ") and "rerun the same command to resume" in stderr
    saved = _rows(out)
    assert 2 <= len(saved) < 40
    assert json.loads(Path(str(out) + ".json").read_text())["status"] == "interrupted"

    assert main(["sweep", *grid, "--out", str(out)]) == 0
    assert f"{len(saved)} resumed, {40 - len(saved)} computed" in capsys.readouterr().out
    assert main(["sweep", *grid, "--out", str(tmp_path / "serial.csv")]) == 0
    assert out.read_text() == (tmp_path / "serial.csv").read_text()
