"""latency_model: how long does a short TCP transfer take?

Two independent answers side by side: the recursive fluid model of Ayesta &
Avrachenkov (analytic) and a packet-level simulator (ack by ack). See README.md.
"""

from importlib.metadata import PackageNotFoundError, version as _version

from .growth import RULES, GrowthRule, StandardRule, make_rule
from .params import IW_PRESETS, VARIANTS, TcpParams, apply_variant, initial_window_bytes

try:
    __version__ = _version("latency_model")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "TcpParams",
    "IW_PRESETS",
    "VARIANTS",
    "apply_variant",
    "initial_window_bytes",
    "GrowthRule",
    "StandardRule",
    "RULES",
    "make_rule",
    "__version__",
]
