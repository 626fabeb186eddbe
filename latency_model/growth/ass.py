"""Advanced Slow Start, Algorithms 2-4 (Petrov & Janevski, Section 2.2 and Conclusion)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial


from ..checks import check_choice, check_int
from .base import ACK, CWND, LOSS, SSTHRESH, GrowthRule
from .flow import ASS_BANDS, ASS_DECREASE, ASS_LSS_FROM, _ass_band, banded_round
from .lss import lss_increment_bytes

__all__ = ["AssRule", "DECREASE_MODES", "ass_law"]

DECREASE_MODES = ("divide", "fraction", "standard")


@dataclass(frozen=True)
class AssRule(GrowthRule):
    """Advanced Slow Start (ASS), Algorithms 2, 3 and 4 of Petrov & Janevski.

    Packet level, per ACK in slow start (``cwnd < ssthresh``), ``cwnd`` in packets:

    - Algorithm 2: +3 below 25, +2 in [25, 50), +1 in [50, 75), +0.5 in [75, 100);
    - Algorithm 3: +2 below 25, +1 in [25, 100);
    - Algorithm 4: +2 below 50, +1 in [50, 100);
    - from 100 on, Limited Slow-Start (RFC 3742) with ``max_ssthresh = 100``.

    Congestion avoidance is RFC 5681's. The printed "use LLS" is read as LSS.

    Flow level: the per-ACK increment is constant on each band, an RTT brings ``w/b``
    ACKs and the band edges are crossed exactly
    (:func:`~latency_model.growth.flow.banded_round`); inside a band of increment
    ``c`` one RTT multiplies the window by ``1 + c/b``. Clipped at ``W_SS``.

    Decrease (Conclusion): factor 4 below 25, 3 in [25, 50), 2 above (Algorithm 2);
    3 in the +2 band and 2 above (Algorithms 3 and 4); 2 in the LSS region. The paper
    does not define a "decreasing factor"; ``decrease`` chooses the meaning, with the
    band taken from ``cwnd`` at the loss:

    - ``"divide"`` (default): ``ssthresh = max(FlightSize/factor, 2 MSS)``. A band that
      multiplies the window by up to ``1 + c`` per RTT (4, 3, 2, 1.5) can overshoot the
      path by that factor; dividing by it returns to the last window that fitted, which
      is the paper's stated aim ("chosen to minimize the network overshooting"); for
      factor 2 it is RFC 5681's halving.
    - ``"fraction"``: ``ssthresh = max(FlightSize (1 - 1/factor), 2 MSS)`` (reduce by
      one factor-th; also halving for factor 2).
    - ``"standard"``: RFC 5681's ``FlightSize/2`` whatever the band.

    Parameters
    ----------
    algorithm : int
        2, 3 or 4. Default 2 (the paper's "advanced slow start").
    decrease : str
        ``"divide"``, ``"fraction"`` or ``"standard"``. Default ``"divide"``.
    """

    name = "ass"
    source = "Petrov & Janevski, Novel Slow Start Algorithm (Section 2.2, Conclusion): ASS"

    algorithm: int = 2
    decrease: str = "divide"

    def __post_init__(self) -> None:
        object.__setattr__(self, "algorithm", check_int("algorithm", self.algorithm, low=2, high=4))
        check_choice("decrease", self.decrease, DECREASE_MODES)

    def increment_packets(self, cwnd_packets: float) -> float:
        """Per-ACK increment below 100 packets (band of ``cwnd_packets``), packets; None above."""
        for edge, step in ASS_BANDS[self.algorithm]:
            if cwnd_packets < edge:
                return step
        return None

    def decrease_factor(self, cwnd_packets: float) -> float:
        """The Conclusion's decrease factor for a loss at ``cwnd_packets``."""
        for edge, factor in ASS_DECREASE[self.algorithm]:
            if cwnd_packets < edge:
                return factor
        return 2.0

    def slow_start_round(self, w, b):
        return banded_round(w, w / b, partial(_ass_band, algorithm=self.algorithm))

    law_helpers = ("lss_increment_bytes",)

    def _pack(self):
        bands = ASS_BANDS[self.algorithm]
        packed = [DECREASE_MODES.index(self.decrease), len(bands)]
        for (edge, step), (edge_d, factor) in zip(bands, ASS_DECREASE[self.algorithm]):
            assert edge == edge_d  # increments and decrease factors share their bands
            packed += [edge, step, factor]
        return tuple(packed)


def ass_law(hook, S, R, mss, x):
    """Advanced Slow Start on the state vector ``S`` (bytes). ``R``: the decrease mode (0
    divide, 1 fraction, 2 standard), the number of bands, then for each band its upper
    edge (packets), its per-ACK increment (packets) and its decrease factor (see
    :class:`AssRule`). An :data:`~.base.ACK` in slow start adds the band's increment, or
    LSS's (RFC 3742, ``max_ssthresh`` = 100) from 100 packets on; congestion avoidance is
    RFC 5681's. :data:`~.base.LOSS` returns the ssthresh of the decrease mode."""
    if hook == ACK:
        if S[CWND] < S[SSTHRESH]:
            w = S[CWND] / mss
            step = -1.0
            for i in range(int(R[1])):
                if w < R[2 + 3 * i]:
                    step = R[3 + 3 * i]
                    break
            if step < 0.0:
                S[CWND] += lss_increment_bytes(S[CWND], mss, ASS_LSS_FROM)
            else:
                S[CWND] += step * mss
        else:
            S[CWND] += mss * mss / S[CWND]
    elif hook == LOSS:
        if R[0] == 2.0:
            kept = x / 2.0
        else:
            w = S[CWND] / mss
            factor = 2.0
            for i in range(int(R[1])):
                if w < R[2 + 3 * i]:
                    factor = R[4 + 3 * i]
                    break
            kept = x / factor if R[0] == 0.0 else x * (1.0 - 1.0 / factor)
        return max(kept, 2.0 * mss)
    return 0.0


AssRule.law = staticmethod(ass_law)
