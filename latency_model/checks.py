"""Parameter checks shared by every public function, and the work budgets.

Each check raises :class:`ValueError` whose message names the parameter, the
value received and the allowed range, e.g. ``"p must be in [0, 1), got 1.0"``.
The CLI prints that message on one line and exits with status 2.

Work budgets (:func:`check_memory`, :func:`check_work`, :func:`model_cost`,
:func:`simulation_work`, :func:`packet_work`): a command or a public function estimates
the memory and time of a request before starting it, refuses one that cannot fit in
memory or would run past the time limit (:class:`BudgetError`, giving the estimate and
the limit) and, on the command line, warns about one that is merely long.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os

import numpy as np

__all__ = [
    "check_real",
    "check_int",
    "check_choice",
    "check_flag",
    "check_instance",
    "check_file_path",
    "check_array",
    "check_sizes",
    "check_file_bytes",
    "check_items",
    "checked_call",
    "MAX_INT",
    "BudgetError",
    "check_memory",
    "check_work",
    "memory_limit_bytes",
    "time_limit_s",
    "long_work",
    "sends_per_segment",
    "rto_expiries",
    "check_packet_path",
    "check_packet_work",
    "packet_work",
    "simulation_work",
    "uniform_batch",
    "model_cost",
    "packet_model_seconds",
    "packet_tree_seconds",
    "simulation_cost",
    "transfer_seconds",
    "format_bytes",
    "format_duration",
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
        raise ValueError(f"{name} must be a real number {allowed}, got {_show(value)}")
    try:
        v = float(value)
    except OverflowError:  # an int beyond float range, 10**400
        v = math.inf
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number {allowed}, got {_show(value)}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    return v


MAX_INT = 2**63 - 1
"""Largest integer any parameter takes (numpy's int64, which counts, seeds and sizes go
into): above it a count overflowed in numpy or in float arithmetic (``OverflowError``)
before the range check of the value that needed it could run."""


def check_int(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]``; integral floats such as ``2.0`` are accepted.

    Whatever the bounds, ``|value|`` is at most :data:`MAX_INT` (the message says so only
    to a value beyond it).

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
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    else:
        f = float(value)
        if not math.isfinite(f) or f != int(f):
            raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
        v = int(f)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name} must be {allowed}, got {_show(value)}")
    if abs(v) > MAX_INT:
        raise ValueError(f"{name} must be {allowed} and below 2**63 in size, got {_show(value)}")
    return v


def check_jobs(name: str, value) -> int:
    """A count of worker processes: an integer in ``[1, 4 x os.cpu_count()]``.

    More processes than that only cost memory and start-up time (each worker is a process
    of its own, and the work is CPU-bound); results never depend on the count (every
    random stream is spawned from one ``SeedSequence``).

    Raises
    ------
    ValueError
        Naming ``name`` and the range, for anything else.
    """
    cpus = os.cpu_count() or 1
    high = 4 * cpus
    try:
        return check_int(name, value, low=1, high=high)
    except ValueError:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) > high:
            raise ValueError(f"{name} must be an integer in [1, {high}] (4 x the {cpus} CPUs of this machine), "
                             f"got {value}") from None
        raise


def _show(value) -> str:
    from .values import show

    return show(value)


def check_items(name: str, value, what: str = "values") -> tuple:
    """``value`` as a tuple of its items: a list, tuple, set, range or 1-D array, not a
    scalar, a string or a mapping (``variants=True`` or ``queues=5`` is refused naming the
    parameter, not by ``TypeError: 'bool' object is not iterable``). The items are not
    checked."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple, set, frozenset, range,
                                                                       np.ndarray)):
        raise ValueError(f"{name} must be a list or tuple of {what}, got {_show(value)}")
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"{name} must be a list or tuple of {what}, got an array of shape {value.shape}")
    return tuple(value)


def checked_call(obj):
    """Make a public function (or class, through its ``__init__``) refuse a call that does not
    fit its signature (an unknown keyword, a missing or an extra argument) with a ValueError
    naming the argument, where Python raises ``TypeError``.

    Costs nothing on a good call: the signature is bound only when the call raised
    TypeError, and a TypeError from inside a call that fits is raised as it was.
    """
    if isinstance(obj, type):
        obj.__init__ = _checked(obj.__init__, obj.__name__)
        return obj
    return _checked(obj, f"{obj.__name__}()")


def _checked(func, label: str):
    @functools.wraps(func)
    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except TypeError:
            sig = inspect.signature(func)
            try:
                sig.bind(*args, **kwargs)
            except TypeError as bad:
                names = [n for n, p in sig.parameters.items()
                         if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
                text = str(bad).replace("missing a required argument", "missing the argument")
                raise ValueError(f"{label}: {text} (its parameters: {', '.join(names)})") from None
            raise
    return call


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them.

    An unhashable ``value`` (a list where a name is expected) is refused the same way,
    not with the ``TypeError`` a lookup in a dict would raise.
    """
    try:
        known = value in choices
    except TypeError:
        known = False
    if not known:
        listed = ", ".join(str(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def check_flag(name: str, value) -> bool:
    """Return ``value`` if it is a bool (or numpy bool), else raise a ValueError.

    A switch given as ``"no"``, ``None`` or ``2.5`` is refused rather than read by its
    truth value.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_instance(name: str, value, cls, what: str | None = None):
    """Return ``value`` if it is an instance of ``cls``, else raise a ValueError.

    Parameters
    ----------
    name : str
        Parameter name used in the error message.
    value : object
        The value to check.
    cls : type or tuple of types
        The accepted type(s).
    what : str, optional
        How the message names the accepted type(s); by default their class names.
    """
    if not isinstance(value, cls):
        if what is None:
            classes = cls if isinstance(cls, tuple) else (cls,)
            what = " or ".join(c.__name__ for c in classes)
        raise ValueError(f"{name} must be a {what}, got {value!r}")
    return value


def check_file_path(name: str, value):
    """Return ``value`` as a :class:`pathlib.Path` if it can name an output file.

    A string or path-like, not empty and not an existing directory; its parent need not
    exist (the writers create it).
    """
    from pathlib import Path

    if not isinstance(value, (str, os.PathLike)) or str(value) == "":
        raise ValueError(f"{name} must be a file path (str or Path), got {value!r}")
    path = Path(value)
    if path.is_dir():
        raise ValueError(f"{name} must be a file path, got the directory {str(path)!r}")
    return path


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
        raw = np.asarray(value)
        # Booleans and strings are not numbers here (``True`` is not 1 byte, ``"3"`` is
        # not 3 packets), although numpy would convert both.
        if raw.dtype.kind not in "iuf":
            raise TypeError
        arr = raw.astype(float)
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
        raise ValueError(f"{name} must be finite and {allowed}, got {float(first)!r}")
    return arr


def check_sizes(func: str, positional, size_bytes, size_packets, mss_bytes: int, *,
                whole: bool = False) -> np.ndarray:
    """File sizes in bytes from exactly one of ``size_bytes=`` and ``size_packets=``.

    The public API takes sizes by keyword, with the unit in the name (a bare
    ``sizes`` argument meant bytes in the model and packets in the simulator).

    Parameters
    ----------
    func : str
        Name of the public function, for the messages.
    positional : tuple
        Arguments given by position after ``params`` (must be empty: a positional size
        is ambiguous).
    size_bytes, size_packets : array_like or None
        File sizes, bytes or packets of ``mss_bytes`` (> 0); exactly one is given.
    mss_bytes : int
        Segment size, bytes.
    whole : bool
        Sizes must be whole numbers of their unit (the simulator sends whole bytes and
        packets).

    Returns
    -------
    ndarray
        Sizes in bytes, 1-D float array.

    Raises
    ------
    ValueError
        For a positional size, neither or both keywords, or sizes not > 0 (or not whole).
    """
    if positional:
        raise ValueError(f"{func}: a positional size is ambiguous; pass size_bytes=... (bytes) "
                         f"or size_packets=... (packets of mss_bytes) by keyword")
    if (size_bytes is None) == (size_packets is None):
        raise ValueError(f"{func}: give exactly one of size_bytes (bytes) and size_packets (packets)")
    name, value, unit = (("size_bytes", size_bytes, 1) if size_packets is None
                         else ("size_packets", size_packets, mss_bytes))
    arr = check_array(name, value, low=0.0, low_open=True).ravel()
    if whole and np.any(arr != np.round(arr)):
        bad = arr[arr != np.round(arr)][0]
        raise ValueError(f"{name} must be whole numbers (> 0), got {bad!r}")
    out = arr * unit
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be at most {_bound(np.finfo(float).max / unit)} (a size in bytes beyond "
                         f"float range), got {float(arr[~np.isfinite(out)][0])!r}")
    return check_file_bytes(name, out, unit)


def check_file_bytes(name: str, sizes_bytes: np.ndarray, unit: float = 1.0) -> np.ndarray:
    """``sizes_bytes`` if every file holds at least one byte, else a ValueError naming
    ``name`` (in its ``unit``, bytes per unit): a size of 5e-324 bytes passed the "> 0"
    check and overflowed the fluid model's size grid (``mss / size``)."""
    if np.any(sizes_bytes < 1.0):
        least = f"{1.0 / unit:g} (one byte)" if unit != 1 else "1 (one byte)"
        raise ValueError(f"{name} must be at least {least}, got {float(sizes_bytes[sizes_bytes < 1.0][0]) / unit!r}")
    return sizes_bytes


def _bound(x) -> str:
    """A bound as text: whole numbers in full (2147483, not 2.14748e+06), others by %g."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else f"{x:g}"


def _interval(low, high, low_open, high_open) -> str:
    if low is None and high is None:
        return "(any finite value)"
    if high is None:
        return f"{'>' if low_open else '>='} {_bound(low)}"
    if low is None:
        return f"{'<' if high_open else '<='} {_bound(high)}"
    return f"in {'(' if low_open else '['}{_bound(low)}, {_bound(high)}{')' if high_open else ']'}"


# ---------------------------------------------------------------------------
# Work budgets: estimate the cost of a request before starting it.
#
# The estimates are deliberately simple (a few terms fitted to measurements on the
# defaults); they decide between "refuse: cannot fit in memory", "warn: long" and "run".

MEMORY_LIMIT_ENV = "LATENCY_MODEL_MEMORY_LIMIT"
"""Environment variable overriding the memory limit: bytes, or with a unit (``512M``, ``8G``)."""

MEMORY_FRACTION = 0.8
"""Share of the machine's memory (or of the cgroup's limit) a command may plan to use."""

LONG_WORK_S = 60.0
"""Estimated seconds from which a command warns (one line on stderr) before starting."""

TIME_LIMIT_ENV = "LATENCY_MODEL_TIME_LIMIT"
"""Environment variable overriding the time limit: seconds (``600``), or with a unit
(``30s``, ``10min``, ``2h``)."""

TIME_LIMIT_S = 3600.0
"""Estimated CPU seconds of one request above which it is refused (:func:`check_work`): an
hour. The estimates are rough (a factor of 2-3 either way), so the
limit only stops what would run away (p close to 1, files of 1e15 packets, a million flows:
years by the estimate); a request between :data:`LONG_WORK_S` and this runs (the command
line warns first). ``LATENCY_MODEL_TIME_LIMIT`` sets it (``60`` refuses any request
estimated over a minute)."""

PROCESS_BYTES = 400e6
"""Memory of a worker process before any work (Python, numpy, scipy, numba), bytes."""

_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


class BudgetError(ValueError):
    """A request whose estimated memory is over the limit (:func:`check_memory`)."""


def parse_bytes(name: str, text: str) -> int:
    """``text`` (``"1000000"``, ``"512M"``, ``"8G"``, ``"1.5T"``; binary units) as bytes (> 0)."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        value = float(t[: len(t) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise ValueError(f"{name} must be a number of bytes such as 8G or 512M, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a number of bytes > 0, got {text!r}")
    return int(value)


@functools.lru_cache(maxsize=1)
def _machine_memory_bytes() -> int | None:
    """Physical memory, or the cgroup's memory limit when lower; None when unknown."""
    found = []
    try:
        found.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < 2**60:
            found.append(int(text))
    return min(found) if found else None


def memory_limit_bytes() -> tuple[int, str]:
    """The memory one command may plan to use, bytes, and where the limit comes from.

    ``LATENCY_MODEL_MEMORY_LIMIT`` when set, else :data:`MEMORY_FRACTION` of the machine's
    memory (or of its cgroup's limit), else 8 GiB.
    """
    text = os.environ.get(MEMORY_LIMIT_ENV)
    if text:
        return parse_bytes(MEMORY_LIMIT_ENV, text), f"{MEMORY_LIMIT_ENV}={text}"
    total = _machine_memory_bytes()
    if total is None:
        return 8 * 2**30, f"a default, the machine's memory being unknown; {MEMORY_LIMIT_ENV} sets it"
    return int(MEMORY_FRACTION * total), (f"{MEMORY_FRACTION:.0%} of this machine's {format_bytes(total)}; "
                                          f"{MEMORY_LIMIT_ENV} sets it")


def format_bytes(n: float) -> str:
    """``n`` bytes in words: ``"858 GiB"``, ``"12.5 MiB"``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(n) < 1024 or unit == "EiB":
            break
        n /= 1024
    if unit == "EiB" and n >= 1024:
        return f"{n:.1e} EiB"
    return f"{n:.3g} {unit}" if unit != "B" else f"{n:.0f} B"


def format_duration(seconds: float) -> str:
    """``seconds`` in words: ``"45 s"``, ``"3.2 min"``, ``"2.5 h"``, ``"4.1 days"``, ``"3e+05 years"``."""
    s = float(seconds)
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if s >= 2 * size if unit != "min" else s >= size:
            v = s / size
            return f"{v:.2g} {unit}" if v < 100 else f"{v:.0f} {unit}" if v < 1e4 else f"{v:.1e} {unit}"
    return f"{s:.0f} s"


def check_memory(what: str, need_bytes: float) -> None:
    """Refuse work whose estimated memory ``need_bytes`` is over :func:`memory_limit_bytes`.

    Raises
    ------
    BudgetError
        ``"<what> would need about 858 GiB of memory, more than the limit of 18.4 GiB
        (80% of ...)"``.
    """
    limit, source = memory_limit_bytes()
    if not need_bytes <= limit:
        raise BudgetError(f"{what} would need about {format_bytes(need_bytes)} of memory, more than the "
                          f"limit of {format_bytes(limit)} ({source})")


_TIME_UNITS = {"": 1.0, "s": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def time_limit_s() -> tuple[float, str]:
    """The CPU seconds one request may be estimated to take, and where the limit comes from:
    ``LATENCY_MODEL_TIME_LIMIT`` when set, else :data:`TIME_LIMIT_S`."""
    text = os.environ.get(TIME_LIMIT_ENV)
    if not text:
        return TIME_LIMIT_S, f"{TIME_LIMIT_ENV} sets it"
    t = text.strip().lower()
    unit = next((u for u in ("min", "s", "m", "h", "d") if t.endswith(u)), "")
    try:
        value = float(t[: len(t) - len(unit)]) * _TIME_UNITS[unit]
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{TIME_LIMIT_ENV} must be a number of seconds > 0 such as 600 or 2h, got {text!r}")
    return value, f"{TIME_LIMIT_ENV}={text}"


def check_work(what: str, memory_bytes: float, seconds: float) -> None:
    """Refuse work whose estimated memory is over :func:`memory_limit_bytes` or whose
    estimated CPU seconds are over :func:`time_limit_s`.

    Raises
    ------
    BudgetError
        ``"<what> would take about 3.2e+03 years (a rough estimate), more than the limit of
        60 min (LATENCY_MODEL_TIME_LIMIT sets it)"``, or the memory message of
        :func:`check_memory`.
    """
    check_memory(what, memory_bytes)
    limit, source = time_limit_s()
    if not seconds <= limit:
        raise BudgetError(f"{what} would take about {format_duration(seconds)} (a rough estimate), more than "
                          f"the limit of {format_duration(limit)} ({source})")


def long_work(what: str, seconds: float) -> str | None:
    """A one-line warning when ``seconds`` (an estimate) is at least :data:`LONG_WORK_S`, else None.

    It never refuses: a sweep or a reproduction is many requests, each checked against the
    limits by the function that runs it (:func:`check_work`), and may take days on purpose."""
    if seconds >= LONG_WORK_S:
        return f"{what} may take about {format_duration(seconds)} (a rough estimate)"
    return None


def _loss_terms(p: float, size_packets: float) -> float:
    """The loss counts k the model sums for a file of ``size_packets`` at loss rate ``p``
    (the loss law's reach: mean + 12 sd + 12, as :func:`~latency_model.model.losses.loss_count_pmf`)."""
    mean = p * size_packets / max(1.0 - p, 1e-300)
    return math.ceil(mean + 12.0 * math.sqrt(mean + 1.0) + 12.0)


def packet_model_seconds(p: float, max_size_packets: float, w0: float = 2.0, b: int = 2,
                         n_sizes: int | None = None) -> float:
    """Rough CPU seconds of the packet model (:mod:`latency_model.model.packet`, its
    default level DP) for sizes up to ``max_size_packets`` at loss rate ``p``, one call,
    with an initial window of ``w0`` packets and an ACK every ``b`` segments, asked for
    ``n_sizes`` distinct sizes (None: every size up to the largest).

    Measured (docs/packet-model.md, its cost; this machine, within a factor of about 3): the
    level DP costs up to about 0.6 s per level (one level per packet) once a level holds
    its thousands of states, and stops at the level where its distribution turns
    stationary, some 120-340 packets in at p = 0.05-0.2 (sizes beyond are
    extrapolated; at p = 0.01 it runs every level): 1..1000 packets take 59 s at
    p = 0.2, 175 s at 0.1, 256 s at 0.05, 486 s at 0.01 (W0 = 2, b = 2, the default
    ``max_states`` 16,000, exact serialisation; 2026-11-27; 67, 179, 221 and 441 s with
    the rounds model, 111, 292, 362 and 638 s before the kernels' arrays were uncounted).
    A level holds more states with a larger first window and with an ACK for every
    segment: the validation runs (``validation/packet/results*.csv``, ``model_time_s``)
    took about (2 + W0) / 4 times as long, twice that with b = 1 (W0 = 10, p = 0.2,
    b = 1, 40 and 100 packets: 528-730 s; b = 2: 266-381 s); since a level's size is
    bounded (``max_states``) such calls take less than that (240-333 s with
    b = 1, 151-213 s with b = 2 at 16,000: ``results_ms16k.csv``), so this errs long
    there. Most of a call is the file-end tails of the sizes asked
    for (76 % for sizes 1..300 at p = 0.1), so with
    ``n_sizes`` below the levels run, the levels' quarter stays and the tails' share
    shrinks in proportion (on 48 single-size validation cells that
    took over 10 s, the time taken was 0.16-2.9 times this estimate, 0.95 at the median;
    0.04-0.8 times the all-sizes one). It only decides whether to warn.
    """
    n = max(float(max_size_packets), 1.0)
    if p <= 0.0:
        return 0.01 * n
    scale = (2.0 + max(float(w0), 1.0)) / 4.0 * (2.0 if b == 1 else 1.0)
    levels = min(n, 25.0 / p)  # levels run before the stationary extrapolation, about
    tails = 1.0 if n_sizes is None else min(max(float(n_sizes), 1.0) / levels, 1.0)
    return 0.5 + 0.55 * levels * scale * (PACKET_LEVEL_SHARE + (1.0 - PACKET_LEVEL_SHARE) * tails)


def packet_tree_seconds(p: float, sizes_packets) -> float:
    """Rough CPU seconds of the packet model's tree DP on the SACK sender and timestamps
    (the ``linux`` profile, which runs there only) for the sizes ``sizes_packets``
    (packets) at loss rate ``p``, one call (its peak memory at the bound: 463 MB
    measured, NewReno, b = 1, W0 = 10, p = 0.1, 60 packets). Measured on that sender
    only; the RFC sender's tree DP (``--p90``, wide windows) folds differently.

    The tree DP resolves one transmission a level, about N / (1 - p) levels for N
    packets, and its levels hold more states as the file and its expected loss count
    N p grow, up to its bound (20,000 for the SACK sender: tier-2 folding at
    ``TREE_EXT_MAX_STATES``), about 4.5 s a level there. Each size runs its own
    private frontier, so a call costs about the sum of its sizes' single-size costs.
    Measured (the ``linux`` profile, 2026-11-27, ``model_time_s`` of
    ``validation/packet/results_random_linux*.csv``; within a
    factor of about 2 on the ten single-size calls that took over a second, 1.1-272 s,
    W0 1-10, b 1 and 2, p 0.001-0.18; sizes 1-20 together at p = 0.1: about 230 s,
    this gives 200 s). It only decides whether to warn.
    """
    total = 0.0
    for n in {max(float(x), 1.0) for x in sizes_packets}:
        levels = n / max(1.0 - p, 1e-3)
        total += 0.02 + 4.5 * levels * min(1.0, (n / 40.0) ** 2 * n * p)
    return total


PACKET_LEVEL_SHARE = 0.25
"""Share of a 1..N packet-model call that is not the sizes' tails (the levels and their
folding; measured 19-24 %: docs/packet-model.md, its cost), for :func:`packet_model_seconds`."""


def model_cost(p: float, mss_bytes: float, max_size_bytes: float, n_sizes: int) -> tuple[float, float]:
    """Estimated peak memory (bytes) and seconds of one expected-latency solve.

    Parameters
    ----------
    p : float
        Loss probability per packet.
    mss_bytes : float
        Segment size, bytes.
    max_size_bytes : float
        Largest file size of the call, bytes.
    n_sizes : int
        Number of sizes in the call.

    Notes
    -----
    With K the loss counts summed and L the size rows of the solver's tables (a quarter
    packet apart up to 20 packets, then 7% apart), the loss law takes about 7 arrays of
    n_sizes x K doubles and the tables K levels of L x 2 x 28 doubles (default
    :class:`~latency_model.model.recursion.SolverOptions`; up to three tables are held at
    once). Time: about 10 us per table row and level, 0.3 ms per size. Measured: 300,000
    packets at p = 0.1, 3.9 GB and 80 s.
    """
    size_packets = max(float(max_size_bytes) / float(mss_bytes), 1.0)
    k = _loss_terms(p, size_packets)
    rows = 82 + max(0.0, math.log(size_packets / 20.0) / math.log(1.07))
    pmf = 7 * 8.0 * n_sizes * (k + 1)
    tables = 3 * 8.0 * k * rows * 2 * 28
    out = 4 * 8.0 * n_sizes * k
    seconds = 1e-5 * k * rows + 3e-4 * n_sizes + 1e-7 * n_sizes * k
    return PROCESS_BYTES + pmf + tables + out, seconds


def transfer_seconds(size_packets: float, p: float, compiled: bool = True, sender: str = "rfc") -> float:
    """Estimated CPU seconds of one simulated transfer (about N / (1 - p) transmissions) by
    the compiled kernel of ``sender`` (``SimConfig.sender``) or, with ``compiled`` False, the
    pure-Python engine.

    Measured (2026-11-27, one core; 5,000-20,000 transfers of 1, 20 and 100 packets at
    p = 0, 0.1 and 0.2, seeding included): about 1 us a transfer plus 0.36 us (rfc), 0.46 us
    (ns3) or 0.65 us (sack: the linux profile) a data transmission; the pure engine about
    10 us a transmission."""
    sent = float(size_packets) / max(1.0 - p, 1e-300)
    if not compiled:
        return 2e-4 + 1e-5 * sent
    return 1e-6 + _KERNEL_SECONDS_PER_PACKET.get(sender, 6.5e-7) * sent


_KERNEL_SECONDS_PER_PACKET = {"rfc": 3.6e-7, "ns3": 4.6e-7, "sack": 6.5e-7}
"""CPU seconds per data transmission of each sender's compiled kernel (:func:`transfer_seconds`)."""


def simulation_cost(runs: int, size_packets: float, p: float, n_sizes: int = 1, *,
                    compiled: bool = True, sender: str = "rfc") -> tuple[float, float]:
    """Estimated peak memory (bytes) and CPU seconds of ``runs`` simulated transfers of each
    of ``n_sizes`` sizes up to ``size_packets`` packets.

    Memory: a ``SeedSequence`` child per run (about 400 B), the measures of every run (10
    doubles, kept per size) and the state of a transfer in flight (about 300 B a packet).
    """
    memory = PROCESS_BYTES + 700.0 * runs + 100.0 * runs * n_sizes + 300.0 * size_packets
    return memory, runs * n_sizes * transfer_seconds(size_packets, p, compiled, sender)


# ---------------------------------------------------------------------------
# Work of a request from its parameters: how many transmissions and timer expiries a
# transfer takes on average, which is what runs away at p close to 1 or with a round trip
# longer than the largest RTO.


def sends_per_segment(p: float, rtt_s: float = 0.0, max_rto_s: float = math.inf) -> float:
    """Expected transmissions per segment of a transfer, for the work estimates.

    Each transmission is lost with probability ``p`` independently, so the transmissions
    of a segment up to the first that arrives are geometric with mean ``1 / (1 - p)``
    (p = 0.999999: a million per segment, each one event and, under loss, one timer
    expiry). A timer that cannot exceed ``max_rto_s`` (RFC 6298 (2.5)) expires about
    ``rtt_s / max_rto_s`` times before an ACK can return one round trip after a send,
    each expiry a retransmission: ``(1 + rtt_s / max_rto_s) / (1 - p)`` when ``rtt_s >
    max_rto_s`` (an upper bound: the simulator's 20 packets at RTT 3600 s, p = 0, sent
    396, this gives 1,220; 950 at p = 0.5, this 2,440).
    """
    spurious = rtt_s / max_rto_s if rtt_s > max_rto_s else 0.0
    return (1.0 + spurious) / max(1.0 - float(p), 1e-300)


def rto_expiries(rtt_s: float, initial_rto_s: float, max_rto_s: float) -> int:
    """Expiries of a retransmission timer started at a send before its ACK can return,
    ``rtt_s`` later, the timer starting at ``initial_rto_s`` and doubling at each expiry up
    to ``max_rto_s`` (RFC 6298 (5.5) and (2.5); Karn's rule keeps it backed off, since no
    retransmitted segment gives a sample). 0 when the first RTO is longer than the round
    trip. Each expiry puts one more copy of the segment (and later its ACK) in flight."""
    t, rto, n = 0.0, max(float(initial_rto_s), 1e-9), 0
    while t + rto < rtt_s:
        t += rto
        n += 1
        if rto >= max_rto_s:  # the rest at max_rto_s each, counted at once
            return n + max(0, math.ceil((rtt_s - t) / max_rto_s) - 1)
        rto = min(2.0 * rto, max_rto_s)
    return n


def check_packet_path(rtt_s: float, max_rto_s: float, initial_rto_s: float = 1.0, name: str = "max_rto_s") -> None:
    """Refuse a path whose round trip is longer than the largest RTO, for the packet model.

    There the timer (RFC 6298, backed off to ``max_rto_s`` and kept there by Karn's rule)
    expires about ``rtt_s / max_rto_s`` times in every round trip (:func:`rto_expiries`),
    each time one more copy of the segment in flight, for as long as the transfer lasts;
    the level DP's states hold a fixed number of event slots (about a window of data, of
    ACKs and half a window more) and overflowed (a RuntimeError at RTT 500 s for one
    packet, 1200 s for five, after 13 and 24 expiries), its tree DP grew past 5 GB. Below
    it, only the first RTO's back-off expires before the first ACK (at most
    ``log2(max_rto_s / initial_rto_s) + 1`` times, 7 with the defaults), which they hold.

    Raises
    ------
    ValueError
        Naming ``rtt_s`` and the timer's largest value (``name``: ``max_rto_s``, or
        ``rto_s`` for the paper's fixed timer) and the expiries per round trip.
    """
    if rtt_s > max_rto_s:
        n = rto_expiries(rtt_s, initial_rto_s, max_rto_s)
        raise ValueError(
            f"rtt_s must be at most {name} ({max_rto_s:g} s) for the packet model, got {rtt_s:g} s: the "
            f"timer would expire {n} times before an ACK could return, one more copy of the segment in flight "
            f"each time, in every round trip; raise {name}, or use the simulator")


def check_packet_work(params, path, sizes_packets, tree: bool, k_max: int = 4) -> None:
    """Refuse a packet-model call (:mod:`latency_model.model.packet`) on a path it cannot
    follow (:func:`check_packet_path`) or over the work limits (:func:`packet_work`,
    :func:`check_work`); ``path`` is its ``PathConfig``, ``tree`` whether the tree DP
    runs and ``k_max`` the conditional latencies it returns."""
    if path.fixed_rto:  # the paper's timer: always params.rto, no back-off
        check_packet_path(params.rtt_s, params.rto, params.rto, "rto_s")
    else:
        check_packet_path(params.rtt_s, path.max_rto_s, path.initial_rto_s)
    sizes = np.ravel(np.asarray(sizes_packets, dtype=float))
    memory, seconds = packet_work(params.p, sizes, params.w0, params.b, tree, k_max)
    check_work(f"the packet model ({'tree' if tree else 'level'} DP) of {sizes.size:,} size(s) up to "
               f"{sizes.max():.3g} packets at p = {params.p:g} with k_max = {k_max:,}", memory, seconds)


def packet_work(p: float, sizes_packets, w0: float = 2.0, b: int = 2, tree: bool = False,
                k_max: int = 4) -> tuple[float, float]:
    """Estimated peak memory (bytes) and CPU seconds of one packet-model call for the sizes
    ``sizes_packets`` (packets) returning ``k_max`` conditional latencies: the tree DP's
    (:func:`packet_tree_seconds`, with ``tree``, or at p = 0, one loss-free path a size,
    about 10 ms a packet) or the level DP's (:func:`packet_model_seconds`).

    Memory: the process and the rows of ``k_max + 1`` loss counts the level DP's tail memo
    allocates at once (two per node of its first 65,536 and of its 4,096-deep stack:
    ``model/_packet_levels.py``, ``_Memo``; ``k_max`` = 144,317 asked 70.5 GiB for one of
    them); beyond that, both DPs guard the growth of their own tables against the memory
    limit as they run."""
    sizes = [max(float(x), 1.0) for x in np.ravel(np.asarray(sizes_packets, dtype=float))]
    memory = PROCESS_BYTES + 8.0 * (k_max + 1) * 2 * (65536 + 4096)
    if p <= 0.0:
        return memory, 0.5 + 0.01 * sum(set(sizes))
    if tree:
        return memory, packet_tree_seconds(p, sizes)
    return memory, packet_model_seconds(p, max(sizes), w0, b, n_sizes=len(set(sizes)))


UNIFORM_BATCH_BYTES = 256 * 2**20
"""Most bytes of uniform variates the compiled simulator draws ahead for one batch of runs
(:func:`uniform_batch`): at p = 0.999999 a 20-packet run draws 4e7 (320 MB), and a batch
of 20 such runs grew past 5 GB."""


def uniform_batch(batch_size: int, block: float) -> int:
    """Runs per batch of the compiled simulator: ``batch_size``, fewer when their ``block``
    uniforms each (``latency_model.sim.kernel.block_size``) would take more than
    :data:`UNIFORM_BATCH_BYTES`, at least one (the batch size changes no result)."""
    return int(max(1, min(batch_size, UNIFORM_BATCH_BYTES // (8.0 * block))))


def simulation_work(params, config, runs: int, sizes_packets, *, batch_size: int = 2048,
                    compiled: bool = True) -> tuple[float, float]:
    """Estimated peak memory (bytes) and CPU seconds of ``runs`` simulated transfers of each
    size in ``sizes_packets`` (packets) with ``params`` (a TcpParams) and ``config`` (a
    SimConfig).

    A transfer of N segments makes about N :func:`sends_per_segment` transmissions
    (``1 / (1 - p)`` each, more with a round trip beyond ``config.max_rto_s``), each a few
    events: :func:`transfer_seconds` of them. Memory: :func:`simulation_cost`, plus the
    uniform variates drawn ahead, about two per expected transmission (twice that when
    ACKs are lost: ``latency_model.sim.kernel.block_size``) for each run of a batch
    (``min(batch_size, runs)`` with the compiled engine, one with the pure-Python one):
    at p = 0.999999 and 20 packets, 320 MB a run. The compiled kernels' event queues hold
    ``4 (N + rwnd) + 64`` entries of about 80 bytes (``run_batch`` in ``sim/kernel*.py``),
    sized by the receiver window even where it is beyond the file (rwnd = 2**30 packets:
    320 GiB).
    """
    sizes = np.ravel(np.asarray(sizes_packets, dtype=float))
    top = float(sizes.max()) if sizes.size else 1.0
    per_segment = sends_per_segment(params.p, params.rtt_s, config.max_rto_s)
    uniforms = 2.0 * per_segment * (2.0 if config.p_ack > 0.0 else 1.0)
    at_once = min(uniform_batch(batch_size, uniforms * top + 16), runs) if compiled else 1
    queues = 320.0 * (top + float(params.rwnd)) if compiled else 0.0
    memory = simulation_cost(runs, top, 0.0, sizes.size)[0] + 8.0 * at_once * (uniforms * top + 16) + queues
    sender = config.sender
    seconds = runs * sum(transfer_seconds(float(n) * per_segment, 0.0, compiled, sender) for n in sizes)
    return memory, seconds
