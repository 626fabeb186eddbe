"""Issue 20, item 3: a sweep's local worker processes exit when the sweep is killed.

After SIGKILL of the parent no clean-up runs; the workers must notice on their own
(:func:`latency_model.studies.sweep.run.watch_parent`: ``PR_SET_PDEATHSIG`` on Linux and a
thread polling ``os.getppid()``) instead of living on under PID 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_sweep_workers_exit_within_seconds_of_a_sigkill_of_the_parent(tmp_path):
    cmd = [sys.executable, "-m", "latency_model.cli", "sweep", "--param", "p=0.05:0.3:0.05",
           "--param", "size-packets=20:60", "--what", "simulation", "--runs", "3000", "--engine", "python",
           "--jobs", "2", "--quiet", "--out", str(tmp_path / "x.csv")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            assert proc.poll() is None, "the sweep ended before its workers were seen"
            workers = [p for p in _children(proc.pid) if _running(p)]
        assert len(workers) >= 2, workers
        time.sleep(1.0)  # the workers are computing
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_running(p) for p in workers):
            time.sleep(0.1)
        alive = [p for p in workers if _running(p)]
        assert not alive, f"workers {alive} outlived their parent by 5 s"
    finally:
        for p in _children(proc.pid) + ([] if proc.poll() is not None else [proc.pid]):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass


def test_watch_parent_ends_a_process_whose_parent_is_gone():
    from latency_model.studies.sweep import run as sweep_run

    code = (
        "import os, sys, time\n"
        "from latency_model.studies.sweep.run import watch_parent\n"
        "watch_parent(int(sys.argv[1]), poll_s=0.05)\n"
        "time.sleep(30)\n"
    )
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs: the watcher ends this process at once
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, str(dead.pid)], timeout=30)
    assert proc.returncode == 1 and time.monotonic() - t0 < 10
    assert sweep_run.PARENT_POLL_S <= 1.0


def test_the_polling_guard_alone_ends_a_worker_whose_parent_is_killed():
    # prctl made unavailable: only the thread polling os.getppid() is left.
    worker = ("import ctypes, time\n"
              "def no_libc(*a, **k):\n"
              "    raise OSError('no prctl here')\n"
              "ctypes.CDLL = no_libc\n"
              "from latency_model.studies.sweep.run import watch_parent\n"
              "watch_parent(poll_s=0.1)\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")
    parent = ("import subprocess, sys, time\n"
              f"p = subprocess.Popen([sys.executable, '-c', {worker!r}], stdout=subprocess.PIPE, text=True)\n"
              "p.stdout.readline()\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    child = int(proc.stdout.readline())
    try:
        assert _running(child)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _running(child):
            time.sleep(0.05)
        assert not _running(child)
    finally:
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass
