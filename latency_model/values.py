"""Values typed on the command line or in a grid file: scalars and inclusive ranges.

One grammar for every command: ``--size-packets 1:30``, ``--rule-param beta=4`` and the
sweep's ``--param p=logspace:0.01:0.2:5`` all read their text here.
"""

from __future__ import annotations

import math

__all__ = ["scalar", "finite_number", "expand_range"]


def scalar(text: str):
    """``text`` as an int, a float, a bool (``true``/``false``) or, failing those, the text."""
    t = text.strip()
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    return t


def finite_number(name: str, text: str):
    """``text`` as a finite int or float; ValueError naming ``name`` otherwise."""
    v = scalar(text)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name} range bounds must be finite numbers, got {text!r}")
    return v


def expand_range(name: str, part: str) -> list:
    """The values of an inclusive range ``a:b`` or ``a:b:step`` (step 1 by default).

    Parameters
    ----------
    name : str
        What the range is for, used in messages (a flag or a parameter name).
    part : str
        The range text.

    Returns
    -------
    list
        ``a, a + step, ...`` up to ``b`` (with a 1e-9 step tolerance); ints when a, b
        and step are all ints, floats otherwise.

    Raises
    ------
    ValueError
        Malformed text, a step <= 0, or an empty range (b < a).
    """
    bits = part.split(":")
    if len(bits) not in (2, 3):
        raise ValueError(f"{name} range must be a:b or a:b:step, got {part!r}")
    a, b = finite_number(name, bits[0]), finite_number(name, bits[1])
    step = finite_number(name, bits[2]) if len(bits) == 3 else 1
    if not step > 0:
        raise ValueError(f"{name} range step must be > 0, got {part!r}")
    if b < a:
        raise ValueError(f"{name} range {part!r} is empty (b < a)")
    n = int(math.floor((b - a) / step + 1e-9)) + 1
    if all(isinstance(v, int) for v in (a, b, step)):
        return [a + i * step for i in range(n)]
    return [float(a + i * step) for i in range(n)]
