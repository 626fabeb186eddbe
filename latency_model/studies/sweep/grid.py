"""Grid syntax of a sweep: ``--param NAME=VALUES`` items and TOML grid files -> a :class:`Grid`.

VALUES is a comma list, an inclusive range ``a:b[:step]`` or ``logspace:a:b:n``, mixed
freely; NAME is any TcpParams field (the other commands' flag spellings accepted),
``size-packets``, ``size-bytes``, ``variant``, ``rule`` or ``rule-param.X``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...values import expand_range, finite_number, scalar

__all__ = ["Axis", "Grid", "canonical_name", "parse_values", "parse_param", "grid_from_items",
           "grid_from_toml", "SIZE_AXES", "RULE_PARAM", "TOML_KEYS"]

# TcpParams fields a grid may vary, with the spellings of the other commands' flags.
_FIELDS = ("mss_bytes", "rtt_s", "p", "w0", "w_ss", "rwnd", "b", "dup_t", "dup_lt",
           "tail_retransmit", "early_retransmit", "rto_s")
_NONE_FIELDS = ("dup_lt", "rto_s")
_RECOVERY_FIELDS = ("dup_lt", "tail_retransmit", "early_retransmit")  # set by the variant, then these
_ALIASES = {"mss": "mss_bytes", "rtt": "rtt_s", "wss": "w_ss", "rto": "rto_s",
            "size_packets": "size_packets", "size_bytes": "size_bytes",
            "variant": "variant", "rule": "rule", "stack": "stack", **{f: f for f in _FIELDS}}
SIZE_AXES = ("size_packets", "size_bytes")
RULE_PARAM = "rule_param."


def canonical_name(name: str) -> str:
    """The grid name of a parameter: a TcpParams field (CLI spellings accepted, ``-`` or
    ``_``), ``size_packets``, ``size_bytes``, ``variant``, ``rule``, ``stack`` (the simulator's stack
    profile) or ``rule_param.X``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.
    """
    text = str(name).strip()
    for prefix in ("rule-param.", "rule_param."):
        if text.startswith(prefix) and len(text) > len(prefix):
            return RULE_PARAM + text[len(prefix):]
    key = text.replace("-", "_")
    if key in _ALIASES:
        return _ALIASES[key]
    known = ", ".join([*_FIELDS, "size-packets", "size-bytes", "variant", "rule", "stack", "rule-param.X"])
    raise ValueError(f"unknown sweep parameter {text!r} (known: {known})")


def _scalar(text: str):
    """int, float, bool, None or the text itself."""
    return None if text.strip().lower() == "none" else scalar(text)


def _range(name: str, part: str) -> list:
    """``a:b[:step]`` (inclusive) or ``logspace:a:b:n`` (n values geometric from a to b)."""
    bits = part.split(":")
    if bits[0].strip().lower() == "logspace":
        if len(bits) != 4:
            raise ValueError(f"{name} logspace must be logspace:a:b:n, got {part!r}")
        a, b = finite_number(name, bits[1]), finite_number(name, bits[2])
        n = _scalar(bits[3])
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} logspace count n must be an integer >= 1, got {bits[3]!r}")
        if not (a > 0 and b > 0):
            raise ValueError(f"{name} logspace bounds must be > 0, got {part!r}")
        if n == 1:
            return [float(a)]
        return [float(v) for v in np.geomspace(a, b, n)]
    if len(bits) not in (2, 3):
        raise ValueError(f"{name} range must be a:b, a:b:step or logspace:a:b:n, got {part!r}")
    return expand_range(name, part)


def parse_values(name: str, text) -> list:
    """Values of one axis from ``a,b,c``, ranges ``a:b[:step]``, ``logspace:a:b:n``
    (any mix, comma separated), or a list (from TOML).

    Parameters
    ----------
    name : str
        Canonical parameter name (for messages and typing).
    text : str, number or list
        The values.

    Returns
    -------
    list
        Typed values (numbers, bools, None or text), in the order given.

    Raises
    ------
    ValueError
        For an empty list or range, a repeated value or a malformed range.
    """
    if isinstance(text, (list, tuple)):
        values = []
        for item in text:
            values.extend(parse_values(name, item) if isinstance(item, str) else [item])
    elif isinstance(text, str):
        values = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                raise ValueError(f"{name} has an empty value in {text!r}")
            numeric = name not in ("variant", "rule") and not name.startswith(RULE_PARAM)
            if ":" in part and (numeric or part.lower().startswith("logspace:")):
                values.extend(_range(name, part))
            else:
                values.append(_scalar(part))
    else:
        values = [text]
    if not values:
        raise ValueError(f"{name} has no values")
    seen = []
    for v in values:
        if any(type(v) is type(s) and v == s for s in seen):
            raise ValueError(f"{name} lists {v!r} twice")
        seen.append(v)
    return values


@dataclass(frozen=True)
class Axis:
    """One grid axis: a canonical parameter name and its values, in order."""

    name: str
    values: tuple


@dataclass(frozen=True)
class Grid:
    """Axes of a sweep; the size axis (``size_packets`` or ``size_bytes``) is innermost.

    Use :func:`grid_from_items` or :func:`grid_from_toml`; :func:`plan_sweep` validates.
    """

    axes: tuple

    def axis(self, name: str) -> Axis | None:
        for a in self.axes:
            if a.name == name:
                return a
        return None

    def to_dict(self) -> dict:
        """JSON-ready ``{name: [values]}`` in axis order."""
        return {a.name: list(a.values) for a in self.axes}


def parse_param(item: str) -> Axis:
    """One ``NAME=VALUES`` item of ``--param`` as an :class:`Axis`."""
    name, sep, values = str(item).partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--param must be NAME=VALUES, got {item!r}")
    cname = canonical_name(name)
    return Axis(cname, tuple(parse_values(name.strip(), values)))


def grid_from_items(items, toml_params: dict | None = None) -> Grid:
    """A :class:`Grid` from ``--param`` items and, optionally, a TOML ``[params]`` table.

    Raises
    ------
    ValueError
        For a name given twice (in any spelling), both size axes, or a bad value list.
    """
    axes: list[Axis] = []
    for name, values in (toml_params or {}).items():
        axes.append(Axis(canonical_name(name), tuple(parse_values(str(name), values))))
    axes.extend(parse_param(item) for item in items)
    names = [a.name for a in axes]
    for n in names:
        if names.count(n) > 1:
            raise ValueError(f"sweep parameter {n} is given twice")
    sizes = [a for a in axes if a.name in SIZE_AXES]
    if len(sizes) > 1:
        raise ValueError("give size-packets or size-bytes, not both")
    rest = [a for a in axes if a.name not in SIZE_AXES]
    return Grid(tuple(rest + sizes))


TOML_KEYS = ("params", "what", "runs", "seed", "time-model", "law")


def grid_from_toml(path) -> tuple[Grid, dict]:
    """Read a grid file: a ``[params]`` table (``name = "values"`` or a list) and optional
    ``what``, ``runs``, ``seed``, ``time-model``, ``law``.

    Returns
    -------
    (Grid, dict)
        The grid and the other settings found (keys as in the file).
    """
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ValueError(f"grid file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"grid file {path}: {exc}") from None
    for key in data:
        if key not in TOML_KEYS:
            raise ValueError(f"grid file {path}: unknown key {key!r} (known: {', '.join(TOML_KEYS)})")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"grid file {path}: params must be a table")
    settings = {k: v for k, v in data.items() if k != "params"}
    return grid_from_items([], params), settings

