"""File-size generators for multi-flow scenarios: Pareto and fixed sizes.

Sizes are drawn in packets (segments of the flow's MSS), as in Burst TCP's experiment
(Section 4.1: "file size (in packets) follows a Pareto distribution with the scale
parameter 4 and the shape parameter 1.2"). :meth:`SizeGenerator.sample_packets` draws
real-valued sizes; :meth:`SizeGenerator.sample_whole_packets` rounds them up to whole
packets, which is what a transfer carries (a Pareto(4, a) file is then at least 4 packets).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_int, check_real

__all__ = ["SizeGenerator", "ParetoSizes", "FixedSizes"]


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
    return rng


class SizeGenerator(abc.ABC):
    """Draws file sizes, packets, from an explicit ``numpy.random.Generator``."""

    @abc.abstractmethod
    def sample_packets(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes, packets (real-valued, > 0)."""

    @property
    @abc.abstractmethod
    def mean_packets(self) -> float:
        """Mean of :meth:`sample_packets`, packets (``inf`` when it does not exist)."""

    def sample_whole_packets(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes rounded up to whole packets (int64, >= 1)."""
        x = self.sample_packets(rng, n)
        return np.maximum(np.ceil(x - 1e-9), 1).astype(np.int64)

    @abc.abstractmethod
    def describe(self) -> dict:
        """JSON-serialisable description (``{"name": ..., parameters}``)."""


@dataclass(frozen=True)
class ParetoSizes(SizeGenerator):
    """Pareto (type I) sizes: ``P(X > x) = (scale/x)**shape`` for ``x >= scale``, packets.

    Mean ``scale * shape / (shape - 1)`` for ``shape > 1`` (infinite otherwise); variance
    finite only for ``shape > 2``. Burst TCP: ``ParetoSizes(4, 1.2)``, mean 24 packets.

    Parameters
    ----------
    scale : float
        Smallest size x_m, packets (> 0).
    shape : float
        Tail index alpha (> 0).
    """

    scale: float = 4.0
    shape: float = 1.2

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, low_open=True))
        object.__setattr__(self, "shape", check_real("shape", self.shape, low=0.0, low_open=True))

    def sample_packets(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = check_int("n", n, low=0)
        # numpy's pareto() is the Lomax (Pareto II) law; 1 + Lomax is Pareto I with x_m = 1.
        return self.scale * (1.0 + _check_rng(rng).pareto(self.shape, n))

    @property
    def mean_packets(self) -> float:
        return self.scale * self.shape / (self.shape - 1.0) if self.shape > 1.0 else math.inf

    @property
    def var_packets(self) -> float:
        """Variance of :meth:`sample_packets`, packets^2 (``inf`` for ``shape <= 2``)."""
        a, m = self.shape, self.scale
        return m * m * a / ((a - 1.0) ** 2 * (a - 2.0)) if a > 2.0 else math.inf

    def describe(self) -> dict:
        return {"name": "pareto", "scale_packets": self.scale, "shape": self.shape}


@dataclass(frozen=True)
class FixedSizes(SizeGenerator):
    """Every file has ``packets`` packets.

    Parameters
    ----------
    packets : float
        File size, packets (> 0).
    """

    packets: float = 10.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "packets", check_real("packets", self.packets, low=0.0, low_open=True))

    def sample_packets(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = check_int("n", n, low=0)
        _check_rng(rng)
        return np.full(n, self.packets, dtype=float)

    @property
    def mean_packets(self) -> float:
        return self.packets

    def describe(self) -> dict:
        return {"name": "fixed", "packets": self.packets}
