"""Grid syntax of a sweep: ``--param NAME=VALUES`` items and TOML grid files -> a :class:`Grid`.

VALUES is a comma list, an inclusive range ``a:b[:step]`` or ``logspace:a:b:n``, mixed
freely; NAME is any TcpParams field (the other commands' flag spellings accepted),
``size-packets``, ``size-bytes``, ``variant``, ``rule``, ``stack``, ``model`` (analytic models
of :data:`latency_model.model.registry.MODELS`) or ``rule-param.X``.

Values are counted before they are built: an axis holds at most
:data:`~latency_model.values.MAX_RANGE_VALUES` values, and :func:`grid_from_items` refuses a
grid whose rows cannot fit in memory (:data:`ROW_BYTES` each) before expanding any range.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...checks import PROCESS_BYTES, check_memory, checked_call
from ...values import MAX_RANGE_VALUES, expand_range, finite_number, range_count, scalar, show

__all__ = ["Axis", "Grid", "Design", "canonical_name", "parse_values", "count_values", "parse_param",
           "grid_from_items", "grid_from_dict", "grid_from_toml", "design_from_points", "SIZE_AXES", "RULE_PARAM",
           "TOML_KEYS", "ROW_BYTES"]

ROW_BYTES = 6000
"""Memory of one sweep row while the sweep runs, bytes: its planned point (about 1.4 kB) and
its finished row of cell text (about 3 kB), with room for the table written out (measured)."""

# TcpParams fields a grid may vary, with the spellings of the other commands' flags.
_FIELDS = ("mss_bytes", "rtt_s", "p", "w0", "w_ss", "rwnd", "b", "dup_t", "dup_lt",
           "tail_retransmit", "early_retransmit", "rto_s")
_NONE_FIELDS = ("dup_lt", "rto_s")
_RECOVERY_FIELDS = ("dup_lt", "tail_retransmit", "early_retransmit")  # set by the variant, then these
_ALIASES = {"mss": "mss_bytes", "rtt": "rtt_s", "wss": "w_ss", "rto": "rto_s",
            "size_packets": "size_packets", "size_bytes": "size_bytes",
            "variant": "variant", "rule": "rule", "stack": "stack", "recovery": "recovery", "model": "model",
            **{f: f for f in _FIELDS}}
SIZE_AXES = ("size_packets", "size_bytes")
RULE_PARAM = "rule_param."


def canonical_name(name: str) -> str:
    """The grid name of a parameter: a TcpParams field (CLI spellings accepted, ``-`` or
    ``_``), ``size_packets``, ``size_bytes``, ``variant``, ``rule``, ``stack`` (the simulator's stack
    profile), ``recovery`` (its loss recovery, :data:`~latency_model.sim.profiles.RECOVERIES`),
    ``model`` or ``rule_param.X``.

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
    known = ", ".join([*_FIELDS, "size-packets", "size-bytes", "variant", "rule", "stack", "recovery", "model",
                       "rule-param.X"])
    raise ValueError(f"unknown sweep parameter {show(text)} (known: {known})")


def _scalar(text: str, name: str = "value"):
    """int, float, bool, None or the text itself (a number underflowing to 0 is an error)."""
    return None if text.strip().lower() == "none" else scalar(text, name)


def _logspace(name: str, part: str) -> tuple:
    """``(a, b, n)`` of ``logspace:a:b:n``, checked."""
    bits = part.split(":")
    if len(bits) != 4:
        raise ValueError(f"{name} logspace must be logspace:a:b:n, got {show(part)}")
    a, b = finite_number(name, bits[1]), finite_number(name, bits[2])
    n = _scalar(bits[3], name)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{name} logspace count n must be an integer >= 1, got {show(bits[3])}")
    if not (a > 0 and b > 0):
        raise ValueError(f"{name} logspace bounds must be > 0, got {show(part)}")
    return a, b, n


def _is_logspace(part: str) -> bool:
    return part.split(":")[0].strip().lower() == "logspace"


def _range_size(name: str, part: str) -> int:
    """How many values ``a:b[:step]`` or ``logspace:a:b:n`` gives, without building them."""
    if _is_logspace(part):
        return _logspace(name, part)[2]
    if len(part.split(":")) not in (2, 3):
        raise ValueError(f"{name} range must be a:b, a:b:step or logspace:a:b:n, got {show(part)}")
    return range_count(name, part)[3]


def _range(name: str, part: str) -> list:
    """``a:b[:step]`` (inclusive) or ``logspace:a:b:n`` (n values geometric from a to b)."""
    if _is_logspace(part):
        a, b, n = _logspace(name, part)
        if n > MAX_RANGE_VALUES:
            raise ValueError(f"{name} logspace {show(part)} has {n:,} values, more than the "
                             f"{MAX_RANGE_VALUES:,} a range may hold")
        if n == 1:
            return [float(a)]
        return [float(v) for v in np.geomspace(a, b, n)]
    if len(part.split(":")) not in (2, 3):
        raise ValueError(f"{name} range must be a:b, a:b:step or logspace:a:b:n, got {show(part)}")
    return expand_range(name, part)


def _is_range(name: str, part: str) -> bool:
    numeric = name not in ("variant", "rule", "model", "stack", "recovery") and not name.startswith(RULE_PARAM)
    return ":" in part and (numeric or part.lower().startswith("logspace:"))


def count_values(name: str, text) -> int:
    """How many values :func:`parse_values` would give, without building them (ranges
    counted); a malformed range raises the same ValueError."""
    if isinstance(text, (list, tuple)):
        return sum(count_values(name, item) if isinstance(item, str) else 1 for item in text)
    if not isinstance(text, str):
        return 1
    total = 0
    for part in text.split(","):
        part = part.strip()
        total += _range_size(name, part) if part and _is_range(name, part) else 1
    return total


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
    n = count_values(name, text)
    if n > MAX_RANGE_VALUES:
        raise ValueError(f"{name} has {n:,} values, more than the {MAX_RANGE_VALUES:,} an axis may hold")
    if isinstance(text, (list, tuple)):
        values = []
        for item in text:
            values.extend(parse_values(name, item) if isinstance(item, str) else [item])
    elif isinstance(text, str):
        values = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                raise ValueError(f"{name} has an empty value in {show(text)}")
            if _is_range(name, part):
                values.extend(_range(name, part))
            else:
                values.append(_scalar(part, name))
    else:
        values = [text]
    if not values:
        raise ValueError(f"{name} has no values")
    seen = set()
    for v in values:
        try:
            key = (type(v), v, hash(v))
        except TypeError:  # a list or table from TOML
            key = (type(v), repr(v))
        if key in seen:
            raise ValueError(f"{name} lists {show(v)} twice")
        seen.add(key)
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


@dataclass(frozen=True)
class Design:
    """An arbitrary design: ``points`` (tuples of values, one per name in ``names``), each a
    grid point of its own, in the order given (a Latin hypercube, a SALib sample, a list
    of set-ups). Plans, runs and resumes as a :class:`Grid` does; point ``i`` is row ``i``.

    Use :func:`design_from_points`. ``models`` names the analytic models of every point
    (as a grid's ``model`` axis; None: ``fluid``).
    """

    names: tuple
    points: tuple
    models: tuple | None = None

    @cached_property
    def axes(self) -> tuple:
        """Each name's distinct values (in order of appearance) as an :class:`Axis`, the size
        last, and the ``model`` axis where ``models`` is given: what the plan's checks and
        notes read (the points themselves are :attr:`points`)."""
        out = []
        for j, name in enumerate(self.names):
            out.append(Axis(name, tuple(dict.fromkeys(pt[j] for pt in self.points))))
        out.sort(key=lambda a: a.name in SIZE_AXES)
        if self.models is not None:
            out.insert(0, Axis("model", self.models))
        return tuple(out)

    def axis(self, name: str) -> Axis | None:
        return next((a for a in self.axes if a.name == name), None)

    def to_dict(self) -> dict:
        """JSON-ready ``{"names": [...], "points": [[...], ...]}`` (and ``models``)."""
        out = {"names": list(self.names), "points": [list(pt) for pt in self.points]}
        if self.models is not None:
            out["models"] = list(self.models)
        return out


def _plain(v, name: str):
    """A Python scalar of a design or grid value (numpy scalars unwrapped); text as typed."""
    if hasattr(v, "item") and callable(v.item) and getattr(v, "ndim", 0) == 0:
        v = v.item()
    if isinstance(v, str):
        return _scalar(v, name) if v.strip() else _empty(name)
    if v is None or isinstance(v, (bool, int, float)):
        return v
    raise ValueError(f"{name} values must be numbers, text or None, got {v!r}")


def _empty(name: str):
    raise ValueError(f"{name} has an empty value")


def design_from_points(points, names=None, models=None) -> Design:
    """A :class:`Design` from a list of dicts, a DataFrame, or a 2-D array with ``names``.

    Parameters
    ----------
    points : list of dict, pandas.DataFrame or 2-D array-like
        One point per row. Names are the grid's (``p``, ``rtt``, ``w0``, ``size-packets``,
        ``variant``, ``rule-param.X`` ...; :func:`canonical_name`); each point needs a size
        (``size_packets`` or ``size_bytes``). A SALib sample works as it is:
        ``design_from_points(X, names=problem)``.
    names : sequence of str or dict, optional
        Column names of a 2-D array (or a SALib problem dict with ``"names"``).
    models : sequence of str, optional
        Analytic models of every point (default: ``fluid``).

    Raises
    ------
    ValueError
        For points that are not one of those forms, a name unknown or given twice, rows of
        unequal length, a missing size, a point listed twice, or too many points.
    """
    if isinstance(names, dict):  # a SALib problem
        names = names.get("names")
    if hasattr(points, "to_dict") and hasattr(points, "columns"):  # a pandas DataFrame
        names = [str(c) for c in points.columns] if names is None else names
        rows = [list(r) for r in points.itertuples(index=False, name=None)]
    elif isinstance(points, (list, tuple)) and points and all(isinstance(r, dict) for r in points):
        if names is not None:
            raise ValueError("names is for a 2-D array; points given as dicts name their values")
        names = list(points[0])
        for i, r in enumerate(points):
            if list(r) != names and set(r) != set(names):
                raise ValueError(f"points[{i}] names {sorted(r)}, points[0] names {sorted(names)}: every point "
                                 "must name the same parameters")
        rows = [[r[n] for n in names] for r in points]
    else:
        import numpy as np

        try:
            arr = np.asarray(points, dtype=object)
        except (ValueError, TypeError):
            arr = None
        if arr is None or arr.ndim != 2 or arr.shape[0] == 0:
            raise ValueError("points must be a non-empty list of dicts, a DataFrame or a 2-D array with names, "
                             f"got {type(points).__name__}"
                             + (f" of shape {arr.shape}" if arr is not None else ""))
        if names is None or isinstance(names, str) or len(list(names)) != arr.shape[1]:
            raise ValueError(f"names must give one name per column of points ({arr.shape[1]}), got {names!r}")
        rows = [list(r) for r in arr]
    if not rows:
        raise ValueError("points must hold at least one point")
    if len(rows) > MAX_RANGE_VALUES:
        raise ValueError(f"points has {len(rows):,} points, more than the {MAX_RANGE_VALUES:,} a design may hold")
    cnames = [canonical_name(n) for n in names]
    for n in cnames:
        if cnames.count(n) > 1:
            raise ValueError(f"sweep parameter {n} is given twice")
        if n == "model":
            raise ValueError("model is not a point's value: give models=[...] for every point")
    sizes = [n for n in cnames if n in SIZE_AXES]
    if len(sizes) != 1:
        raise ValueError("each point needs a size: a size_packets or a size_bytes value (one of them)")
    check_memory(f"a design of {len(rows):,} points", PROCESS_BYTES + ROW_BYTES * float(len(rows)))
    built, seen = [], {}
    for i, r in enumerate(rows):
        if len(r) != len(cnames):
            raise ValueError(f"points[{i}] has {len(r)} values, expected {len(cnames)} ({', '.join(names)})")
        pt = tuple(_plain(v, n) for v, n in zip(r, cnames))
        j = seen.setdefault(pt, i)
        if j != i:
            raise ValueError(f"points[{j}] and points[{i}] are the same point; a design lists each point once")
        built.append(pt)
    if models is not None:
        models = tuple(parse_values("model", list(models)) if not isinstance(models, str)
                       else parse_values("model", models))
    return Design(tuple(cnames), tuple(built), models)


@checked_call
def grid_from_dict(params: dict) -> Grid:
    """A :class:`Grid` from ``{name: values}``: values a list, tuple, range, 1-D array, a
    scalar, or text in the ``--param`` syntax (``"0.01,0.1"``, ``"1:20"``), e.g.
    ``grid_from_dict({"p": [0.01, 0.1], "size_packets": range(1, 21)})``. Axes in the
    dict's order (the size innermost)."""
    if not isinstance(params, dict):
        raise ValueError(f"params must be a dict of name: values, got {params!r}")
    plain = {}
    for name, values in params.items():
        if not isinstance(name, str):
            raise ValueError(f"grid names must be text, got {name!r}")
        if isinstance(values, str):
            plain[name] = values
            continue
        if hasattr(values, "ndim") and getattr(values, "ndim", 0) > 1:
            raise ValueError(f"{name} values must be 1-D, got shape {values.shape}")
        if isinstance(values, (list, tuple, range)) or hasattr(values, "__array__"):
            if hasattr(values, "__len__") and len(values) > MAX_RANGE_VALUES:
                raise ValueError(f"{name} has {len(values):,} values, more than the {MAX_RANGE_VALUES:,} an "
                                 "axis may hold")
            plain[name] = [_plain(v, name) if not isinstance(v, str) else v for v in values]
        else:
            plain[name] = [_plain(values, name)]
    return grid_from_items([], plain)


def parse_param(item: str) -> Axis:
    """One ``NAME=VALUES`` item of ``--param`` as an :class:`Axis`."""
    name, sep, values = str(item).partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--param must be NAME=VALUES, got {show(item)}")
    cname = canonical_name(name)
    return Axis(cname, tuple(parse_values(name.strip(), values)))


@checked_call
def grid_from_items(items, toml_params: dict | None = None) -> Grid:
    """A :class:`Grid` from ``--param`` items and, optionally, a TOML ``[params]`` table.

    Parameters
    ----------
    items : list or tuple of str
        ``"NAME=VALUES"`` items, as given to ``sweep --param`` (e.g. ``"p=0.01,0.05"``,
        ``"size-packets=1:30"``; units as in the parameter's name or the README).
    toml_params : dict, optional
        A TOML ``[params]`` table: ``{name: values}``.

    Returns
    -------
    Grid

    Raises
    ------
    ValueError
        For items that are not a list of strings, a name given twice (in any spelling),
        both size axes, or a bad value list.
    BudgetError
        (a ValueError) For a grid whose rows cannot fit in memory, before any value is built.
    """
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"items must be a list of 'NAME=VALUES' strings, got {items!r}")
    if toml_params is not None and not isinstance(toml_params, dict):
        raise ValueError(f"toml_params must be a dict of name: values, got {toml_params!r}")
    counts = [count_values(str(name), values) for name, values in (toml_params or {}).items()]
    for item in items:
        name, sep, values = str(item).partition("=")
        if sep and name.strip():
            counts.append(count_values(name.strip(), values))
    points = 1
    for n in counts:
        points *= n
    check_memory(f"a grid of {_count(points)} points ({' x '.join(f'{n:,}' for n in counts)} values)",
                 PROCESS_BYTES + ROW_BYTES * float(points))
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


def _count(n: int) -> str:
    return f"{n:,}" if n < 1e15 else f"about {float(n):.2g}"


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

    where = show(str(path))[1:-1]
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ValueError(f"grid file {where}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"grid file {where}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"grid file {where}: {exc}") from None
    except ValueError as exc:  # e.g. a NUL in the path
        raise ValueError(f"grid file {where}: {exc}") from None
    for key in data:
        if key not in TOML_KEYS:
            raise ValueError(f"grid file {where}: unknown key {show(key)} (known: {', '.join(TOML_KEYS)})")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"grid file {where}: params must be a table")
    settings = {k: v for k, v in data.items() if k != "params"}
    return grid_from_items([], params), settings

