"""RACK-TLP (RFC 8985) in the SACK sender: hand-derived traces, properties, and rack_tlp=False
left exactly as it was.

Setting unless stated: MSS 500 B + 40 B header at 100 Mb/s (serialisation S = 43.2 us),
RTT 0.1 s (one-way 0.05 s), b = 1, no Limited Transmit, Reno growth, initial and minimum RTO
1 s, Karn's RTT sampling, ``SimConfig(sender="sack", rack_tlp=True)``. Segments are 0-based;
an ACK "k" acknowledges segments 0..k-1. Segments handed to the link together all carry the
same transmit time (the sender's clock), the later ones later by sequence (RFC 8985's
RACK_sent_after breaks the tie by end_seq).
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_transfer
from latency_model.sim.runner import fast_path_supported

from test_sim_sack import run_watching_pipe

S = (500 + 40) * 8 / 100e6
RACK = SimConfig(sender="sack", rack_tlp=True)
SACK = SimConfig(sender="sack")


def _events(rows, *names):
    return [(r.event, r.segment) for r in rows if r.event in names]


def test_tlp_repairs_a_lost_last_segment_after_two_srtt_plus_wcdelackt():
    # N = 3, W0 = 2, segment 2 lost.
    # t = 0: segments 0, 1 leave. No SRTT: PTO = 1 s, capped at the RTO's expiry (1 s).
    # ACK 1 at 0.1 + S: sample 0.1 + S, SRTT = 0.1 + S, RTTVAR = 0.05 + S/2, RTO 1 s (floor);
    #   cwnd 3 MSS: segment 2 leaves (lost); 2 segments out: PTO = 2 SRTT, due 0.3 + 3S.
    # ACK 2 at 0.1 + 2S: sample 0.1 + 2S, SRTT = 7/8 (0.1 + S) + 1/8 (0.1 + 2S) = 0.1 + 9S/8;
    #   one segment out: PTO = 2 SRTT + WCDelAckT = 0.4 + 9S/4 (the RTO, due 1.1 + 2S, does
    #   not cap it): the probe leaves at 0.5 + 17S/4. No new data: it resends segment 2.
    # It arrives at 0.55 + 21S/4, ACK 3 (FIN: at once) reaches the sender at 0.6 + 21S/4.
    # Without RACK-TLP the RTO fires at 1.1 + 2S: done at 1.2 + 3S.
    p = TcpParams(p=0.0, w0=2)
    res, rows = run_transfer(p, size_packets=3, drops=[2], config=RACK, trace=True)
    assert res.completion_s == pytest.approx(0.6 + 21 * S / 4, abs=1e-12)
    probe = [r for r in rows if r.event == "tlp_probe"]
    assert [(r.segment, r.time_s) for r in probe] == [(2, pytest.approx(0.5 + 17 * S / 4, abs=1e-12))]
    assert (res.timeouts, res.retransmissions, res.fast_retransmits) == (0, 1, 0)
    # RFC 8985 7.4 without D-SACK: the resent probe's TLP.end_seq (3) is acknowledged, so it
    # is taken to have repaired a loss: ssthresh = max(FlightSize/2, 2 MSS) = 2 MSS (one
    # segment was out), cwnd = min(4 MSS, ssthresh).
    red = [r for r in rows if r.event == "tlp_recovery"]
    assert [(r.segment, r.cwnd_bytes, r.ssthresh_bytes) for r in red] == [(3, 1000.0, 1000.0)]
    old = run_transfer(p, size_packets=3, drops=[2], config=SACK)
    assert old.completion_s == pytest.approx(1.2 + 3 * S, abs=1e-12)
    assert old.timeouts == 1


def test_tlp_with_two_segments_out_waits_two_srtt_only():
    # N = 4, W0 = 2, segments 2 and 3 lost (both sent at ACK 1, 0.1 + S).
    # ACK 2 at 0.1 + 2S: SRTT = 0.1 + 9S/8, two segments out: PTO = 2 SRTT = 0.2 + 9S/4, the
    # probe (no new data: segment 3 again) leaves at 0.3 + 17S/4 and arrives at
    # 0.35 + 21S/4; the receiver, missing 2, answers ACK 2 SACK (3, 4) at 0.4 + 21S/4.
    # RACK: segment 3's newest copy (sent 0.3 + 17S/4) is delivered; segment 2 (sent
    # 0.1 + S) is older by more than RACK.rtt + reo_wnd: lost at once, fast retransmit,
    # arriving 0.45 + 25S/4; ACK 4 at 0.5 + 25S/4.
    p = TcpParams(p=0.0, w0=2)
    res, rows = run_transfer(p, size_packets=4, drops=[2, 3], config=RACK, trace=True)
    assert _events(rows, "tlp_probe", "rack_lost", "fast_retransmit") == [
        ("tlp_probe", 3), ("rack_lost", 2), ("fast_retransmit", 2)]
    assert res.completion_s == pytest.approx(0.5 + 25 * S / 4, abs=1e-12)
    assert res.timeouts == 0


def test_rack_reordering_timer_repairs_two_losses():
    # N = 4, W0 = 4, segments 1 and 2 lost; all four leave at t = 0.
    # ACK 1 at 0.1 + S: sample 0.1 + S = min_RTT; cwnd 5, nothing left to send.
    # Segment 3 arrives out of order: ACK 1 SACK (3, 4) at 0.1 + 4S. RACK.segment = 3
    # (same xmit_ts 0 as 1 and 2, later by sequence), RACK.rtt = 0.1 + 4S. One segment
    # SACKed (< DupThresh 3), not in recovery: reo_wnd = min_RTT/4 = 0.025 + S/4. For 1 and 2
    # the remaining time is 0 + RACK.rtt + reo_wnd - now = 0.025 + S/4 > 0: the reordering
    # timer is armed for 0.125 + 17S/4 (it replaces the probe timer armed at ACK 1).
    # Expiry: 1 and 2 lost; recovery with FlightSize 3: ssthresh 2 MSS, RecoverFS 3,
    # retransmit 1; PRR-SSRB with pipe 1 <= ssthresh: sndcnt = min(2 - 1, 0 + 1) = 1:
    # retransmit 2 at the same instant T. They arrive at T + 0.05 + S and T + 0.05 + 2S;
    # ACK 4 reaches the sender at T + 0.1 + 2S = 0.225 + 25S/4.
    # Without RACK: one duplicate ACK, the RTO at 1.1 + S, done at 1.3 + 3S.
    p = TcpParams(p=0.0, w0=4)
    res, rows = run_transfer(p, size_packets=4, drops=[1, 2], config=RACK, trace=True)
    t = 0.125 + 17 * S / 4
    lost = [(r.segment, r.time_s) for r in rows if r.event == "rack_lost"]
    assert lost == [(1, pytest.approx(t, abs=1e-12)), (2, pytest.approx(t, abs=1e-12))]
    assert [r.segment for r in rows if r.event == "retransmit"] == [1, 2]
    assert res.completion_s == pytest.approx(0.225 + 25 * S / 4, abs=1e-12)
    assert (res.timeouts, res.fast_retransmits) == (0, 1)
    assert run_transfer(p, size_packets=4, drops=[1, 2], config=SACK).completion_s == pytest.approx(
        1.3 + 3 * S, abs=1e-12)


def test_rack_marks_a_loss_on_the_first_duplicate_ack():
    # N = 4, W0 = 2, segment 1 lost. ACK 1 at 0.1 + S (min_RTT 0.1 + S): cwnd 3, segments 2
    # and 3 leave at 0.1 + S. Segment 2 arrives out of order: ACK 1 SACK (2, 3) at 0.2 + 2S,
    # the first duplicate ACK. RACK.segment = 2 (sent 0.1 + S), RACK.rtt = 0.1 + S,
    # reo_wnd = min_RTT/4: segment 1 (sent 0) has 0 + (0.1 + S) + (0.025 + S/4) - (0.2 + 2S)
    # = -0.075 - 3S/4 <= 0 left: lost now, with one SACKed segment and no timer.
    # Fast retransmit at 0.2 + 2S, arrives at 0.25 + 3S, ACK 4 at 0.3 + 3S.
    # DupThresh (3) would never be reached: without RACK the RTO ends it at 1.2 + 2S.
    p = TcpParams(p=0.0, w0=2)
    res, rows = run_transfer(p, size_packets=4, drops=[1], config=RACK, trace=True)
    lost = [r for r in rows if r.event == "rack_lost"]
    assert [(r.segment, r.time_s) for r in lost] == [(1, pytest.approx(0.2 + 2 * S, abs=1e-12))]
    assert sum(1 for r in rows if r.event == "dupack" and r.time_s <= lost[0].time_s) == 1
    assert res.completion_s == pytest.approx(0.3 + 3 * S, abs=1e-12)
    assert (res.timeouts, res.fast_retransmits, res.retransmissions) == (0, 1, 1)
    assert run_transfer(p, size_packets=4, drops=[1], config=SACK).completion_s == pytest.approx(
        1.2 + 2 * S, abs=1e-12)


def test_rack_detects_a_lost_retransmission_without_the_rto():
    # W0 = 10, 10 segments at t = 0 (segment k on the wire until (k+1) S), segment 1 lost
    # twice, segment 5 once. ACK 1 at 0.1 + S. SACKs of 2, 3, 4 at 0.1 + (k+1) S; at the
    # third, DupThresh segments are SACKed: reo_wnd = 0, segment 1 lost at once: recovery
    # (ssthresh 4.5 MSS), retransmit 1 at 0.1 + 5S (lost again). SACK of 6 (0.1 + 7S): 5
    # lost (reo_wnd 0). PRR lets 5 go at the SACK of 7 (0.1 + 8S); at the SACK of 8 rule (4)
    # rescues 9. 5's retransmission is SACKed at 0.2 + 9S with RTT 0.1 + S = min_RTT (valid,
    # RFC 8985 6.2 step 2): RACK.xmit_ts = 0.1 + 8S is later than 1's retransmission
    # (0.1 + 5S) by more than reo_wnd (0 in recovery): 1 is lost again and resent at
    # 0.2 + 9S, arriving 0.25 + 10S: ACK 10 at 0.3 + 10S.
    # RFC 6675 alone cannot see it: the RTO fires at 1.1 + 5S, done at 1.2 + 2S.
    p = TcpParams(p=0.0, w0=10)
    res, rows = run_transfer(p, size_packets=10, drops={1: 2, 5: 1}, config=RACK, trace=True)
    assert [r.segment for r in rows if r.event == "retransmit"] == [1, 5, 9, 1]
    assert res.completion_s == pytest.approx(0.3 + 10 * S, abs=1e-12)
    assert res.timeouts == 0
    old = run_transfer(p, size_packets=10, drops={1: 2, 5: 1}, config=SACK)
    assert (old.timeouts, old.completion_s) == (1, pytest.approx(1.2 + 2 * S, abs=1e-12))


def test_probe_is_new_data_when_there_is_some():
    # N = 5, W0 = 2, the whole first window lost. No SRTT: the PTO (1 s) stands in for the
    # first RTO; segment 2 is unsent and the receiver window admits it: the probe is new
    # data. Its SACK (1.1 + S) lets RACK mark 0 and 1 lost: fast recovery, no timeout.
    p = TcpParams(p=0.0, w0=2)
    res, rows = run_transfer(p, size_packets=5, drops=[0, 1], config=RACK, trace=True)
    assert _events(rows, "tlp_probe") == [("tlp_probe", 2)]
    assert [r.time_s for r in rows if r.event == "tlp_probe"] == [pytest.approx(1.0, abs=1e-12)]
    assert (res.timeouts, res.fast_retransmits) == (0, 1)


def test_rack_tlp_validation_and_engine():
    with pytest.raises(ValueError, match="rack_tlp needs sender 'sack'"):
        SimConfig(rack_tlp=True)
    with pytest.raises(ValueError, match="rack_tlp needs sender 'sack'"):
        SimConfig.profile("linux", sender="rfc", rack_tlp=True)
    assert SimConfig.profile("linux").rack_tlp is True  # the linux profile runs RACK-TLP
    assert SimConfig.profile("linux", sender="rfc").rack_tlp is False
    with pytest.raises(ValueError, match="rack_tlp must be True or False"):
        SimConfig(sender="sack", rack_tlp=1)
    cfg = SimConfig.profile("linux", sender="sack", rack_tlp=True)
    assert (cfg.sender, cfg.rack_tlp, cfg.stack) == ("sack", True, "linux")
    assert cfg.to_dict()["rack_tlp"] is True
    assert fast_path_supported(TcpParams(), cfg)  # kernel_sack runs RACK-TLP too


# The linux profile without the kernel mechanisms added since (the handshake's sample, the
# bare FIN, marked-lost-only retransmissions, implicit Limited Transmit, timers in jiffies,
# the receiver's SACK compression and quick-ack mode, the deferred send, the RTO's restarts,
# growth by acked_sacked, Linux's PRR, the delayed ACK after quick-ack mode).
_LINUX_AS_BEFORE = {"handshake_rtt": False, "bare_fin": False, "rxt_lost_only": False, "implicit_lt": False,
                    "timer_hz": 0, "sack_compression": False, "quickack_on_data": False, "tso_defer": False,
                    "rto_restart": False, "grow_acked_sacked": False,
                    "cwnd_limited_growth": False, "linux_prr": False, "linux_delack": False}

# rack_tlp=False: the SACK sender exactly as before RACK-TLP existed (values computed with the
# sender of commit b0ffd19, float hex for bit equality).
_PINNED = [
    ("rfc", {}, TcpParams(p=0.1), 3, 3, "0x1.3338dcc05fd70p+0"),
    ("rfc", {}, TcpParams(p=0.1), 10, 3, "0x1.4cd54b208fc24p+1"),
    ("rfc", {}, TcpParams(p=0.1), 40, 2, "0x1.802a77a2ceccap+0"),
    ("rfc", {}, TcpParams(p=0.1), 40, 3, "0x1.acd8d518cba8ap+2"),
    ("linux", _LINUX_AS_BEFORE, TcpParams(p=0.1, w0=10), 10, 1, "0x1.00536131f7089p-1"),
    ("linux", _LINUX_AS_BEFORE, TcpParams(p=0.1, w0=10), 40, 3, "0x1.00234aa1e0278p+1"),
    ("rfc", {"rtt_sampling": "timestamps", "prr": "crb"}, TcpParams(p=0.2, dup_lt=2), 10, 2,
     "0x1.ccd81fe726144p+1"),
    ("rfc", {"rtt_sampling": "timestamps", "prr": "crb"}, TcpParams(p=0.2, dup_lt=2), 40, 2,
     "0x1.6cde7ea5f84cap+2"),
]


@pytest.mark.parametrize("stack, over, params, n, seed, expect", _PINNED)
def test_rack_tlp_off_is_the_sack_sender_unchanged(stack, over, params, n, seed, expect):
    cfg = SimConfig.profile(stack, sender="sack", rack_tlp=False, **over)
    assert not cfg.rack_tlp
    res = run_transfer(params, size_packets=n, config=cfg, rng=np.random.default_rng(seed))
    assert res.completion_s.hex() == expect


@pytest.mark.parametrize("stack, over, params, expect", [
    ("rfc", {}, TcpParams(p=0.1), "0x1.8a494bd91c666p+7"),
    ("linux", _LINUX_AS_BEFORE, TcpParams(p=0.1, w0=10), "0x1.612921811e662p+5"),
    ("rfc", {"rtt_sampling": "timestamps", "prr": "crb"}, TcpParams(p=0.2, dup_lt=2),
     "0x1.24d93b04b8cc5p+8"),
])
def test_rack_tlp_off_sum_of_100_runs_unchanged(stack, over, params, expect):
    cfg = SimConfig.profile(stack, sender="sack", rack_tlp=False, **over)
    v = [run_transfer(params, size_packets=20, config=cfg, rng=np.random.default_rng(s)).completion_s
         for s in range(100)]
    assert math.fsum(v).hex() == expect


def _noloss_time(params, n, config):
    return run_transfer(params.replace(p=0.0), size_packets=n, config=config).completion_s


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=hs.integers(1, 40), w0=hs.sampled_from([1, 2, 4, 10]), b=hs.sampled_from([1, 2]),
       lt=hs.booleans(), prr=hs.sampled_from(["ssrb", "crb", "off"]), ts=hs.booleans(),
       stack=hs.sampled_from(["rfc", "linux"]), p_ack=hs.sampled_from([0.0, 0.1]),
       seed=hs.integers(0, 2**32 - 1), p=hs.sampled_from([0.05, 0.1, 0.3]))
def test_rack_tlp_delivers_everything_and_pipe_stays_within_the_outstanding_data(n, w0, b, lt, prr, ts, stack,
                                                              p_ack, seed, p):
    params = TcpParams(p=p, w0=w0, b=b, dup_lt=2 if lt else None)
    config = SimConfig.profile(stack, sender="sack", rack_tlp=True, prr=prr, p_ack=p_ack,
                               rtt_sampling="timestamps" if ts else "karn")
    res, pipes = run_watching_pipe(params, n, config, seed)
    assert all(0 <= v <= 2 * out for v, out in pipes)
    assert res.completion_s > 0.0
    assert res.delivered_s is not None and res.delivered_s <= res.completion_s
    assert res.completion_s >= _noloss_time(params, n, config.replace(p_ack=0.0)) - 1e-12
    assert res.data_packets_sent >= n + res.first_transmissions_lost
