"""The packet model set up as the simulator it is compared with (the stack
profiles where they change the answer).

The packet model (:mod:`latency_model.model.packet`) never imports the simulator; its
link and timers come in a :class:`~latency_model.model.packet.PathConfig` whose defaults
restate the ``rfc`` profile's. A comparison with the simulator (``sweep --what both``,
``accuracy``) gives it the simulated link and timers instead (:func:`packet_options`),
and names every setting of the simulator it cannot follow (:func:`packet_differences`).
It runs the simulator's three senders (``PathConfig.sender``): the RFC one with Karn's
rule or RFC 7323 timestamps, ns-3.37's with its RTT sampling (the ``ns3`` profile's), and
the SACK sender with PRR and RACK-TLP (the ``linux`` profile's; on the tree DP only).
The paper's reading of Limited Transmit, ACK losses and a drop-tail buffer stay declared
differences. The receiver's quick ACKs (ns-3: 1, Linux: 16), the clock granularity G
(1 ms, 200 ms), ns-3's back-off ending at every new ACK (its RTO recomputed there) and
the paper's fixed RTO (``rto_rule="paper"``) are followed.
"""

from __future__ import annotations

from ..sim.profiles import STACKS

__all__ = ["packet_path", "packet_options", "packet_differences"]

_PATH_FIELDS = ("link_rate_bps", "header_bytes", "delay_s", "delack_timeout_s", "min_rto_s", "initial_rto_s",
                "max_rto_s", "fin", "quick_acks", "clock_granularity_s")


def _check(config) -> None:
    """ValueError unless ``config`` is a :class:`~latency_model.sim.config.SimConfig`."""
    from ..sim.config import SimConfig

    if not isinstance(config, SimConfig):
        raise ValueError(f"config must be a SimConfig, got {config!r}")


def packet_path(config):
    """The :class:`~latency_model.model.packet.PathConfig` of a simulator configuration:
    its link rate, one-way delay, header bytes, delayed-ACK timer, RTO bounds and clock
    granularity, FIN and the receiver's quick ACKs, its sender (``"ns3"``, which brings
    ns-3's timer and the RTO recomputed at every new ACK, ``backoff_collapses``: ns-3's
    ``NewAck``; ``"sack"`` with its PRR mode and RACK-TLP), RFC 7323 timestamps
    (``rtt_sampling="timestamps"``) and the paper's fixed RTO for ``rto_rule="paper"``
    (``fixed_rto``).

    Parameters
    ----------
    config : SimConfig
        The simulator's settings.

    Returns
    -------
    PathConfig
    """
    from ..model.packet import PathConfig

    _check(config)
    sack = config.sender == "sack"
    # ns-3's sender recomputes the RTO from its estimator at every new ACK (NewAck)
    return PathConfig(**{f: getattr(config, f) for f in _PATH_FIELDS},
                      backoff_collapses=config.sender == "ns3",
                      fixed_rto=config.rto_rule == "paper", sender=config.sender,
                      prr=config.prr if sack else "off", rack_tlp=config.rack_tlp,
                      timestamps=config.rtt_sampling == "timestamps",
                      handshake_rtt=config.handshake_rtt)


def packet_options(config) -> dict:
    """Keyword options of the packet model's ``predict`` that make it follow ``config``:
    for the SACK sender (the ``linux`` profile's), ``{"config": config}``, the model on the
    simulator's own transitions (:mod:`latency_model.model._packet_sim`), which follows all
    of it; otherwise its link and timers, ``{"path": PathConfig}``, or ``{}`` where they are
    the model's defaults (the ``rfc`` profile's), so that cached results and table keys of
    the default set-up stay as they were.

    Parameters
    ----------
    config : SimConfig or None
        The simulator's settings (None: no simulator, the defaults).

    Returns
    -------
    dict
    """
    from ..model.packet import PathConfig

    if config is None:
        return {}
    _check(config)
    if config.sender == "sack":
        return {"config": config}
    path = packet_path(config)
    return {} if path == PathConfig() else {"path": path}


_LINUX_NOT_MODELLED = (
    (lambda c: c.rto_restart and c.rack_tlp,
     "its RTO restarted on a SACK of a segment sent before the head's last transmission (Linux "
     "tcp_clean_rtx_queue) and on the head's retransmission (tcp_xmit_retransmit_queue), where the "
     "model's RTO runs from the last new ACK (RFC 6298 5.3)"),
    (lambda c: c.sack_compression,
     "its receiver's SACK compression (Linux __tcp_ack_snd_check), where the model's receiver ACKs "
     "every out-of-order segment at once"),
    (lambda c: c.quickack_on_data and c.quick_acks,
     "its quick-ack mode from the first in-order data (Linux tcp_event_data_recv), where the model's "
     "quick ACKs count from the connection's first ACK"),
    (lambda c: c.tso_defer,
     "its deferral of a small Limited Transmit send (Linux tcp_tso_should_defer), where the model "
     "sends whenever the window allows"),
    (lambda c: c.grow_acked_sacked,
     "its growth by the segments each ACK newly delivers, acked_sacked, also on the ACK that ends "
     "recovery (Linux tcp_cong_control), where the model grows by the bytes newly acknowledged "
     "outside recovery (RFC 5681)"),
    (lambda c: c.cwnd_limited_growth and c.grow_acked_sacked,
     "its growth only while cwnd-limited (Linux tcp_is_cwnd_limited), where the model grows on "
     "every ACK outside recovery"),
    (lambda c: c.linux_prr,
     "its PRR as Linux's tcp_cwnd_reduction (RecoverFS = prior_cwnd, the fast retransmission inside "
     "sndcnt), where the model runs RFC 6937's"),
)
"""Linux mechanisms of the sack sender's path the packet model does not follow: (applies to a
SimConfig, what :func:`packet_differences` says)."""


def packet_differences(config) -> list[str]:
    """What of ``config`` the packet model does not follow, one phrase each (empty: it
    follows all of it).

    Parameters
    ----------
    config : SimConfig
        The simulator's settings.

    Returns
    -------
    list of str
    """
    _check(config)
    if config.sender == "sack":  # the model runs the simulator's own transitions
        return ([f"its ACK losses (p_ack = {config.p_ack:g}), which the model refuses"] if config.p_ack else [])
    out = []
    if config.lt_mode != "rfc3042":
        out.append(f"its Limited Transmit mode {config.lt_mode}, where the model sends on duplicate ACKs "
                   "1..dup_lt (RFC 3042)")
    if config.p_ack:
        out.append(f"its ACK losses (p_ack = {config.p_ack:g}), where the model's ACKs all arrive")
    if config.queue_packets is not None:
        out.append(f"its drop-tail buffer of {config.queue_packets} packets, where the model's link drops "
                   "nothing but the random losses")
    if config.rack_tlp and config.rtt_sampling == "timestamps" and not config.rack_tsecr_test:
        out.append("its RACK update without the timestamp-echo test (Linux tcp_rack_advance), where the "
                   "model skips a SACKed retransmission whose echo predates it (RFC 8985 6.2)")
    if config.implicit_lt:
        out.append("its implicit Limited Transmit (Linux tcp_packets_in_flight), where the model sends "
                   "on duplicate ACKs 1..dup_lt only")
    if config.rxt_lost_only:
        out.append("its retransmission of marked-lost segments only (Linux tcp_xmit_retransmit_queue), "
                   "where the model follows all of RFC 6675's NextSeg, rescue included")
    if config.ack_serialisation:
        out.append("its serialisation of ACKs on the return link (and of the handshake's ACK before "
                   "the first segment; ns-3 PointToPointNetDevice), where the model's ACKs take the "
                   "delay d only")
    if config.bare_fin:
        out.append("its bare FIN after a write that fits in the initial window (SACKed above a lost "
                   "tail), where the model's FIN rides on the last data segment")
    if config.timer_hz:
        rack = (", its loss probe (tcp_schedule_loss_probe) and RACK reordering timer with 2 ms added "
                "(tcp_rack_mark_lost)" if config.rack_tlp else "")
        out.append(f"its RTO in jiffies of 1/{config.timer_hz} s (Linux __tcp_set_rto){rack}, fired by the "
                   "kernel's timer wheel, where the model's timers fire at the exact RTO"
                   + (", PTO and RACK.rtt + reo_wnd" if config.rack_tlp else ""))
    out += [text for applies, text in _LINUX_NOT_MODELLED if applies(config)]
    rule = STACKS[config.stack].params.get("rule", ("standard", ""))[0]
    if rule != "standard":
        out.append(f"its default growth rule {rule}, where the model follows rule standard (RFC 5681, "
                   "Linux's reno)")
    return out
