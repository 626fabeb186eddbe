"""TCP receiver: cumulative ACKs with delayed ACK (RFC 5681 Section 4.2, RFC 1122 4.2.3.2).

ACK numbers are counted in segments: ACK ``k`` means segments ``0..k-1`` are held
in order (the sender converts to bytes).

Rules, in the order applied to an arriving segment:

* below ``rcv_nxt`` or already buffered (a duplicate): immediate ACK;
* above ``rcv_nxt`` (out of order): buffer it, immediate ACK. That ACK also covers
  any in-order segment held back by the delayed-ACK rule, so after a held segment
  it acknowledges new data and is not a duplicate;
* equal to ``rcv_nxt``: advance over it and over any buffered segments; immediate
  ACK if out-of-order data was buffered (the segment fills all or part of a gap),
  or if the transfer is now complete (the last segment carries FIN, which is
  acknowledged at once); otherwise hold it and ACK every ``b``-th held segment,
  or when the delayed-ACK timer (started by the first held segment) expires.
"""

from __future__ import annotations

from .engine import Timer

__all__ = ["Receiver"]


class Receiver:
    """Receiving end of one transfer.

    Parameters
    ----------
    queue : EventQueue
        Event queue (the delayed-ACK timer lives there, kind ``"delack"``).
    link : Link
        Return path for ACKs.
    n_segments : int
        Number of data segments of the transfer.
    b : int
        Delayed-ACK factor: in-order segments per ACK (>= 1).
    delack_timeout_s : float
        Delayed-ACK timer, seconds.
    """

    __slots__ = ("link", "n", "b", "timeout", "rcv_nxt", "buffered", "n_buffered",
                 "pending", "timer", "delivered_s", "trace")

    def __init__(self, queue, link, n_segments: int, b: int, delack_timeout_s: float) -> None:
        self.link = link
        self.n = n_segments
        self.b = b
        self.timeout = delack_timeout_s
        self.rcv_nxt = 0
        self.buffered = [False] * n_segments
        self.n_buffered = 0
        self.pending = 0
        self.timer = Timer(queue, "delack")
        self.delivered_s: float | None = None
        self.trace = None

    def _ack_now(self, now: float) -> None:
        self.pending = 0
        self.timer.cancel()
        self.link.send_ack(self.rcv_nxt, now)
        if self.trace is not None:
            self.trace("ack_sent", now, self.rcv_nxt)

    def on_segment(self, seg: int, now: float) -> None:
        """Handle the arrival of data segment ``seg`` at time ``now`` (seconds)."""
        if seg < self.rcv_nxt or (seg > self.rcv_nxt and self.buffered[seg]):
            self._ack_now(now)
            return
        if seg > self.rcv_nxt:
            self.buffered[seg] = True
            self.n_buffered += 1
            self._ack_now(now)
            return
        filled_gap = self.n_buffered > 0
        self.rcv_nxt += 1
        while self.rcv_nxt < self.n and self.buffered[self.rcv_nxt]:
            self.buffered[self.rcv_nxt] = False
            self.n_buffered -= 1
            self.rcv_nxt += 1
        if self.rcv_nxt == self.n:
            self.delivered_s = now
            self._ack_now(now)
        elif filled_gap:
            self._ack_now(now)
        else:
            self.pending += 1
            if self.pending >= self.b:
                self._ack_now(now)
            elif not self.timer.armed:
                self.timer.arm(now + self.timeout)

    def on_delack_timer(self, now: float) -> None:
        """Delayed-ACK timer expiry at ``now`` (seconds): acknowledge held segments."""
        if self.pending > 0:
            self._ack_now(now)
