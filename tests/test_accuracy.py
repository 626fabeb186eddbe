"""The accuracy map (latency_model.studies.accuracy, `latency-model accuracy`; issue 18, part 3).

One small map is run once (module fixture): the fluid model and a stand-in model registered
for the test (``fake``: a closed form, newreno only, so that coverage is exercised without
depending on the other models' modules or cost) against 8 simulated cells of 60 transfers.
Every number in its rows is then recomputed independently: the simulated mean and standard
error from the simulator's own runs with the documented seeds, the model value from the
registry alone at that size, the error and the flags from their definitions, the summary
statistics with another percentile implementation. Tolerances: 1e-12 relative where the
same floating-point operations are repeated in another order or grouping, 1e-9 where the
standard error goes through the Student-t quantile and back.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time

import numpy as np
import pytest

from _fake_model import fake_module, install
from latency_model.model import registry
from latency_model.studies import accuracy as acc
from latency_model.studies.accuracy import AccuracyMap, run_accuracy

FAKE = "h4_fake_accuracy_model"


def _fake_module(slow_from_packets=None):
    """``L = L_0 = RTT (1 + log2(n + 1)) + p n`` seconds for n packets (tests/_fake_model.py)."""
    return fake_module(FAKE, lambda params, n: (fake_latency(params, n),) * 2, slow_from_packets)


def fake_latency(params, n):
    return params.rtt_s * (1.0 + np.log2(np.asarray(n, dtype=float) + 1.0)) + params.p * np.asarray(n)


@pytest.fixture(scope="module")
def models_patched():
    """The registry holds fluid and the fake model only (the installed set the map sees)."""
    mp = pytest.MonkeyPatch()
    install(mp, _fake_module())
    yield mp
    mp.undo()


MAP = dict(sizes_packets=(2, 6), p=(0.05, 0.1), b=(1,), variants=("newreno", "lt"), runs=60, seed=3)


@pytest.fixture(scope="module")
def run(models_patched, tmp_path_factory):
    cache_dir = tmp_path_factory.mktemp("acc-cache")
    amap = AccuracyMap(**MAP)  # models: every installed one, each where it covers
    first = run_accuracy(amap, cache_dir=cache_dir, model_timeout_s=None)
    second = run_accuracy(amap, cache_dir=cache_dir, model_timeout_s=None)
    out = tmp_path_factory.mktemp("acc-out")
    paths = acc.write_outputs(first, out)
    return {"amap": amap, "first": first, "second": second, "out": out, "paths": paths, "cache": cache_dir}


def _plan_points(amap):
    from latency_model.studies.sweep import plan_sweep

    return {t.points[0].index: t.points[0] for t in plan_sweep(amap.sweep_spec()).tasks}


def test_rows_hold_every_covered_model_and_cell(run):
    rows = run["first"]["rows"]
    assert [r["model"] for r in rows] == ["fluid"] * 8 + ["fake"] * 4  # fake: newreno only
    assert {(r["variant"], r["p"], r["size_packets"]) for r in rows if r["model"] == "fluid"} == {
        (v, p, n) for v in ("newreno", "lt") for p in (0.05, 0.1) for n in (2, 6)}
    assert {r["variant"] for r in rows if r["model"] == "fake"} == {"newreno"}
    nc = run["first"]["not_covered"]
    assert [(x["model"], x["variant"], x["p"]) for x in nc] == [("fake", "lt", 0.05), ("fake", "lt", 0.1)]
    assert all("newreno variant only" in x["reason"] for x in nc)


def test_simulated_mean_and_standard_error_are_the_simulators_own_runs(run):
    from latency_model.sim import OUT_FIELDS, run_many

    points = _plan_points(run["amap"])
    for r in run["first"]["rows"][:8]:
        pt = points[r["point"]]
        children = np.random.SeedSequence(MAP["seed"], spawn_key=(r["point"],)).spawn(MAP["runs"])
        lat = run_many(pt.params, int(pt.size_bytes), children, run["amap"].sim_config)[
            :, OUT_FIELDS.index("completion_s")]
        assert r["sim_mean_s"] == pytest.approx(lat.mean(), rel=1e-12)
        assert r["sim_se_s"] == pytest.approx(lat.std(ddof=1) / math.sqrt(lat.size), rel=1e-9)
        assert r["runs"] == MAP["runs"] == lat.size


def test_model_values_are_the_registry_alone_at_each_size(run):
    points = _plan_points(run["amap"])
    for r in run["first"]["rows"]:
        pt = points[r["point"]]
        assert pt.cells["variant"] == r["variant"] and pt.params.p == r["p"] and pt.params.b == r["b"]
        if r["model"] == "fluid":
            want = registry.predict("fluid", pt.params, [pt.size_bytes]).expected_latency_s[0]
        else:
            want = fake_latency(pt.params, r["size_packets"])
        assert r["model_s"] == pytest.approx(float(want), rel=1e-12)


def test_errors_and_flags_follow_their_definitions(run):
    t = {}
    for r in run["first"]["rows"]:
        err = (r["model_s"] - r["sim_mean_s"]) / r["sim_mean_s"]
        assert r["error"] == pytest.approx(err, rel=1e-12, abs=1e-15)
        assert r["abs_error"] == abs(r["error"])
        assert r["error_se"] == pytest.approx(r["model_s"] * r["sim_se_s"] / r["sim_mean_s"] ** 2, rel=1e-12)
        inside = r["sim_ci95_low_s"] <= r["model_s"] <= r["sim_ci95_high_s"]
        assert r["within"] == (abs(err) <= 0.05 or inside)
        assert r["resolved"] == (r["runs"] >= 30 and r["sim_se_s"] <= 0.05 / 1.96 * r["sim_mean_s"])
        # the interval is the simulator's: mean +- t(0.975, n - 1) SE
        from scipy import stats

        q = t.setdefault(r["runs"], stats.t.ppf(0.975, r["runs"] - 1))
        assert r["sim_ci95_high_s"] - r["sim_mean_s"] == pytest.approx(q * r["sim_se_s"], rel=1e-9)
    # both kinds of cell occur, so the flags were really tested
    assert {r["within"] for r in run["first"]["rows"]} == {True, False}


def _p90(xs):
    """90th percentile by linear interpolation between order statistics (numpy's default)."""
    xs = sorted(xs)
    h = (len(xs) - 1) * 0.9
    lo = math.floor(h)
    return xs[lo] + (h - lo) * (xs[min(lo + 1, len(xs) - 1)] - xs[lo])


def test_summary_statistics_recomputed_from_the_csv(run):
    rows = acc.read_rows_csv(run["out"] / "accuracy.csv")
    summary = {(s["model"], s["variant"]): s for s in run["first"]["summary"]}
    assert set(summary) == {("fluid", "all"), ("fluid", "newreno"), ("fluid", "lt"), ("fake", "all"),
                            ("fake", "newreno")}
    for (model, variant), s in summary.items():
        sel = [r for r in rows if r["model"] == model and variant in ("all", r["variant"])]
        errs = [abs(r["error"]) for r in sel]
        assert s["cells"] == len(sel)
        assert s["within"] == sum(r["within"] for r in sel)
        assert s["within_fraction"] == pytest.approx(s["within"] / len(sel), rel=1e-15)
        assert s["median_abs_error"] == pytest.approx(statistics.median(errs), rel=1e-12)
        assert s["p90_abs_error"] == pytest.approx(_p90(errs), rel=1e-12)
        assert s["max_abs_error"] == max(errs)
        assert s["mean_error"] == pytest.approx(statistics.fmean(r["error"] for r in sel), rel=1e-12, abs=1e-15)
        assert s["unresolved"] == sum(not r["resolved"] for r in sel)
    worst = run["first"]["worst"]["fluid"]
    assert [r["abs_error"] for r in worst] == sorted((abs(r["error"]) for r in rows if r["model"] == "fluid"),
                                                     reverse=True)[:5]


def test_csv_reads_back_to_the_same_rows(run):
    back = acc.read_rows_csv(run["out"] / "accuracy.csv")
    assert len(back) == len(run["first"]["rows"])
    for a, b in zip(back, run["first"]["rows"]):
        assert a == {k: b[k] for k in acc.COLUMNS}  # floats written exactly (repr)


def test_json_contract(run):
    doc = json.loads((run["out"] / "accuracy.json").read_text())
    assert set(doc) == {"command", "version", "map", "models", "definitions", "columns", "summary", "worst",
                        "not_covered", "not_computed", "model_timeout_s", "model_max_packets", "notes", "rows"}
    assert doc["columns"] == acc.COLUMNS
    assert doc["models"] == ["fluid", "fake"] and doc["map"]["models_named"] is False
    assert doc["map"]["cells"] == 8 and doc["map"]["runs"] == 60 and doc["map"]["seed"] == 3
    assert doc["map"]["stack"] == "rfc" and doc["map"]["sim_config"]["stack"] == "rfc"
    assert len(doc["rows"]) == 12 and set(doc["rows"][0]) == set(acc.COLUMNS)
    assert {"error", "sim_se_s", "error_se", "within", "resolved", "seeds"} <= set(doc["definitions"])
    assert any(n.startswith("model fluid:") for n in doc["notes"])
    assert any(n.startswith("model fake:") for n in doc["notes"])  # no declared difference: said so
    line = json.loads(acc.dumps(run["first"]))  # --json: the same plus what was computed
    assert line["run"]["sim_rows_computed"] == 8 and line["rows"] == doc["rows"]


def test_second_run_simulates_nothing_and_calls_no_model(run):
    a, b = run["first"], run["second"]
    assert (a["sim_rows_computed"], a["model_calls_computed"]) == (8, 6)  # 4 fluid sets, 2 fake
    assert (b["sim_rows_computed"], b["sim_rows_resumed"], b["model_calls_computed"], b["model_calls_cached"]) == (
        0, 8, 0, 6)
    assert b["rows"] == a["rows"]


def test_an_interrupted_simulation_resumes_its_missing_cells(run):
    table = acc.sim_table_path(run["amap"], run["cache"])
    lines = table.read_text().splitlines(keepends=True)
    table.write_text("".join(lines[:-3]))  # as if stopped three cells before the end
    again = run_accuracy(run["amap"], cache_dir=run["cache"], model_timeout_s=None)
    assert (again["sim_rows_computed"], again["sim_rows_resumed"]) == (3, 5)
    assert again["rows"] == run["first"]["rows"]


def test_heat_maps_one_per_model_variant_and_b_redrawn_identically_from_the_csv(run, tmp_path):
    pngs = sorted(p.name for p in run["paths"] if p.suffix == ".png")
    assert pngs == ["accuracy_fake_newreno_b1.png", "accuracy_fluid_lt_b1.png", "accuracy_fluid_newreno_b1.png"]
    for p in run["paths"]:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = acc.draw_maps(run["out"] / "accuracy.csv", tmp_path)
    for p in again:
        assert p.read_bytes() == (run["out"] / p.name).read_bytes()


@pytest.mark.parametrize("top,want", [(0.0, 0.05), (0.01, 0.05), (0.05, 0.05), (0.123, 0.15), (0.45, 0.45),
                                      (0.9, 0.5)])
def test_colour_range_is_the_largest_error_rounded_up_to_5_percent_and_clipped(top, want):
    assert acc.colour_range([{"abs_error": top}, {"abs_error": top / 2}]) == pytest.approx(want)


def test_named_models_must_cover_every_cell(models_patched, tmp_path):
    with pytest.raises(ValueError, match=r"model fake: the fake model supports the newreno variant only "
                                         r"\(at variant=lt, b=1, w0=2, p=0.05\)"):
        run_accuracy(AccuracyMap(models=("fake",), **MAP), cache_dir=tmp_path)


@pytest.mark.parametrize("kw,match", [
    ({"models": ("nope",)}, r"model must be one of fluid, fake \(installed here: fluid, fake\), got 'nope'"),
    ({"models": ("fluid", "fluid")}, "model lists 'fluid' twice"),
    ({"p": (1.0,)}, r"p must be in \[0, 1\), got 1.0"),
    ({"b": (0,)}, "b must be an integer >= 1"),
    ({"variants": ("reno",)}, "variants must be one of newreno, lt, proposal, er, size-based"),
    ({"sizes_packets": (0,)}, "size_packets must be"),
    ({"sizes_packets": (2, 2)}, "size_packets lists 2 twice"),
    ({"runs": 0}, "runs must be an integer >= 1"),
    ({"w0": (-1,)}, "w0 must be"),
])
def test_bad_maps_raise_naming_the_parameter(models_patched, kw, match):
    with pytest.raises(ValueError, match=match):
        AccuracyMap(**kw)


def test_calls_over_the_time_limit_leave_cells_out_and_are_cached(tmp_path):
    mp = pytest.MonkeyPatch()
    try:
        install(mp, _fake_module(slow_from_packets=8))
        amap = AccuracyMap(models=("fake",), sizes_packets=(2, 8, 12), p=(0.05, 0.1), b=(1,),
                           variants=("newreno",), runs=20)
        t0 = time.monotonic()
        res = run_accuracy(amap, cache_dir=tmp_path, model_timeout_s=2.0)  # the fast calls take ms
        # p = 0.05: all sizes at once (2 s, stopped), then 2 (ok) and 8 (2 s, stopped); p = 0.1:
        # 2 alone, 8 and above not tried (they ran out of time at the smaller p)
        assert time.monotonic() - t0 < 30
        assert res["model_calls_computed"] == 4
        assert [(r["p"], r["size_packets"]) for r in res["rows"]] == [(0.05, 2), (0.1, 2)]
        assert [(x["p"], x["size_packets"]) for x in res["not_computed"]] == [(0.05, 8), (0.05, 12), (0.1, 8),
                                                                             (0.1, 12)]
        assert "2 s limit" in res["not_computed"][0]["reason"]
        for r in res["rows"]:
            assert r["model_s"] == pytest.approx(float(fake_latency(_params(amap, r), 2)), rel=1e-12)
        t0 = time.monotonic()
        again = run_accuracy(amap, cache_dir=tmp_path, model_timeout_s=2.0)
        assert time.monotonic() - t0 < 5 and again["model_calls_computed"] == 0
        assert again["rows"] == res["rows"] and again["not_computed"] == res["not_computed"]
    finally:
        mp.undo()


def _params(amap, row):
    return _plan_points(amap)[row["point"]].params


# ---------------------------------------------------------------------------
# The command


def _cli(argv):
    from test_cli_fuzz import run_cli

    return run_cli(argv)


SMALL = ["accuracy", "--models", "fluid", "--sizes", "2,6", "--p", "0.1", "--b", "1", "--variants", "newreno",
         "--runs", "20", "--jobs", "1", "--quiet"]


def test_cli_json_and_files(models_patched, tmp_path):
    code, out, err, exc = _cli(SMALL + ["--cache", str(tmp_path / "c"), "--out", str(tmp_path / "o"), "--json"])
    assert exc is None and code == 0, err
    doc = json.loads(out)
    assert [(r["model"], r["size_packets"]) for r in doc["rows"]] == [("fluid", 2), ("fluid", 6)]
    assert doc["map"]["models_named"] is True and doc["run"]["sim_rows_computed"] == 2
    for name in ("accuracy.csv", "accuracy.json", "accuracy_fluid_newreno_b1.png"):
        assert (tmp_path / "o" / name).stat().st_size > 0
    code, out, err, exc = _cli(SMALL + ["--cache", str(tmp_path / "c")])
    assert code == 0 and "fluid    all" in out and "worst cells, fluid:" in out
    assert "simulation: 0 cells computed, 2 from" in out and "model calls: 0 computed, 1 cached" in out


@pytest.mark.parametrize("extra,flag,says", [
    (["--models", "nope"], "--models", "installed here: fluid, fake"),
    (["--models", "fake", "--variants", "lt"], "--models", "newreno variant only"),
    (["--models", "fluid,,fake"], "--models", "empty item"),
    (["--p", "1"], "--p", "[0, 1)"),
    (["--b", "0"], "--b", ">= 1"),
    (["--variants", "reno"], "--variants", "newreno, lt, proposal"),
    (["--sizes", "0"], "--size-packets", "> 0"),
    (["--w0", "0"], "--w0", ""),
    (["--runs", "0"], "--runs", ">= 1"),
    (["--model-timeout", "-1"], "--model-timeout", ">= 0"),
])
def test_cli_bad_input_is_one_line_naming_the_flag_exit_2(models_patched, tmp_path, extra, flag, says):
    argv = [w for w in SMALL if True]
    for f in extra[::2]:  # replace the base's own value of the flag
        if f in argv:
            i = argv.index(f)
            del argv[i:i + 2]
    code, out, err, exc = _cli(argv + extra + ["--cache", str(tmp_path)])
    assert exc is None and code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("latency-model: error: ") and flag in lines[0], err
    assert says in lines[0]


def test_cli_fuzz_every_flag(models_patched, tmp_path):
    """Issue 20's contract for the new command: tests/test_cli_fuzz.py's bad values for each flag
    (``--out`` and ``--cache`` are folders here), one line naming the flag, exit 2."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from test_cli_fuzz import _bad_out_dir, _flags, bad_value, make_files, problems, run_cli

    tmp = str(tmp_path)
    make_files(tmp)
    base = SMALL + ["--force", "--cache", f"{tmp}/cache"]
    assert run_cli(base)[0] == 0
    flags = _flags("accuracy")

    @settings(max_examples=int(__import__("os").environ.get("LATENCY_MODEL_FUZZ_EXAMPLES", "150")), deadline=None,
              database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def check(data):
        flag, action = data.draw(st.sampled_from(flags), label="flag")
        strategy = _bad_out_dir(tmp) if flag in ("--out", "--cache") else bad_value("accuracy", flag, action, tmp)
        value = data.draw(strategy, label="value")
        argv, i = [], 0
        drop = {flag} | ({"--jobs"} if flag in ("--scheduler", "--dask-local") else set())
        while i < len(base):
            if base[i] in drop:
                i += 1 if base[i] in ("--quiet", "--force") else 2
                continue
            argv.append(base[i])
            i += 1
        argv.append(f"{flag}={value}")
        found = problems(flag, run_cli(argv))
        assert not found, (argv if len(" ".join(argv)) < 400 else argv[:-1] + ["<long>"], found)

    check()


def test_a_models_size_cap_leaves_its_larger_cells_out_with_the_reason(models_patched, tmp_path):
    # The cap is deterministic (no clock): the fake model is asked only for sizes <= 3 packets,
    # the 8-packet cells are listed as not computed with the cap as reason, never estimated.
    amap = acc.AccuracyMap(models=("fake",), sizes_packets=(1, 3, 8), p=(0.05,), b=(1,), variants=("newreno",),
                           runs=40)
    res = acc.run_accuracy(amap, cache_dir=tmp_path, model_timeout_s=None, max_packets={"fake": 3})
    assert sorted(r["size_packets"] for r in res["rows"]) == [1, 3]
    assert [(nc["model"], nc["size_packets"]) for nc in res["not_computed"]] == [("fake", 8)]
    assert "size cap of 3 packets" in res["not_computed"][0]["reason"]
    assert res["model_max_packets"] == {"fake": 3}


def test_each_model_is_warmed_once_in_the_parent_before_its_calls_are_forked(tmp_path):
    """A model's ``warm`` runs once, in this process, before its first forked call, and the
    forked calls see what it loaded (the fake model's answer is 1000 s longer in a process
    that was not warmed); with one job and no time limit the calls run here, unwarmed."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform: the children import the models afresh")
    mod = _fake_module()
    state = {"warmed": 0}
    base_predict = mod.predict

    def predict(params, sizes_bytes, **options):
        res = base_predict(params, sizes_bytes, **options)
        extra = 0.0 if state["warmed"] else 1000.0
        return registry.Prediction(res.model, res.sizes_bytes, res.expected_latency_s + extra,
                                   res.conditional_latency_s)

    def warm():
        state["warmed"] += 1

    mod.predict, mod.warm = predict, warm
    mp = pytest.MonkeyPatch()
    try:
        install(mp, mod)
        amap = AccuracyMap(models=("fake",), sizes_packets=(2, 3), p=(0.05, 0.1), b=(1, 2),
                           variants=("newreno",), runs=20)
        res = run_accuracy(amap, cache_dir=tmp_path / "forked", jobs=2, model_timeout_s=30.0)
        assert state["warmed"] == 1 and res["model_calls_computed"] == 4
        for r in res["rows"]:  # computed in warmed children
            assert r["model_s"] == pytest.approx(float(fake_latency(_params(amap, r), r["size_packets"])),
                                                 rel=1e-12)
        state["warmed"] = 0
        res = run_accuracy(amap, cache_dir=tmp_path / "inline", jobs=1, model_timeout_s=None)
        assert state["warmed"] == 0 and res["model_calls_computed"] == 4
        assert all(r["model_s"] > 1000.0 for r in res["rows"])
    finally:
        mp.undo()


def test_a_series_calls_run_one_after_the_other_in_one_child(tmp_path):
    """The calls of one chain (one model, one series: everything but p) share a child
    process, so what a call keeps in the model's module (the fluid model's tables) serves
    the next; each chain has its own child, and none runs in this process."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    mod = _fake_module()
    base_predict = mod.predict
    log = tmp_path / "calls.txt"

    def predict(params, sizes_bytes, **options):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {params.b} {params.p}\n")
        return base_predict(params, sizes_bytes, **options)

    mod.predict = predict
    mp = pytest.MonkeyPatch()
    try:
        install(mp, mod)
        amap = AccuracyMap(models=("fake",), sizes_packets=(2, 3), p=(0.05, 0.1, 0.2), b=(1, 2),
                           variants=("newreno",), runs=20)
        res = run_accuracy(amap, cache_dir=tmp_path / "c", jobs=2, model_timeout_s=30.0)
        assert res["model_calls_computed"] == 6 and len(res["rows"]) == 12
        calls = [line.split() for line in log.read_text().splitlines()]
        pids = {b: {pid for pid, bb, _ in calls if bb == b} for b in ("1", "2")}
        assert len(calls) == 6 and all(len(v) == 1 for v in pids.values())
        assert pids["1"] != pids["2"] and str(os.getpid()) not in pids["1"] | pids["2"]
        for b in ("1", "2"):  # in ascending p within the series
            assert [float(p) for _, bb, p in calls if bb == b] == [0.05, 0.1, 0.2]
        for r in res["rows"]:
            assert r["model_s"] == pytest.approx(float(fake_latency(_params(amap, r), r["size_packets"])),
                                                 rel=1e-12)
    finally:
        mp.undo()


def test_the_dearest_chains_are_estimated_dearest():
    """``_chain_seconds`` orders the map's chains (dearest started first): a chain's cost
    is the sum of its calls'; the packet model's grows with an ACK per segment and with
    the sizes asked (its cap leaves the larger out); a model asked for nothing costs 0."""
    from latency_model.params import TcpParams

    sizes = (1, 2, 5, 20, 200)

    def sets(ps, b=2):
        out = []
        for p in ps:
            params = TcpParams(p=p, b=b)
            out.append((params, [type("Pt", (), {"size_bytes": n * params.mss_bytes})() for n in sizes]))
        return out

    cost = acc._chain_seconds
    assert cost("packet", sets([0.01, 0.2])) == pytest.approx(cost("packet", sets([0.01])) + cost("packet", sets([0.2])))
    assert cost("packet", sets([0.1], b=2)) < cost("packet", sets([0.1], b=1))
    assert cost("packet", sets([0.1]), {"packet": 20}) < cost("packet", sets([0.1]))
    assert cost("packet", sets([0.1]), {"packet": 0.5}) == 0.0
    assert 0.0 < cost("fluid", sets([0.1])) < cost("fluid", sets([0.01, 0.1]))
    # the linux profile's SACK sender runs on the tree DP: its own estimate, each size's cost
    from latency_model.checks import packet_tree_seconds

    assert cost("packet", sets([0.1]), {"packet": 20}, True) == pytest.approx(packet_tree_seconds(0.1, [1, 2, 5, 20]))
