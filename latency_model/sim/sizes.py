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

__all__ = ["SizeGenerator", "ParetoSizes", "FixedSizes", "MAX_PACKETS"]

MAX_PACKETS = 2**53
"""Largest file size, packets, a generator may give: above it a float no longer holds every
whole number (and far above it the int64 sizes of :meth:`SizeGenerator.sample_whole_packets`
overflowed to negative numbers)."""


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
        """``n`` sizes rounded up to whole packets.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the draw.
        n : int
            Number of sizes (>= 0).

        Returns
        -------
        ndarray of int64, shape (n,)
            Sizes, whole packets (>= 1): :meth:`sample_packets` rounded up (a size within
            1e-9 of a whole number is taken as that number).

        Raises
        ------
        ValueError
            For an invalid ``rng`` or ``n``, or a drawn size above :data:`MAX_PACKETS`
            (a Pareto ``shape`` so small that its tail reaches beyond it), naming the
            generator's parameters.
        """
        x = self.sample_packets(rng, n)
        big = ~(x <= MAX_PACKETS)  # inf and nan included
        if np.any(big):
            raise ValueError(f"{self!r} drew a size of {float(x[big][0]):.3g} packets, above the "
                             f"largest whole size of {MAX_PACKETS} (2**53) packets{self._too_large()}")
        return np.maximum(np.ceil(x - 1e-9), 1).astype(np.int64)

    def _too_large(self) -> str:
        """Advice appended to the message of a size above :data:`MAX_PACKETS`."""
        return ""

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
        Smallest size x_m, packets, in (0, 2**53] (:data:`MAX_PACKETS`).
    shape : float
        Tail index alpha (> 0).
    """

    scale: float = 4.0
    shape: float = 1.2

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, low_open=True,
                                                     high=float(MAX_PACKETS)))
        object.__setattr__(self, "shape", check_real("shape", self.shape, low=0.0, low_open=True))

    def sample_packets(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` Pareto sizes, packets.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the draw.
        n : int
            Number of sizes (>= 0).

        Returns
        -------
        ndarray of float64, shape (n,)
            Sizes, packets (real-valued, >= ``scale``; ``inf`` can occur for a very small
            ``shape``).
        """
        n = check_int("n", n, low=0)
        # numpy's pareto() is the Lomax (Pareto II) law; 1 + Lomax is Pareto I with x_m = 1.
        return self.scale * (1.0 + _check_rng(rng).pareto(self.shape, n))

    def _too_large(self) -> str:
        return (f"; shape={self.shape!r} gives so heavy a tail that P(X > 2**53) = "
                f"{(self.scale / MAX_PACKETS) ** self.shape:.3g}: use a larger shape")

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
        File size, packets, in (0, 2**53] (:data:`MAX_PACKETS`).
    """

    packets: float = 10.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "packets", check_real("packets", self.packets, low=0.0, low_open=True,
                                                       high=float(MAX_PACKETS)))

    def sample_packets(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` copies of ``packets``.

        Parameters
        ----------
        rng : numpy.random.Generator
            Checked, not drawn from (the sizes are fixed).
        n : int
            Number of sizes (>= 0).

        Returns
        -------
        ndarray of float64, shape (n,)
            ``packets`` each, packets.
        """
        n = check_int("n", n, low=0)
        _check_rng(rng)
        return np.full(n, self.packets, dtype=float)

    @property
    def mean_packets(self) -> float:
        return self.packets

    def describe(self) -> dict:
        return {"name": "fixed", "packets": self.packets}
