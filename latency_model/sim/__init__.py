"""Packet-level simulator of one short TCP transfer (independent of the fluid model).

It follows RFC 5681 (slow start, congestion avoidance through the growth-rule
interface, delayed ACKs), RFC 6582 (NewReno), RFC 3042 (Limited Transmit), RFC 5827
(Early Retransmit), RFC 6298 (retransmission timer) and the paper's Section 3.1
proposal, packet by packet. It imports only ``params``, ``checks`` and ``growth``.
See ``docs/simulator.md`` for the model and what it leaves out.

Entry points: :func:`run_transfer` (one transfer, optional trace), :func:`simulate`
(Monte Carlo), :func:`single_loss` and :func:`y_to_packets` (T/F pattern per
position), :func:`run_many` (raw per-run measures). Many flows on a shared dumbbell:
:func:`run_scenario` over a :class:`Scenario` of :class:`Flow` s on a :class:`Dumbbell`
(``docs/multiflow.md``).
"""

from __future__ import annotations

import importlib

# Public name -> (module under latency_model.sim, its name there), imported on first use
# (PEP 562): a command that needs SimConfig or one transfer does not import scipy (for the
# Monte Carlo's confidence intervals) or the shared-bottleneck simulator.
_API = {
    "SimConfig": ("config", "SimConfig"),
    "RTO_RULES": ("config", "RTO_RULES"),
    "LT_MODES": ("config", "LT_MODES"),
    "SENDERS": ("config", "SENDERS"),
    "RTT_SAMPLING": ("config", "RTT_SAMPLING"),
    "STACKS": ("profiles", "STACKS"),
    "STACK_NAMES": ("profiles", "STACK_NAMES"),
    "profile_params": ("profiles", "profile_params"),
    "TransferResult": ("transfer", "TransferResult"),
    "TraceRow": ("transfer", "TraceRow"),
    "run_transfer": ("transfer", "run_transfer"),
    "run_many": ("runner", "run_many"),
    "ENGINES": ("runner", "ENGINES"),
    "OUT_FIELDS": ("runner", "OUT_FIELDS"),
    "fast_path_supported": ("runner", "fast_path_supported"),
    "simulate": ("montecarlo", "simulate"),
    "SimSummary": ("montecarlo", "SimSummary"),
    "SizeSummary": ("montecarlo", "SizeSummary"),
    "mean_ci": ("montecarlo", "mean_ci"),
    "single_loss": ("singleloss", "single_loss"),
    "SingleLossResult": ("singleloss", "SingleLossResult"),
    "y_to_packets": ("singleloss", "y_to_packets"),
    "Dumbbell": ("dumbbell", "Dumbbell"),
    "QueueSeries": ("dumbbell", "QueueSeries"),
    "Flow": ("scenario", "Flow"),
    "FlowRecord": ("scenario", "FlowRecord"),
    "Scenario": ("scenario", "Scenario"),
    "ScenarioResult": ("scenario", "ScenarioResult"),
    "run_scenario": ("scenario", "run"),
    "random_flows": ("scenario", "random_flows"),
    "ParetoSizes": ("sizes", "ParetoSizes"),
    "FixedSizes": ("sizes", "FixedSizes"),
}

__all__ = [
    "SimConfig",
    "RTO_RULES",
    "LT_MODES",
    "SENDERS",
    "RTT_SAMPLING",
    "STACKS",
    "STACK_NAMES",
    "profile_params",
    "TransferResult",
    "TraceRow",
    "run_transfer",
    "run_many",
    "ENGINES",
    "OUT_FIELDS",
    "fast_path_supported",
    "simulate",
    "SimSummary",
    "SizeSummary",
    "mean_ci",
    "single_loss",
    "SingleLossResult",
    "y_to_packets",
    "Dumbbell",
    "QueueSeries",
    "Flow",
    "FlowRecord",
    "Scenario",
    "ScenarioResult",
    "run_scenario",
    "random_flows",
    "ParetoSizes",
    "FixedSizes",
]


def __getattr__(name: str):
    """Import a public name on first use and keep it in the module."""
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _API[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
