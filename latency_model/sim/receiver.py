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

SACK compression (Linux, ``sack_compress=True``; ``net/ipv4/tcp_input.c``
``__tcp_ack_snd_check``): outside quick-ack mode an ACK for an out-of-order or duplicate
segment is sent at once only for the first ``TCP_FASTRETRANS_THRESH`` = 3 such ACKs at the
same ``rcv_nxt`` (``dup_ack_counter``); later ones are held (``compressed_ack``) until the
compressed-ACK timer fires ``min(tcp_comp_sack_delay_ns, RTT/20)`` after the first held
one (1 ms at RTT >= 20 ms; RTT is the path's, the receiver's SRTT from the handshake), or
until 44 (``tcp_comp_sack_nr``) are held, or until any other ACK leaves
(``tcp_event_ack_sent`` clears the count). Quick-ack mode, as Linux runs it, then starts
with the first in-order data segment (``tcp_event_data_recv``: ``tcp_incr_quickack`` when
``ato`` is still 0), so ACKs sent before it use up no quick ACK, and a segment entirely
below ``rcv_nxt`` re-enters it (``tcp_data_queue``: ``tcp_enter_quickack_mode``).

SACK (RFC 2018, ``sack=True``): every ACK carries up to 3 blocks ``(start, end)`` of
buffered out-of-order segments (end exclusive, in segments). The receiver keeps all its
blocks in order of their last change; the block holding the segment that triggered the
ACK comes first (unless that segment advanced ``rcv_nxt``), then the most recently
reported other blocks (RFC 2018 Section 4; Linux keeps ``tp->selective_acks`` in the same
order, ``tcp_sack_new_ofo_skb``). Three blocks fit beside the 12-byte timestamps option
(40 - 12 = 28 >= 2 + 3 x 8). No D-SACK.
"""

from __future__ import annotations

from .engine import Timer
from .flat import COMP_SACK_NR, FASTRETRANS_THRESH, comp_sack_delay

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
    sack : bool
        Carry SACK blocks in every ACK (RFC 2018), see the module docstring.
    data_segments : int, optional
        Segments carrying data, when the last of the ``n_segments`` is a bare FIN
        (``SimConfig.bare_fin``); ``delivered_s`` is when they are all held. Default
        ``n_segments``.
    sack_compress : bool, optional
        Linux's SACK compression and quick-ack start (module docstring). Default: the
        link's ``SimConfig.timer_hz`` > 0 (the ``linux`` profile), as the flat engine
        decides it (``flat.on_segment``).
    """

    __slots__ = ("link", "n", "b", "timeout", "rcv_nxt", "buffered", "n_buffered",
                 "pending", "timer", "delivered_s", "trace", "quick", "fin", "timestamps",
                 "ts_recent", "last_ack_sent", "sack", "blocks", "n_data", "compress_s", "compressed",
                 "dup_acks", "comp_rcv_nxt", "quick_max")

    def __init__(self, queue, link, n_segments: int, b: int, delack_timeout_s: float,
                 quick_acks: int = 0, fin: bool = True, timestamps: bool = False,
                 sack: bool = False, data_segments: int | None = None,
                 sack_compress: bool | None = None) -> None:
        self.link = link
        self.n = n_segments
        self.n_data = n_segments if data_segments is None else data_segments
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
        self.sack = sack
        self.blocks: list[tuple[int, int]] = []  # out-of-order blocks, most recently changed first
        if sack_compress is None:  # a stand-in link without timers: none
            sack_compress = getattr(link, "timer_hz", 0.0) > 0.0
        # Compressed-ACK timer, seconds (0: no SACK compression); quick ACKs start later.
        self.compress_s = comp_sack_delay(2.0 * link.delay) if sack and sack_compress else 0.0
        self.quick_max = quick_acks
        if self.compress_s > 0.0:
            self.quick = 0  # tcp_event_data_recv starts quick-ack mode with in-order data
        self.compressed = 0     # tp->compressed_ack
        self.dup_acks = 0       # tp->dup_ack_counter
        self.comp_rcv_nxt = -1  # tp->compressed_ack_rcv_nxt

    def _ack_now(self, now: float) -> None:
        self.pending = 0
        self.compressed = 0
        self.timer.cancel()
        if self.quick > 0:
            self.quick -= 1
        self.last_ack_sent = self.rcv_nxt
        if self.sack:
            self.link.send_ack(self.rcv_nxt, now, self.ts_recent if self.timestamps else None,
                               tuple(self.blocks[:3]))
        elif self.timestamps:
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
            if self.sack and seg > self.rcv_nxt:
                self._sack_first(seg)
            if seg < self.rcv_nxt and self.compress_s > 0.0 and self.quick < self.quick_max:
                self.quick = self.quick_max  # tcp_enter_quickack_mode
            self._ofo_ack(now)
            return
        if seg > self.rcv_nxt:
            self.buffered[seg] = True
            self.n_buffered += 1
            if self.sack:
                self._sack_first(seg)
            self._ofo_ack(now)
            return
        if self.compress_s > 0.0 and self.rcv_nxt == 0 and self.quick < self.quick_max:
            self.quick = self.quick_max  # the first in-order data: tcp_incr_quickack
        filled_gap = self.n_buffered > 0
        before = self.rcv_nxt
        self.rcv_nxt += 1
        while self.rcv_nxt < self.n and self.buffered[self.rcv_nxt]:
            self.buffered[self.rcv_nxt] = False
            self.n_buffered -= 1
            self.rcv_nxt += 1
        if self.sack and self.blocks:
            self.blocks = [blk for blk in self.blocks if blk[0] > self.rcv_nxt]
        if before < self.n_data <= self.rcv_nxt:
            self.delivered_s = now
        if filled_gap or self.quick > 0 or (self.fin and self.rcv_nxt == self.n):
            self._ack_now(now)
        else:
            self.pending += 1
            if self.pending >= self.b:
                self._ack_now(now)
            elif not self.timer.armed:
                self.timer.arm(now + self.timeout)

    def _ofo_ack(self, now: float) -> None:
        """ACK an out-of-order or duplicate segment: at once, or held by SACK compression
        (``__tcp_ack_snd_check``, module docstring)."""
        if self.compress_s == 0.0 or self.quick > 0 or self.compressed >= COMP_SACK_NR:
            self._ack_now(now)
            return
        if self.comp_rcv_nxt != self.rcv_nxt:
            self.comp_rcv_nxt = self.rcv_nxt
            self.dup_acks = 0
        if self.dup_acks < FASTRETRANS_THRESH:
            self.dup_acks += 1
            self._ack_now(now)
            return
        self.compressed += 1
        due = now + self.compress_s
        if not self.timer.armed or self.timer.deadline > due:
            self.timer.arm(due)

    def _sack_first(self, seg: int) -> None:
        """Put the block holding buffered segment ``seg`` first (RFC 2018 Section 4)."""
        buf = self.buffered
        lo = seg
        while lo - 1 > self.rcv_nxt and buf[lo - 1]:
            lo -= 1
        hi = seg + 1
        while hi < self.n and buf[hi]:
            hi += 1
        # Blocks merged into [lo, hi) are dropped; the others keep their order.
        self.blocks = [(lo, hi)] + [blk for blk in self.blocks if blk[1] <= lo or blk[0] >= hi]

    def on_delack_timer(self, now: float) -> None:
        """Delayed-ACK (or compressed-ACK) timer expiry at ``now`` (seconds): acknowledge
        held segments."""
        if self.pending > 0 or self.compressed > 0:
            self._ack_now(now)
