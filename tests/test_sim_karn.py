"""Karn's rule (RFC 6298 Sections 3 and 5), pinned by traces derived by hand.

Setting unless stated: MSS 500 B + 40 B header at 100 Mb/s (serialisation S), one-way
delay R/2, b = 1, NewReno, initial and minimum RTO 1 s. Segments are 0-based.

An ACK that newly covers a retransmitted segment gives no RTT sample, so a backed-off
RTO is kept until a segment first sent after the retransmission is acknowledged.
Each case below states the times event by event; the RTO values are recomputed here
with RFC 6298 (2.2)-(2.4) from the samples the derivation says are valid.
"""

import pytest

from latency_model import TcpParams
from latency_model.sim import run_transfer

S = (500 + 40) * 8 / 100e6


def rfc6298_rto(samples, min_rto=1.0):
    """RTO after the RTT ``samples`` (seconds), RFC 6298 (2.2)-(2.4), G = 0."""
    srtt = rttvar = None
    for r in samples:
        if srtt is None:
            srtt, rttvar = r, r / 2.0
        else:
            rttvar = 0.75 * rttvar + 0.25 * abs(srtt - r)
            srtt = 0.875 * srtt + 0.125 * r
    return max(srtt + 4.0 * rttvar, min_rto)


def trace(params, n, drops):
    return run_transfer(params, size_packets=n, drops=drops, trace=True)


def rows_of(rows, event):
    return [r for r in rows if r.event == event]


def test_issue_example_backed_off_rto_kept_after_timeout():
    # W0 = 2, 3 segments, segments 0 and 2 lost once. Segment 0 times out at 1 s (RTO
    # -> 2 s) and is resent; its ACK (covering 0 and 1) returns at 1.1 + S: no sample.
    # Segment 2 leaves then, is lost, its timer fires 2 s later (3.1 + S) and the
    # retransmission is ACKed at 3.2 + 2S. Taking a sample from segment 1 (sent at 0)
    # gave RTO 3.3 s and 4.5 s.
    res, rows = trace(TcpParams(p=0.0), 3, [0, 2])
    assert res.completion_s == pytest.approx(3.2 + 2 * S, abs=1e-12)
    ack = rows_of(rows, "ack")
    assert [r.time_s for r in ack] == pytest.approx([1.1 + S])
    assert ack[0].rto_s == 2.0
    assert [r.time_s for r in rows_of(rows, "timeout")] == pytest.approx([1.0, 3.1 + S])
    assert res.timeouts == 2 and res.max_backoff == 1


def test_lost_retransmission_then_first_valid_sample():
    # W0 = 2, 4 segments; segment 0 lost twice, segment 3 once. Timeouts at 1 s and 3 s
    # (RTO 1 -> 2 -> 4). The ACK of the second retransmission (3.1 + S) covers it: no
    # sample, RTO stays 4 s; cwnd 500 -> 1000 (slow start), segments 2 and 3 leave.
    # Segment 2's ACK (3.2 + 2S) is the first valid sample, r = 0.1 + S: RTO =
    # max(3r, 1 s) = 1 s, restarted there. It fires at 4.2 + 2S, segment 3 is resent and
    # ACKed at 4.3 + 3S. (With a sample from segment 1, sent at 0: RTO ~ 10 s.)
    res, rows = trace(TcpParams(p=0.0), 4, {0: 2, 3: 1})
    assert res.completion_s == pytest.approx(4.3 + 3 * S, abs=1e-12)
    acks = rows_of(rows, "ack")
    assert [r.time_s for r in acks] == pytest.approx([3.1 + S, 3.2 + 2 * S])
    assert [r.rto_s for r in acks] == pytest.approx([4.0, rfc6298_rto([0.1 + S])])
    assert [r.time_s for r in rows_of(rows, "timeout")] == pytest.approx([1.0, 3.0, 4.2 + 2 * S])


def test_two_losses_in_one_window_newreno_no_sample_from_recovery():
    # RTT 0.5 (so the estimate exceeds the 1 s floor), W0 = 10, 10 segments, segments 2
    # and 5 lost. Valid samples: ACK 1 (r1 = 0.5 + S) and ACK 2 (r2 = 0.5 + 2S). Third
    # duplicate ACK (from segment 6) at 0.5 + 7S: fast retransmit of 2; its ACK 5 at
    # 1.0 + 8S is partial (covers the retransmission: no sample), segment 5 resent,
    # full ACK 10 at 1.5 + 9S (covers a retransmission: no sample).
    p = TcpParams(p=0.0, rtt_s=0.5, w0=10)
    res, rows = trace(p, 10, [2, 5])
    assert res.completion_s == pytest.approx(1.5 + 9 * S, abs=1e-12)
    assert res.fast_retransmits == 1 and res.timeouts == 0
    (fr,) = rows_of(rows, "fast_retransmit")
    assert fr.time_s == pytest.approx(0.5 + 7 * S)
    (partial,) = rows_of(rows, "partial_ack")
    assert partial.time_s == pytest.approx(1.0 + 8 * S)
    expected = rfc6298_rto([0.5 + S, 0.5 + 2 * S])
    assert partial.rto_s == pytest.approx(expected, abs=1e-12)
    assert rows[-1].event == "done" and rows[-1].rto_s == pytest.approx(expected, abs=1e-12)


def test_new_segment_lost_during_fast_recovery():
    # RTT 0.5, W0 = 10, 12 segments; segments 2 and 10 lost. ACK 1 (0.5 + S) opens cwnd
    # to 11 segments: 10 and 11 leave. ACK 2 at 0.5 + 2S. Fast retransmit of 2 on the
    # third duplicate ACK (segment 5's, 0.5 + 6S). Segment 11's duplicate ACK comes back
    # at 1.0 + 3S, before the retransmission reaches the receiver (0.75 + 7S); that ACK
    # is 10, partial (recover = 11): segment 10 is resent and ACKed at 1.5 + 8S.
    # Only ACKs 1 and 2 are valid samples.
    p = TcpParams(p=0.0, rtt_s=0.5, w0=10)
    res, rows = trace(p, 12, [2, 10])
    assert res.completion_s == pytest.approx(1.5 + 8 * S, abs=1e-12)
    (partial,) = rows_of(rows, "partial_ack")
    assert partial.segment == 10 and partial.time_s == pytest.approx(1.0 + 7 * S)
    assert rows[-1].rto_s == pytest.approx(rfc6298_rto([0.5 + S, 0.5 + 2 * S]), abs=1e-12)
    assert res.fast_retransmits == 1 and res.timeouts == 0


def test_retransmission_lost_in_fast_recovery_times_out_without_sample():
    # RTT 0.1, W0 = 10, 10 segments; segment 2 lost twice. Fast retransmit at 0.1 + 6S
    # (third duplicate ACK) is lost too; the timer, restarted by ACK 2 at 0.1 + 2S,
    # fires at 1.1 + 2S; the resend is ACKed (ACK 10) at 1.2 + 3S. That ACK covers a
    # retransmission: the backed-off 2 s stays.
    res, rows = trace(TcpParams(p=0.0), 10, {2: 2})
    assert res.completion_s == pytest.approx(1.2 + 3 * S, abs=1e-12)
    assert res.fast_retransmits == 1 and res.timeouts == 1
    assert rows[-1].rto_s == 2.0


def test_sample_taken_after_recovery_from_new_data():
    # RTT 0.5, W0 = 4, 8 segments, segment 1 lost. ACK 1 at r = 0.5 + S (sample 1)
    # sends 4 and 5; duplicate ACKs at 0.5 + 3S, 0.5 + 4S, 1.0 + 2S (fast retransmit,
    # ssthresh 1250, cwnd 2750) and 1.0 + 3S (cwnd 3250: segment 6 leaves). Full ACK 6
    # at 1.5 + 3S covers the retransmission: no sample; cwnd = min(1250, 1000), segment 7
    # leaves. ACK 7 (1.5 + 4S) acknowledges segment 6, first sent at 1.0 + 3S after the
    # retransmission: a valid sample r; so is ACK 8 (2.0 + 4S), r again.
    r = 0.5 + S
    p = TcpParams(p=0.0, rtt_s=0.5, w0=4)
    res, rows = trace(p, 8, [1])
    assert res.completion_s == pytest.approx(2.0 + 4 * S, abs=1e-12)
    (exit_,) = rows_of(rows, "recovery_exit")
    assert exit_.time_s == pytest.approx(1.5 + 3 * S)
    assert exit_.rto_s == pytest.approx(rfc6298_rto([r]), abs=1e-12)
    acks = rows_of(rows, "ack")
    assert [a.time_s for a in acks] == pytest.approx([r, 1.5 + 4 * S])
    assert acks[-1].rto_s == pytest.approx(rfc6298_rto([r, r]), abs=1e-12)
    assert rows[-1].rto_s == pytest.approx(rfc6298_rto([r, r, r]), abs=1e-12)
