"""RTT rounds of a simulated loss-free transfer, and packets sent before the first drop.

What the packet simulator actually does, read off its event trace, so that a growth
rule's flow-level law ("the window at the start of each RTT") can be put beside it.

Rounds are defined by sequence numbers, not by clock time (on a saturated link the
RTTs blur into one ACK stream, but the rounds stay well defined):

* round 0 is the initial window: the segments sent at t = 0;
* round k + 1 is the set of segments released by the ACKs of round k's segments;
  since the transfer is loss-free and segments leave in order, that is every segment
  sent after round k's last segment and up to the sender's ``snd_nxt`` when round
  k + 1's first ACK arrives;
* **cwnd at the start of round k** is the congestion window right after the sender
  has processed the ACK that covers the last segment of round k - 1 (the initial
  window for k = 0): the window grown by exactly round k - 1's ACKs, which is what a
  per-round law ``w_{k} = f(w_{k-1})`` describes. Its start time is when round k's
  first segment left.

With ``b = 1`` and a path whose BDP exceeds the window, round k sends
``max(1, floor(cwnd_k))`` segments, so the count is that of
:func:`latency_model.growth.flow.per_ack_windows` (the rule's own per-ACK law
iterated without a clock).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import check_int
from ..params import TcpParams
from .config import SimConfig
from .transfer import run_transfer

__all__ = ["RoundTrace", "NotLossFree", "rtt_rounds", "packets_before_first_drop"]

_GROWTH = 4  # transfer size multiplier between attempts


@dataclass(frozen=True)
class RoundTrace:
    """Per-round view of one loss-free simulated transfer.

    Attributes
    ----------
    time_s : list of float
        When each round's first segment left, seconds.
    cwnd_packets : list of float
        Congestion window at the start of each round (module docstring), packets.
    segments : list of int
        Segments each round sent.
    size_packets : int
        Size of the transfer that was simulated, packets.
    """

    time_s: list
    cwnd_packets: list
    segments: list
    size_packets: int


class NotLossFree(ValueError):
    """:func:`rtt_rounds`' transfer retransmitted: with no loss drawn, only a timer shorter
    than the round trip (plus the delayed ACK) can do that. ``event`` names the trace's
    event (``"timeout"``, ``"retransmit"``, ...)."""

    def __init__(self, event: str):
        super().__init__(f"rtt_rounds needs a loss-free transfer, the trace has a {event!r} event")
        self.event = event


def _rounds_of(rows, mss: int, n_rounds: int):
    """(times, cwnds, segments) of the first ``n_rounds`` rounds of a trace; None if fewer."""
    times, cwnds, firsts, segments = [rows[0].time_s], [rows[0].cwnd_bytes / mss], [0], []
    sent = 0
    end = None  # end (exclusive) of the current round, fixed at its first ACK
    for r in rows:
        ev = r.event
        if ev == "send":
            sent += 1
            if times[-1] is None:
                times[-1] = r.time_s
        elif ev == "ack":
            if end is None:
                end = sent
            if r.segment >= end:  # covers the current round's last segment
                segments.append(end - firsts[-1])
                if len(segments) == n_rounds:
                    return times, cwnds, segments
                times.append(None)
                cwnds.append(r.cwnd_bytes / mss)
                firsts.append(end)
                end = None
        elif ev in ("retransmit", "timeout", "fast_retransmit", "dupack", "partial_ack"):
            raise NotLossFree(ev)
    return None


def rtt_rounds(
    params: TcpParams,
    n_rounds: int,
    config: SimConfig | None = None,
    *,
    max_packets: int = 250_000,
) -> RoundTrace:
    """Simulate a loss-free transfer long enough for ``n_rounds`` rounds and read them off.

    Parameters
    ----------
    params : TcpParams
        TCP parameters and growth rule; ``p`` is ignored (set to 0).
    n_rounds : int
        Rounds wanted, in [1, 1000].
    config : SimConfig, optional
        Path settings; must have no drop-tail buffer (``queue_packets=None``) so that
        nothing is lost. ``p_ack`` is set to 0.
    max_packets : int
        Largest transfer tried, packets (>= 1). The size grows by 4x from 64 packets
        until the transfer lasts ``n_rounds`` complete rounds.

    Returns
    -------
    RoundTrace

    Raises
    ------
    ValueError
        For invalid input, or if ``n_rounds`` rounds need more than ``max_packets``.
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    n_rounds = check_int("n_rounds", n_rounds, low=1, high=1000)
    max_packets = check_int("max_packets", max_packets, low=1)
    config = SimConfig() if config is None else config
    if config.queue_packets is not None:
        raise ValueError(f"queue_packets must be None for a loss-free trace, got {config.queue_packets!r}")
    params = params.replace(p=0.0)
    config = config.replace(p_ack=0.0)
    size = min(64, max_packets)
    while True:
        _, rows = run_transfer(params, size_packets=size, config=config, trace=True)
        got = _rounds_of(rows, params.mss_bytes, n_rounds)
        if got is not None:
            return RoundTrace(*got, size_packets=size)
        if size >= max_packets:
            raise ValueError(
                f"n_rounds must be reachable within {max_packets} packets for rule "
                f"{params.rule.name!r}, got {n_rounds}")
        size = min(size * _GROWTH, max_packets)


def packets_before_first_drop(
    params: TcpParams,
    config: SimConfig,
    *,
    max_packets: int = 100_000,
) -> int | None:
    """Data packets the simulator sends before the path's first drop (no random loss).

    The transfer grows by 4x from 64 packets until something is dropped; only the
    drop-tail buffer (``config.queue_packets``) can drop, since ``p`` and ``p_ack``
    are set to 0. See :func:`latency_model.sim.config.pipe_config` for a path holding
    a given number of packets.

    Parameters
    ----------
    params : TcpParams
        TCP parameters and growth rule (``p`` ignored).
    config : SimConfig
        Path with a drop-tail buffer (``queue_packets`` not None).
    max_packets : int
        Largest transfer tried, packets (>= 1).

    Returns
    -------
    int or None
        Transmissions before the first drop (its 0-based index in sending order);
        ``None`` if a ``max_packets`` transfer loses nothing (e.g. M below the pipe).
    """
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    if not isinstance(config, SimConfig) or config.queue_packets is None:
        raise ValueError(f"config must be a SimConfig with queue_packets set, got {config!r}")
    max_packets = check_int("max_packets", max_packets, low=1)
    params = params.replace(p=0.0)
    config = config.replace(p_ack=0.0)
    size = min(64, max_packets)
    while True:
        res = run_transfer(params, size_packets=size, config=config)
        if res.first_drop_index is not None:
            return res.first_drop_index
        if size >= max_packets:
            return None
        size = min(size * _GROWTH, max_packets)
