"""Limited Slow-Start (RFC 3742)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial


from ..checks import check_real
from .base import ACK, CWND, LOSS, SSTHRESH, GrowthRule
from .flow import _lss_band, banded_round

__all__ = ["LssRule", "lss_law", "lss_increment_bytes"]


@dataclass(frozen=True)
class LssRule(GrowthRule):
    """Limited Slow-Start, RFC 3742 Section 2.

    Packet level, per ACK in slow start (``cwnd < ssthresh``), bytes: if
    ``cwnd <= max_ssthresh`` then ``cwnd += MSS``; else ``K = int(cwnd/(0.5
    max_ssthresh))`` and ``cwnd += int(MSS/K)``. Congestion avoidance is RFC 5681's.

    Flow level: the per-ACK increment (1, then 1/K) is constant on the bands
    ``[0, max_ssthresh)``, ``[K max_ssthresh/2, (K+1) max_ssthresh/2)``; an RTT brings
    ``w/b`` ACKs (:func:`~latency_model.growth.flow.banded_round`), clipped at ``W_SS``.
    From ``max_ssthresh/2`` on, one RTT adds exactly ``max_ssthresh/(2b)`` packets: a
    round of ``w`` ACKs starting in band ``K`` always crosses into band ``K+1`` and gains
    ``(K+1) (max_ssthresh/2) / (K+1)``; hence "at most max_ssthresh/2 MSS per RTT"
    (RFC 3742). The per-ACK law differs by the discreteness of ACKs (at most one ACK's
    increment, ``1/K``, per band edge) and the ``int()`` on ``MSS/K`` bytes.

    Parameters
    ----------
    max_ssthresh : float
        Window above which slow start is limited, packets (MSS), in [1, 1e9]. Default 100.
    """

    name = "lss"
    source = "RFC 3742 (Limited Slow-Start)"

    max_ssthresh: float = 100.0

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "max_ssthresh", check_real("max_ssthresh", self.max_ssthresh, low=1.0, high=1e9)
        )

    def slow_start_round(self, w, b):
        return banded_round(w, w / b, partial(_lss_band, max_ssthresh=self.max_ssthresh))

    law_helpers = ("lss_increment_bytes",)

    def _pack(self):
        return (self.max_ssthresh,)


def lss_increment_bytes(cwnd_bytes: float, mss: int, max_ssthresh: float) -> float:
    """RFC 3742 per-ACK increment, bytes (``max_ssthresh`` in packets)."""
    if cwnd_bytes <= max_ssthresh * mss:
        return float(mss)
    k = int(cwnd_bytes / (0.5 * max_ssthresh * mss))
    return float(int(mss / k))


def lss_law(hook, S, R, mss, x):
    """Limited Slow-Start (RFC 3742 Section 2) on the state vector ``S`` (bytes),
    ``R = (max_ssthresh,)`` (packets): :func:`lss_increment_bytes` per ACK in slow start,
    RFC 5681's ``SMSS*SMSS/cwnd`` in congestion avoidance; :data:`~.base.LOSS` returns
    ``max(FlightSize/2, 2 SMSS)``."""
    if hook == ACK:
        if S[CWND] < S[SSTHRESH]:
            S[CWND] += lss_increment_bytes(S[CWND], mss, R[0])
        else:
            S[CWND] += mss * mss / S[CWND]
    elif hook == LOSS:
        return max(x / 2.0, 2.0 * mss)
    return 0.0


LssRule.law = staticmethod(lss_law)
