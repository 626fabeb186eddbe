"""Values typed on the command line or in a grid file: scalars and inclusive ranges.

One grammar for every command: ``--size-packets 1:30``, ``--rule-param beta=4`` and the
sweep's ``--param p=logspace:0.01:0.2:5`` all read their text here. A number written with
non-zero digits that underflows to 0 (``1e-400``) is an error, not a silent 0; a range is
counted before it is expanded, so ``1:1e12`` is refused without building it.
"""

from __future__ import annotations

import math

__all__ = ["MAX_RANGE_VALUES", "scalar", "finite_number", "range_count", "expand_range", "show", "whole"]

MAX_RANGE_VALUES = 1_000_000
"""Most values one range may expand to (a list of a million numbers takes about 32 MB)."""

SHOW_CHARS = 80
"""Longest echo of a value in a message: a 100 kB argument is not printed back whole."""


def whole(x):
    """``x`` as an int when it is a whole number (sizes read better as 20 than 20.0), else
    as a float."""
    return int(x) if float(x).is_integer() else float(x)


def show(value, limit: int = SHOW_CHARS) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters (the length said)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    n = len(value) if isinstance(value, (str, bytes)) else len(text)
    return f"{text[:limit - 20]}... ({n:,} characters)"


def _underflows(text: str, value: float) -> bool:
    """Whether ``text`` writes a non-zero number that ``float`` rounded to 0."""
    if value != 0.0:
        return False
    mantissa = text.strip().lower().lstrip("+-").split("e")[0]
    return any(c in "123456789" for c in mantissa)


def scalar(text: str, name: str = "value"):
    """``text`` as an int, a float, a bool (``true``/``false``) or, failing those, the text.

    Raises
    ------
    ValueError
        For a number with non-zero digits that underflows to 0 (e.g. ``1e-400``), naming
        ``name``.
    """
    t = text.strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        v = float(t)
    except ValueError:
        v = None
    if v is not None:
        if _underflows(t, v):
            raise ValueError(f"{name} {show(t)} underflows to 0 (the smallest float is about 5e-324)")
        return v
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    return t


def finite_number(name: str, text: str):
    """``text`` as a finite int or float; ValueError naming ``name`` otherwise."""
    v = scalar(text, name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name} range bounds must be finite numbers, got {show(text)}")
    return v


def range_count(name: str, part: str) -> tuple:
    """``(a, b, step, n)`` of an inclusive range ``a:b`` or ``a:b:step``, without expanding it.

    Raises
    ------
    ValueError
        Malformed text, a step <= 0, or an empty range (b < a).
    """
    bits = part.split(":")
    if len(bits) not in (2, 3):
        raise ValueError(f"{name} range must be a:b or a:b:step, got {show(part)}")
    a, b = finite_number(name, bits[0]), finite_number(name, bits[1])
    step = finite_number(name, bits[2]) if len(bits) == 3 else 1
    if not step > 0:
        raise ValueError(f"{name} range step must be > 0, got {show(part)}")
    if b < a:
        raise ValueError(f"{name} range {show(part)} is empty (b < a)")
    span = (b - a) / step + 1e-9
    n = int(math.floor(span)) + 1 if math.isfinite(span) else math.inf
    return a, b, step, n


def expand_range(name: str, part: str, max_values: int = MAX_RANGE_VALUES) -> list:
    """The values of an inclusive range ``a:b`` or ``a:b:step`` (step 1 by default).

    Parameters
    ----------
    name : str
        What the range is for, used in messages (a flag or a parameter name).
    part : str
        The range text.
    max_values : int
        Most values allowed (default :data:`MAX_RANGE_VALUES`); counted before expanding.

    Returns
    -------
    list
        ``a, a + step, ...`` up to ``b`` (with a 1e-9 step tolerance); ints when a, b
        and step are all ints, floats otherwise.

    Raises
    ------
    ValueError
        Malformed text, a step <= 0, an empty range (b < a) or more than ``max_values``
        values.
    """
    a, b, step, n = range_count(name, part)
    if n > max_values:
        count = f"{n:,}" if n < 1e15 else f"about {float(n):.2g}" if n != math.inf else "countless"
        raise ValueError(f"{name} range {show(part)} has {count} values, more than the {max_values:,} "
                         "a range may hold")
    if all(isinstance(v, int) for v in (a, b, step)):
        return [a + i * step for i in range(n)]
    return [float(a + i * step) for i in range(n)]
