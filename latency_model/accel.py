"""Optional numba compilation, shared by the solver and the simulator.

numba is a regular dependency (it installs as a wheel with the README's command); where it
is missing or switched off the pure twins run. Every
compiled kernel has a pure-Python/numpy twin that gives bit-identical results: the
kernels repeat the same floating-point operations in the same order (numba compiles
without fast-math, so nothing is reassociated or fused). Setting the environment
variable ``LATENCY_MODEL_NO_NUMBA=1`` forces the pure path (used to test the default
install).
"""

from __future__ import annotations

import os

__all__ = ["numba_available"]


def numba_available() -> bool:
    """True if numba can be imported and is not switched off by ``LATENCY_MODEL_NO_NUMBA``."""
    if os.environ.get("LATENCY_MODEL_NO_NUMBA"):
        return False
    try:
        import numba  # noqa: F401
    except Exception:  # pragma: no cover - depends on the environment
        return False
    return True
