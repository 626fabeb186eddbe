"""Retransmission-timer timings (RFC 6298) for repeated losses of one packet, by hand."""

import pytest

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_transfer

S = (500 + 40) * 8 / 100e6


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_rfc6298_backoff_single_packet(k):
    # One packet lost k times. No RTT sample yet: RTO = 1 s (2.1), doubled on each
    # expiry (5.5): retransmissions at 1, 3, 7, 15, ... = 2**k - 1 s; the last copy
    # arrives and is ACKed: + s + RTT.
    R = 0.1
    r = run_transfer(TcpParams(p=0.0, rtt_s=R), size_packets=1, drops={0: k})
    assert r.completion_s == pytest.approx(2**k - 1 + S + R, abs=1e-12)
    assert r.timeouts == k and r.max_backoff == k
    assert r.lost_packets == k and r.retransmissions == k and r.fast_retransmits == 0


def test_rfc6298_backoff_capped_by_max_rto():
    # RTO 1, 2, 4, 8, then held at max_rto = 8: 1 + 2 + 4 + 8 + 8 + 8 + 8 = 39 s.
    r = run_transfer(TcpParams(p=0.0), size_packets=1, drops={0: 7}, config=SimConfig(max_rto_s=8.0))
    assert r.completion_s == pytest.approx(39 + S + 0.1, abs=1e-12)


@pytest.mark.parametrize("rtt,rto", [(0.1, 1.0), (0.5, 2.0)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_paper_rule_fixed_rto_no_backoff(rtt, rto, k):
    # The model's timer: fixed max(1 s, 4 RTT), no back-off: k expiries cost k * RTO.
    r = run_transfer(TcpParams(p=0.0, rtt_s=rtt), size_packets=1, drops={0: k}, config=SimConfig(rto_rule="paper"))
    assert r.completion_s == pytest.approx(k * rto + S + rtt, abs=1e-12)


def test_paper_rule_uses_rto_s():
    r = run_transfer(TcpParams(p=0.0, rto_s=0.3), size_packets=1, drops={0: 3}, config=SimConfig(rto_rule="paper"))
    assert r.completion_s == pytest.approx(0.9 + S + 0.1, abs=1e-12)


@pytest.mark.parametrize("k,factor", [(1, 5), (2, 11), (3, 23)])
def test_rfc6298_estimator_then_backoff(k, factor):
    # RTT 0.5 s, 2 packets, b = 1, packet 1 lost k times. Segment 0's ACK arrives at
    # r = s + R: first sample (2.2): SRTT = r, RTTVAR = r/2, RTO = r + 4 r/2 = 3r > 1 s.
    # The timer restarts there (5.3) and fires after 3r, 6r, 12r (5.5); the last copy is
    # ACKed r later: T = r + 3r (2**k - 1) + r.
    rtt = 0.5
    rr = S + rtt
    res = run_transfer(TcpParams(p=0.0, rtt_s=rtt), size_packets=2, drops={1: k})
    assert res.completion_s == pytest.approx(factor * rr, abs=1e-9)
    assert factor == 2 + 3 * (2**k - 1)


@pytest.mark.parametrize("min_rto,expected", [(1.0, lambda r: 1.0 + 2 * r), (0.2, lambda r: 5 * r)])
def test_min_rto_bounds_the_estimate(min_rto, expected):
    # RTT 0.1: RTO estimate 3r = 0.3 s; with min RTO 1 s (2.4) the timer waits 1 s.
    rr = S + 0.1
    res = run_transfer(TcpParams(p=0.0), size_packets=2, drops={1: 1}, config=SimConfig(min_rto_s=min_rto))
    assert res.completion_s == pytest.approx(expected(rr), abs=1e-9)


def test_karn_keeps_backed_off_rto():
    # RTT 0.5, W0 = 1, 2 packets; both first transmissions lost. Segment 0 times out at
    # 1 s (RTO -> 2 s), its retransmission is ACKed at 1 + r but gives no RTT sample
    # (Karn), so the backed-off 2 s is kept: segment 1 (sent at 1 + r, lost) is
    # retransmitted at 3 + r and ACKed at 3 + 2r. With a sample it would be 1 + 5r.
    rtt = 0.5
    rr = S + rtt
    res = run_transfer(TcpParams(p=0.0, rtt_s=rtt, w0=1), size_packets=2, drops=[0, 1])
    assert res.completion_s == pytest.approx(3 + 2 * rr, abs=1e-9)
    assert res.timeouts == 2 and res.max_backoff == 1
