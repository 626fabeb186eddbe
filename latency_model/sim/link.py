"""The path: a FIFO link of rate C with per-packet serialisation, a one-way delay d
and packet loss; ACKs return over the same delay d.

Loss decisions come from a :class:`LossModel`. The random model consumes one
uniform per data transmission (when p > 0) and one per ACK (when the ACK loss
probability is > 0), in the order the packets are sent, from a
:class:`UniformStream` that draws fixed-size blocks from the run's
``numpy.random.Generator``. The compiled kernel draws the same blocks in the same
order, which is what makes both paths bit-identical for one seed.
"""

from __future__ import annotations

import abc
from collections import deque
from collections.abc import Mapping

import numpy as np

from ..checks import check_int, check_real
from .flat import LINK_TIE_S

__all__ = [
    "UniformStream",
    "LossModel",
    "RandomLoss",
    "ScriptedLoss",
    "Link",
    "block_size",
]


def block_size(n_segments: int, p: float, p_ack: float) -> int:
    """Uniforms drawn per block: about twice the expected draws of a transfer of
    ``n_segments`` (one per transmission, ~n/(1-p), and as many for ACKs if ACKs
    can be lost), so that a second block is rarely needed."""
    per_packet = 2.0 / (1.0 - p) * (2.0 if p_ack > 0.0 else 1.0)
    return int(per_packet * n_segments) + 16


class UniformStream:
    """Uniform [0, 1) variates drawn lazily, in blocks of fixed size, from a Generator.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness of one run.
    block : int
        Variates per block (>= 1); see :func:`block_size`.
    """

    __slots__ = ("rng", "_buf", "_i", "_block")

    def __init__(self, rng: np.random.Generator, block: int) -> None:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got {rng!r}")
        self.rng = rng
        self._block = check_int("block", block, low=1)
        self._buf = rng.random(self._block)
        self._i = 0

    def next(self) -> float:
        """The next uniform of the run."""
        if self._i == self._buf.shape[0]:
            self._buf = np.concatenate([self._buf, self.rng.random(self._block)])
        u = self._buf[self._i]
        self._i += 1
        return float(u)


class LossModel(abc.ABC):
    """Decides, packet by packet, whether the path drops a packet."""

    @abc.abstractmethod
    def drop_data(self, seg: int) -> bool:
        """True if this transmission of data segment ``seg`` is lost."""

    @abc.abstractmethod
    def drop_ack(self) -> bool:
        """True if the ACK being sent is lost."""


class RandomLoss(LossModel):
    """Independent (Bernoulli) losses: each data transmission with probability ``p``,
    each ACK with probability ``p_ack`` (paper, Section 2: independent losses).

    Parameters
    ----------
    p : float
        Data loss probability, in [0, 1).
    p_ack : float
        ACK loss probability, in [0, 1).
    stream : UniformStream
        Uniforms of the run; a packet is lost when its uniform is < the probability.
    """

    __slots__ = ("p", "p_ack", "stream")

    def __init__(self, p: float, p_ack: float, stream: UniformStream) -> None:
        self.p = check_real("p", p, low=0.0, high=1.0, high_open=True)
        self.p_ack = check_real("p_ack", p_ack, low=0.0, high=1.0, high_open=True)
        self.stream = stream

    def drop_data(self, seg: int) -> bool:
        return self.p > 0.0 and self.stream.next() < self.p

    def drop_ack(self) -> bool:
        return self.p_ack > 0.0 and self.stream.next() < self.p_ack


class ScriptedLoss(LossModel):
    """Deterministic losses: drop the first ``k`` transmissions of listed segments.

    Parameters
    ----------
    drops : mapping of int to int, or iterable of int
        Segment index (0-based) -> number of its first transmissions to drop
        (>= 1); an iterable drops the first transmission of each listed segment.
    n_segments : int
        Transfer length, segments; every index must be in [0, n_segments).
    """

    __slots__ = ("_left",)

    def __init__(self, drops, n_segments: int) -> None:
        if isinstance(drops, Mapping):
            items = list(drops.items())
        else:
            try:
                if isinstance(drops, (str, bytes)):
                    raise TypeError
                items = [(seg, 1) for seg in drops]
            except TypeError:
                raise ValueError("drops must be a mapping of segment index to count or an iterable "
                                 f"of segment indices (ints in [0, {n_segments - 1}]), got {drops!r}") from None
        left: dict[int, int] = {}
        for seg, times in items:
            s = check_int("drops segment index", seg, low=0, high=n_segments - 1)
            left[s] = left.get(s, 0) + check_int("drops count", times, low=1)
        self._left = left

    def counts(self, n_segments: int) -> np.ndarray:
        """The drops still to come per segment, int64 of length ``n_segments``."""
        a = np.zeros(n_segments, np.int64)
        for seg, k in self._left.items():
            a[seg] = k
        return a

    def drop_data(self, seg: int) -> bool:
        k = self._left.get(seg, 0)
        if k > 0:
            self._left[seg] = k - 1
            return True
        return False

    def drop_ack(self) -> bool:
        return False


_TIE_S = LINK_TIE_S


class Link:
    """Sender -> receiver FIFO link and the ACK return path.

    A data packet of ``L`` payload bytes occupies the link for
    ``(L + header) * 8 / C`` seconds after the previous one has left (store and
    forward) and reaches the receiver ``d`` seconds after its last bit left.
    A randomly lost packet still uses the link (it is dropped downstream). ACKs take
    ``d`` seconds and are not serialised (40-byte ACKs on a 100 Mb/s link take 3.2 us),
    unless ``config.ack_serialisation``: then the return link is a second FIFO of the
    same rate, a pure ACK of ``header`` bytes occupies it for ``header * 8 / C``
    seconds after the previous ACK has left and arrives ``d`` after its last bit (a lost
    ACK too uses it), and the forward link starts busy for one ACK's time (the
    handshake's last ACK, sent just before the first data segment).

    Drop-tail buffer (``config.queue_packets = B``, optional): a packet handed to the
    link when ``B`` packets already wait behind the one being serialised is dropped at
    once, uses no link time and draws no loss uniform. A packet counts as gone when its
    last bit has left (ties within ``_TIE_S`` count as gone). ``B = None``: unlimited,
    the code path is skipped entirely.

    Parameters
    ----------
    queue : EventQueue
        Where arrivals are scheduled (kinds ``"data"`` and ``"ack"``).
    config : SimConfig
        Link rate and header size.
    delay_s : float
        One-way delay d, seconds.
    loss : LossModel
        Loss decisions.
    """

    __slots__ = ("queue", "rate", "header", "delay", "loss", "busy_until",
                 "lost_data", "lost_acks", "limit", "backlog", "queue_drops",
                 "transmissions", "first_drop_index", "ack_time", "ack_busy_until")

    def __init__(self, queue, config, delay_s: float, loss: LossModel) -> None:
        self.queue = queue
        self.rate = config.link_rate_bps
        self.header = config.header_bytes
        self.delay = delay_s
        self.loss = loss
        self.ack_time = config.ack_serialisation_s()  # 0.0: ACKs are not serialised
        self.ack_busy_until = 0.0
        self.busy_until = self.ack_time  # the handshake's ACK
        self.lost_data = 0
        self.lost_acks = 0
        self.limit = config.queue_packets
        self.backlog: deque = deque()  # end-of-serialisation times of accepted packets
        self.queue_drops = 0
        self.transmissions = 0
        self.first_drop_index: int | None = None
        if self.limit is not None and self.ack_time > 0.0:
            self.backlog.append(self.busy_until)

    def _buffer_full(self, now: float) -> bool:
        backlog = self.backlog
        while backlog and backlog[0] <= now + _TIE_S:
            backlog.popleft()
        return len(backlog) > self.limit  # B waiting + the one on the link

    def _dropped(self) -> bool:
        self.lost_data += 1
        if self.first_drop_index is None:
            self.first_drop_index = self.transmissions
        self.transmissions += 1
        return False

    def send_data(self, seg: int, payload_bytes: int, now: float, tsval: float | None = None) -> bool:
        """Put segment ``seg`` on the link at ``now`` (seconds); return False if it is lost.

        With a timestamp ``tsval`` (seconds) the arrival's payload is ``(seg, tsval)``."""
        if self.limit is not None:
            if self._buffer_full(now):
                self.queue_drops += 1
                return self._dropped()
        start = now if now > self.busy_until else self.busy_until
        self.busy_until = start + (payload_bytes + self.header) * 8.0 / self.rate
        if self.limit is not None:
            self.backlog.append(self.busy_until)
        if self.loss.drop_data(seg):
            return self._dropped()
        self.transmissions += 1
        self.queue.push(self.busy_until + self.delay, "data", seg if tsval is None else (seg, tsval))
        return True

    def send_ack(self, ack: int, now: float, tsecr: float | None = None) -> bool:
        """Send a cumulative ACK for ``ack`` segments at ``now`` (seconds); return False if lost.

        With a timestamp echo ``tsecr`` (seconds) the arrival's payload is ``(ack, tsecr)``."""
        lost = self.loss.drop_ack()
        if self.ack_time > 0.0:
            start = now if now > self.ack_busy_until else self.ack_busy_until
            self.ack_busy_until = now = start + self.ack_time
        if lost:
            self.lost_acks += 1
            return False
        self.queue.push(now + self.delay, "ack", ack if tsecr is None else (ack, tsecr))
        return True
