"""Event core: a heap of events ordered by ``(tick, seq)`` with cancellable timers.

``tick`` is the event's time on a clock of whole nanoseconds (:func:`tick`) and ``seq`` a
per-queue counter, so events due in the same nanosecond run in the order they were
scheduled, as ns-3 runs its events (an integer-nanosecond ``Time``, FIFO among equal
times): the run is deterministic and independent of payloads, and two events due at the
same instant in exact arithmetic (a delayed-ACK timer and a data arrival, say) keep their
scheduling order however the floating-point sums that gave their times were rounded
(ordered by the float times, they ran in the order of that rounding's last bit:
docs/packet-model.md, exact serialisation). The times themselves stay floats: only the order uses ticks.
Timers are cancelled lazily (a cancelled entry is skipped when popped), which keeps
push and pop at O(log n).
"""

from __future__ import annotations

import heapq

__all__ = ["EventQueue", "Timer", "tick", "before"]


def tick(time_s: float) -> int:
    """``time_s`` (seconds, >= 0) on the event clock: whole nanoseconds, rounded to nearest."""
    return int(time_s * 1e9 + 0.5)


def before(t: float, s: int, bt: float, bs: int) -> bool:
    """Event ``(t, s)`` (time in seconds, scheduling ``seq``) runs before event ``(bt, bs)``:
    an earlier :func:`tick`, or the same tick and scheduled earlier. The order of
    :class:`EventQueue`, for the array kernels that keep their events in queues of their own
    (:mod:`.flat` compiles it as a helper)."""
    a = tick(t)
    b = tick(bt)
    return a < b or (a == b and s < bs)


class Timer:
    """A re-armable one-shot timer living in an :class:`EventQueue`.

    Parameters
    ----------
    queue : EventQueue
        Queue that delivers the expiry event.
    kind : str
        Event kind delivered on expiry.
    """

    __slots__ = ("queue", "kind", "_token", "deadline")

    def __init__(self, queue: "EventQueue", kind: str) -> None:
        self.queue = queue
        self.kind = kind
        self._token = None
        self.deadline: float | None = None

    @property
    def armed(self) -> bool:
        """True while an expiry is pending."""
        return self._token is not None

    def arm(self, when_s: float) -> None:
        """(Re)start the timer to expire at absolute time ``when_s``, seconds."""
        self.cancel()
        self.deadline = when_s
        self._token = self.queue.push(when_s, self.kind, None)

    def cancel(self) -> None:
        """Stop the timer; a pending expiry will be skipped."""
        if self._token is not None:
            self.queue.discard(self._token)
        self._token = None
        self.deadline = None

    def fired(self, token) -> bool:
        """Consume an expiry event; False if it belongs to a cancelled arming."""
        if token != self._token:
            return False
        self._token = None
        self.deadline = None
        return True


class EventQueue:
    """Min-heap of events ordered by ``(tick(time), seq)``.

    ``seq`` increases by one per :meth:`push`, which gives FIFO order among
    events due in the same nanosecond and makes every run reproducible.
    """

    __slots__ = ("_heap", "_seq", "_dead", "now")

    def __init__(self) -> None:
        self._heap: list = []
        self._seq = 0
        self._dead: set[int] = set()
        self.now = 0.0

    def push(self, time_s: float, kind: str, payload) -> int:
        """Schedule ``kind`` with ``payload`` at absolute time ``time_s`` (seconds); return its token."""
        seq = self._seq
        self._seq += 1
        heapq.heappush(self._heap, (tick(time_s), seq, time_s, kind, payload))
        return seq

    def discard(self, token: int) -> None:
        """Mark the event ``token`` as cancelled."""
        self._dead.add(token)

    def pop(self):
        """Remove and return the next live event ``(time_s, token, kind, payload)``, or None if empty."""
        heap = self._heap
        while heap:
            _, seq, time_s, kind, payload = heapq.heappop(heap)
            if seq in self._dead:
                self._dead.discard(seq)
                continue
            self.now = time_s
            return time_s, seq, kind, payload
        return None
