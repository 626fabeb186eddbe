"""The public API under adversarial arguments: a result or a ValueError, never another
exception, and no call that runs away (tests/_api_fuzz.py holds the calls and the guard).

Each example calls one public callable (everything in ``latency_model._API``, the model
registry's ``predict`` for every model, the experiments' classes and runners) with one to
three arguments replaced by adversarial values (NaN, infinities, 0, negatives, 10**400,
2**64, huge floats, wrong types, strings, None), an unknown keyword, or valid but extreme
parameters (p = 0.999999, RTT 3600 s, rwnd 2**30 packets), in a forked child capped at
2 GiB more address space and stopped after :data:`GUARD_S` of CPU; the child refuses work estimated
over 20 s (``LATENCY_MODEL_TIME_LIMIT``), so a valid heavy call costs little.

``pytest tests/test_api_fuzz.py`` (and CI): the same 400 calls every run, under a minute.
``pytest -m slow``: 3,000 more, drawn afresh each run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import _api_fuzz as F  # noqa: E402

GUARD_S = 60.0
"""CPU seconds a call may run: three times the child's time limit (the estimates are
rough); the wall-clock backstop is ten times that (the machine is shared)."""

VALUES = st.one_of(
    st.sampled_from(F.ADVERSARIAL),
    st.floats(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -(10**400), 2**64, 2**64 + 1, 2**63]),
    st.text(max_size=4),
    st.lists(st.one_of(st.floats(), st.integers(min_value=-(2**65), max_value=2**65)), max_size=3),
)
"""Adversarial values: the fixed list of :data:`_api_fuzz.ADVERSARIAL` and anything a float,
an int (to 2**70), a short string or a short list can be."""


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    F.warm()
    return F.entries(str(tmp_path_factory.mktemp("fuzz")))


@pytest.fixture(scope="module")
def extreme():
    return F._extreme_params()


def _draw_call(data, entry, extreme):
    """The entry's valid call with one to three arguments made bad, an unknown keyword or
    extreme parameters; returns ``(args, kwargs, what)``."""
    args, kwargs = list(entry.args), dict(entry.kwargs)
    slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
    kind = data.draw(st.sampled_from(["values", "values", "values", "unknown", "params"]), label="kind")
    if kind == "params" and entry.params_at is not None:
        value = data.draw(st.sampled_from(extreme), label="params")
        if isinstance(entry.params_at, int):
            args[entry.params_at] = value
        else:
            kwargs[entry.params_at] = value
        return tuple(args), kwargs, f"params={F._short(value)}"
    if kind != "values" or not slots:
        key = data.draw(st.sampled_from(F.UNKNOWN_KEYWORDS), label="keyword")
        if key in kwargs or (entry.params_at == key):
            key = "bogus"
        kwargs[key] = data.draw(VALUES, label="value")
        return tuple(args), kwargs, f"+{key}={F._short(kwargs[key])}"
    chosen = data.draw(st.lists(st.sampled_from(range(len(slots))), min_size=1, max_size=3, unique=True),
                       label="slots")
    what = []
    for i in chosen:
        kind, key = slots[i]
        value = data.draw(VALUES, label=str(key))
        if kind == "a":
            args[key] = value
        else:
            kwargs[key] = value
        what.append(f"{key}={F._short(value)}")
    return tuple(args), kwargs, ", ".join(what)


def _check_one(table, extreme, data):
    entry = data.draw(st.sampled_from(table), label="entry")
    args, kwargs, what = _draw_call(data, entry, extreme)
    outcome, message, seconds = F.guarded(entry.func, args, kwargs, GUARD_S)
    assert outcome in ("ok", "ValueError"), f"{entry.name}({what}): {outcome} after {seconds:.1f} s: {message}"


# No shrinking: each example is a forked call of up to a minute, and the failing call is
# reported whole (entry, arguments, outcome, message).
_SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck),
                 phases=[Phase.explicit, Phase.reuse, Phase.generate])


@settings(max_examples=400, derandomize=True, **_SETTINGS)  # the same 400 calls on every run (CI)
@given(data=st.data())
def test_public_api_gives_a_result_or_a_value_error(table, extreme, data):
    _check_one(table, extreme, data)


@pytest.mark.slow
@pytest.mark.full_budget  # random calls, up to a minute each: not in CI's small budget
@settings(max_examples=3000, **_SETTINGS)
@given(data=st.data())
def test_public_api_gives_a_result_or_a_value_error_3000_calls(table, extreme, data):
    _check_one(table, extreme, data)


def test_every_public_callable_has_a_call(table):
    # The table covers the public API: every callable of latency_model._API, each model of
    # the registry and each experiment's class and runner.
    import latency_model
    from latency_model.experiments import EXPERIMENTS
    from latency_model.model.registry import available_models

    names = {e.name for e in table}
    public = {n for n in latency_model._API if callable(getattr(latency_model, n))}
    skipped = {"GrowthRule", "LatencyResult"}  # an abstract base, a result container
    assert public - skipped - names == set()
    assert {f"predict[{m}]" for m in available_models()} <= names
    assert {f"run_{e}" for e in EXPERIMENTS} <= names
