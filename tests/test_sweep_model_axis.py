"""The sweep's ``model`` axis (issue 18): ``--param model=fluid,NAME`` gives each grid point one
row per model, the model named in every row and in the comparison notes; without the axis a
sweep is what it was before the axis existed, bit for bit (columns, keys, rows, sidecar).

A stand-in model is registered for the test (``fake``: a closed form, newreno only), so that
the tests neither depend on the other models' modules nor pay for them.
"""

from __future__ import annotations

import csv
import hashlib
import json

import pytest

from _fake_model import fake_module, install
from latency_model.studies.sweep import COLUMNS, SweepSpec, estimate_sweep, grid_from_items, plan_sweep, run_sweep

FAKE = "h4_fake_sweep_model"


@pytest.fixture
def fake():
    """The registry holds fluid and ``fake``: L = RTT (1 + n) + p n seconds for n packets,
    L_0 = RTT (1 + n), L_1 = L_0 + 1 (newreno only)."""
    def latency(params, n):
        l0 = params.rtt_s * (1.0 + n)
        return l0 + params.p * n, l0

    mp = pytest.MonkeyPatch()
    install(mp, fake_module(FAKE, latency))
    yield
    mp.undo()


def _read(path):
    with open(path, newline="") as fh:
        r = csv.DictReader(fh)
        return r.fieldnames, list(r)


GRID = ["p=0.05,0.1", "size-packets=2,5"]


def test_rows_carry_the_model_each_point_models_in_axis_order_then_simulation(fake, tmp_path):
    spec = SweepSpec(grid_from_items(["model=fluid,fake", *GRID]), what="both", runs=20)
    rep = run_sweep(spec, tmp_path / "s.csv")
    cols, rows = _read(rep.out)
    assert cols[:4] == ["point", "source", "model", "key"] and cols[3:] == [*COLUMNS[2:], "row_crc32"]
    assert [(r["point"], r["source"], r["model"]) for r in rows] == [
        (str(i), s, m) for i in range(4) for s, m in (("model", "fluid"), ("model", "fake"), ("simulation", ""))]
    assert rep.n_points == 4 and rep.n_rows == 12
    for r in rows:
        if r["model"] == "fake":
            n, p = float(r["size_packets"]), float(r["p"])
            assert float(r["expected_latency_s"]) == pytest.approx(0.1 * (1 + n) + p * n, rel=1e-15)
            assert float(r["latency_k1_s"]) == pytest.approx(0.1 * (1 + n) + 1.0, rel=1e-15)
            assert r["latency_k2_s"] == r["latency_k3_s"] == ""  # the model gives L_0, L_1 only
            assert r["time_model"] == r["law"] == r["y_to_bytes"] == ""  # the fluid solver's settings
    side = json.loads((tmp_path / "s.csv.json").read_text())
    assert side["settings"]["models"] == ["fluid", "fake"]
    notes = side["settings"]["comparison_notes"]
    assert notes[0].startswith("model fluid: the simulator's RTO backs off")
    assert notes[-1].startswith("model fake: no difference from the simulator is declared here")


def _no_axis_key(row: dict) -> str:
    """The key of a row of a ``what="both"`` sweep on the rfc stack, as documented
    (studies/sweep/__init__.py), rebuilt from the row's cells."""
    from latency_model import TcpParams, apply_variant

    params = apply_variant(TcpParams(p=float(row["p"])), row["variant"])
    size_b = int(row["size_bytes"])  # packets x MSS: an int, as the plan computes it
    if row["source"] == "model":
        method = {"time_model": row["time_model"], "law": row["law"]}
        what = {"source": "model", "params": params.to_dict(), "size_bytes": size_b, "method": method,
                "stack": "rfc"}  # a sweep that simulates too names the stack in every key
    else:
        from latency_model.sim import SimConfig

        method = {"runs": int(row["runs"]), "seed": int(row["seed"]), "point": int(row["point"]),
                  "sim_config": SimConfig().to_dict()}
        what = {"source": "simulation", "params": params.to_dict(), "size_bytes": size_b, "method": method,
                "stack": "rfc"}
    text = json.dumps(what, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def test_without_the_axis_the_table_keys_and_sidecar_are_as_before(fake, tmp_path):
    plain = run_sweep(SweepSpec(grid_from_items(GRID), what="both", runs=20), tmp_path / "a.csv")
    cols, rows = _read(plain.out)
    assert cols == [*COLUMNS, "row_crc32"]  # no model column
    assert [r["source"] for r in rows] == ["model", "simulation"] * 4
    for r in rows:
        assert r["key"] == _no_axis_key(r)
    side = json.loads((tmp_path / "a.csv.json").read_text())
    assert "models" not in side["settings"] and not any(n.startswith("model ") for n in
                                                        side["settings"]["comparison_notes"])
    # With a fluid-only axis: the same numbers, a model column, and the simulation rows unchanged
    # (same points, same seeds, same keys): only the model rows' keys name the model.
    axis = run_sweep(SweepSpec(grid_from_items(["model=fluid", *GRID]), what="both", runs=20), tmp_path / "b.csv")
    cols_b, rows_b = _read(axis.out)
    assert cols_b == COLUMNS[:2] + ["model"] + COLUMNS[2:] + ["row_crc32"]
    for a, b in zip(rows, rows_b):
        assert b["model"] == ("fluid" if a["source"] == "model" else "")
        same = {k: v for k, v in b.items() if k not in ("model", "row_crc32")}  # the check covers every cell
        a = {k: v for k, v in a.items() if k != "row_crc32"}
        if a["source"] == "simulation":
            assert same == a
        else:
            assert same["key"] != a["key"]
            assert {k: v for k, v in same.items() if k != "key"} == {k: v for k, v in a.items() if k != "key"}


def test_a_model_only_sweep_keeps_its_columns_and_runs_one_model_per_row(fake, tmp_path):
    rep = run_sweep(SweepSpec(grid_from_items(["model=fake,fluid", *GRID])), tmp_path / "m.csv")
    _, rows = _read(rep.out)
    assert [r["model"] for r in rows] == ["fake", "fluid"] * 4 and {r["source"] for r in rows} == {"model"}
    again = run_sweep(SweepSpec(grid_from_items(["model=fake,fluid", *GRID])), tmp_path / "m.csv")
    assert (again.rows_computed, again.rows_resumed) == (0, 8)


def test_cost_counts_one_row_per_model_and_point(fake):
    est = estimate_sweep(SweepSpec(grid_from_items(["model=fluid,fake", *GRID]), what="both", runs=10))
    assert est.n_rows == 4 * 3
    assert plan_sweep(SweepSpec(grid_from_items(["model=fluid,fake", *GRID]), what="both", runs=10)).n_rows == 12


@pytest.mark.parametrize("items,what,match", [
    (["model=nope"], "model", r"model must be one of fluid, fake \(installed here: fluid, fake\), got 'nope'"),
    (["model=fake", "variant=newreno,lt"], "model",
     r"model fake: the fake model supports the newreno variant only \(at variant=lt\)"),
    (["model=fluid"], "simulation", "model is an axis of the model rows: give what model or both"),
])
def test_bad_model_axes_are_refused_before_any_work(fake, items, what, match):
    with pytest.raises(ValueError, match=match):
        plan_sweep(SweepSpec(grid_from_items([*items, "size-packets=2"]), what=what, runs=2))


def test_cli_model_axis_and_its_errors(fake, tmp_path):
    from test_cli_fuzz import run_cli

    out = tmp_path / "s.csv"
    code, _, err, exc = run_cli(["sweep", "--param", "model=fluid,fake", "--param", "size-packets=2", "--quiet",
                                 "--jobs", "1", "--out", str(out)])
    assert exc is None and code == 0, err
    assert [r["model"] for r in _read(out)[1]] == ["fluid", "fake"]
    code, _, err, exc = run_cli(["sweep", "--param", "model=fake", "--param", "variant=lt", "--quiet", "--jobs", "1",
                                 "--out", str(out)])
    lines = err.splitlines()
    assert exc is None and code == 2 and len(lines) == 1
    assert "model fake: the fake model supports the newreno variant only" in lines[0] and "(in --param)" in lines[0]


def test_the_linux_sender_s_cost_is_the_tree_dp_s():
    # beside the simulator the packet model runs the simulated sender; the linux profile's
    # SACK sender runs on the tree DP, so the estimate is its (checks.packet_tree_seconds,
    # each size about its own cost), not the level DP's
    from latency_model.checks import packet_model_seconds, packet_tree_seconds

    items = ["model=packet", "p=0.1", "b=2", "w0=10", "size-packets=40,60"]
    rfc = estimate_sweep(SweepSpec(grid_from_items(items), what="both", runs=1))
    linux = estimate_sweep(SweepSpec(grid_from_items([*items, "stack=linux"]), what="both", runs=1))
    sim = estimate_sweep(SweepSpec(grid_from_items([*items[1:], "stack=linux"]), what="simulation", runs=1))
    assert linux.cpu_seconds - sim.cpu_seconds == pytest.approx(packet_tree_seconds(0.1, [40, 60]))
    assert rfc.cpu_seconds < packet_model_seconds(0.1, 60, 10, 2, n_sizes=2) + 1.0 < linux.cpu_seconds
    # a model-only sweep with a stack axis runs that stack's sender too (as latency --model
    # packet --stack linux does): the tree DP's; without the axis, the level DP's
    model = estimate_sweep(SweepSpec(grid_from_items([*items, "stack=linux"]), what="model"))
    assert model.cpu_seconds == pytest.approx(packet_tree_seconds(0.1, [40, 60]))
    plain = estimate_sweep(SweepSpec(grid_from_items(items), what="model"))
    assert plain.cpu_seconds == pytest.approx(packet_model_seconds(0.1, 60, 10, 2, n_sizes=2))
