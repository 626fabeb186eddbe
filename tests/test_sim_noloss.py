"""No-loss completion times, derived by hand from the ACK clock (not from the code).

Path: rate C, one-way delay d, RTT R = 2d, serialisation s = (MSS + 40) * 8 / C.
Completion = first data packet sent (t = 0) -> ACK of the last byte at the sender.
"""

import math

import pytest
from hypothesis import assume, given, strategies as st

from latency_model import TcpParams
from latency_model.growth import make_rule
from latency_model.sim import SimConfig, run_transfer

R = 0.1
S = (500 + 40) * 8 / 100e6  # 43.2 us


def staircase_b1(n, w0, rtt, s, growth=2):
    """b = 1 slow start: round r carries w0 * growth**(r-1) packets (each ACK releases
    ``growth``: the one it frees and ``growth - 1`` of window growth, 2 for RFC 5681).

    The first packet of round r leaves when the first ACK of round r-1 arrives, i.e.
    start_r = start_{r-1} + s + R with start_1 = 0, so start_r = (r-1)(s + R). From then
    on the link never idles (ACKs arrive every s and each releases ``growth`` packets), so
    the k-th packet of round r (1-based) has left at start_r + k s. The last packet carries
    FIN and is ACKed at once: T = start_r + k s + R = r R + (r - 1 + k) s.
    """
    r, sent, w = 1, 0, w0
    while sent + w < n:
        sent += w
        w *= growth
        r += 1
    k = n - sent
    return r * rtt + (r - 1 + k) * s


@pytest.mark.parametrize("w0", [1, 2, 3, 4])
@pytest.mark.parametrize("n", range(1, 31))
def test_no_loss_staircase_b1(w0, n):
    p = TcpParams(p=0.0, w0=w0, w_ss=30, rwnd=30, b=1)
    r = run_transfer(p, size_packets=n)
    assert r.completion_s == pytest.approx(staircase_b1(n, w0, R, S), abs=1e-12)
    assert r.delivered_s == pytest.approx(r.completion_s - R / 2, abs=1e-12)
    assert r.lost_packets == r.retransmissions == r.timeouts == r.fast_retransmits == 0
    assert r.data_packets_sent == n


def test_paper_staircase_in_rtts_w0_2():
    # Issue 4: b = 1, W0 = 2, M = 30: sizes 1-2 take 1 RTT, 3-6 take 2, 7-14 take 3, 15-30 take 4.
    p = TcpParams(p=0.0, w0=2, b=1)
    for n in range(1, 31):
        rounds = 1 if n <= 2 else 2 if n <= 6 else 3 if n <= 14 else 4
        assert math.floor(run_transfer(p, size_packets=n).completion_s / R) == rounds


@given(
    n=st.integers(1, 30),
    w0=st.integers(1, 4),
    rtt=st.floats(0.01, 0.9),  # < initial RTO (1 s): no spurious timeout
    rate=st.floats(1e6, 1e9),
    mss=st.integers(100, 1500),
)
def test_no_loss_staircase_b1_any_path(n, w0, rtt, rate, mss):
    s = (mss + 40) * 8 / rate
    assume(32 * s < rtt)  # a round's burst leaves before the next round's first ACK
    p = TcpParams(p=0.0, mss_bytes=mss, rtt_s=rtt, w0=w0, b=1)
    r = run_transfer(p, size_packets=n, config=SimConfig(link_rate_bps=rate))
    assert r.completion_s == pytest.approx(staircase_b1(n, w0, rtt, s), rel=1e-9)


# b = 2 (delayed ACK, 200 ms timer), derived segment by segment; entries are
# n -> (multiples of R, multiples of s, delayed-ACK timeouts D = 0.2 s).
B2 = {
    # W0 = 1: seg 0 is held until the delayed-ACK timer (s + d + D, ACK at s + R + D).
    # Then cwnd 2: segs 1, 2 leave at s + R + D; seg 2 completes the pair -> ACK 3 at
    # 3s + 2R + D, cwnd 3: segs 3, 4, 5. The FIN segment is always ACKed at once.
    1: {1: (1, 1, 0), 2: (2, 2, 1), 3: (2, 3, 1), 4: (3, 4, 1), 5: (3, 5, 1), 6: (3, 6, 1)},
    # W0 = 2: segs 0, 1 -> ACK 2 at 2s + R, cwnd 3: segs 2, 3, 4 (left at 3s, 4s, 5s + R).
    # Seg 3 pairs with 2 -> ACK 4 at 4s + 2R, cwnd 4, 1 in flight: segs 5, 6, 7 at
    # 5s, 6s, 7s + 2R. Seg 4 is held until seg 5 arrives (5s + 2.5R < the timer) ->
    # ACK 6 at 5s + 3R, cwnd 5: segs 8, 9, 10 at 6s, 7s, 8s + 3R; seg 7 pairs with 6 ->
    # ACK 8 at 7s + 3R, cwnd 6: segs 11, 12, 13 at 9s, 10s, 11s + 3R.
    2: {1: (1, 1, 0), 2: (1, 2, 0), 3: (2, 3, 0), 4: (2, 4, 0), 5: (2, 5, 0),
        6: (3, 5, 0), 7: (3, 6, 0), 8: (3, 7, 0), 9: (4, 6, 0), 10: (4, 7, 0),
        11: (4, 8, 0), 12: (4, 9, 0), 13: (4, 10, 0), 14: (4, 11, 0)},
    # W0 = 3: segs 0-2 at s, 2s, 3s; ACK 2 at 2s + R, cwnd 4, seg 2 in flight:
    # segs 3, 4, 5 leave at 3s, 4s, 5s + R.
    3: {1: (1, 1, 0), 2: (1, 2, 0), 3: (1, 3, 0), 4: (2, 3, 0), 5: (2, 4, 0), 6: (2, 5, 0)},
    # W0 = 4: ACK 2 at 2s + R -> cwnd 5, segs 2, 3 in flight: segs 4, 5, 6 at 3s, 4s, 5s + R;
    # ACK 4 at 4s + R -> cwnd 6, 3 in flight: segs 7, 8, 9 after the link frees at 5s + R.
    4: {1: (1, 1, 0), 2: (1, 2, 0), 3: (1, 3, 0), 4: (1, 4, 0), 5: (2, 3, 0), 6: (2, 4, 0),
        7: (2, 5, 0), 8: (2, 6, 0), 9: (2, 7, 0), 10: (2, 8, 0)},
}


@pytest.mark.parametrize("w0,n", [(w0, n) for w0, table in B2.items() for n in table])
def test_no_loss_b2_hand_derived(w0, n):
    rr, ss, dd = B2[w0][n]
    p = TcpParams(p=0.0, w0=w0, w_ss=30, rwnd=30, b=2)
    r = run_transfer(p, size_packets=n)
    assert r.completion_s == pytest.approx(rr * R + ss * S + dd * 0.2, abs=1e-12)


@pytest.mark.parametrize("w0", [1, 2])
@pytest.mark.parametrize("n", range(1, 41))
def test_growth_goes_through_the_rule(w0, n):
    # Generalized slow start, beta = 3 (Burst TCP): each ACK adds 2 MSS, so releases three
    # packets and the rounds carry w0 * 3**(r-1) (cwnd stays below W_SS = M = 200).
    p = TcpParams(p=0.0, w0=w0, w_ss=200, rwnd=200, b=1, rule=make_rule("generalized", beta=3.0))
    assert run_transfer(p, size_packets=n).completion_s == pytest.approx(staircase_b1(n, w0, R, S, 3), abs=1e-12)
