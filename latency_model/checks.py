"""Parameter checks shared by every public function.

Each check raises :class:`ValueError` whose message names the parameter, the
value received and the allowed range, e.g. ``"p must be in [0, 1), got 1.0"``.
The CLI prints that message on one line and exits with status 2.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "check_real",
    "check_int",
    "check_choice",
    "check_array",
]


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_real(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float inside the given interval.

    Parameters
    ----------
    name : str
        Parameter name used in the error message.
    value : real
        The value to check. Booleans, NaN and infinities are rejected.
    low, high : float or None
        Bounds; ``None`` means unbounded on that side.
    low_open, high_open : bool
        Whether the bound itself is excluded.

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number inside the interval.
    """
    allowed = _interval(low, high, low_open, high_open)
    if not _is_real(value):
        raise ValueError(f"{name} must be a real number {allowed}, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return v


def check_int(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]``; integral floats such as ``2.0`` are accepted.

    Raises
    ------
    ValueError
        If ``value`` is not an integer in range.
    """
    if low is not None and high is not None:
        allowed = f"an integer in [{low}, {high}]"
    elif low is not None:
        allowed = f"an integer >= {low}"
    elif high is not None:
        allowed = f"an integer <= {high}"
    else:
        allowed = "an integer"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    else:
        f = float(value)
        if not math.isfinite(f) or f != int(f):
            raise ValueError(f"{name} must be {allowed}, got {value!r}")
        v = int(f)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return v


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them."""
    if value not in choices:
        listed = ", ".join(str(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def check_array(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> np.ndarray:
    """Return ``value`` as a float ndarray whose entries are finite and in range.

    Raises
    ------
    ValueError
        If any entry is NaN, infinite, non-numeric or outside the interval.
    """
    allowed = _interval(low, high, low_open, high_open)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be real numbers {allowed}, got {value!r}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = ~np.isfinite(arr)
    if low is not None:
        bad |= (arr < low) | ((arr == low) if low_open else False)
    if high is not None:
        bad |= (arr > high) | ((arr == high) if high_open else False)
    if np.any(bad):
        first = arr[bad].flat[0]
        raise ValueError(f"{name} must be finite and {allowed}, got {first!r}")
    return arr


def _interval(low, high, low_open, high_open) -> str:
    if low is None and high is None:
        return "(any finite value)"
    if high is None:
        return f"{'>' if low_open else '>='} {low:g}"
    if low is None:
        return f"{'<' if high_open else '<='} {high:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
