"""Issue 20, item 4: output files get the mode a normal write would (umask-respecting,
0644 under umask 022), not the atomic writer's temp-file mode 0600."""

from __future__ import annotations

import os
import stat

import pytest

from latency_model.cli import main




def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    old = os.umask(0o022)
    try:
        yield lambda mask: os.umask(mask)
    finally:
        os.umask(old)


def test_outputs_are_0644_under_umask_022(tmp_path, capsys, umask):
    umask(0o022)
    assert main(["sweep", "--param", "size-packets=1,2", "--out", str(tmp_path / "s.csv"), "--quiet"]) == 0
    assert main(["tables", "--sim-lt-mode", "none", "--out", str(tmp_path / "t")]) == 0
    for path in (tmp_path / "s.csv", tmp_path / "s.csv.json", tmp_path / "t" / "table1.csv",
                 tmp_path / "t" / "table2.csv"):
        assert _mode(path) == 0o644, (path, oct(_mode(path)))


def test_outputs_follow_the_umask_and_keep_an_existing_files_mode(tmp_path, umask):
    from latency_model.studies.export import atomic_write_text

    umask(0o077)
    assert _mode(atomic_write_text(tmp_path / "a.txt", "x")) == 0o600
    umask(0o002)
    assert _mode(atomic_write_text(tmp_path / "b.txt", "x")) == 0o664
    os.chmod(tmp_path / "b.txt", 0o640)
    assert _mode(atomic_write_text(tmp_path / "b.txt", "y")) == 0o640
    assert (tmp_path / "b.txt").read_text() == "y"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
