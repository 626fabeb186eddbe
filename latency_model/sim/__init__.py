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

from .config import LT_MODES, RTO_RULES, SimConfig
from .montecarlo import SimSummary, SizeSummary, mean_ci, simulate
from .runner import ENGINES, OUT_FIELDS, fast_path_supported, run_many
from .singleloss import SingleLossResult, single_loss, y_to_packets
from .transfer import TraceRow, TransferResult, run_transfer
from .dumbbell import Dumbbell, QueueSeries
from .scenario import Flow, FlowRecord, Scenario, ScenarioResult, random_flows
from .scenario import run as run_scenario
from .sizes import FixedSizes, ParetoSizes

__all__ = [
    "SimConfig",
    "RTO_RULES",
    "LT_MODES",
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
