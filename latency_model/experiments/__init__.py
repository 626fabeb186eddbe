"""The papers' multi-flow experiments on the shared-bottleneck simulator (issue #6).

One module per experiment; :data:`EXPERIMENTS` maps the CLI name to its runner.
Implemented: ``btcp`` (Burst TCP, Section 4), ``smoothtcp`` (SmoothTCP, Section V).
Planned: ``ngwa``, ``ass``.
"""

from __future__ import annotations

from .btcp import BtcpExperiment, BtcpResult, run_btcp
from .smoothtcp import SmoothTcpExperiment, SmoothTcpResult, run_smoothtcp

__all__ = ["BtcpExperiment", "BtcpResult", "run_btcp", "SmoothTcpExperiment", "SmoothTcpResult",
           "run_smoothtcp", "EXPERIMENTS"]

EXPERIMENTS = {"btcp": run_btcp, "smoothtcp": run_smoothtcp}
"""Registry: experiment name -> runner."""
