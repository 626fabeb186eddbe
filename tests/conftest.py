"""Shared test settings: hypothesis profiles (no deadline; CI uses a fixed, smaller budget)
and the budget of the slow suite.

``pytest``: the fast suite. ``pytest -m slow``: the slow statistical checks, in full.
``pytest --slow-budget small`` (what CI runs): the fast suite plus the slow suite on a small
budget (fewer cases and samples; cases marked ``full_budget`` are left out).
"""

import os

import pytest
from hypothesis import settings

import _budget

settings.register_profile("default", deadline=None, max_examples=60)
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


def pytest_addoption(parser):
    parser.addoption(
        "--slow-budget", choices=("full", "small"), default="full",
        help="small: the slow suite with fewer cases and samples (CI); full (default): all of it",
    )


def pytest_configure(config):
    # Read by the slow tests at import (collection comes after this hook).
    _budget.SMALL = config.getoption("--slow-budget") == "small"
    config.addinivalue_line("markers", "full_budget: slow case skipped under --slow-budget small")
    if _budget.SMALL and config.option.markexpr == "not slow":
        # `pytest --slow-budget small` (CI): the fast suite and the small slow suite in one run.
        config.option.markexpr = "not (slow and full_budget)"


def pytest_collection_modifyitems(config, items):
    if not _budget.SMALL:
        return
    skip = pytest.mark.skip(reason="--slow-budget small")
    for item in items:
        if "full_budget" in item.keywords:
            item.add_marker(skip)
