"""One transfer, with random or scripted losses and optionally its event trace.

:func:`run_transfer` runs every sender (rfc, ns3, sack) with every registered growth rule
(:data:`~latency_model.growth.RULES`) on the flat-array engine of the Monte Carlo runs
(:func:`.kernel.run_single`: compiled by numba, or the same functions interpreted). A rule
of an unregistered class is refused (:func:`~latency_model.growth.laws.rule_index`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from ..checks import check_flag, check_instance, check_int, check_work, checked_call, simulation_work
from ..growth.laws import rule_index
from ..params import TcpParams
from ..results import ResultData
from .config import SimConfig

__all__ = ["TransferResult", "TraceRow", "run_transfer", "segments_of", "check_recovery", "drop_counts"]


@dataclass(frozen=True)
class TransferResult(ResultData):
    """Measures of one transfer.

    Attributes
    ----------
    size_bytes : int
        Transfer size, bytes.
    n_segments : int
        Data segments, ``ceil(size_bytes / MSS)``.
    completion_s : float
        First data packet sent (t = 0) -> the ACK covering the last byte reaches
        the sender, seconds.
    delivered_s : float
        t = 0 -> the receiver holds every byte in order, seconds.
    lost_packets : int
        Data transmissions (first or retransmissions) dropped by the path.
    lost_acks : int
        ACKs dropped by the path.
    data_packets_sent : int
        Data transmissions, retransmissions included.
    retransmissions : int
        Data transmissions beyond the first of each segment.
    timeouts : int
        Retransmission-timer expiries (each back-off counts).
    max_backoff : int
        Largest number of consecutive expiries without a new ACK.
    fast_retransmits : int
        Entries into fast retransmit (dup_t, ER or tail-retransmit trigger).
    first_transmissions_lost : int
        Segments whose first transmission was lost (Binomial(n_segments, p) under
        random loss).
    first_drop_index : int or None
        Data transmissions that left before the first one the path dropped (random
        loss or a full drop-tail buffer), i.e. the 0-based index of the first drop
        in sending order; ``None`` if nothing was dropped.
    tlp_probes : int
        Tail loss probes sent (RFC 8985 7.3; only the ``sack`` sender with
        ``rack_tlp`` sends them, 0 otherwise).
    """

    size_bytes: int
    n_segments: int
    completion_s: float
    delivered_s: float
    lost_packets: int
    lost_acks: int
    data_packets_sent: int
    retransmissions: int
    timeouts: int
    max_backoff: int
    fast_retransmits: int
    first_transmissions_lost: int
    first_drop_index: int | None = None
    tlp_probes: int = 0

    def to_dict(self) -> dict:
        """Plain dict of the measures."""
        return asdict(self)


@dataclass(frozen=True)
class TraceRow:
    """One trace line: the sender state just after ``event``.

    Attributes
    ----------
    time_s : float
        Event time, seconds.
    event : str
        ``send``, ``retransmit``, ``ack``, ``dupack``, ``fast_retransmit``,
        ``partial_ack``, ``recovery_exit``, ``timeout``, ``done`` (sender; with
        ``rack_tlp`` also ``rack_lost``, ``tlp_probe``, ``tlp_recovery``) or
        ``data_arrival``, ``ack_sent`` (receiver).
    segment : int
        Segment index (data events) or ACK number in segments (ACK events).
    cwnd_bytes, ssthresh_bytes : float
        Congestion window and slow-start threshold, bytes.
    flight_bytes : int
        ``snd_nxt - snd_una``, bytes.
    rto_s : float
        The retransmission timeout the next timer start would use (RFC 6298, backed
        off after an expiry until a valid RTT sample), seconds.
    """

    time_s: float
    event: str
    segment: int
    cwnd_bytes: float
    ssthresh_bytes: float
    flight_bytes: int
    rto_s: float


def segments_of(size_bytes: int, mss_bytes: int) -> int:
    """Number of segments of a ``size_bytes`` transfer with segments of ``mss_bytes``."""
    return -(-size_bytes // mss_bytes)


def check_recovery(params: TcpParams, config: SimConfig) -> None:
    """Raise ValueError for a recovery setting the simulated sender would not read:
    Early Retransmit (``params.early_retransmit``, variant ``er``) with RACK-TLP
    (``config.rack_tlp``, the linux profile's loss detection), where the SACK sender's
    loss marks and pipe come from RACK, never from the DupThresh that Early Retransmit
    lowers (:mod:`.kernel_sack`): the run would be NewReno's, silently."""
    if params.early_retransmit and config.rack_tlp:
        raise ValueError("early_retransmit (variant er) has no effect under RACK-TLP (rack_tlp on, the linux "
                         "profile's loss detection: RACK marks the losses, not the DupThresh Early Retransmit "
                         "lowers); turn it off (--no-rack-tlp) or use another variant")


def drop_counts(drops, n_segments: int) -> np.ndarray:
    """Scripted losses as the engine reads them: the number of first transmissions of each
    segment the path drops.

    Parameters
    ----------
    drops : mapping of int to int, or iterable of int
        Segment index (0-based) -> number of its first transmissions to drop (>= 1); an
        iterable drops the first transmission of each listed segment (a segment listed
        twice loses its first two).
    n_segments : int
        Transfer length, segments; every index must be in [0, n_segments).

    Returns
    -------
    ndarray of int64, shape (n_segments,)

    Raises
    ------
    ValueError
        For ``drops`` neither a mapping nor an iterable of indices, an index outside
        [0, n_segments), or a count < 1.
    """
    if isinstance(drops, Mapping):
        items = list(drops.items())
    else:
        try:
            if isinstance(drops, (str, bytes)):
                raise TypeError
            items = [(seg, 1) for seg in drops]
        except TypeError:
            raise ValueError("drops must be a mapping of segment index to count or an iterable "
                             f"of segment indices (ints in [0, {n_segments - 1}]), got {drops!r}") from None
    counts = np.zeros(n_segments, np.int64)
    for seg, times in items:
        counts[check_int("drops segment index", seg, low=0, high=n_segments - 1)] += check_int(
            "drops count", times, low=1)
    return counts


@checked_call
def run_transfer(
    params: TcpParams,
    *positional,
    size_packets: int | None = None,
    size_bytes: int | None = None,
    config: SimConfig | None = None,
    rng=None,
    drops=None,
    trace: bool = False,
):
    """Simulate one transfer packet by packet.

    Sizes are keyword-only, with their unit (a positional size is a ValueError).

    Parameters
    ----------
    params : TcpParams
        TCP parameters. The path's data loss probability is ``params.p``.
    size_packets : int, optional
        Transfer size in full segments of ``params.mss_bytes`` (>= 1).
    size_bytes : int, optional
        Transfer size, bytes (>= 1); the last segment may be short. Give exactly one
        of ``size_packets`` and ``size_bytes``.
    config : SimConfig, optional
        Link, timer and rule settings; default ``SimConfig()``.
    rng : numpy.random.Generator, int or numpy.random.SeedSequence, optional
        Randomness for random losses (required when ``drops`` is None and
        ``params.p > 0`` or ``config.p_ack > 0``); an int or SeedSequence seeds
        ``numpy.random.default_rng`` (SPEC 7).
    drops : mapping or iterable of int, optional
        Deterministic losses instead of random ones: segment index (0-based) ->
        number of its first transmissions to drop, or a list of segments whose
        first transmission is dropped.
    trace : bool
        Also return the event trace.

    Returns
    -------
    TransferResult or (TransferResult, list of TraceRow)

    Raises
    ------
    ValueError
        For an invalid size, a missing or invalid ``rng``, ``drops`` not a mapping or
        iterable of segment indices (or an invalid entry), ``trace`` not a bool, Early
        Retransmit with RACK-TLP (:func:`check_recovery`), a rule of an unregistered class
        (:func:`~latency_model.growth.laws.rule_index`: the message says how to register
        it), or ns-3 settings ns-3 does not run (:func:`.kernel.pack_params`).
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    config = SimConfig() if config is None else config
    if not isinstance(config, SimConfig):
        raise ValueError(f"config must be a SimConfig, got {config!r}")
    check_recovery(params, config)
    rule_index(params.rule)
    if positional:
        raise ValueError("run_transfer: a positional size is ambiguous; pass size_packets=... "
                         "(packets of mss_bytes) or size_bytes=... (bytes) by keyword")
    if (size_packets is None) == (size_bytes is None):
        raise ValueError("give exactly one of size_packets and size_bytes")
    if size_packets is not None:
        size = check_int("size_packets", size_packets, low=1) * params.mss_bytes
    else:
        size = check_int("size_bytes", size_bytes, low=1)
    n = segments_of(size, params.mss_bytes)
    check_work(f"simulating a transfer of {n:,} packets",
               *simulation_work(params, config, 1, [n], compiled=False))
    trace = check_flag("trace", trace)
    if rng is not None:  # checked even where no draw is needed (p = 0, or scripted drops)
        if isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool):
            rng = np.random.default_rng(rng if isinstance(rng, np.random.SeedSequence)
                                        else check_int("rng", rng, low=0))  # SPEC 7: a seed
        check_instance("rng", rng, np.random.Generator,
                       "numpy.random.Generator, an integer >= 0, a numpy.random.SeedSequence or None")

    if drops is not None:
        drops = drop_counts(drops, n)
    elif rng is None and (params.p > 0.0 or config.p_ack > 0.0):
        raise ValueError("rng (a numpy.random.Generator or a seed) is required for random losses")
    return run_flat(params, size, n, config, rng, drops, trace)


def run_flat(params, size, n, config, rng, drops, trace, compiled=None):
    """:func:`run_transfer` on :func:`.kernel.run_single`: compiled when ``compiled`` is True
    (and numba is there), interpreted when False; by default (None) compiled only once
    numba is loaded in this process (a Monte Carlo run ran before, say). One transfer
    interpreted takes about a millisecond, while importing numba and loading the compiled
    engine from its cache take a second or two, which a command that runs a few scripted
    transfers (``tables``, ``trace``) would pay for nothing. Both give the same bits.
    ``drops``: None (random losses from ``rng``) or :func:`drop_counts`. The uniforms are
    drawn a block (:func:`.kernel.block_size`) at a time: a run that needs another block,
    more queue space or a longer trace buffer runs again from the start, so the draws and
    results are the same."""
    from . import kernel as K  # noqa: PLC0415

    PI, PF = K.pack_params(params, size, config)
    u = np.empty(0)
    if drops is not None:
        PI, PF = K.scripted(PI, PF, drops)
    elif params.p > 0.0 or config.p_ack > 0.0:
        block = K.block_size(n, params.p, config.p_ack)
        u = rng.random(block)
    if compiled is None:
        compiled = "numba" in sys.modules
    fn = (K.compiled_run_single() if compiled else None) or K.run_single
    cap = 4 * (n + int(PF[K.Q_RWNDB] / PI[K.P_MSS])) + 64
    rows = 8 * n + 64 if trace else -1
    out = np.zeros(K.N_OUT + 2)
    while True:
        F = np.zeros(K.N_FS + (K.TR_ROWS - K.N_FS + K.TR_COLS * rows if trace else 0))
        status = fn(u, PI, PF, F, cap, out)
        if status == K.FAIL_UNIFORMS:
            u = np.concatenate([u, rng.random(block)])
        elif status == K.FAIL_QUEUE:
            cap *= 2
        elif status != 0:  # pragma: no cover - the RTO timer keeps an event pending
            raise RuntimeError("no event pending before the transfer completed")
        elif trace and F[K.TR_COUNT] > rows:
            rows = int(F[K.TR_COUNT])
        else:
            break
    m = dict(zip(K.OUT_FIELDS, out.tolist()))
    result = TransferResult(
        size_bytes=size,
        n_segments=n,
        completion_s=m["completion_s"],
        delivered_s=m["delivered_s"],
        **{f: int(m[f]) for f in K.OUT_FIELDS[2:]},
        first_drop_index=None if out[K.N_OUT] < 0 else int(out[K.N_OUT]),
        tlp_probes=int(out[K.N_OUT + 1]),
    )
    if not trace:
        return result
    table = F[K.TR_ROWS:K.TR_ROWS + K.TR_COLS * int(F[K.TR_COUNT])].reshape(-1, K.TR_COLS).tolist()
    return result, [TraceRow(t, K.TRACE_EVENTS[int(ev)], int(seg), cwnd, ssth, int(fl), rto)
                    for t, ev, seg, cwnd, ssth, fl, rto in table]

