"""Stack profiles: the simulator set up as the RFCs, ns-3 or Linux would run the paper's setting.

A profile is a named set of :class:`~latency_model.sim.config.SimConfig` values, each with
its source, plus the :class:`~latency_model.params.TcpParams` defaults the stack implies
(Linux's initial window). ``SimConfig.profile(name, **overrides)`` builds one; an explicit
value always wins over the profile's. ``latency-model ... --stack NAME`` does the same from
the command line. docs/simulator.md explains every difference; validation/NS3.md compares
the ``ns3`` profile with ns-3.37 itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checks import check_choice, check_instance
from ..params import TcpParams

__all__ = ["StackProfile", "STACKS", "STACK_NAMES", "RECOVERIES", "recovery_overrides", "profile_config",
           "profile_params",
           "check_stack"]


@dataclass(frozen=True)
class StackProfile:
    """One stack profile.

    Parameters
    ----------
    name : str
        ``"rfc"``, ``"ns3"`` or ``"linux"``.
    description : str
        One paragraph: what the profile is, and what it lacks.
    config : dict
        :class:`SimConfig` field -> (value, source): the values the profile sets.
    params : dict
        :class:`TcpParams` field -> (value, source): defaults the stack implies, applied
        by :func:`profile_params` unless the caller gave the field (``rule`` by its
        registry name, ``latency_model.growth.make_rule``).
    """

    name: str
    description: str
    config: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-serialisable description: every field, its value and its source."""
        return {"name": self.name, "description": self.description,
                "config": {k: {"value": v, "source": s} for k, (v, s) in self.config.items()},
                "params": {k: {"value": v, "source": s} for k, (v, s) in self.params.items()}}


_NS3 = "ns-3.37 src/internet/model/"
_LNX = "Linux net/ipv4/"

STACKS: dict[str, StackProfile] = {
    "rfc": StackProfile(
        "rfc",
        "The RFCs strictly (the default, and the paper's reproduction): RFC 5681 slow start, "
        "congestion avoidance and delayed ACK (b segments or 200 ms), RFC 6582 NewReno, RFC 3042 "
        "Limited Transmit, RFC 6298 timer with Karn's rule (initial and minimum RTO 1 s, maximum "
        "60 s), 40-byte headers, no timestamps, FIN on the last segment.",
        {
            "sender": ("rfc", "RFC 5681 Section 3, RFC 6582 Section 3.2, RFC 3042 Section 2"),
            "rtt_sampling": ("karn", "RFC 6298 Section 3 (Karn's algorithm) and 5 (back-off kept)"),
            "header_bytes": (40, "IPv4 20 B + TCP 20 B, no options"),
            "delack_timeout_s": (0.2, "RFC 5681 Section 4.2 (< 500 ms), ns-2 and ns-3 default 200 ms"),
            "min_rto_s": (1.0, "RFC 6298 (2.4)"),
            "initial_rto_s": (1.0, "RFC 6298 (2.1)"),
            "max_rto_s": (60.0, "RFC 6298 (2.5): at least 60 s"),
            "clock_granularity_s": (0.0, "RFC 6298 G: an exact clock"),
            "quick_acks": (0, "RFC 5681 Section 4.2 (no quick-ack mode)"),
            "fin": (True, "the application closes once the data is written"),
        },
    ),
    "ns3": StackProfile(
        "ns3",
        "ns-3.37's TcpSocketBase with TcpNewReno and TcpClassicRecovery, no SACK, no timestamps, "
        "as the paper's setting runs there (validation/ns3/): Reno-SACK pipe accounting instead of "
        "window inflation, ssthresh from the pipe, +1 MSS per ACK in slow start and an integer "
        "congestion-avoidance step, duplicate ACKs ignored after a timeout, the RTO recomputed "
        "from the estimator on every new ACK (the back-off collapses), the SYN-ACK's RTT sample, "
        "the first data segment acknowledged at once, 42-byte headers (PPP 2 + IPv4 20 + TCP 20). "
        "ACKs serialised at the link rate and queued like data (the handshake's last ACK "
        "ahead of the first segment). It leaves out the 3.37 segfault of "
        "TcpRateLinux::SkbSent (a fixed ns-3, 3.41 on, stops sending instead, as here).",
        {
            "sender": ("ns3", _NS3 + "tcp-socket-base.cc (ProcessAck, DupAck, EnterRecovery, "
                       "ReTxTimeout, SendPendingData), tcp-tx-buffer.cc, tcp-congestion-ops.cc "
                       "(TcpNewReno), tcp-recovery-ops.cc (TcpClassicRecovery)"),
            "rtt_sampling": ("ns3", _NS3 + "tcp-socket-base.cc EstimateRtt, NewAck, UpdateRttHistory"),
            "header_bytes": (42, "point-to-point PppHeader 2 B + Ipv4Header 20 B + TcpHeader 20 B"),
            "ack_serialisation": (True, "ns-3.37 src/point-to-point/model/point-to-point-net-device.cc "
                                  "TransmitStart: every packet, a pure ACK included, occupies the "
                                  "device for its size x 8 / DataRate; Send queues it while the "
                                  "device is busy (the handshake's ACK is sent just before the first "
                                  "data segment on the same device)"),
            "delack_timeout_s": (0.2, _NS3 + "tcp-socket.cc attribute DelAckTimeout (200 ms)"),
            "min_rto_s": (1.0, _NS3 + "tcp-socket-base.cc attribute MinRto (1 s)"),
            "initial_rto_s": (1.0, _NS3 + "tcp-socket.cc attribute ConnTimeout (3 s) is the SYN's; "
                              "the data's first RTO is max(SRTT + 4 RTTVAR, MinRto) after the SYN-ACK's sample"),
            "max_rto_s": (60.0, _NS3 + "tcp-socket-base.cc ReTxTimeout: min(2 RTO, 60 s)"),
            "clock_granularity_s": (0.001, _NS3 + "tcp-socket-base.cc attribute ClockGranularity (1 ms)"),
            "quick_acks": (1, _NS3 + "tcp-socket-base.cc ProcessSynRcvd: \"Always respond to first "
                           "data packet to speed up the connection\""),
            "fin": (True, "src/applications/model/bulk-send-application.cc: Close() after the last "
                    "write; FIN rides on the last segment (TcpSocketBase::SendDataPacket)"),
        },
    ),
    "linux": StackProfile(
        "linux",
        "A current Linux default as far as the simulator can express it: SACK with RFC 6675 loss "
        "recovery, PRR-SSRB and RACK-TLP (sender 'sack'), timestamps (RFC 7323), RTO = SRTT + "
        "max(4 RTTVAR, 200 ms) with a 200 ms floor, initial RTO 1 s, maximum 120 s, quick-ack mode "
        "for the first 16 ACKs, a 40 ms delayed-ACK timer, IW 10 unless W0 is given, 52-byte "
        "headers (TCP timestamps option), SRTT and RACK's min_RTT from the handshake's RTT "
        "sample, a bare FIN after a write that fits in the initial window, Linux's RACK advance on a "
        "SACKed retransmission, retransmissions of marked-lost segments only (no rescue), implicit Limited "
        "Transmit, CUBIC with HyStart as the growth rule unless another is given (Linux's reno: rule "
        "'linux-reno', tcp_cong.c tcp_reno_cong_avoid), RACK's reordering timer, the RTO and the loss "
        "probe in jiffies of CONFIG_HZ = 250 on the timer wheel (its phase at its mean), the RTO "
        "restarted on a SACK of a segment sent before the head's last transmission and when an ACK "
        "retransmits the head, the receiver's SACK compression, quick-ack mode from the first "
        "in-order data, a one-segment Limited Transmit send right after another deferred as "
        "tcp_tso_should_defer does, the growth rule fed the packets each ACK newly delivers "
        "(acked_sacked), also on the ACK that ends recovery, and only while cwnd-limited "
        "(tcp_is_cwnd_limited), PRR as tcp_cwnd_reduction computes it, the delayed ACK after quick-ack "
        "mode (every second segment ACKed at once, a lone one after ato = 10 jiffies on the timer wheel). "
        "It LACKS: D-SACK and undo, F-RTO, the adaptation of the delayed-ACK timeout (ato) and the "
        "ACKs the receiving process's reads send, pacing.",
        {
            "sender": ("sack", "SACK on by default (sysctl net.ipv4.tcp_sack = 1): " + _LNX
                       + "tcp_input.c tcp_sacktag_write_queue (scoreboard), tcp_fastretrans_alert / "
                       "tcp_time_to_recover (recovery entry), tcp_enter_recovery (prior_ssthresh, "
                       "high_seq = RecoveryPoint), tcp_output.c tcp_xmit_retransmit_queue (NextSeg)"),
            "prr": ("ssrb", _LNX + "tcp_input.c tcp_init_cwnd_reduction, tcp_cwnd_reduction "
                    "(PRR-SSRB in packets: sndcnt = DIV_ROUND_UP(prr_delivered x ssthresh, "
                    "prior_cwnd) - prr_out, or min(ssthresh - in_flight, max(prr_delivered - "
                    "prr_out, newly_acked_sacked) + 1); Linux's details: linux_prr)"),
            "linux_prr": (True, _LNX + "tcp_input.c tcp_init_cwnd_reduction (prior_cwnd = cwnd, "
                          "prr_out = 0), tcp_cong_control -> tcp_cwnd_reduction(sk, acked_sacked, "
                          "rs->losses, flag) before tcp_xmit_recovery: RecoverFS = prior_cwnd, the "
                          "fast retransmission inside sndcnt (max(sndcnt, prr_out ? 0 : 1)), the "
                          "slow-start bound's +1 only if FLAG_SND_UNA_ADVANCED and no new loss, "
                          "nothing on an ACK that delivers nothing; tcp_recovery.c "
                          "tcp_rack_reo_timeout (recovery entered on RACK's timer: "
                          "tcp_cwnd_reduction(sk, 1, newly_lost, 0))"),
            "rack_tlp": (True, "sysctl net.ipv4.tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP): "
                         + _LNX + "tcp_recovery.c tcp_rack_detect_loss, tcp_rack_reo_wnd; tcp_output.c "
                         "tcp_schedule_loss_probe, tcp_send_loss_probe"),
            "rtt_sampling": ("timestamps", _LNX + "tcp_input.c tcp_ack_update_rtt (tcp_rtt_tsopt_us), "
                             "sysctl net.ipv4.tcp_timestamps = 1"),
            "header_bytes": (52, "IPv4 20 B + TCP 20 B + timestamps option 12 B"),
            "delack_timeout_s": (0.04, "include/net/tcp.h TCP_ATO_MIN = TCP_DELACK_MIN (HZ/25 = 40 ms: 10 jiffies at 250 Hz, "
                                 "linux_delack); the ato adapts from there in Linux"),
            "min_rto_s": (0.2, "include/net/tcp.h TCP_RTO_MIN (200 ms)"),
            "initial_rto_s": (1.0, "include/net/tcp.h TCP_TIMEOUT_INIT (1 s, RFC 6298)"),
            "max_rto_s": (120.0, "include/net/tcp.h TCP_RTO_MAX (120 s)"),
            "clock_granularity_s": (0.2, _LNX + "tcp_input.c tcp_rtt_estimator: mdev floored at "
                                    "tcp_rto_min, so RTO = SRTT + max(4 RTTVAR, 200 ms)"),
            "quick_acks": (16, _LNX + "tcp_input.c tcp_enter_quickack_mode / tcp_incr_quickack: "
                           "TCP_MAX_QUICKACKS = 16 (fewer when rcv_wnd < 32 MSS)"),
            "fin": (True, "the application closes once the data is written"),
            "bare_fin": (True, _LNX + "tcp_output.c tcp_send_fin (the FIN "
                         "joins the last skb only while it is unsent, else a bare FIN skb is queued; "
                         "tcp_output.c tcp_write_xmit sends it when tcp_cwnd_test admits one more "
                         "packet), tcp_input.c tcp_sacktag_write_queue (its SACK), tcp_recovery.c "
                         "tcp_rack_detect_loss (what was sent before it is lost one RTT + reo_wnd on)"),
            "implicit_lt": (True, "include/net/tcp.h tcp_packets_in_flight (packets_out - sacked_out - "
                            "lost_out + retrans_out), " + _LNX + "tcp_output.c tcp_cwnd_test / "
                            "tcp_write_xmit: new data on every duplicate ACK while in_flight < cwnd"),
            "rxt_lost_only": (True, _LNX + "tcp_output.c tcp_xmit_retransmit_queue: only skbs "
                              "marked TCPCB_LOST are retransmitted (no RFC 6675 NextSeg rules 3 and 4, "
                              "no rescue retransmission)"),
            "rack_tsecr_test": (False, _LNX + "tcp_recovery.c tcp_rack_advance: a SACKed "
                                "retransmission is refused only when resent less than min_RTT ago "
                                "(no timestamp-echo test)"),
            "timer_hz": (250, "CONFIG_HZ = 250, the tested kernel's (validation/linux/results/kernel.json "
                         "config_hz); RACK's reordering timer "
                         "in jiffies: " + _LNX + "tcp_recovery.c tcp_rack_mark_lost (Linux 6.7 on: "
                         "usecs_to_jiffies(wait + TCP_TIMEOUT_MIN_US)), kernel/time/timer.c "
                         "calc_index (level 0 fires J + 1 jiffies after the arming jiffy); the RTO in "
                         "jiffies: include/net/tcp.h __tcp_set_rto (usecs_to_jiffies), on the wheel's "
                         "level 1 from 63 jiffies (expiry rounded up to 8 jiffies); the probe in jiffies: "
                         + _LNX + "tcp_output.c tcp_schedule_loss_probe"),
            "sack_compression": (True, _LNX + "tcp_input.c __tcp_ack_snd_check (tcp_comp_sack_nr = 44, "
                                 "tcp_comp_sack_delay_ns = 1 ms, dup_ack_counter up to "
                                 "TCP_FASTRETRANS_THRESH = 3), tcp_output.c tcp_event_ack_sent"),
            "linux_delack": (True, _LNX + "tcp_input.c __tcp_ack_snd_check (after quick-ack mode an ACK "
                             "at once only when rcv_nxt - rcv_wup > rcv_mss, else tcp_send_delayed_ack), "
                             + _LNX + "tcp_output.c tcp_send_delayed_ack (ato = TCP_ATO_MIN = HZ/25 "
                             "jiffies, sk_reset_timer on the timer wheel)"),
            "quickack_on_data": (True, _LNX + "tcp_input.c tcp_event_data_recv (tcp_incr_quickack on "
                                 "the first data, ato still 0), tcp_data_queue (tcp_enter_quickack_mode "
                                 "for a segment entirely below rcv_nxt)"),
            "tso_defer": (True, _LNX + "tcp_output.c tcp_tso_should_defer, tcp_tso_autosize (a Limited "
                          "Transmit send below one GSO packet, within 1 ms of the last transmission, "
                          "waits for the head's ACK)"),
            "rto_restart": (True, "restarted on a SACK of a segment sent before the head's last "
                            "transmission: " + _LNX + "tcp_input.c tcp_clean_rtx_queue "
                            "(FLAG_SET_XMIT_TIMER) -> tcp_set_xmit_timer, and on the head's "
                            "retransmission: " + _LNX + "tcp_output.c tcp_xmit_retransmit_queue "
                            "(tcp_reset_xmit_timer ICSK_TIME_RETRANS)"),
            "grow_acked_sacked": (True, _LNX + "tcp_input.c tcp_ack: tcp_fastretrans_alert, then "
                                  "tcp_newly_delivered and tcp_cong_control -> tcp_may_raise_cwnd "
                                  "(FLAG_DATA_ACKED) -> tcp_cong_avoid(sk, ack, acked_sacked); recovery's "
                                  "end: tcp_try_undo_recovery (state Open), tcp_end_cwnd_reduction "
                                  "(cwnd = ssthresh) before tcp_cong_control"),
            "cwnd_limited_growth": (True, "include/net/tcp.h tcp_is_cwnd_limited (checked first in "
                                    + _LNX + "tcp_cong.c tcp_reno_cong_avoid and tcp_cubic.c "
                                    "cubictcp_cong_avoid), " + _LNX + "tcp_output.c tcp_write_xmit "
                                    "(is_cwnd_limited = in_flight >= cwnd) -> tcp_cwnd_validate "
                                    "(is_cwnd_limited, max_packets_out, cwnd_usage_seq)"),
            "handshake_rtt": (True, _LNX + "tcp_input.c tcp_rcv_synsent_state_process -> tcp_ack -> "
                              "tcp_ack_update_rtt (the SYN-ACK's timestamp echo; tcp_synack_rtt_meas "
                              "on the passive side), tcp_rtt_estimator's first sample (SRTT = m, "
                              "RTTVAR = max(m/2, rto_min/4)) and tcp_update_rtt_min (RACK's min_RTT)"),
        },
        {"w0": (10, "RFC 6928; include/net/tcp.h TCP_INIT_CWND = 10"),
         "rule": ("cubic", "Linux's default congestion control: " + _LNX + "Kconfig \"Default TCP "
                  "congestion control\" default DEFAULT_CUBIC (CONFIG_DEFAULT_TCP_CONG = \"cubic\", "
                  "sysctl net.ipv4.tcp_congestion_control; the tested machine's namespaces "
                  "default to bbr, the campaign sets reno or cubic per socket); "
                  + _LNX + "tcp_cubic.c (growth/cubic.py); "
                  "Linux's reno is rule 'linux-reno' (growth/linux_reno.py): tcp_cong.c tcp_reno_cong_avoid "
                  "(tcp_slow_start, tcp_cong_avoid_ai in whole packets), tcp_reno_ssthresh")},
    ),
}

STACK_NAMES = tuple(STACKS)


RECOVERIES: dict[str, dict] = {
    "newreno": {"sender": "rfc"},
    "sack": {"sender": "sack", "prr": "off", "rack_tlp": False},
    "sack-prr": {"sender": "sack", "prr": "ssrb", "rack_tlp": False},
    "sack-rack-tlp": {"sender": "sack", "prr": "off", "rack_tlp": True},
    "sack-rack-tlp-prr": {"sender": "sack", "prr": "ssrb", "rack_tlp": True},
}
"""Loss-recovery stacks by name (``--recovery``, the sweep's ``recovery`` axis) -> the
SimConfig fields they set:

- ``newreno``: the cumulative-ACK RFC sender (RFC 5681 / RFC 6582 NewReno, with the
  variant's Limited Transmit, proposal or Early Retransmit);
- ``sack``: the SACK sender, RFC 6675 loss recovery with cwnd = ssthresh on entry;
- ``sack-prr``: the same with RFC 6937 PRR-SSRB;
- ``sack-rack-tlp``: SACK with RFC 8985 RACK-TLP (time-based loss marking, tail loss probe);
- ``sack-rack-tlp-prr``: SACK + RACK-TLP + PRR-SSRB (Linux's combination, the ``linux``
  profile's).

They apply on top of the stack profile (``SimConfig.profile(stack, **fields)``); the
``variant`` (LT, the proposal, ER) is a separate axis."""


def recovery_overrides(name) -> dict:
    """SimConfig fields of recovery ``name`` (:data:`RECOVERIES`); a ValueError naming the
    valid ones otherwise."""
    check_choice("recovery", name, tuple(RECOVERIES))
    return dict(RECOVERIES[name])


def check_stack(name) -> StackProfile:
    """The profile called ``name``; a ValueError naming the valid ones otherwise."""
    check_choice("stack", name, STACK_NAMES)  # an unhashable name too: a ValueError
    return STACKS[name]


def profile_config(name: str, base, **overrides):
    """Settings of profile ``name`` on top of ``base``, ``overrides`` applied last.

    Use :meth:`SimConfig.profile <latency_model.sim.config.SimConfig.profile>`; this is
    its implementation (this module does not import :mod:`.config`).

    Parameters
    ----------
    name : {"rfc", "ns3", "linux"}
        The profile.
    base : SimConfig
        Settings the profile does not fix (link rate, delay, queue, ACK loss) come from it.
    **overrides
        SimConfig fields that win over the profile's values. A ``sender`` given without
        ``rtt_sampling`` brings its own sampling where the profile's cannot go with it
        (``"ns3"`` for the ns3 sender, ``"karn"`` for the rfc sender in place of ``"ns3"``):
        ``--stack ns3 --sender rfc`` is ns-3's path and receiver with the RFC sender; a sender
        other than ``"sack"`` drops the profile's PRR and RACK-TLP (``--stack linux --sender
        rfc`` is Linux's non-SACK path).

    Returns
    -------
    SimConfig

    Raises
    ------
    ValueError
        For an unknown profile, ``base`` not a SimConfig, an unknown field or an invalid value.
    """
    prof = check_stack(name)
    # config imports this module, so the class is found in the MRO by its qualified name,
    # not by isinstance (an import here, even inside the function, would close a cycle).
    if not any((c.__module__, c.__qualname__) == ("latency_model.sim.config", "SimConfig")
               for c in type(base).__mro__):
        raise ValueError(f"base must be a SimConfig, got {base!r}")
    values = {k: v for k, (v, _src) in prof.config.items()}
    if "sender" in overrides and "rtt_sampling" not in overrides:
        if overrides["sender"] == "ns3":
            values["rtt_sampling"] = "ns3"
            if "handshake_rtt" not in overrides:  # ns-3's own SYN-ACK sample is its sender's
                values["handshake_rtt"] = False
        elif values["rtt_sampling"] == "ns3":
            values["rtt_sampling"] = "karn"
    if overrides.get("sender", "sack") != "sack":  # PRR and RACK-TLP belong to the SACK sender
        if "rack_tlp" not in overrides:
            values["rack_tlp"] = False
        if "bare_fin" not in overrides:  # a bare FIN matters through its SACK
            values["bare_fin"] = False
        if "rxt_lost_only" not in overrides:
            values["rxt_lost_only"] = False
        for key in ("implicit_lt", "sack_compression", "quickack_on_data", "tso_defer", "rto_restart",
                      "grow_acked_sacked", "cwnd_limited_growth", "linux_prr", "linux_delack"):
            if key not in overrides:
                values[key] = False
        if "prr" not in overrides:
            values.pop("prr", None)
    if overrides.get("prr", "ssrb") != "ssrb" and "linux_prr" not in overrides:  # Linux's PRR is SSRB
        values["linux_prr"] = False
    if overrides.get("fin") is False and "bare_fin" not in overrides:
        values["bare_fin"] = False
    values.update(overrides)
    values["stack"] = name
    return base.replace(**values)


def profile_params(name: str, params, given=()):
    """``params`` with the TcpParams defaults of profile ``name`` (Linux's IW 10 and CUBIC).

    Parameters
    ----------
    name : {"rfc", "ns3", "linux"}
        The profile.
    params : TcpParams
        Parameters to adjust.
    given : iterable of str
        Names the user set explicitly (TcpParams fields among them are left alone, ``rule``
        included: give it to keep the rule of ``params``; other names, such as a sweep's
        axes, are allowed and play no part).

    Returns
    -------
    TcpParams

    Raises
    ------
    ValueError
        For an unknown profile, ``params`` not a TcpParams, or ``given`` not an iterable
        of names.
    """
    prof = check_stack(name)
    check_instance("params", params, TcpParams)
    given = _names("given", given)
    if any(k.startswith("rule_param.") for k in given):  # a sweep's parameter of the rule it has
        given.add("rule")
    changes = {k: v for k, (v, _src) in prof.params.items() if k not in given}
    if "rule" in changes:
        from ..growth import make_rule  # the registry's name -> a fresh rule with its defaults

        changes["rule"] = make_rule(changes["rule"])
    return params.replace(**changes) if changes else params


def _names(name: str, value) -> set:
    """``value`` (an iterable of str, not a str itself) as a set; a ValueError otherwise."""
    what = f"{name} must be an iterable of field names (str)"
    if isinstance(value, str):
        raise ValueError(f"{what}, not one str, got {value!r}")
    try:
        names = list(value)
    except TypeError:
        raise ValueError(f"{what}, got {value!r}") from None
    for item in names:
        if not isinstance(item, str):
            raise ValueError(f"{what}, got the entry {item!r}")
    return set(names)
