"""Packet-level simulator of one short TCP transfer (independent of the fluid model).

See ``docs/simulator.md`` for the model, the RFC sections it follows and what it
leaves out. Entry points: :func:`run_transfer` (one transfer, optional trace),
:func:`simulate` (Monte Carlo), :func:`single_loss` (T/F pattern per position).
"""

from .config import LT_MODES, RTO_RULES, SimConfig
from .transfer import TraceRow, TransferResult, run_transfer

__all__ = [
    "SimConfig",
    "RTO_RULES",
    "LT_MODES",
    "TransferResult",
    "TraceRow",
    "run_transfer",
]
