"""Single-loss experiment: for each position i of an N-packet transfer, drop only the
first transmission of packet i and record how the sender recovers.

``T``: the loss was repaired by a retransmission timeout; ``F``: by a fast
retransmit (including Early Retransmit, the paper's tail retransmit and RACK's
time-based detection); ``P``: by a tail loss probe (RFC 8985 Section 7: no timeout,
and the probe, a retransmission of the last segment or new data whose SACK let RACK
mark the loss, repaired it; only with ``SimConfig(sender="sack", rack_tlp=True)``). The
paper's ``y_to`` (Section 2) is the number of leading positions that time out; the
tail is the number of trailing positions that time out (the "not enough data"
effect of the last ``dup_t`` packets).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import check_int, check_work, checked_call, simulation_work
from ..params import TcpParams
from ..results import ResultData
from .config import SimConfig
from .transfer import run_transfer

__all__ = ["SingleLossResult", "single_loss", "y_to_packets"]


@dataclass(frozen=True)
class SingleLossResult(ResultData):
    """Outcome of :func:`single_loss`.

    Attributes
    ----------
    pattern : str
        One letter per position (``T``, ``F`` or ``P``), position 0 first.
    y_to_packets : int
        Leading ``T`` positions, packets.
    tail_timeout_packets : int
        Trailing ``T`` positions, packets. If every position times out both counts
        equal N.
    completion_s : tuple of float
        Completion time for each position, seconds.
    """

    pattern: str
    y_to_packets: int
    tail_timeout_packets: int
    completion_s: tuple

    def to_dict(self) -> dict:
        """JSON-ready dict (the CLI contract's keys plus the completion times)."""
        return {
            "pattern": self.pattern,
            "y_to_packets": self.y_to_packets,
            "tail_timeout_packets": self.tail_timeout_packets,
            "completion_s": list(self.completion_s),
        }


@checked_call
def single_loss(params: TcpParams, *positional, size_packets: int | None = None,
                config: SimConfig | None = None) -> SingleLossResult:
    """Drop each packet's first transmission in turn; classify the recovery.

    Arguments after ``params`` are keyword-only (the size carries its unit).

    Parameters
    ----------
    params : TcpParams
        TCP parameters (``params.p`` is ignored: the only loss is the scripted one).
    size_packets : int
        Transfer size N, packets of ``params.mss_bytes`` (>= 1).
    config : SimConfig, optional
        Link, timer and rule settings.

    Returns
    -------
    SingleLossResult

    Raises
    ------
    ValueError
        If ``size_packets`` < 1 or ``params`` / ``config`` have the wrong type.
    """
    if positional or size_packets is None:
        raise ValueError("single_loss: pass the size as size_packets=... (packets of mss_bytes) "
                         "and config=... by keyword")
    n = check_int("size_packets", size_packets, low=1)
    if not isinstance(params, TcpParams):
        raise ValueError(f"params must be a TcpParams, got {params!r}")
    check_work(f"single_loss of {n:,} packets ({n:,} transfers)",
               *simulation_work(params.replace(p=0.0), config if isinstance(config, SimConfig) else SimConfig(), n, [n],
                               compiled=False))
    letters = []
    times = []
    for i in range(n):
        r = run_transfer(params, size_packets=n, config=config, drops=[i])
        # A scripted single loss is repaired by one mechanism unless a spurious timeout
        # follows a fast retransmit or a probe; the timeout dominates. With one loss the
        # PTO can only expire when the ACK clock stopped on it: a probe means the probe
        # repaired it (directly, or through RACK's marks on the probe's SACK).
        letters.append("T" if r.timeouts > 0 else "P" if r.tlp_probes > 0 else "F")
        times.append(r.completion_s)
    pattern = "".join(letters)
    return SingleLossResult(
        pattern=pattern,
        y_to_packets=len(pattern) - len(pattern.lstrip("T")),
        tail_timeout_packets=len(pattern) - len(pattern.rstrip("T")),
        completion_s=tuple(times),
    )


def y_to_packets(params: TcpParams, config: SimConfig | None = None, horizon_packets: int = 64) -> int:
    """Simulated ``y_to``: leading timeout positions of a long transfer, packets.

    Parameters
    ----------
    params : TcpParams
        TCP parameters; start in slow start with ``w_ss > w0``, or in congestion
        avoidance with ``w_ss <= w0``.
    config : SimConfig, optional
        Link, timer and rule settings.
    horizon_packets : int
        Transfer length used (>= 2 dup_t + 8), long enough that the tail does not
        reach the leading run.

    Returns
    -------
    int
        Number of leading positions whose single loss causes a timeout.
    """
    h = check_int("horizon_packets", horizon_packets, low=2 * params.dup_t + 8)
    # Only leading positions matter: stop at the first fast retransmit.
    count = 0
    for i in range(h - params.dup_t):
        r = run_transfer(params, size_packets=h, config=config, drops=[i])
        if r.timeouts == 0:
            break
        count += 1
    return count
