"""The SACK sender and RFC 7323 timestamps in the packet model's object engine (private).

The ``linux`` stack profile's sender (``PathConfig(sender="sack")``): RFC 6675 loss
recovery over a SACK scoreboard, RFC 6937 PRR (``prr="ssrb"``, Linux's, or ``"crb"``) or
cwnd = ssthresh (``"off"``), and RFC 8985 RACK-TLP (``rack_tlp``); and RFC 7323 timestamps
(``timestamps``: every segment carries its send time, every ACK echoes TS.Recent, every
new ACK gives the RTT sample ``now - TSecr``), with the SACK sender or the RFC one. The
receiver adds RFC 2018 SACK blocks (up to three, the most recently changed first).

Each rule is written again from the RFCs, rule by rule as the simulator's ``sim/kernel_sack.py``
and ``sim/flat.py`` state them (their docstrings cite RFC sections and Linux's
functions for each): the model does not import the simulator, and
``tests/test_model_packet_sack.py`` checks the two path by path. The scoreboard reuses
:class:`~._packet_engine._State`'s sets: ``sacked`` (SACKed segments), ``lost`` (RACK's
loss marks) and ``rflag`` (a retransmission in flight, Linux's ``SACKED_RETRANS``); all
three, like ``retx`` and ``sent_at``, hold only segments at or above snd_una.

Times in the state are relative to the reference instant, as everywhere in the engine:
:func:`shift` moves TS.Recent, RACK.xmit_ts and the timestamps in flight with it. Only
the tree DP runs this engine (the level DP's flat engine has neither SACK nor
timestamps); its merge key (:meth:`_ExtState.key`) holds everything the future reads,
the RTT estimator and the send times included, and normalises what no rule reads again,
so merges are exact (``test_states_the_tree_dp_merges_have_the_same_future``).
"""

from __future__ import annotations

import math

from . import _packet_engine as E

WC_DEL_ACK_T = 0.2
"""RFC 8985 Section 7.2 WCDelAckT, seconds (the simulator's ``sim.kernel_sack.WC_DEL_ACK_T_S``)."""
_EPS = 1e-9
"""Float tolerance, seconds, of RACK's expiry test and of the step-2 ``rtt < min_RTT``
test (as ``sim.kernel_sack.EPS_S``)."""
REO, TLP = 1, 2  # what the RACK timer is armed for


class _ExtState(E._State):
    """:class:`~._packet_engine._State` with the SACK sender's, RACK-TLP's and the
    receiver's SACK and timestamp variables."""

    __slots__ = ("high_sacked", "high_rxt", "rescue", "loss_state", "prr_del", "prr_out",
                 "rfs", "rx_ts", "rx_end", "rx_rtt", "fack", "reord", "min_rtt", "rmode",
                 "tlp_end", "tlp_rtx", "tlp_ok", "blocks", "ts_recent", "last_ack_sent",
                 "in_event", "sent_new", "mode")

    def copy(self) -> "_ExtState":
        s = E._State.copy(self)
        s.high_sacked = self.high_sacked
        s.high_rxt = self.high_rxt
        s.rescue = self.rescue
        s.loss_state = self.loss_state
        s.prr_del = self.prr_del
        s.prr_out = self.prr_out
        s.rfs = self.rfs
        s.rx_ts = self.rx_ts
        s.rx_end = self.rx_end
        s.rx_rtt = self.rx_rtt
        s.fack = self.fack
        s.reord = self.reord
        s.min_rtt = self.min_rtt
        s.rmode = self.rmode
        s.tlp_end = self.tlp_end
        s.tlp_rtx = self.tlp_rtx
        s.tlp_ok = self.tlp_ok
        s.blocks = self.blocks
        s.ts_recent = self.ts_recent
        s.last_ack_sent = self.last_ack_sent
        s.in_event = False
        s.sent_new = False
        s.mode = self.mode
        return s

    def key(self):
        """Everything that decides the future: the base state's fields, the RTT estimator
        (SRTT, RTTVAR; min_RTT with RACK), the send times RACK or Karn's rule can still
        read (outstanding segments not SACKed), the SACK and RACK-TLP variables, the
        receiver's blocks and (with timestamps) TS.Recent and the timestamps in flight;
        times on a 1 ns grid, windows on 1e-6 B. Values no rule reads again are normalised,
        so that states differing only in them merge (each exact: docs/model.md 6.9):
        outside recovery the PRR counts, RecoverFS, HighRxt and RescueRxt (all set afresh
        at the next entry, read only in recovery); below snd_una HighSACK, RACK.fack and
        RACK.end_seq (compared only with segments at or above snd_una)."""
        una = self.una
        rack, ts = self.mode

        def ns(t):
            return int(t * 1e9 + 0.5) if t is not None else None

        ev = []
        for t, kind, v in self.events:
            if kind == E.DATA:
                v = (v[0], ns(v[1])) if ts else v[0]
            elif kind == E.ACK:
                v = (v[0], ns(v[1]), v[2])
            ev.append((ns(t), kind, v))
        if rack or not ts:
            sa = self.sent_at
            sacked = self.sacked
            sent = tuple(ns(sa[k]) for k in range(una, self.smax) if k in sa and k not in sacked)
        else:
            sent = None
        rec = self.in_rec
        return (una, self.nxt, self.smax, int(self.cwnd * 1e6 + 0.5), int(self.ssth * 1e6 + 0.5),
                self.recover if self.recover >= una else -1, rec, self.partial_seen,
                self.dupacks, self.lt_credit, self.lt_bytes, self.backoff, ns(self.rto),
                ns(self.srtt), ns(self.rttvar), self.retx, self.rcv_nxt, self.buf, self.pending,
                ns(self.busy), tuple(ev), self.quick, self.sacked, self.lost, self.rflag, sent,
                max(self.high_sacked, una),
                max(self.high_rxt, una) if rec else una,
                self.rescue if rec and self.rescue >= una else -1, self.loss_state,
                self.prr_del if rec else 0, self.prr_out if rec else 0, self.rfs if rec else 0,
                ns(self.rx_ts), max(self.rx_end, una + 1), ns(self.rx_rtt),
                max(self.fack, una), self.reord,
                ns(self.min_rtt) if rack and self.min_rtt != math.inf else -1, self.rmode,
                self.tlp_end, self.tlp_rtx, self.tlp_ok, self.blocks,
                ns(self.ts_recent) if ts else None, self.last_ack_sent)

    def coarse_key(self, mss: int):
        """The tree DP's folding signature (:func:`~.packet._aggregate`): progress, phase
        (recovery, the post-timeout slow start, back-off), windows in whole packets, the
        RTO to 10 ms, the receiver's holes and held segments, the scoreboard's sizes, the
        pending events by kind with the timers' due times to 10 ms, a probe outstanding
        and the quick ACKs left. The estimator and the send times are left out: folded
        states take the most probable one's."""
        una = self.una
        nd = na = 0
        t_rto = t_rack = -1.0
        delack = False
        for t, kind, _v in self.events:
            if kind == E.DATA:
                nd += 1
            elif kind == E.ACK:
                na += 1
            elif kind == E.RTO:
                t_rto = round(t, 2)
            elif kind == E.RACK:
                t_rack = round(t, 2)
            else:
                delack = True
        return (una, self.nxt - una, self.smax - una, self.rcv_nxt - una, len(self.buf),
                self.in_rec, self.loss_state, self.backoff, round(self.rto, 2),
                int(self.cwnd // mss), int(self.ssth // mss), self.pending, nd, na, t_rto,
                t_rack, self.rmode, delack, self.quick, len(self.sacked), len(self.lost),
                len(self.rflag), self.tlp_end >= 0)

    def coarse_keys2(self, mss: int) -> tuple:
        """The second tier's signatures, finest first: progress and phase (snd_una,
        snd_max, rcv_nxt, recovery, the post-timeout slow start, back-off) with cwnd in
        whole packets, the data segments in flight and the *missing* segments (at or
        above rcv_nxt, neither held nor in flight: lost and not yet resent), then
        progress and phase alone. Without the first, a state that has lost a segment
        more folds into one that has not, as the level DP's signatures found (docs/model.md
        section 2, "Folding"): NewReno, b = 2, W0 = 10, p = 0.1, 60 packets of the
        ``linux`` profile -4.6 % from the simulator with progress and phase alone, -2.7 %
        with both (docs/model.md 6.9)."""
        una = self.una
        flying = set()
        for _t, kind, v in self.events:
            if kind == E.DATA:
                flying.add(v[0])
        missing = 0
        for seg in range(self.rcv_nxt, self.smax):
            if seg not in self.buf and seg not in flying:
                missing += 1
        phase = (una, self.smax - una, self.rcv_nxt - una, self.in_rec, self.loss_state, self.backoff)
        return (phase + (int(self.cwnd // mss), len(flying), missing), phase)


def init_ext(c, s) -> None:
    """The extended variables of a new transfer."""
    s.high_sacked = 0      # one past the highest SACKed segment (HighSACK + 1)
    s.high_rxt = 0         # one past the highest segment retransmitted in recovery
    s.rescue = -1          # RescueRxt, -1 undefined
    s.loss_state = False   # slow start after a timeout, until the ACK passes recover
    s.prr_del = 0
    s.prr_out = 0
    s.rfs = 0              # RecoverFS, segments
    s.rx_ts = None         # RACK.xmit_ts (None: nothing delivered yet)
    s.rx_end = 0           # RACK.end_seq, segments
    s.rx_rtt = 0.0         # RACK.rtt, seconds
    s.fack = 0             # RACK.fack
    s.reord = False        # RACK.reord
    s.min_rtt = c.srtt0 if c.hs and c.rack else math.inf  # RACK.min_RTT, seconds
    s.rmode = 0            # the RACK timer's purpose (REO, TLP)
    s.tlp_end = -1         # TLP.end_seq, -1 no probe outstanding
    s.tlp_rtx = False      # TLP.is_retrans
    s.tlp_ok = True        # an RTT sample since the last probe (or no probe yet)
    s.blocks = ()          # the receiver's SACK blocks, most recently changed first
    s.ts_recent = 0.0      # the receiver's TS.Recent
    s.last_ack_sent = 0    # the receiver's Last.ACK.sent, segments
    s.in_event = False     # inside an event handler (timers settled at its end)
    s.sent_new = False     # a first transmission left during the current event
    s.mode = (c.rack, c.ts)  # what the merge key must hold


def shift(s, ref: float) -> None:
    """Times of the extended state after the reference instant moved by ``ref``."""
    s.ts_recent -= ref
    if s.rx_ts is not None:
        s.rx_ts -= ref
    ev = s.events
    for i in range(len(ev)):
        t, kind, v = ev[i]
        if kind == E.DATA:
            ev[i] = (t, kind, (v[0], v[1] - ref))
        elif kind == E.ACK and v[1] is not None:
            ev[i] = (t, kind, (v[0], v[1] - ref, v[2]))


# Receiver (the engine's, which calls this for RFC 2018's block order) --------------------

def sack_first(c, s, seg: int) -> None:
    """The block holding buffered segment ``seg`` first (RFC 2018 Section 4); blocks it
    absorbs go, the others keep their order."""
    buf = s.buf
    lo = seg
    while lo - 1 > s.rcv_nxt and (lo - 1) in buf:
        lo -= 1
    hi = seg + 1
    while hi < c.n and hi in buf:
        hi += 1
    s.blocks = ((lo, hi),) + tuple(b for b in s.blocks if b[1] <= lo or b[0] >= hi)


# ACK dispatch -----------------------------------------------------------------------

def on_ack(c, s, v, now: float) -> None:
    """An ACK ``v = (ack, TSecr, blocks)``: the SACK sender's, or the RFC sender's with
    the timestamp's RTT sample."""
    ack, tsecr, blocks = v
    if c.sack:
        if c.rack:
            _rack_on_ack(c, s, ack, now, tsecr, blocks)
        else:
            _sack_on_ack(c, s, ack, now, tsecr, blocks)
        return
    if ack > s.una:
        E._new_ack(c, s, ack, now, tsecr)
    elif ack == s.una and s.smax > s.una:
        E._dup_ack(c, s, now)


# The SACK sender: scoreboard (RFC 6675) ----------------------------------------------

def _seg_len(c, k: int) -> int:
    return c.last_len if k == c.n - 1 else c.mss


def _can_send_new(c, s) -> bool:
    """The receiver window admits the next new segment (RFC 5827's "no new data" test)."""
    if s.nxt >= c.n:
        return False
    return E._flight(c, s) + _seg_len(c, s.nxt) <= c.rwnd


def dup_thresh(c, s) -> int:
    """DupThresh now: dup_t, 1 with the paper's tail rule, oseg - 1 with ER."""
    thresh = c.dup_t
    if c.tail and s.una >= c.n - c.dup_t:
        thresh = 1
    if c.er:
        oseg = s.nxt - s.una
        if 2 <= oseg <= c.dup_t and not _can_send_new(c, s):
            thresh = min(thresh, oseg - 1)
    return thresh


def is_lost(c, s, seg: int) -> bool:
    """IsLost(seg): DupThresh or more SACKed segments above it (RACK: its mark)."""
    if c.rack:
        return seg in s.lost
    thresh = dup_thresh(c, s)
    count = 0
    sacked = s.sacked
    for k in range(seg + 1, s.high_sacked):
        if k in sacked:
            count += 1
            if count >= thresh:
                return True
    return False


def pipe(c, s) -> int:
    """SetPipe(), bytes: unSACKed outstanding segments not IsLost, plus those
    retransmitted in this recovery (below HighRxt); RACK: Linux's packets in flight."""
    sacked = s.sacked
    total = 0
    if c.rack:
        lost, rtx = s.lost, s.rflag
        for k in range(s.una, s.smax):
            if k in sacked:
                continue
            if k not in lost:
                total += _seg_len(c, k)
            if k in rtx:
                total += _seg_len(c, k)
        return total
    thresh = dup_thresh(c, s)
    above = 0
    for k in range(s.smax - 1, s.una - 1, -1):
        if k in sacked:
            above += 1
            continue
        length = _seg_len(c, k)
        if above < thresh:
            total += length
        if k < s.high_rxt:
            total += length
    return total


def _update(c, s, ack: int, blocks, out=None) -> int:
    """Update(): mark the blocks' segments at or above ``ack`` SACKed; newly SACKed count
    (the segments appended to ``out``)."""
    sacked = s.sacked
    added = set()
    for lo, hi in blocks:
        for k in range(max(lo, ack), hi):
            if k not in sacked and k not in added:
                added.add(k)
                if out is not None:
                    out.append(k)
        if hi > s.high_sacked:
            s.high_sacked = hi
    if added:
        s.sacked = sacked | added
    return len(added)


def next_seg(c, s):
    """NextSeg(): (segment, rule), (-1, 0) when nothing may be sent."""
    if c.rack:
        return _rack_next_seg(c, s)
    sacked = s.sacked
    start = max(s.high_rxt, s.una)
    thresh = dup_thresh(c, s)
    high = s.high_sacked
    above = sum(1 for k in range(start + 1, high) if k in sacked)
    first_hole = -1
    for k in range(start, high):  # (1.a) k >= HighRxt, (1.b) below HighSACK
        if k not in sacked:
            if first_hole < 0:
                first_hole = k
            if above >= thresh:  # (1.c) IsLost
                return k, 1
            break
        if k + 1 < high and (k + 1) in sacked:
            above -= 1
    if s.smax < c.n and E._flight(c, s) + _seg_len(c, s.smax) <= c.rwnd:
        return s.smax, 2
    if first_hole >= 0:
        return first_hole, 3
    if s.rescue < s.una:  # (4), once per recovery
        for k in range(s.smax - 1, s.una - 1, -1):
            if k not in sacked:
                return k, 4
    return -1, 0


# Sending ------------------------------------------------------------------------------

def send_allowed(c, s, now: float) -> None:
    """NextSeg in recovery, the unSACKed segments after a timeout, else the RFC sender's
    rule; then, with RACK-TLP outside an event (the first window), the timers."""
    if s.in_rec:
        _recovery_send(c, s, now)
    elif s.loss_state:
        _loss_send(c, s, now)
    else:
        E._rfc_send(c, s, now)
    if c.rack and not s.in_event:
        _rack_timers(c, s, now, 0.0, s.sent_new)
        s.sent_new = False


def _loss_send(c, s, now: float) -> None:
    """The slow start after a timeout: unSACKed segments from snd_nxt on, SACKed ones
    skipped (RFC 6675 5.1), counting what is out unSACKed."""
    sacked = s.sacked
    limit = min(s.cwnd, c.rwnd)
    out = sum(_seg_len(c, k) for k in range(s.una, s.nxt) if k not in sacked)
    while s.nxt < c.n:
        k = s.nxt
        if k in sacked:
            s.nxt += 1
            continue
        length = _seg_len(c, k)
        if out > 0 and (out + length > limit or c.end(k + 1) - c.end(s.una) > c.rwnd):
            break
        E._transmit(c, s, k, now)
        out += length
        s.nxt += 1
        if s.nxt > s.smax:
            s.smax = s.nxt


def _recovery_send(c, s, now: float) -> None:
    """RFC 6675 step (C): NextSeg while cwnd - pipe >= 1 SMSS."""
    while s.cwnd - pipe(c, s) >= c.mss:
        seg, rule = next_seg(c, s)
        if seg < 0:
            return
        E._transmit(c, s, seg, now)
        s.prr_out += 1
        if rule == 2:
            s.smax = s.nxt = seg + 1
        elif rule == 4:
            s.rescue = s.recover
        elif seg + 1 > s.high_rxt:
            s.high_rxt = seg + 1


def _prr_update(c, s, delivered: int) -> None:
    """RFC 6937 Section 3 in segments (Linux ``tcp_cwnd_reduction``): cwnd for this ACK."""
    if c.prr == "off":
        return
    mss = c.mss
    s.prr_del += delivered
    p = pipe(c, s)
    ssthresh = s.ssth / mss
    if p > s.ssth:
        sndcnt = math.ceil(s.prr_del * ssthresh / s.rfs - 1e-9) - s.prr_out
    else:
        limit = s.prr_del - s.prr_out
        if c.prr == "ssrb":
            limit = max(limit, delivered) + 1
        sndcnt = min(ssthresh - p / mss, limit)
    s.cwnd = p + max(sndcnt, 0) * mss


# ACKs without RACK ---------------------------------------------------------------------

def _sack_on_ack(c, s, ack: int, now: float, tsecr, blocks) -> None:
    old = s.una
    new_sacked = _update(c, s, max(ack, old), blocks) if blocks else 0
    if ack > old:
        sacked = s.sacked
        delivered = new_sacked + sum(1 for k in range(old, ack) if k not in sacked)
        acked = c.end(ack) - c.end(old)
        E._advance(c, s, ack, now, tsecr)
        if ack >= c.n:
            s.done = True
            return
        if _cumulative_ack(c, s, ack, now, acked):  # (B), (C)
            _prr_update(c, s, delivered)
        send_allowed(c, s, now)
    elif ack == old and s.smax > old and new_sacked > 0:
        _sack_dup_ack(c, s, now, new_sacked)


def _cumulative_ack(c, s, ack: int, now: float, acked: int) -> bool:
    """An ACK that advances snd_una: the end of the post-timeout slow start, RFC 6675's
    end of recovery (A), growth outside recovery (RFC 5681 3.1), the timer (RFC 6298
    5.2, 5.3). True for a partial ACK in recovery."""
    partial = False
    if s.loss_state and ack > s.recover:
        s.loss_state = False
    if s.in_rec and ack > s.recover:
        s.cwnd = s.ssth
        s.in_rec = False
        s.dupacks = 0
    elif s.in_rec:
        partial = True
    else:
        s.dupacks = 0
        s.lt_bytes = 0
        E.grow(c, s, acked)
    E.restart_timer(s, now)
    return partial


def _sack_dup_ack(c, s, now: float, new_sacked: int) -> None:
    """An ACK at snd_una that SACKs new data (RFC 6675's DupAck)."""
    if s.in_rec:  # (B), (C)
        _prr_update(c, s, new_sacked)
        _recovery_send(c, s, now)
        return
    if s.loss_state:
        _loss_send(c, s, now)
        return
    s.dupacks += 1
    if s.una > s.recover and (s.dupacks >= dup_thresh(c, s) or is_lost(c, s, s.una)):
        _enter_recovery(c, s, now, new_sacked)
    elif c.lt_lo <= s.dupacks <= c.lt_hi:
        _limited_transmit(c, s, now)


def _limited_transmit(c, s, now: float) -> None:
    """RFC 6675 5 step (3): new data while cwnd - pipe >= 1 SMSS."""
    s.high_rxt = s.una
    while s.nxt < c.n and _can_send_new(c, s) and s.cwnd - pipe(c, s) >= c.mss:
        before = c.end(s.nxt)
        E._transmit(c, s, s.nxt, now)
        s.nxt += 1
        if s.nxt > s.smax:
            s.smax = s.nxt
        s.lt_bytes += c.end(s.nxt) - before


def _start_recovery(c, s) -> None:
    """RFC 6675 5 step (4.1)-(4.2) and PRR's initialisation (RFC 6937 3)."""
    flight = E._flight(c, s) - s.lt_bytes  # LT data left out (RFC 5681 3.2 step 2)
    s.ssth = max(flight / 2.0, 2.0 * c.mss)
    s.recover = s.smax - 1
    s.in_rec = True
    s.lt_bytes = 0
    s.rescue = -1
    s.rfs = s.nxt - s.una
    s.prr_del = 0
    s.prr_out = 1


def _enter_recovery(c, s, now: float, delivered: int) -> None:
    _start_recovery(c, s)
    E._transmit(c, s, s.una, now)  # (4.3)
    s.high_rxt = s.una + 1
    if c.prr == "off":
        s.cwnd = s.ssth  # (4.2)
    else:  # the entry ACK's own delivery counts (Linux's tcp_cwnd_reduction)
        _prr_update(c, s, delivered)
    _recovery_send(c, s, now)  # (4.5)


def on_rto(c, s, now: float) -> None:
    """RFC 6298 5.4-5.6 with RFC 6675 5.1: the scoreboard is kept, the slow start that
    follows resends the unSACKed segments; with RACK-TLP the marks start afresh."""
    if c.rack:
        s.in_event = True
        s.sent_new = False
        E._cancel(s, E.RACK)
        s.tlp_end = -1
        s.lost = frozenset()
        s.rflag = frozenset()
    s.loss_state = True
    s.rescue = -1
    E._rfc_on_rto(c, s, now)  # go-back from snd_una through send_allowed -> _loss_send
    if c.rack:
        s.in_event = False
        _rack_timers(c, s, now, 0.0, False)


# RACK-TLP (RFC 8985) ---------------------------------------------------------------------

def _segs_sacked(s) -> int:
    return sum(1 for k in s.sacked if s.una <= k < s.high_sacked)


def _rack_next_seg(c, s):
    """NextSeg with RACK's marks: (1) the lowest marked segment without a retransmission
    in flight, (2) new data, (3) the lowest unSACKed segment above HighRxt below HighSACK
    without one, (4) the rescue, unless that segment's retransmission is in flight."""
    sacked, lost, rtx = s.sacked, s.lost, s.rflag
    for k in range(s.una, s.smax):
        if k in lost and k not in rtx and k not in sacked:
            return k, 1
    if s.smax < c.n and E._flight(c, s) + _seg_len(c, s.smax) <= c.rwnd:
        return s.smax, 2
    for k in range(max(s.high_rxt, s.una), s.high_sacked):
        if k not in sacked and k not in rtx:
            return k, 3
    if s.rescue < s.una:
        for k in range(s.smax - 1, s.una - 1, -1):
            if k not in sacked:
                if k in rtx:
                    break
                return k, 4
    return -1, 0


def _rack_update(c, s, delivered: list, now: float, tsecr) -> None:
    """RFC 8985 6.2 steps 1-3 over the segments this ACK newly acknowledges or SACKs."""
    if not delivered:
        return
    sent_at, retx = s.sent_at, s.retx
    for k in delivered:  # step 1: SACK RTTs of never-retransmitted segments
        if k not in retx:
            r = now - sent_at[k]
            if r < s.min_rtt:
                s.min_rtt = r
    best = -1
    best_ts = None
    prior_fack = s.fack
    for k in delivered:
        ts = sent_at[k]
        if k in retx:  # step 2
            if c.ts and tsecr is not None and tsecr < ts:
                continue
            if now - ts < s.min_rtt - _EPS:
                continue
        elif k + 1 < prior_fack:  # step 3
            s.reord = True
        if best_ts is None or ts > best_ts or (ts == best_ts and k > best):
            best, best_ts = k, ts
        if k + 1 > s.fack:
            s.fack = k + 1
    if best < 0:
        return
    s.rx_rtt = now - best_ts
    if s.rx_ts is None or best_ts > s.rx_ts or (best_ts == s.rx_ts and best + 1 > s.rx_end):
        s.rx_ts = best_ts
        s.rx_end = best + 1


def _rack_reo_wnd(c, s) -> float:
    """6.2 step 4: 0 in recovery or once DupThresh segments are SACKed unless reordering
    was seen, else min(min_RTT / 4, SRTT)."""
    if not s.reord and (s.in_rec or s.loss_state or _segs_sacked(s) >= c.dup_t):
        return 0.0
    w = s.min_rtt / 4.0
    return min(w, s.srtt) if s.srtt > 0.0 else w


def _rack_detect(c, s, now: float):
    """6.2 step 5: mark lost every unacknowledged segment sent before RACK's segment whose
    xmit_ts + RACK.rtt + reo_wnd has passed; (seconds to the next expiry or 0, newly marked)."""
    if s.rx_ts is None:
        return 0.0, 0
    reo = _rack_reo_wnd(c, s)
    rx, rend, rrtt = s.rx_ts, s.rx_end, s.rx_rtt
    sacked, sent_at = s.sacked, s.sent_at
    timeout = 0.0
    marked = []
    for k in range(s.una, s.smax):
        if k in sacked or (k in s.lost and k not in s.rflag):
            continue
        ts = sent_at[k]
        if not (rx > ts or (rx == ts and rend > k + 1)):
            continue
        remaining = ts + rrtt + reo - now
        if remaining <= _EPS:
            marked.append(k)
        elif remaining > timeout and remaining != math.inf:
            timeout = remaining
    if marked:
        s.lost = s.lost | frozenset(marked)
        s.rflag = s.rflag - frozenset(marked)
    return timeout, len(marked)


def _tlp_open(s) -> bool:
    return (s.smax > s.una and not s.in_rec and not s.loss_state and _segs_sacked(s) == 0)


def _pto(s) -> float:
    if s.srtt > 0.0:
        pto = 2.0 * s.srtt
        if s.nxt - s.una == 1:
            pto += WC_DEL_ACK_T
        return pto
    return 1.0


def _due(s, kind: int):
    for t, k, _v in s.events:
        if k == kind:
            return t
    return None


def _rack_timers(c, s, now: float, timeout: float, rearm_tlp: bool) -> None:
    """Settle the timers at the end of an event (RFC 8985 Section 8): the reordering
    timer, else a probe timer capped at the RTO's expiry, else the RTO."""
    if s.done or s.smax <= s.una:
        E._cancel(s, E.RACK)
        E._cancel(s, E.RTO)
        return
    if timeout > 0.0:
        E._cancel(s, E.RTO)
        E._arm(s, E.RACK, now + timeout)
        s.rmode = REO
        return
    if rearm_tlp and s.tlp_end < 0 and _tlp_open(s) and s.tlp_ok:
        expire = _due(s, E.RTO)
        if expire is None:
            expire = now + s.rto
        E._cancel(s, E.RTO)
        E._arm(s, E.RACK, min(now + _pto(s), expire))
        s.rmode = TLP
        return
    armed = E._armed(s, E.RACK)
    if armed and (s.rmode == REO or not _tlp_open(s)):
        E._cancel(s, E.RACK)
        armed = False
    if armed:
        E._cancel(s, E.RTO)
    elif not E._armed(s, E.RTO):
        E._push(s, now + s.rto, E.RTO, 0)


def on_rack_timer(c, s, now: float) -> None:
    """The reordering timer (6.3) or the probe timer (7.3) expires."""
    s.in_event = True
    s.sent_new = False
    if s.rmode == REO:
        timeout, newly = (0.0, 0) if s.loss_state else _rack_detect(c, s, now)
        if newly:
            _rack_losses(c, s, now, 0)
        s.in_event = False
        _rack_timers(c, s, now, timeout, False)
    else:
        _tlp_send_probe(c, s, now)
        s.in_event = False
        if s.smax > s.una:  # 7.3: the RTO restarts from now
            E._arm(s, E.RTO, now + s.rto)
    s.sent_new = False


def _tlp_send_probe(c, s, now: float) -> None:
    """7.3: a new segment if the receiver window admits one, else the highest sent again."""
    s.tlp_rtx = False
    if s.nxt < c.n and _can_send_new(c, s):
        E._transmit(c, s, s.nxt, now)
        s.nxt += 1
        if s.nxt > s.smax:
            s.smax = s.nxt
    else:
        E._transmit(c, s, s.smax - 1, now)
        s.tlp_rtx = True
    s.tlp_end = s.smax
    s.tlp_ok = False


def _tlp_process_ack(c, s, ack: int, flight: int) -> None:
    """7.4: the episode ends at TLP.end_seq; a resent probe counts as a repaired loss
    (no D-SACK): ssthresh from ``flight``, cwnd = min(cwnd, ssthresh)."""
    if s.tlp_end < 0 or ack < s.tlp_end:
        return
    if s.tlp_rtx and not s.in_rec and not s.loss_state:
        s.ssth = max(flight / 2.0, 2.0 * c.mss)
        s.cwnd = min(s.cwnd, s.ssth)
    s.tlp_end = -1


def _rack_losses(c, s, now: float, delivered: int) -> None:
    if s.in_rec:
        _recovery_send(c, s, now)
    elif not s.loss_state and s.una > s.recover:
        _rack_enter_recovery(c, s, now, delivered)


def _rack_enter_recovery(c, s, now: float, delivered: int) -> None:
    """RFC 6675 step (4) on RACK's marks; the fast retransmission is the lowest marked
    segment."""
    _start_recovery(c, s)
    s.tlp_end = -1
    s.high_rxt = s.una
    seg, _rule = _rack_next_seg(c, s)
    E._transmit(c, s, seg, now)
    s.high_rxt = seg + 1
    if c.prr == "off":
        s.cwnd = s.ssth
    else:
        _prr_update(c, s, delivered)
    _recovery_send(c, s, now)


def _rack_on_ack(c, s, ack: int, now: float, tsecr, blocks) -> None:
    """An ACK with RACK-TLP: scoreboard, RACK update, the sample and cumulative ACK,
    TLP_process_ack, RACK's loss detection (in place of DupThresh), recovery or sending,
    then the timers."""
    s.in_event = True
    s.sent_new = False
    old = s.una
    newly: list = []
    new_sacked = _update(c, s, max(ack, old), blocks, newly) if blocks else 0
    acked_new = ack > old
    if acked_new:
        sacked = s.sacked
        newly.extend(k for k in range(old, ack) if k not in sacked)
    delivered = len(newly)
    flight_before = E._flight(c, s)
    _rack_update(c, s, newly, now, tsecr)
    if acked_new:
        acked = c.end(ack) - c.end(old)
        E._advance(c, s, ack, now, tsecr)
        _tlp_process_ack(c, s, ack, flight_before)
        if ack >= c.n:
            s.done = True
            s.in_event = False
            return
        _cumulative_ack(c, s, ack, now, acked)
    elif ack == old and s.smax > old and new_sacked > 0:
        if not s.in_rec and not s.loss_state:
            s.dupacks += 1
    timeout, lost_now = (0.0, 0) if s.loss_state else _rack_detect(c, s, now)
    if s.in_rec:
        if delivered or lost_now:  # (B), (C)
            _prr_update(c, s, delivered)
            _recovery_send(c, s, now)
    elif lost_now and not s.loss_state and s.una > s.recover:
        _rack_enter_recovery(c, s, now, delivered)
    elif acked_new:
        send_allowed(c, s, now)
    elif new_sacked > 0:
        if s.loss_state:
            _loss_send(c, s, now)
        elif c.lt_lo <= s.dupacks <= c.lt_hi:
            _limited_transmit(c, s, now)
    s.in_event = False
    _rack_timers(c, s, now, timeout, acked_new or s.sent_new)
    s.sent_new = False
