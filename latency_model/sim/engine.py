"""Event core: a heap of ``(time, seq, kind, payload)`` with cancellable timers.

``seq`` is a per-queue counter, so events due at the same instant run in the
order they were scheduled: the run is deterministic and independent of payloads.
Timers are cancelled lazily (a cancelled entry is skipped when popped), which keeps
push and pop at O(log n).
"""

from __future__ import annotations

import heapq

__all__ = ["EventQueue", "Timer"]


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
    """Min-heap of events ordered by ``(time, seq)``.

    ``seq`` increases by one per :meth:`push`, which gives FIFO order among
    simultaneous events and makes every run reproducible.
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
        heapq.heappush(self._heap, (time_s, seq, kind, payload))
        return seq

    def discard(self, token: int) -> None:
        """Mark the event ``token`` as cancelled."""
        self._dead.add(token)

    def pop(self):
        """Remove and return the next live event ``(time_s, token, kind, payload)``, or None if empty."""
        heap = self._heap
        while heap:
            ev = heapq.heappop(heap)
            if ev[1] in self._dead:
                self._dead.discard(ev[1])
                continue
            self.now = ev[0]
            return ev
        return None
