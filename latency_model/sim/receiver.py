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
  if the transfer is now complete and the last segment carries FIN (``fin=True``:
  acknowledged at once), or while quick ACKs last (``quick_acks``: the first ACKs of a
  connection are sent without delay: ns-3's first data segment, ``ProcessSynRcvd``;
  Linux's quick-ack mode, ``tcp_in_quickack_mode``); otherwise hold it and ACK every
  ``b``-th held segment, or when the delayed-ACK timer (started by the first held
  segment) expires. Every ACK sent uses up one quick ACK (Linux ``tcp_dec_quickack_mode``).

Timestamps (RFC 7323 Section 4.3, ``timestamps=True``): TS.Recent takes the TSval of an
arriving segment when ``SEG.SEQ <= Last.ACK.sent`` (in segments: the segment is at or
below the ACK last sent), so an out-of-order segment never updates it and a delayed ACK
echoes the earliest held segment; every ACK carries TS.Recent as TSecr.

SACK blocks (RFC 2018) and Linux's SACK compression are the flat engine's receiver's
(:func:`.flat.on_segment`), which the sack sender runs on.
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
    quick_acks : int
        ACKs sent at once at the start of the connection (>= 0).
    fin : bool
        The last segment carries FIN (acknowledged at once).
    timestamps : bool
        Echo TS.Recent in every ACK (RFC 7323).
    """

    __slots__ = ("link", "n", "b", "timeout", "rcv_nxt", "buffered", "n_buffered",
                 "pending", "timer", "delivered_s", "trace", "quick", "fin", "timestamps",
                 "ts_recent", "last_ack_sent")

    def __init__(self, queue, link, n_segments: int, b: int, delack_timeout_s: float,
                 quick_acks: int = 0, fin: bool = True, timestamps: bool = False) -> None:
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
        self.quick = quick_acks
        self.fin = fin
        self.timestamps = timestamps
        self.ts_recent = 0.0
        self.last_ack_sent = 0

    def _ack_now(self, now: float) -> None:
        self.pending = 0
        self.timer.cancel()
        if self.quick > 0:
            self.quick -= 1
        self.last_ack_sent = self.rcv_nxt
        if self.timestamps:
            self.link.send_ack(self.rcv_nxt, now, self.ts_recent)
        else:
            self.link.send_ack(self.rcv_nxt, now)
        if self.trace is not None:
            self.trace("ack_sent", now, self.rcv_nxt)

    def on_segment(self, seg: int, now: float, tsval: float = 0.0) -> None:
        """Handle the arrival of data segment ``seg`` at time ``now`` (seconds), sent at
        ``tsval`` (seconds; read only with timestamps)."""
        if self.timestamps and seg <= self.last_ack_sent:  # RFC 7323 Section 4.3 (2)
            self.ts_recent = tsval
        if seg < self.rcv_nxt or (seg > self.rcv_nxt and self.buffered[seg]):
            self._ack_now(now)
            return
        if seg > self.rcv_nxt:
            self.buffered[seg] = True
            self.n_buffered += 1
            self._ack_now(now)
            return
        filled_gap = self.n_buffered > 0
        before = self.rcv_nxt
        self.rcv_nxt += 1
        while self.rcv_nxt < self.n and self.buffered[self.rcv_nxt]:
            self.buffered[self.rcv_nxt] = False
            self.n_buffered -= 1
            self.rcv_nxt += 1
        if before < self.n <= self.rcv_nxt:
            self.delivered_s = now
        if filled_gap or self.quick > 0 or (self.fin and self.rcv_nxt == self.n):
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
