"""Single-loss T/F patterns, derived by hand from the RFC rules (b = 1 unless stated).

Notation: segments 0-based; "dupack" = duplicate ACK; n = 8, W0 = 2, slow start.
No-loss schedule: round 1 sends 0,1; ACK of 0 -> cwnd 3, sends 2,3; ACK of 1 -> cwnd 4,
sends 4,5; ACK of 2 -> cwnd 5, sends 6,7 (the file ends).
"""

import pytest

from latency_model import TcpParams, apply_variant
from latency_model.sim import SimConfig, single_loss, y_to_packets


def pattern(variant, n=8, w0=2, b=1, w_ss=30, lt_mode="rfc3042"):
    p = apply_variant(TcpParams(p=0.0, w0=w0, b=b, w_ss=w_ss), variant)
    return single_loss(p, size_packets=n, config=SimConfig(lt_mode=lt_mode)).pattern


def test_newreno_pattern():
    # lose 0: only seg 1 arrives -> 1 dupack -> T.
    # lose 1: ACK of 0 (cwnd 3) sends 2,3 -> 2 dupacks, cwnd full (3 in flight) -> T.
    # lose 2: 3,4,5 arrive -> 3 dupacks -> F.  lose 3: 4,5,6,7 -> 4 dupacks -> F.
    # lose 4: 5,6,7 -> 3 dupacks -> F.  lose 5: 6,7 -> 2 dupacks, no data left -> T.
    # lose 6: 1 dupack -> T.  lose 7: none -> T.
    assert pattern("newreno") == "TTFFFTTT"


def test_limited_transmit_rfc3042_pattern():
    # RFC 3042: one new segment on each of the first two dupacks.
    # lose 0: seg 1 -> dupack 1 -> sends 2 -> dupack 2 -> sends 3 -> dupack 3 -> F.
    # lose 1: 2,3 give dupacks 1, 2 -> LT sends 4, 5 -> dupack 3 -> F.
    # lose 5: 6,7 give 2 dupacks, nothing new to send -> T; lose 6, 7: T.
    assert pattern("lt") == "FFFFFTTT"


def test_limited_transmit_paper_reading_pattern():
    # Paper's reading of dup_lt = 2: new data only from the 2nd dupack on.
    # lose 0: 1 dupack only -> T.  lose 1: 2,3 -> dupack 2 sends 4 -> dupack 3 -> F.
    assert pattern("lt", lt_mode="paper") == "TFFFFTTT"


def test_proposal_pattern_both_readings():
    # Tail rule: a hole among the last dup_t = 3 segments (5, 6, 7) is retransmitted on
    # the first dupack: lose 5 -> F, lose 6 -> F (seg 7's dupack), lose 7 -> no dupack, T.
    # RFC 3042 reading of dup_lt = 1 (one LT segment, on dupack 1): lose 0 -> seg 1
    # -> dupack 1 -> sends 2 -> dupack 2 -> nothing more -> T.
    assert pattern("proposal") == "TFFFFFFT"
    # Paper reading of dup_lt = 1: LT on dupacks 1 and 2 -> lose 0 -> 3 dupacks -> F.
    assert pattern("proposal", lt_mode="paper") == "FFFFFFFT"


def test_early_retransmit_pattern():
    # RFC 5827: with oseg < 4 outstanding and no new data to send, threshold oseg - 1.
    # lose 5: oseg = 3 (5,6,7), file sent -> 2 dupacks suffice -> F.
    # lose 6: oseg = 2 -> 1 dupack -> F.  lose 7: no dupack -> T.
    # lose 0 / 1: new data could still be sent (cwnd-limited, not rwnd) -> no ER -> T.
    assert pattern("er") == "TTFFFFFT"


def test_delayed_ack_b2_leading_and_tail():
    # b = 2, W0 = 2: lose 0: 1 dupack -> T. lose 1: seg 0 held until the 200 ms timer,
    # ACK 1 -> cwnd 3 sends 2,3 -> 2 dupacks -> T. lose 2: ACK 2 -> cwnd 3 sends 2,3,4
    # -> 2 dupacks -> T. lose 3: seg 2 held; seg 4 (out of order) ACKs it at once
    # (a NEW ack: cwnd 4, sends 5,6) -> 5, 6 give 2 dupacks -> T. lose 4: seg 3 pairs
    # with 2 -> ACK 4, cwnd 4 sends 5,6,7 -> 3 dupacks -> F.
    # Tail: the last 3 give at most 2 dupacks -> T; the 4th from last gets 3 -> F.
    pat = pattern("newreno", n=12, b=2)
    assert pat[:5] == "TTTTF"
    assert pat[-4:] == "FTTT"


def test_y_to_congestion_avoidance_w0_1():
    # CA from the start, W0 = 1 (ssthresh = 1 MSS), cwnd += 1/cwnd per ACK:
    # cwnd 1 -> 2 -> 2.5 -> 2.9 -> 3.24 -> 3.55 -> 3.84 -> 4.1 after ACKs of 0..6.
    # Segments 0..6 each see at most 2 dupacks (the window holds <= 3 behind the hole);
    # losing 7 (sent with 9, 10 after ACK of 6) gives 3 dupacks (8, 9, 10) -> F.
    p = TcpParams(p=0.0, w0=1, w_ss=1, b=1)
    assert y_to_packets(p) == 7


@pytest.mark.parametrize("w0,expected", [(1, 2), (2, 1), (3, 0), (4, 0)])
def test_y_to_slow_start_lt_paper_reading_matches_table_1(w0, expected):
    # Paper's LT reading: the window must deliver 2 dupacks, i.e. hold >= 3 packets.
    # W0 = 1: lose 0 -> T; lose 1 (cwnd 2: 1,2 out) -> 1 dupack -> T; lose 2 (ACK of 1
    # -> cwnd 3 sends 3,4) -> 2 dupacks -> LT sends 5 -> 3rd dupack -> F: y_to = 2.
    p = apply_variant(TcpParams(p=0.0, w0=w0, b=1), "lt")
    assert y_to_packets(p, SimConfig(lt_mode="paper")) == expected


@pytest.mark.parametrize("w0,expected", [(1, 3), (2, 2), (3, 1), (4, 0)])
def test_y_to_slow_start_newreno_matches_table_1(w0, expected):
    # W0 = 1: cwnd 1 -> 2 -> 3 -> 4 per ACK; losing 0, 1, 2 leaves 0, 1, 2 packets
    # behind the hole (T); losing 3 leaves 4,5,6 -> F. Larger W0 shifts by one each.
    p = TcpParams(p=0.0, w0=w0, b=1)
    assert y_to_packets(p) == expected


def test_single_loss_result_counts():
    res = single_loss(TcpParams(p=0.0, w0=2), size_packets=20)
    assert res.y_to_packets == 2 and res.tail_timeout_packets == 3
    assert len(res.completion_s) == 20
    # A timeout costs at least the 1 s minimum RTO; a fast retransmit well under it.
    for letter, t in zip(res.pattern, res.completion_s):
        assert (t > 1.0) if letter == "T" else (t < 1.0)


def test_a_loss_repaired_by_a_tail_loss_probe_is_P():
    # N = 3, W0 = 2, b = 1, SACK + RACK-TLP (RFC 8985; the traces are derived step by step in
    # tests/test_sim_rack_tlp.py).
    # lose 0: segment 1's SACK, then RACK's reordering window (RTT/4) marks 0 lost: F.
    # lose 1: ACK 1 sends 2; 2's SACK at 0.2 s lets RACK mark 1 (sent before 2) lost: F.
    # lose 2 (the last): no later segment can be SACKed; the PTO (2 SRTT + WCDelAckT) sends
    #   the probe, a copy of 2, which repairs it: P, no timeout.
    # Without RACK-TLP (SACK, or the RFC sender) each of the three waits for the RTO: TTT.
    p = TcpParams(p=0.0, w0=2)
    res = single_loss(p, size_packets=3, config=SimConfig(sender="sack", rack_tlp=True))
    assert res.pattern == "FFP"
    assert (res.y_to_packets, res.tail_timeout_packets) == (0, 0)
    assert res.completion_s[2] < 1.0  # the probe, not the 1 s RTO
    for config in (SimConfig(sender="sack"), SimConfig()):
        assert single_loss(p, size_packets=3, config=config).pattern == "TTT"
