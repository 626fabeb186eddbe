"""The packet-level sender and receiver over flat arrays (private; numba twin).

The same state machine as :mod:`._packet_engine` (the RFC rules, each cited there and in
docs/model.md section 1), rewritten over one int64 and one float64 row per state so that
the level DP (:mod:`._packet_levels`) can be compiled by numba. Every floating-point
expression repeats the object engine's in the same order, so a scripted path gives the
same bits in both (``tests/test_model_packet_levels.py`` checks it on random loss
patterns).

Layout. Constants: ``C`` (int64, ``C_*``) and ``CF`` (float64, ``CF_*``). State: ``I``
(int64, ``I_*``, then the event kinds and values, then the segment sets) and ``F``
(float64, ``F_*``, then the event times, then the send times). Pending events are a list
ordered by time, FIFO among equal times (within ``TIE``), kept in slots
``0 .. I[I_NEV] - 1``; an event packs its kind and value as ``value * 4 + kind``. The two
sets of segments (resent, held at the receiver: :data:`RETX_SET`, :data:`BUF_SET`) are
``W = C[C_SETW]`` words of 64 bits each and the send times ``64 W`` slots, indexed by
``segment mod 64 W`` (:func:`_word`, :func:`_sent_slot`; W = 1, 2 or 4, the fewest the
receiver window needs: :func:`set_words`): both only hold segments of
``[snd_una, snd_max)``, which spans at most ``rwnd + 1 <= 64 W - 2`` segments
(:data:`MAX_RWND`). Their offsets in the rows are constants of the transfer
(``C_SETOFF``, ``C_SENTOFF``), so no access branches on W.

Level transitions: with ``C[C_LIM] > 0`` new data stops at segment ``lim - 1`` while the
file end and every rule that looks at it stay where they are; a send cut short by the
limit is resumed by :func:`resume` at the next level (``I_CUTLT`` remembers a Limited
Transmit send, whose bytes RFC 5681 3.2 step 2 keeps apart).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_RWND", "TIE", "DATA", "ACK", "RTO", "DELACK", "make_consts", "new_state",
           "n_int", "n_float", "ev_max"]

TIE = 1e-9
DATA, ACK, RTO, DELACK = 0, 1, 2, 3
MAX_WORDS = 4
"""Most 64-bit words per segment set (:func:`set_words`)."""
MAX_RWND = 64 * MAX_WORDS - 3
"""Largest receiver window (packets) of the flat engine: 253 (segment sets of up to
:data:`MAX_WORDS` 64-bit words)."""
RETX_SET, BUF_SET = 0, 1
"""The two segment sets: resent and outstanding (Karn's rule), held by the receiver."""

# Constants (int64).
C_N, C_SIZE, C_MSS, C_LAST, C_B, C_DUPT, C_LTLO, C_LTHI, C_TAIL, C_ER, C_FIN, C_LIM, \
    C_EVMAX, C_QUICK, C_COLLAPSE, C_SETW, C_SETOFF, C_SENTOFF, C_SENTMASK, C_NS3, C_NSOFF = range(21)
N_C = 21
# Constants (float64).
CF_RWND, CF_D, CF_SER, CF_SERLAST, CF_DELACK, CF_MINRTO, CF_MAXRTO, CF_INITRTO, CF_G, CF_FIXRTO, \
    CF_SRTT0 = range(11)
N_CF = 11

# State (int64).
I_UNA, I_NXT, I_SMAX, I_RECOVER, I_INREC, I_PARTIAL, I_DUP, I_LTC, I_LTB, I_BACKOFF, \
    I_RCV, I_PEND, I_DONE, I_RTOMIN, I_NEV, I_CUTLT, I_FAIL, I_QUICK = range(18)
N_I0 = 18
# The ns3 sender's fields (:func:`_ns3_send` and below), after the segment sets at
# ``C[C_NSOFF]`` and only in its rows (so the RFC sender's rows are as narrow as before):
# its congestion state, whether its recovery point is active, its scoreboard as runs
# (Reno marks on segments snd_una + 1 .. snd_una + J_SACKN, lost flags below J_LOSTEND,
# retransmitted flags below J_RFEND, each from snd_una) and the first segment with an
# RTT-history entry.
J_NSTATE, J_RACT, J_SACKN, J_LOSTEND, J_RFEND, J_HIST = range(6)
N_J = 6
OPEN, DISORDER, RECOVERY, LOSS = 0, 1, 2, 3
"""ns-3's congestion states (``TcpCongState_t``), the ns3 sender's ``J_NSTATE``."""
# State (float64).
F_CWND, F_SSTH, F_RTO, F_SRTT, F_RTTVAR, F_BUSY = range(6)
N_F0 = 6
SENT_SLOTS = 64
"""Send times per 64-bit word of the segment sets."""
OFF_EVT = N_F0  # the event times follow the fixed floats


def ev_max(rwnd_packets: float) -> int:
    """Event slots for a receiver window: data and ACKs in flight and the two timers
    (a window of each plus half a window of retransmissions; a state that needs more is
    reported by ``I_FAIL``, never silently cut)."""
    return 3 * (int(rwnd_packets) + 2) + 4


def set_words(rwnd_packets: float) -> int:
    """64-bit words per segment set for a receiver window (packets): 1, 2 or 4, the fewest
    whose ``64 W`` bits cover the ``rwnd + 1`` segments of ``[snd_una, snd_max)`` with a
    segment to spare (:data:`MAX_RWND`)."""
    w = 1
    while 64 * w - 3 < rwnd_packets:
        w *= 2
    if w > MAX_WORDS:
        raise ValueError(f"rwnd must be at most {MAX_RWND} packets for the flat engine, got "
                         f"{rwnd_packets:g}")
    return w


def n_int(evmax: int, words: int = 1, ns3: bool = False) -> int:
    """Width of a state's int64 row: the fixed fields, the event slots, the two segment
    sets' words and with the ns3 sender its fields (:data:`N_J`)."""
    return N_I0 + evmax + 2 * words + (N_J if ns3 else 0)


def n_float(evmax: int, words: int = 1) -> int:
    """Width of a state's float64 row: the fixed fields, the event times and the send
    times."""
    return N_F0 + evmax + SENT_SLOTS * words


def make_consts(*, size_bytes, mss, rwnd_packets, b, dup_t, dup_lt, tail, er, d,
                ser_per_byte, header, delack, min_rto, max_rto, init_rto, fin, quick_acks=0,
                clock_granularity=0.0, backoff_collapses=False, fixed_rto=0.0, words=None,
                sender="rfc"):
    """(C, CF) for one transfer, as :class:`._packet_engine._Const` computes them;
    ``words``: the segment sets' width (default :func:`set_words` of ``rwnd_packets``;
    more words change nothing but the layout: ``test_wider_segment_sets_change_no_bit``)."""
    C = np.zeros(N_C, np.int64)
    CF = np.zeros(N_CF, np.float64)
    size = int(size_bytes)
    mss = int(mss)
    n = -(-size // mss)
    C[C_N] = n
    C[C_SIZE] = size
    C[C_MSS] = mss
    C[C_LAST] = size - (n - 1) * mss
    C[C_B] = int(b)
    C[C_DUPT] = int(dup_t)
    C[C_LTLO], C[C_LTHI] = (1, 0) if dup_lt is None else (1, int(dup_lt))
    C[C_TAIL] = int(bool(tail))
    C[C_ER] = int(bool(er))
    C[C_FIN] = int(bool(fin))
    C[C_LIM] = 0
    C[C_EVMAX] = ev_max(rwnd_packets)
    C[C_QUICK] = int(quick_acks)
    C[C_COLLAPSE] = int(bool(backoff_collapses))
    need = set_words(rwnd_packets)
    w = need if words is None else int(words)
    if w not in (1, 2, 4) or w < need:
        raise ValueError(f"words must be 1, 2 or 4 and at least {need} for rwnd "
                         f"{rwnd_packets:g} packets, got {words!r}")
    C[C_SETW] = w
    C[C_SETOFF] = N_I0 + C[C_EVMAX]
    C[C_SENTOFF] = N_F0 + C[C_EVMAX]
    C[C_SENTMASK] = SENT_SLOTS * w - 1
    CF[CF_RWND] = float(rwnd_packets) * mss
    CF[CF_D] = float(d)
    CF[CF_SER] = (mss + header) * ser_per_byte
    CF[CF_SERLAST] = (int(C[C_LAST]) + header) * ser_per_byte
    CF[CF_DELACK] = float(delack)
    CF[CF_MINRTO] = float(min_rto)
    CF[CF_MAXRTO] = float(max_rto)
    CF[CF_INITRTO] = float(init_rto)
    CF[CF_G] = float(clock_granularity)
    CF[CF_FIXRTO] = float(fixed_rto)  # > 0: the paper's fixed RTO, no estimator, no back-off
    C[C_NS3] = int(sender == "ns3")
    C[C_NSOFF] = C[C_SETOFF] + 2 * w
    # the ns3 sender's first RTT sample, the SYN-ACK's (as _Const.srtt0)
    CF[CF_SRTT0] = 2.0 * float(d) + 2.0 * (4 + header) * ser_per_byte if C[C_NS3] else -1.0
    return C, CF


def new_state(C, CF, w0_packets: float, w_ss_packets: float):
    """Rows (I, F) before the first send at t = 0."""
    evmax = int(C[C_EVMAX])
    I = np.zeros(n_int(evmax, int(C[C_SETW]), bool(C[C_NS3])), np.int64)
    F = np.zeros(n_float(evmax, int(C[C_SETW])), np.float64)
    I[I_RECOVER] = -1
    F[F_CWND] = float(w0_packets) * C[C_MSS]
    F[F_SSTH] = float(w_ss_packets) * C[C_MSS]
    F[F_RTO] = CF[CF_FIXRTO] if CF[CF_FIXRTO] > 0.0 else CF[CF_INITRTO]  # RFC 6298 (2.1)
    F[F_SRTT] = -1.0
    I[I_QUICK] = C[C_QUICK]
    if C[C_NS3]:  # the SYN-ACK's sample (as _packet_engine.initial_state)
        F[F_SRTT] = CF[CF_SRTT0]
        F[F_RTTVAR] = CF[CF_SRTT0] / 2.0
        _rto_from_estimator(CF, I, F)
    return I, F


# Helpers ------------------------------------------------------------------------

def copy_row(C, I, F, I2, F2):
    """Copy state (I, F) into rows (I2, F2): the fixed fields, the pending events, the
    segment sets and the send times of ``[snd_una, snd_max)`` (the others are never read:
    a segment's send time is written when it is sent)."""
    n = I[I_NEV]
    for j in range(N_I0 + n):
        I2[j] = I[j]
    for j in range(OFF_EVT + n):
        F2[j] = F[j]
    a = C[C_SETOFF]
    for j in range(a, a + 2 * C[C_SETW] + (N_J if C[C_NS3] else 0)):  # sets, ns3 fields
        I2[j] = I[j]
    off = C[C_SENTOFF]  # (only the window's send times are ever read)
    mask = C[C_SENTMASK]
    for k in range(I[I_UNA], I[I_SMAX]):
        F2[off + (k & mask)] = F[off + (k & mask)]


def _end(C, k):
    """Bytes in segments 0..k-1."""
    e = k * C[C_MSS]
    return e if e < C[C_SIZE] else C[C_SIZE]


def _seg_len(C, k):
    return C[C_LAST] if k == C[C_N] - 1 else C[C_MSS]


def _bit(k):
    return np.int64(1) << np.int64(k & 63)


def _word(C, which, seg):
    """Index in the int64 row of the word of set ``which`` (:data:`RETX_SET`,
    :data:`BUF_SET`) that holds segment ``seg``: word ``(seg >> 6) mod W``."""
    return C[C_SETOFF] + which * C[C_SETW] + ((seg >> 6) & (C[C_SETW] - 1))


def _has(C, I, which, seg):
    return (I[_word(C, which, seg)] & _bit(seg)) != 0


def _put(C, I, which, seg):
    j = _word(C, which, seg)
    I[j] |= _bit(seg)


def _take(C, I, which, seg):
    j = _word(C, which, seg)
    I[j] &= ~_bit(seg)


def _low(n):
    """The ``n`` low bits set (none for n <= 0, all 64 for n >= 64)."""
    if n <= 0:
        return np.int64(0)
    return np.int64(-1) if n >= 64 else (np.int64(1) << np.int64(n)) - np.int64(1)


def _window(C, I, which, base, n):
    """Set ``which``'s members among segments ``base .. base + min(n, 64) - 1`` as bits
    0.. of one word (the 64 W-bit ring of its words rotated to ``base``)."""
    w = C[C_SETW]
    a = C[C_SETOFF] + which * w
    r = base & 63
    k = (base >> 6) & (w - 1)
    x = I[a + k]
    if r != 0:
        x = ((x >> np.int64(r)) & _low(64 - r)) | (I[a + ((k + 1) & (w - 1))] << np.int64(64 - r))
    return x & _low(n)


def _empty(C, I, which):
    """Whether set ``which`` holds no segment."""
    a = C[C_SETOFF] + which * C[C_SETW]
    for j in range(a, a + C[C_SETW]):
        if I[j] != 0:
            return False
    return True


def _push(C, I, F, t, kind, v):
    """Schedule after every event due at or before ``t`` (FIFO among equal times)."""
    n = I[I_NEV]
    if n >= C[C_EVMAX]:
        I[I_FAIL] = 1
        return
    ok = N_I0
    of = OFF_EVT
    i = n
    while i > 0 and F[of + i - 1] > t + TIE:
        F[of + i] = F[of + i - 1]
        I[ok + i] = I[ok + i - 1]
        i -= 1
    F[of + i] = t
    I[ok + i] = v * 4 + kind
    I[I_NEV] = n + 1


def _delete(I, F, i):
    n = I[I_NEV]
    ok = N_I0
    of = OFF_EVT
    for j in range(i, n - 1):
        F[of + j] = F[of + j + 1]
        I[ok + j] = I[ok + j + 1]
    I[I_NEV] = n - 1


def _find(I, kind):
    ok = N_I0
    for i in range(I[I_NEV]):
        if I[ok + i] & 3 == kind:
            return i
    return -1


def _cancel(I, F, kind):
    i = _find(I, kind)
    if i >= 0:
        _delete(I, F, i)


def _arm(C, I, F, kind, t):
    _cancel(I, F, kind)
    _push(C, I, F, t, kind, 0)


def _sent_slot(C, seg):
    """Index in the float row of segment ``seg``'s send time: slot ``seg mod 64 W``."""
    return C[C_SENTOFF] + (seg & C[C_SENTMASK])


# Sender ------------------------------------------------------------------------

def _transmit(C, CF, I, F, seg, now):
    """Segment ``seg`` onto the FIFO link: serialised after the previous one, then d."""
    if seg < I[I_SMAX]:  # a retransmission (Karn's rule needs to know)
        _put(C, I, RETX_SET, seg)
    F[_sent_slot(C, seg)] = now
    busy = F[F_BUSY]
    start = now if now > busy else busy
    F[F_BUSY] = start + (CF[CF_SERLAST] if seg == C[C_N] - 1 else CF[CF_SER])
    _push(C, I, F, F[F_BUSY] + CF[CF_D], DATA, seg)
    if _find(I, RTO) < 0:  # RFC 6298 (5.1)
        _push(C, I, F, now + F[F_RTO], RTO, 0)


def _flight(C, I):
    return _end(C, I[I_NXT]) - _end(C, I[I_UNA])


def send_allowed(C, CF, I, F, now, lt):
    """RFC 5681 Section 3.1 / RFC 3042: send while FlightSize + next <= min(cwnd + LT
    credit, rwnd); one segment may always leave when nothing is in flight. ``lt``: the
    bytes sent count as Limited Transmit data (``I_LTB``)."""
    if C[C_NS3]:
        _ns3_send(C, CF, I, F, now)
        return
    limit = min(F[F_CWND] + I[I_LTC] * C[C_MSS], CF[CF_RWND])
    n = C[C_N]
    lim = C[C_LIM]
    if lim > 0 and lim < n:
        n = lim
    una_end = _end(C, I[I_UNA])
    while I[I_NXT] < n:
        nxt = I[I_NXT]
        flight = _end(C, nxt) - una_end
        if flight > 0 and flight + (C[C_LAST] if nxt == C[C_N] - 1 else C[C_MSS]) > limit:
            break
        _transmit(C, CF, I, F, nxt, now)
        if lt:
            I[I_LTB] += _end(C, nxt + 1) - _end(C, nxt)
        I[I_NXT] = nxt + 1
        if nxt + 1 > I[I_SMAX]:
            I[I_SMAX] = nxt + 1
    I[I_CUTLT] = 1 if (lt and lim > 0 and I[I_SMAX] >= lim) else 0


def _rtt_sample(CF, I, F, r):
    """RFC 6298 (2.2), (2.3) with alpha 1/8, beta 1/4, K 4 and the clock granularity G
    (RTO = SRTT + max(G, K RTTVAR)); (2.4), (2.5). Nothing with a fixed RTO."""
    if CF[CF_FIXRTO] > 0.0:
        return
    if F[F_SRTT] < 0.0:
        F[F_SRTT] = r
        F[F_RTTVAR] = r / 2.0
    else:
        F[F_RTTVAR] = 0.75 * F[F_RTTVAR] + 0.25 * abs(F[F_SRTT] - r)
        F[F_SRTT] = 0.875 * F[F_SRTT] + 0.125 * r
    _rto_from_estimator(CF, I, F)


def _rto_from_estimator(CF, I, F):
    """The RTO the estimator gives: RFC 6298 (2.3)-(2.5) from SRTT and RTTVAR, or the
    initial RTO (2.1) before any sample (``backoff_collapses`` calls it without a new
    sample). Nothing with a fixed RTO."""
    if CF[CF_FIXRTO] > 0.0:
        return
    if F[F_SRTT] < 0.0:
        rto = CF[CF_INITRTO]
    else:
        k_var = 4.0 * F[F_RTTVAR]
        rto = F[F_SRTT] + (k_var if k_var > CF[CF_G] else CF[CF_G])
    if rto > CF[CF_MINRTO] + 1e-12:
        I[I_RTOMIN] = 1
    F[F_RTO] = min(max(rto, CF[CF_MINRTO]), CF[CF_MAXRTO])


def on_rto(C, CF, I, F, now):
    """RFC 6298 (5.4)-(5.6); RFC 5681 3.1 Eq. 4 (ssthresh kept on repeated expiries);
    RFC 6582 3.2 step 1 (recover = highest sent); go-back-N from snd_una."""
    if C[C_NS3]:
        _ns3_on_rto(C, CF, I, F, now)
        return
    I[I_BACKOFF] += 1
    if I[I_BACKOFF] == 1:
        F[F_SSTH] = max(_flight(C, I) / 2.0, 2.0 * C[C_MSS])
    F[F_CWND] = float(C[C_MSS])
    I[I_INREC] = 0
    I[I_DUP] = 0
    I[I_LTC] = 0
    I[I_LTB] = 0
    I[I_RECOVER] = I[I_SMAX] - 1
    if CF[CF_FIXRTO] == 0.0:
        F[F_RTO] = min(2.0 * F[F_RTO], CF[CF_MAXRTO])  # (5.5)
    I[I_NXT] = I[I_UNA]
    send_allowed(C, CF, I, F, now, False)


def _new_ack(C, CF, I, F, ack, now):
    una = I[I_UNA]
    acked = _end(C, ack) - _end(C, una)
    # RFC 6298 Section 3 (Karn): a sample only if no newly covered segment was resent.
    valid = True
    if not _empty(C, I, RETX_SET):
        for k in range(una, ack):
            if _has(C, I, RETX_SET, k):
                valid = False
                break
        for k in range(una, ack):  # only segments >= snd_una are kept
            _take(C, I, RETX_SET, k)
    if valid:
        _rtt_sample(CF, I, F, now - F[_sent_slot(C, ack - 1)])
    elif C[C_COLLAPSE]:
        _rto_from_estimator(CF, I, F)
    I[I_UNA] = ack
    if I[I_NXT] < ack:
        I[I_NXT] = ack
    I[I_BACKOFF] = 0
    if ack >= C[C_N]:
        I[I_DONE] = 1
        return
    mss = C[C_MSS]
    if I[I_INREC]:
        if ack > I[I_RECOVER]:  # RFC 6582 3.2 step 5, full ACK, option 1
            F[F_CWND] = min(F[F_SSTH], float(max(_flight(C, I), mss) + mss))
            I[I_INREC] = 0
            I[I_DUP] = 0
            if I[I_NXT] > I[I_UNA]:  # RFC 6298 (5.3)
                _arm(C, I, F, RTO, now + F[F_RTO])
            else:  # (5.2)
                _cancel(I, F, RTO)
        else:  # step 5 partial ACK: resend the next hole, deflate, add back one MSS
            _transmit(C, CF, I, F, ack, now)
            F[F_CWND] = max(F[F_CWND] - acked, 0.0)
            if acked >= mss:
                F[F_CWND] += mss
            if not I[I_PARTIAL]:  # RFC 6582 Section 4, "impatient" timer
                I[I_PARTIAL] = 1
                _arm(C, I, F, RTO, now + F[F_RTO])
    else:
        I[I_DUP] = 0
        I[I_LTC] = 0
        I[I_LTB] = 0
        # RFC 5681 Section 3.1: slow start cwnd += min(N, SMSS); CA Eq. 3.
        if F[F_CWND] < F[F_SSTH]:
            F[F_CWND] += min(acked, mss)
        else:
            F[F_CWND] += mss * mss / F[F_CWND]
        if I[I_NXT] > I[I_UNA]:
            _arm(C, I, F, RTO, now + F[F_RTO])
        else:
            _cancel(I, F, RTO)
    send_allowed(C, CF, I, F, now, False)


def _dup_ack(C, CF, I, F, now):
    I[I_DUP] += 1
    mss = C[C_MSS]
    if I[I_INREC]:  # RFC 6582 Section 3.2 step 4: inflate
        F[F_CWND] += mss
        send_allowed(C, CF, I, F, now, False)
        return
    thresh = C[C_DUPT]
    if C[C_TAIL] and I[I_UNA] >= C[C_N] - C[C_DUPT]:  # paper, Section 3.1
        thresh = 1
    if C[C_ER]:  # RFC 5827 Section 3.1 (segment-based, no SACK)
        oseg = I[I_NXT] - I[I_UNA]
        nxt = I[I_NXT]
        can_new = nxt < C[C_N] and _flight(C, I) + _seg_len(C, nxt) <= CF[CF_RWND]
        if 2 <= oseg <= C[C_DUPT] and not can_new:
            thresh = min(thresh, oseg - 1)
    if I[I_DUP] >= thresh and I[I_UNA] > I[I_RECOVER]:  # RFC 6582 3.2 steps 1-2
        flight = _flight(C, I) - I[I_LTB]  # RFC 5681 3.2 step 2: LT data left out
        F[F_SSTH] = max(flight / 2.0, 2.0 * mss)
        I[I_RECOVER] = I[I_SMAX] - 1
        I[I_INREC] = 1
        I[I_PARTIAL] = 0
        I[I_LTC] = 0
        I[I_LTB] = 0
        _transmit(C, CF, I, F, I[I_UNA], now)
        F[F_CWND] = F[F_SSTH] + I[I_DUP] * mss  # step 3
        send_allowed(C, CF, I, F, now, False)
    elif C[C_LTLO] <= I[I_DUP] <= C[C_LTHI]:  # RFC 3042 Section 2
        I[I_LTC] += 1
        send_allowed(C, CF, I, F, now, True)


def on_ack(C, CF, I, F, ack, now):
    """A cumulative ACK arrives: new (RFC 5681 / 6582) or duplicate (RFC 5681 Section 2)."""
    if C[C_NS3]:
        _ns3_on_ack(C, CF, I, F, ack, now)
        return
    if ack > I[I_UNA]:
        _new_ack(C, CF, I, F, ack, now)
    elif ack == I[I_UNA] and I[I_SMAX] > I[I_UNA]:
        _dup_ack(C, CF, I, F, now)


# The ns3 sender ------------------------------------------------------------------
# As _packet_engine's (ns-3.37, sim/ns3.py), with the scoreboard as intervals from
# snd_una: the Reno marks are a run from snd_una + 1 (AddRenoSack marks the first
# unmarked segment after the head, DiscardUpTo moves a mark from the new head to the
# run's end), the lost flags a run from snd_una (the head, or everything outstanding at a
# timeout) and the retransmitted flags a run inside it (lost segments are resent in
# order; MarkHeadAsLost clears the head's). A state the runs cannot hold sets
# I_FAIL; tests/test_model_packet_ns3.py checks the two engines bit for bit.

def _ns3_pipe(C, I):
    """``BytesInFlight``: outstanding - Reno-marked - lost and not retransmitted, bytes."""
    o = C[C_NSOFF]
    una = I[I_UNA]
    b = _end(C, I[I_SMAX]) - _end(C, una)
    sk = I[o + J_SACKN]
    if sk > 0:
        b -= _end(C, una + 1 + sk) - _end(C, una + 1)
    lo = I[o + J_RFEND] if I[o + J_RFEND] > una else una
    if I[o + J_LOSTEND] > lo:
        b -= _end(C, I[o + J_LOSTEND]) - _end(C, lo)
    return b


def _ns3_add_reno_sack(C, I):
    o = C[C_NSOFF]
    if I[I_UNA] + 1 + I[o + J_SACKN] < I[I_SMAX]:
        I[o + J_SACKN] += 1


def _ns3_mark_head_lost(C, I):
    o = C[C_NSOFF]
    una = I[I_UNA]
    if una < I[I_SMAX]:
        if I[o + J_RFEND] > una + 1:
            I[I_FAIL] = 1
        elif I[o + J_RFEND] == una + 1:
            I[o + J_RFEND] = una
        if I[o + J_LOSTEND] < una + 1:
            I[o + J_LOSTEND] = una + 1


def _ns3_transmit(C, CF, I, F, seg, now):
    o = C[C_NSOFF]
    if seg < I[I_SMAX]:  # a retransmission: the next of the lost run
        lo = I[o + J_RFEND] if I[o + J_RFEND] > I[I_UNA] else I[I_UNA]
        if seg != lo:
            I[I_FAIL] = 1
        I[o + J_RFEND] = seg + 1
    _transmit(C, CF, I, F, seg, now)


def _ns3_send(C, CF, I, F, now):
    """``SendPendingData`` (new data stops at segment ``lim - 1`` under a level limit)."""
    o = C[C_NSOFF]
    n = C[C_N]
    lim = C[C_LIM]
    nn = lim if (lim > 0 and lim < n) else n
    mss = C[C_MSS]
    while True:
        if I[o + J_NSTATE] == OPEN and C[C_FIN] and I[I_SMAX] >= n:
            return
        win = CF[CF_RWND] if CF[CF_RWND] < F[F_CWND] else F[F_CWND]
        avail = win - _ns3_pipe(C, I)
        if avail <= 0:
            return
        una = I[I_UNA]
        sm = I[I_SMAX]
        lo = I[o + J_RFEND] if I[o + J_RFEND] > una else una
        seg = -1
        if lo < I[o + J_LOSTEND]:  # NextSeg: the first lost, not retransmitted
            seg = lo
        elif sm < nn and _end(C, sm) - _end(C, una) < CF[CF_RWND]:
            seg = sm
        if seg < 0:
            return
        if avail < mss and C[C_SIZE] - seg * mss > avail:
            return  # silly-window avoidance
        _ns3_transmit(C, CF, I, F, seg, now)
        if seg == sm:
            I[I_SMAX] = sm + 1
        I[I_NXT] = I[I_SMAX]
        if I[I_FAIL]:
            return


def _ns3_increase_window(C, F, segs):
    mss = C[C_MSS]
    if F[F_CWND] < F[F_SSTH] and segs >= 1:
        F[F_CWND] += mss
        segs -= 1
    if F[F_CWND] >= F[F_SSTH] and segs > 0:
        F[F_CWND] += float(int(max(1.0, mss * mss / F[F_CWND])))


def _ns3_timer(C, CF, I, F, now, reset):
    I[I_BACKOFF] = 0
    if reset:
        _rto_from_estimator(CF, I, F)
        _arm(C, I, F, RTO, now + F[F_RTO])


def _ns3_on_rto(C, CF, I, F, now):
    """``ReTxTimeout``."""
    o = C[C_NSOFF]
    I[I_BACKOFF] += 1
    in_flight = _ns3_pipe(C, I)
    I[I_DUP] = 0
    I[o + J_SACKN] = 0
    I[o + J_RFEND] = I[I_UNA]
    I[o + J_LOSTEND] = I[I_SMAX]
    I[I_RECOVER] = I[I_SMAX]
    I[o + J_RACT] = 1
    I[I_INREC] = 0
    I[I_PARTIAL] = 0
    F[F_RTO] = min(2.0 * F[F_RTO], CF[CF_MAXRTO])
    I[o + J_HIST] = I[I_SMAX]
    F[F_SSTH] = float(max(2 * C[C_MSS], in_flight // 2))
    I[o + J_NSTATE] = LOSS
    F[F_CWND] = float(C[C_MSS])
    _ns3_send(C, CF, I, F, now)


def _ns3_on_ack(C, CF, I, F, ack, now):
    """``ReceivedAck``: ``EstimateRtt``, then a duplicate ACK or ``DiscardUpTo`` and
    ``ProcessAck``, then ``SendPendingData``."""
    o = C[C_NSOFF]
    una = I[I_UNA]
    sm = I[I_SMAX]
    h = una if una > I[o + J_HIST] else I[o + J_HIST]  # the oldest entry of the RTT history
    if h < sm and ack > h and not _has(C, I, RETX_SET, h):
        m = now - F[_sent_slot(C, h)]
        if m > 0.0:
            _rtt_sample(CF, I, F, m)
    if ack == una:
        if ack < sm:
            _ns3_dup_ack(C, CF, I, F, now)
            _ns3_send(C, CF, I, F, now)
        return
    if not _empty(C, I, RETX_SET):  # DiscardUpTo
        for k in range(una, ack):
            _take(C, I, RETX_SET, k)
    sk = I[o + J_SACKN]
    I[I_UNA] = ack
    if I[I_NXT] < ack:
        I[I_NXT] = ack
    top = una + 1 + sk  # the Reno marks ran up to here
    if sk > 0 and ack < top:  # the new head's mark moves on to the run's end
        I[o + J_SACKN] = top - (ack + 1)
        _ns3_add_reno_sack(C, I)
        _ns3_mark_head_lost(C, I)
    else:
        I[o + J_SACKN] = 0
    _ns3_new_ack(C, CF, I, F, ack, una, now)
    if not I[I_DONE]:
        _ns3_send(C, CF, I, F, now)


def _ns3_dup_ack(C, CF, I, F, now):
    """``DupAck`` (and ``EnterRecovery``)."""
    o = C[C_NSOFF]
    st = I[o + J_NSTATE]
    if st == LOSS:
        return
    if st != RECOVERY:
        I[I_DUP] += 1
    if st == OPEN:
        I[o + J_NSTATE] = DISORDER
    mss = C[C_MSS]
    if st == RECOVERY:
        _ns3_add_reno_sack(C, I)
    elif I[I_DUP] == C[C_DUPT] and (I[I_UNA] >= I[I_RECOVER] or I[o + J_RACT] == 0):
        I[I_RECOVER] = I[I_SMAX]
        I[o + J_RACT] = 1
        I[o + J_NSTATE] = RECOVERY
        I[I_INREC] = 1
        _ns3_add_reno_sack(C, I)
        _ns3_mark_head_lost(C, I)
        F[F_SSTH] = float(max(2 * mss, (_ns3_pipe(C, I) + mss) // 2))
        F[F_CWND] = F[F_SSTH]
        _ns3_transmit(C, CF, I, F, I[I_UNA], now)
    elif C[C_LTHI] > 0:
        _ns3_add_reno_sack(C, I)


def _ns3_new_ack(C, CF, I, F, ack, old, now):
    """``ProcessAck`` for a new ACK (after ``DiscardUpTo``)."""
    o = C[C_NSOFF]
    mss = C[C_MSS]
    segs = (_end(C, ack) - _end(C, old)) // mss
    I[I_DUP] = 0
    if ack >= C[C_N]:
        I[I_DONE] = 1
        return
    st = I[o + J_NSTATE]
    if st == RECOVERY and ack < I[I_RECOVER]:  # partial ACK
        _ns3_mark_head_lost(C, I)
        _ns3_transmit(C, CF, I, F, ack, now)
        _ns3_timer(C, CF, I, F, now, I[I_PARTIAL] == 0)
        I[I_PARTIAL] = 1
        return
    if st == LOSS and ack < I[I_RECOVER]:
        _ns3_increase_window(C, F, segs)
        _ns3_timer(C, CF, I, F, now, True)
        return
    if st == LOSS:
        segs = (_end(C, ack) - _end(C, I[I_RECOVER])) // mss
    I[o + J_NSTATE] = OPEN
    I[I_INREC] = 0
    I[I_PARTIAL] = 0
    if ack >= I[I_RECOVER]:
        I[o + J_RACT] = 0
    if st == RECOVERY:
        _ns3_timer(C, CF, I, F, now, True)
        F[F_CWND] = F[F_SSTH]
    _ns3_increase_window(C, F, segs)
    _ns3_timer(C, CF, I, F, now, True)


# Receiver ------------------------------------------------------------------------

def _ack_now(C, CF, I, F, now):
    I[I_PEND] = 0
    if I[I_QUICK] > 0:
        I[I_QUICK] -= 1
    _cancel(I, F, DELACK)
    _push(C, I, F, now + CF[CF_D], ACK, I[I_RCV])


def on_segment(C, CF, I, F, seg, now):
    """RFC 5681 Section 4.2: immediate ACK for out-of-order, duplicate and gap-filling
    segments (and the FIN-carrying last one, and while quick ACKs last); otherwise every
    b-th or the timer."""
    rcv = I[I_RCV]
    if seg < rcv or (seg > rcv and _has(C, I, BUF_SET, seg)):
        _ack_now(C, CF, I, F, now)
        return
    if seg > rcv:
        _put(C, I, BUF_SET, seg)
        _ack_now(C, CF, I, F, now)
        return
    filled = not _empty(C, I, BUF_SET)
    r = rcv + 1
    if filled:
        while _has(C, I, BUF_SET, r):
            _take(C, I, BUF_SET, r)
            r += 1
    I[I_RCV] = r
    if filled or I[I_QUICK] > 0 or (C[C_FIN] and r == C[C_N]):
        _ack_now(C, CF, I, F, now)
    else:
        I[I_PEND] += 1
        if I[I_PEND] >= C[C_B]:
            _ack_now(C, CF, I, F, now)
        elif _find(I, DELACK) < 0:
            _push(C, I, F, now + CF[CF_DELACK], DELACK, 0)


# Driving --------------------------------------------------------------------------

def _rebase(C, I, F, ref):
    """Shift the state's times so that ``ref`` becomes 0."""
    if F[F_BUSY] <= ref:
        F[F_BUSY] = ref
    if ref != 0.0:
        of = OFF_EVT
        for i in range(I[I_NEV]):
            F[of + i] = F[of + i] - ref
        F[F_BUSY] = F[F_BUSY] - ref if F[F_BUSY] > ref else 0.0
        off = C[C_SENTOFF]  # (read once: the loop writes F, which the compiler cannot
        mask = C[C_SENTMASK]  # tell from C)
        for k in range(I[I_UNA], I[I_SMAX]):
            F[off + (k & mask)] -= ref


def run_to_branch(C, CF, I, F):
    """Process events until a data arrival is next (a branch point), the transfer is done
    or (with a level limit) snd_max reaches it; return that instant, to which the state's
    times are then rebased."""
    ok = N_I0
    of = OFF_EVT
    lim = C[C_LIM]
    while True:
        if I[I_NEV] == 0:  # nothing pending: a failure of the layout, not of TCP
            I[I_FAIL] = 1
            return 0.0
        t = F[of]
        ev = I[ok]
        kind = ev & 3
        if kind == DATA or I[I_DONE]:
            break
        _delete(I, F, 0)
        if kind == ACK:
            on_ack(C, CF, I, F, ev >> 2, t)
        elif kind == RTO:
            on_rto(C, CF, I, F, t)
        else:  # DELACK
            if I[I_PEND] > 0:
                _ack_now(C, CF, I, F, t)
        if I[I_DONE]:
            return t
        if I[I_FAIL]:
            return t
        if lim > 0 and I[I_SMAX] >= lim:
            _rebase(C, I, F, t)
            return t
    ref = F[of]
    _rebase(C, I, F, ref)
    return ref


def deliver_head(C, CF, I, F, lost):
    """The head event is a data arrival at time 0: drop it, or give it to the receiver."""
    seg = I[N_I0] >> 2
    _delete(I, F, 0)
    if not lost:
        on_segment(C, CF, I, F, seg, 0.0)


def resume(C, CF, I, F):
    """Continue a send cut short by the level limit (at the state's instant 0)."""
    send_allowed(C, CF, I, F, 0.0, I[I_CUTLT] != 0)


def shift(C, I, F, delta):
    """Renumber every segment and ACK by ``delta`` (the tail's frame: file end fixed)."""
    if delta == 0:
        return
    una = I[I_UNA]
    span = I[I_SMAX] - una
    sent = np.empty(span, np.float64)
    flags = np.zeros(span, np.int64)  # bit 0: resent, bit 1: held
    for k in range(una, una + span):
        sent[k - una] = F[_sent_slot(C, k)]
        if _has(C, I, RETX_SET, k):
            flags[k - una] |= 1
        if _has(C, I, BUF_SET, k):
            flags[k - una] |= 2
    a = C[C_SETOFF]  # (the engine keeps only segments of [snd_una, snd_max) in the sets)
    for j in range(a, a + 2 * C[C_SETW]):
        I[j] = 0
    for k in range(una, una + span):
        F[_sent_slot(C, k + delta)] = sent[k - una]
        if flags[k - una] & 1:
            _put(C, I, RETX_SET, k + delta)
        if flags[k - una] & 2:
            _put(C, I, BUF_SET, k + delta)
    I[I_UNA] += delta
    I[I_NXT] += delta
    I[I_SMAX] += delta
    I[I_RECOVER] += delta
    I[I_RCV] += delta
    if C[C_NS3]:
        o = C[C_NSOFF]
        I[o + J_LOSTEND] += delta
        I[o + J_RFEND] += delta
        I[o + J_HIST] += delta
    ok = N_I0
    for i in range(I[I_NEV]):
        ev = I[ok + i]
        if ev & 3 <= ACK:
            I[ok + i] = ev + 4 * delta

