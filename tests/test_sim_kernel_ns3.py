"""The ns-3 sender (sim/kernel_ns3.py on the flat engine): its mechanisms against traces
derived by hand from ns-3.37's rules (validation/ns3/NOTES.md cites file and function), the
ACK serialisation against hand-computed times, and the engine's drivers (the Monte Carlo
batch, compiled and interpreted, and run_transfer's single transfer) against each other.
The comparisons with ns-3's own runs are in tests/test_sim_profiles.py."""

import importlib

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.growth import make_rule
from latency_model.sim import OUT_FIELDS, SimConfig, run_transfer
from latency_model.sim import kernel as N

from _kernel_twin import KernelTwin, reference

T = importlib.import_module("latency_model.sim.transfer")  # the module (sim exports its function)

MSS = 500
COMPILED = N.compiled_run_batch()
KERNELS = [N.run_batch] + ([COMPILED] if COMPILED is not None else [])

TWIN = KernelTwin(N.pack_params, N)
run_kernel, check_identical = TWIN.run_kernel, TWIN.check_identical


def test_ns3_congestion_avoidance_grows_by_whole_bytes():
    # TcpNewReno::CongestionAvoidance: one max(1, floor(MSS^2 / cwnd)) bytes step per ACK of
    # one segment, cwnd an integer of bytes. W0 = W_SS = 2: congestion avoidance from the
    # start (cwnd = ssthresh = 1000), b = 1: one ACK per segment, no loss.
    params = TcpParams(p=0.0, w0=2, w_ss=2, b=1)
    _, rows = run_transfer(params, size_packets=12, config=SimConfig.profile("ns3"), trace=True)
    cwnd, expected = 1000, []
    for _ in range(11):  # the 12th ACK completes the transfer
        cwnd += max(1, MSS * MSS // cwnd)
        expected.append(float(cwnd))
    assert expected[:3] == [1250.0, 1450.0, 1622.0]
    assert [r.cwnd_bytes for r in rows if r.event == "ack"] == expected
    # The rfc sender's standard rule adds the fraction (RFC 5681 (3)): 1000 + 250 + 200 + ...
    _, rfc = run_transfer(params, size_packets=12, config=SimConfig(), trace=True)
    acks = [r.cwnd_bytes for r in rfc if r.event == "ack"]
    assert acks[:2] == [1250.0, 1450.0] and acks[2] == pytest.approx(1450.0 + 250000 / 1450, abs=1e-9)


@pytest.mark.parametrize("lt, new_sends", [(None, []), (2, [4, 5])])
def test_ns3_limited_transmit_sends_on_the_first_two_dupacks(lt, new_sends):
    # W0 = 4, segment 0 lost: segments 1-3 each bring a duplicate ACK. With Limited Transmit
    # each of the first two adds a Reno mark (TcpSocketBase::DupAck), the pipe drops below
    # cwnd = 2000 and one new segment leaves (4, then 5); without it the pipe stays at 2000
    # and nothing leaves before the third enters recovery.
    params = TcpParams(p=0.0, w0=4, w_ss=30, b=1, dup_lt=lt)
    _, rows = run_transfer(params, size_packets=20, config=SimConfig.profile("ns3"), drops=[0], trace=True)
    first = next(i for i, r in enumerate(rows) if r.event == "dupack")
    frx = next(i for i, r in enumerate(rows) if r.event == "fast_retransmit")
    assert [r.event for r in rows[first:frx + 1]].count("dupack") == 3
    assert [r.segment for r in rows[first:frx] if r.event == "send"] == new_sends
    assert (rows[frx].segment, rows[frx].ssthresh_bytes) == (0, 1000.0)  # max(2 MSS, (pipe + MSS) / 2)


def test_ns3_dupacks_after_a_timeout_are_ignored_and_the_backoff_collapses():
    # W0 = 4, segment 0 lost once and segment 1 twice. Segments 2 and 3 bring two dupacks,
    # the timer (1 s: the SYN-ACK's SRTT 0.1 s, MinRto 1 s) expires at 1 s and resends 0;
    # its ACK (1.1 s) grows cwnd to 2 MSS and resends 1 (lost again) and 2. The ACK of 2
    # (1.2 s) is a duplicate in CA_LOSS: ns-3 ignores it (TcpSocketBase::DupAck), the rfc
    # sender counts it. ns-3 recomputes the RTO from the estimator at the new ACK (NewAck),
    # so the second expiry is at 1.1 + 1 = 2.1 s; the rfc sender keeps the backed-off 2 s
    # (Karn: the ACK covers a retransmission), so its second expiry is at 3.1 s.
    params = TcpParams(p=0.0, w0=4, b=1)
    kept = ("dupack", "timeout", "ack")
    for config, dupacks, second in [(SimConfig.profile("ns3"), 2, 2.1), (SimConfig(), 3, 3.1)]:
        _, rows = run_transfer(params, size_packets=6, config=config, drops={0: 1, 1: 2}, trace=True)
        events = [r for r in rows if r.event in kept]
        timeouts = [r.time_s for r in events if r.event == "timeout"]
        # serialisation adds microseconds to the 50 ms one-way delays: within 1 ms
        assert timeouts == pytest.approx([1.0, second], abs=1e-3)
        assert [r.event for r in events][:3] == ["dupack", "dupack", "timeout"]
        assert sum(r.event == "dupack" for r in events if r.time_s < second) == dupacks


def test_ns3_drivers_agree_compiled_and_interpreted():
    # run_transfer's single transfer (compiled when numba is there, else interpreted), the
    # interpreted single transfer and the Monte Carlo batch run the same functions: the same
    # measures and, for the single transfers, the same trace.
    config = SimConfig.profile("ns3")
    params = TcpParams(p=0.1, w0=2, b=2, dup_lt=2)
    children = np.random.SeedSequence(11).spawn(30)
    ref = reference(params, 40 * MSS, config, children)
    for fn in KERNELS:
        status = check_identical(fn, params, 40 * MSS, config, children, ref)
        assert (status == 0).all()
    for c in children[:5]:
        got = [T.run_flat(params, 40 * MSS, 40, config, np.random.Generator(np.random.PCG64(c)), None, True,
                          compiled=compiled) for compiled in (None, False)]
        assert repr(got[0]) == repr(got[1])


def test_ns3_kernel_reports_exhausted_uniforms():
    # Without ACK loss a run draws one uniform per data transmission, so a batch run given
    # `width` uniforms must fail (non-zero status) exactly when run_transfer (which draws
    # further blocks of the same stream) sent more than `width` data packets, and agree
    # with it otherwise.
    params = TcpParams(p=0.1, w0=2)
    config = SimConfig.profile("ns3")
    children = np.random.SeedSequence(5).spawn(40)
    ref = reference(params, 40 * MSS, config, children)
    sent = ref[:, OUT_FIELDS.index("data_packets_sent")]
    width = 44
    assert (sent > width).any() and (sent <= width).any()
    for fn in KERNELS:
        out, status = run_kernel(fn, params, 40 * MSS, config, children, width=width)
        assert np.array_equal(status != 0, sent > width)
        assert (status[sent > width] == N.FAIL_UNIFORMS).all()
        assert np.array_equal(out[status == 0], ref[status == 0])
    # A run that exhausts run_transfer's real first block (p = 0.7, 2 segments, 27
    # timeouts: 30 transmissions > 29 uniforms).
    params = TcpParams(p=0.7, w0=2)
    children = [np.random.SeedSequence(3).spawn(400)[104]]
    ref = reference(params, 2 * MSS, config, children)
    assert ref[0, OUT_FIELDS.index("data_packets_sent")] > N.block_size(2, 0.7, 0.0)
    for fn in KERNELS:
        status = check_identical(fn, params, 2 * MSS, config, children, ref)
        assert status[0] == N.FAIL_UNIFORMS


def test_pack_params_ns3_refuses_what_ns3_does_not_run():
    params = TcpParams(p=0.1)
    with pytest.raises(ValueError, match="tail retransmission"):
        N.pack_params(params.replace(dup_lt=1, tail_retransmit=True), 5000, SimConfig.profile("ns3"))
    with pytest.raises(ValueError, match="rule must be 'standard'"):
        run_transfer(params.replace(rule=make_rule("cubic")), size_packets=5, config=SimConfig.profile("ns3"), rng=1)


# ACK serialisation (ns-3 PointToPointNetDevice::TransmitStart: every packet, a pure ACK
# included, occupies the device for size x 8 / DataRate). Times derived by hand: 100 Mb/s,
# d = 50 ms, MSS 500 B, 42-byte headers, so a data packet takes 542 x 8 / 1e8 = 43.36 us
# and a pure ACK 42 x 8 / 1e8 = 3.36 us; W0 = 1, b = 1 (every ACK at once).
_US = 1e-6
_HAND = {
    # the handshake's ACK (3.36) ahead of segment 0 (43.36), d, its ACK (3.36), d
    1: 0.1 + (3.36 + 43.36 + 3.36) * _US,
    # as N = 1 up to the first ACK (at T1 = 2d + 50.08 us, cwnd 2); segments 1 and 2 end
    # at T1 + 43.36 and T1 + 86.72 us, their ACKs at T1 + d + 46.72 and T1 + d + 90.08 us
    # on the return link; the second arrives at T1 + 2d + 90.08 us
    3: 0.2 + (50.08 + 90.08) * _US,
}


@pytest.mark.parametrize("n", sorted(_HAND))
def test_ns3_ack_serialisation_hand_derived(n):
    params = TcpParams(p=0.0, w0=1, b=1, mss_bytes=MSS, rtt_s=0.1)
    config = SimConfig.profile("ns3")
    assert config.ack_serialisation and config.ack_serialisation_s() == pytest.approx(3.36e-6, rel=1e-12)
    ref = run_transfer(params, size_bytes=n * MSS, config=config)
    # Sums of a few float terms: 1e-12 s is far below the 3.36 us being checked.
    assert ref.completion_s == pytest.approx(_HAND[n], abs=1e-12)
    # Without it, each of the n = 1's one and n = 3's two round trips loses an ACK's 3.36 us,
    # and the first segment its 3.36 us wait behind the handshake's ACK.
    plain = run_transfer(params, size_bytes=n * MSS, config=config.replace(ack_serialisation=False))
    rounds = {1: 1, 3: 2}[n]
    assert ref.completion_s - plain.completion_s == pytest.approx((rounds + 1) * 3.36e-6, abs=1e-12)


def test_ack_serialisation_queues_acks_fifo():
    # Two ACKs handed to the return link at the same instant: the second starts when the
    # first has left (a FIFO device, as ns-3's queue in PointToPointNetDevice::Send), and a
    # lost ACK still occupies the link (flat.send_ack).
    from latency_model.sim import flat as FL

    config = SimConfig.profile("ns3", link_rate_bps=1e6)  # 42 B: 336 us; d = rtt_s / 2
    params = TcpParams(p=0.0, rtt_s=0.02)
    for p_ack, u, arrivals in [(0.0, [], [0.01 + 336e-6, 0.01 + 672e-6]),
                               (0.5, [0.1, 0.9], [0.01 + 672e-6])]:  # the first uniform loses the first ACK
        PI, PF = N.pack_params(params, 500, config.replace(p_ack=p_ack))
        I, F, S, _, RB, _, QI, QF = N.state_arrays(1, 8)
        FL.reset(I, F, S, PI, PF)
        assert F[FL.BUSY] == pytest.approx(336e-6, abs=1e-15)  # the handshake's ACK on the forward link
        for _ in range(2):
            FL.send_ack(0.0, I, F, PI, PF, np.array(u), RB, QI, QF)
        assert I[FL.FAIL] == 0 and I[FL.LOSTA] == (p_ack > 0)
        assert QF[FL.QF_AT, :I[FL.AQN]].tolist() == pytest.approx(arrivals, abs=1e-15)