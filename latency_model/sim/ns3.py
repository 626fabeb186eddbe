"""ns-3.37's TCP sender (``TcpSocketBase`` + ``TcpNewReno`` + ``TcpClassicRecovery``, no SACK):
what it runs and how it starts; its mechanisms are :mod:`.kernel_ns3` on the flat-array
engine (:mod:`.flat`), run by :func:`~latency_model.sim.run_transfer` and the Monte Carlo.

The ``ns3`` stack profile (``SimConfig(sender="ns3", rtt_sampling="ns3")``). Written from
ns-3.37's source (``src/internet/model/``; validation/ns3/NOTES.md cites file, function and
line for each point), segment by segment, in the order ns-3 runs it for every ACK:
``EstimateRtt`` -> ``TcpTxBuffer::DiscardUpTo`` -> ``ProcessAck`` -> ``SendPendingData``.

* Scoreboard (``tcp-tx-buffer.cc``): each outstanding segment has three flags, sacked
  ("Reno SACK" marks: without SACK a duplicate ACK is taken as one segment having left),
  lost and retransmitted; ``pipe = outstanding - sacked - lost + retransmitted``
  (``BytesInFlight``). ``AddRenoSack`` marks the first unmarked segment after the head;
  ``MarkHeadAsLost`` clears the head's marks and sets lost; ``DiscardUpTo`` moves a mark
  found on the new head to the next segment and marks the head lost.
* Sending (``SendPendingData``, ``AvailableWindow``, ``NextSeg``): while
  ``min(rwnd, cwnd) - pipe > 0``, the first lost, not retransmitted, not sacked segment,
  else new data while fewer than rwnd bytes are outstanding (``<``: ns-3.41's fix of the
  3.37 ``<=`` that crashes in ``TcpRateLinux::SkbSent``); silly-window rule: stop when
  less than one MSS is available and more than that remains; nothing is sent in CA_OPEN
  once the last segment (with FIN) has been sent (FIN_WAIT_1). The timer is armed by a
  transmission only when it is not pending.
* Growth (``TcpNewReno::IncreaseWindow``): per ACK, ``segs = floor(bytes acked / MSS)``
  (remainder carried); slow start adds one MSS per ACK, then, at or above ssthresh with
  segments left, one ``max(1, floor(MSS^2 / cwnd))`` bytes step; cwnd an integer of bytes.
* Duplicate ACK (``ProcessAck``, ``DupAck``): ``ack == snd_una < HighTxMark``; ignored in
  CA_LOSS; counted outside recovery (OPEN -> DISORDER); in recovery one Reno mark each;
  in DISORDER the ``dup_t``-th enters recovery if ``ack >= recover`` or ``recover`` is
  inactive, and with Limited Transmit the earlier ones add one Reno mark each (which lets
  ``SendPendingData`` send a new segment while the window allows).
* ``EnterRecovery``: a Reno mark, head lost, ``recover = HighTxMark``,
  ``ssthresh = max(2 MSS, floor((pipe + MSS) / 2))`` with the pipe after those marks,
  ``cwnd = ssthresh`` (``TcpClassicRecovery``: the inflated window is a trace value only),
  retransmit the head (the timer is not restarted).
* New ACK: in recovery below ``recover`` (partial): head lost, retransmitted, cwnd
  unchanged, timer restarted on the first partial ACK only; in CA_LOSS below ``recover``:
  growth and timer restart; otherwise DISORDER -> OPEN, the full ACK ending recovery
  sets ``cwnd = ssthresh`` and then grows once, the ACK ending CA_LOSS grows by
  ``floor((ack - recover) / MSS)`` segments (usually none).
* Timer (``EstimateRtt``, ``NewAck``, ``ReTxTimeout``): the RTT history holds one entry
  per first transmission (the SYN's first: its SYN-ACK gives the first sample); on every
  ACK only the oldest entry is looked at and gives a sample if it was never retransmitted
  and is covered; ``RTO = max(SRTT + max(G, 4 RTTVAR), MinRto)`` after a sample **and on
  every timer restart by a new ACK** (so a back-off collapses at the first new ACK, sample
  or not); on expiry: ``ssthresh = max(2 MSS, floor(pipe / 2))`` recomputed on every
  expiry, every outstanding segment lost (the receiver's out-of-order data is resent:
  go-back-N), ``recover = HighTxMark``, ``RTO = min(2 RTO, 60 s)``, history cleared,
  CA_LOSS, ``cwnd = 1 MSS``.
"""

from __future__ import annotations

__all__ = ["check_ns3_params", "ns3_initial_rtt"]

_SYN_BYTES = 4
"""Bytes a SYN carries beyond the data header (ns-3's window-scale option, padded)."""


def check_ns3_params(params, config) -> None:
    """ValueError unless ``params`` and ``config`` are something ns-3's TcpNewReno can run.

    ns-3 has its own growth (TcpNewReno), Limited Transmit and timer: the standard rule
    without ABC, no tail retransmission or Early Retransmit (not in ns-3.37 without
    SACK), RFC 3042 Limited Transmit and the RFC 6298 timer.
    """
    from ..growth import StandardRule  # noqa: PLC0415

    if type(params.rule) is not StandardRule or params.rule.abc_l is not None:
        raise ValueError("sender 'ns3' runs TcpNewReno's own growth: rule must be 'standard' "
                         f"without abc_l, got {params.rule.describe()!r}")
    if params.tail_retransmit or params.early_retransmit:
        raise ValueError("sender 'ns3' has no tail retransmission (the paper's proposal) and no "
                         "Early Retransmit: use variant newreno or lt")
    if config.lt_mode != "rfc3042":
        raise ValueError(f"sender 'ns3' implements Limited Transmit as ns-3 does: lt_mode must be "
                         f"'rfc3042', got {config.lt_mode!r}")
    if config.rto_rule != "rfc6298":
        raise ValueError(f"sender 'ns3' runs ns-3's timer: rto_rule must be 'rfc6298', got "
                         f"{config.rto_rule!r}")


def ns3_initial_rtt(params, config) -> tuple[float, float, float]:
    """SRTT, RTTVAR and RTO (seconds) before the first data segment: the SYN-ACK's sample.

    ns-3's RTT history starts with the SYN (``tcp-socket-base.cc`` ``SendEmptyPacket``,
    ``UpdateRttHistory``), so its SYN-ACK gives the first sample: the path's round trip
    plus two SYN serialisations (``_SYN_BYTES`` of options beyond the header). RFC 6298
    (2.2): SRTT = R, RTTVAR = R/2; ns-3's RTO ``max(SRTT + max(G, 4 RTTVAR), MinRto)``
    (``NewAck``, no upper bound, no jiffies).
    """
    r0 = 2.0 * config.one_way_delay(params.rtt_s) + 2.0 * config.serialisation_s(_SYN_BYTES)
    srtt, rttvar = r0, r0 / 2.0
    k_var = 4.0 * rttvar
    g = config.clock_granularity_s
    rto = srtt + (k_var if k_var > g else g)
    return srtt, rttvar, (rto if rto > config.min_rto_s else config.min_rto_s)
