"""The ``linux`` profile's kernel mechanisms, pinned by traces derived by hand on the flat
engine (``run_transfer``), whose Monte Carlo batch (interpreted and compiled) agrees with it.

Setting unless stated: ``SimConfig.profile("linux")`` (52-byte headers, timestamps, SACK
with RACK-TLP and PRR, minimum RTO and clock granularity 200 ms, 16 quick ACKs), MSS 500 B
at 100 Mb/s (a data packet's serialisation S = 552 x 8 / 1e8 s = 44.16 us), one-way delay
0.05 s, W0 = 10. ACKs take no serialisation. Segments are 0-based.

The handshake's sample (``handshake_rtt``): a SYN and a SYN-ACK of 52 + 8 bytes each
(serialisation 4.8 us), so r0 = 0.1 + 9.6 us; the first RTT sample gives SRTT = r0, RTTVAR =
r0 / 2 and RTO = SRTT + max(4 RTTVAR, 200 ms) = 3 r0 (Linux ``tcp_rtt_estimator``: RTO =
3 RTT on the first sample, at least SRTT + 200 ms).
"""

import math

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_transfer
from latency_model.sim import kernel as K

from _kernel_twin import KernelTwin, reference

MSS = 500
S = (MSS + 52) * 8 / 100e6
R0 = 0.1 + 2 * (52 + 8) * 8 / 100e6
F = 52 * 8 / 100e6  # a bare FIN's serialisation (header only)
# Exact timers and none of the receiver's and sender's Linux refinements below: each mechanism alone.
LINUX = SimConfig.profile("linux", delay_s=0.05, timer_hz=0, sack_compression=False, quickack_on_data=False,
                          tso_defer=False, rto_restart=False, grow_acked_sacked=False, cwnd_limited_growth=False,
                          linux_prr=False, linux_delack=False)
LINUX_HZ = SimConfig.profile("linux", delay_s=0.05)  # the profile: RACK's timer in jiffies of 4 ms
NO_BARE = LINUX.replace(bare_fin=False)  # the FIN on the last data segment
PARAMS = TcpParams(p=0.0, w0=10, w_ss=30, rwnd=30, mss_bytes=MSS, rtt_s=0.1)
COMPILED = K.compiled_run_batch()
KERNELS = [K.run_batch] + ([COMPILED] if COMPILED is not None else [])
TWIN = KernelTwin(K.pack_params, K)


def _both_engines(params, n, config, seeds=40):
    """The Monte Carlo batch (interpreted and compiled) equals ``run_transfer`` on random
    losses (p = 0.2)."""
    params = params.replace(p=0.2)
    children = np.random.SeedSequence(46).spawn(seeds)
    ref = reference(params, n * MSS, config, children)
    for fn in KERNELS:
        TWIN.check_identical(fn, params, n * MSS, config, children, ref)


# The handshake's RTT sample -----------------------------------------------------------------

def test_handshake_sample_sets_the_first_rto_and_probe():
    # N = 1, segment 0 lost. Before any data: SRTT = r0, RTO = 3 r0 (0.300 s). The probe's
    # PTO with one segment out is 2 SRTT + 200 ms = 0.400 s, capped at the RTO's expiry,
    # 3 r0: the probe (no new data: segment 0 again) leaves at 3 r0 and is ACKed at once
    # (FIN) one RTT and S later. Without the sample the PTO is RFC 8985's 1 s: 1.1 + S.
    res, rows = run_transfer(PARAMS, size_packets=1, drops=[0], config=NO_BARE, trace=True)
    assert [r.time_s for r in rows if r.event == "tlp_probe"] == [pytest.approx(3 * R0, abs=1e-12)]
    assert rows[0].rto_s == pytest.approx(3 * R0, abs=1e-12)
    assert res.completion_s == pytest.approx(3 * R0 + 0.1 + S, abs=1e-12)
    old = run_transfer(PARAMS, size_packets=1, drops=[0], config=NO_BARE.replace(handshake_rtt=False))
    assert old.completion_s == pytest.approx(1.1 + S, abs=1e-12)


def test_handshake_sample_without_rack_times_out_at_three_rtt():
    # The same loss without RACK-TLP: the RTO (3 r0) resends segment 0.
    cfg = NO_BARE.replace(rack_tlp=False)
    res = run_transfer(PARAMS, size_packets=1, drops=[0], config=cfg)
    assert res.timeouts == 1
    assert res.completion_s == pytest.approx(3 * R0 + 0.1 + S, abs=1e-12)


def test_handshake_sample_on_the_rfc_sender():
    # The RFC sender, 40-byte headers (SYN 48 B), minimum RTO 200 ms, G = 0: RTO = 3 r0.
    cfg = SimConfig(delay_s=0.05, min_rto_s=0.2, handshake_rtt=True)
    s40 = (MSS + 40) * 8 / 100e6
    r0 = 0.1 + 2 * (40 + 8) * 8 / 100e6
    res = run_transfer(PARAMS.replace(w0=2), size_packets=1, drops=[0], config=cfg)
    assert res.completion_s == pytest.approx(3 * r0 + 0.1 + s40, abs=1e-12)
    # With RFC 6298's 1 s floor the sample changes nothing here.
    res1 = run_transfer(PARAMS.replace(w0=2), size_packets=1, drops=[0], config=cfg.replace(min_rto_s=1.0))
    assert res1.completion_s == pytest.approx(1.1 + s40, abs=1e-12)


@pytest.mark.parametrize("config", [NO_BARE, NO_BARE.replace(rack_tlp=False),
                                    SimConfig(delay_s=0.05, min_rto_s=0.2, handshake_rtt=True)],
                         ids=["linux", "linux-no-rack", "rfc-sender"])
@pytest.mark.parametrize("n", [1, 3, 12, 40])
def test_handshake_sample_both_engines_agree(config, n):
    _both_engines(PARAMS, n, config)


def test_handshake_rtt_refused_with_the_ns3_sender():
    with pytest.raises(ValueError, match="handshake_rtt"):
        SimConfig(sender="ns3", rtt_sampling="ns3", handshake_rtt=True)
    assert SimConfig.profile("linux", sender="ns3").handshake_rtt is False


# The bare FIN -----------------------------------------------------------------------------------

def test_bare_fin_sack_exposes_a_lost_single_segment():
    # N = 1, segment 0 lost. t = 0: segment 0 and, the write having left whole, the bare FIN
    # (slot 1, header only: F) behind it. The FIN arrives above the hole at 0.05 + S + F: ACK 0
    # with SACK (1, 2) at once, at the sender at 0.1 + S + F. RACK: the FIN (sent at 0) is
    # RACK's segment, segment 0 was sent before it (same time, lower sequence): lost once
    # 0 + RACK.rtt + reo_wnd <= now, i.e. after reo_wnd = min_RTT / 4 = r0 / 4 (one segment
    # SACKed, min_RTT = r0 from the handshake). At t1 = 0.1 + S + F + r0/4 the reordering
    # timer marks it lost, recovery resends it; it fills the hole (with the FIN held: ACK 2)
    # and the ACK returns at t1 + S + 0.1. Before: the probe at 3 r0 (see above).
    res, rows = run_transfer(PARAMS, size_packets=1, drops=[0], config=LINUX, trace=True)
    t1 = 0.1 + S + F + R0 / 4
    assert [(r.event, r.segment, r.time_s) for r in rows if r.event in ("rack_lost", "fast_retransmit")] == [
        ("rack_lost", 0, pytest.approx(t1, abs=1e-12)), ("fast_retransmit", 0, pytest.approx(t1, abs=1e-12))]
    assert res.completion_s == pytest.approx(t1 + S + 0.1, abs=1e-12)
    assert res.delivered_s == pytest.approx(t1 + S + 0.05, abs=1e-12)
    assert (res.tlp_probes, res.timeouts, res.retransmissions) == (0, 0, 1)


def test_bare_fin_waits_for_cwnd_when_the_write_fills_the_initial_window():
    # N = 10 = W0, segment 9 lost. The FIN counts one segment against cwnd: it leaves at
    # the first ACK (0.1 + S; cwnd 11 MSS, flight 9 MSS), arrives at 0.15 + S + F, and its
    # SACK reaches the sender at 0.2 + S + F. Segment 9 (sent at 0) is then past
    # RACK.rtt (0.1 + F) + reo_wnd already: fast retransmit at once, ACK at 0.3 + 2S + F.
    res, rows = run_transfer(PARAMS, size_packets=10, drops=[9], config=LINUX, trace=True)
    assert [r.time_s for r in rows if r.event == "send" and r.segment == 10] == [
        pytest.approx(0.1 + S, abs=1e-12)]
    assert [r.time_s for r in rows if r.event == "fast_retransmit"] == [pytest.approx(0.2 + S + F, abs=1e-12)]
    assert res.completion_s == pytest.approx(0.3 + 2 * S + F, abs=1e-12)


@pytest.mark.parametrize("n, drops", [(1, []), (10, []), (11, [10]), (20, [19]), (15, [3, 14])])
def test_bare_fin_changes_nothing_without_a_hole_below_it_or_beyond_the_initial_window(n, drops):
    # Without loss the transfer ends at the ACK of the last data byte, before the FIN's;
    # from N = 11 the last data segment was still unsent at close, so the FIN rides on it.
    a = run_transfer(PARAMS, size_packets=n, drops=drops, config=LINUX)
    b = run_transfer(PARAMS, size_packets=n, drops=drops, config=NO_BARE)
    assert a.completion_s == b.completion_s
    assert a.delivered_s == b.delivered_s


def test_bare_fin_is_never_dropped_and_draws_no_uniform():
    # Random losses: the FIN draws nothing, so the data segments see the same uniforms with
    # and without it, and a transfer without a lost data segment ends alike.
    for seed in range(30):
        a = run_transfer(PARAMS.replace(p=0.3), size_packets=3, config=LINUX, rng=seed)
        b = run_transfer(PARAMS.replace(p=0.3), size_packets=3, config=NO_BARE, rng=seed)
        assert a.first_transmissions_lost == b.first_transmissions_lost
        if a.first_transmissions_lost == 0:
            assert a.completion_s == b.completion_s


@pytest.mark.parametrize("n", [1, 2, 3, 8, 10, 11, 40])
def test_bare_fin_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX)
    _both_engines(PARAMS.replace(w0=2), n, LINUX)  # a bare FIN only where n <= 2


def test_bare_fin_needs_the_sack_sender_and_a_fin():
    with pytest.raises(ValueError, match="bare_fin"):
        SimConfig(bare_fin=True)
    with pytest.raises(ValueError, match="bare_fin"):
        SimConfig(sender="sack", fin=False, bare_fin=True)
    assert SimConfig.profile("linux", sender="rfc").bare_fin is False
    assert SimConfig.profile("linux", fin=False).bare_fin is False


# RACK's update on a SACKed retransmission ---------------------------------------------------

def test_rack_advances_on_a_sacked_retransmission_as_linux_does():
    # N = 3, segment 0 lost twice, segment 2 once; the bare FIN (slot 3) behind them. The
    # SACKs of 1 and of the FIN (sent at 0) arm RACK's reordering timer for reo_wnd = r0 / 4
    # from the FIN's SACK: at t1 = 0.1 + 3S + F + r0/4 segments 0 and 2 are marked lost and
    # resent (0 at t1, lost again; 2 behind it). 2's SACK arrives at t1 + 2S + 0.1 and echoes
    # TS.Recent = 0 (an out-of-order segment does not update it, RFC 7323 4.3). Linux
    # (tcp_rack_advance) takes it: RTT 0.1 + 2S >= min_RTT = r0. RACK's segment is now 2's
    # retransmission, sent with 0's at t1 but later in sequence, so 0's is lost at once
    # (reo_wnd 0 in recovery): resent at t2 = t1 + 2S + 0.1, ACK 4 at t2 + S + 0.1. With
    # RFC 8985's echo test the SACK is refused, nothing marks 0 again and the RTO repairs it.
    drops = {0: 2, 2: 1}
    res, rows = run_transfer(PARAMS, size_packets=3, drops=drops, config=LINUX, trace=True)
    t1 = 0.1 + 3 * S + F + R0 / 4
    t2 = t1 + 2 * S + 0.1
    assert [(r.segment, r.time_s) for r in rows if r.event == "retransmit"] == [
        (0, pytest.approx(t1, abs=1e-12)), (2, pytest.approx(t1 + 0.0, abs=1e-12)), (0, pytest.approx(t2, abs=1e-12))]
    assert res.completion_s == pytest.approx(t2 + S + 0.1, abs=1e-12)
    assert res.timeouts == 0
    rfc = run_transfer(PARAMS, size_packets=3, drops=drops, config=LINUX.replace(rack_tsecr_test=True))
    assert rfc.timeouts == 1 and rfc.completion_s > res.completion_s + 0.1


@pytest.mark.parametrize("n", [3, 8, 20, 40])
def test_rack_without_the_echo_test_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX)
    _both_engines(PARAMS, n, LINUX.replace(bare_fin=False, handshake_rtt=False))


# Retransmitting marked-lost segments only (no rescue) -----------------------------------------

def test_no_rescue_retransmission_lets_a_later_sack_mark_the_hole():
    # N = 20, segments 4 and 18 lost. Recovery for 4 sends new data as PRR allows: 18 at about
    # 0.1 s, 19 (the last) at t19 (about 0.2 s). RFC 6675 then also resends 19 as the rescue
    # (rule 4) when the ACKs for 5..17 arrive; no later SACK covers anything sent after 18,
    # so 18 waits for the RTO. Linux resends only marked-lost segments: the SACK of the
    # original 19, at t19 + S + 0.1, makes it RACK's segment and 18 (sent before it, more
    # than RACK.rtt ago) is lost at once: resent then, ACK 20 one RTT and S later. (Without
    # implicit Limited Transmit, which would send 19 with 18 already.)
    cfg = LINUX.replace(implicit_lt=False)
    res, rows = run_transfer(PARAMS, size_packets=20, drops=[4, 18], config=cfg, trace=True)
    (t19,) = [r.time_s for r in rows if r.event == "send" and r.segment == 19]
    assert [(r.segment, r.time_s) for r in rows if r.event == "retransmit"] == [
        (4, pytest.approx(0.1 + 8 * S, abs=1e-12)), (18, pytest.approx(t19 + S + 0.1, abs=1e-12))]
    assert res.completion_s == pytest.approx(t19 + 2 * S + 0.2, abs=1e-12)
    assert res.timeouts == 0
    rfc = run_transfer(PARAMS, size_packets=20, drops=[4, 18], config=cfg.replace(rxt_lost_only=False),
                       trace=True)
    rescue = [r.segment for r in rfc[1] if r.event == "retransmit"]
    assert rescue[:2] == [4, 19] and rfc[0].timeouts == 1


@pytest.mark.parametrize("n", [5, 20, 40])
def test_rxt_lost_only_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX.replace(rack_tlp=False))  # IsLost instead of RACK's marks
    _both_engines(PARAMS.replace(w0=3), n, LINUX)


# Implicit Limited Transmit ---------------------------------------------------------------------

def test_implicit_limited_transmit_sends_on_every_duplicate_ack():
    # N = 20, W0 = 10, segment 4 lost. ACKs 1-4 (at 0.1 + kS, k = 1..4) grow cwnd to 14 MSS
    # and send 10-17. The SACKs of 5 and 6 (0.1 + 6S, 0.1 + 7S) each free one segment of
    # the pipe (14 outstanding, SACKed ones out of it): 18 and 19 leave then, as in Linux
    # (tcp_packets_in_flight); without Limited Transmit they wait for the recovery. The SACK
    # of 7 (0.1 + 8S) is the third: reo_wnd 0 and 4 (sent at 4S) is lost, resent behind 19
    # on the link (it leaves at 0.1 + 11S), arrives at 0.15 + 12S after 10-19 and the ACK
    # for all 20 returns at 0.2 + 12S. Kernel: 0.2007 s (single_loss.csv).
    res, rows = run_transfer(PARAMS, size_packets=20, drops=[4], config=LINUX, trace=True)
    assert [(r.segment, r.time_s) for r in rows if r.event == "send" and r.segment >= 18] == [
        (18, pytest.approx(0.1 + 6 * S, abs=1e-12)), (19, pytest.approx(0.1 + 7 * S, abs=1e-12))]
    assert [r.time_s for r in rows if r.event == "fast_retransmit"] == [pytest.approx(0.1 + 8 * S, abs=1e-12)]
    assert res.completion_s == pytest.approx(0.2 + 12 * S, abs=1e-12)
    old = run_transfer(PARAMS, size_packets=20, drops=[4], config=LINUX.replace(implicit_lt=False))
    assert old.completion_s > res.completion_s + 0.09  # one more RTT


@pytest.mark.parametrize("n", [12, 20, 40])
def test_implicit_lt_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX)
    _both_engines(PARAMS, n, LINUX.replace(rack_tlp=False))


# RACK's reordering timer in jiffies (timer_hz) ------------------------------------------------

def test_rack_timer_in_jiffies_hand_trace():
    # As test_bare_fin_sack_exposes_a_lost_single_segment, with CONFIG_HZ = 250 (tau = 4 ms):
    # at the FIN's SACK (t0 = 0.1 + S + F) RACK's wait is remaining = r0 / 4 (25.0024 ms);
    # tcp_rack_mark_lost arms J = usecs_to_jiffies(remaining + 2 ms) = ceil(27.0024 / 4) = 7
    # jiffies, which the wheel fires (J + 1) tau - phi later: (7 + 1/2) x 4 = 30 ms at the
    # phase's mean. Kernel (validation/LINUX.md item 5(a)): 0.2297-0.2319 s derived.
    assert LINUX_HZ.timer_hz == 250
    t0 = 0.1 + S + F
    assert math.ceil((R0 / 4 + 0.002) * 250) == 7
    for n, drops in ((1, [0]), (2, [0]), (2, [1])):
        res, rows = run_transfer(PARAMS, size_packets=n, drops=drops, config=LINUX_HZ, trace=True)
        t1 = 0.1 + (S if n == 1 else 2 * S) + F + 0.030
        assert [r.time_s for r in rows if r.event == "rack_lost"] == [pytest.approx(t1, abs=1e-12)]
        assert res.completion_s == pytest.approx(t1 + S + 0.1, abs=1e-12)
        assert (res.tlp_probes, res.timeouts, res.retransmissions) == (0, 0, 1)
    exact, _ = run_transfer(PARAMS, size_packets=1, drops=[0], config=LINUX, trace=True)
    assert exact.completion_s == pytest.approx(t0 + R0 / 4 + S + 0.1, abs=1e-12)


def test_rack_timer_wait_rounds_up_to_whole_jiffies():
    from latency_model.sim.flat import reo_timer_wait

    assert reo_timer_wait(0.0123, 0.0) == 0.0123  # exact timers
    assert reo_timer_wait(0.002, 250.0) == pytest.approx(0.006)  # 4 ms: J = 1, 1.5 jiffies
    assert reo_timer_wait(0.0020001, 250.0) == pytest.approx(0.010)  # just over: J = 2
    assert reo_timer_wait(0.023, 1000.0) == pytest.approx(0.0255)  # HZ = 1000: J = 25


# The RTO in whole jiffies on the timer wheel (timer_hz) -----------------------------------------

def test_timer_wheel_mean_wait_per_level():
    from latency_model.sim.flat import rto_jiffies, rto_timer_wait, wheel_wait

    # kernel/time/timer.c: level 0 below LVL_START(1) = 63 jiffies fires J + 1 - phi jiffies
    # after arming (mean J + 1/2); level 1 (63 <= J < 504) at the first multiple of 8 after
    # the expiry E: J + (8 - E mod 8) - phi, mean J + 4.5 - 0.5; level 2 (to 4032), of 64: J + 32.
    mean_l1 = np.mean([8 - e % 8 - phi for e in range(8) for phi in (0.25, 0.75)])
    assert mean_l1 == 4.0
    assert [wheel_wait(j, 250.0) * 250 for j in (1, 62, 63, 503, 504)] == pytest.approx(
        [1.5, 62.5, 67.0, 507.0, 536.0], abs=1e-9)
    assert rto_jiffies(0.3000288, 250.0) == pytest.approx(0.304)  # usecs_to_jiffies rounds up: 76
    assert rto_jiffies(0.3, 250.0) == pytest.approx(0.300)  # an exact multiple stays: 75
    assert rto_jiffies(0.3000288, 0.0) == 0.3000288 and rto_timer_wait(0.3000288, 0.0) == 0.3000288
    assert rto_timer_wait(0.304, 250.0) == pytest.approx(0.320)  # 76 jiffies, level 1: 80


def test_rto_in_jiffies_on_the_wheel_hand_trace():
    # N = 1 (FIN on the segment), segment 0 dropped five times, CONFIG_HZ = 250. The
    # handshake's sample gives RTO = 3 r0 = 300.03 ms, stored as usecs_to_jiffies = 76
    # jiffies (304 ms, include/net/tcp.h __tcp_set_rto); the RTO armed at t = 0 sits on wheel
    # level 1: 76 + 4 = 80 jiffies at the phase's mean, 0.320 s. The probe (PTO 2 SRTT +
    # 200 ms = 0.400 s) is capped at that expiry: 0.320 s; the RTO restarted from it fires at
    # 0.640 s, then with the backed-off RTO 152 jiffies (level 1: +156) at 1.264 s, 304
    # (+308) at 2.496 s and 608 (level 2, granularity 64: +640) at 5.056 s; the sixth
    # transmission is ACKed 0.1 + S later.
    config = LINUX_HZ.replace(bare_fin=False)
    res, rows = run_transfer(PARAMS, size_packets=1, drops={0: 5}, config=config, trace=True)
    assert rows[0].rto_s == pytest.approx(0.304, abs=1e-12)
    assert [r.time_s for r in rows if r.event == "tlp_probe"] == [pytest.approx(0.320, abs=1e-12)]
    assert [r.time_s for r in rows if r.event == "timeout"] == pytest.approx(
        [0.640, 1.264, 2.496, 5.056], abs=1e-12)
    assert res.completion_s == pytest.approx(5.056 + 0.1 + S, abs=1e-12)
    assert (res.tlp_probes, res.timeouts, res.retransmissions) == (1, 4, 5)
    exact = run_transfer(PARAMS, size_packets=1, drops={0: 5}, config=NO_BARE)  # exact timers
    assert exact.completion_s == pytest.approx(3 * R0 * (1 + 1 + 2 + 4 + 8) + 0.1 + S, abs=1e-9)


@pytest.mark.parametrize("seg", [0, 3, 6, 9])
def test_rto_restarts_on_a_sack_of_a_segment_sent_before_the_heads_retransmission(seg):
    # N = 11, segment `seg` dropped twice (validation/LINUX.md item 5(b)). Segment 10 leaves
    # on the first ACK, at 0.1 + S (for seg = 0 on the first duplicate ACK, 0.1 + 2S); RACK
    # then retransmits `seg` (lost again) and segment 10's SACK, one RTT + S after it left,
    # newly SACKs a segment sent before the head's last transmission: tcp_clean_rtx_queue
    # restarts the RTO (76 jiffies, 80 on the wheel: 0.320 s) from it. The timeout's
    # retransmission is ACKed 0.1 + S later: 0.620 s (the kernel: 0.608-0.636 s derived,
    # 0.606-0.641 s measured); without the restart the RTO armed at the first SACK
    # (about 0.1002 s) fires 0.1 s earlier. For seg = 0 the receiver compresses segment
    # 10's SACK (no quick-ack mode before in-order data, three duplicate ACKs already sent
    # at rcv_nxt = 0): it leaves 1 ms after segment 10 arrives.
    res, rows = run_transfer(PARAMS, size_packets=11, drops={seg: 2}, config=LINUX_HZ, trace=True)
    t_sack = 0.1 + (2 * S + 0.001 if seg == 0 else S) + 0.1 + S
    assert [r.time_s for r in rows if r.event == "timeout"] == [pytest.approx(t_sack + 0.320, abs=1e-12)]
    assert res.completion_s == pytest.approx(t_sack + 0.320 + S + 0.1, abs=1e-12)
    assert (res.timeouts, res.retransmissions) == (1, 2)
    # rto_restart off: the RTO armed from the first retransmission of `seg` (RACK's, on the
    # duplicate ACK that replaced the probe timer with the RTO) stands, 0.320 s on (seg = 9:
    # that retransmission goes out on segment 10's SACK itself, so both fire alike).
    res, rows = run_transfer(PARAMS, size_packets=11, drops={seg: 2}, config=LINUX_HZ.replace(rto_restart=False),
                             trace=True)
    first = [r.time_s for r in rows if r.event == "retransmit"][0]
    assert [r.time_s for r in rows if r.event == "timeout"] == [pytest.approx(first + 0.320, abs=1e-12)]
    assert (first < t_sack - 1e-9) == (seg != 9)


def test_loss_probe_timeout_in_jiffies():
    from latency_model.sim.flat import tlp_timer_wait

    # tcp_schedule_loss_probe (Linux 6.7 on): usecs_to_jiffies(2 SRTT + 200 ms) with one
    # packet out = ceil(400.6 / 4) = 101, capped at usecs_to_jiffies(RTO 304 ms) = 76, level 1:
    # 80 jiffies; two packets out: ceil(202.6 / 4) = 51, level 0: 51.5 jiffies.
    assert tlp_timer_wait(0.1003, True, 0.304, 0.2, 250.0) == pytest.approx(0.320)
    assert tlp_timer_wait(0.1003, False, 0.304, 0.2, 250.0) == pytest.approx(0.206)
    assert tlp_timer_wait(0.1003, False, 0.1, 0.2, 250.0) == pytest.approx(0.102)  # cap 25 jiffies
    assert tlp_timer_wait(-1.0, False, 0.0, 0.2, 250.0) == pytest.approx(1.0 + 0.016)  # TCP_TIMEOUT_INIT: 250, level 1
    # N = 11, the last segment lost (validation/LINUX.md item 5(c)): segment 9's ACK at
    # 0.1 + 10 S leaves one packet out; the probe fires 0.320 s later and its ACK returns
    # 0.1 + S after: 0.5205 s (the kernel: 0.509-0.545 s derived, 0.5065-0.5390 s measured).
    res, rows = run_transfer(PARAMS, size_packets=11, drops=[10], config=LINUX_HZ, trace=True)
    t_probe = 0.1 + 10 * S + 0.320
    assert [r.time_s for r in rows if r.event == "tlp_probe"] == [pytest.approx(t_probe, abs=1e-12)]
    assert res.completion_s == pytest.approx(t_probe + S + 0.1, abs=1e-12)
    # N = 20, segments 18 and 19 lost: the last ACK (segment 17's) leaves two out: 2 SRTT +
    # 2 ms in jiffies on level 0, i.e. 51.5 jiffies = 0.206 s (RFC 8985's 2 SRTT: 0.2006 s).
    res, rows = run_transfer(PARAMS, size_packets=20, drops=[18, 19], config=LINUX_HZ, trace=True)
    probe = [r for r in rows if r.event == "tlp_probe"]
    last_ack = max(r.time_s for r in rows if r.event == "ack" and r.time_s < probe[0].time_s)
    assert [math.ceil((2 * srtt + 0.002) * 250) for srtt in (0.1, 0.1004)] == [51, 51]  # SRTT: RTT samples 0.1-0.1004 s
    assert probe[0].time_s == pytest.approx(last_ack + 0.206, abs=1e-12)


@pytest.mark.parametrize("n", [1, 4, 11, 40])
def test_rto_in_jiffies_both_engines_agree(n):
    # More RTOs than at p = 0.2: every segment lost with probability 0.5.
    params = PARAMS.replace(p=0.5)
    children = np.random.SeedSequence(47).spawn(30)
    ref = reference(params, n * MSS, LINUX_HZ, children)
    assert ref[:, K.OUT_FIELDS.index("timeouts")].sum() > 0
    for fn in KERNELS:
        TWIN.check_identical(fn, params, n * MSS, LINUX_HZ, children, ref)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 11, 20])
def test_rack_timer_in_jiffies_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX_HZ)
    _both_engines(PARAMS.replace(w0=2), n, LINUX_HZ.replace(timer_hz=1000))


# The receiver's SACK compression (sack_compression, quickack_on_data) ------------------------------------------------

def _acks_sent(rows, lo, hi):
    return [(r.time_s, r.segment) for r in rows if r.event == "ack_sent" and lo < r.time_s < hi]


def test_sack_compression_holds_the_fourth_duplicate_ack_before_quick_ack_mode():
    # N = 20, segment 0 lost (validation/LINUX.md, n20_seg0). Segment k of the first
    # window arrives at 0.05 + (k + 1) S. No in-order data has arrived yet, so quick-ack
    # mode has not started (tcp_event_data_recv starts it): the ACKs of segments 1, 2, 3
    # leave at once (dup_ack_counter 1-3, __tcp_ack_snd_check), segment 4's is held with the
    # compressed-ACK timer min(1 ms, RTT/20) = 1 ms, and segments 5-9 (by 0.05 + 10 S, within
    # that ms) join it: one ACK at 0.05 + 5 S + 1 ms, four in all where every segment had
    # its ACK before (the kernel's trace: three SACKs, then the next six in one 1.2 ms later).
    from latency_model.sim.flat import comp_sack_delay

    assert comp_sack_delay(0.1) == 0.001 and comp_sack_delay(0.01) == pytest.approx(0.0005)
    res, rows = run_transfer(PARAMS, size_packets=20, drops=[0], config=LINUX_HZ, trace=True)
    want = [0.05 + 2 * S, 0.05 + 3 * S, 0.05 + 4 * S, 0.05 + 5 * S + 0.001]
    got = _acks_sent(rows, 0.0, 0.1)
    assert [t for t, _ in got] == pytest.approx(want, abs=1e-12)
    assert {a for _, a in got} == {0}
    # sack_compression off: nine duplicate ACKs, each at its segment's arrival.
    _, rows0 = run_transfer(PARAMS, size_packets=20, drops=[0], config=LINUX_HZ.replace(sack_compression=False),
                            trace=True)
    assert [t for t, _ in _acks_sent(rows0, 0.0, 0.1)] == pytest.approx([0.05 + k * S for k in range(2, 11)],
                                                                        abs=1e-12)


def test_sack_compression_starts_when_the_quick_acks_are_used_up():
    # N = 40, segment 12 lost. Round 1 (segments 0-9, in order) starts quick-ack mode and
    # uses 10 of its 16 ACKs. Each of the 10 ACKs releases two segments: segment j >= 10
    # arrives at 0.15 + (j - 8) S. Segments 10 and 11 (in order) and 13-16 (out of order)
    # use the last 6 quick ACKs; 17, 18, 19 are the first three duplicate ACKs at
    # rcv_nxt = 12, sent at once; 20 (at 0.15 + 12 S) is held for 1 ms and 21-29 (by
    # 0.15 + 21 S) join it: one ACK at 0.15 + 12 S + 1 ms.
    _, rows = run_transfer(PARAMS, size_packets=40, drops=[12], config=LINUX_HZ, trace=True)
    want = [0.15 + k * S for k in (2, 3, 5, 6, 7, 8, 9, 10, 11)] + [0.15 + 12 * S + 0.001]
    got = _acks_sent(rows, 0.1, 0.2)
    assert [t for t, _ in got] == pytest.approx(want, abs=1e-12)
    assert [a for _, a in got] == [11] + [12] * 9
    # quickack_on_data off: the 16 quick ACKs count from the connection's first ACK, as
    # here, where every ACK so far is one; the same ACKs.
    _, rows = run_transfer(PARAMS, size_packets=40, drops=[12], config=LINUX_HZ.replace(quickack_on_data=False),
                           trace=True)
    assert [t for t, _ in _acks_sent(rows, 0.1, 0.2)] == pytest.approx(want, abs=1e-12)


def test_quick_ack_mode_from_the_first_in_order_data():
    # As test_sack_compression_holds_the_fourth_duplicate_ack_before_quick_ack_mode, with
    # quickack_on_data off: quick-ack mode is on from the start (16 ACKs), so none of the
    # nine duplicate ACKs is held (ofo_ack sends at once in quick-ack mode).
    _, rows = run_transfer(PARAMS, size_packets=20, drops=[0], config=LINUX_HZ.replace(quickack_on_data=False),
                           trace=True)
    assert [t for t, _ in _acks_sent(rows, 0.0, 0.1)] == pytest.approx([0.05 + k * S for k in range(2, 11)],
                                                                       abs=1e-12)


@pytest.mark.parametrize("n", [4, 20, 40])
def test_sack_compression_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX_HZ)
    _both_engines(PARAMS, n, LINUX_HZ.replace(delay_s=0.005))  # RTT/20 = 0.5 ms binds


def test_sack_compression_leaves_the_other_profiles_alone():
    # The rfc and ns3 profiles (no sack_compression) ACK every out-of-order segment at once.
    for stack in ("rfc", "ns3"):
        cfg = SimConfig.profile(stack, delay_s=0.05)
        _, rows = run_transfer(PARAMS.replace(w0=10), size_packets=20, drops=[0], config=cfg, trace=True)
        assert len(_acks_sent(rows, 0.0, 0.1)) == 9


# The RTO restarted on the head's retransmission (rto_restart) --------------------------------

def test_rto_restarts_when_an_ack_retransmits_the_head():
    # N = 15, segment 1 dropped three times. RACK resends it at 0.1 + 5 S (the third SACK)
    # and, when segments sent after that retransmission are SACKed, again on an ACK near
    # 0.2 s; that second retransmission of the head restarts the RTO from its own moment
    # (tcp_xmit_retransmit_queue: skb == rtx_head -> tcp_reset_xmit_timer), so the timeout
    # fires 76 jiffies at level 1 = 0.320 s after it, not after the ACK that last restarted
    # the timer (0.13 ms earlier here); the timeout's retransmission is ACKed 0.1 + S later.
    res, rows = run_transfer(PARAMS, size_packets=15, drops={1: 3}, config=LINUX_HZ, trace=True)
    rxt = [r.time_s for r in rows if r.event == "retransmit"]
    tout = [r.time_s for r in rows if r.event == "timeout"]
    assert len(rxt) == 3 and tout == [rxt[2]]
    assert tout[0] == pytest.approx(rxt[1] + 0.320, abs=1e-12)
    acks = [r.time_s for r in rows if r.event in ("ack", "dupack") and r.time_s < rxt[1]]
    assert tout[0] - 0.320 > max(acks)  # later than any ACK before the retransmission
    assert res.completion_s == pytest.approx(tout[0] + S + 0.1, abs=1e-12)
    # rto_restart off: the RTO armed at the first retransmission of segment 1 (where RACK's
    # retransmission replaced the probe timer) fires 0.320 s after it.
    res, rows = run_transfer(PARAMS, size_packets=15, drops={1: 3}, config=LINUX_HZ.replace(rto_restart=False),
                             trace=True)
    rxt = [r.time_s for r in rows if r.event == "retransmit"]
    assert [r.time_s for r in rows if r.event == "timeout"] == [pytest.approx(rxt[0] + 0.320, abs=1e-12)]


# Linux's deferral of a small send outside recovery (tcp_tso_should_defer, tso_defer) ---------

def test_second_duplicate_ack_sends_nothing_as_the_kernel_defers_it():
    # N = 20, segment 0 lost (validation/LINUX.md, n20_seg0's packet log). Duplicate ACKs
    # reach the sender at 0.1 + (k + 1) S for segments k = 1, 2, 3. The first lets segment 10
    # out (implicit Limited Transmit: 9 in flight against cwnd 10; the last transmission was
    # 0.1 s earlier, so tcp_tso_should_defer does not defer). The second opens one segment
    # again, but the last transmission was S ago (< 1 ms), one segment is below the GSO packet
    # (tcp_tso_autosize: 2 segments) and below cwnd/3, and segment 0's ACK was due at SRTT =
    # r0 (< 0.1 + 3 S + min(SRTT/2, 1 ms)): deferred, nothing leaves. The third makes RACK
    # mark segment 0 lost: its retransmission; segments 11-13 leave on the compressed SACK
    # of 4-9, 1 ms after segment 4 reached the receiver (the kernel: 11-13 together at
    # 0.1014 s). With tso_defer off segment 11 leaves on the second.
    from latency_model.sim.flat import comp_sack_delay

    def sends(config):
        _, rows = run_transfer(PARAMS, size_packets=20, drops=[0], config=config, trace=True)
        return [(r.time_s, r.event, r.segment) for r in rows
                if r.event in ("send", "retransmit") and 0.1 < r.time_s < 0.11]

    t_sack = 0.1 + 5 * S + comp_sack_delay(0.1)
    want = [(0.1 + 2 * S, "send", 10), (0.1 + 4 * S, "retransmit", 0)] + [(t_sack, "send", k) for k in (11, 12, 13)]
    got = sends(LINUX_HZ)
    assert [(e, k) for _, e, k in got] == [(e, k) for _, e, k in want]
    assert [t for t, _, _ in got] == pytest.approx([t for t, _, _ in want], abs=1e-12)
    assert (0.1 + 3 * S, "send", 11) in [(pytest.approx(t, abs=1e-12), e, k)
                                         for t, e, k in sends(LINUX_HZ.replace(tso_defer=False))]


def test_tso_deferral_sizes():
    # tcp_tso_autosize: 2 segments (tcp_min_tso_segs) until the pacing rate's 1/1024 s holds
    # more: ratio 2 x cwnd / SRTT bytes/s in slow start; at SRTT 1 ms and cwnd 20 segments of
    # 500 B, 2 x 10,000 / 0.001 / 1024 = 19,531 B = 39 segments.
    from latency_model.sim import flat as FL
    from latency_model.sim.kernel_sack import sk_tso_max_segs

    I, F, PI = np.zeros(FL.N_IS, np.int64), np.zeros(FL.N_FS), np.zeros(FL.N_PI, np.int64)
    PI[FL.P_MSS] = 500
    F[FL.SRTT], F[FL.CWND], F[FL.SSTH] = 0.001, 10_000.0, 1e9
    assert sk_tso_max_segs(I, F, PI) == 39
    F[FL.SRTT] = 0.1
    assert sk_tso_max_segs(I, F, PI) == 2


@pytest.mark.parametrize("n", [20, 40])
def test_tso_deferral_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX_HZ)
    _both_engines(PARAMS.replace(rtt_s=0.002), n, LINUX_HZ.replace(delay_s=0.001))  # larger GSO packets


# The mechanisms' own switches ------------------------------------------------------------------

_OWN = ("sack_compression", "quickack_on_data", "tso_defer", "rto_restart", "grow_acked_sacked",
        "cwnd_limited_growth", "linux_prr", "linux_delack")


@pytest.mark.parametrize("name", _OWN)
def test_linux_switches_need_the_sack_sender_and_a_bool(name):
    assert getattr(LINUX_HZ, name) is True
    assert getattr(SimConfig(), name) is False
    assert getattr(SimConfig.profile("linux", sender="rfc"), name) is False
    assert getattr(SimConfig.profile("linux", timer_hz=0), name) is True  # not keyed on the timers
    with pytest.raises(ValueError, match=f"{name} needs sender 'sack'"):
        SimConfig(**{name: True})
    with pytest.raises(ValueError, match=f"{name} must be True or False"):
        SimConfig(sender="sack", **{name: 1})


# The growth rule fed acked_sacked (grow_acked_sacked) ---------------------------------------------

def test_growth_counts_the_segments_delivered_on_the_ack_that_ends_recovery():
    # N = 20, segment 0 lost, rule linux-reno (validation/LINUX.md n20_seg0; kernel 0.3017-0.3020 s).
    # As test_second_duplicate_ack_sends_nothing_as_the_kernel_defers_it: segment 10 leaves at
    # 0.1 + 2S, the retransmission of 0 at 0.1 + 4S (recovery: ssthresh = max(10 >> 1, 2) = 5,
    # snd_cwnd_cnt = 0), 11-13 at t = 0.1 + 5S + 1 ms. The retransmission fills the hole at
    # the receiver at 0.15 + 5S, before segment 10's held SACK leaves, so the ACK of 0-10
    # (at the sender 0.2 + 5S) newly delivers 0 and 10: recovery ends (cwnd = ssthresh = 5)
    # and tcp_cong_avoid_ai counts 2; 11, 12, 13 are ACKed at 0.2 + (6, 7, 8)S + 1 ms and
    # count 3, 4, 5: cwnd 6 on the ACK of 13, which with 14-17 in flight sends 18 and 19
    # back to back. 19 leaves the link at 0.2 + 10S + 1 ms and its ACK (FIN) returns 0.1 later.
    from latency_model.growth import make_rule

    params = PARAMS.replace(rule=make_rule("linux-reno"))
    res = run_transfer(params, size_packets=20, drops=[0], config=LINUX_HZ)
    assert res.completion_s == pytest.approx(0.3 + 10 * S + 0.001, abs=1e-12)
    # Off (bytes newly acknowledged, no growth on the ACK that ends recovery): the count
    # starts with the ACK of 11 and reaches 5 on the ACK of 15, so 19 leaves on the ACK of 14
    # (0.3 + 6S) and is ACKed at 0.4 + 7S, one RTT later.
    res = run_transfer(params, size_packets=20, drops=[0], config=LINUX_HZ.replace(grow_acked_sacked=False))
    assert res.completion_s == pytest.approx(0.4 + 7 * S, abs=1e-12)


@pytest.mark.parametrize("n", [5, 20, 40])
def test_grow_acked_sacked_both_engines_agree(n):
    from latency_model.growth import make_rule

    for rule in ("linux-reno", "cubic"):
        _both_engines(PARAMS.replace(rule=make_rule(rule)), n, LINUX_HZ)
    _both_engines(PARAMS, n, LINUX.replace(grow_acked_sacked=True, rack_tlp=False))


# Growth only while cwnd-limited (cwnd_limited_growth) ---------------------------------------------

def test_slow_start_grows_only_to_twice_the_packets_out():
    # N = 5 under W0 = 10, rule linux-reno, no loss. The write leaves whole (5 packets, cwnd
    # 10: not cwnd-limited) and the bare FIN follows (tcp_cwnd_validate: packets_out 6 >
    # max_packets_out 5), so max_packets_out = 6 and tcp_is_cwnd_limited lets slow start grow
    # only while cwnd < 2 x 6 = 12 packets: the ACKs of 0 and 1 grow cwnd to 11 and 12, those
    # of 2 and 3 do not (the trace's ack rows show cwnd before each ACK's growth: 10, 11,
    # 12, 12 packets of 500 B). Off: 10, 11, 12, 13. The completion time does not change.
    from latency_model.growth import make_rule

    params = PARAMS.replace(rule=make_rule("linux-reno"))
    for on, want in ((True, [10, 11, 12, 12]), (False, [10, 11, 12, 13])):
        res, rows = run_transfer(params, size_packets=5, config=LINUX_HZ.replace(cwnd_limited_growth=on), trace=True)
        assert [r.cwnd_bytes / MSS for r in rows if r.event == "ack"] == want
        assert res.completion_s == pytest.approx(0.1 + 5 * S, abs=1e-12)


@pytest.mark.parametrize("n", [3, 8, 20])
def test_cwnd_limited_growth_both_engines_agree(n):
    from latency_model.growth import make_rule

    for rule in ("linux-reno", "cubic"):
        _both_engines(PARAMS.replace(rule=make_rule(rule)), n, LINUX_HZ)
    _both_engines(PARAMS, n, LINUX.replace(grow_acked_sacked=True, cwnd_limited_growth=True, rack_tlp=False))


# PRR as Linux's tcp_cwnd_reduction (linux_prr) ------------------------------------------------------

def test_recovery_entry_sends_only_the_fast_retransmission_as_the_kernel_does():
    # N = 40, segments 25 and 27 lost (validation/LINUX.md, "PRR as the kernel runs it"), rule
    # linux-reno. Slow start sends all 40 by about 0.2 s; the SACKs of 26, 28 and 29 arrive at
    # t3 (the third, 29's) and RACK marks 25 and 27 lost (reo_wnd 0 with 3 segments SACKed).
    # Recovery: cwnd is 30 packets, ssthresh = 30 >> 1 = 15; in flight packets_out 15 (25-39) - SACKed 3 -
    # lost 2 = 10, delta = 5 >= 0. Linux (tcp_cwnd_reduction, prr_out still 0, snd_una not
    # advanced): sndcnt = min(5, max(1 - 0, 1)) = 1, cwnd = 10 + 1: only 25 leaves. The next
    # ACK is the SACK of 30 (sent at t30 on the ACK of 11, back at t30 + 0.1 + S): it delivers
    # 1, in flight is 10 + 25's retransmission - 30 = 10, sndcnt = max(2 - 1, 1) = 1: 27 leaves
    # then, and its ACK (all 40, FIN) returns 0.1 + S later. RFC 6937 SSRB sends the fast
    # retransmission outside sndcnt and adds its segment on every ACK: 25 and 27 at t3.
    from latency_model.growth import make_rule

    params = PARAMS.replace(rule=make_rule("linux-reno"))
    cfg = LINUX.replace(linux_prr=True)
    res, rows = run_transfer(params, size_packets=40, drops=[25, 27], config=cfg, trace=True)
    (t3,) = [r.time_s for r in rows if r.event == "fast_retransmit"]
    (t30,) = [r.time_s for r in rows if r.event == "send" and r.segment == 30]
    rtx = [(r.segment, r.time_s) for r in rows if r.event == "retransmit"]
    assert rtx == [(25, t3), (27, pytest.approx(t30 + 0.1 + S, abs=1e-12))]
    assert res.completion_s == pytest.approx(t30 + 0.2 + 2 * S, abs=1e-12)
    rfc, rows = run_transfer(params, size_packets=40, drops=[25, 27], config=LINUX, trace=True)
    assert [(r.segment, r.time_s) for r in rows if r.event == "retransmit"] == [(25, t3), (27, t3)]
    assert rfc.completion_s < res.completion_s - 0.09


def test_linux_prr_on_the_profile_matches_the_kernels_packet_log():
    # The same losses under the whole profile (rule linux-reno, SACK compression): the
    # receiver holds the SACKs of 30-39 (three duplicate ACKs already sent for rcv_nxt = 25)
    # and 25's retransmission arrives before the 1 ms compression timer, so the next ACK is
    # the cumulative ACK of 25-26 at about 0.301 s; RACK (25's retransmission was sent after
    # 27) has 27 lost and it leaves then: one RTT after the RFC 6937 profile. The kernel's
    # packet log (validation/linux/results/rerun_reno_p0.1_n40_traced_packets.csv.gz, port
    # 11981) shows exactly this: the one retransmission at the third duplicate ACK, no ACK
    # for 30-39, 27 resent on the ACK of 25-26; completion 0.4014 s (campaign 0.4015 s).
    # Within 1.5 ms: the kernel's forwarding and the handshake's 0.3 ms before the data.
    from latency_model.growth import make_rule

    params = PARAMS.replace(rule=make_rule("linux-reno"))
    on = run_transfer(params, size_packets=40, drops=[25, 27], config=LINUX_HZ)
    off = run_transfer(params, size_packets=40, drops=[25, 27], config=LINUX_HZ.replace(linux_prr=False))
    assert on.completion_s == pytest.approx(0.4015, abs=1.5e-3)
    assert off.completion_s == pytest.approx(0.3015, abs=1.5e-3)


def test_recovery_entered_on_racks_timer_sends_one_segment():
    # N = 3, segment 0 lost twice and 2 once (the setting of
    # test_rack_advances_on_a_sacked_retransmission_as_linux_does). At t1 RACK's timer marks 0
    # and 2 lost; Linux enters recovery with tcp_cwnd_reduction(sk, 1, newly_lost, 0)
    # (tcp_recovery.c tcp_rack_reo_timeout): in flight 4 - 2 SACKed - 2 lost = 0, sndcnt = 1,
    # so only 0 leaves (and is lost again); nothing is ACKed until the RTO, which resends 0;
    # its ACK (with the FIN's SACK) marks 2 lost and 2 is resent one RTT + S later. The
    # kernel's two campaign transfers with exactly these losses (transfers_{reno,cubic}_p0.1_n3:
    # dropped "0 2 0") took 0.664 and 0.660 s with one RTO each; the profile: 0.650 s (its RTO
    # on the wheel at the bucket's mean, 320 ms after t1, LINUX.md item 5(b): 308-336 ms).
    drops = {0: 2, 2: 1}
    res, rows = run_transfer(PARAMS, size_packets=3, drops=drops, config=LINUX.replace(linux_prr=True), trace=True)
    t1 = 0.1 + 3 * S + F + R0 / 4
    (t_rto,) = [r.time_s for r in rows if r.event == "timeout"]
    assert [(r.segment, r.time_s) for r in rows if r.event == "retransmit"] == [
        (0, pytest.approx(t1, abs=1e-12)), (0, t_rto), (2, pytest.approx(t_rto + S + 0.1, abs=1e-12))]
    assert res.timeouts == 1
    assert res.completion_s == pytest.approx(t_rto + 2 * (S + 0.1), abs=1e-12)
    prof = run_transfer(PARAMS, size_packets=3, drops=drops, config=LINUX_HZ)
    assert prof.timeouts == 1 and abs(prof.completion_s - 0.662) < 0.016


def test_linux_prr_needs_ssrb():
    assert SimConfig.profile("linux").linux_prr is True
    assert SimConfig.profile("linux", prr="crb").linux_prr is False
    with pytest.raises(ValueError, match="linux_prr needs prr 'ssrb'"):
        SimConfig(sender="sack", prr="off", linux_prr=True)


@pytest.mark.parametrize("n", [8, 20, 40])
def test_linux_prr_both_engines_agree(n):
    from latency_model.growth import make_rule

    for rule in ("linux-reno", "cubic"):
        _both_engines(PARAMS.replace(rule=make_rule(rule)), n, LINUX_HZ)
    _both_engines(PARAMS, n, LINUX.replace(linux_prr=True))
    _both_engines(PARAMS, n, LINUX.replace(linux_prr=True, rack_tlp=False))


# The delayed ACK after quick-ack mode (linux_delack) ---------------------------------------------

@pytest.mark.parametrize("hz, wait", [(250, 10.5 / 250), (0, 0.04)])
def test_a_lone_segment_after_quick_ack_mode_waits_for_the_delayed_ack(hz, wait):
    # No loss, no FIN on the data (fin=False), W0 = 10, 16 quick ACKs from the first data.
    # Round 1: segments 0-9, ten quick ACKs (6 left); each releases two segments, so round 2
    # is 10-28 for N = 29, back to back. 10-15 use up the quick ACKs; then the receiver ACKs
    # at once only when two segments are unacknowledged (__tcp_ack_snd_check: rcv_nxt -
    # rcv_wup > rcv_mss): 17, 19, ..., 27; 28 is alone and waits for the delayed-ACK timer,
    # ato = 40 ms = 10 jiffies at 250 Hz, fired by the wheel at (10 + 1/2) jiffies on
    # average (tcp_send_delayed_ack; 42 ms), exactly 40 ms with exact timers. Every earlier
    # arrival is the same as with an ACK per segment, so the transfer ends that much later.
    # N = 30: 28 and 29 leave as a pair, nothing waits.
    cfg = LINUX.replace(timer_hz=hz, fin=False, bare_fin=False, quickack_on_data=True)
    for n, extra in ((29, wait), (30, 0.0)):
        on = run_transfer(PARAMS, size_packets=n, config=cfg.replace(linux_delack=True))
        off = run_transfer(PARAMS, size_packets=n, config=cfg)
        assert on.completion_s - off.completion_s == pytest.approx(extra, abs=1e-12)
    # With the FIN on it (fin=True) the last segment is ACKed at once (tcp_fin: the receiver
    # acknowledges and closes), so N = 29 ends as with an ACK per segment.
    fin = LINUX.replace(timer_hz=hz, bare_fin=False, quickack_on_data=True)
    assert (run_transfer(PARAMS, size_packets=29, config=fin.replace(linux_delack=True)).completion_s
            == run_transfer(PARAMS, size_packets=29, config=fin).completion_s)


def test_linux_delack_acks_every_second_segment_after_the_quick_acks():
    # The same N = 30 transfer, traced: the receiver's ACKs after round 1's ten are 11-16
    # (quick, one per segment), then 18, 20, ..., 30 (one per two segments).
    cfg = LINUX.replace(fin=False, bare_fin=False, quickack_on_data=True, linux_delack=True)
    _, rows = run_transfer(PARAMS, size_packets=30, config=cfg, trace=True)
    sent = [r.segment for r in rows if r.event == "ack_sent"]
    assert sent == list(range(1, 17)) + list(range(18, 31, 2))


def test_linux_delack_replaces_b():
    # Linux's rule is two segments whatever TcpParams.b says (pack_params).
    cfg = SimConfig.profile("linux", delay_s=0.05)
    for b in (1, 2, 3):
        PI, PF = K.pack_params(PARAMS.replace(b=b), 30 * MSS, cfg)
        assert PI[K.P_B] == 2 and PF[K.Q_DELACK] == pytest.approx(0.042, abs=1e-15)
        PI, PF = K.pack_params(PARAMS.replace(b=b), 30 * MSS, cfg.replace(linux_delack=False))
        assert PI[K.P_B] == b and PF[K.Q_DELACK] == 0.04


@pytest.mark.parametrize("n", [8, 20, 40])
def test_linux_delack_both_engines_agree(n):
    _both_engines(PARAMS, n, LINUX.replace(linux_delack=True))
    _both_engines(PARAMS, n, LINUX.replace(linux_delack=True, timer_hz=250, fin=False, bare_fin=False))


def test_linux_delack_reads_the_delayed_ack_flags_whatever_b(capsys):
    # With b = 1 the RFC receiver ACKs every segment and the delayed-ACK flags are refused;
    # the linux profile's receiver delays a lone segment after quick-ack mode, so it reads
    # them (and refuses them again with the rfc sender, whose receiver is RFC 5681's).
    from _cli import refused, run

    sim = ["simulate", "--size-packets", "30", "--runs", "20", "--seed", "1", "--stack", "linux"]
    for flags in (["--delack-timeout-s", "0.05"], ["--quick-acks", "4"]):
        code, out, err = run(capsys, *sim, *flags)
        assert code == 0 and err == "", err
        refused(capsys, [*sim, "--sender", "rfc", *flags], flags[0], "--b 1")
