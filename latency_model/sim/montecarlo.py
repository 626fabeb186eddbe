"""Monte Carlo over independent transfers: mean latency with a 95% CI, percentiles,
and latency conditional on the number of lost packets.

Run ``i`` uses child ``i`` of ``SeedSequence(seed).spawn(runs)`` for every size
(common random numbers across sizes), so a size's results do not depend on the
other sizes requested, on ``batch_size`` or on ``workers``.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..checks import (check_array, check_choice, check_int, check_jobs, check_real, check_sizes, check_work, checked_call,
                      simulation_work)
from ..params import TcpParams
from ..results import ResultData
from .config import SimConfig
from ._seeding import root_seed
from .runner import ENGINES, OUT_FIELDS, run_many

__all__ = ["SizeSummary", "SimSummary", "simulate", "mean_ci"]

PERCENTILES = (5.0, 25.0, 50.0, 75.0, 95.0, 99.0)


def mean_ci(x, level: float = 0.95):
    """Mean of ``x`` and its two-sided Student-t confidence interval.

    Parameters
    ----------
    x : array_like
        Sample (seconds or any unit): finite real numbers, at least one.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    (float, (float, float) or None)
        Mean and interval, in the unit of ``x``; the interval is ``None`` for fewer than
        two values.

    Raises
    ------
    ValueError
        For ``level`` outside (0, 1), or ``x`` empty or holding a non-finite or
        non-numeric value.
    """
    level = check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    x = check_array("x", x).ravel()
    m = float(x.mean())
    if x.size < 2:
        return m, None
    half = float(stats.t.ppf(0.5 + level / 2.0, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, (m - half, m + half)


@dataclass(frozen=True)
class SizeSummary(ResultData):
    """Monte Carlo summary for one transfer size.

    Attributes
    ----------
    size_bytes, size_packets : int, float
        Transfer size in bytes and in MSS-sized packets.
    runs : int
        Transfers simulated.
    mean_latency_s : float
        Mean completion time (first data packet sent -> last byte acknowledged), seconds.
    ci95_s : (float, float) or None
        95% Student-t confidence interval of the mean, seconds.
    percentiles_s : dict
        Completion-time percentiles, seconds, keyed ``"p5"``, ``"p50"``, ...
    mean_delivered_s : float
        Mean time until the receiver holds the last byte, seconds.
    conditional : dict
        ``k -> {"n", "mean_s", "ci95_s"}`` over runs with exactly ``k`` lost data packets.
    timeout_fraction : float
        Fraction of runs with at least one retransmission timeout.
    mean_timeouts, mean_fast_retransmits, mean_lost_packets, mean_retransmissions : float
        Per-run means.
    samples : ndarray
        Per-run measures, columns as :data:`~latency_model.sim.runner.OUT_FIELDS`.
    """

    size_bytes: int
    size_packets: float
    runs: int
    mean_latency_s: float
    ci95_s: tuple | None
    percentiles_s: dict
    mean_delivered_s: float
    conditional: dict
    timeout_fraction: float
    mean_timeouts: float
    mean_fast_retransmits: float
    mean_lost_packets: float
    mean_retransmissions: float
    samples: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready dict (without the per-run samples)."""
        size_packets = self.size_packets
        if float(size_packets).is_integer():
            size_packets = int(size_packets)
        return {
            "size_packets": size_packets,
            "size_bytes": self.size_bytes,
            "runs": self.runs,
            "mean_latency_s": self.mean_latency_s,
            "ci95_s": list(self.ci95_s) if self.ci95_s is not None else None,
            "percentiles_s": dict(self.percentiles_s),
            "mean_delivered_s": self.mean_delivered_s,
            "conditional": {
                str(k): {"n": v["n"], "mean_s": v["mean_s"],
                         "ci95_s": list(v["ci95_s"]) if v["ci95_s"] is not None else None}
                for k, v in self.conditional.items()
            },
            "timeout_fraction": self.timeout_fraction,
            "mean_timeouts": self.mean_timeouts,
            "mean_fast_retransmits": self.mean_fast_retransmits,
            "mean_lost_packets": self.mean_lost_packets,
            "mean_retransmissions": self.mean_retransmissions,
        }


@dataclass(frozen=True)
class SimSummary(ResultData):
    """Result of :func:`simulate`: one :class:`SizeSummary` per requested size.

    Attributes
    ----------
    params : TcpParams
        TCP parameters of every run (``params.p``: data loss probability per packet).
    config : SimConfig
        Link, timer and rule settings of every run.
    runs : int
        Transfers simulated per size.
    seed : int
        Root seed: run ``i`` of every size used child ``i`` of
        ``SeedSequence(seed).spawn(runs)``.
    results : list of SizeSummary
        One per requested size, in the order given (times in seconds, sizes in bytes and
        packets).
    sizes_shape : tuple or None
        The shape the sizes were given in (``()`` for one scalar size): :attr:`sizes_bytes`
        and :attr:`mean_latency_s` come back in it. ``to_frame()`` has one row per size.
    """

    params: TcpParams
    config: SimConfig
    runs: int
    seed: int
    results: list
    sizes_shape: tuple = field(default=None, compare=False)

    @property
    def sizes_bytes(self) -> np.ndarray:
        """The sizes simulated, bytes, in the shape they were given (a scalar size: 0-d)."""
        return self._shaped([r.size_bytes for r in self.results])

    @property
    def mean_latency_s(self) -> np.ndarray:
        """Mean latency per size, seconds, in the shape the sizes were given."""
        return self._shaped([r.mean_latency_s for r in self.results])

    def _shaped(self, values) -> np.ndarray:
        a = np.asarray(values)
        return a if self.sizes_shape is None else a.reshape(self.sizes_shape)

    def records(self) -> list[dict]:
        """One dict per size (its :meth:`SizeSummary.to_dict`), with the root seed."""
        return [{**r.to_dict(), "seed": self.seed} for r in self.results]

    def to_dict(self) -> dict:
        """JSON-ready dict: parameters, settings, runs, seed and per-size results."""
        return {
            "params": self.params.to_dict(),
            "sim_config": self.config.to_dict(),
            "runs": self.runs,
            "seed": self.seed,
            "results": [r.to_dict() for r in self.results],
        }


def _summarise(samples: np.ndarray, size_bytes: int, mss: int) -> SizeSummary:
    col = {name: samples[:, i] for i, name in enumerate(OUT_FIELDS)}
    lat = col["completion_s"]
    mean, ci = mean_ci(lat)
    lost = col["lost_packets"].astype(int)
    conditional = {}
    for k in np.unique(lost):
        sel = lat[lost == k]
        m, c = mean_ci(sel)
        conditional[int(k)] = {"n": int(sel.size), "mean_s": m, "ci95_s": c}
    pct = np.percentile(lat, PERCENTILES)
    return SizeSummary(
        size_bytes=size_bytes,
        size_packets=size_bytes / mss,
        runs=int(lat.size),
        mean_latency_s=mean,
        ci95_s=ci,
        percentiles_s={f"p{q:g}": float(v) for q, v in zip(PERCENTILES, pct)},
        mean_delivered_s=float(col["delivered_s"].mean()),
        conditional=conditional,
        timeout_fraction=float(np.mean(col["timeouts"] > 0)),
        mean_timeouts=float(col["timeouts"].mean()),
        mean_fast_retransmits=float(col["fast_retransmits"].mean()),
        mean_lost_packets=float(col["lost_packets"].mean()),
        mean_retransmissions=float(col["retransmissions"].mean()),
        samples=samples,
    )


def _chunk_job(args):
    params, size_bytes, chunk, config, engine, batch_size = args
    return run_many(params, size_bytes, chunk, config, engine=engine, batch_size=batch_size)


@checked_call
def simulate(
    params: TcpParams,
    *positional,
    size_packets=None,
    size_bytes=None,
    runs: int = 10_000,
    rng=None,
    seed=None,
    config: SimConfig | None = None,
    engine: str = "auto",
    batch_size: int = 2048,
    workers: int = 1,
) -> SimSummary:
    """Monte Carlo latency of transfers of the given sizes over a lossy path.

    Every argument after ``params`` is keyword-only; sizes carry their unit in the
    keyword (a positional size is a ValueError).

    Parameters
    ----------
    params : TcpParams
        TCP parameters; ``params.p`` is the independent loss probability of every
        data packet (first transmissions and retransmissions).
    size_packets : int or sequence of int, optional
        Transfer sizes, whole packets of ``params.mss_bytes`` (> 0).
    size_bytes : int or sequence of int, optional
        Transfer sizes, whole bytes (> 0); give this or ``size_packets``.
    runs : int
        Transfers per size (>= 1; default 10,000).
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        The randomness (SPEC 7): an int is the root seed, so run ``i`` is child ``i`` of
        ``SeedSequence(rng).spawn(runs)``; a Generator draws that root
        (:func:`~latency_model.sim._seeding.root_seed`), recorded in ``SimSummary.seed``.
        Default: root seed 0.
    seed : int or numpy.random.Generator, optional
        The older name of ``rng`` (give one of them).
    config : SimConfig, optional
        Link, timer and rule settings.
    engine : {"auto", "python", "compiled"}
        Simulation path; all give identical results (see
        :data:`~latency_model.sim.runner.ENGINES`).
    batch_size : int
        Runs per kernel call (>= 1).
    workers : int
        Worker processes (>= 1); results do not depend on it.

    Returns
    -------
    SimSummary

    Raises
    ------
    ValueError
        For a positional size, neither or both size keywords, runs < 1, a negative
        seed, sizes <= 0 or non-integral, an unknown engine, or workers < 1.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    config = SimConfig() if config is None else config
    if not isinstance(config, SimConfig):
        raise ValueError(f"config must be a SimConfig, got {config!r}")
    runs = check_int("runs", runs, low=1)
    seed = root_seed(rng, seed)
    check_choice("engine", engine, ENGINES)
    batch_size = check_int("batch_size", batch_size, low=1)
    workers = check_jobs("workers", workers)
    mss = params.mss_bytes
    sizes_bytes = [int(s) for s in check_sizes("simulate", positional, size_bytes, size_packets, mss, whole=True)]
    shape = np.shape(size_bytes if size_bytes is not None else size_packets)
    check_work(f"simulate: {runs:,} runs of {len(sizes_bytes)} size(s) up to {max(sizes_bytes) / mss:,.0f} packets at "
               f"p = {params.p:g}", *simulation_work(params, config, runs, [-(-s // mss) for s in sizes_bytes],
                                                    batch_size=batch_size, compiled=engine != "python"))

    children = np.random.SeedSequence(seed).spawn(runs)
    results = []
    for size_b in sizes_bytes:
        if workers == 1:
            samples = run_many(params, size_b, children, config,
                               engine=engine, batch_size=batch_size)
        else:
            bounds = np.linspace(0, runs, workers + 1).astype(int)
            jobs = [(params, size_b, children[a:b], config, engine, batch_size)
                    for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
            from ..workers import worker_init  # workers end with their parent

            with ProcessPoolExecutor(max_workers=workers, initializer=worker_init,
                                     initargs=(os.getpid(),)) as ex:
                samples = np.vstack(list(ex.map(_chunk_job, jobs)))
        results.append(_summarise(samples, size_b, mss))
    return SimSummary(params=params, config=config, runs=runs, seed=seed, results=results, sizes_shape=shape)
