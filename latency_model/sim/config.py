"""Path and protocol settings of the simulator that are not part of :class:`TcpParams`.

``TcpParams`` carries what the fluid model also sees (MSS, RTT, p, W0, W_SS, M, b,
dup_t, dup_lt, the recovery flags, the rule). :class:`SimConfig` adds what only a
packet-level simulation needs: the link rate and header overhead, the one-way
delay, the delayed-ACK timer, the RFC 6298 timer constants and ACK loss.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..checks import check_choice, check_int, check_real, checked_call
from ..params import MAX_MSS_BYTES, MAX_SECONDS
from .profiles import check_stack, profile_config

__all__ = ["SimConfig", "RTO_RULES", "LT_MODES", "SENDERS", "RTT_SAMPLING", "PRR_MODES",
           "pipe_config", "SYN_OPTION_BYTES"]

SYN_OPTION_BYTES = 8
"""Option bytes a SYN and a SYN-ACK carry beyond a data segment's header, when they are
Linux's (MSS 4 + SACK-permitted 2 + timestamps 10 + NOP and window scale 4 = 20 bytes of
options, against the data's 12 of timestamps): read with ``header_bytes`` = 52."""

RTO_RULES = ("rfc6298", "paper")
"""``"rfc6298"``: SRTT/RTTVAR estimator with back-off (RFC 6298); ``"paper"``: the
fixed ``TcpParams.rto`` (max(1 s, 4 RTT) unless ``rto_s`` is set), no back-off."""

LT_MODES = ("rfc3042", "paper")
"""Meaning of ``dup_lt``. ``"rfc3042"``: one new segment on each of the first
``dup_lt`` duplicate ACKs (RFC 3042 Section 2 with dup_lt = 2). ``"paper"``: new data
only once ``dup_lt`` duplicate ACKs have arrived, then one segment per duplicate ACK
until fast retransmit (the paper's Section 2.1 reading)."""


SENDERS = ("rfc", "ns3", "sack")
"""Sender machinery. ``"rfc"``: the flat engine's RFC sender (:mod:`~latency_model.sim.kernel_rfc`;
RFC 5681, 6582, 3042, 5827, 6298 strictly); ``"ns3"``: the flat engine's ns-3 sender (:mod:`~latency_model.sim.kernel_ns3`), ns-3.37's
``TcpSocketBase`` with ``TcpNewReno`` and ``TcpClassicRecovery`` (docs/simulator.md lists
every difference with its source); ``"sack"``: the flat engine's SACK sender
(:mod:`~latency_model.sim.kernel_sack`), the receiver sends SACK blocks (RFC 2018) and the
sender recovers with RFC 6675 (scoreboard, IsLost, NextSeg, pipe), the cwnd in recovery set
by ``prr``."""

PRR_MODES = ("ssrb", "crb", "off")
"""cwnd during SACK recovery (``sender="sack"``). ``"ssrb"``: Proportional Rate Reduction
with slow-start reduction bound (RFC 6937 Section 3, its default); ``"crb"``: PRR with the
conservative reduction bound; ``"off"``: RFC 6675's own rule, cwnd = ssthresh from the
fast retransmit on (Section 5 step 4.2)."""

RTT_SAMPLING = ("karn", "timestamps", "ns3")
"""How the sender takes RTT samples. ``"karn"``: RFC 6298 without timestamps (no sample
from an ACK that covers a retransmitted segment; a backed-off RTO is kept until a valid
sample). ``"timestamps"``: RFC 7323 (every new ACK echoes the TSval the receiver holds in
TS.Recent, so the first new ACK after a timeout gives a valid sample and the back-off
collapses). ``"ns3"``: ns-3.37's ``EstimateRtt`` and ``NewAck`` (sample from the oldest
segment of its history, the SYN-ACK's sample first, RTO recomputed from the estimator on
every new ACK); only with ``sender="ns3"``, which needs it."""


@checked_call
@dataclass(frozen=True)
class SimConfig:
    """Simulator settings (ns-3 attribute names in brackets).

    Parameters
    ----------
    link_rate_bps : float
        Bottleneck rate C, bit/s (>= 1). Default 100e6 (paper, Section 4).
    delay_s : float or None
        One-way propagation delay d, seconds, in [0, 3600]. ``None``: ``rtt_s / 2``.
    header_bytes : int
        Per-packet header overhead added to every data segment for serialisation,
        bytes, in [0, 65535]. Default 40 (IPv4 + TCP without options).
    delack_timeout_s : float
        Delayed-ACK timer, seconds, in (0, 3600] [``DelAckTimeout``]. Default 0.2.
    min_rto_s : float
        RFC 6298 (2.4) lower bound on RTO, seconds, in (0, 3600] [``MinRto``]. Default 1.0.
    initial_rto_s : float
        RFC 6298 (2.1) RTO before the first RTT sample, seconds, in (0, 3600]. Default 1.0.
    max_rto_s : float
        RFC 6298 (2.5) upper bound on RTO, seconds (>= initial and min RTO, <= 3600). Default 60.
    clock_granularity_s : float
        RFC 6298 clock granularity G, seconds, in [0, 3600]. Default 0.
    rto_rule : {"rfc6298", "paper"}
        Timer rule, see :data:`RTO_RULES`.
    lt_mode : {"rfc3042", "paper"}
        Meaning of ``TcpParams.dup_lt``, see :data:`LT_MODES`.
    p_ack : float
        Independent loss probability of every ACK, in [0, 1). Default 0.
    queue_packets : int or None
        Drop-tail buffer of the bottleneck link, packets waiting for the link (the
        one being serialised not counted), >= 0 [ns-2 ``DropTail`` limit]. ``None``
        (default): unlimited, no queue drops. A packet that finds the buffer full is
        dropped before it uses the link (:func:`~latency_model.sim.flat.transmit`).
    sender : {"rfc", "ns3"}
        Sender machinery, see :data:`SENDERS`. Default ``"rfc"``.
    rtt_sampling : {"karn", "timestamps", "ns3"}
        RTT sampling, see :data:`RTT_SAMPLING`. Default ``"karn"``; ``"ns3"`` exactly
        when ``sender="ns3"``.
    quick_acks : int
        Receiver: the first ``quick_acks`` ACKs of the connection are sent at once, every
        in-order segment acknowledged without delay while the count lasts (>= 0) [ns-3:
        1, ``ProcessSynRcvd``; Linux: up to 16, ``tcp_enter_quickack_mode``]. Default 0.
    fin : bool
        The last segment carries FIN and is acknowledged at once (the application closes
        the connection, as ns-3's BulkSend does). ``False``: the connection stays open
        and the last segment is acknowledged like any other (ns-2's one-way TCP).
        Default True.
    prr : {"ssrb", "crb", "off"}
        cwnd reduction in SACK recovery, see :data:`PRR_MODES`; only ``"ssrb"`` (the
        default) unless ``sender="sack"``.
    rack_tlp : bool
        RACK-TLP loss detection (RFC 8985) in the SACK sender: time-based loss marks
        (RACK, with its reordering timer) replace RFC 6675's DupThresh / IsLost test, and
        a tail loss probe goes out after PTO (about 2 SRTT) instead of waiting for the RTO
        (see :mod:`latency_model.sim.kernel_sack`). Only with ``sender="sack"``. Default False.
    implicit_lt : bool
        Limited Transmit as Linux has it implicitly: SACKed segments leave the packets in
        flight (``include/net/tcp.h`` ``tcp_packets_in_flight``), so on *every* duplicate
        ACK before recovery new data leaves while cwnd - pipe >= 1 SMSS (RFC 6675 Section 5
        step 3 without the RFC 3042 bound of ``dup_lt``; ``tcp_output.c`` ``tcp_cwnd_test``).
        The data so sent is left out of the FlightSize that sets ssthresh, as RFC 3042's
        (RFC 5681 3.2 step 2). Only with ``sender="sack"``; it replaces ``dup_lt`` and
        ``lt_mode`` there. Default False.
    rxt_lost_only : bool
        In SACK recovery resend only segments marked lost (IsLost, or RACK's mark): RFC 6675
        NextSeg's rules (3) (an unSACKed hole not yet deemed lost) and (4) (the rescue
        retransmission) are off, as Linux ``tcp_output.c`` ``tcp_xmit_retransmit_queue``
        (it walks the queue for ``TCPCB_LOST`` skbs, then new data). Only with
        ``sender="sack"``. Default False (RFC 6675).
    rack_tsecr_test : bool
        RACK's update (RFC 8985 6.2 step 2) skips a SACKed or acknowledged retransmission
        whose timestamp echo predates its last transmission, besides one resent less than
        min_RTT ago. ``False``: only the min_RTT test, as Linux ``tcp_recovery.c``
        ``tcp_rack_advance`` (an out-of-order segment does not update TS.Recent, so the SACK
        of a retransmission echoes an older TSval and the RFC's test would refuse it: a
        lost retransmission then waits for the RTO). Read only with ``rack_tlp`` and
        timestamps. Default True.
    bare_fin : bool
        When every data segment leaves in the first flight (the write fits in the initial
        window and the receiver window), the FIN follows as a separate bare segment: no
        payload, never lost (the testbed drops no pure FIN), counted as one segment against
        cwnd (Linux counts packets), SACKed by the receiver when it arrives above a hole, so
        that RACK sees data sent before it as lost; the transfer still completes at the ACK
        of the last data byte. Otherwise the FIN rides on the last data segment (``fin``).
        Linux ``tcp_output.c`` ``tcp_send_fin``: the FIN joins the last queued skb only while that
        skb is unsent, else a new FIN skb is queued. Only with ``sender="sack"`` and
        ``fin``. Default False.
    handshake_rtt : bool
        The RFC 6298 estimator starts from the SYN / SYN-ACK exchange's RTT sample (the
        round trip plus the serialisation of a SYN and a SYN-ACK, each carrying
        :data:`SYN_OPTION_BYTES` of options beyond the data's header), so the first RTO and
        the first probe timeout follow it instead of ``initial_rto_s`` and RACK has its
        min_RTT from the start (Linux ``tcp_input.c`` ``tcp_ack_update_rtt`` on the
        SYN-ACK, ``tcp_synack_rtt_meas`` on the passive side). Not with ``sender="ns3"``,
        whose SYN-ACK sample is part of that sender. Default False (RFC 6298 (2.1): no
        sample before the first data segment's ACK).
    ack_serialisation : bool
        ACKs are serialised on the return link as data is on the forward one: a pure ACK
        of ``header_bytes`` takes ``header_bytes * 8 / link_rate_bps`` seconds, ACKs queue
        behind one another (FIFO, one transmission at a time) and a lost ACK still uses the
        link; and the handshake's final ACK occupies the forward link for as long at t = 0,
        so the first data segment starts after it. ns-3's ``PointToPointNetDevice``
        transmits every packet at its ``DataRate`` (point-to-point-net-device.cc
        ``TransmitStart``, queueing in ``Send`` while the device is busy). Default False
        (ACKs take only the delay d).
    timer_hz : int
        Timer granularity, jiffies a second (a kernel's ``CONFIG_HZ``); 0 (the default):
        exact timers. With ``rack_tlp``, RACK's reordering timer is armed in whole jiffies
        with Linux's 2 ms added and fires on the timer wheel (``tcp_recovery.c``
        ``tcp_rack_mark_lost``, ``kernel/time/timer.c``; :func:`.flat.reo_timer_wait`); the
        RTO is kept in whole jiffies (``include/net/tcp.h`` ``__tcp_set_rto``) and fires on
        the wheel (:func:`.flat.rto_timer_wait`), as does the loss probe
        (``tcp_schedule_loss_probe``, :func:`.flat.tlp_timer_wait`).
    sack_compression : bool
        The receiver holds duplicate ACKs as Linux does (``tcp_input.c``
        ``__tcp_ack_snd_check``): outside quick-ack mode only the first 3 ACKs of out-of-order
        or duplicate segments at one ``rcv_nxt`` leave at once, later ones are held until
        min(1 ms, RTT/20) after the first held one, 44 are held or another ACK leaves
        (:func:`.flat.on_segment`). Only with ``sender="sack"``. Default False (every such
        segment ACKed at once, RFC 5681 Section 4.2).
    quickack_on_data : bool
        Quick-ack mode (``quick_acks``) as Linux runs it: it starts with the first in-order
        data segment (``tcp_input.c`` ``tcp_event_data_recv`` -> ``tcp_incr_quickack``), so
        ACKs sent before it use up none of it, and a segment entirely below ``rcv_nxt``
        enters it again (``tcp_data_queue`` -> ``tcp_enter_quickack_mode``). Only with
        ``sender="sack"``. Default False (the first ``quick_acks`` ACKs of the connection).
    tso_defer : bool
        A Limited Transmit send of less than one GSO packet right after another transmission
        is deferred as Linux's ``tcp_output.c`` ``tcp_tso_should_defer`` does
        (:func:`.kernel_sack.sk_tso_defers`). Only with ``sender="sack"``. Default False.
    rto_restart : bool
        The RTO is restarted from now on an ACK that SACKs a never-retransmitted segment sent
        before the head's last transmission (``tcp_input.c`` ``tcp_clean_rtx_queue``,
        ``FLAG_SET_XMIT_TIMER``) and on an ACK whose recovery step retransmits the head
        (``tcp_output.c`` ``tcp_xmit_retransmit_queue``), where RFC 6298 (5.1) leaves a
        running timer alone. Only with ``sender="sack"``; read only with ``rack_tlp``.
        Default False.
    grow_acked_sacked : bool
        The growth rule is fed as Linux feeds it (``net/ipv4/tcp_input.c`` ``tcp_ack`` ->
        ``tcp_cong_control`` -> ``tcp_cong_avoid(sk, ack, acked_sacked)``): on every ACK that
        advances ``snd_una`` and leaves the sender outside a cwnd reduction, after its loss
        processing, with the segments it newly delivers (cumulatively acknowledged and not
        SACKed before, or newly SACKed; ``tcp_newly_delivered``), also on the ACK that ends
        recovery (from cwnd = ssthresh, ``tcp_end_cwnd_reduction``); not on the ACK that
        enters recovery or a TLP's reduction. Only with ``sender="sack"``. Default False (RFC
        5681: the bytes newly acknowledged cumulatively, outside recovery).
    cwnd_limited_growth : bool
        The growth rule acts only while the sender is cwnd-limited, as Linux's
        ``tcp_is_cwnd_limited`` (``include/net/tcp.h``) gates ``tcp_reno_cong_avoid`` and
        ``cubictcp_cong_avoid``: the last send that found unsent data filled the window
        (packets in flight >= cwnd), or in slow start cwnd < 2 ``max_packets_out``, the
        most packets out in the current window (``net/ipv4/tcp_output.c``
        ``tcp_write_xmit``, ``tcp_cwnd_validate``). Only with ``sender="sack"``; read only
        with ``grow_acked_sacked``. Default False (cwnd grows on every ACK that allows it).
    linux_prr : bool
        PRR as Linux's ``net/ipv4/tcp_input.c`` ``tcp_cwnd_reduction`` runs it, in packets:
        RecoverFS is the cwnd at recovery entry (``prior_cwnd``), the fast retransmission is
        part of the entry ACK's ``sndcnt`` (at least 1; ``prr_out`` is still 0 then), and
        the slow-start reduction bound adds its one segment only on an ACK that advances
        ``snd_una`` and marks nothing newly lost; an ACK that delivers nothing leaves cwnd
        alone (:func:`.kernel_sack.sk_prr_linux`). Only with ``sender="sack"`` and
        ``prr="ssrb"``. Default False (RFC 6937 PRR-SSRB).
    linux_delack : bool
        The receiver's delayed ACK after quick-ack mode as Linux's ``net/ipv4/tcp_input.c``
        ``__tcp_ack_snd_check`` decides it: an in-order segment that fills no hole is ACKed
        at once only when more than one full segment is then unacknowledged (``rcv_nxt -
        rcv_wup > rcv_mss``), so every second segment; a lone one waits for the delayed-ACK
        timer (``net/ipv4/tcp_output.c`` ``tcp_send_delayed_ack``), ``ato`` =
        ``TCP_ATO_MIN`` = ``delack_timeout_s`` in whole jiffies of ``timer_hz``, fired by
        the timer wheel (:func:`.flat.wheel_wait`: 42 ms for 10 jiffies at 250 Hz; exactly
        ``delack_timeout_s`` when ``timer_hz`` is 0). It replaces ``TcpParams.b`` (Linux's
        rule is two segments). Not modelled: ``ato``'s adaptation to the arrival gaps
        (``tcp_event_data_recv``) and its doubling when the timer fires
        (``net/ipv4/tcp_timer.c`` ``tcp_delack_timer_handler``), and the ACK the
        receiving process's read sends (``tcp_cleanup_rbuf``), which can cover more
        segments. Only with ``sender="sack"``. Default False (``b`` segments a delayed
        ACK, ``delack_timeout_s`` exactly).
    stack : str
        Name of the profile these settings came from (``"rfc"``, ``"ns3"``, ``"linux"``,
        see :meth:`profile`); a label recorded in outputs, behaviour comes from the other
        fields. Default ``"rfc"``.

    Raises
    ------
    ValueError
        Naming the first setting outside its range.
    """

    link_rate_bps: float = 100e6
    delay_s: float | None = None
    header_bytes: int = 40
    delack_timeout_s: float = 0.2
    min_rto_s: float = 1.0
    initial_rto_s: float = 1.0
    max_rto_s: float = 60.0
    clock_granularity_s: float = 0.0
    rto_rule: str = "rfc6298"
    lt_mode: str = "rfc3042"
    p_ack: float = 0.0
    queue_packets: int | None = None
    sender: str = "rfc"
    rtt_sampling: str = "karn"
    quick_acks: int = 0
    fin: bool = True
    prr: str = "ssrb"
    rack_tlp: bool = False
    handshake_rtt: bool = False
    bare_fin: bool = False
    rack_tsecr_test: bool = True
    rxt_lost_only: bool = False
    implicit_lt: bool = False
    ack_serialisation: bool = False
    timer_hz: int = 0
    sack_compression: bool = False
    quickack_on_data: bool = False
    tso_defer: bool = False
    rto_restart: bool = False
    grow_acked_sacked: bool = False
    cwnd_limited_growth: bool = False
    linux_prr: bool = False
    linux_delack: bool = False
    stack: str = "rfc"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        # Lower bound 1 bit/s and times up to an hour (MAX_SECONDS): a rate of 1e-300 bit/s
        # gave transfer times of 1e304 s and an infinite CI.
        set_(self, "link_rate_bps", check_real("link_rate_bps", self.link_rate_bps, low=1.0))
        if self.delay_s is not None:
            set_(self, "delay_s", check_real("delay_s", self.delay_s, low=0.0, high=MAX_SECONDS))
        hb = check_real("header_bytes", self.header_bytes, low=0.0, high=MAX_MSS_BYTES)
        if hb != int(hb):
            raise ValueError(f"header_bytes must be an integer >= 0, got {self.header_bytes!r}")
        set_(self, "header_bytes", int(hb))
        set_(self, "delack_timeout_s",
             check_real("delack_timeout_s", self.delack_timeout_s, low=0.0, high=MAX_SECONDS, low_open=True))
        set_(self, "min_rto_s", check_real("min_rto_s", self.min_rto_s, low=0.0, high=MAX_SECONDS, low_open=True))
        set_(self, "initial_rto_s",
             check_real("initial_rto_s", self.initial_rto_s, low=0.0, high=MAX_SECONDS, low_open=True))
        set_(self, "max_rto_s", check_real("max_rto_s", self.max_rto_s, low=0.0, high=MAX_SECONDS, low_open=True))
        for low in ("min_rto_s", "initial_rto_s"):  # the cap sits above both; name the pair
            if getattr(self, low) > self.max_rto_s:
                raise ValueError(f"{low} must be <= max_rto_s ({self.max_rto_s!r}), got {low}="
                                 f"{getattr(self, low)!r}")
        set_(self, "clock_granularity_s",
             check_real("clock_granularity_s", self.clock_granularity_s, low=0.0, high=MAX_SECONDS))
        check_choice("rto_rule", self.rto_rule, RTO_RULES)
        check_choice("lt_mode", self.lt_mode, LT_MODES)
        set_(self, "p_ack", check_real("p_ack", self.p_ack, low=0.0, high=1.0, high_open=True))
        if self.queue_packets is not None:
            set_(self, "queue_packets", check_int("queue_packets", self.queue_packets, low=0))
        check_choice("sender", self.sender, SENDERS)
        check_choice("rtt_sampling", self.rtt_sampling, RTT_SAMPLING)
        if (self.sender == "ns3") != (self.rtt_sampling == "ns3"):
            raise ValueError(
                "rtt_sampling 'ns3' goes with sender 'ns3' and only with it (ns-3's timer is "
                f"part of its sender), got sender {self.sender!r}, rtt_sampling {self.rtt_sampling!r}")
        set_(self, "quick_acks", check_int("quick_acks", self.quick_acks, low=0))
        if not isinstance(self.fin, bool):
            raise ValueError(f"fin must be True or False, got {self.fin!r}")
        check_choice("prr", self.prr, PRR_MODES)
        if self.sender != "sack" and self.prr != "ssrb":
            raise ValueError(f"prr {self.prr!r} needs sender 'sack' (SACK-based recovery), "
                             f"got sender {self.sender!r}")
        if not isinstance(self.rack_tlp, bool):
            raise ValueError(f"rack_tlp must be True or False, got {self.rack_tlp!r}")
        if self.rack_tlp and self.sender != "sack":
            raise ValueError("rack_tlp needs sender 'sack' (RACK-TLP infers losses from SACK "
                             f"information, RFC 8985), got sender {self.sender!r}")
        if not isinstance(self.handshake_rtt, bool):
            raise ValueError(f"handshake_rtt must be True or False, got {self.handshake_rtt!r}")
        if self.handshake_rtt and self.sender == "ns3":
            raise ValueError("handshake_rtt is for senders 'rfc' and 'sack' (the ns3 sender always "
                             "takes ns-3's SYN-ACK sample), got sender 'ns3'")
        if not isinstance(self.rack_tsecr_test, bool):
            raise ValueError(f"rack_tsecr_test must be True or False, got {self.rack_tsecr_test!r}")
        if not isinstance(self.ack_serialisation, bool):
            raise ValueError(f"ack_serialisation must be True or False, got {self.ack_serialisation!r}")
        if not isinstance(self.bare_fin, bool):
            raise ValueError(f"bare_fin must be True or False, got {self.bare_fin!r}")
        if self.bare_fin and (self.sender != "sack" or not self.fin):
            raise ValueError("bare_fin needs sender 'sack' and fin=True (a bare FIN is SACKed), got "
                             f"sender {self.sender!r}, fin={self.fin!r}")
        set_(self, "timer_hz", check_int("timer_hz", self.timer_hz, low=0, high=10_000))
        for name, why in _SACK_ONLY:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be True or False, got {value!r}")
            if value and self.sender != "sack":
                raise ValueError(f"{name} needs sender 'sack' ({why}), got sender {self.sender!r}")
        if self.linux_prr and self.prr != "ssrb":
            raise ValueError(f"linux_prr needs prr 'ssrb' (it is Linux's PRR-SSRB), got prr {self.prr!r}")
        check_stack(self.stack)

    @classmethod
    def profile(cls, name: str, base: "SimConfig | None" = None, **overrides) -> "SimConfig":
        """The settings of stack profile ``name`` with ``overrides`` applied.

        Parameters
        ----------
        name : {"rfc", "ns3", "linux"}
            See :data:`latency_model.sim.profiles.STACKS` (each field with its source).
        base : SimConfig, optional
            Settings the profile does not fix (link rate, delay, queue, ACK loss); default
            ``SimConfig()``.
        **overrides
            Any :class:`SimConfig` field; an explicit value always wins over the profile's.

        Returns
        -------
        SimConfig
            With ``stack = name``.

        Raises
        ------
        ValueError
            For an unknown profile (naming the valid ones), ``base`` not a SimConfig
            (checked by :func:`~latency_model.sim.profiles.profile_config`) or an invalid
            override.
        """
        return profile_config(name, cls() if base is None else base, **overrides)

    def limited_transmit_window(self, dup_lt: int | None, dup_t: int) -> tuple[int, int]:
        """Duplicate ACKs (first, last) on which Limited Transmit sends a new segment.

        ``"rfc3042"``: the first ``dup_lt`` duplicate ACKs (RFC 3042 Section 2);
        ``"paper"``: from the ``dup_lt``-th up to ``dup_t - 1`` (the paper's Section 2.1
        reading). An empty range ``(1, 0)`` without Limited Transmit.
        """
        if dup_lt is None:
            return 1, 0
        if self.lt_mode == "rfc3042":
            return 1, dup_lt
        return dup_lt, dup_t - 1

    def handshake_rtt_s(self, rtt_s: float) -> float:
        """RTT sample of the SYN / SYN-ACK exchange, seconds: ``2 d`` plus the serialisation
        of a SYN and a SYN-ACK (each the data's header plus :data:`SYN_OPTION_BYTES`)."""
        return 2.0 * self.one_way_delay(rtt_s) + 2.0 * self.serialisation_s(SYN_OPTION_BYTES)

    def one_way_delay(self, rtt_s: float) -> float:
        """One-way propagation delay d, seconds: ``delay_s`` or ``rtt_s / 2``."""
        return self.delay_s if self.delay_s is not None else rtt_s / 2.0

    def serialisation_s(self, payload_bytes: int) -> float:
        """Time to clock one packet of ``payload_bytes`` onto the link, seconds."""
        return (payload_bytes + self.header_bytes) * 8.0 / self.link_rate_bps

    def ack_serialisation_s(self) -> float:
        """Time one pure ACK (``header_bytes``) occupies the link, seconds, with
        ``ack_serialisation``; 0.0 without it."""
        return self.serialisation_s(0) if self.ack_serialisation else 0.0

    def replace(self, **changes) -> "SimConfig":
        """Copy with ``changes`` applied, validated again.

        Parameters
        ----------
        **changes
            :class:`SimConfig` fields and their new values (units as in the class
            docstring: seconds, bit/s, bytes, packets).

        Returns
        -------
        SimConfig
            A new instance; ``self`` is unchanged.

        Raises
        ------
        ValueError
            For an unknown field (naming the valid ones) or an invalid value.
        """
        _check_fields(changes)
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """JSON-serialisable dict of every setting."""
        return dataclasses.asdict(self)


_SACK_ONLY = (("implicit_lt", "SACKed segments leave the pipe"),
              ("rxt_lost_only", "RFC 6675's NextSeg"),
              ("sack_compression", "the flat engine's SACK receiver"),
              ("quickack_on_data", "Linux's receiver, beside its SACK compression"),
              ("tso_defer", "its Limited Transmit step"),
              ("rto_restart", "RACK-TLP's timers"),
              ("grow_acked_sacked", "SACKed segments counted as delivered"),
              ("cwnd_limited_growth", "its record of the packets out"),
              ("linux_prr", "its PRR"),
              ("linux_delack", "Linux's receiver, beside its SACK compression"))
"""Boolean Linux mechanisms only the sack sender runs, with what of it runs them."""


def _check_fields(changes: dict) -> None:
    """A ValueError naming any key of ``changes`` that is not a SimConfig field."""
    valid = [f.name for f in dataclasses.fields(SimConfig)]
    unknown = [k for k in changes if k not in valid]
    if unknown:
        raise ValueError(f"unknown SimConfig field{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}; valid fields: {', '.join(valid)}")


def pipe_config(
    rtt_s: float,
    mss_bytes: int,
    pipe_packets: int,
    queue_packets: int | None = None,
    base: SimConfig | None = None,
) -> SimConfig:
    """A path that holds ``pipe_packets`` full-size packets: BDP plus drop-tail buffer.

    The bandwidth-delay product counts the packets a lone packet's round trip keeps
    busy, ``BDP = C (2 d + s) / (8 (MSS + H))`` with ``d = rtt_s/2`` and the
    serialisation time ``s = 8 (MSS + H)/C``, i.e. ``BDP = 2d/s + 1`` (the ``+ 1`` is
    the packet on the link). The rate is chosen so that ``BDP = pipe - queue``; with
    the buffer of ``queue`` waiting packets, a steady window of ``pipe`` packets fills
    the path exactly and one more packet overflows it (Burst TCP, Section 3: "a pipe
    of 32 packets").

    Parameters
    ----------
    rtt_s : float
        Round-trip propagation time 2 d, seconds (> 0).
    mss_bytes : int
        Segment size, bytes (>= 1); ``base.header_bytes`` is added per packet.
    pipe_packets : int
        Packets the path holds, BDP + buffer, >= 2.
    queue_packets : int, optional
        Drop-tail buffer, packets, in [0, pipe - 2]. Default ``pipe // 2`` (buffer =
        BDP, the rule of thumb; Burst TCP's own experiment has BDP = buffer = 7).
    base : SimConfig, optional
        Other settings (timers, header size); its rate, delay and queue are replaced.

    Returns
    -------
    SimConfig
        With ``delay_s = rtt_s/2``, ``link_rate_bps`` and ``queue_packets`` set.
    """
    base = SimConfig() if base is None else base
    rtt = check_real("rtt_s", rtt_s, low=0.0, low_open=True)
    mss = check_int("mss_bytes", mss_bytes, low=1)
    pipe = check_int("pipe_packets", pipe_packets, low=2)
    queue = pipe // 2 if queue_packets is None else check_int("queue_packets", queue_packets, low=0, high=pipe - 2)
    bdp = pipe - queue
    serial_s = rtt / (bdp - 1)
    rate = (mss + base.header_bytes) * 8.0 / serial_s
    return base.replace(link_rate_bps=rate, delay_s=rtt / 2.0, queue_packets=queue)
