"""SmoothTCP: smooth start plus congestion avoidance driven by control metrics
(Vieira & Bauer, SmoothTCP, Sections III-IV, Eq. 3-6; slow start Eq. 7-11 from :mod:`.smooth`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..checks import check_choice, check_real
from .smooth import SmoothStartRule, SmoothState

__all__ = ["SmoothTcpRule", "SmoothTcpState", "METRICS", "SS_SIGNALS", "partial"]

METRICS = ("j", "x", "f", "e", "q")
"""Control metrics of Eq. 4-5, in this order: ``j`` RTT (seconds), ``x`` timeouts, ``f`` fast
retransmits, ``e`` ECN echoes, ``q`` ICMP Source Quench messages."""

SS_SIGNALS = ("loss", "all")
"""What restarts the smooth start (Eq. 10-11): ``"loss"``, packet drops only (fast
retransmit or timeout; Section IV.C: "When any congestion signal (packet drop) is
detected"); ``"all"``, also each ECN echo and Source Quench message, which then halves
the window as :class:`SmoothStartRule` does."""

_EVENT = {"timeout": 1, "fast_retransmit": 2, "ecn": 3, "source_quench": 4}


def partial(u: float, a: float, b: float, c: float, m: float) -> float:
    """Eq. 5 as printed: ``A + C tanh(B (u + M))`` (the magnitude; :class:`SmoothTcpRule`
    applies it with a minus sign).

    Parameters
    ----------
    u : float
        The metric's smoothed value: seconds for ``j``, events per ACK otherwise.
    a, b, c, m : float
        The metric's coefficients ``A, B, C, M``.
    """
    return a + c * math.tanh(b * (u + m))


@dataclass(slots=True)
class SmoothTcpState(SmoothState):
    """:class:`~latency_model.growth.smooth.SmoothState` plus the control metrics.

    Attributes
    ----------
    rate : list of float
        Smoothed ``j, x, f, e, q`` (see :data:`METRICS`): the RTT in seconds (NaN until
        the first sample) and the events per ACK of the other four.
    pending : list of float
        Samples gathered since the previous new ACK: ``pending[0]`` the latest RTT
        sample, seconds (NaN if none), ``pending[1:]`` the events counted.
    d_metrics : float
        ``sum_i (A_i + C_i tanh(B_i (u_i + M_i))) dp_i`` at the latest ACK (the metric part of D).
    last_d : float
        ``D`` of Eq. 6 at the latest congestion-avoidance ACK (NaN before the first).
    """

    rate: list = field(default_factory=lambda: [math.nan, 0.0, 0.0, 0.0, 0.0])
    pending: list = field(default_factory=lambda: [math.nan, 0.0, 0.0, 0.0, 0.0])
    d_metrics: float = 0.0
    last_d: float = math.nan

    @property
    def in_slow_start(self) -> bool:
        """True while SmoothTCP's smooth start is on (the pseudo-code's ``slow_start`` flag)."""
        return self.active


@dataclass(frozen=True)
class SmoothTcpRule(SmoothStartRule):
    """SmoothTCP: the smooth start of :class:`SmoothStartRule`, then congestion avoidance by Eq. 3-6.

    At each new ACK, ``w`` = cwnd in packets:

    1. Metrics. Each control metric has a differential ``dp_i`` and a smoothed value ``u_i``
       (horizontal smoothness, Section III.A: "u is taken to be the smooth average rate",
       footnote 1: ``u <- (1 - alpha) u + alpha sample``). For ``x, f, e, q``: ``dp_i`` = the
       timeouts, fast retransmits, ECN echoes and ICMP Source Quench messages counted since
       the previous new ACK, and ``u_i`` the smooth average of that count (events per ACK,
       this ACK's count included). For ``j``: ``u_j`` the smoothed RTT (seconds; the first
       sample initialises it; unchanged without a sample, Karn's rule) and ``dj`` its change.
    2. ``D`` (Eq. 4-6)::

           D = kappa - sum_i (A_i + C_i tanh(B_i (u_i + M_i))) dp_i

    3. Fairness rule (the second Eq. 3): ``dw = D/w`` if ``D > 0``, ``dw = D w`` otherwise;
       ``w <- max(w + dw, 1)``.

    With the paper's ``C_q = 0.0625, B_q = 0.5493 = atanh(1/2)``: without router signals
    ``D = kappa`` (``kappa/w`` per ACK); one Source Quench per ACK for a while (``u_q -> 1``)
    gives ``D = 0.005 - 0.03125 < 0``, a 2.6% cut of ``w`` per ACK; a lone message after a
    quiet spell (``u_q = 1/8``) costs only ``0.0043``, less than ``kappa``.

    The smooth start (:class:`SmoothStartRule`, unchanged) is restarted by Eq. 10-11 on a
    loss, and also on each ECN / Source Quench signal with ``ss_signal = "all"``; the
    metrics are kept up to date in every phase but act only after the smooth start. Loss
    recovery stays the sender's (NewReno: a loss still sets ssthresh to half the flight;
    a timeout, cwnd to one packet). The flow-level law is the smooth start's (``D = kappa``:
    ``kappa/b`` packets per round after it).

    Readings of the printed formulas (validation/DEVIATIONS.md, "SmoothTCP, Section IV.A-B"):

    * Sign. As printed, Eq. 4-5 with ``A_q = 0, C_q = 0.0625`` give ``dw/dq > 0``: Source
      Quench messages would *raise* the window, against the text ("congestion signals would
      be sent and the sender would start to decrease w by dw = D x w"). Read: each partial is
      the printed expression with a minus sign; the printed coefficients are magnitudes.
    * Metrics. "q is the variation in the number of ICMP-SQ messages": ``dq`` = the new
      messages; the partial's argument is their smooth average rate (the horizontal smooth
      property), so tanh saturates for bursts (the vertical smooth property). A smooth rate
      as both argument and differential (``dq`` = its change) was tried: a steady signal
      rate then gives ``dq = 0``, ``D = kappa > 0``, and the window grows until the queue
      overflows, which contradicts the text. "j is the variation in RTT": ``dj`` = change of
      the smoothed RTT, the partial at the smoothed RTT.
    * Two equations are numbered (3): the fairness rule is the second one.
    * ``w`` never drops below one packet (``D w`` can exceed ``w`` when ``D <= -1``).

    Parameters
    ----------
    a_a, b_a, t, kappa, per_ack
        As :class:`SmoothStartRule` (``kappa``: the fairness factor of Eq. 6, default 0.005;
        ``per_ack``: the smooth start's per-ACK step).
    a_j, b_j, c_j, m_j, a_x, b_x, c_x, m_x, a_f, b_f, c_f, m_f, a_e, b_e, c_e, m_e, a_q, b_q, c_q, m_q : float
        ``A, B, C, M`` of Eq. 5 for each metric. ``A`` and ``C`` in [-1000, 1000] (packets
        per packet of window and per unit of the metric), ``B`` in [0, 1000] (per unit of
        the metric's rate), ``M`` in [-1e6, 1e6] (the rate's unit). Defaults: the paper's
        ``A_q = 0, B_q = 0.5493, C_q = 0.0625, M_q = 0`` (Section V); 0 for the other
        metrics, so Source Quench is the only control metric, as in the paper's runs.
    alpha : float
        Smoothing weight of the rates, in (0, 1]. Default 1/8 (RFC 2988, footnote 1).
    ss_signal : {"loss", "all"}
        What restarts the smooth start (:data:`SS_SIGNALS`). Default ``"loss"``.
    """

    name = "smoothtcp"
    source = ("SmoothTCP (Sections III-IV, Eq. 3-11): smooth start, then D from RTT, timeouts, "
              "fast retransmits, ECN, ICMP-SQ with the fairness rule and factor")

    a_j: float = 0.0
    b_j: float = 0.0
    c_j: float = 0.0
    m_j: float = 0.0
    a_x: float = 0.0
    b_x: float = 0.0
    c_x: float = 0.0
    m_x: float = 0.0
    a_f: float = 0.0
    b_f: float = 0.0
    c_f: float = 0.0
    m_f: float = 0.0
    a_e: float = 0.0
    b_e: float = 0.0
    c_e: float = 0.0
    m_e: float = 0.0
    a_q: float = 0.0
    b_q: float = 0.5493
    c_q: float = 0.0625
    m_q: float = 0.0
    alpha: float = 0.125
    ss_signal: str = "loss"

    def __post_init__(self) -> None:
        SmoothStartRule.__post_init__(self)
        set_ = object.__setattr__
        for m in METRICS:
            set_(self, f"a_{m}", check_real(f"a_{m}", getattr(self, f"a_{m}"), low=-1e3, high=1e3))
            set_(self, f"b_{m}", check_real(f"b_{m}", getattr(self, f"b_{m}"), low=0.0, high=1e3))
            set_(self, f"c_{m}", check_real(f"c_{m}", getattr(self, f"c_{m}"), low=-1e3, high=1e3))
            set_(self, f"m_{m}", check_real(f"m_{m}", getattr(self, f"m_{m}"), low=-1e6, high=1e6))
        set_(self, "alpha", check_real("alpha", self.alpha, low=0.0, high=1.0, low_open=True))
        check_choice("ss_signal", self.ss_signal, SS_SIGNALS)

    def coefficients(self, metric: str) -> tuple[float, float, float, float]:
        """``(A, B, C, M)`` of ``metric`` (one of :data:`METRICS`)."""
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        return tuple(getattr(self, f"{c}_{metric}") for c in "abcm")

    def d(self, rates, deltas) -> float:
        """``D`` of Eq. 4-6: ``kappa - sum_i (A_i + C_i tanh(B_i (u_i + M_i))) dp_i``.

        Parameters
        ----------
        rates : sequence of 5 floats
            ``u_j`` (seconds) and the smoothed events per ACK ``u_x, u_f, u_e, u_q``.
        deltas : sequence of 5 floats
            ``dj`` (seconds) and the events ``dx, df, de, dq`` since the previous ACK.
            A NaN ``dj`` (no RTT yet) counts as 0.
        """
        total = 0.0
        for i, m in enumerate(METRICS):
            dp = float(deltas[i])
            if dp == 0.0 or math.isnan(dp):
                continue
            a, b, c, mm = self.coefficients(m)
            total += partial(float(rates[i]), a, b, c, mm) * dp
        return self.kappa - total

    # Packet level -------------------------------------------------------------
    def new_state(self, cwnd_bytes, ssthresh_bytes, mss_bytes) -> SmoothTcpState:
        base = SmoothStartRule.new_state(self, cwnd_bytes, ssthresh_bytes, mss_bytes)
        st = SmoothTcpState(cwnd=base.cwnd, ssthresh=base.ssthresh, mss=base.mss)
        st.acks, st.a_a, st.w_c, st.ws, st.active = base.acks, base.a_a, base.w_c, base.ws, base.active
        return st

    def _update_metrics(self, st: SmoothTcpState) -> None:
        old, got = st.rate, st.pending
        new = list(old)
        deltas = list(got)
        r = got[0]
        if not math.isnan(r):
            new[0] = r if math.isnan(old[0]) else old[0] + self.alpha * (r - old[0])
        deltas[0] = 0.0 if math.isnan(old[0]) else new[0] - old[0]
        for i in range(1, len(METRICS)):
            new[i] = old[i] + self.alpha * (got[i] - old[i])
        st.d_metrics = self.kappa - self.d(new, deltas)
        st.rate = new
        st.pending = [math.nan, 0.0, 0.0, 0.0, 0.0]

    def on_ack(self, st: SmoothTcpState, acked_bytes: int) -> None:
        self._update_metrics(st)
        SmoothStartRule.on_ack(self, st, acked_bytes)

    def _congestion_avoidance_ack(self, st: SmoothTcpState, w: float) -> None:
        d = self.kappa - st.d_metrics
        dw = d / w if d > 0.0 else d * w  # fairness rule, the second Eq. 3
        st.cwnd = max(w + dw, 1.0) * st.mss
        st.last_d = d

    def on_rtt_sample(self, st: SmoothTcpState, rtt_s: float) -> None:
        st.pending[0] = rtt_s

    def on_congestion_event(self, st: SmoothTcpState, kind: str) -> None:
        SmoothStartRule.on_congestion_event(self, st, kind)  # validates kind; Eq. 10 restart
        st.pending[_EVENT[kind]] += 1.0

    def on_signal(self, st: SmoothTcpState, signal: str) -> None:
        if signal not in ("ecn", "source_quench"):
            return  # other signals (e.g. NGWA stamps) are not SmoothTCP metrics
        if st.active and self.ss_signal == "all":
            SmoothStartRule.on_signal(self, st, signal)  # Eq. 10-11 restart and halving
        st.pending[_EVENT[signal]] += 1.0
