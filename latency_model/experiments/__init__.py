"""The papers' multi-flow experiments on the shared-bottleneck simulator (issue #6).

One module per experiment; :data:`EXPERIMENTS` maps the CLI name to its runner.
Implemented: ``btcp`` (Burst TCP, Section 4). Planned: ``smoothtcp``, ``ngwa``, ``ass``.
"""

from __future__ import annotations

from .btcp import BtcpExperiment, BtcpResult, run_btcp

__all__ = ["BtcpExperiment", "BtcpResult", "run_btcp", "EXPERIMENTS"]

EXPERIMENTS = {"btcp": run_btcp}
"""Registry: experiment name -> runner."""
