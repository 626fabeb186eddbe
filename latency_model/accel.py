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

__all__ = ["numba_available", "compile_twin", "compile_twins"]


def numba_available() -> bool:
    """True if numba can be imported and is not switched off by ``LATENCY_MODEL_NO_NUMBA``."""
    if os.environ.get("LATENCY_MODEL_NO_NUMBA"):
        return False
    try:
        import numba  # noqa: F401
    except Exception:  # pragma: no cover - depends on the environment
        return False
    return True


def compile_twin(namespace: dict, helpers, entry):
    """numba-compiled copy of ``entry``, or ``None`` when :func:`numba_available` is False.

    ``helpers`` (names in ``namespace``, a module's ``globals()``, in dependency order) are
    compiled first into a private copy of ``namespace`` that ``entry`` then resolves its
    globals in, so the module's own functions stay the pure-Python twins. ``cache=True``:
    numba keeps the machine code on disk (keyed by the functions' source file), so a
    process compiles once per install.
    """
    twins = compile_twins(namespace, helpers, (entry,))
    return None if twins is None else twins[0]


def compile_twins(namespace: dict, helpers, entries):
    """:func:`compile_twin` for several entry points sharing one compiled set of helpers:
    a tuple of compiled functions, or ``None`` when numba is not available."""
    if not numba_available():
        return None
    import numba

    ns = dict(namespace)
    for name in helpers:
        ns[name] = numba.njit(cache=True, nogil=True)(_rebind(namespace[name], ns))
    return tuple(numba.njit(cache=True, nogil=True)(_rebind(entry, ns)) for entry in entries)


def _rebind(fn, ns: dict):
    """Copy of ``fn`` whose global names resolve in ``ns``."""
    import types

    return types.FunctionType(fn.__code__, ns, fn.__name__, fn.__defaults__, fn.__closure__)
