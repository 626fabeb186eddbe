"""The papers' multi-flow experiments on the shared-bottleneck simulator.

One module per experiment; :data:`EXPERIMENTS` maps the CLI name to its runner.
Implemented: ``btcp`` (Burst TCP, Section 4), ``ngwa`` (NGWA, Table 2), ``smoothtcp``
(SmoothTCP, Section V), ``ass`` (Advanced Slow Start, Sections 3-4), and ``modern`` (one
transfer at a time, not a shared bottleneck: the paper's Figures 9-10 for SACK, RACK-TLP and
PRR, model beside simulation).
"""

from __future__ import annotations

from .ass import AssExperiment, AssResult, run_ass
from .btcp import BtcpExperiment, BtcpResult, run_btcp
from .modern import ModernExperiment, ModernResult, run_modern
from .ngwa import NgwaExperiment, NgwaResult, run_ngwa
from .smoothtcp import SmoothTcpExperiment, SmoothTcpResult, run_smoothtcp

__all__ = ["BtcpExperiment", "BtcpResult", "run_btcp", "NgwaExperiment", "NgwaResult", "run_ngwa",
           "SmoothTcpExperiment", "SmoothTcpResult", "run_smoothtcp", "AssExperiment", "AssResult", "run_ass",
           "ModernExperiment", "ModernResult", "run_modern", "EXPERIMENTS"]

EXPERIMENTS = {"btcp": run_btcp, "ngwa": run_ngwa, "smoothtcp": run_smoothtcp, "ass": run_ass, "modern": run_modern}
"""Registry: experiment name -> runner."""
