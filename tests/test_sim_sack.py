"""SACK (RFC 2018), RFC 6675 recovery and PRR (RFC 6937): hand-derived traces and properties.

Setting unless stated: MSS 500 B + 40 B header at 100 Mb/s (serialisation S = 43.2 us),
RTT 0.1 s (one-way 0.05 s), b = 1, no Limited Transmit, Reno growth, ``sender="sack"``.
Segments are 0-based; an ACK "k" acknowledges segments 0..k-1.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_transfer
from latency_model.sim import flat as FL
from latency_model.sim import kernel as K
from latency_model.sim import kernel_sack as KS
from latency_model.sim.runner import fast_path_supported
from latency_model.sim.transfer import drop_counts, run_flat

S = (500 + 40) * 8 / 100e6
SACK = SimConfig(sender="sack")


def receiver_acks(n, arrivals, config=SACK, b=1):
    """The ACKs ``(ack, SACK blocks, TSecr)`` the flat engine's receiver
    (:func:`.flat.on_segment`, no quick ACKs, no SACK compression) sends for these arrivals
    ``(segment, TSval)`` at t = 10 s, in order (a delayed ACK held at the end is not sent)."""
    PI, PF = K.pack_params(TcpParams(p=0.0, b=b), n * 500, config)
    I, F, S, _, RB, _, QI, QF = K.state_arrays(n, 64)
    FL.reset(I, F, S, PI, PF)
    for seg, tsval in arrivals:
        FL.on_segment(seg, tsval, 10.0, I, F, S, PI, PF, np.empty(0), RB, QI, QF)
    return [(int(QI[FL.QI_AA, j]), tuple((int(QI[FL.QI_B0 + 2 * i, j]), int(QI[FL.QI_B0 + 2 * i + 1, j]))
                                          for i in range(QI[FL.QI_AN, j])), float(QF[FL.QF_AE, j]))
            for j in range(I[FL.AQN])]


def _receiver(n, arrivals):
    """The ACKs ``(ack, SACK blocks)`` the sack sender's receiver (b = 1) sends for these
    arrivals, in order."""
    return [a[:2] for a in receiver_acks(n, [(seg, 0.0) for seg in arrivals])]


def test_receiver_sack_blocks_most_recent_first():
    # RFC 2018 Section 4: the block holding the segment that triggered the ACK first, then
    # the most recently reported others, at most 3. Segments 0..9, 1/3/5/7 missing:
    # 2 -> [(2,3)]; 4 -> [(4,5),(2,3)]; 6 -> [(6,7),(4,5),(2,3)]; 8 -> [(8,9),(6,7),(4,5)]
    # ((2,3) still held but a fourth block does not fit); 5 merges (4,5),(6,7) into (4,7)
    # and moves it first; 1 fills the first hole: rcv_nxt 3, the ACK reports the rest.
    acks = _receiver(10, [0, 2, 4, 6, 8, 5, 1])
    assert acks[1:] == [
        (1, ((2, 3),)),
        (1, ((4, 5), (2, 3))),
        (1, ((6, 7), (4, 5), (2, 3))),
        (1, ((8, 9), (6, 7), (4, 5))),
        (1, ((4, 7), (8, 9), (2, 3))),
        (3, ((4, 7), (8, 9))),
    ]


def test_receiver_duplicate_above_moves_its_block_first():
    acks = _receiver(6, [0, 2, 4, 2])
    assert acks[-1] == (1, ((2, 3), (4, 5)))


def test_receiver_without_sack_acks_out_of_order_at_once():
    # The rfc and ns3 senders' receiver sends no SACK blocks: an out-of-order segment is
    # acknowledged at once (RFC 5681 4.2) with ACK 0, however b delays in-order ones.
    assert receiver_acks(4, [(1, 0.0)], SimConfig(), b=2) == [(0, (), 0.0)]


def test_two_losses_in_one_window_repaired_in_one_recovery():
    # W0 = 10, 10 segments sent back to back at t = 0 (segment k leaves at (k+1) S),
    # segments 1 and 3 lost. Segment 0's ACK (0.1 + S) grows cwnd; nothing new to send.
    # Segments 2, 4, 5 give duplicate ACKs with new SACK info; the third (0.1 + 6S):
    # recovery, ssthresh = FlightSize/2 = 4.5 MSS, RecoverFS = 9, retransmit 1 (prr_out 1,
    # HighRxt 2). PRR: pipe = 1 (seg 1: lost, retransmitted) + 1 (seg 3: not lost yet) +
    # 4 (6..9) = 6 > 4.5: sndcnt = ceil(1 x 4.5 / 9) - 1 = 0.
    # Seg 6 SACKed: IsLost(3) (4, 5, 6 above); pipe = 1 + 3 = 4 <= 4.5: SSRB sndcnt =
    # min(0.5, max(2 - 1, 1) + 1) = 0.5 < 1: nothing.
    # Seg 7 SACKed (0.1 + 8S): pipe = 1 + 2 = 3, sndcnt = min(1.5, 3) -> NextSeg rule 1:
    # retransmit 3. Seg 8 SACKed: pipe 3, no hole, no new data -> rule 4, the rescue
    # retransmission of 9 (once). The retransmission of 1 (arrives 0.15 + 7S) gives the
    # partial ACK 3; that of 3 (sent 0.1 + 8S, arrives 0.15 + 9S) completes: 0.2 + 9S.
    # NewReno learns of the second hole only from the partial ACK (0.2 + 7S) and ends
    # one RTT later, at 0.3 + 8S.
    p = TcpParams(p=0.0, w0=10)
    res, rows = run_transfer(p, size_packets=10, drops=[1, 3], config=SACK, trace=True)
    assert [r.segment for r in rows if r.event == "retransmit"] == [1, 3, 9]
    assert res.completion_s == pytest.approx(0.2 + 9 * S, abs=1e-12)
    assert (res.fast_retransmits, res.timeouts) == (1, 0)
    reno = run_transfer(p, size_packets=10, drops=[1, 3])
    assert reno.completion_s == pytest.approx(0.3 + 8 * S, abs=1e-12)


def _recovery_pattern(prr):
    """Per duplicate ACK of recovery: '.' nothing sent, 'R' retransmission, 'N' new data."""
    p = TcpParams(p=0.0, w0=20, w_ss=64, rwnd=64)
    _, rows = run_transfer(p, size_packets=60, drops=[0], config=SimConfig(sender="sack", prr=prr), trace=True)
    pattern, exit_cwnd = [], None
    for r in rows:
        if r.event == "dupack":
            pattern.append(".")
        elif r.event in ("send", "retransmit") and pattern:
            pattern[-1] = "R" if r.event == "retransmit" else "N"
        elif r.event == "recovery_exit":
            exit_cwnd = r.cwnd_bytes / 500
            break
    return "".join(pattern), exit_cwnd


def test_prr_spreads_the_reduction_rfc6675_waits():
    # RFC 6937 Section 5's comparison: one loss (segment 0) in a window of 20, ssthresh
    # 10, RecoverFS 20, 19 duplicate ACKs. After duplicate ACK k (k >= 3) pipe before
    # sending = (19 - k) not-lost originals + 1 retransmission + the new data sent so far.
    # PRR: while pipe > ssthresh, sndcnt = ceil((k - 2) x 10 / 20) - prr_out: one new
    # segment on each odd k = 5..13 (prr_out 1 -> 6). k = 15: pipe = 4 + 1 + 5 = 10, not
    # above ssthresh: sndcnt = min(10 - 10, .) = 0. k = 16..19: pipe 9, sndcnt 1 each.
    # RFC 6675 (cwnd = ssthresh = 10): pipe = 20 - k + 1 stays >= 10 until k = 11, then one
    # segment per ACK. Both send 9 new segments; recovery ends with cwnd = ssthresh.
    assert _recovery_pattern("ssrb") == ("..R.N.N.N.N.N..NNNN", 10.0)
    assert _recovery_pattern("crb") == ("..R.N.N.N.N.N..NNNN", 10.0)
    assert _recovery_pattern("off") == ("..R.......NNNNNNNNN", 10.0)


def test_single_loss_no_worse_than_newreno_and_scoreboard_kept_after_rto():
    # A lost retransmission in recovery needs the timer; after it, SACKed segments are
    # not resent (RFC 6675 Section 5.1): W0 = 10, 10 segments, 1 lost twice, 5 lost once.
    p = TcpParams(p=0.0, w0=10)
    res, rows = run_transfer(p, size_packets=10, drops={1: 2, 5: 1}, config=SACK, trace=True)
    assert res.timeouts == 1
    after = [r.segment for r in rows if r.event == "retransmit"
             and r.time_s > [x.time_s for x in rows if x.event == "timeout"][0]]
    assert set(after) <= {1, 5}


def test_sack_runs_on_the_compiled_path_and_validates():
    assert fast_path_supported(TcpParams(), SACK)
    with pytest.raises(ValueError, match="prr"):
        SimConfig(prr="fast")
    with pytest.raises(ValueError, match="prr 'crb' needs sender 'sack'"):
        SimConfig(prr="crb")
    with pytest.raises(ValueError, match="rtt_sampling 'ns3'"):
        SimConfig(sender="sack", rtt_sampling="ns3")


def run_watching_pipe(params, n, config, seed=None, drops=None):
    """One transfer (random losses from ``seed`` or the scripted ``drops``) on the
    interpreted flat engine, and ``(pipe, bytes between SND.UNA and SND.MAX)`` at every
    SetPipe() it computed (:func:`.kernel_sack.sk_pipe`)."""
    pipes = []
    orig = KS.sk_pipe

    def spy(I, PI, PF, S):
        v = orig(I, PI, PF, S)
        # SetPipe counts a segment at most twice (once unless lost, once more while its
        # retransmission is out): 0 <= pipe <= 2 x the bytes between SND.UNA and SND.MAX.
        pipes.append((v, FL.seg_end(I[FL.MAX], PI) - FL.seg_end(I[FL.UNA], PI)))
        return v

    KS.sk_pipe = spy
    try:
        res = run_flat(params, n * params.mss_bytes, n, config, np.random.default_rng(seed),
                       None if drops is None else drop_counts(drops, n), False, compiled=False)
    finally:
        KS.sk_pipe = orig
    return res, pipes


@pytest.mark.parametrize("rack_tlp", [False, True])
def test_pipe_watch_sees_the_recovery(rack_tlp):
    # The watch above is live. Segments 1 and 3 of 10 lost (W0 = 10, b = 1, no Limited
    # Transmit): the first SetPipe() is PRR's, just after the fast retransmission of 1 on
    # the third duplicate ACK (SACKed 2, 4, 5). RFC 6675: 6-9 and 3 (2 SACKed above it, not
    # IsLost) count once, 1 (IsLost) once for its retransmission: 6 segments. RACK: the
    # third SACK sets reo_wnd to 0, so 1 and 3 (sent before 5) are both marked lost: 6-9
    # count, 1 once for its retransmission in flight: 5 segments.
    res, pipes = run_watching_pipe(TcpParams(p=0.0, w0=10, b=1), 10, SimConfig(sender="sack", rack_tlp=rack_tlp),
                                   drops=[1, 3])
    assert res.fast_retransmits == 1
    assert pipes[0] == ((5 if rack_tlp else 6) * 500, 9 * 500)
    assert all(0 <= v <= 2 * out for v, out in pipes)


def _noloss_time(params, n, config):
    return run_transfer(params.replace(p=0.0), size_packets=n, config=config).completion_s


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=hs.integers(1, 40), w0=hs.sampled_from([1, 2, 4, 10]), b=hs.sampled_from([1, 2]),
       lt=hs.booleans(), prr=hs.sampled_from(["ssrb", "crb", "off"]),
       ts=hs.booleans(), seed=hs.integers(0, 2**32 - 1), p=hs.sampled_from([0.05, 0.1, 0.3]))
def test_sack_delivers_everything_and_pipe_stays_within_the_outstanding_data(n, w0, b, lt, prr, ts, seed, p):
    params = TcpParams(p=p, w0=w0, b=b, dup_lt=2 if lt else None)
    config = SimConfig(sender="sack", prr=prr, rtt_sampling="timestamps" if ts else "karn")
    res, pipes = run_watching_pipe(params, n, config, seed)
    assert all(0 <= v <= 2 * out for v, out in pipes)
    assert res.delivered_s is not None and res.delivered_s <= res.completion_s
    assert res.completion_s >= _noloss_time(params, n, config) - 1e-12
    assert res.data_packets_sent >= n + res.first_transmissions_lost


@pytest.mark.slow
def test_sack_mean_completion_not_worse_than_newreno():
    # Common random numbers: same seed per run for both senders. SACK repairs every hole
    # NewReno repairs, and several per RTT; its Monte Carlo mean at p = 0.1, 40 packets
    # should not exceed NewReno's (300 runs; the difference is several SE).
    p = TcpParams(p=0.1)
    t = {s: np.mean([run_transfer(p, size_packets=40, config=SimConfig(sender=s), rng=np.random.default_rng(i)).completion_s for i in range(300)])
         for s in ("rfc", "sack")}
    assert t["sack"] <= t["rfc"]
