"""The sweep engine (latency_model.studies.sweep): grid syntax, planning, seeds, executors, resume."""

from __future__ import annotations

import csv
import sys

import numpy as np
import pytest

from latency_model import TcpParams, apply_variant, make_rule
from latency_model.studies.sweep import run as sweep_run
from latency_model.model.recursion import SolverOptions, conditional_latency, expected_latency
from latency_model.sim import OUT_FIELDS, SimConfig, mean_ci, run_many
from latency_model.studies.sweep import (
    SweepInterrupted,
    SweepSpec,
    canonical_name,
    grid_from_items,
    grid_from_toml,
    parse_values,
    plan_sweep,
    read_rows,
    run_sweep,
)
from latency_model.model.thresholds import filesize_min, y_to


# ---------------------------------------------------------------------------
# grid syntax


def test_values_lists_ranges_and_logspace():
    assert parse_values("p", "0.01,0.1") == [0.01, 0.1]
    assert parse_values("size_packets", "1:5") == [1, 2, 3, 4, 5]
    assert parse_values("size_packets", "2:10:4") == [2, 6, 10]
    assert parse_values("size_packets", "1,3:4") == [1, 3, 4]
    assert parse_values("rtt_s", "0.1:0.3:0.1") == [0.1, 0.2, 0.30000000000000004]
    lg = parse_values("p", "logspace:0.001:0.1:3")
    assert lg[0] == pytest.approx(1e-3, rel=1e-15) and lg[2] == pytest.approx(0.1, rel=1e-15)
    assert lg[1] == pytest.approx(0.01, rel=1e-14)  # geometric midpoint of the endpoints
    assert parse_values("dup_lt", "none,1,2") == [None, 1, 2]
    assert parse_values("variant", "newreno,lt") == ["newreno", "lt"]
    assert parse_values("p", [0.01, "0.1:0.2:0.1"]) == [0.01, 0.1, 0.2]  # TOML lists


@pytest.mark.parametrize("name,text,match", [
    ("p", "0.2:0.1", "empty"),
    ("p", "0.1:0.2:0", "step must be > 0"),
    ("p", "0.1,0.1", "twice"),
    ("p", "logspace:0:1:3", "bounds must be > 0"),
    ("p", "logspace:0.1:1", "logspace:a:b:n"),
    ("p", "0.1,,0.2", "empty value"),
    ("p", "a:b", "finite numbers"),
])
def test_bad_values_raise_naming_the_parameter(name, text, match):
    with pytest.raises(ValueError, match=match):
        parse_values(name, text)


def test_names_accept_field_and_flag_spellings():
    assert canonical_name("rtt") == canonical_name("rtt_s") == "rtt_s"
    assert canonical_name("dup-t") == "dup_t"
    assert canonical_name("wss") == "w_ss"
    assert canonical_name("size-packets") == "size_packets"
    assert canonical_name("rule-param.beta") == "rule_param.beta"
    with pytest.raises(ValueError, match="unknown sweep parameter 'bogus'"):
        canonical_name("bogus")
    with pytest.raises(ValueError, match="given twice"):
        grid_from_items(["rtt=0.1", "rtt_s=0.2"])
    with pytest.raises(ValueError, match="not both"):
        grid_from_items(["size-bytes=500", "size-packets=1"])


def test_toml_grid_file(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('what = "both"\nruns = 7\n[params]\np = [0.05, 0.1]\n"size-packets" = "1:3"\nvariant = "lt"\n')
    grid, settings = grid_from_toml(f)
    assert grid.to_dict() == {"p": [0.05, 0.1], "variant": ["lt"], "size_packets": [1, 2, 3]}
    assert settings == {"what": "both", "runs": 7}
    f.write_text("[params]\np = 0.1\nbogus = 1\n")
    with pytest.raises(ValueError, match="unknown sweep parameter 'bogus'"):
        grid_from_toml(f)
    f.write_text("colour = 1\n")
    with pytest.raises(ValueError, match="unknown key 'colour'"):
        grid_from_toml(f)


# ---------------------------------------------------------------------------
# planning


def test_points_in_grid_order_sizes_innermost_and_validated():
    plan = plan_sweep(SweepSpec(grid_from_items(["size-packets=1,2", "p=0.05,0.1", "variant=newreno,lt"])))
    assert plan.n_points == 8
    pts = [pt for t in plan.tasks for pt in t.points]
    assert [pt.index for pt in pts] == list(range(8))
    got = [(pt.params.p, pt.params.dup_lt, pt.size_bytes) for pt in pts]
    want = [(p, lt, n * 500.0) for p in (0.05, 0.1) for lt in (None, 2) for n in (1, 2)]
    assert got == want
    assert len(plan.tasks) == 4  # one model task per parameter set: sizes are vectorised
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\), got 1.5 \(at p=1.5\)"):
        plan_sweep(SweepSpec(grid_from_items(["p=0.1,1.5", "size-packets=1"])))
    with pytest.raises(ValueError, match="variant must be one of"):
        plan_sweep(SweepSpec(grid_from_items(["variant=reno"])))
    with pytest.raises(ValueError, match="rule-param.gamma is not a parameter of rule 'generalized'"):
        plan_sweep(SweepSpec(grid_from_items(["rule=generalized", "rule-param.gamma=2"])))
    with pytest.raises(ValueError, match="whole bytes"):
        plan_sweep(SweepSpec(grid_from_items(["size-packets=1.001"]), what="simulation"))


def test_size_based_variant_resolves_per_size_and_recovery_fields_override_the_variant():
    plan = plan_sweep(SweepSpec(grid_from_items(["variant=size-based", "size-bytes=5000,20000"])))
    a, b = plan.tasks[0].points
    assert a.params == apply_variant(TcpParams(), "proposal") and b.params == apply_variant(TcpParams(), "lt")
    plan = plan_sweep(SweepSpec(grid_from_items(["variant=lt", "dup-lt=1", "size-packets=1"])))
    assert plan.tasks[0].points[0].params.dup_lt == 1


def test_model_chunks_are_fixed_by_the_grid():
    plan = plan_sweep(SweepSpec(grid_from_items(["size-packets=1:7"]), model_chunk=3))
    assert [len(t.points) for t in plan.tasks] == [3, 3, 1]


# ---------------------------------------------------------------------------
# values: the rows are the solver's and the simulator's own numbers


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_model_rows_are_the_solver_values_of_each_size_alone(tmp_path):
    spec = SweepSpec(grid_from_items(["p=0.1", "variant=newreno,proposal", "size-packets=1,2"]))
    rows = _rows(run_sweep(spec, tmp_path / "m.csv").out)
    assert len(rows) == 4
    for r in rows:
        P = apply_variant(TcpParams(p=0.1), r["variant"])
        size = float(r["size_bytes"])
        res = expected_latency(P, size_bytes=[size])  # alone: the sweep solved it among other sizes
        assert res.k_max >= 4  # p = 0.1: L_0..L_3 are all in the sum
        assert float(r["expected_latency_s"]) == res.expected_latency_s[0]
        assert [float(r[f"latency_k{k}_s"]) for k in range(4)] == list(res.conditional_latency_s[0, :4])
        assert float(r["y_to_bytes"]) == float(y_to(P)) and float(r["filesize_min_bytes"]) == float(filesize_min(P))
        assert r["time_model"] == "fluid" and r["source"] == "model"
        assert int(r["k_max"]) == res.k_max


def test_l0_to_l3_are_written_even_when_the_sum_stops_before_k_3(tmp_path):
    P = TcpParams(p=1e-4)
    assert expected_latency(P, size_bytes=[500.0]).k_max < 4
    r = _rows(run_sweep(SweepSpec(grid_from_items(["p=1e-4", "size-packets=1"])), tmp_path / "s.csv").out)[0]
    assert [float(r[f"latency_k{k}_s"]) for k in range(4)] == list(conditional_latency(P, size_bytes=[500.0], k=[0, 1, 2, 3])[0])
    assert int(r["k_max"]) == expected_latency(P, size_bytes=[500.0]).k_max


def test_rule_without_continuous_law_uses_rounds(tmp_path):
    spec = SweepSpec(grid_from_items(["rule=btcp", "p=0.05", "size-packets=1"]))
    r = _rows(run_sweep(spec, tmp_path / "b.csv").out)[0]
    P = TcpParams(p=0.05, rule=make_rule("btcp"))
    assert r["time_model"] == "rounds"
    want = expected_latency(P, size_bytes=[500.0], options=SolverOptions(time_model="rounds")).expected_latency_s[0]
    assert float(r["expected_latency_s"]) == want
    with pytest.raises(ValueError, match="continuous fluid law"):
        plan_sweep(SweepSpec(grid_from_items(["rule=btcp"]), time_model="fluid"))


def test_simulation_point_seed_is_child_i_of_the_root_seed(tmp_path):
    # 2 x 2 points; point 3 must be run from SeedSequence(11).spawn(4)[3], whatever else runs
    spec = SweepSpec(grid_from_items(["p=0.05,0.2", "size-packets=2,4"]), what="simulation", runs=20, seed=11,
                     engine="python")
    rows = _rows(run_sweep(spec, tmp_path / "s.csv").out)
    r = rows[3]
    assert (r["point"], r["p"], r["size_bytes"]) == ("3", "0.2", "2000")
    child = np.random.SeedSequence(11).spawn(4)[3]
    samples = run_many(TcpParams(p=0.2), 2000, child.spawn(20), SimConfig(), engine="python")
    lat = samples[:, OUT_FIELDS.index("completion_s")]
    mean, ci = mean_ci(lat)
    assert float(r["expected_latency_s"]) == mean
    assert (float(r["ci95_low_s"]), float(r["ci95_high_s"])) == ci
    assert float(r["timeout_fraction"]) == np.mean(samples[:, OUT_FIELDS.index("timeouts")] > 0)
    assert r["runs"] == "20" and r["seed"] == "11"


# ---------------------------------------------------------------------------
# executors and resume (engine "python": the numba kernel gives the same numbers but each
# worker process would first spend seconds compiling it)


GRID = ["p=0.05,0.1", "variant=newreno,lt", "size-packets=1"]  # size 1: a fast solve


def _spec(**kw):
    return SweepSpec(grid_from_items(GRID), what="both", runs=30, seed=5, engine="python", **kw)


@pytest.fixture(scope="module")
def serial_text(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial") / "serial.csv"
    run_sweep(_spec(), out)
    return out.read_text()


def test_serial_table_is_tidy_and_complete(serial_text):
    rows = list(csv.DictReader(serial_text.splitlines()))
    assert len(rows) == 8  # 4 points x (model, simulation)
    assert [(r["point"], r["source"]) for r in rows] == [(str(i), s) for i in range(4) for s in ("model", "simulation")]
    assert len({r["key"] for r in rows}) == 8


def test_two_processes_give_the_serial_table(tmp_path, serial_text):
    out = tmp_path / "p.csv"
    run_sweep(_spec(), out, jobs=2)
    assert out.read_text() == serial_text


def test_dask_local_cluster_gives_the_serial_table(tmp_path, serial_text):
    distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (the [dask] extra)")
    # threads, not processes: worker processes take tens of seconds to start on a loaded CI box;
    # the task path (submit, as_completed, results back in grid order) is the same.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        run_sweep(_spec(), tmp_path / "d.csv", client=client)
    assert (tmp_path / "d.csv").read_text() == serial_text


def test_interrupted_sweep_keeps_finished_rows_and_resumes_to_the_serial_table(tmp_path, serial_text, monkeypatch):
    out = tmp_path / "r.csv"
    real = sweep_run.run_task
    calls = []

    def flaky(task):
        calls.append(task)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(sweep_run, "run_task", flaky)
    with pytest.raises(SweepInterrupted) as info:
        run_sweep(_spec(), out, flush_interval_s=10.0)  # the final save must not wait for the interval
    monkeypatch.setattr(sweep_run, "run_task", real)
    cols, rows = read_rows(out)
    # tasks run in grid order: model 0, sim 0, model 1, sim 1, then the interrupt
    assert info.value.report.rows_computed == len(rows) == 4
    serial = {r["key"]: r for r in csv.DictReader(serial_text.splitlines())}
    assert all(serial[r["key"]] == r for r in rows)  # every saved row is final
    assert [(r["point"], r["source"]) for r in rows] == [("0", "model"), ("0", "simulation"),
                                                         ("1", "model"), ("1", "simulation")]
    rep = run_sweep(_spec(), out)
    assert (rep.rows_resumed, rep.rows_computed) == (4, 4)
    assert out.read_text() == serial_text
    rep = run_sweep(_spec(), out)  # nothing left: nothing recomputed
    assert (rep.rows_resumed, rep.rows_computed) == (8, 0)


def test_resume_refuses_another_sweeps_file_unless_forced(tmp_path):
    out = tmp_path / "x.csv"
    run_sweep(SweepSpec(grid_from_items(["p=0.1", "size-packets=1"])), out)
    other = SweepSpec(grid_from_items(["p=0.2", "size-packets=1"]))
    with pytest.raises(ValueError, match="another sweep"):
        run_sweep(other, out)
    rep = run_sweep(other, out, force=True)
    assert rep.rows_computed == 1 and _rows(out)[0]["p"] == "0.2"


def test_parquet_without_pyarrow_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    with pytest.raises(ValueError, match=r"needs pyarrow \(pip install pyarrow\)"):
        run_sweep(SweepSpec(grid_from_items(["size-packets=1"])), tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()


def test_parquet_round_trip_when_pyarrow_is_installed(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is optional and not installed")
    spec = SweepSpec(grid_from_items(["p=0.1", "size-packets=1,2"]))
    run_sweep(spec, tmp_path / "a.csv")
    run_sweep(spec, tmp_path / "a.parquet")
    assert read_rows(tmp_path / "a.parquet") == read_rows(tmp_path / "a.csv")
