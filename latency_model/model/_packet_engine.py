"""The packet-level sender and receiver as a deterministic state machine (private).

One :class:`_State` is the whole system between two events: sender variables (RFC 5681,
RFC 6582, RFC 3042, RFC 5827, RFC 6298 with Karn's rule), receiver variables (RFC 5681
Section 4.2 delayed ACK, RFC 1122 4.2.3.2) and the pending events (data and ACK
arrivals, the two timers) with their times *relative to the state's reference instant*.
:mod:`latency_model.model.packet` branches on every data arrival (delivered with
probability 1 - p, lost with p) and merges states with equal :meth:`_State.key`.

Each rule is written from the RFC text (section cited on the line); docs/model.md
derives the whole construction. With ``sender="ns3"`` (``_Const.ns3``) the sender is
ns-3.37's instead (``_ns3_*`` below, rule by rule as the simulator's ``sim/ns3.py``, which
cites ns-3's source): its congestion states, the scoreboard's Reno marks, lost and
retransmitted flags, and its timer. With ``sender="sack"`` or timestamps (``_Const.ext``)
the SACK sender, RACK-TLP, the SACK blocks and the timestamps run in
:mod:`._packet_sack` (``_Const.xs``, which the caller gives: that module builds on this
one), on its :class:`~._packet_sack._ExtState`. Segments are counted 0..n-1, ACK numbers in segments
(ACK k: segments 0..k-1 held in order), windows in bytes.

Event order: events due at the same instant run in the order they were scheduled
(a FIFO tie rule; the timer of a later re-arming comes after events already scheduled
for the same instant). Times within ``_TIE`` seconds count as the same instant.
"""

from __future__ import annotations

_TIE = 1e-9
# Event kinds.
DATA, ACK, RTO, DELACK, RACK = 0, 1, 2, 3, 4
# ns-3's congestion states (TcpCongState_t; CA_CWR does not occur without ECN).
OPEN, DISORDER, RECOVERY, LOSS = 0, 1, 2, 3


class _Const:
    """Constants of one transfer (sizes in bytes, times in seconds)."""

    __slots__ = ("n", "size", "mss", "last_len", "rwnd", "b", "dup_t", "lt_lo", "lt_hi",
                 "tail", "er", "d", "ser", "ser_last", "delack", "min_rto", "max_rto",
                 "init_rto", "fin", "quick", "g", "collapse", "fixed", "ns3", "srtt0", "hs",
                 "sack", "prr", "rack", "ts", "ext", "xs")

    def __init__(self, *, size_bytes, mss, rwnd_packets, b, dup_t, dup_lt, tail, er, d,
                 ser_per_byte, header, delack, min_rto, max_rto, init_rto, fin, quick_acks=0,
                 clock_granularity=0.0, backoff_collapses=False, fixed_rto=0.0, sender="rfc",
                 prr="off", rack_tlp=False, timestamps=False, handshake_rtt=False, extension=None):
        self.size = int(size_bytes)
        self.mss = int(mss)
        self.n = -(-self.size // self.mss)
        self.last_len = self.size - (self.n - 1) * self.mss
        self.rwnd = float(rwnd_packets) * self.mss
        self.b = int(b)
        self.dup_t = int(dup_t)
        # RFC 3042 Section 2: one new segment on each of the first dup_lt duplicate ACKs.
        self.lt_lo, self.lt_hi = (1, 0) if dup_lt is None else (1, int(dup_lt))
        self.tail = bool(tail)
        self.er = bool(er)
        self.d = float(d)
        self.ser = (self.mss + header) * ser_per_byte
        self.ser_last = (self.last_len + header) * ser_per_byte
        self.delack = float(delack)
        self.min_rto = float(min_rto)
        self.max_rto = float(max_rto)
        self.init_rto = float(init_rto)
        self.fin = bool(fin)
        # the receiver's first ACKs go out at once (ns-3 ProcessSynRcvd: 1; Linux
        # tcp_enter_quickack_mode: up to 16); each ACK sent uses one up
        self.quick = int(quick_acks)
        self.g = float(clock_granularity)  # RFC 6298 G
        # ns-3's NewAck: the RTO recomputed from the estimator at every new ACK, a sample
        # or not, so the back-off ends there (RFC 6298 5 keeps it until a valid sample)
        self.collapse = bool(backoff_collapses)
        # > 0: the paper's rule (the simulator's rto_rule "paper"): this RTO always, no
        # estimator, no back-off
        self.fixed = float(fixed_rto)
        # ns-3.37's TcpNewReno + TcpClassicRecovery (the simulator's sender "ns3"), whose
        # SYN-ACK gives the first RTT sample: the round trip plus the two SYNs'
        # serialisation (4 option bytes beyond the header, sim/ns3.py _SYN_BYTES)
        self.ns3 = sender == "ns3"
        self.srtt0 = 2.0 * self.d + 2.0 * (4 + header) * ser_per_byte if self.ns3 else -1.0
        # the handshake's sample for the other senders (sim SimConfig.handshake_rtt: SYN and
        # SYN-ACK with 8 option bytes beyond the header, config.SYN_OPTION_BYTES)
        self.hs = bool(handshake_rtt) and not self.ns3 and self.fixed <= 0.0
        if self.hs:
            self.srtt0 = 2.0 * self.d + 2.0 * (8 + header) * ser_per_byte
        # the SACK sender (RFC 6675, PRR "off", "ssrb" or "crb", RACK-TLP; _packet_sack) and
        # RFC 7323 timestamps: their segments carry TSval, their ACKs (ack, TSecr, blocks)
        self.sack = sender == "sack"
        self.prr = prr
        self.rack = self.sack and bool(rack_tlp)
        self.ts = bool(timestamps)
        self.ext = self.sack or self.ts
        # the module that runs them (:mod:`._packet_sack`), given by the caller: it builds
        # on this one, which therefore does not import it
        self.xs = extension
        if self.ext and extension is None:
            raise ValueError("the SACK sender and timestamps need extension=_packet_sack")

    def end(self, k: int) -> int:
        """Bytes in segments 0..k-1."""
        e = k * self.mss
        return e if e < self.size else self.size

    def seg_len(self, k: int) -> int:
        return self.last_len if k == self.n - 1 else self.mss


class _State:
    """Sender + receiver + pending events; times relative to the reference instant."""

    __slots__ = ("una", "nxt", "smax", "cwnd", "ssth", "recover", "in_rec", "partial_seen",
                 "dupacks", "lt_credit", "lt_bytes", "backoff", "rto", "srtt", "rttvar",
                 "retx", "sent_at", "busy", "rcv_nxt", "buf", "pending", "events", "done",
                 "rto_above_min", "quick", "nstate", "ract", "sacked", "lost", "rflag", "hist")

    def copy(self) -> "_State":
        s = _State.__new__(type(self))
        s.una = self.una
        s.nxt = self.nxt
        s.smax = self.smax
        s.cwnd = self.cwnd
        s.ssth = self.ssth
        s.recover = self.recover
        s.in_rec = self.in_rec
        s.partial_seen = self.partial_seen
        s.dupacks = self.dupacks
        s.lt_credit = self.lt_credit
        s.lt_bytes = self.lt_bytes
        s.backoff = self.backoff
        s.rto = self.rto
        s.srtt = self.srtt
        s.rttvar = self.rttvar
        s.retx = self.retx
        s.sent_at = dict(self.sent_at)
        s.busy = self.busy
        s.rcv_nxt = self.rcv_nxt
        s.buf = self.buf
        s.pending = self.pending
        s.events = list(self.events)
        s.done = self.done
        s.rto_above_min = self.rto_above_min
        s.quick = self.quick
        s.nstate = self.nstate
        s.ract = self.ract
        s.sacked = self.sacked
        s.lost = self.lost
        s.rflag = self.rflag
        s.hist = self.hist
        return s

    def key(self):
        """Everything that decides the future (times on a 1 ns grid, windows on 1e-6 B).

        SRTT, RTTVAR and the send times used for RTT samples are left out: they only set
        the RTO, which is in the key. States merged with different estimators keep the
        most probable one's (exact while no sample can lift the RTO above its minimum;
        :attr:`rto_above_min` counts when one does). ``retx`` and ``buf`` hold only
        segments at or above snd_una / rcv_nxt (the engine prunes them), so the sets
        themselves are keys.
        """
        una = self.una
        return (una, self.nxt, self.smax, int(self.cwnd * 1e6 + 0.5),
                int(self.ssth * 1e6 + 0.5),
                self.recover if self.recover >= una else -1, self.in_rec, self.partial_seen,
                self.dupacks, self.lt_credit, self.lt_bytes, self.backoff,
                int(self.rto * 1e9 + 0.5), self.retx, self.rcv_nxt, self.buf, self.pending,
                int(self.busy * 1e9 + 0.5),
                tuple([(int(t * 1e9 + 0.5), kind, v) for t, kind, v in self.events]), self.quick,
                self.nstate, self.ract, self.sacked, self.lost, self.rflag, max(self.hist, una))

    def coarse_key(self, mss: int):
        """A coarser signature used only to aggregate improbable states (see
        :func:`latency_model.model.packet.expected_latency`, ``max_states``): progress
        (snd_una, snd_nxt, snd_max, rcv_nxt), phase (recovery, back-off, RTO), windows
        in whole packets, the receiver's hole count and held segments, the pending events
        by kind and the RTO timer's due time to 10 ms."""
        una = self.una
        nd = na = 0
        t_rto = -1.0
        delack = False
        for t, kind, _v in self.events:
            if kind == DATA:
                nd += 1
            elif kind == ACK:
                na += 1
            elif kind == RTO:
                t_rto = round(t, 2)
            else:
                delack = True
        return (una, self.nxt - una, self.smax - una, self.rcv_nxt - una, len(self.buf),
                self.in_rec, self.backoff, round(self.rto, 9), int(self.cwnd // mss),
                int(self.ssth // mss), self.pending, nd, na, t_rto, delack, self.quick,
                self.nstate, self.ract, len(self.sacked))

    def coarse_keys2(self, mss: int) -> tuple:
        """The second folding tier's signatures, finest first: progress (snd_una, snd_max,
        rcv_nxt) and phase (recovery, back-off) only."""
        una = self.una
        return ((una, self.smax - una, self.rcv_nxt - una, self.in_rec, self.backoff, self.nstate),)



def initial_state(c: _Const, w0_packets: float, w_ss_packets: float) -> _State:
    """Before the first send at t = 0 (then :func:`send_allowed` at 0)."""
    s = _State.__new__(c.xs._ExtState if c.ext else _State)
    s.una = s.nxt = s.smax = 0
    s.cwnd = float(w0_packets) * c.mss
    s.ssth = float(w_ss_packets) * c.mss
    s.recover = -1
    s.in_rec = False
    s.partial_seen = False
    s.dupacks = 0
    s.lt_credit = 0
    s.lt_bytes = 0
    s.backoff = 0
    s.rto = c.fixed if c.fixed > 0.0 else c.init_rto  # RFC 6298 (2.1)
    s.srtt = -1.0
    s.rttvar = 0.0
    s.rto_above_min = False
    if c.ns3 or c.hs:  # the SYN-ACK's sample (ns-3 EstimateRtt; Linux tcp_ack_update_rtt)
        s.srtt = c.srtt0
        s.rttvar = c.srtt0 / 2.0
        _rto_from_estimator(c, s)
    s.retx = frozenset()
    s.sent_at = {}
    s.busy = 0.0
    s.rcv_nxt = 0
    s.buf = frozenset()
    s.pending = 0
    s.events = []
    s.done = False
    s.quick = c.quick
    # the ns3 sender: congestion state, recovery point active, the scoreboard's Reno
    # marks, lost and retransmitted flags, and the first segment with an RTT-history entry
    s.nstate = OPEN
    s.ract = False
    s.sacked = s.lost = s.rflag = frozenset()
    s.hist = 0
    if c.ext:
        c.xs.init_ext(c, s)
    return s


# Events -----------------------------------------------------------------------

def _push(s: _State, t: float, kind: int, v: int) -> None:
    """Schedule after every event due at or before ``t`` (FIFO among equal times)."""
    ev = s.events
    i = len(ev)
    while i > 0 and ev[i - 1][0] > t + _TIE:
        i -= 1
    ev.insert(i, (t, kind, v))


def _cancel(s: _State, kind: int) -> None:
    ev = s.events
    for i in range(len(ev)):
        if ev[i][1] == kind:
            del ev[i]
            return


def _armed(s: _State, kind: int) -> bool:
    for e in s.events:
        if e[1] == kind:
            return True
    return False


def _arm(s: _State, kind: int, t: float) -> None:
    _cancel(s, kind)
    _push(s, t, kind, 0)


# Sender -----------------------------------------------------------------------

def _transmit(c: _Const, s: _State, seg: int, now: float) -> None:
    """Segment ``seg`` onto the FIFO link: serialised after the previous one, then d.
    (With RACK-TLP a retransmission is flagged in flight, ``rflag``, and a first
    transmission noted for the probe timer, ``sent_new``: :mod:`._packet_sack`.)"""
    if seg < s.smax:  # sent before: a retransmission (Karn's rule needs to know)
        s.retx = s.retx | {seg}
        if c.rack:
            s.rflag = s.rflag | {seg}
    elif c.rack:
        s.sent_new = True
    s.sent_at[seg] = now
    start = now if now > s.busy else s.busy
    s.busy = start + (c.ser_last if seg == c.n - 1 else c.ser)
    _push(s, s.busy + c.d, DATA, (seg, now) if c.ext else seg)  # (ext: with TSval)
    if not _armed(s, RTO):  # RFC 6298 (5.1)
        _push(s, now + s.rto, RTO, 0)


def _flight(c: _Const, s: _State) -> int:
    return c.end(s.nxt) - c.end(s.una)


def send_allowed(c: _Const, s: _State, now: float) -> None:
    """RFC 5681 Section 3.1 / RFC 3042: send while FlightSize + next <= min(cwnd + LT
    credit, rwnd); one segment may always leave when nothing is in flight."""
    if c.ns3:
        _ns3_send(c, s, now)
        return
    if c.sack:
        c.xs.send_allowed(c, s, now)
        return
    _rfc_send(c, s, now)


def _rfc_send(c: _Const, s: _State, now: float) -> None:
    limit = min(s.cwnd + s.lt_credit * c.mss, c.rwnd)
    n = c.n
    una_end = c.end(s.una)
    while s.nxt < n:
        flight = c.end(s.nxt) - una_end
        if flight > 0 and flight + (c.last_len if s.nxt == n - 1 else c.mss) > limit:
            break
        _transmit(c, s, s.nxt, now)
        s.nxt += 1
        if s.nxt > s.smax:
            s.smax = s.nxt


def _rtt_sample(c: _Const, s: _State, r: float) -> None:
    """RFC 6298 (2.2), (2.3) with alpha 1/8, beta 1/4, K 4 and the clock granularity G
    (RTO = SRTT + max(G, K RTTVAR)); (2.4), (2.5). Nothing with a fixed RTO. (With
    RACK-TLP every sample also feeds RACK.min_RTT, RFC 8985 6.2 step 1, and allows the
    next probe, 7.2: :mod:`._packet_sack`.)"""
    if c.rack:
        s.tlp_ok = True
        if r < s.min_rtt:
            s.min_rtt = r
    if c.fixed > 0.0:
        return
    if s.srtt < 0.0:
        s.srtt = r
        s.rttvar = r / 2.0
    else:
        s.rttvar = 0.75 * s.rttvar + 0.25 * abs(s.srtt - r)
        s.srtt = 0.875 * s.srtt + 0.125 * r
    _rto_from_estimator(c, s)


def _rto_from_estimator(c: _Const, s: _State) -> None:
    """The RTO the estimator gives: RFC 6298 (2.3)-(2.5) from SRTT and RTTVAR, or the
    initial RTO (2.1) before any sample (``backoff_collapses`` calls it without a new
    sample). Nothing with a fixed RTO."""
    if c.fixed > 0.0:
        return
    if s.srtt < 0.0:
        rto = c.init_rto
    else:
        k_var = 4.0 * s.rttvar
        rto = s.srtt + (k_var if k_var > c.g else c.g)
    if rto > c.min_rto + 1e-12:
        s.rto_above_min = True
    s.rto = min(max(rto, c.min_rto), c.max_rto)


def on_rto(c: _Const, s: _State, now: float) -> None:
    """RFC 6298 (5.4)-(5.6); RFC 5681 Section 3.1 Eq. 4 (ssthresh kept on repeated
    expiries, "when a segment ... has already been retransmitted"); RFC 6582 Section 3.2
    step 1 (recover = highest sent); go-back-N from snd_una."""
    if c.ns3:
        _ns3_on_rto(c, s, now)
        return
    if c.sack:
        c.xs.on_rto(c, s, now)
        return
    _rfc_on_rto(c, s, now)


def _rfc_on_rto(c: _Const, s: _State, now: float) -> None:
    s.backoff += 1
    if s.backoff == 1:
        s.ssth = max(_flight(c, s) / 2.0, 2.0 * c.mss)
    s.cwnd = float(c.mss)
    s.in_rec = False
    s.dupacks = 0
    s.lt_credit = 0
    s.lt_bytes = 0
    s.recover = s.smax - 1
    if c.fixed == 0.0:
        s.rto = min(2.0 * s.rto, c.max_rto)  # (5.5)
    s.nxt = s.una
    send_allowed(c, s, now)


def _discard_up_to(s: _State, ack: int) -> None:
    """snd_una moves to ``ack``: the send times and the per-segment sets (Karn's ``retx``,
    the ns3 and SACK senders' flags) drop the segments below it, which no rule reads
    again (and the state key holds the sets as they are)."""
    sa = s.sent_at
    for k in range(s.una, ack):
        sa.pop(k, None)
    if s.retx:
        s.retx = frozenset([k for k in s.retx if k >= ack])
    if s.sacked:
        s.sacked = frozenset([k for k in s.sacked if k >= ack])
    if s.lost:
        s.lost = frozenset([k for k in s.lost if k >= ack])
    if s.rflag:
        s.rflag = frozenset([k for k in s.rflag if k >= ack])
    s.una = ack
    if s.nxt < ack:
        s.nxt = ack


def _advance(c: _Const, s: _State, ack: int, now: float, tsecr: float = 0.0) -> None:
    """A new cumulative ACK (the RFC and SACK senders): its RTT sample, then snd_una moves
    and the back-off ends."""
    if c.ts:  # RFC 7323 Section 4.1: every new ACK gives now - TSecr
        _rtt_sample(c, s, now - tsecr)
    else:  # RFC 6298 Section 3 (Karn): a sample only if no newly covered segment was resent.
        valid = True
        for k in s.retx:
            if s.una <= k < ack:
                valid = False
                break
        if valid:
            _rtt_sample(c, s, now - s.sent_at[ack - 1])
        elif c.collapse:
            _rto_from_estimator(c, s)
    _discard_up_to(s, ack)
    s.backoff = 0


def _new_ack(c: _Const, s: _State, ack: int, now: float, tsecr: float = 0.0) -> None:
    acked = c.end(ack) - c.end(s.una)
    _advance(c, s, ack, now, tsecr)
    if ack >= c.n:
        s.done = True
        return
    if s.in_rec:
        if ack > s.recover:  # RFC 6582 Section 3.2 step 5, full ACK, option 1
            s.cwnd = min(s.ssth, float(max(_flight(c, s), c.mss) + c.mss))
            s.in_rec = False
            s.dupacks = 0
            restart_timer(s, now)
        else:  # step 5 partial ACK: resend the next hole, deflate, add back one MSS
            _transmit(c, s, ack, now)
            s.cwnd = max(s.cwnd - acked, 0.0)
            if acked >= c.mss:
                s.cwnd += c.mss
            if not s.partial_seen:  # RFC 6582 Section 4, "impatient" timer
                s.partial_seen = True
                _arm(s, RTO, now + s.rto)
    else:
        s.dupacks = 0
        s.lt_credit = 0
        s.lt_bytes = 0
        grow(c, s, acked)
        restart_timer(s, now)
    send_allowed(c, s, now)


def grow(c: _Const, s: _State, acked: int) -> None:
    """RFC 5681 Section 3.1 outside recovery: slow start cwnd += min(N, SMSS),
    congestion avoidance Eq. 3 (the RFC and SACK senders)."""
    if s.cwnd < s.ssth:
        s.cwnd += min(acked, c.mss)
    else:
        s.cwnd += c.mss * c.mss / s.cwnd


def restart_timer(s: _State, now: float) -> None:
    """RFC 6298 (5.3): an ACK of new data restarts the timer while data is outstanding,
    (5.2) else stops it."""
    if s.nxt > s.una:
        _arm(s, RTO, now + s.rto)
    else:
        _cancel(s, RTO)


def _dup_ack(c: _Const, s: _State, now: float) -> None:
    s.dupacks += 1
    if s.in_rec:  # RFC 6582 Section 3.2 step 4: inflate
        s.cwnd += c.mss
        send_allowed(c, s, now)
        return
    thresh = c.dup_t
    if c.tail and s.una >= c.n - c.dup_t:  # paper, Section 3.1
        thresh = 1
    if c.er:  # RFC 5827 Section 3.1 (segment-based, no SACK)
        oseg = s.nxt - s.una
        can_new = s.nxt < c.n and _flight(c, s) + c.seg_len(s.nxt) <= c.rwnd
        if 2 <= oseg <= c.dup_t and not can_new:
            thresh = min(thresh, oseg - 1)
    if s.dupacks >= thresh and s.una > s.recover:  # RFC 6582 Section 3.2 steps 1-2
        flight = _flight(c, s) - s.lt_bytes  # RFC 5681 3.2 step 2: LT data left out
        s.ssth = max(flight / 2.0, 2.0 * c.mss)
        s.recover = s.smax - 1
        s.in_rec = True
        s.partial_seen = False
        s.lt_credit = 0
        s.lt_bytes = 0
        _transmit(c, s, s.una, now)
        s.cwnd = s.ssth + s.dupacks * c.mss  # step 3
        send_allowed(c, s, now)
    elif c.lt_lo <= s.dupacks <= c.lt_hi:  # RFC 3042 Section 2
        s.lt_credit += 1
        before = c.end(s.nxt)
        send_allowed(c, s, now)
        s.lt_bytes += c.end(s.nxt) - before


def on_ack(c: _Const, s: _State, ack, now: float) -> None:
    """A cumulative ACK arrives: new (RFC 5681 / 6582) or duplicate (RFC 5681 Section 2).
    (``ack``: (ack, TSecr, SACK blocks) with ``c.ext``.)"""
    if c.ext:
        c.xs.on_ack(c, s, ack, now)
        return
    if c.ns3:
        _ns3_on_ack(c, s, ack, now)
        return
    if ack > s.una:
        _new_ack(c, s, ack, now)
    elif ack == s.una and s.smax > s.una:
        _dup_ack(c, s, now)


# The ns3 sender -----------------------------------------------------------------
# ns-3.37's TcpSocketBase + TcpNewReno + TcpClassicRecovery without SACK, as the
# simulator's sender "ns3" (sim/ns3.py, which cites ns-3's source for each rule; the
# table of docs/simulator.md, "The ns3 sender"). The scoreboard's three flags per
# outstanding segment are sets here (the flat engine keeps them as intervals).

def _ns3_pipe(c: _Const, s: _State) -> int:
    """``TcpTxBuffer::BytesInFlight``: outstanding - Reno-marked - lost + retransmitted,
    bytes (a segment counts when (not sacked) - lost + retransmitted > 0)."""
    b = 0
    for k in range(s.una, s.smax):
        if (k not in s.sacked) - (k in s.lost) + (k in s.rflag) > 0:
            b += c.seg_len(k)
    return b


def _ns3_add_reno_sack(s: _State) -> None:
    """``AddRenoSack``: mark the first unmarked segment after the head."""
    for k in range(s.una + 1, s.smax):
        if k not in s.sacked:
            s.sacked = s.sacked | {k}
            return


def _ns3_mark_head_lost(s: _State) -> None:
    """``MarkHeadAsLost``: the head loses its marks and is marked lost."""
    h = s.una
    if h < s.smax:
        s.sacked = s.sacked - {h}
        s.rflag = s.rflag - {h}
        s.lost = s.lost | {h}


def _ns3_transmit(c: _Const, s: _State, seg: int, now: float) -> None:
    """``SendDataPacket``: a segment below HighTxMark is a retransmission (its flag set;
    its RTT-history entry, if any, is then never sampled: Karn's set ``retx``)."""
    if seg < s.smax:
        s.rflag = s.rflag | {seg}
    _transmit(c, s, seg, now)


def _ns3_next_seg(c: _Const, s: _State) -> int:
    """``NextSeg``: the first lost segment neither retransmitted nor marked, else new data
    while fewer than rwnd bytes are outstanding (ns-3.41's ``<``), else -1."""
    for k in range(s.una, s.smax):
        if k in s.lost and k not in s.rflag and k not in s.sacked:
            return k
    if s.smax < c.n and c.end(s.smax) - c.end(s.una) < c.rwnd:
        return s.smax
    return -1


def _ns3_send(c: _Const, s: _State, now: float) -> None:
    """``SendPendingData``: send while min(rwnd, cwnd) - pipe > 0, with the silly-window
    rule, and nothing in CA_OPEN once the FIN-carrying last segment has left."""
    while True:
        if s.nstate == OPEN and c.fin and s.smax >= c.n:
            return
        win = c.rwnd if c.rwnd < s.cwnd else s.cwnd
        avail = win - _ns3_pipe(c, s)
        if avail <= 0:
            return
        seg = _ns3_next_seg(c, s)
        if seg < 0:
            return
        if avail < c.mss and c.size - seg * c.mss > avail:
            return  # silly-window avoidance
        _ns3_transmit(c, s, seg, now)
        if seg == s.smax:
            s.smax += 1
        s.nxt = s.smax


def _ns3_increase_window(c: _Const, s: _State, segs: int) -> None:
    """``TcpNewReno::IncreaseWindow``: slow start one MSS an ACK, then one congestion-
    avoidance step of max(1, floor(MSS^2 / cwnd)) bytes with segments left."""
    mss = c.mss
    if s.cwnd < s.ssth and segs >= 1:
        s.cwnd += mss
        segs -= 1
    if s.cwnd >= s.ssth and segs > 0:
        s.cwnd += float(int(max(1.0, mss * mss / s.cwnd)))


def _ns3_timer(c: _Const, s: _State, now: float, reset: bool) -> None:
    """``NewAck``: the back-off ends; on a restart the RTO is recomputed from the
    estimator and the timer re-armed."""
    s.backoff = 0
    if reset:
        _rto_from_estimator(c, s)
        _arm(s, RTO, now + s.rto)


def _ns3_on_rto(c: _Const, s: _State, now: float) -> None:
    """``ReTxTimeout``: ssthresh from the pipe on every expiry, every outstanding segment
    lost (also those the receiver holds), the RTT history cleared, CA_LOSS, cwnd 1 MSS."""
    s.backoff += 1
    in_flight = _ns3_pipe(c, s)
    s.dupacks = 0
    s.sacked = frozenset()
    s.rflag = frozenset()
    s.lost = frozenset(range(s.una, s.smax))
    s.recover = s.smax
    s.ract = True
    s.in_rec = False
    s.partial_seen = False
    s.rto = min(2.0 * s.rto, c.max_rto)
    s.hist = s.smax
    s.ssth = float(max(2 * c.mss, in_flight // 2))
    s.nstate = LOSS
    s.cwnd = float(c.mss)
    _ns3_send(c, s, now)


def _ns3_on_ack(c: _Const, s: _State, ack: int, now: float) -> None:
    """``ReceivedAck``: ``EstimateRtt`` (the oldest RTT-history entry, if covered and
    never retransmitted), then a duplicate ACK or ``DiscardUpTo`` and ``ProcessAck``, then
    ``SendPendingData``."""
    h = s.una if s.una > s.hist else s.hist  # the oldest entry of the RTT history
    if h < s.smax and ack > h and h not in s.retx:
        m = now - s.sent_at[h]
        if m > 0.0:
            _rtt_sample(c, s, m)
    old = s.una
    if ack == old:
        if ack < s.smax:
            _ns3_dup_ack(c, s, now)
            _ns3_send(c, s, now)
        return
    _discard_up_to(s, ack)  # DiscardUpTo
    if ack < s.smax and ack in s.sacked:  # a Reno mark on the new head moves on
        s.sacked = s.sacked - {ack}
        _ns3_add_reno_sack(s)
        _ns3_mark_head_lost(s)
    _ns3_new_ack(c, s, ack, old, now)
    if not s.done:
        _ns3_send(c, s, now)


def _ns3_dup_ack(c: _Const, s: _State, now: float) -> None:
    """``DupAck``: ignored in CA_LOSS; a Reno mark each in recovery; in DISORDER the
    dup_t-th enters recovery unless the recovery point is still ahead, and with Limited
    Transmit the others add a Reno mark each."""
    if s.nstate == LOSS:
        return
    if s.nstate != RECOVERY:
        s.dupacks += 1
    if s.nstate == OPEN:
        s.nstate = DISORDER
    if s.nstate == RECOVERY:
        _ns3_add_reno_sack(s)
    elif s.dupacks == c.dup_t and (s.una >= s.recover or not s.ract):
        # EnterRecovery: recover = HighTxMark, ssthresh from the pipe after the marks,
        # cwnd = ssthresh (no inflation), the head retransmitted
        s.recover = s.smax
        s.ract = True
        s.nstate = RECOVERY
        s.in_rec = True
        _ns3_add_reno_sack(s)
        _ns3_mark_head_lost(s)
        s.ssth = float(max(2 * c.mss, (_ns3_pipe(c, s) + c.mss) // 2))
        s.cwnd = s.ssth
        _ns3_transmit(c, s, s.una, now)
    elif c.lt_hi > 0:
        _ns3_add_reno_sack(s)


def _ns3_new_ack(c: _Const, s: _State, ack: int, old: int, now: float) -> None:
    """``ProcessAck`` for a new ACK (after ``DiscardUpTo``)."""
    nbytes = c.end(ack) - c.end(old)
    segs = nbytes // c.mss  # (a remainder only from the short last segment: done)
    s.dupacks = 0
    if ack >= c.n:
        s.done = True
        return
    if s.nstate == RECOVERY and ack < s.recover:  # partial ACK
        _ns3_mark_head_lost(s)
        _ns3_transmit(c, s, ack, now)
        _ns3_timer(c, s, now, not s.partial_seen)
        s.partial_seen = True
        return
    if s.nstate == LOSS and ack < s.recover:
        _ns3_increase_window(c, s, segs)
        _ns3_timer(c, s, now, True)
        return
    exited = False
    if s.nstate == RECOVERY:
        exited = True
    elif s.nstate == LOSS:
        segs = (c.end(ack) - c.end(s.recover)) // c.mss
    s.nstate = OPEN
    s.in_rec = False
    s.partial_seen = False
    if ack >= s.recover:
        s.ract = False
    if exited:
        _ns3_timer(c, s, now, True)
        s.cwnd = s.ssth
    _ns3_increase_window(c, s, segs)
    _ns3_timer(c, s, now, True)


# Receiver ---------------------------------------------------------------------

def _ack_now(c: _Const, s: _State, now: float) -> None:
    """An ACK of rcv_nxt (``c.ext``: with TS.Recent as TSecr, RFC 7323 4.3, and the first
    three SACK blocks, RFC 2018)."""
    s.pending = 0
    if s.quick > 0:
        s.quick -= 1
    _cancel(s, DELACK)
    if c.ext:
        s.last_ack_sent = s.rcv_nxt
        _push(s, now + c.d, ACK, (s.rcv_nxt, s.ts_recent if c.ts else None,
                                  s.blocks[:3] if c.sack else ()))
    else:
        _push(s, now + c.d, ACK, s.rcv_nxt)


def on_segment(c: _Const, s: _State, seg: int, now: float, tsval: float = 0.0) -> None:
    """RFC 5681 Section 4.2: immediate ACK for out-of-order, duplicate and gap-filling
    segments (and for the FIN-carrying last one, and while quick ACKs last); otherwise
    every b-th segment or the delayed-ACK timer. With timestamps TS.Recent takes the
    segment's ``tsval`` when it is at or below Last.ACK.sent (RFC 7323 4.3 (2)); with SACK
    the block of an out-of-order segment goes first (:func:`._packet_sack.sack_first`) and
    blocks at or below the new rcv_nxt go."""
    if c.ts and seg <= s.last_ack_sent:
        s.ts_recent = tsval
    if seg < s.rcv_nxt or seg in s.buf:
        if c.sack and seg > s.rcv_nxt:
            c.xs.sack_first(c, s, seg)
        _ack_now(c, s, now)
        return
    if seg > s.rcv_nxt:
        s.buf = s.buf | {seg}
        if c.sack:
            c.xs.sack_first(c, s, seg)
        _ack_now(c, s, now)
        return
    filled = bool(s.buf)
    r = s.rcv_nxt + 1
    buf = s.buf
    if buf:
        while r in buf:
            r += 1
        s.buf = frozenset(k for k in buf if k > r)
    s.rcv_nxt = r
    if c.sack and s.blocks:
        s.blocks = tuple(b for b in s.blocks if b[0] > r)
    if filled or s.quick > 0 or (c.fin and r == c.n):
        _ack_now(c, s, now)
    else:
        s.pending += 1
        if s.pending >= c.b:
            _ack_now(c, s, now)
        elif not _armed(s, DELACK):
            _push(s, now + c.delack, DELACK, 0)


# Driving ----------------------------------------------------------------------

def run_to_branch(c: _Const, s: _State) -> float:
    """Process events until a data arrival is next (a branch point) or the transfer is
    done; return the time of that point (the new reference instant). Times of the state
    are then shifted so that the reference is 0."""
    ev = s.events
    while True:
        t, kind, v = ev[0]
        if kind == DATA or s.done:
            break
        del ev[0]
        if kind == ACK:
            on_ack(c, s, v, t)
        elif kind == RTO:
            on_rto(c, s, t)
        elif kind == RACK:
            c.xs.on_rack_timer(c, s, t)
        else:  # DELACK
            if s.pending > 0:
                _ack_now(c, s, t)
        if s.done:
            return t
    ref = ev[0][0]
    if s.busy <= ref:
        s.busy = ref
    if ref != 0.0:
        s.events = [(tt - ref, k, v) for tt, k, v in ev]
        s.busy = s.busy - ref if s.busy > ref else 0.0  # an idle link is idle
        sa = s.sent_at
        for k in sa:
            sa[k] -= ref
        if c.ext:
            c.xs.shift(s, ref)
    return ref


def deliver_head(c: _Const, s: _State, lost: bool) -> None:
    """The head event is a data arrival at time 0: drop it, or give it to the receiver."""
    _t, _kind, seg = s.events.pop(0)
    if not lost:
        if c.ext:
            on_segment(c, s, seg[0], 0.0, seg[1])
        else:
            on_segment(c, s, seg, 0.0)


def head_segment(c: _Const, s: _State) -> int:
    """The segment of the head event (a data arrival)."""
    v = s.events[0][2]
    return v[0] if c.ext else v

