"""A non-TCP on-off constant-rate source (ns-3 ``OnOffApplication`` over UDP, deterministic periods).

It does not react to losses or signals: it offers packets to the router queue of a
:class:`~latency_model.sim.scenario.Scenario` at a fixed rate while "on" and nothing while
"off". Its packets take no access link (they appear at the router) and are not received by
anyone; they only occupy the router's buffer and the bottleneck.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import check_int, check_real

__all__ = ["OnOffSource"]


@dataclass(frozen=True)
class OnOffSource:
    """Constant-rate packets in on periods of ``on_s`` seconds separated by ``off_s`` seconds.

    Parameters
    ----------
    rate_bps : float
        Rate while on, bit/s (> 0). NGWA: 500e3.
    packet_bytes : int
        Packet size on the wire, bytes (>= 1); one packet every ``8 packet_bytes / rate_bps`` s.
    start_s : float
        First packet, seconds (>= 0); periods are counted from it.
    on_s : float
        Length of an on period, seconds (> 0).
    off_s : float
        Length of an off period, seconds (>= 0); 0 (default): always on ("configured to
        continuously transmit data", NGWA Section 3).
    stop_s : float or None
        No packet at or after this time, seconds (> start_s); ``None``: until the run stops
        (the scenario then needs a horizon).
    """

    rate_bps: float
    packet_bytes: int = 1040
    start_s: float = 0.0
    on_s: float = 1.0
    off_s: float = 0.0
    stop_s: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "rate_bps", check_real("rate_bps", self.rate_bps, low=0.0, low_open=True))
        set_(self, "packet_bytes", check_int("packet_bytes", self.packet_bytes, low=1))
        set_(self, "start_s", check_real("start_s", self.start_s, low=0.0))
        set_(self, "on_s", check_real("on_s", self.on_s, low=0.0, low_open=True))
        set_(self, "off_s", check_real("off_s", self.off_s, low=0.0))
        if self.stop_s is not None:
            set_(self, "stop_s", check_real("stop_s", self.stop_s, low=self.start_s, low_open=True))

    @property
    def interval_s(self) -> float:
        """Time between packets while on, seconds."""
        return self.packet_bytes * 8.0 / self.rate_bps

    def next_send(self, t: float) -> float | None:
        """Time of the packet after the one sent at ``t`` (seconds), or ``None`` after ``stop_s``."""
        nxt = t + self.interval_s
        if self.off_s > 0.0:
            cycle = self.on_s + self.off_s
            k, phase = divmod(nxt - self.start_s, cycle)
            if phase >= self.on_s - 1e-12:  # falls in the off period: wait for the next on period
                nxt = self.start_s + (k + 1.0) * cycle
        if self.stop_s is not None and nxt >= self.stop_s:
            return None
        return nxt

    def describe(self) -> dict:
        """JSON-serialisable dict of the parameters."""
        return {"rate_bps": self.rate_bps, "packet_bytes": self.packet_bytes, "start_s": self.start_s,
                "on_s": self.on_s, "off_s": self.off_s, "stop_s": self.stop_s}
