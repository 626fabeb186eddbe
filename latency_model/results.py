"""Results as data: ``to_dict()`` (JSON-ready) and ``to_frame()`` (a pandas DataFrame) for
every result object, from one implementation.

A result class mixes in :class:`ResultData` (or, where it cannot change its bases, calls
:func:`to_dict` and :func:`to_frame`). ``to_frame`` builds one row per record of
``records()`` (a result says what its rows are: one per size, per variant, ...), nested
dicts becoming dotted columns (``percentiles_s.p50``). pandas is optional (the ``pandas``
extra) and imported only when a frame is asked for.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["ResultData", "as_data", "to_dict", "to_frame", "require_pandas"]


def as_data(value):
    """``value`` as plain Python data: dataclasses and objects with ``to_dict`` as dicts,
    arrays as (nested) lists of their shape, numpy scalars as Python numbers, tuples as
    lists, dict keys as strings. Fields declared ``repr=False`` (per-run samples) are left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        own = getattr(type(value), "to_dict", None)
        if own is not None and own is not ResultData.to_dict:
            return as_data(value.to_dict())
        return {f.name: as_data(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
    if hasattr(value, "to_dict") and callable(value.to_dict) and not isinstance(value, dict):
        return as_data(value.to_dict())
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): as_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_data(v) for v in value]
    return value


def to_dict(result) -> dict:
    """The fields of a dataclass result as plain data (:func:`as_data`)."""
    return {f.name: as_data(getattr(result, f.name)) for f in dataclasses.fields(result) if f.repr}


def require_pandas():
    """The ``pandas`` module, or an ImportError saying how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame() needs pandas, an optional dependency: pip install 'latency_model[pandas]' "
                          "(or pip install pandas); to_dict() needs nothing") from None
    return pandas


def to_frame(records: list[dict]):
    """A DataFrame of ``records`` (one row each; nested dicts as dotted columns, lists kept
    as cells)."""
    pd = require_pandas()
    rows = [as_data(r) for r in records]
    for r in rows:  # NaN, not None, where a number is missing (pandas' float columns)
        for k, v in r.items():
            if v is None:
                r[k] = math.nan
    return pd.json_normalize(rows) if rows else pd.DataFrame()


class ResultData:
    """Mixin of result dataclasses: :meth:`to_dict` (unless the class has its own),
    :meth:`records` (one dict per row; by default the whole result as one row) and
    :meth:`to_frame`."""

    def to_dict(self) -> dict:
        """The result as JSON-ready plain data."""
        return to_dict(self)

    ROWS: str | None = None
    """The attribute holding the rows (a list of dicts) of :meth:`to_frame`; None: the whole
    result is one row."""

    def records(self) -> list[dict]:
        """The rows of :meth:`to_frame`: one dict each (the :attr:`ROWS` attribute's, or the
        whole result as one)."""
        return list(getattr(self, self.ROWS)) if self.ROWS else [self.to_dict()]

    def to_frame(self):
        """The result as a pandas DataFrame, one row per record (:meth:`records`).

        Raises
        ------
        ImportError
            When pandas is not installed (``pip install 'latency_model[pandas]'``).
        """
        return to_frame(self.records())
