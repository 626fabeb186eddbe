"""latency_model: how long does a short TCP transfer take?

Two independent answers side by side: the recursive fluid model of Ayesta &
Avrachenkov (analytic, :mod:`latency_model.model`) and a packet-level simulator (ack by
ack, :mod:`latency_model.sim`); they meet in :mod:`latency_model.studies` and the
``latency-model`` command (:mod:`latency_model.cli`). See README.md.

The public API is importable from here (``from latency_model import TcpParams,
expected_latency, simulate``); each name is imported on first use, so ``import
latency_model`` itself imports nothing heavy (no numpy, scipy, matplotlib, numba or
simulator).
"""

from __future__ import annotations

import importlib

# Public name -> the module (under latency_model) that defines it.
_API = {
    # shared core
    "TcpParams": "params",
    "IW_PRESETS": "params",
    "VARIANTS": "params",
    "apply_variant": "params",
    "initial_window_bytes": "params",
    "GrowthRule": "growth",
    "StandardRule": "growth",
    "RULES": "growth",
    "make_rule": "growth",
    # the model
    "y_f": "model.fluid",
    "l0": "model.fluid",
    "w_f": "model.fluid",
    "y_to": "model.thresholds",
    "filesize_min": "model.thresholds",
    "loss_count_pmf": "model.losses",
    "SolverOptions": "model.recursion",
    "LatencyResult": "model.recursion",
    "conditional_latency": "model.recursion",
    "expected_latency": "model.recursion",
    "conditional_latency_direct": "model.recursion",
    # the simulator
    "SimConfig": "sim.config",
    "run_transfer": "sim.transfer",
    "run_many": "sim.runner",
    "simulate": "sim.montecarlo",
    "single_loss": "sim.singleloss",
    # studies
    "SweepSpec": "studies.sweep",
    "grid_from_items": "studies.sweep",
    "run_sweep": "studies.sweep",
    "grid_from_dict": "studies.sweep",
    "evaluate_points": "studies.sweep",
    "run_reproduction": "studies.reproduce",
}

__all__ = [*_API, "__version__"]


def __getattr__(name: str):
    """Import a public name on first use (PEP 562) and keep it in the module."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("latency_model")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            value = "0.0.0+unknown"
    elif name in _API:
        value = getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
