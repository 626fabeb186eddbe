"""The flat-array engine: every sender, compiled with numba or interpreted from the same
functions.

:func:`run_batch` runs the Monte Carlo's transfers one after another over the state of
:mod:`.flat` (the shared link, receiver, timers and event selection), dispatching each
event to the sender chosen by ``PI[P_SENDER]``: :mod:`.kernel_rfc`, :mod:`.kernel_ns3` or
:mod:`.kernel_sack`. :func:`run_single` runs one transfer for
:func:`~latency_model.sim.run_transfer`, with scripted losses and the event trace.
:func:`compiled_run_batch` and :func:`compiled_run_single` are the same functions compiled
by numba (``cache=True``: the machine code is kept on disk, so a process compiles once per
install); with numba missing or ``LATENCY_MODEL_NO_NUMBA=1`` they are ``None`` and the
functions themselves run interpreted (the same source, not a twin).

It runs every growth rule of :data:`~latency_model.growth.RULES` (each rule's law, written
once in its module, compiled: :mod:`latency_model.growth.laws`), random or scripted
losses, the event trace and the drop-tail buffer; a rule outside the registry is refused
(:func:`~latency_model.growth.laws.rule_index`).
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np

from ..accel import compile_twins, held, uncounted
from . import flat, kernel_ns3, kernel_rfc, kernel_sack
from .flat import *  # noqa: F403 (the layout and the shared pieces)
from .kernel_ns3 import n3_on_ack, n3_on_rto, n3_send_allowed, n3_start
from .kernel_rfc import rfc_on_ack, rfc_on_rto
from .kernel_sack import rk_on_timer, rk_timers, sk_cwnd_validate, sk_on_ack, sk_on_rto, sk_send_allowed

__all__ = ["run_batch", "run_single", "compiled_run_batch", "compiled_run_single", "pack_params", "OUT_FIELDS",
           "block_size", "flow_event", "compiled_flow_event",
           "N_OUT", "FAIL_UNIFORMS", "FAIL_QUEUE", "FAIL_STALL"]

OUT_FIELDS = ("completion_s", "delivered_s", "lost_packets", "lost_acks",
              "data_packets_sent", "retransmissions", "timeouts", "max_backoff",
              "fast_retransmits", "first_transmissions_lost")
"""Columns of ``out`` (:class:`~latency_model.sim.TransferResult` fields)."""
N_OUT = len(OUT_FIELDS)

_SENDERS = {"rfc": SENDER_RFC, "ns3": SENDER_NS3, "sack": SENDER_SACK}
_PRR = {"ssrb": PRR_SSRB, "crb": PRR_CRB, "off": PRR_OFF}


EVERY_DUPACK = 1 << 62
"""``P_LTHI`` of Linux's implicit Limited Transmit: no duplicate-ACK count bounds it
(``tcp_packets_in_flight`` has none), and it does not depend on the transfer's size."""


def block_size(n_segments: int, p: float, p_ack: float) -> int:
    """Uniforms drawn per block of a run: about twice the expected draws of a transfer of
    ``n_segments`` (one per data transmission, ~n/(1-p), and as many for ACKs if ACKs can
    be lost), so that a second block is rarely needed."""
    per_packet = 2.0 / (1.0 - p) * (2.0 if p_ack > 0.0 else 1.0)
    return int(per_packet * n_segments) + 16


def state_arrays(n: int, cap: int) -> tuple:
    """A transfer's state for the engine's functions: ``(I, F, S, SF, RB, blk, QI, QF)`` for
    ``n`` sequence slots and link queues of ``cap`` packets (:mod:`.flat`'s layout)."""
    return (np.zeros(N_IS, np.int64), np.zeros(N_FS, np.float64), np.zeros((N_S, n), np.int64),
            np.zeros((N_SF, n), np.float64), np.zeros((2, n + 1), np.int64), np.zeros(6, np.int64),
            np.zeros((N_QI, cap), np.int64), np.zeros((N_QF, cap), np.float64))


def pack_params(params, size_bytes: int, config):
    """Integer and float parameter arrays of :func:`run_batch` for one transfer size.

    The sender's initial values: cwnd, ssthresh and the rule's state from the rule's own
    ``new_state`` (W0 and W_SS segments of MSS bytes), the receiver window ``M * MSS``,
    the Limited Transmit window (``SimConfig.limited_transmit_window``), the first RTO and,
    with ``handshake_rtt``, the handshake's SRTT and RTTVAR (:func:`initial_rtt`); ns-3's first
    SRTT, RTTVAR and RTO come from its SYN-ACK (:func:`~latency_model.sim.ns3.ns3_initial_rtt`).
    The sack sender adds a bare FIN's sequence slot (``bare_fin``, when the whole write
    fits in the first flight), Linux's implicit Limited Transmit on every duplicate ACK
    (``implicit_lt``) and, with RACK-TLP and ``handshake_rtt``, RACK's min_RTT and first
    RTT sample from the handshake.

    Parameters
    ----------
    params : TcpParams
        TCP parameters (data loss probability ``params.p``), a rule of a registered class
        (:data:`~latency_model.growth.RULES`).
    size_bytes : int
        Transfer size, bytes (>= 1).
    config : SimConfig
        Simulator settings.

    Returns
    -------
    (ndarray of int64, ndarray of float64)

    Raises
    ------
    ValueError
        For what the engine does not run: a rule whose class is not registered
        (:func:`~latency_model.growth.laws.rule_index`), ns-3 settings ns-3 does not run
        (:func:`~latency_model.sim.ns3.check_ns3_params`).
    """
    from ..growth.laws import rule_index  # noqa: PLC0415
    from .ns3 import check_ns3_params, ns3_initial_rtt  # noqa: PLC0415

    rule = rule_index(params.rule)
    if config.sender == "ns3":
        check_ns3_params(params, config)
    mss = params.mss_bytes
    n_data = -(-size_bytes // mss)
    st = params.rule.new_state(params.w0 * mss, params.w_ss * mss, mss)
    rwnd_bytes = params.rwnd * mss
    fixed_rto = config.rto_rule == "paper"
    handshake_rtt_s = config.handshake_rtt_s(params.rtt_s) if config.handshake_rtt and not fixed_rto else None
    if config.sender == "ns3":
        srtt, rttvar, rto = ns3_initial_rtt(params, config)
    else:
        srtt, rttvar, rto = initial_rtt(params.rto, fixed_rto, handshake_rtt_s, config)
    n, nsamp0, min_rtt0 = n_data, 0, np.inf
    lt_lo, lt_hi = config.limited_transmit_window(params.dup_lt, params.dup_t)
    if config.sender == "sack":
        if config.bare_fin and size_bytes <= min(st.cwnd, rwnd_bytes):
            # The whole write leaves in the first flight, so the FIN follows it as a bare
            # segment (sequence slot n_data; Linux tcp_send_fin), one segment against cwnd.
            n += 1
        if config.implicit_lt:  # Linux: new data on every duplicate ACK while cwnd - pipe >= 1 SMSS
            lt_lo, lt_hi = 1, EVERY_DUPACK
        if config.rack_tlp and handshake_rtt_s is not None:  # RFC 8985 6.2 step 1 on the handshake's sample
            nsamp0, min_rtt0 = 1, handshake_rtt_s
    PI = _filled(np.int64, N_PI, {
        P_SENDER: _SENDERS[config.sender],
        P_N: n,
        P_SIZE: size_bytes,
        P_MSS: mss,
        P_B: LINUX_DELACK_SEGMENTS if config.linux_delack else params.b,
        P_DUPT: params.dup_t,
        P_LTLO: lt_lo,
        P_LTHI: lt_hi,
        P_LT: int(params.dup_lt is not None),
        P_TAIL: int(params.tail_retransmit),
        P_ER: int(params.early_retransmit),
        P_FIXED: int(fixed_rto),
        P_RULE: rule,
        P_RULE_HOOKS: sum(1 << h for h in params.rule.law_hooks),
        P_HDR: config.header_bytes,
        P_QUICK: config.quick_acks,
        P_FIN: int(config.fin),
        P_TS: int(config.rtt_sampling == "timestamps"),
        P_SACK: int(config.sender == "sack"),
        P_PRR: _PRR[config.prr],
        P_RACK: int(config.sender == "sack" and config.rack_tlp),
        P_NSAMP0: nsamp0,
        P_NDATA: n_data,
        P_RKTS: int(config.rack_tsecr_test),
        P_LOSTONLY: int(config.rxt_lost_only),
        P_QLIM: -1 if config.queue_packets is None else config.queue_packets,
        P_COMPRESS: int(config.sack_compression),
        P_QKDATA: int(config.quickack_on_data),
        P_TSODEF: int(config.tso_defer),
        P_RTORST: int(config.rto_restart),
        P_ACKSACKED: int(config.grow_acked_sacked),
        P_CWLIM: int(config.cwnd_limited_growth),
        P_LNXPRR: int(config.linux_prr),
    })
    PF = _filled(np.float64, N_PF, {
        Q_RWNDB: rwnd_bytes,
        Q_MINRTO: config.min_rto_s,
        Q_MAXRTO: config.max_rto_s,
        Q_G: config.clock_granularity_s,
        Q_DELACK: delack_wait(config),
        Q_RATE: config.link_rate_bps,
        Q_DELAY: config.one_way_delay(params.rtt_s),
        Q_P: params.p,
        Q_PACK: config.p_ack,
        Q_RTO0: rto,
        Q_SRTT0: srtt,
        Q_RTTVAR0: rttvar,
        Q_MINRTT0: min_rtt0,
        Q_ACKSER: config.ack_serialisation_s(),
        Q_HZ: float(config.timer_hz),
    })
    # The rule's parameters and its initial state vector (cwnd, ssthresh, ...), as the
    # rule's new_state made them.
    packed = params.rule.law_params
    if len(packed) > N_PARAMS:  # a rule's contract (growth.laws.N_PARAMS), not a user's input
        raise ValueError(f"rule {params.rule.name!r} packs {len(packed)} parameters, more than the "
                         f"engine's {N_PARAMS}")
    PF[:len(packed)] = packed
    v = st.v
    PF[Q_STATE0:Q_STATE0 + len(v)] = v
    return PI, PF


LINUX_DELACK_SEGMENTS = 2
"""``SimConfig.linux_delack``: the in-order segments unacknowledged at which Linux's receiver
ACKs at once after quick-ack mode (``net/ipv4/tcp_input.c`` ``__tcp_ack_snd_check``:
``rcv_nxt - rcv_wup > rcv_mss``, more than one full segment)."""


def delack_wait(config) -> float:
    """Seconds from a held in-order segment to its delayed ACK: ``config.delack_timeout_s``;
    with ``linux_delack`` and ``timer_hz`` > 0, Linux's ``tcp_send_delayed_ack``: ``ato``
    (``TCP_ATO_MIN``, ``delack_timeout_s``) in whole jiffies (``usecs_to_jiffies`` rounds
    up), ``sk_reset_timer`` at jiffies + ato, fired by the timer wheel
    (:func:`.flat.wheel_wait`, the phase at its mean)."""
    hz = config.timer_hz
    if not config.linux_delack or hz <= 0:
        return config.delack_timeout_s
    return flat.wheel_wait(math.ceil(config.delack_timeout_s * hz - 1e-6), float(hz))


def initial_rtt(rto_fixed_s: float, fixed_rto: bool, handshake_rtt_s, config) -> tuple[float, float, float]:
    """SRTT, RTTVAR and RTO (seconds) of the rfc and sack senders before the first data segment.

    RFC 6298 (2.1): no SRTT yet (-1) and the initial RTO (``config.initial_rto_s``, in
    whole jiffies with ``config.timer_hz``: :func:`.flat.rto_jiffies`); the paper's fixed
    RTO (``fixed_rto``) is ``rto_fixed_s`` and has no estimator. With the handshake's sample
    ``handshake_rtt_s`` (seconds; ``SimConfig.handshake_rtt``, Linux ``tcp_ack_update_rtt``
    on the SYN-ACK) the estimator takes it as its first measurement, (2.2), bounded by (2.4)
    and (2.5): :func:`.flat.rtt_sample` itself, on a state that holds nothing else, so the
    values are the engine's own to the last bit.

    Parameters
    ----------
    rto_fixed_s : float
        The paper's fixed RTO (``TcpParams.rto``), seconds.
    fixed_rto : bool
        ``SimConfig.rto_rule == "paper"``.
    handshake_rtt_s : float or None
        The SYN / SYN-ACK sample, seconds, or ``None``.
    config : SimConfig
        Timer constants.

    Returns
    -------
    (float, float, float)
        SRTT (-1.0 before any sample), RTTVAR and RTO, seconds.
    """
    if fixed_rto:
        return -1.0, 0.0, rto_fixed_s
    hz = float(config.timer_hz)
    F = np.zeros(N_FS)
    F[SRTT] = -1.0
    F[RTO] = rto_jiffies(config.initial_rto_s, hz)
    if handshake_rtt_s is not None:
        PF = _filled(np.float64, N_PF, {Q_MINRTO: config.min_rto_s, Q_MAXRTO: config.max_rto_s,
                                        Q_G: config.clock_granularity_s, Q_HZ: hz})
        # no rule hook, no RACK, the RFC 6298 estimator: what the handshake's sample feeds
        flat.rtt_sample(handshake_rtt_s, np.zeros(N_IS, np.int64), F, np.zeros(N_PI, np.int64), PF)
    return F[SRTT], F[RTTVAR], F[RTO]


def scripted(PI, PF, counts):
    """The parameter arrays of :func:`pack_params` for scripted losses: ``counts[k]`` first
    transmissions of segment ``k`` dropped (:data:`.flat.P_DROPS`), no random draw."""
    PF = PF.copy()
    PF[Q_P] = PF[Q_PACK] = 0.0
    return np.concatenate([PI, np.asarray(counts, np.int64)]), PF


def _filled(dtype, size: int, values: dict) -> np.ndarray:
    """An array of ``size`` zeros of ``dtype`` with ``values`` (slot -> value) set."""
    a = np.zeros(size, dtype)
    for slot, value in values.items():
        a[slot] = value
    return a


def start(I, F, S, SF, PI, PF, u, QI, QF):
    """The first window, sent at t = 0 (outside any event)."""
    sender = PI[P_SENDER]
    if sender == SENDER_NS3:
        n3_start(I)
        n3_send_allowed(0.0, I, F, S, SF, PI, PF, u, QI, QF)
    elif sender == SENDER_SACK:
        sk_send_allowed(0.0, I, F, S, SF, PI, PF, u, QI, QF)
        sk_cwnd_validate(0, I, F, S, PI, PF)
        if PI[P_RACK] != 0 and I[FAIL] == 0:
            rk_timers(0.0, 0.0, I[SENT_NEW] != 0, False, I, F, PI, PF, S, SF)
            I[SENT_NEW] = 0
    else:
        send_new(0.0, I, F, S, SF, PI, PF, u, QI, QF)


def on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF):
    """An ACK reaches the sender."""
    sender = PI[P_SENDER]
    if sender == SENDER_NS3:
        n3_on_ack(ack, tsecr, now, I, F, S, SF, PI, PF, u, QI, QF)
    elif sender == SENDER_SACK:
        sk_on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF)
    else:
        rfc_on_ack(ack, tsecr, now, I, F, S, SF, PI, PF, u, QI, QF)


def on_rto(now, I, F, S, SF, PI, PF, u, QI, QF):
    """The retransmission timer expires."""
    I[RTO_ON] = 0
    sender = PI[P_SENDER]
    if sender == SENDER_NS3:
        n3_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif sender == SENDER_SACK:
        sk_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF)
    else:
        rfc_on_rto(now, I, F, S, SF, PI, PF, u, QI, QF)


def run_one(u, I, F, S, SF, RB, blk, PI, PF, QI, QF):
    """One transfer on the uniforms ``u``; returns 0, or the FAIL_* reason to run it again
    (:func:`~latency_model.sim.run_transfer` draws more uniforms or grows the queues)."""
    reset(I, F, S, PI, PF)
    if PI[P_QLIM] >= 0 and F[BUSY] > 0.0:  # the handshake's ACK is on the link (Link)
        backlog_push(F[BUSY], I, QF)
    start(I, F, S, SF, PI, PF, u, QI, QF)
    while I[DONE] == 0 and I[FAIL] == 0:
        kind, now = next_event(I, F, QI, QF)
        if kind == EV_DATA:
            seg, tsval = pop_data(I, QI, QF)
            if tracing(F):  # the receiver's rows show the sender's state, unchanged by it
                F[TR_FLIGHT] = sender_flight(I, PI, S)
                trace_row(TR_ARRIVAL, now, seg, F[TR_FLIGHT], F)
            on_segment(seg, tsval, now, I, F, S, PI, PF, u, RB, QI, QF)
        elif kind == EV_ACK:
            ack, tsecr, nb = pop_ack(I, QI, QF, blk)
            on_ack(ack, tsecr, now, blk, nb, I, F, S, SF, PI, PF, u, QI, QF)
        elif kind == EV_RTO:
            on_rto(now, I, F, S, SF, PI, PF, u, QI, QF)
        elif kind == EV_DELACK:
            if tracing(F):
                F[TR_FLIGHT] = sender_flight(I, PI, S)
            on_delack_timer(now, I, F, PI, PF, u, RB, QI, QF)
        elif kind == EV_RACK:
            I[RK_ON] = 0
            rk_on_timer(now, I, F, S, SF, PI, PF, u, QI, QF)
        else:
            I[FAIL] = FAIL_STALL
    return I[FAIL]


def run_batch(U, PI, PF, out, status):
    """Run ``U.shape[0]`` transfers; row ``r`` of ``U`` holds run ``r``'s uniforms.

    Parameters
    ----------
    U : ndarray of float64, shape (runs, k)
        Per-run uniforms: the first ``block_size(n, p, p_ack)`` of
        ``Generator(PCG64(child)).random``, consumed in order.
    PI, PF : ndarray of int64 / float64
        Parameters from :func:`pack_params`.
    out : ndarray of float64, shape (runs, N_OUT)
        Filled with the measures named in :data:`OUT_FIELDS`.
    status : ndarray of int64, shape (runs,)
        0 for a completed run; non-zero (FAIL_UNIFORMS, FAIL_QUEUE, FAIL_STALL) if the run
        must be redone alone (:func:`~latency_model.sim.run_transfer`: more uniforms of the
        same stream, longer queues).
    """
    n = PI[P_N]
    cap = 4 * (n + int(PF[Q_RWNDB] / PI[P_MSS])) + 64
    state = (np.zeros(N_IS, np.int64), np.zeros(N_FS, np.float64), np.zeros((N_S, n), np.int64),
             np.zeros((N_SF, n), np.float64), np.zeros((2, n + 1), np.int64), np.zeros(6, np.int64),
             np.zeros((N_QI, cap), np.int64), np.zeros((N_QF, cap), np.float64))
    # views numba does not reference-count (accel.uncounted: every helper call would
    # otherwise increment and decrement each array it is given, atomically)
    U, PI, PF, out, status = uncounted((U, PI, PF, out, status))
    I, F, S, SF, RB, blk, QI, QF = uncounted(state)
    for r in range(U.shape[0]):
        status[r] = run_one(U[r], I, F, S, SF, RB, blk, PI, PF, QI, QF)
        measures(I, F, S, n, out[r])
    held(state)


def measures(I, F, S, n, row):
    """Fill ``row`` with the run's measures (:data:`OUT_FIELDS`)."""
    row[0] = F[COMPL]
    row[1] = F[DELIV]
    row[2] = I[LOSTD]
    row[3] = I[LOSTA]
    row[4] = S[S_TXC, :n].sum()
    row[5] = I[RETX]
    row[6] = I[TOUT]
    row[7] = I[MAXBO]
    row[8] = I[FRX]
    row[9] = I[FIRSTL]


def run_single(u, PI, PF, F, cap, out):
    """One transfer on the uniforms ``u`` (scripted losses: :data:`.flat.P_DROPS`), over the
    float state ``F`` (with a trace buffer past ``N_FS`` to trace it: :data:`.flat.TR_COUNT`)
    and link queues of ``cap`` packets; ``out`` (N_OUT + 2) gets the measures, the first
    drop's index (-1: none) and the tail loss probes sent. Returns 0 or the FAIL_* reason
    (the caller draws more uniforms, grows the queues and runs it again)."""
    n = PI[P_N]
    I = np.zeros(N_IS, np.int64)
    S = np.zeros((N_S, n), np.int64)
    fail = run_one(u, I, F, S, np.zeros((N_SF, n), np.float64), np.zeros((2, n + 1), np.int64),
                   np.zeros(6, np.int64), PI, PF, np.zeros((N_QI, cap), np.int64), np.zeros((N_QF, cap), np.float64))
    measures(I, F, S, n, out)
    out[N_OUT] = I[FDROP]
    out[N_OUT + 1] = I[TLPN]
    return fail


# Events of one flow of a multi-flow scenario (:func:`flow_event`, :mod:`.kernel_multi`).
FLOW_SEND, FLOW_ACK, FLOW_WINDOW_ACK, FLOW_RTO, FLOW_SEGMENT, FLOW_DELACK = range(6)


def flow_event(kind, value, now, seq, I, F, S, SF, RB, blk, PI, PF, u, QI, QF, O):
    """One event of one flow of a multi-flow scenario, on the flow's state, at ``now``
    (seconds), the engine's ``seq`` counter starting at ``seq`` (the scenario's).

    ``kind``: ``FLOW_SEND`` sends what the windows admit (the flow's start, a router signal);
    ``FLOW_ACK`` a cumulative ACK for ``value`` segments (:func:`on_ack`); ``FLOW_WINDOW_ACK``
    the same carrying a new receiver window (NGWA, already in ``PF[Q_RWNDB]``), after which the
    sender sends what the window admits (RFC 793: a window update may open room on any ACK);
    ``FLOW_RTO`` the retransmission timer (:func:`on_rto`); ``FLOW_SEGMENT`` data segment
    ``value`` reaching the receiver (:func:`.flat.on_segment`); ``FLOW_DELACK`` the delayed-ACK
    timer. The queues ``QI``, ``QF`` are empty when it starts (the caller took the last event's
    packets) and hold the packets it sends, from position 0. ``O`` (int64, 8) gets what the
    caller needs: the data segments and ACKs sent, the ``seq`` of the retransmission and
    delayed-ACK timers if the event armed them (-1 otherwise), the transfer done (0/1), the
    duplicate-ACK count before and after, the ``seq`` counter after. Returns ``I[FAIL]``."""
    I[DQH] = I[DQN] = I[AQH] = I[AQN] = 0
    O[5] = I[DUP]
    I[SEQ] = seq
    if kind == FLOW_ACK or kind == FLOW_WINDOW_ACK:
        on_ack(value, 0.0, now, blk, 0, I, F, S, SF, PI, PF, u, QI, QF)
        if kind == FLOW_WINDOW_ACK and I[DONE] == 0 and I[FAIL] == 0:
            send_new(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif kind == FLOW_SEGMENT:
        on_segment(value, 0.0, now, I, F, S, PI, PF, u, RB, QI, QF)
    elif kind == FLOW_RTO:
        on_rto(now, I, F, S, SF, PI, PF, u, QI, QF)
    elif kind == FLOW_DELACK:
        on_delack_timer(now, I, F, PI, PF, u, RB, QI, QF)
    else:
        send_new(now, I, F, S, SF, PI, PF, u, QI, QF)
    O[0] = I[DQN]
    O[1] = I[AQN]
    O[2] = I[RTO_SEQ] if I[RTO_ON] != 0 and I[RTO_SEQ] >= seq else -1
    O[3] = I[DL_SEQ] if I[DL_ON] != 0 and I[DL_SEQ] >= seq else -1
    O[4] = I[DONE]
    O[6] = I[DUP]
    O[7] = I[SEQ]
    return I[FAIL]


_MODULES = (flat, kernel_rfc, kernel_ns3, kernel_sack)


def _kernel_functions() -> list[str]:
    """Names of the functions the compiled :func:`run_batch` calls: every function of the
    engine's modules (:mod:`.flat`, the senders) and the dispatch of this one."""
    names = []
    for m in _MODULES:
        names += [k for k, v in vars(m).items()
                  if isinstance(v, types.FunctionType) and v.__module__ == m.__name__ and not k.startswith("_")]
    return names + ["start", "on_ack", "on_rto", "run_one", "measures"]


def compile_namespace(laws: dict) -> dict:
    """The namespace :func:`compiled_run_batch` compiles in: this module's and the engine
    modules' globals, with the rules' compiled ``laws`` (``law_0``, ...: the names
    :func:`~latency_model.growth.laws.rule_law` dispatches to)."""
    ns = dict(globals())
    for m in _MODULES:
        ns.update((k, v) for k, v in vars(m).items() if not k.startswith("__"))
    ns.update(laws)
    ns["__file__"] = __file__
    return ns


@functools.cache
def _compiled():
    """The numba-compiled :func:`run_batch` and :func:`run_single`, or ``None`` when numba
    is unavailable. Compiled once per process (and cached on disk by numba)."""
    from ..growth.laws import compiled_laws  # noqa: PLC0415

    laws = compiled_laws()
    if laws is None:
        return None
    return compile_twins(compile_namespace(laws), ["rule_law", *_kernel_functions()],
                         (run_batch, run_single, flow_event))


def compiled_run_batch():
    """The numba-compiled :func:`run_batch`, or ``None`` when numba is unavailable."""
    fns = _compiled()
    return None if fns is None else fns[0]


def compiled_run_single():
    """The numba-compiled :func:`run_single`, or ``None`` when numba is unavailable."""
    fns = _compiled()
    return None if fns is None else fns[1]


def compiled_flow_event():
    """The numba-compiled :func:`flow_event`, or ``None`` when numba is unavailable."""
    fns = _compiled()
    return None if fns is None else fns[2]
