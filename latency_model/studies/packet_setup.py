"""The packet model set up as the simulator it is compared with (issue 18: "the stack
profiles where they change the answer").

The packet model (:mod:`latency_model.model.packet`) never imports the simulator; its
link and timers come in a :class:`~latency_model.model.packet.PathConfig` whose defaults
restate the ``rfc`` profile's. A comparison with the simulator (``sweep --what both``,
``accuracy``) gives it the simulated link and timers instead (:func:`packet_options`),
and names every setting of the simulator it cannot follow (:func:`packet_differences`).
It runs the RFC sender with Karn's rule or ns-3.37's (``PathConfig.sender``: the
``ns3`` profile's sender and RTT sampling are followed), so Linux's SACK sender and the
timestamps' RTT samples stay declared differences, as do the paper's reading of Limited
Transmit, ACK losses and a drop-tail buffer. The receiver's quick ACKs (ns-3: 1, Linux:
16), the clock granularity G (1 ms, 200 ms), the back-off ending at every new ACK
(ns-3's RTO recomputed there; with timestamps every new ACK a valid sample; the samples
themselves stay Karn's) and the paper's fixed RTO (``rto_rule="paper"``) are followed.
"""

from __future__ import annotations

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
    granularity, FIN and the receiver's quick ACKs, the ``ns3`` sender (``sender="ns3"``,
    which brings ns-3's timer), and with it or timestamps the RTO recomputed at every new
    ACK (``backoff_collapses``: ns-3's ``NewAck``; with timestamps every new ACK is a valid
    sample, RFC 7323 Section 4.1),
    and the paper's fixed RTO for ``rto_rule="paper"`` (``fixed_rto``).

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
    # ns-3's sender recomputes the RTO from its estimator at every new ACK (NewAck); with
    # timestamps every new ACK is a valid sample (RFC 7323 4.1), so the back-off ends there too
    collapses = config.sender == "ns3" or config.rtt_sampling == "timestamps"
    return PathConfig(**{f: getattr(config, f) for f in _PATH_FIELDS}, backoff_collapses=collapses,
                      fixed_rto=config.rto_rule == "paper",
                      sender="ns3" if config.sender == "ns3" else "rfc")


def packet_options(config) -> dict:
    """Keyword options of the packet model's ``predict`` that make it follow ``config``'s
    link and timers: ``{"path": PathConfig}``, or ``{}`` where they are the model's
    defaults (the ``rfc`` profile's), so that cached results and table keys of the
    default set-up stay as they were.

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
    path = packet_path(config)
    return {} if path == PathConfig() else {"path": path}


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
    out = []
    if config.sender not in ("rfc", "ns3"):
        extra = ""
        if config.sender == "sack":
            extra = " (SACK" + (", PRR" if config.prr != "off" else "") + (", RACK-TLP" if config.rack_tlp else "") + ")"
        out.append(f"its sender {config.sender}{extra}, where the model runs the RFC sender (RFC 5681, 6582, "
                   "3042, 5827)")
    if config.rtt_sampling not in ("karn", "ns3"):  # (ns3: the ns3 sender's own, followed)
        out.append(f"its RTT sampling {config.rtt_sampling}, where the model samples under Karn's rule (and "
                   "follows only the back-off ending at every new ACK)")
    if config.lt_mode != "rfc3042":
        out.append(f"its Limited Transmit mode {config.lt_mode}, where the model sends on duplicate ACKs "
                   "1..dup_lt (RFC 3042)")
    if config.p_ack:
        out.append(f"its ACK losses (p_ack = {config.p_ack:g}), where the model's ACKs all arrive")
    if config.queue_packets is not None:
        out.append(f"its drop-tail buffer of {config.queue_packets} packets, where the model's link drops "
                   "nothing but the random losses")
    return out
