"""A resumed sweep keeps only whole rows: every row of the file carries a CRC-32 of its cells
(``row_crc32``); a row cut short (a crash or a full disk mid-write), with fields added or
edited by hand is recomputed and reported, and the resumed table equals the clean run's."""

from __future__ import annotations

import pytest

from latency_model.studies.sweep import SweepSpec, grid_from_items, plan_sweep, read_rows, run_sweep
from latency_model.studies.sweep.table import ROW_CHECK, row_check

from _cli import run


def _spec():
    # closed-form models: each resume recomputes its damaged rows in microseconds, so the
    # test can afford a resume per byte
    return SweepSpec(grid_from_items(["model=pftk,csa", "p=0.02,0.05", "size-packets=1,2"]))


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "clean.csv"
    run_sweep(_spec(), out)
    return out.read_bytes()


def test_every_row_ends_with_the_crc32_of_its_cells(clean, tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(clean)
    cols, rows = read_rows(path)
    assert cols[-1] == ROW_CHECK and len(rows) == 8
    for r in rows:  # independently: zlib over the cells as written, numbers read as numbers
        import zlib

        cells = [r[c] for c in cols[:-1]]
        canon = []
        for c in cells:
            try:
                canon.append(c if c in ("", "true", "false") else repr(float(c)))
            except ValueError:
                canon.append(c)
        assert r[ROW_CHECK] == f"{zlib.crc32(chr(31).join(canon).encode()):08x}" == row_check(r, cols)


def test_a_file_cut_at_every_byte_of_its_last_two_rows_resumes_to_the_clean_table(clean, tmp_path):
    spec = _spec()
    plan = plan_sweep(spec)
    lines = clean.split(b"\n")
    assert lines[-1] == b""  # the file ends with a line end
    start = len(clean) - len(lines[-2]) - len(lines[-3]) - 2  # first byte of the second-last row
    part = tmp_path / "part.csv"
    kinds = {"damaged": 0, "whole": 0}
    for cut in range(start, len(clean)):
        part.write_bytes(clean[:cut])
        rep = run_sweep(spec, part, plan=plan)
        assert part.read_bytes() == clean, cut
        tail = clean[:cut].rsplit(b"\n", 1)[-1]
        # a partial last line is reported unless it is a whole row missing only its line end
        whole = tail == b"" or tail in (lines[-2], lines[-3])
        assert bool(rep.damaged) == (not whole), (cut, rep.damaged)
        assert rep.rows_resumed + rep.rows_computed == 8
        kinds["whole" if whole else "damaged"] += 1
    # whole: each row's start, and each row whole without its line end; damaged: the rest
    assert kinds == {"whole": 4, "damaged": len(lines[-2]) + len(lines[-3]) - 2}


def test_edited_cell_and_extra_fields_are_damaged_rows_recomputed(clean, tmp_path):
    path = tmp_path / "e.csv"
    lines = clean.decode().split("\n")
    cols = lines[0].split(",")
    i = cols.index("expected_latency_s")
    cells = lines[3].split(",")
    cells[i] = repr(float(cells[i]) * 1.5)  # a value edited by hand
    edited = lines[:3] + [",".join(cells)] + lines[4:]
    path.write_text("\n".join(edited))
    rep = run_sweep(_spec(), path)
    assert rep.damaged == (f"line 4: its cells do not match its {ROW_CHECK}",)
    assert path.read_bytes() == clean
    path.write_text(clean.decode()[:-1] + ",x,y\n")  # the last row with two fields added
    rep = run_sweep(_spec(), path)
    assert rep.damaged == (f"line 9: too many fields ({len(cols) + 2} of {len(cols)} fields)",)
    assert path.read_bytes() == clean


def test_cli_says_so_and_writes_the_clean_table(clean, tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_bytes(clean[:-40] + b",1,2,3\n")  # cut mid-row, then other fields appended
    code, out, err = run(capsys, "sweep", "--param", "model=pftk,csa", "--param", "p=0.02,0.05",
                         "--param", "size-packets=1,2", "--out", path, "--jobs", 1)
    assert code == 0, err
    assert path.read_bytes() == clean
    assert f"note: {path}: 1 damaged row found on resuming and recomputed (line 9: " in err
    assert "fieldnames" not in err and "6 resumed, 2 computed" in out  # the task of both sizes


def test_a_file_cut_inside_its_header_has_no_rows_yet(clean, tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(clean[:30])
    rep = run_sweep(_spec(), path)
    assert rep.rows_resumed == 0 and rep.damaged and path.read_bytes() == clean


def test_another_sweeps_whole_rows_are_still_refused(tmp_path):
    path = tmp_path / "o.csv"
    run_sweep(SweepSpec(grid_from_items(["model=pftk,csa", "p=0.03", "size-packets=1"])), path)
    with pytest.raises(ValueError, match="another sweep"):
        run_sweep(_spec(), path)


def test_a_parquet_cell_edited_by_hand_is_recomputed(tmp_path):
    pytest.importorskip("pyarrow")  # optional
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    run_sweep(_spec(), path)
    clean = pq.read_table(path).to_pydict()
    data = {k: list(v) for k, v in clean.items()}
    data["expected_latency_s"][2] *= 1.5
    pq.write_table(pa.table(data), path)
    rep = run_sweep(_spec(), path)
    assert rep.damaged == (f"row 3: its cells do not match its {ROW_CHECK}",)
    assert pq.read_table(path).to_pydict() == clean
