"""`latency-model reproduce | validate | plot`: files, schema, metadata, cache, contracts.

`reproduce --quick` takes well over a minute of CPU on the 2-core CI machine (four
solver runs and about 60,000 simulated transfers), too much for the fast suite, so
these tests run the same command with a test-only budget (3 sizes, 40 transfers
each) patched in place of the quick one. Everything else is the real code path.
"""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from latency_model import __version__
from latency_model.studies import cache, reproduce
from latency_model.cli import main
from latency_model.studies.figures import CSV_COLUMNS, FIGURES, SIM_SETS, Budget, _sim_piece, figure_rows
from latency_model.studies.validate import CASES, Case, evaluate, stretch_bound_rtt

TEST_BUDGET = Budget(
    model_sizes_packets=(2.0, 5.0, 8.0),
    sim_sizes_packets=(2, 5, 8),
    extra_sim_sizes_packets=(5, 8),
    runs=40,
    seed=11,
    engine="python",
)


@pytest.fixture(scope="module")
def repro(tmp_path_factory):
    """One reproduction into a fresh folder, then a second run of the same command."""
    mp = pytest.MonkeyPatch()
    mp.setattr(reproduce, "QUICK_BUDGET", TEST_BUDGET)
    out = tmp_path_factory.mktemp("repro")
    argv = ["reproduce", "--quick", "--out", str(out), "--jobs", "2"]
    import contextlib
    import io

    first = io.StringIO()
    with contextlib.redirect_stdout(first):
        assert main(argv) == 0
    files = sorted(p for p in out.rglob("*") if p.is_file() and ".cache" not in p.parts)
    before = {p: p.read_bytes() for p in files}
    second = io.StringIO()
    with contextlib.redirect_stdout(second):
        assert main(argv) == 0
    yield {"out": out, "before": before, "first": first.getvalue(), "second": second.getvalue(), "mp": mp}
    mp.undo()


def test_reproduce_writes_every_table_figure_and_the_report(repro):
    out = repro["out"]
    for name in ("tables/table1.csv", "tables/table2.csv", "validation/REPORT.md"):
        assert (out / name).is_file(), name
    for fig in list(FIGURES) + ["fig1", "fig2", "fig3", "fig5"]:  # fig1-3, 5: the trace figures
        for ext in ("csv", "json", "png", "svg"):
            assert (out / "figures" / f"{fig}.{ext}").stat().st_size > 0, (fig, ext)
    assert (out / "figures" / "fig4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _, t2 = _read(out / "tables" / "table2.csv")
    ca = [r for r in t2 if r["phase"] == "congestion_avoidance" and r["lt"] == "False"]
    assert [int(r["paper"]) for r in ca] == [int(r["model"]) for r in ca] == [11, 10, 6, 1]  # Table 2 as printed
    assert all(r["simulated"] != "" for r in t2)
    report = (out / "validation" / "REPORT.md").read_text()
    for case in CASES:
        assert case.name in report
    assert "Fig. 10" in report and "FileSize_min" in report


def _read(path):
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_figure_csv_is_tidy_with_model_and_simulation(repro):
    for fig in FIGURES:
        header, rows = _read(repro["out"] / "figures" / f"{fig}.csv")
        assert header == CSV_COLUMNS
        assert {r["source"] for r in rows} == {"model", "simulation"}
        for r in rows:
            if r["source"] == "simulation":
                v, lo, hi = float(r["value"]), float(r["ci_low"]), float(r["ci_high"])
                assert lo <= v <= hi and int(r["n"]) >= 2
            if r["value"] != "":
                assert float(r["size_bytes"]) == pytest.approx(500 * float(r["size_packets"]))
    _, rows = _read(repro["out"] / "figures" / "fig6.csv")
    assert {r["k"] for r in rows if r["source"] == "model" and r["series"] == "newreno"} == {"0", "1", "2"}
    # FileSize_min marked: Table 1's y_to = 2 (W0 = 2, slow start, no LT) + dup_t = 3 packets.
    fmin = [r for r in rows if r["series"] == "filesize_min"]
    assert len(fmin) == 1 and float(fmin[0]["size_packets"]) == 5
    _, rows = _read(repro["out"] / "figures" / "fig4.csv")  # b = 2: Table 2's y_to = 3
    assert float([r for r in rows if r["series"] == "filesize_min"][0]["size_packets"]) == 6


def test_simulated_conditional_means_agree_with_the_per_run_records(repro):
    # The fig6 simulated L_k rows must be the means of the per-run completions with k losses.
    from latency_model.studies.figures import base_params
    from latency_model.sim.montecarlo import simulate

    _, rows = _read(repro["out"] / "figures" / "fig6.csv")
    s = simulate(base_params("newreno", 1), size_packets=[5], runs=TEST_BUDGET.runs, seed=TEST_BUDGET.seed, engine="python")
    samples = s.results[0].samples
    from latency_model.sim.runner import OUT_FIELDS

    lost = samples[:, OUT_FIELDS.index("lost_packets")]
    done = samples[:, OUT_FIELDS.index("completion_s")]
    for r in rows:
        if r["source"] == "simulation" and r["size_packets"] == "5":
            sel = done[lost == int(r["k"])]
            assert float(r["value"]) == pytest.approx(sel.mean(), rel=1e-9)
            assert int(r["n"]) == sel.size


def test_figure_json_records_parameters_seed_runs_version_and_command(repro):
    meta = json.loads((repro["out"] / "figures" / "fig7.json").read_text())
    assert meta["version"] == __version__
    assert meta["command"] == f"latency-model reproduce --quick --out {repro['out']} --jobs 2"
    assert meta["simulation"]["seed"] == TEST_BUDGET.seed
    assert meta["simulation"]["runs_per_size"] == TEST_BUDGET.runs
    params = meta["model"]["params"]["lt_b1"]
    assert (params["w0"], params["w_ss"], params["rwnd"], params["mss_bytes"], params["p"], params["b"]) == (
        2, 30, 30, 500, 0.1, 1)
    assert meta["columns"] == CSV_COLUMNS


def test_second_run_is_served_from_the_cache_with_identical_files(repro):
    assert "pieces computed 0" in repro["second"]
    assert "pieces computed 0" not in repro["first"]
    for path, data in repro["before"].items():
        assert path.read_bytes() == data, path


def test_cached_piece_equals_a_fresh_serial_computation(repro):
    # The parallel run (--jobs 2) stored this piece; recomputing it alone gives the same numbers.
    variant, b, cfg = SIM_SETS["lt_b1"]
    spec = {"variant": variant, "b": b, "config": dict(sorted(cfg.items())), "size_packets": 8,
            "runs": TEST_BUDGET.runs, "seed": TEST_BUDGET.seed}
    key = cache.cache_key("sim", spec, cache.source_hash("sim", "params.py", "growth", "checks.py"))
    stored = cache.load(repro["out"] / ".cache", key)
    assert stored is not None
    assert json.loads(json.dumps(_sim_piece(spec, "python"))) == stored


def test_plot_redraws_the_same_figure_from_the_csv(repro, tmp_path, capsys):
    src = repro["out"] / "figures" / "fig9.csv"
    stem = tmp_path / "again"
    assert main(["plot", str(src), "--out", str(stem)]) == 0
    assert (stem.with_suffix(".png")).read_bytes() == (repro["out"] / "figures" / "fig9.png").read_bytes()
    assert (stem.with_suffix(".svg")).read_bytes() == (repro["out"] / "figures" / "fig9.svg").read_bytes()


def test_plot_rejects_a_csv_without_the_tidy_columns(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["plot", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("latency-model: error: csv must have the columns")
    assert main(["plot", str(tmp_path / "missing.csv")]) == 2


def test_validate_json_contract_and_exit_status(repro, capsys):
    capsys.readouterr()
    status = main(["validate", "--json", "--quick", "--out", str(repro["out"]), "--jobs", "2"])
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"cases", "passed", "known", "failed", "kernel", "strict", "exit_status"}
    assert out["passed"] + out["known"] + out["failed"] == len(out["cases"]) == len(CASES)
    for c in out["cases"]:
        assert {"name", "status", "passed", "worst_relative_error", "tolerance", "known_difference"} <= set(c)
        assert isinstance(c["passed"], bool)
    assert status == out["exit_status"] == (1 if out["failed"] or out["kernel"]["failed"] else 0)


def test_reproduce_rejects_zero_jobs(capsys):
    assert main(["reproduce", "--quick", "--jobs", "0"]) == 2
    assert "--jobs must be an integer in [1, " in capsys.readouterr().err


# ---------------------------------------------------------------------------
# The validation logic on synthetic data (no solver, no simulator)


def _synthetic(model_l1, sim_l1, se=0.001, n=500):
    sizes = [2.0, 5.0, 8.0]
    model = {"sizes_packets": sizes, "L0_s": [0.1] * 3, "L1_s": model_l1, "L2_s": [2.0] * 3, "expected_s": [0.5] * 3}
    sim = {int(s): {"size_packets": int(s), "runs": n, "mean_latency_s": 0.5, "ci95_s": [0.5 - 1.96 * se, 0.5 + 1.96 * se],
                    "mean_lost_packets": 0.5,
                    "conditional": {"1": {"n": n, "mean_s": v, "ci95_s": [v - 1.96 * se, v + 1.96 * se]}}}
           for s, v in zip(sizes, sim_l1)}
    return {"model": {"newreno_b1": model}, "sim": {"newreno_b1": sim}}


CASE = Case("t", "newreno_b1:L1", "newreno_b1", 1, 0.1, "relative", "test")


def test_case_passes_within_tolerance_and_fails_outside():
    ok = evaluate(_synthetic([1.0, 1.0, 1.0], [1.05, 0.95, 1.0]), cases=[CASE])
    assert ok["passed"] == 1 and ok["cases"][0]["worst_relative_error"] == pytest.approx(0.05 / 0.95)
    bad = evaluate(_synthetic([1.0, 1.0, 1.3], [1.0, 1.0, 1.0]), cases=[CASE])
    assert bad["failed"] == 1 and bad["cases"][0]["worst_relative_error"] == pytest.approx(0.3)


def test_case_allows_three_standard_errors_and_skips_small_samples():
    # 0.1 relative + 3 SE of 0.02 s = 0.16 s on a 1 s mean: 1.15 passes, 1.17 fails.
    assert evaluate(_synthetic([1.15] * 3, [1.0] * 3, se=0.02), cases=[CASE])["passed"] == 1
    assert evaluate(_synthetic([1.17] * 3, [1.0] * 3, se=0.02), cases=[CASE])["failed"] == 1
    few = evaluate(_synthetic([1.0] * 3, [1.0] * 3, n=5), cases=[CASE])
    assert few["failed"] == 1 and few["cases"][0]["sizes_compared"] == 0


def test_case_rejects_unknown_quantities():
    with pytest.raises(ValueError, match="model must be"):
        Case("t", "newreno_b1:L7", "newreno_b1", 1, 0.1, "relative", "x")
    with pytest.raises(ValueError, match="sim_set must be one of"):
        Case("t", "newreno_b1:L1", "nope", 1, 0.1, "relative", "x")
    with pytest.raises(ValueError, match="tolerance must be > 0"):
        Case("t", "newreno_b1:L1", "newreno_b1", 1, 0.0, "relative", "x")


@pytest.mark.parametrize("b", [1, 2])
def test_stretch_bound_is_the_supremum_of_staircase_minus_fluid_time(b):
    # Slow start from W0 = 2 without caps: staircase time = ceil(rounds to send y), fluid time from
    # W0 (g^t - 1)/ln g = y. The supremum over y (approached just past a round boundary) is the bound.
    g = 1 + 1 / b
    y = np.linspace(0.01, 2 * (g**25 - 1) / (g - 1), 400_001)
    rounds = np.ceil(np.log1p(y * (g - 1) / 2) / math.log(g) - 1e-12)
    fluid = np.log1p(y * math.log(g) / 2) / math.log(g)
    gap = (rounds - fluid).max()
    assert gap <= stretch_bound_rtt(b) + 1e-9
    assert gap == pytest.approx(stretch_bound_rtt(b), abs=2e-3)


def test_cache_keys_change_with_spec_and_code_and_reads_survive_corruption(tmp_path):
    a = cache.cache_key("demo", {"x": 1}, "code1")  # a kind without a shape: checked by its digest
    assert a == cache.cache_key("demo", {"x": 1}, "code1")
    assert a != cache.cache_key("demo", {"x": 2}, "code1") != cache.cache_key("demo", {"x": 1}, "code2")
    assert cache.load(tmp_path, a) is None
    cache.store(tmp_path, a, {"v": [1, 2]})
    assert cache.load(tmp_path, a) == {"v": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == [f"{a}.json"]  # no temp file left behind
    (tmp_path / f"{a}.json").write_text("{not json")
    with pytest.warns(cache.DamagedCacheEntry, match="not JSON"):
        assert cache.load(tmp_path, a) is None
    with pytest.raises(ValueError, match="kind must be"):
        cache.cache_key("a b", {}, "c")


def test_figure_rows_rejects_unknown_figure():
    with pytest.raises(ValueError, match="fig must be one of"):
        figure_rows("fig5", {})
