"""`latency-model validate` on the committed Linux kernel cells (validation/linux/results).

The committed evaluation is checked against the campaign's own CSV: its simulated columns
(written by ``campaign.py`` from the same seed) and the tolerance recomputed here from the
formula (2.5 combined standard errors + 2% of the kernel's mean). The statuses are checked
on synthetic kernel data built around a simulation run here directly (``simulate`` with the
linux profile, not through the kernel package), with a kernel mean on it (pass) or far off
it (fail, or known when declared).
"""

from __future__ import annotations

import csv
import json
import math

import pytest

from latency_model.cli import main
from latency_model.kernel.cells import default_results
from latency_model.studies import reproduce
from latency_model.studies.validate import evaluate, evaluate_kernel, exit_status, kernel_runs

COMMITTED = default_results()


def _committed_rows():
    with open(COMMITTED / "cells.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def committed():
    return evaluate_kernel()


@pytest.mark.skipif(not (COMMITTED / "cells.csv").exists(), reason="no committed kernel data")
def test_committed_cells_are_judged_by_the_campaigns_numbers_and_tolerance(committed):
    rows = {(r["cc"], float(r["p"]), int(r["size_packets"])): r for r in _committed_rows()}
    assert committed["available"] and len(committed["comparisons"]) == 2 * len(rows) == 88
    for c in committed["comparisons"]:
        r = rows[(c["cc"], c["p"], c["size_packets"])]
        col = "" if c["quantity"] == "overall" else "k1_"
        km, ks = float(r[f"kernel_{col}mean_s"]), float(r[f"kernel_{col}sem_s"])
        sm, ss = float(r[f"sim_{col}mean_s"]), float(r[f"sim_{col}sem_s"] or 0.0)
        # the simulator, run again from the campaign's seed, gives the committed columns (6 digits)
        assert c["sim_mean_s"] == pytest.approx(sm, rel=1e-5)
        assert c["kernel_mean_s"] == km
        allowed = 2.5 * math.sqrt(ks * ks + ss * ss) + 0.02 * km
        assert c["tolerance_s"] == pytest.approx(allowed, rel=1e-4)
        assert c["passed"] is (abs(sm - km) <= allowed)
    outside = sorted((c["cc"], c["p"], c["size_packets"], c["quantity"])
                     for c in committed["comparisons"] if not c["passed"])
    # validation/LINUX.md: all 44 within overall and given one loss since the profile's PRR
    # is Linux's (linux_prr); no known gap is declared
    assert outside == []
    assert (committed["passed"], committed["known"], committed["failed"]) == (88, 0, 0)
    assert committed["known_without_cell"] == []


def test_quick_budget_cuts_only_the_largest_cells():
    assert [kernel_runs(2000, n, True) for n in (1, 10, 20, 30, 40)] == [2000, 2000, 2000, 1333, 1000]
    assert kernel_runs(1000, 30, True) == 1000 and kernel_runs(2000, 40, False) == 2000
    with pytest.raises(ValueError, match="size_packets"):
        kernel_runs(2000, 0, True)


# ---------------------------------------------------------------------------
# Synthetic kernel data around a direct simulation

RUNS, N, P = 300, 3, 0.1


@pytest.fixture(scope="module")
def sim_cell():
    """The simulator's mean and standard errors for reno, p = 0.1, N = 3, computed here:
    ``simulate`` with the linux profile on the campaign's path (50 ms, 100 Mb/s, MSS 500)."""
    from latency_model.growth import make_rule
    from latency_model.params import TcpParams
    from latency_model.sim import SimConfig, simulate

    params = TcpParams(mss_bytes=500, rtt_s=0.1, p=P, w0=10, rule=make_rule("standard"))
    config = SimConfig.profile("linux", delay_s=0.05, link_rate_bps=100e6)
    r = simulate(params, size_bytes=[N * 500], runs=RUNS, seed=46, config=config)
    d = r.results[0].to_dict()
    c1 = d["conditional"].get(1) or d["conditional"]["1"]
    return {"mean": d["mean_latency_s"], "se": (d["ci95_s"][1] - d["mean_latency_s"]) / 1.96,
            "k1": c1["mean_s"], "k1_se": (c1["ci95_s"][1] - c1["mean_s"]) / 1.96, "k1_n": c1["n"]}


def _write_campaign(folder, mean, k1_mean, sem=0.002, k1_sem=0.001):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps(
        {"release": "test", "config_hz": 250, "path": {"mss_bytes": 500, "delay_s": 0.05, "link_rate_bps": 1e8}}))
    cols = ["cc", "p", "size_packets", "runs", "kernel_mean_s", "kernel_sem_s", "kernel_k1_n", "kernel_k1_mean_s",
            "kernel_k1_sem_s"]
    (folder / "cells.csv").write_text(",".join(cols) + "\n" + f"reno,{P},{N},{RUNS},{mean},{sem},80,{k1_mean},"
                                      f"{k1_sem}\n")
    return folder


def test_synthetic_cells_pass_on_the_simulation_and_fail_far_from_it(tmp_path, sim_cell):
    on = evaluate_kernel(_write_campaign(tmp_path / "on", sim_cell["mean"], sim_cell["k1"]))
    assert [c["status"] for c in on["comparisons"]] == ["pass", "pass"]
    assert on["comparisons"][0]["sim_mean_s"] == pytest.approx(sim_cell["mean"], rel=1e-12)
    assert on["comparisons"][1]["sim_n"] == sim_cell["k1_n"]
    # the tolerance recomputed here: 2.5 combined SE + 2% of the kernel's mean km = sim + d, so
    # |d| > tolerance exactly when d > a / 0.98 with a = 2.5 SE + 2% of the simulated mean
    h = math.hypot(0.002, sim_cell["se"])
    edge = (2.5 * h + 0.02 * sim_cell["mean"]) / 0.98
    off = evaluate_kernel(_write_campaign(tmp_path / "off", sim_cell["mean"] + 1.01 * edge, sim_cell["k1"]))
    assert [c["status"] for c in off["comparisons"]] == ["fail", "pass"]  # a regression: validate exits 1
    assert off["comparisons"][0]["tolerance_s"] == pytest.approx(2.5 * h + 0.02 * (sim_cell["mean"] + 1.01 * edge),
                                                                 rel=1e-9)
    assert exit_status(evaluate({"model": {}, "sim": {}}, cases=()), kernel=off) == 1
    inside = evaluate_kernel(_write_campaign(tmp_path / "in", sim_cell["mean"] + 0.99 * edge, sim_cell["k1"]))
    assert inside["comparisons"][0]["status"] == "pass"


def test_a_declared_gap_is_known_and_one_that_closed_is_reported(tmp_path, sim_cell):
    folder = _write_campaign(tmp_path / "k", sim_cell["mean"] + 0.2, sim_cell["k1"])
    known = {("reno", P, N, "overall"): "why", ("reno", P, N, "one_loss"): "why too", ("cubic", P, 7, "overall"): "x"}
    ev = evaluate_kernel(folder, known=known)
    assert [c["status"] for c in ev["comparisons"]] == ["known", "known_not_seen"]
    assert (ev["passed"], ev["known"], ev["failed"]) == (1, 1, 0)
    assert ev["known_without_cell"] == [["cubic", P, 7, "overall"]]
    none = evaluate({"model": {}, "sim": {}}, cases=())
    assert exit_status(none, kernel=ev) == 0 and exit_status(none, strict=True, kernel=ev) == 1


def test_too_few_simulated_transfers_is_a_failure_not_a_pass(tmp_path, sim_cell):
    folder = _write_campaign(tmp_path / "few", sim_cell["mean"], sim_cell["k1"])
    text = (folder / "cells.csv").read_text().replace(f",{N},{RUNS},", f",{N},40,")  # ~10 with one loss
    (folder / "cells.csv").write_text(text)
    ev = evaluate_kernel(folder, known={("reno", P, N, "one_loss"): "declared"})
    one = ev["comparisons"][1]
    assert one["status"] == "fail" and "fewer than 30 simulated" in one["why_failed"]


def test_missing_or_bad_kernel_data_is_named(tmp_path):
    with pytest.raises(ValueError, match="cells.csv does not exist"):
        evaluate_kernel(tmp_path)
    with pytest.raises(ValueError, match="quick must be"):
        evaluate_kernel(tmp_path, quick="yes")


@pytest.fixture
def fake_reproduction(monkeypatch):
    monkeypatch.setattr(reproduce, "run_reproduction",
                        lambda out, **kw: {"evaluation": evaluate({"model": {}, "sim": {}}, cases=())})


@pytest.mark.parametrize("offset, strict, declared, expected", [
    (0.0, False, False, 0), (0.2, False, False, 1), (0.2, False, True, 0), (0.2, True, True, 1)])
def test_cli_validate_exit_status_and_json_with_kernel_cells(fake_reproduction, monkeypatch, tmp_path, capsys,
                                                            sim_cell, offset, strict, declared, expected):
    from latency_model.studies import validate

    if declared:
        monkeypatch.setattr(validate, "KERNEL_KNOWN_GAPS", {("reno", P, N, "overall"): "a recorded mechanism"})
    else:
        monkeypatch.setattr(validate, "KERNEL_KNOWN_GAPS", {})
    data = _write_campaign(tmp_path / "data", sim_cell["mean"] + offset, sim_cell["k1"])
    argv = ["validate", "--out", str(tmp_path / "out"), "--kernel-data", str(data)] + (["--strict"] if strict else [])
    assert main(argv) == expected
    out = capsys.readouterr().out
    last = out.rstrip().splitlines()[-1]
    assert f"exit status {expected}" in last and "kernel cells: " in last
    if offset:
        assert ("known gap " if declared else "FAIL ") in out and "reno p=0.1 N=3 overall: kernel" in out
    assert "| reno | 0.1 | 3 | overall |" in (tmp_path / "out" / "validation" / "KERNEL.md").read_text()
    assert main(argv + ["--json"]) == expected
    d = json.loads(capsys.readouterr().out)
    assert d["exit_status"] == expected
    assert [c["status"] for c in d["kernel"]["comparisons"]][0] == (
        "pass" if not offset else "known" if declared else "fail")


def test_cli_validate_refuses_a_kernel_data_folder_without_the_campaign(fake_reproduction, tmp_path, capsys):
    assert main(["validate", "--out", str(tmp_path / "out"), "--kernel-data", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--kernel-data:" in err[0] and "cells.csv does not exist" in err[0]
    assert not (tmp_path / "out").exists()
