"""Known differences and the exit status of `latency-model validate` (issue 19, item 4).

A case declared a known difference that fails is reported as ``known``: ``validate``
exits 0; ``--strict`` exits 1 on it; any other failure exits 1. The evaluation runs on
synthetic model and simulator numbers (no solver, no simulator), and the command is run
with :func:`run_reproduction` replaced by that evaluation, so every branch is exercised
in milliseconds.
"""

from __future__ import annotations

import json

import pytest

from latency_model.cli import main
from latency_model.studies import reproduce
from latency_model.studies.validate import Case, evaluate, exit_status, report_markdown


def _results(model_l1, sim_l1, se=0.001, n=500):
    sizes = [2.0, 5.0, 8.0]
    model = {"sizes_packets": sizes, "L0_s": [0.1] * 3, "L1_s": model_l1, "L2_s": [2.0] * 3, "expected_s": [0.5] * 3}
    sim = {int(s): {"size_packets": int(s), "runs": n, "mean_latency_s": 0.5,
                    "ci95_s": [0.5 - 1.96 * se, 0.5 + 1.96 * se], "mean_lost_packets": 0.5,
                    "conditional": {"1": {"n": n, "mean_s": v, "ci95_s": [v - 1.96 * se, v + 1.96 * se]}}}
           for s, v in zip(sizes, sim_l1)}
    return {"model": {"newreno_b1": model}, "sim": {"newreno_b1": sim}}


AGREE = _results([1.0] * 3, [1.0] * 3)
DISAGREE = _results([1.0, 1.0, 1.5], [1.0] * 3)  # 50% off at 8 packets, tolerance 10%
PLAIN = Case("plain", "newreno_b1:L1", "newreno_b1", 1, 0.1, "relative", "test")
KNOWN = Case("known", "newreno_b1:L1", "newreno_b1", 1, 0.1, "relative", "test",
             known_difference="the model's law is not the simulator's")


def test_a_failing_known_difference_is_known_not_failed():
    ev = evaluate(DISAGREE, cases=[KNOWN])
    (c,) = ev["cases"]
    assert (c["status"], c["passed"], c["known_difference"]) == ("known", False, KNOWN.known_difference)
    assert (ev["passed"], ev["known"], ev["failed"]) == (0, 1, 0)
    assert exit_status(ev) == 0 and exit_status(ev, strict=True) == 1


def test_a_failing_plain_case_fails_with_or_without_strict():
    ev = evaluate(DISAGREE, cases=[PLAIN, KNOWN])
    assert [c["status"] for c in ev["cases"]] == ["fail", "known"]
    assert (ev["passed"], ev["known"], ev["failed"]) == (0, 1, 1)
    assert exit_status(ev) == exit_status(ev, strict=True) == 1


def test_a_known_difference_that_does_not_show_is_reported_not_silently_passed():
    ev = evaluate(AGREE, cases=[KNOWN])
    assert ev["cases"][0]["status"] == "known_not_seen"
    assert (ev["passed"], ev["known"], ev["failed"]) == (1, 0, 0)
    assert exit_status(ev, strict=True) == 0
    text = report_markdown(ev, [], {"command": "x", "version": "0", "runs": 1, "seed": 0})
    assert "pass (known difference not seen)" in text and "did not show at the compared sizes" in text


def test_a_known_case_with_nothing_compared_is_a_failure():
    ev = evaluate(_results([1.0] * 3, [1.0] * 3, n=5), cases=[KNOWN])  # below MIN_N everywhere
    assert ev["cases"][0]["status"] == "fail" and exit_status(ev) == 1


def test_report_shows_known_differences_with_their_reason():
    ev = evaluate(DISAGREE, cases=[PLAIN, KNOWN])
    text = report_markdown(ev, [], {"command": "x", "version": "0", "runs": 1, "seed": 0})
    assert "**0 passed, 1 known difference, 1 failed.**" in text
    assert "| known difference |" in text and "| **FAIL** |" in text
    assert "## Known differences" in text and KNOWN.known_difference in text
    assert "### known (known)" in text


def test_known_difference_must_be_a_reason():
    with pytest.raises(ValueError, match="known_difference must be a string"):
        Case("t", "newreno_b1:L1", "newreno_b1", 1, 0.1, "relative", "x", known_difference=True)


@pytest.fixture
def fake_validation(monkeypatch):
    """Make `validate` evaluate the given synthetic cases instead of running the reproduction."""
    state = {}

    def run(out, **kwargs):
        return {"evaluation": evaluate(state["results"], cases=state["cases"])}

    monkeypatch.setattr(reproduce, "run_reproduction", run)
    # the kernel cells are tested in test_validate_kernel.py; here none are compared
    monkeypatch.setattr("latency_model.studies.validate.evaluate_kernel", lambda *a, **k: {
        "available": False, "why_unavailable": "left out by this test", "comparisons": [], "passed": 0, "known": 0,
        "failed": 0})
    return state


@pytest.mark.parametrize("results, cases, strict, expected", [
    (AGREE, [PLAIN, KNOWN], False, 0),      # everything agrees (the known one not seen)
    (DISAGREE, [KNOWN], False, 0),          # only a known difference fails
    (DISAGREE, [KNOWN], True, 1),           # --strict fails on it
    (DISAGREE, [PLAIN, KNOWN], False, 1),   # any other failure
])
def test_validate_exit_status(fake_validation, capsys, tmp_path, results, cases, strict, expected):
    fake_validation.update(results=results, cases=cases)
    argv = ["validate", "--out", str(tmp_path)] + (["--strict"] if strict else [])
    assert main(argv) == expected
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].count(f"exit status {expected}") == 1
    if results is DISAGREE:
        assert any(line.startswith("known ") and "known" in line for line in out.splitlines())
    assert main(argv + ["--json"]) == expected
    d = json.loads(capsys.readouterr().out)
    assert d["exit_status"] == expected and d["strict"] is strict
    assert [c["status"] for c in d["cases"]] == [c["status"] for c in evaluate(results, cases=cases)["cases"]]
