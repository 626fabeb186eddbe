"""A full disk under ``reproduce``, ``experiment --out`` and ``sweep``: one error line naming
the file that could not be written, and nothing left behind but what a rerun resumes from
(no temp files of atomic writes, no half-made folders, no partial set of outputs).

The disk is a small tmpfs mounted for the test (root only; skipped elsewhere) and unmounted
however the test ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from latency_model.studies import reproduce
from latency_model.studies.figures import Budget

from _cli import one_error_line, run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0,
                                reason="mounts a small tmpfs (root on Linux)")


@pytest.fixture
def disk(tmp_path, monkeypatch):
    """A mounted tmpfs of 40 kB, ``disk`` (relative to the working folder: messages show
    a long path cut short)."""
    monkeypatch.chdir(tmp_path)
    mnt = Path("disk")
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40k", "tmpfs", str(mnt)], capture_output=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _files(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*"))


def _full_disk_error(err: str, root) -> str:
    line = one_error_line(err)
    assert "No space left on device" in line and f"{root}/" in line, line
    return line


def test_reproduce_on_a_full_disk_names_the_file_and_keeps_only_its_cache(disk, capsys, monkeypatch):
    monkeypatch.setattr(reproduce, "QUICK_BUDGET", Budget(model_sizes_packets=(2.0, 5.0), sim_sizes_packets=(2, 5),
                                                          extra_sim_sizes_packets=(5,), runs=10, seed=11,
                                                          engine="python"))
    out = disk / "rq"
    code, stdout, err = run(capsys, "reproduce", "--quick", "--out", out, "--jobs", 1)
    assert code == 2 and stdout == ""
    line = _full_disk_error(err, out)
    assert line.startswith("latency-model: error: --out: ")
    left = _files(disk)
    assert not [f for f in left if f.endswith(".tmp")], left  # no temp file of an atomic write
    assert all(f == "rq" or f.startswith("rq/.cache") for f in left), left  # only what a rerun resumes from
    assert ".latency-model.lock" not in " ".join(left)


def test_experiment_on_a_full_disk_names_the_file_and_leaves_nothing(disk, capsys):
    out = disk / "exp"
    code, stdout, err = run(capsys, "experiment", "btcp", "--out", out)
    assert code == 2 and stdout == ""
    _full_disk_error(err, out)
    assert _files(disk) == []  # neither the files written before the disk filled, nor the folder


def test_sweep_on_a_full_disk_names_the_file_and_leaves_no_temp_file(disk, capsys):
    out = disk / "sub" / "s.csv"
    code, stdout, err = run(capsys, "sweep", "--param", "p=0.01:0.2:0.01", "--param", "size-packets=1:30",
                            "--out", out, "--jobs", 1)
    assert code == 2 and stdout == ""
    line = _full_disk_error(err, disk / "sub")
    assert line.startswith("latency-model: error: --out: ")
    assert not [f for f in _files(disk) if f.endswith(".tmp") or f.endswith(".lock")], _files(disk)
