"""Cache entries of the reproduction are checked before use: every corruption of every kind
of entry that ``reproduce --quick`` writes is reported, recomputed and never used, and the
outputs equal those of a clean run.

The kinds: the model curves (``model``), simulated summaries (``sim``), Tables 1-2
(``tables``), the figures' drawn marks (``plot``), the accuracy map's model predictions
(``accuracy_model``) and its simulated sweep table (``accuracy_sim``, a CSV). The
corruptions: valid JSON of the wrong form (``[1, 2, 3]``, ``42``, ``{"value": 5}``,
``{"value": []}``), a value edited by hand (every number x 1.5), a file cut short, bytes that
are not JSON, an empty file, and a whole entry (valid digest) of the wrong shape. The run
uses the test budget of ``test_reproduce`` (2 sizes, 10 transfers) so that the 9 reruns
stay short.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from latency_model.studies import cache, reproduce
from latency_model.studies.figures import Budget
from latency_model.studies.sweep.table import ROW_CHECK, row_check

BUDGET = Budget(model_sizes_packets=(2.0, 5.0), sim_sizes_packets=(2, 5), extra_sim_sizes_packets=(5,),
                runs=10, seed=11, engine="python")
KINDS = ("model", "sim", "tables", "plot", "accuracy_model", "accuracy_sim")


def _run(out):
    with warnings.catch_warnings():
        warnings.simplefilter("error", cache.DamagedCacheEntry)  # none may escape the result
        return reproduce.run_reproduction(out, budget=BUDGET, jobs=1, progress=False)


def _outputs(out: Path) -> dict:
    return {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


def _entry(out: Path, kind: str) -> Path:
    """One entry of ``kind`` (the first by name), the same in every run."""
    suffix = ".csv" if kind == "accuracy_sim" else ".json"
    found = sorted(p for p in (out / ".cache").iterdir() if p.name.startswith(kind + "-") and p.name.endswith(suffix))
    assert found, kind
    return found[0]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean")
    res = _run(out)
    assert res["cache_damaged"] == [] and res["computed"] > 0
    kinds = {p.name.split("-")[0] for p in (out / ".cache").iterdir()}
    assert kinds == set(KINDS), kinds  # every kind this test corrupts, and no other
    return out, _outputs(out), {k: _entry(out, k).read_bytes() for k in KINDS}


def _scaled(x):
    if isinstance(x, bool):
        return 1.5 if x else 0.0
    if isinstance(x, (int, float)):
        return x * 1.5
    if isinstance(x, list):
        return [_scaled(v) for v in x]
    if isinstance(x, dict):
        return {k: _scaled(v) for k, v in x.items()}
    return x


def _json_corruption(name: str, data: bytes, path: Path) -> bytes | None:
    entry = json.loads(data)
    if name == "scaled":  # a value edited by hand: its digest no longer matches
        return json.dumps({**entry, "value": _scaled(entry["value"])}).encode()
    if name == "wrong_shape":  # a whole entry, digest and all, of a value of the wrong shape
        cache.store(path.parent, entry["key"], [1, 2, 3] if entry["value"] is True else {"value": []})
        return None
    return None


def _csv_corruption(name: str, data: bytes) -> bytes:
    lines = data.decode().split("\n")
    cols = lines[0].split(",")
    if name == "scaled":  # one simulated mean edited by hand
        i = cols.index("expected_latency_s")
        cells = lines[1].split(",")
        cells[i] = repr(float(cells[i]) * 1.5)
        lines[1] = ",".join(cells)
        return "\n".join(lines).encode()
    if name == "wrong_shape":  # a whole row (its check recomputed) of a point this map does not have
        import csv
        import io

        row = dict(zip(cols, next(csv.reader([lines[1]]))))
        row["key"] = "0" * 20
        row[ROW_CHECK] = row_check(row, cols)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow([row[c] for c in cols])
        lines[1] = buf.getvalue()
        return "\n".join(lines).encode()
    raise AssertionError(name)


PLAIN = {"list": b"[1, 2, 3]", "number": b"42", "value_5": b'{"value": 5}', "value_empty": b'{"value": []}',
         "not_json": b"\x00\xffgarbage", "empty": b""}
CORRUPTIONS = [*PLAIN, "scaled", "cut", "wrong_shape"]


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_every_kind_of_entry_damaged_so_is_reported_recomputed_and_never_used(clean, tmp_path, corruption):
    out0, outputs, entries = clean
    out = tmp_path / "r"
    import shutil

    shutil.copytree(out0, out)
    damaged = {}
    for kind in KINDS:
        path = _entry(out, kind)
        data = path.read_bytes()
        if corruption in PLAIN:
            new = PLAIN[corruption]
        elif corruption == "cut":
            new = data[: len(data) * 2 // 3]
        elif kind == "accuracy_sim":
            new = _csv_corruption(corruption, data)
        else:
            new = _json_corruption(corruption, data, path)
        if new is not None:
            path.write_bytes(new)
        assert path.read_bytes() != data
        damaged[kind] = path
    res = _run(out)
    for kind, path in damaged.items():  # each reported once at least, naming its file
        lines = [line for line in res["cache_damaged"] if line.startswith(f"{path}: ")]
        assert lines and all(line.endswith("; recomputed") for line in lines), (kind, res["cache_damaged"])
        assert path.read_bytes() == entries[kind], kind  # recomputed: the clean run's entry again
    assert len(res["cache_damaged"]) >= len(KINDS)
    assert _outputs(out) == outputs  # every table, figure and report as in the clean run


def test_the_tables_are_not_written_from_a_damaged_entry(clean, tmp_path, monkeypatch):
    # the crash reported: {"value": []} in the tables' entry wrote header-only tables before failing
    out0, outputs, _ = clean
    import shutil

    out = tmp_path / "t"
    shutil.copytree(out0, out)
    _entry(out, "tables").write_bytes(b'{"value": []}')
    from latency_model.studies import tables

    seen = []
    real = tables.write_tables

    def spy(rows, out_dir):
        seen.append(rows)
        return real(rows, out_dir)

    monkeypatch.setattr(reproduce, "write_tables", spy)
    _run(out)
    assert len(seen) == 1 and len(seen[0]) == 8
    assert _outputs(out)[Path("tables/table1.csv")] == outputs[Path("tables/table1.csv")]


def test_load_reports_and_store_round_trips(tmp_path):
    key = cache.cache_key("demo", {"x": 1}, "code")
    assert cache.load(tmp_path, key) is None  # absent: not reported
    cache.store(tmp_path, key, {"v": [1.0, float("nan")]}, spec={"x": 1})
    assert json.dumps(cache.load(tmp_path, key)) == '{"v": [1.0, NaN]}'
    other = cache.cache_key("demo", {"x": 2}, "code")
    (tmp_path / f"{other}.json").write_bytes((tmp_path / f"{key}.json").read_bytes())  # copied under another key
    with pytest.warns(cache.DamagedCacheEntry, match="the entry of another key"):
        assert cache.load(tmp_path, other) is None


def test_a_failed_run_leaves_only_its_cache(clean, tmp_path, monkeypatch):
    # from the cache alone every output is made again (figures drawn in two worker processes),
    # then the last write fails: none of the outputs stays, the cache does (a rerun resumes)
    out0, _, _ = clean
    import shutil

    out = tmp_path / "f"
    shutil.copytree(out0 / ".cache", out / ".cache")
    cached = sorted(p.name for p in (out / ".cache").iterdir())

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device", str(out / "validation" / "REPORT.md"))

    from latency_model.studies import validate

    monkeypatch.setattr(validate, "report_markdown", no_space)
    with pytest.raises(OSError, match="No space left"):
        reproduce.run_reproduction(out, budget=BUDGET, jobs=2, progress=False)
    assert sorted(p.name for p in out.iterdir()) == [".cache"]
    assert sorted(p.name for p in (out / ".cache").iterdir()) == cached
