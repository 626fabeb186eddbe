"""One flow of a multi-flow scenario on the flat engine: its sender and receiver state in the
engine's arrays, run by the engine's own functions, its packets handed to a shared path.

Each flow of :func:`~latency_model.sim.scenario.run` holds the state of one transfer of the
flat engine (:mod:`.flat`: ``I``, ``F``, ``S``, ``SF``, ``RB``) and its parameters from
:func:`.kernel.pack_params`, and runs the rfc sender of :mod:`.kernel_rfc` (RFC 5681 growth
through the flow's rule, RFC 6582 NewReno, RFC 3042 Limited Transmit, RFC 5827 Early
Retransmit, the RFC 6298 timer) and the receiver of :func:`.flat.on_segment` (delayed ACKs
every ``b`` segments, immediate ACKs out of order and on filling a gap, the FIN ACKed at once):
the same functions as the Monte Carlo and :func:`~latency_model.sim.run_transfer`, not a twin.

Only the path differs. The flow's own link is made instantaneous and lossless (rate
infinite, delay 0, no loss draw, no buffer), so every packet the engine puts on it lands in
the engine's FIFO queues at its sending time with the ``seq`` it was given; after each event
the driver takes them out (:meth:`FlatFlow.take_data`, :meth:`FlatFlow.take_acks`) and hands
them to the shared dumbbell, and it schedules the timers the event armed
(:meth:`FlatFlow.armed`). The flows share one event clock: before each event of a flow the
engine's ``seq`` counter is set to the scenario's, so events run in the engine's order
(:func:`.flat.before`: the earliest tick, then the earliest scheduling).

NGWA (Talau & Wille) is two switches of the same engine: the advertised window ``W_a``
of each ACK is the engine's receiver window (``PF[Q_RWNDB]``), and without the congestion
window (RFC 793) the send loop ignores cwnd (``PI[P_NOCWND]``) and the duplicate-ACK
threshold is out of reach (no fast retransmit).
"""

from __future__ import annotations

import numpy as np

from . import flat, kernel
from .flat import (CWND, DL_ON, DL_SEQ, DL_T, N_QF, N_QI, N_STATE, P_DUPT, P_ER,
                   P_NOCWND, P_TAIL, Q_ACKSER, Q_DELAY, Q_P, Q_PACK, Q_RATE, Q_RWNDB, QI_AA, QI_AS, QI_DG,
                   QI_DS, RTO_ON, RTO_SEQ, RTO_T, SF_SENT, SSTH, UNA)

__all__ = ["FlatFlow", "NO_DUPACK_THRESHOLD"]

NO_DUPACK_THRESHOLD = 1 << 62
"""DupThresh of a sender without fast retransmit (RFC 793): never reached."""

_NO_UNIFORMS = np.zeros(0)  # p = 0 and p_ack = 0: the engine draws nothing


class FlatFlow:
    """Sender and receiver of one flow in the flat engine's arrays.

    Parameters
    ----------
    params : TcpParams
        The flow's TCP (a rule of a registered class, ``p`` = 0).
    size_bytes : int
        Transfer size, bytes (>= 1).
    config : SimConfig
        Timer constants and the RTO / Limited Transmit rules (the rfc sender, Karn's RTT
        sampling, no quick ACKs, FIN ACKed at once, no ACK loss or serialisation: the
        scenario checks them).
    cwnd_on : bool
        False: no congestion window (NGWA's RFC 793 modes): the send limit is the receiver
        window alone and there is no fast retransmit, tail rule or Early Retransmit.
    window_bytes : float or None
        The receiver window the sender starts with, bytes; ``None``: ``M * MSS``.

    Raises
    ------
    ValueError
        From :func:`.kernel.pack_params`, e.g. for a rule of an unregistered class.
    """

    __slots__ = ("PI", "PF", "I", "F", "S", "SF", "RB", "blk", "arrays", "view", "rule", "mss", "size",
                 "done", "out")

    def __init__(self, params, size_bytes: int, config, cwnd_on: bool = True,
                 window_bytes: float | None = None) -> None:
        PI, PF = kernel.pack_params(params, size_bytes, config)
        PF[Q_RATE] = np.inf  # the flow's own link: instantaneous, lossless (the dumbbell is the path)
        PF[Q_DELAY] = 0.0
        PF[Q_P] = PF[Q_PACK] = PF[Q_ACKSER] = 0.0
        if window_bytes is not None:
            PF[Q_RWNDB] = window_bytes
        if not cwnd_on:
            PI[P_NOCWND] = 1
            PI[P_DUPT] = NO_DUPACK_THRESHOLD
            PI[P_TAIL] = PI[P_ER] = 0
        n = int(PI[flat.P_N])
        self.PI, self.PF = PI, PF
        self.I, self.F, self.S, self.SF, self.RB, self.blk, _, _ = kernel.state_arrays(n, 0)
        flat.reset(self.I, self.F, self.S, PI, PF)
        self.rule = params.rule
        self.mss = params.mss_bytes
        self.size = size_bytes
        self.arrays = (self.I, self.F, self.S, self.SF, self.RB, self.blk, PI, PF)
        if _FN[0] is None:
            _FN[0] = kernel.compiled_flow_event() or kernel.flow_event
        self.view = None
        self.done = False  # the ACK of the last byte has arrived
        self.out = [0] * 8  # kernel.flow_event's O of the latest event, as ints

    # State read by the scenario -----------------------------------------------------------
    @property
    def dupacks(self) -> tuple[int, int]:
        """Duplicate ACKs counted before and after the latest event."""
        return self.out[5], self.out[6]

    @property
    def completion_s(self) -> float:
        """Time the ACK of the last byte arrived, seconds (absolute)."""
        return float(self.F[flat.COMPL])

    @property
    def acked_bytes(self) -> int:
        """Bytes cumulatively acknowledged (goodput of a censored flow)."""
        return min(int(self.I[UNA]) * self.mss, self.size)

    @property
    def cwnd(self) -> float:
        """Congestion window, bytes."""
        return float(self.F[CWND])

    @property
    def ssthresh(self) -> float:
        """Slow-start threshold, bytes."""
        return float(self.F[SSTH])

    def counters(self) -> tuple[int, int, int]:
        """Retransmissions, timeouts and fast retransmits so far."""
        I = self.I
        return int(I[flat.RETX]), int(I[flat.TOUT]), int(I[flat.FRX])

    def state(self):
        """The rule's state object over the engine's float state (built on first use): its
        ``v`` is a view of the engine's slots, so the rule's own methods (``on_signal``,
        ``in_slow_start``) read and write them."""
        if self.view is None:
            st = self.rule.new_state(1.0, 1.0, self.mss)
            st.v = self.F[:N_STATE]
            self.view = st
        return self.view

    def rtt_sample(self, ack: int, now: float):
        """The RTT sample (seconds) an ACK for ``ack`` segments arriving at ``now`` will give
        the sender, or ``None`` (not a new ACK, or Karn's rule: :func:`.flat.karn_valid`)."""
        I = self.I
        if ack <= I[UNA] or not flat.karn_valid(ack, I, self.S):
            return None
        return now - float(self.SF[SF_SENT, ack - 1])

    # Events --------------------------------------------------------------------------------
    def event(self, kind: int, value: int, now: float, seq: int, window: float | None = None) -> None:
        """Run one event of :func:`.kernel.flow_event` (``kind``, ``value``) at ``now``
        (seconds), the engine's ``seq`` counter starting at ``seq``; with ``window`` (bytes,
        an ACK of NGWA) the ACK's advertised window ``W_a`` becomes the receiver window."""
        if window is not None:
            self.PF[Q_RWNDB] = window
            kind = kernel.FLOW_WINDOW_ACK
        fail = _FN[0](kind, value, now, seq, *self.arrays, *_SHARED)
        if fail != 0:  # pragma: no cover - the queues hold what one event sends
            raise RuntimeError(f"flat engine failure {int(fail)} in a scenario flow")
        self.out = out = _O.tolist()
        self.done = out[4] != 0

    # What the event sent or armed ------------------------------------------------------------
    @property
    def seq(self) -> int:
        """The engine's ``seq`` counter after the latest event."""
        return self.out[7]

    def take_data(self):
        """The data segments the latest event sent: ``(seqs, segments, payload bytes)``, in order."""
        nd = self.out[0]
        if nd == 0:
            return ()
        mss, size = self.mss, self.size
        segs = _QI[QI_DG, :nd].tolist()
        return zip(_QI[QI_DS, :nd].tolist(), segs, [min(mss, size - k * mss) for k in segs])

    def take_acks(self):
        """The ACKs the latest event sent: ``(seq, ack)`` pairs, in order."""
        na = self.out[1]
        if na == 0:
            return ()
        return zip(_QI[QI_AS, :na].tolist(), _QI[QI_AA, :na].tolist())

    def armed(self):
        """Timers (re)armed by the latest event: ``[(time_s, seq, kind), ...]``, kind
        ``"rto"`` or ``"delack"``."""
        out = []
        if self.out[2] >= 0:
            out.append((float(self.F[RTO_T]), self.out[2], "rto"))
        if self.out[3] >= 0:
            out.append((float(self.F[DL_T]), self.out[3], "delack"))
        return out

    def live(self, kind: str, seq: int) -> bool:
        """True if the timer ``kind`` armed with ``seq`` is still armed (not cancelled or re-armed)."""
        I = self.I
        if kind == "rto":
            return I[RTO_ON] != 0 and I[RTO_SEQ] == seq
        return I[DL_ON] != 0 and I[DL_SEQ] == seq


# The FIFO queues the engine puts packets in: emptied after every event, so one pair serves
# every flow; grown to hold the largest transfer's window (ensure_queues).
_QI = np.zeros((N_QI, 64), np.int64)
_QF = np.zeros((N_QF, 64), np.float64)
_O = np.zeros(8, np.int64)  # kernel.flow_event's summary of an event


_SHARED = (_NO_UNIFORMS, _QI, _QF, _O)  # the arguments of flow_event after a flow's own arrays
_FN = [None]  # kernel.flow_event compiled by numba, or itself when numba is unavailable (set once)


def ensure_queues(n_segments: int, window_segments: int) -> None:
    """Make the shared queues hold what one event can send: every segment of a transfer of
    ``n_segments`` up to a window of ``window_segments``, or the ACKs of one event."""
    global _QI, _QF, _SHARED
    cap = min(n_segments, window_segments) + 64
    if _QI.shape[1] < cap:
        _QI = np.zeros((N_QI, cap), np.int64)
        _QF = np.zeros((N_QF, cap), np.float64)
        _SHARED = (_NO_UNIFORMS, _QI, _QF, _O)
