"""The papers' multi-flow experiments on the shared-bottleneck simulator (issue #6).

One module per experiment; :data:`EXPERIMENTS` maps the CLI name to its runner.
Implemented: ``btcp`` (Burst TCP, Section 4), ``ass`` (Advanced Slow Start, Sections 3-4).
Planned: ``smoothtcp``, ``ngwa``.
"""

from __future__ import annotations

from .ass import AssExperiment, AssResult, run_ass
from .btcp import BtcpExperiment, BtcpResult, run_btcp

__all__ = ["BtcpExperiment", "BtcpResult", "run_btcp", "AssExperiment", "AssResult", "run_ass", "EXPERIMENTS"]

EXPERIMENTS = {"btcp": run_btcp, "ass": run_ass}
"""Registry: experiment name -> runner."""
