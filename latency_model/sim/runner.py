"""Run many independent transfers, one ``SeedSequence`` child per run.

The flat-array engine (:mod:`~latency_model.sim.kernel`: every sender, rfc, ns3 and sack
with PRR and RACK-TLP, over the shared pieces of :mod:`~latency_model.sim.flat`, and every
registered growth rule) runs batches of transfers compiled with numba, or one transfer at a
time interpreted (``engine="python"``: the same functions, bit-identical measures); the rare
run a batch cannot finish (more uniforms than one block) runs again alone from the same
child. A rule of an unregistered class is refused
(:func:`~latency_model.growth.laws.rule_index`).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..checks import check_choice, check_instance, check_int, check_work, checked_call, simulation_work, uniform_batch
from ..growth import RULES
from ..growth.laws import rule_index
from ..params import TcpParams
from . import kernel as K
from ._seeding import root_seed
from .config import SimConfig
from .transfer import check_recovery, run_flat

__all__ = ["ENGINES", "run_many", "pack_params", "fast_path_supported", "runs_compiled", "OUT_FIELDS"]

ENGINES = ("auto", "python", "compiled")
"""``"python"``: one transfer at a time, the flat engine interpreted; ``"compiled"``: the
same engine compiled by numba (error if numba is unavailable or the run is not supported:
:func:`fast_path_supported`); ``"auto"``: compiled when numba is installed and the run is
supported, else interpreted."""

OUT_FIELDS = K.OUT_FIELDS


def _check_setup(params, config) -> SimConfig:
    """``config`` (``SimConfig()`` for None) after checking ``params`` and ``config``'s types
    and that the sender reads every recovery setting (:func:`~.transfer.check_recovery`:
    no Early Retransmit under RACK-TLP)."""
    check_instance("params", params, TcpParams)
    config = SimConfig() if config is None else config
    check_instance("config", config, SimConfig, "SimConfig or None")
    check_recovery(params, config)
    return config


def fast_path_supported(params: TcpParams, config: SimConfig | None = None) -> bool:
    """Whether a compiled kernel implements the run of ``params`` over ``config``.

    The kernels implement every rule whose class is in :data:`~latency_model.growth.RULES`
    (each rule's law, :mod:`latency_model.growth.laws`; not an unregistered subclass), for
    every sender (``rfc``, ``sack``, and ``ns3`` within what
    :func:`~latency_model.sim.ns3.check_ns3_params` admits: the standard rule only), with
    or without a drop-tail buffer (``config.queue_packets``).

    Parameters
    ----------
    params : TcpParams
        TCP parameters of the run (only ``params.rule`` and, for the ns3 sender, the
        fields ns-3 supports are looked at).
    config : SimConfig, optional
        Simulator settings; ``None``: ``SimConfig()``, whose only relevant default is
        no buffer and the ``rfc`` sender.

    Returns
    -------
    bool
        True if :func:`run_many` with ``engine="compiled"`` can run it (numba permitting);
        with ``engine="auto"`` it then takes the kernel. False for a rule of an
        unregistered class, which :func:`run_many` refuses on every engine.

    Raises
    ------
    ValueError
        If ``params`` is not a TcpParams or ``config`` not a SimConfig (or None).
    """
    config = _check_setup(params, config)
    if type(params.rule) not in RULES.values():
        return False
    if config.sender == "ns3":  # what ns-3's TcpNewReno runs
        from .ns3 import check_ns3_params

        try:
            check_ns3_params(params, config)
        except ValueError:
            return False
    return True


def runs_compiled(engine: str, params: TcpParams, config: SimConfig | None = None) -> bool:
    """True if :func:`run_many` with ``engine`` runs a compiled kernel (every sender has one:
    the ``rfc``, ``ns3`` and ``sack`` kernels), for estimates of its cost: not ``"python"``,
    numba available and :func:`fast_path_supported`."""
    from ..accel import numba_available  # noqa: PLC0415

    check_choice("engine", engine, ENGINES)
    supported = fast_path_supported(params, config)  # checks params and config, once
    return engine != "python" and numba_available() and supported


def pack_params(params: TcpParams, size_bytes: int, config: SimConfig):
    """Integer and float parameter arrays of the kernel for one transfer size
    (:func:`~latency_model.sim.kernel.pack_params`)."""
    return K.pack_params(params, size_bytes, config)


def _python_row(params, size_bytes, config, child, compiled=None) -> np.ndarray:
    """One run's measures by :func:`~.transfer.run_flat` (``compiled=False``: the flat
    engine interpreted, as without numba; None: as :func:`~.transfer.run_transfer` runs it)."""
    rng = np.random.Generator(np.random.PCG64(child))
    r = run_flat(params, size_bytes, -(-size_bytes // params.mss_bytes), config, rng, None, False, compiled=compiled)
    return np.array([getattr(r, f) for f in OUT_FIELDS], dtype=float)


def _kernel_for(engine: str, params: TcpParams, config: SimConfig):
    if engine == "python":
        return None
    supported = fast_path_supported(params, config)
    compiled = K.compiled_run_batch() if supported else None
    if engine == "compiled":
        if not supported:
            raise ValueError(
                "engine 'compiled' supports the registered growth rules with the rfc, sack or ns3 sender (ns3: "
                "within what ns-3 runs), got rule "
                f"{params.rule.name!r}, sender {config.sender!r}")
        if compiled is None:
            raise ValueError("engine 'compiled' needs numba (pip install numba; "
                             "or unset LATENCY_MODEL_NO_NUMBA)")
    return compiled


_CHILDREN = ("a sequence of numpy.random.SeedSequence (one per run; non-negative integer "
             "seeds are accepted too)")


def _check_children(children) -> list:
    """``children`` as a list, each a seed ``PCG64`` takes reproducibly: a SeedSequence
    (or another ``ISeedSequence`` with a state) or an integer >= 0. ``None`` (fresh OS
    entropy), Generators and BitGenerators are refused."""
    if isinstance(children, (str, bytes, np.random.bit_generator.ISeedSequence)) or children is None:
        raise ValueError(f"children must be {_CHILDREN}, got {children!r}")
    try:
        children = list(children)
    except TypeError:
        raise ValueError(f"children must be {_CHILDREN}, got {children!r}") from None
    iss = np.random.bit_generator.ISeedSequence
    seedless = np.random.bit_generator.SeedlessSeedSequence
    for i, c in enumerate(children):
        if isinstance(c, iss):
            if not isinstance(c, seedless):
                continue
        elif isinstance(c, numbers.Integral) and not isinstance(c, (bool, np.bool_)) and c >= 0:
            continue
        raise ValueError(f"children[{i}] must be a numpy.random.SeedSequence or an integer >= 0 "
                         f"(one seed per run), got {c!r}")
    return children


@checked_call
def run_many(
    params: TcpParams,
    size_bytes: int,
    children,
    config: SimConfig | None = None,
    *,
    engine: str = "auto",
    batch_size: int = 2048,
    rng=None,
) -> np.ndarray:
    """Measures of one transfer per ``SeedSequence`` child.

    Parameters
    ----------
    params : TcpParams
        TCP parameters (data loss probability ``params.p``).
    size_bytes : int
        Transfer size, bytes (>= 1).
    children : sequence of numpy.random.SeedSequence
        One child per run; run ``i`` draws only from ``Generator(PCG64(children[i]))``.
        A non-negative integer seed may stand for a child; ``None`` (a fresh, unrepeatable
        seed), a Generator or a BitGenerator is refused. An int ``N`` (not in a sequence)
        is a count of runs: the children are ``SeedSequence(root).spawn(N)``, the root from
        ``rng`` (as :func:`~latency_model.sim.montecarlo.simulate`'s: the same samples).
    config : SimConfig, optional
        Link and timer settings.
    engine : {"auto", "python", "compiled"}
        See :data:`ENGINES`. All engines give identical results.
    batch_size : int
        Runs per kernel call (>= 1); does not change results.
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        With a count of runs: the root seed (:func:`~latency_model.sim._seeding.root_seed`;
        default 0). Refused with explicit children (each run draws from its own).

    Returns
    -------
    ndarray of float64, shape (len(children), len(OUT_FIELDS))
        Columns as in :data:`OUT_FIELDS` (seconds for times, counts otherwise).

    Raises
    ------
    ValueError
        For ``params`` not a TcpParams, ``config`` not a SimConfig, ``size_bytes`` not an
        integer >= 1, an invalid child, an unknown engine, ``batch_size`` < 1,
        ``engine="compiled"`` for a run no kernel implements, Early Retransmit with
        RACK-TLP (:func:`~latency_model.sim.transfer.check_recovery`), or a rule of an
        unregistered class (:func:`~latency_model.growth.laws.rule_index`: the message
        says how to register it).
    """
    config = _check_setup(params, config)
    rule_index(params.rule)
    size_bytes = check_int("size_bytes", size_bytes, low=1)
    check_choice("engine", engine, ENGINES)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    if isinstance(children, (int, np.integer)) and not isinstance(children, bool):  # a count of runs
        children = np.random.SeedSequence(root_seed(rng)).spawn(check_int("children", children, low=0))
    elif rng is not None:
        raise ValueError("rng gives the runs' seeds when children is a count of runs; with explicit "
                         "children each run draws from its own, so give one of them")
    children = _check_children(children)
    # The CLI and the sweep estimate this before starting; a direct call is checked here, so
    # a size that cannot fit is refused with the estimate instead of a MemoryError.
    n_packets = -(-size_bytes // params.mss_bytes)
    check_work(f"simulating a transfer of {n_packets:,} packets ({len(children):,} runs at p = {params.p:g})",
               *simulation_work(params, config, max(len(children), 1), [n_packets], batch_size=batch_size,
                                compiled=engine != "python"))
    out = np.zeros((len(children), len(OUT_FIELDS)), dtype=float)
    fn = _kernel_for(engine, params, config)
    if fn is None:
        for i, child in enumerate(children):
            out[i] = _python_row(params, size_bytes, config, child, compiled=False)
        return out
    PI, PF = pack_params(params, size_bytes, config)
    n = int(PI[K.P_N])
    from ._seeding import fill_uniforms  # only the compiled engines need it

    k0 = K.block_size(n, params.p, config.p_ack)
    batch_size = uniform_batch(batch_size, k0)  # a batch's uniforms within UNIFORM_BATCH_BYTES
    for lo in range(0, len(children), batch_size):
        chunk = children[lo:lo + batch_size]
        U = np.empty((len(chunk), k0), dtype=float)
        # = Generator(PCG64(child)).random(k0) per child, bit for bit, seeded in compiled code.
        fill_uniforms(chunk, U)
        status = np.zeros(len(chunk), dtype=np.int64)
        fn(U, PI, PF, out[lo:lo + len(chunk)], status)
        for j in np.flatnonzero(status):
            out[lo + j] = _python_row(params, size_bytes, config, chunk[j])
    return out
