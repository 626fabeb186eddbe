"""The registry of the rules' packet-level laws, for the compiled Monte Carlo engine.

Each rule of :data:`~latency_model.growth.RULES` writes its per-ACK behaviour once, as a
law ``law(hook, S, R, mss, x) -> float`` in its own module (:class:`~.base.GrowthRule`).
This module numbers the laws in registry order (:func:`rule_index`) and builds, from the
registry alone, the dispatch :func:`rule_law` the engine calls: ``rule_law(k, hook, S, R,
mss, x)`` runs the law of rule ``k``. Interpreted, :func:`rule_law` calls the rules' Python
functions; a compiled engine compiles the same dispatch over :func:`compiled_laws`.
A new rule therefore needs no line here: its module and its line in ``RULES`` suffice.

``S`` is the state vector (cwnd, ssthresh, bytes_acked, then :data:`N_STATE` - 3 slots
for the rule with the most state) and ``R`` the parameters (:data:`N_PARAMS` slots).
"""

from __future__ import annotations

import functools

from ..accel import compile_twins
from . import RULES
from .base import FIRST_SLOT, GrowthRule

__all__ = ["N_STATE", "N_PARAMS", "rule_index", "rule_law", "compiled_laws", "LAW_SOURCE"]

_LAWS = tuple(cls.law for cls in RULES.values())
N_STATE = FIRST_SLOT + max(cls.state_class.N_SLOTS for cls in RULES.values())
"""Length of the state vector every law fits in."""
N_PARAMS = max(len(cls().law_params) for cls in RULES.values())
"""Length of the parameter vector every law's parameters fit in: the most any rule packs
with its default parameters (a rule packs no more with others: ASS's default, Algorithm 2,
has the most bands)."""


def rule_index(rule: GrowthRule) -> int:
    """Number of ``rule``'s law in :func:`rule_law`: its class's position in ``RULES``.

    The simulator runs a rule only through this dispatch (compiled or interpreted), so this
    is where every simulation refuses a rule it cannot run.

    Raises
    ------
    ValueError
        For a rule whose class is not registered (a subclass of a registered rule
        included): its law is not in the dispatch. The message names the rule and how to
        register it.
    """
    for k, cls in enumerate(RULES.values()):
        if type(rule) is cls:
            return k
    cls = type(rule)
    raise ValueError(
        f"rule {getattr(rule, 'name', cls.__name__)!r} of class {cls.__module__}.{cls.__qualname__} is not a "
        f"registered growth rule class: the simulator runs only the laws of latency_model.growth.RULES "
        f"({', '.join(RULES)}); to run it, give the class its law (GrowthRule.law) and add it to RULES "
        "(one line in latency_model/growth/__init__.py)")


def _dispatch_source() -> str:
    lines = ["def rule_law(k, hook, S, R, mss, x):",
             '    """Run the law of rule ``k`` (``rule_index``) on ``hook``, ``S``, ``R``, ``mss``, ``x``."""']
    for k in range(len(_LAWS)):
        lines.append(f"    {'if' if k == 0 else 'elif'} k == {k}:\n        return law_{k}(hook, S, R, mss, x)")
    lines.append("    return 0.0")
    return "\n".join(lines) + "\n"


LAW_SOURCE = _dispatch_source()
"""Source of :func:`rule_law`, generated from the registry (an ``if`` chain numba compiles
to a switch)."""
_namespace = {f"law_{k}": law for k, law in enumerate(_LAWS)}
exec(compile(LAW_SOURCE, __file__, "exec"), _namespace)  # noqa: S102 (our own generated source)
rule_law = _namespace["rule_law"]
rule_law.__module__ = __name__


def _compiled_law(cls):
    """``cls.law`` compiled with its helpers, in the namespace of the modules defining them."""
    law = cls.law
    ns = {}
    # A helper may live in a module the law's module imports from (smooth.py for smoothtcp):
    # the globals of the functions the law's module holds come first, its own last.
    for v in list(law.__globals__.values()):
        if callable(v) and getattr(v, "__name__", None) in cls.law_helpers and hasattr(v, "__globals__"):
            ns.update(v.__globals__)
    ns.update(law.__globals__)
    missing = [name for name in cls.law_helpers if name not in ns]
    if missing:
        raise ValueError(f"{cls.__name__}.law_helpers names functions not found beside its law: {missing}")
    fns = compile_twins(ns, cls.law_helpers, (law,))
    return None if fns is None else fns[0]


@functools.cache
def compiled_laws() -> dict | None:
    """The laws compiled by numba, by the names :func:`rule_law` calls them (``law_0``,
    ...), or ``None`` without numba. A compiled engine puts them and :func:`rule_law` in its
    namespace (:func:`~latency_model.accel.compile_twins`), which makes the rules' sources
    part of its cache key."""
    laws = {f"law_{k}": _compiled_law(cls) for k, cls in enumerate(RULES.values())}
    return None if any(f is None for f in laws.values()) else laws
