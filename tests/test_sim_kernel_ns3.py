"""The ns-3 sender's array kernel (pure Python and numba-compiled) reproduces the reference
event-driven path (``run_transfer`` with ``SimConfig.profile("ns3")``) bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from latency_model import TcpParams
from latency_model.sim import OUT_FIELDS, SimConfig, run_transfer
from latency_model.sim import kernel as N
from latency_model.sim.link import block_size

from _kernel_twin import KernelTwin, reference

MSS = 500
COMPILED = N.compiled_run_batch()
KERNELS = [N.run_batch] + ([COMPILED] if COMPILED is not None else [])


TWIN = KernelTwin(N.pack_params, N)
run_kernel, check_identical = TWIN.run_kernel, TWIN.check_identical


scenario = st.fixed_dictionaries({
    "n": st.integers(1, 60),
    "last": st.sampled_from([MSS, MSS, 1, 123, 499]),  # bytes in the last segment
    "w0": st.integers(1, 4),
    "b": st.integers(1, 3),
    "lt": st.booleans(),
    "p": st.sampled_from([0.05, 0.1, 0.2, 0.3]),
    "quick_acks": st.integers(0, 2),
    "fin": st.booleans(),
    "header": st.sampled_from([40, 42]),
    "seed": st.integers(0, 2**32 - 1),
    # Beyond the paper's setting: a long RTT (SRTT above the 1 s minimum RTO, so every RTT
    # sample counts), an early ssthresh (congestion avoidance's integer step) and a small
    # receiver window.
    "rtt": st.sampled_from([0.1, 0.1, 0.7]),
    "w_ss": st.sampled_from([30, 30, 3]),
    "rwnd": st.sampled_from([30, 30, 5]),
})


@settings(max_examples=80, deadline=None)
@given(sc=scenario)
def test_ns3_kernel_matches_reference_bit_for_bit(sc):
    params = TcpParams(p=sc["p"], w0=min(sc["w0"], sc["rwnd"]), b=sc["b"],
                       dup_lt=2 if sc["lt"] else None, mss_bytes=MSS, rtt_s=sc["rtt"],
                       w_ss=sc["w_ss"], rwnd=sc["rwnd"])
    config = SimConfig.profile("ns3", quick_acks=sc["quick_acks"], fin=sc["fin"],
                               header_bytes=sc["header"])
    size = (sc["n"] - 1) * MSS + sc["last"]
    children = np.random.SeedSequence(sc["seed"]).spawn(4)
    ref = reference(params, size, config, children)
    for fn in KERNELS:
        check_identical(fn, params, size, config, children, ref)


@pytest.mark.parametrize("lt", [None, 2])
@pytest.mark.parametrize("b", [1, 2])
def test_ns3_kernel_many_seeds(b, lt):
    # The measured setting (N = 40, p = 0.1, W0 = 2) over many seeds, with and without LT.
    params = TcpParams(p=0.1, w0=2, b=b, dup_lt=lt)
    config = SimConfig.profile("ns3")
    children = np.random.SeedSequence(11).spawn(60)
    ref = reference(params, 40 * MSS, config, children)
    for fn in KERNELS:
        status = check_identical(fn, params, 40 * MSS, config, children, ref)
        assert (status == 0).all()


@pytest.mark.parametrize("w_ss", [2, 3, 4])
@pytest.mark.parametrize("p", [0.0, 0.02])
def test_ns3_kernel_congestion_avoidance(p, w_ss):
    # Long transfers mostly in congestion avoidance: cwnd grows by floor(MSS^2 / cwnd)
    # bytes per ACK, and a fractional step would send some segments one ACK early.
    params = TcpParams(p=p, w0=2, w_ss=w_ss)
    config = SimConfig.profile("ns3")
    children = np.random.SeedSequence(4).spawn(3)
    ref = reference(params, 200 * MSS, config, children)
    for fn in KERNELS:
        status = check_identical(fn, params, 200 * MSS, config, children, ref)
        assert (status == 0).all()


def test_ns3_kernel_reports_exhausted_uniforms():
    # Without ACK loss a run draws one uniform per data transmission, so a run given
    # `width` uniforms must fail (non-zero status) exactly when the reference sent more
    # than `width` data packets, and agree with it otherwise.
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
    # A run that exhausts UniformStream's real first block (p = 0.7, 2 segments, 27
    # timeouts: 30 transmissions > 29 uniforms): non-zero status with the first block,
    # the reference's result with more of the same stream.
    params = TcpParams(p=0.7, w0=2)
    children = [np.random.SeedSequence(3).spawn(400)[104]]
    ref = reference(params, 2 * MSS, config, children)
    assert ref[0, OUT_FIELDS.index("data_packets_sent")] > block_size(2, 0.7, 0.0)
    for fn in KERNELS:
        status = check_identical(fn, params, 2 * MSS, config, children, ref)
        assert status[0] == N.FAIL_UNIFORMS


def test_ns3_kernel_lossless_and_ack_loss():
    # p = 0 draws no uniforms at all; ACK loss draws one per ACK.
    config = SimConfig.profile("ns3")
    children = np.random.SeedSequence(2).spawn(3)
    for p, p_ack in [(0.0, 0.0), (0.1, 0.05)]:
        params = TcpParams(p=p, w0=3, b=2, dup_lt=2)
        cfg = config.replace(p_ack=p_ack)
        ref = reference(params, 25 * MSS + 7, cfg, children)
        for fn in KERNELS:
            status = check_identical(fn, params, 25 * MSS + 7, cfg, children, ref)
            assert (status == 0).all()


def test_pack_params_ns3_refuses_what_ns3_does_not_run():
    params = TcpParams(p=0.1)
    with pytest.raises(ValueError, match="drop-tail"):
        N.pack_params(params, 5000, SimConfig.profile("ns3", queue_packets=10))
    with pytest.raises(ValueError):  # ns-3 has no tail retransmission
        N.pack_params(params.replace(dup_lt=1, tail_retransmit=True), 5000,
                          SimConfig.profile("ns3"))


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
    children = np.random.SeedSequence(9).spawn(2)
    ref_out = reference(params, n * MSS, config, children)
    assert (ref_out[:, OUT_FIELDS.index("completion_s")] == ref.completion_s).all()
    for fn in KERNELS:
        status = check_identical(fn, params, n * MSS, config, children, ref_out)
        assert (status == 0).all()


def test_ack_serialisation_queues_acks_fifo():
    # Two ACKs handed to the return link at the same instant: the second starts when the
    # first has left (a FIFO device, as ns-3's queue in PointToPointNetDevice::Send), and a
    # lost ACK still occupies the link.
    from latency_model.sim.engine import EventQueue
    from latency_model.sim.link import Link, ScriptedLoss

    class LoseFirstAck(ScriptedLoss):
        def __init__(self):
            super().__init__([], 1)
            self.acks = 0

        def drop_ack(self):
            self.acks += 1
            return self.acks == 1

    config = SimConfig.profile("ns3", link_rate_bps=1e6)  # 42 B: 336 us
    for loss, arrivals in [(ScriptedLoss([], 1), [0.01 + 336e-6, 0.01 + 672e-6]),
                           (LoseFirstAck(), [0.01 + 672e-6])]:
        q = EventQueue()
        link = Link(q, config, 0.01, loss)
        assert link.busy_until == pytest.approx(336e-6, abs=1e-15)  # the handshake's ACK
        link.send_ack(1, 0.0)
        link.send_ack(2, 0.0)
        got = []
        while (ev := q.pop()) is not None:
            got.append(ev[0])
        assert got == pytest.approx(arrivals, abs=1e-15)
