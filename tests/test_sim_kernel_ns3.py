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
