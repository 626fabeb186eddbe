"""Loss recovery by name (issue 17): ``--recovery NAME`` on the simulating commands and the
sweep's ``recovery`` axis select the SACK, PRR and RACK-TLP machinery of
:data:`latency_model.sim.profiles.RECOVERIES`; a name stands for its SimConfig fields, exactly."""

from __future__ import annotations

import csv
import json

import pytest

from latency_model.cli import main
from latency_model.sim import SimConfig
from latency_model.sim.profiles import RECOVERIES, recovery_overrides
from latency_model.studies.sweep import SweepSpec, grid_from_items, plan_sweep, run_sweep

GRID = ["size-packets=3,12", "p=0.1"]
SIM_COLUMNS = ("timeout_fraction", "mean_lost_packets")


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_every_recovery_is_a_valid_configuration_of_every_stack_that_has_a_sack_sender():
    for name, fields in RECOVERIES.items():
        for stack in ("rfc", "linux"):
            cfg = SimConfig.profile(stack, **recovery_overrides(name))
            assert {k: getattr(cfg, k) for k in fields} == fields
    with pytest.raises(ValueError, match="recovery must be one of newreno, sack"):
        recovery_overrides("rack")


def test_a_recovery_axis_value_runs_what_the_flags_run(tmp_path):
    # The same single grid point (same point index, so the same seeds): the axis value
    # sack-rack-tlp and the flags --sender sack --rack-tlp --prr off give equal simulated rows.
    fields = {"sender": "sack", "rack_tlp": True, "prr": "off"}
    run_sweep(SweepSpec(grid_from_items(["recovery=sack-rack-tlp", *GRID]), what="simulation", runs=300),
              tmp_path / "axis.csv")
    run_sweep(SweepSpec(grid_from_items(GRID), what="simulation", runs=300, sim_config=SimConfig(**fields),
                        sim_overrides=fields), tmp_path / "flags.csv")
    a, f = _rows(tmp_path / "axis.csv"), _rows(tmp_path / "flags.csv")
    assert [r["recovery"] for r in a] == ["sack-rack-tlp"] * 2 and "recovery" not in f[0]
    cols = [c for c in a[0] if c.endswith("_s") or c in SIM_COLUMNS]
    assert cols and [[r[c] for c in cols] for r in a] == [[r[c] for c in cols] for r in f]
    # and RACK-TLP is not a no-op here: NewReno's rows at the same points differ
    run_sweep(SweepSpec(grid_from_items(GRID), what="simulation", runs=300), tmp_path / "p.csv")
    plain = _rows(tmp_path / "p.csv")
    assert [r["expected_latency_s"] for r in plain] != [r["expected_latency_s"] for r in a]


def test_recovery_rows_keep_their_axis_order_and_the_model_rows_repeat(tmp_path):
    run_sweep(SweepSpec(grid_from_items(["recovery=newreno,sack", *GRID]), what="both", runs=50),
              tmp_path / "s.csv")
    rows = _rows(tmp_path / "s.csv")
    assert [(r["recovery"], r["source"]) for r in rows] == [
        (rec, src) for rec in ("newreno", "sack") for _ in range(2) for src in ("model", "simulation")]
    model = [r["expected_latency_s"] for r in rows if r["source"] == "model"]
    assert model[:2] == model[2:]  # the model does not see the recovery
    assert len({r["key"] for r in rows}) == len(rows)


@pytest.mark.parametrize("items,what,match", [
    (["recovery=newreno"], "model", "recovery is an axis of the simulated rows"),
    (["recovery=nope"], "simulation", "recovery must be one of newreno"),
])
def test_bad_recovery_axes_are_refused_before_any_work(items, what, match):
    with pytest.raises(ValueError, match=match):
        plan_sweep(SweepSpec(grid_from_items([*items, "size-packets=2"]), what=what, runs=2))


def test_cli_recovery_flag_is_the_fields_and_clashes_are_one_line(capsys):
    def sim_config(*extra):
        assert main(["simulate", "--size-packets", "4", "--runs", "5", "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)["sim_config"]

    assert sim_config("--recovery", "sack-rack-tlp-prr") == sim_config("--sender", "sack", "--rack-tlp",
                                                                       "--prr", "ssrb")
    assert sim_config("--stack", "linux", "--recovery", "newreno")["sender"] == "rfc"
    for argv, needle in ((["--recovery", "sack", "--rack-tlp"], "--rack-tlp, not both"),
                         (["--recovery", "bogus"], "--recovery must be one of")):
        assert main(["simulate", "--size-packets", "4", "--runs", "5", *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and needle in err
