"""One writer per output (latency_model.studies.lock): a second sweep, reproduce or
experiment on the same ``--out`` is refused with one line naming the holder's pid, never
two successful runs with one result lost; a lock whose holder died is taken over.

The holders are real processes: ``latency-model`` commands, and a small Python process that
takes the lock through the module and waits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import latency_model
from latency_model.studies import lock
from latency_model.studies.sweep import SweepSpec, grid_from_items, run_sweep

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock and /proc")

ROOT = Path(latency_model.__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}  # the processes run this copy of the package
CLI = [sys.executable, "-m", "latency_model.cli"]


def _cli(*argv, cwd):
    return subprocess.run([*CLI, *map(str, argv)], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300)


def _wait_for(path: Path, proc, timeout_s=120.0):
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _refused_naming(res, pid: int):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert f"is being written by another run (pid {pid}" in res.stderr and "--out" in res.stderr, res.stderr


@pytest.fixture
def holder(tmp_path):
    """A process holding the lock of a path until killed: ``start(path) -> Popen``."""
    procs = []

    def start(target: Path):
        code = ("import sys, time; from latency_model.studies import lock; "
                "lock.hold(sys.argv[1], 'test holder'); print('held', flush=True); time.sleep(600)")
        proc = subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE, text=True,
                                env=ENV, cwd=tmp_path)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


SWEEP = ["sweep", "--param", "p=0.01,0.05", "--param", "size-packets=1:3", "--jobs", 1]


def test_two_concurrent_sweeps_on_one_out_one_is_refused_and_the_other_complete(tmp_path):
    out = tmp_path / "s.csv"
    slow = [*CLI, "sweep", "--param", "p=0.01,0.02,0.05", "--param", "size-packets=1:40", "--what", "both",
            "--runs", "300", "--engine", "python", "--jobs", "1", "--quiet", "--out", str(out)]
    first = subprocess.Popen(slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=tmp_path)
    try:
        _wait_for(out.with_name("s.csv.lock"), first)
        second = _cli(*SWEEP, "--out", out, cwd=tmp_path)
        stdout, stderr = first.communicate(timeout=600)
    finally:
        first.kill()
    _refused_naming(second, first.pid)
    assert first.returncode == 0, stderr
    assert "240 rows" in stdout and "0 resumed, 240 computed" in stdout  # the first run's rows, all of them
    assert sum(1 for _ in out.open()) == 241
    assert not out.with_name("s.csv.lock").exists()  # released at the end


@pytest.mark.parametrize("argv", [
    ("sweep", *SWEEP[1:]),
    ("reproduce", "--quick", "--jobs", 1),
    ("validate", "--quick", "--jobs", 1),
    ("experiment", "btcp"),
], ids=["sweep", "reproduce", "validate", "experiment"])
def test_every_writer_is_refused_while_another_process_holds_its_out(tmp_path, holder, argv):
    target = tmp_path / ("s.csv" if argv[0] == "sweep" else "d")
    if argv[0] != "sweep":
        target.mkdir()
    proc = holder(target)
    t0 = time.monotonic()
    res = _cli(*argv, "--out", target, cwd=tmp_path)
    _refused_naming(res, proc.pid)
    assert time.monotonic() - t0 < 60  # refused before the work, not after it
    if argv[0] == "sweep":
        assert not target.exists()
    else:
        assert sorted(p.name for p in target.iterdir()) == [lock.DIR_LOCK]  # nothing written beside the lock


def test_a_lock_of_a_dead_process_is_taken_over(tmp_path, holder):
    out = tmp_path / "s.csv"
    proc = holder(out)
    proc.send_signal(signal.SIGKILL)  # dies holding it: the file stays, naming a dead pid
    proc.wait()
    assert str(proc.pid) in out.with_name("s.csv.lock").read_text()
    res = _cli(*SWEEP, "--out", out, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert not out.with_name("s.csv.lock").exists()


def test_a_sigkilled_sweep_with_workers_frees_its_out_at_once(tmp_path):
    out = tmp_path / "k.csv"
    cmd = [*CLI, "sweep", "--param", "p=0.05:0.3:0.05", "--param", "size-packets=20:60", "--what", "simulation",
           "--runs", "3000", "--engine", "python", "--jobs", "2", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, cwd=tmp_path)
    try:
        _wait_for(out.with_name("k.csv.lock"), proc)
        time.sleep(2.0)  # the two workers are forked and computing
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the forked workers closed their copy of the lock: it ended with the parent
    res = _cli(*SWEEP, "--out", tmp_path / "other.csv", cwd=tmp_path)  # (a sweep of its own runs meanwhile)
    assert res.returncode == 0, res.stderr
    lk = subprocess.run([sys.executable, "-c", "import sys; from latency_model.studies import lock; "
                         "lock.hold(sys.argv[1]); print('ok')", str(out)], capture_output=True, text=True, env=ENV)
    assert lk.stdout.strip() == "ok", lk.stderr


def test_the_api_refuses_an_out_held_by_another_process(tmp_path, holder):
    out = tmp_path / "a.csv"
    proc = holder(out)
    with pytest.raises(ValueError, match=f"pid {proc.pid}"):
        run_sweep(SweepSpec(grid_from_items(["p=0.01", "size-packets=1"])), out)
    assert not out.exists()


def test_a_lock_held_by_this_process_is_reentrant_and_released(tmp_path):
    target = tmp_path / "x.csv"
    with lock.output_lock(target, "outer"):
        with lock.output_lock(target, "inner"):  # the same process: no refusal
            pass
        assert lock.lock_path(target).exists()  # still held by the outer block
    assert not lock.lock_path(target).exists()
