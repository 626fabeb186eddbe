"""The engine's drivers agree bit for bit: a Monte Carlo batch (``run_batch``, interpreted or
numba-compiled) and ``run_transfer``'s one transfer (``run_single``); a rule of an
unregistered class is refused everywhere (every registered rule: tests/test_sim_rule_laws.py)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from latency_model import TcpParams, apply_variant
from latency_model.growth import StandardRule
from latency_model.sim import SimConfig, run_many, run_transfer, simulate
from latency_model.sim import kernel as K
from latency_model.sim.kernel import block_size
from latency_model.sim.runner import fast_path_supported, pack_params

from _kernel_twin import reference


def kernel_python(params, size_bytes, config, children):
    PI, PF = pack_params(params, size_bytes, config)
    k0 = block_size(int(PI[K.P_N]), params.p, config.p_ack)
    U = np.array([np.random.Generator(np.random.PCG64(c)).random(k0) for c in children])
    out = np.zeros((len(children), K.N_OUT))
    status = np.zeros(len(children), np.int64)
    K.run_batch(U, PI, PF, out, status)
    return out, status


scenario = st.fixed_dictionaries({
    "p": st.sampled_from([0.0, 0.02, 0.1, 0.3]),
    "w0": st.sampled_from([1, 2, 3, 4, 2.92]),
    "w_ss": st.sampled_from([2, 4, 30]),
    "rwnd": st.sampled_from([4, 10, 30]),
    "b": st.integers(1, 2),
    "variant": st.sampled_from(["newreno", "lt", "proposal", "er"]),
    "abc_l": st.sampled_from([None, 2]),
    "size_bytes": st.integers(1, 40 * 500),
    "rto_rule": st.sampled_from(["rfc6298", "paper"]),
    "lt_mode": st.sampled_from(["rfc3042", "paper"]),
    "p_ack": st.sampled_from([0.0, 0.05]),
    "rtt": st.sampled_from([0.02, 0.1, 0.6]),
    "seed": st.integers(0, 2**32 - 1),
    "quick_acks": st.sampled_from([0, 1, 3, 16]),
    "fin": st.booleans(),
    "rtt_sampling": st.sampled_from(["karn", "timestamps"]),
    "delack": st.sampled_from([0.2, 0.04]),
    "handshake_rtt": st.booleans(),
})


def build(sc):
    w0 = min(sc["w0"], sc["rwnd"])
    params = apply_variant(
        TcpParams(p=sc["p"], w0=w0, w_ss=sc["w_ss"], rwnd=sc["rwnd"], b=sc["b"], rtt_s=sc["rtt"],
                  rule=StandardRule(abc_l=sc["abc_l"])),
        sc["variant"])
    config = SimConfig(rto_rule=sc["rto_rule"], lt_mode=sc["lt_mode"], p_ack=sc["p_ack"],
                       quick_acks=sc["quick_acks"], fin=sc["fin"], rtt_sampling=sc["rtt_sampling"],
                       delack_timeout_s=sc["delack"], handshake_rtt=sc["handshake_rtt"])
    return params, config


@settings(max_examples=40, deadline=None)
@given(sc=scenario)
def test_kernel_matches_reference_bit_for_bit(sc):
    params, config = build(sc)
    children = np.random.SeedSequence(sc["seed"]).spawn(6)
    ref = reference(params, sc["size_bytes"], config, children)
    out, status = kernel_python(params, sc["size_bytes"], config, children)
    ok = status == 0
    assert ok.sum() >= 4  # fallbacks are rare
    assert np.array_equal(ref[ok], out[ok])


@pytest.mark.parametrize("variant", ["newreno", "lt", "proposal", "er"])
def test_run_many_engines_identical(variant):
    params = apply_variant(TcpParams(p=0.1), variant)
    children = np.random.SeedSequence(7).spawn(200)
    a = run_many(params, 20 * 500, children, engine="python")
    b = run_many(params, 20 * 500, children, engine="auto", batch_size=37)
    assert np.array_equal(a, b)


@pytest.mark.skipif(K.compiled_run_batch() is None, reason="numba not installed")
def test_compiled_matches_python_with_fallback_runs():
    # p = 0.6 exhausts the first uniform block in some runs: those are redone
    # one at a time with more uniforms of the same stream and still agree.
    params = TcpParams(p=0.6)
    children = np.random.SeedSequence(3).spawn(150)
    a = run_many(params, 10 * 500, children, engine="python")
    b = run_many(params, 10 * 500, children, engine="compiled")
    assert np.array_equal(a, b)


class _HalfRule(StandardRule):
    """Subclass: not a registered rule class, so no law in the engine's dispatch."""

    name = "half"


@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
def test_unregistered_rules_are_refused_naming_the_rule(engine):
    params = TcpParams(p=0.1, rule=_HalfRule())
    assert not fast_path_supported(params)
    message = r"rule 'half' of class .*_HalfRule is not a registered growth rule class.*add it to RULES"
    with pytest.raises(ValueError, match=message):
        run_many(params, 5000, np.random.SeedSequence(1).spawn(3), engine=engine)
    with pytest.raises(ValueError, match=message):
        simulate(params, size_packets=10, runs=3, engine=engine)
    for stack in ("rfc", "ns3", "linux"):  # the rfc, ns3 and sack senders
        with pytest.raises(ValueError, match=message):
            run_transfer(params, size_packets=10, config=SimConfig.profile(stack), rng=1)
        with pytest.raises(ValueError, match=message):  # scripted losses too
            run_transfer(params, size_packets=10, config=SimConfig.profile(stack), drops=[2], trace=True)
