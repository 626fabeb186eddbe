"""The SACK sender's drivers on the flat engine agree bit for bit: the Monte Carlo batch
(``run_batch``, interpreted and numba-compiled) and ``run_transfer``'s one transfer
(``run_single``, which draws more uniforms or grows its queues and runs again when a run
needs them), with ``SimConfig(sender="sack")``, with and without ``rack_tlp``, over the
whole range of settings. The sender's behaviour itself is checked against hand-derived
traces in test_sim_sack.py, test_sim_rack_tlp.py and test_sim_linux_mechanisms.py."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from latency_model import TcpParams
from latency_model.growth import StandardRule
from latency_model.params import apply_variant
from latency_model.sim import OUT_FIELDS, SimConfig
from latency_model.sim import kernel as K
from latency_model.sim.kernel import block_size

from _kernel_twin import KernelTwin, reference

MSS = 500
COMPILED = K.compiled_run_batch()
KERNELS = [K.run_batch] + ([COMPILED] if COMPILED is not None else [])


TWIN = KernelTwin(K.pack_params, K)
run_kernel, check_identical = TWIN.run_kernel, TWIN.check_identical


scenario = st.fixed_dictionaries({
    "n": st.integers(1, 60),
    "last": st.sampled_from([MSS, MSS, 1, 123, 499]),  # bytes in the last segment
    "w0": st.integers(1, 4),
    "b": st.integers(1, 3),
    "variant": st.sampled_from(["newreno", "lt", "proposal", "er"]),
    "p": st.sampled_from([0.05, 0.1, 0.2, 0.3]),
    "p_ack": st.sampled_from([0.0, 0.05]),
    "prr": st.sampled_from(["ssrb", "crb", "off"]),
    "rack_tlp": st.booleans(),
    "rtt_sampling": st.sampled_from(["karn", "timestamps"]),
    "quick_acks": st.integers(0, 2),
    "fin": st.booleans(),
    "rtt": st.sampled_from([0.1, 0.7]),
    "header": st.sampled_from([40, 42]),
    "lt_mode": st.sampled_from(["rfc3042", "paper"]),
    "rto_rule": st.sampled_from(["rfc6298", "rfc6298", "paper"]),
    "handshake_rtt": st.booleans(),
    "bare_fin": st.booleans(),
    "rack_tsecr_test": st.booleans(),
    "rxt_lost_only": st.booleans(),
    "implicit_lt": st.booleans(),
    "timer_hz": st.sampled_from([0, 0, 250, 1000]),
    "linux": st.fixed_dictionaries({k: st.booleans() for k in (
        "sack_compression", "quickack_on_data", "tso_defer", "rto_restart", "grow_acked_sacked",
        "cwnd_limited_growth")}),
    "abc_l": st.sampled_from([None, None, 2]),
    # A small receiver window and an early ssthresh now and then (rule (2) of NextSeg
    # refused, congestion avoidance).
    "rwnd": st.sampled_from([30, 30, 5]),
    "w_ss": st.sampled_from([30, 30, 3]),
    "seed": st.integers(0, 2**32 - 1),
})


@settings(max_examples=120, deadline=None)
@given(sc=scenario)
def test_sack_kernel_matches_reference_bit_for_bit(sc):
    assume(not (sc["variant"] == "er" and sc["rack_tlp"]))  # refused: RACK-TLP does not read ER
    params = TcpParams(p=sc["p"], w0=min(sc["w0"], sc["rwnd"]), b=sc["b"], mss_bytes=MSS,
                       rtt_s=sc["rtt"], rwnd=sc["rwnd"], w_ss=sc["w_ss"],
                       rule=StandardRule(abc_l=sc["abc_l"]))
    params = apply_variant(params, sc["variant"])
    config = SimConfig(sender="sack", prr=sc["prr"], rack_tlp=sc["rack_tlp"],
                       rtt_sampling=sc["rtt_sampling"],
                       quick_acks=sc["quick_acks"], fin=sc["fin"], p_ack=sc["p_ack"],
                       header_bytes=sc["header"], lt_mode=sc["lt_mode"],
                       rto_rule=sc["rto_rule"], handshake_rtt=sc["handshake_rtt"],
                       bare_fin=sc["bare_fin"] and sc["fin"], rack_tsecr_test=sc["rack_tsecr_test"],
                       rxt_lost_only=sc["rxt_lost_only"], implicit_lt=sc["implicit_lt"],
                       timer_hz=sc["timer_hz"], **sc["linux"])
    size = (sc["n"] - 1) * MSS + sc["last"]
    children = np.random.SeedSequence(sc["seed"]).spawn(4)
    ref = reference(params, size, config, children)
    for fn in KERNELS:
        check_identical(fn, params, size, config, children, ref)


@pytest.mark.parametrize("rack_tlp", [False, True])
@pytest.mark.parametrize("prr", ["ssrb", "crb", "off"])
@pytest.mark.parametrize("b", [1, 2])
def test_sack_kernel_many_seeds(b, prr, rack_tlp):
    # The measured setting (N = 40, p = 0.1, W0 = 2) over many seeds.
    params = TcpParams(p=0.1, w0=2, b=b)
    config = SimConfig(sender="sack", prr=prr, rack_tlp=rack_tlp)
    children = np.random.SeedSequence(11).spawn(60)
    ref = reference(params, 40 * MSS, config, children)
    assert ref[:, OUT_FIELDS.index("fast_retransmits")].sum() > 0  # recovery exercised
    assert ref[:, OUT_FIELDS.index("timeouts")].sum() > 0
    for fn in KERNELS:
        status = check_identical(fn, params, 40 * MSS, config, children, ref)
        assert (status == 0).all()


@pytest.mark.parametrize("rack_tlp", [False, True])
def test_sack_kernel_long_transfer_congestion_avoidance(rack_tlp):
    # Long transfers, mostly in congestion avoidance, with many SACK blocks outstanding.
    config = SimConfig(sender="sack", rack_tlp=rack_tlp)
    children = np.random.SeedSequence(4).spawn(3)
    for p, w_ss in [(0.0, 3), (0.02, 4), (0.05, 30)]:
        params = TcpParams(p=p, w0=2, w_ss=w_ss, rwnd=60)
        ref = reference(params, 200 * MSS + 17, config, children)
        for fn in KERNELS:
            status = check_identical(fn, params, 200 * MSS + 17, config, children, ref)
            assert (status == 0).all()


def test_sack_kernel_reports_exhausted_uniforms():
    # Without ACK loss a run draws one uniform per data transmission, so a run given
    # `width` uniforms must fail (non-zero status) exactly when the reference sent more
    # than `width` data packets, and agree with it otherwise.
    params = TcpParams(p=0.1, w0=2)
    config = SimConfig(sender="sack")
    children = np.random.SeedSequence(5).spawn(40)
    ref = reference(params, 40 * MSS, config, children)
    sent = ref[:, OUT_FIELDS.index("data_packets_sent")]
    width = 44
    assert (sent > width).any() and (sent <= width).any()
    for fn in KERNELS:
        out, status = run_kernel(fn, params, 40 * MSS, config, children, width=width)
        assert np.array_equal(status != 0, sent > width)
        assert (status[sent > width] == K.FAIL_UNIFORMS).all()
        assert np.array_equal(out[status == 0], ref[status == 0])
    # A run that exhausts run_transfer's real first block: non-zero status with the first
    # block, the reference's result with more of the same stream.
    params = TcpParams(p=0.7, w0=2)
    k0 = block_size(2, 0.7, 0.0)
    children = np.random.SeedSequence(3).spawn(400)
    ref = reference(params, 2 * MSS, config, children)
    heavy = np.flatnonzero(ref[:, OUT_FIELDS.index("data_packets_sent")] > k0)
    assert heavy.size > 0
    pick = [children[i] for i in heavy[:3]]
    for fn in KERNELS:
        status = check_identical(fn, params, 2 * MSS, config, pick, ref[heavy[:3]])
        assert (status == K.FAIL_UNIFORMS).all()


def test_sack_kernel_lossless_and_ack_loss():
    # p = 0 draws no uniforms at all; ACK loss draws one per ACK.
    children = np.random.SeedSequence(2).spawn(3)
    for p, p_ack in [(0.0, 0.0), (0.1, 0.05), (0.0, 0.2)]:
        params = TcpParams(p=p, w0=3, b=2, dup_lt=2)
        cfg = SimConfig(sender="sack", p_ack=p_ack, rtt_sampling="timestamps")
        ref = reference(params, 25 * MSS + 7, cfg, children)
        for fn in KERNELS:
            status = check_identical(fn, params, 25 * MSS + 7, cfg, children, ref)
            assert (status == 0).all()


@pytest.mark.parametrize("rack_tlp", [False, True])
@pytest.mark.parametrize("variant", ["newreno", "lt", "proposal", "er"])
def test_sack_kernel_linux_profile(variant, rack_tlp):
    # Linux's constants (timestamps, 16 quick ACKs, 40 ms delayed ACK, 200 ms minimum RTO
    # and clock granularity, 52 header bytes), with ACK loss and a long RTT.
    config = SimConfig.profile("linux", sender="sack", rack_tlp=rack_tlp, p_ack=0.05)
    children = np.random.SeedSequence(8).spawn(30)
    if variant == "er" and rack_tlp:  # RACK's marks ignore the DupThresh ER lowers
        with pytest.raises(ValueError, match=r"early_retransmit \(variant er\) has no effect under RACK-TLP"):
            reference(apply_variant(TcpParams(p=0.2, w0=2), variant), 30 * MSS + 1, config, children)
        return
    for rtt in (0.1, 0.7):
        params = apply_variant(TcpParams(p=0.2, w0=2, rtt_s=rtt), variant)
        ref = reference(params, 30 * MSS + 1, config, children)
        for fn in KERNELS:
            check_identical(fn, params, 30 * MSS + 1, config, children, ref)
