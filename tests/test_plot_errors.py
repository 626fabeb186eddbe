"""`latency-model plot` on a bad CSV: one line naming the file, the line, the column (issue 20)."""

import csv
from pathlib import Path

import pytest

from latency_model.cli import main

FIGURES = Path(__file__).resolve().parents[1] / "figures"


def _corrupt(src: Path, dst: Path, column: str, value: str, row: int = 2) -> None:
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    rows[row][rows[0].index(column)] = value
    with open(dst, "w", newline="") as f:
        csv.writer(f).writerows(rows)


@pytest.mark.parametrize("fig, column, value, kind", [
    ("fig6", "value", "x", "a number"),
    ("fig6", "n", "1.5", "an integer"),
    ("fig1", "time_s", "soon", "a number"),
])
def test_bad_cell_is_named(tmp_path, capsys, fig, column, value, kind):
    bad = tmp_path / f"{fig}.csv"
    _corrupt(FIGURES / f"{fig}.csv", bad, column, value)
    assert main(["plot", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"latency-model: error: {bad}, line 3, column {column}: {value!r} is not {kind}"


def test_binary_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bin.csv"
    bad.write_bytes(bytes(range(256)))
    assert main(["plot", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not UTF-8 text" in err and "\n" not in err
