"""sweep refuses a flag or a grid axis that no row of the sweep reads (one line, exit 2),
or lets it take effect; it never writes fewer rows than it reports."""

import csv
import json

import pytest

from latency_model.studies.sweep import SweepSpec, grid_from_items, plan_sweep, run_sweep
from _cli import run


def refused(capsys, tmp_path, argv, *needles):
    out = tmp_path / "x.csv"
    code, _, err = run(capsys, "sweep", *argv, "--jobs", "1", "--quiet", "--out", str(out))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    for n in needles:
        assert n in err, err
    assert not out.exists() and not (tmp_path / "x.csv.json").exists()


def rows(path):
    return list(csv.DictReader(open(path)))


# ---------------------------------------------------------------------------
# 1. a stack axis (or --stack) in a model-only sweep


def test_stack_axis_without_a_model_that_reads_it_is_refused(capsys, tmp_path):
    refused(capsys, tmp_path, ["--param", "stack=rfc,ns3,linux", "--param", "size-packets=2"],
            "stack", "--param")
    refused(capsys, tmp_path, ["--param", "stack=rfc,ns3", "--param", "model=pftk", "--param", "size-packets=2"],
            "stack", "pftk")


@pytest.mark.parametrize("argv", [["--stack", "linux"],
                                  ["--stack", "ns3", "--param", "model=fluid,csa"]])
def test_stack_flag_without_a_model_that_reads_it_is_refused(capsys, tmp_path, argv):
    refused(capsys, tmp_path, ["--param", "size-packets=1,3", *argv], "--stack")


def latency_packet(capsys, stack, size):
    code, out, err = run(capsys, "latency", "--model", "packet", "--stack", stack, "--size-packets", str(size),
                         "--json")
    assert code == 0, err
    return json.loads(out)["results"][0]["expected_latency_s"]


def test_packet_model_stack_axis_takes_effect_per_stack(capsys, tmp_path):
    out = tmp_path / "st.csv"
    code, printed, err = run(capsys, "sweep", "--param", "model=packet", "--param", "stack=rfc,ns3",
                             "--param", "size-packets=2", "--jobs", "1", "--quiet", "--out", str(out))
    assert code == 0, err
    got = rows(out)
    assert [r["stack"] for r in got] == ["rfc", "ns3"]  # every planned row is written
    assert "(2 rows, 2 grid points" in printed
    side = json.loads((tmp_path / "st.csv.json").read_text())
    assert side["rows"] == side["rows_done"] == 2 and side["status"] == "complete"
    for r in got:
        assert float(r["expected_latency_s"]) == pytest.approx(latency_packet(capsys, r["stack"], 2), rel=1e-9)
    assert len({r["expected_latency_s"] for r in got}) == 2


def test_packet_model_alone_runs_the_linux_profile_as_simulated(capsys, tmp_path):
    # the SACK sender runs on the simulator's own transitions: nothing of the linux profile is
    # left out, so nothing is refused, and the row is `latency --model packet --stack linux`'s
    out = tmp_path / "l.csv"
    code, _, err = run(capsys, "sweep", "--param", "model=packet", "--param", "stack=linux", "--param",
                       "size-packets=2", "--jobs", "1", "--quiet", "--out", str(out))
    assert code == 0, err
    (r,) = rows(out)
    from latency_model import TcpParams
    from latency_model.model.packet import expected_latency
    from latency_model.sim import SimConfig

    # the sweep's TcpParams are its grid's (W0 2, rule standard), the stack its SimConfig
    (want,) = expected_latency(TcpParams(), size_packets=[2], config=SimConfig.profile("linux"))
    assert float(r["expected_latency_s"]) == pytest.approx(want.expected_latency_s, rel=1e-9)


def test_packet_model_stack_flag_takes_effect(capsys, tmp_path):
    out = tmp_path / "s.csv"
    code, _, err = run(capsys, "sweep", "--param", "model=packet", "--param", "size-packets=2", "--stack", "ns3",
                       "--jobs", "1", "--quiet", "--out", str(out))
    assert code == 0, err
    (r,) = rows(out)
    assert r["stack"] == "ns3"
    assert float(r["expected_latency_s"]) == pytest.approx(latency_packet(capsys, "ns3", 2), rel=1e-9)
    assert float(r["expected_latency_s"]) != pytest.approx(latency_packet(capsys, "rfc", 2), rel=1e-6)


def test_fluid_and_packet_with_a_stack_axis_write_every_row(tmp_path):
    spec = SweepSpec(grid_from_items(["model=fluid,packet", "stack=rfc,ns3", "size-packets=1,2"]))
    plan = plan_sweep(spec)
    assert plan.n_rows == 8
    assert len({pt.key for t in plan.tasks for pt in t.points}) == 8
    report = run_sweep(spec, tmp_path / "b.csv")
    assert report.n_rows == 8 and len(rows(tmp_path / "b.csv")) == 8


def test_api_stack_axis_without_a_reader_is_refused():
    with pytest.raises(ValueError, match="stack is an axis"):
        plan_sweep(SweepSpec(grid_from_items(["stack=rfc,ns3", "size-packets=2"])))


def test_rows_with_one_key_are_refused_at_planning(monkeypatch):
    # the guard: two points whose rows do not differ are an internal error naming the axes
    from latency_model.studies.sweep import plan as plan_mod

    monkeypatch.setattr(plan_mod, "_digest", lambda obj: "same")
    with pytest.raises(ValueError, match=r"internal error.*same key.*p=0\.1 vs 0\.2"):
        plan_sweep(SweepSpec(grid_from_items(["p=0.1,0.2", "size-packets=2"])))


def test_run_sweep_never_reports_success_with_rows_lost(monkeypatch, tmp_path):
    from latency_model.studies.sweep import plan as plan_mod, run as run_mod

    spec = SweepSpec(grid_from_items(["p=0.1,0.2", "size-packets=2"]))
    monkeypatch.setattr(plan_mod, "_check_keys", lambda *a: None)
    monkeypatch.setattr(plan_mod, "_digest", lambda obj: "same")
    plan = plan_sweep(spec)
    monkeypatch.setattr(run_mod, "plan_sweep", lambda s: plan)
    with pytest.raises(ValueError, match="planned 2 rows and wrote 1"):
        run_sweep(spec, tmp_path / "x.csv", plan=plan)
    assert json.loads((tmp_path / "x.csv.json").read_text())["status"] == "failed"


# ---------------------------------------------------------------------------
# 2. flags that do not apply to the sweep's rows


@pytest.mark.parametrize("argv, flag", [
    (["--min-rto-s", "3"], "--min-rto-s"),
    (["--runs", "5", "--seed", "3"], "--runs, --seed"),
    (["--engine", "python"], "--engine"),
    (["--link-rate-bps", "1e6"], "--link-rate-bps"),
    (["--no-fin"], "--no-fin"),
    (["--rto-rule", "paper"], "--rto-rule"),
])
def test_simulator_flags_without_simulated_rows_are_refused(capsys, tmp_path, argv, flag):
    refused(capsys, tmp_path, ["--param", "size-packets=1,3", *argv], flag, "--what simulation or both")


@pytest.mark.parametrize("argv, flag", [
    (["--what", "simulation", "--runs", "50", "--law", "exact"], "--law"),
    (["--what", "simulation", "--runs", "50", "--time-model", "rounds"], "--time-model"),
    (["--param", "model=pftk", "--law", "exact", "--time-model", "rounds"], "--law, --time-model"),
    (["--param", "model=packet,csa", "--what", "both", "--runs", "5", "--law", "paper"], "--law"),
])
def test_fluid_flags_without_fluid_rows_are_refused(capsys, tmp_path, argv, flag):
    refused(capsys, tmp_path, ["--param", "size-packets=1,3", *argv], flag, "fluid model only")


def test_grid_file_settings_no_row_reads_are_refused(capsys, tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('runs = 5\n[params]\nsize-packets = [1, 3]\n')
    refused(capsys, tmp_path, ["--grid", str(grid)], "runs in --grid")
    grid.write_text('what = "simulation"\nlaw = "exact"\n[params]\nsize-packets = [1, 3]\n')
    refused(capsys, tmp_path, ["--grid", str(grid), "--runs", "5"], "--law", "fluid model only")


def test_the_flags_still_work_where_they_are_read(capsys, tmp_path):
    out = tmp_path / "ok.csv"
    code, _, err = run(capsys, "sweep", "--param", "size-packets=1,3", "--param", "model=fluid,pftk", "--law",
                       "exact", "--jobs", "1", "--quiet", "--out", str(out))
    assert code == 0, err
    assert {r["law"] for r in rows(out) if r["model"] == "fluid"} == {"exact"}


@pytest.mark.parametrize("kw, name", [
    ({"what": "simulation", "law": "exact"}, "law"),
    ({"what": "simulation", "time_model": "rounds"}, "time_model"),
])
def test_api_fluid_settings_without_fluid_rows_are_refused(kw, name):
    with pytest.raises(ValueError, match=f"{name} is read by the fluid model only"):
        SweepSpec(grid_from_items(["size-packets=2"]), runs=2, **kw)
    with pytest.raises(ValueError, match=f"{name} is read by the fluid model only"):
        SweepSpec(grid_from_items(["size-packets=2", "model=pftk"]), **{**kw, "what": "model"})


def test_api_sim_config_without_a_reader_is_refused():
    from latency_model.sim.config import SimConfig

    with pytest.raises(ValueError, match="sim_config sets up"):
        SweepSpec(grid_from_items(["size-packets=2"]), sim_config=SimConfig.profile("ns3"))


def test_model_only_packet_set_up_is_in_the_sidecar_and_the_estimate(tmp_path):
    # alone, the packet model follows the stack it is given: the linux profile's SACK
    # sender runs on the tree DP, and the sidecar records the set-up
    from latency_model.checks import packet_tree_seconds
    from latency_model.sim.config import SimConfig
    from latency_model.studies.sweep import estimate_sweep

    items = ["model=packet", "p=0.1", "b=2", "w0=10", "size-packets=40,60", "stack=linux"]
    est = estimate_sweep(SweepSpec(grid_from_items(items), what="model"))
    assert est.cpu_seconds == pytest.approx(packet_tree_seconds(0.1, [40, 60]))
    spec = SweepSpec(grid_from_items(["model=packet", "size-packets=2"]), sim_config=SimConfig.profile("ns3"))
    assert spec.settings()["sim_config"]["sender"] == "ns3"


def test_plan_refuses_what_a_row_would_not_read_before_any_row_runs(tmp_path):
    # Without a model axis the fluid rows were not checked (variant er ran as NewReno), and
    # ER under RACK-TLP was refused only when the simulator reached that cell, after the
    # NewReno rows had been written.
    from latency_model.sim.config import SimConfig

    with pytest.raises(ValueError, match="model fluid: the fluid model does not read early_retransmit"):
        plan_sweep(SweepSpec(grid_from_items(["variant=newreno,er", "size-packets=1,2"])))
    with pytest.raises(ValueError, match=r"has no effect under RACK-TLP .*\(at variant=er"):
        plan_sweep(SweepSpec(grid_from_items(["variant=newreno,er", "size-packets=1,2"]), what="simulation",
                             runs=5, sim_config=SimConfig.profile("linux")))
    assert len(plan_sweep(SweepSpec(grid_from_items(["variant=newreno,lt", "size-packets=1,2"]))).tasks) >= 1
