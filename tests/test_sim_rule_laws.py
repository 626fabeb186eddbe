"""Every registered growth rule runs on the flat-array engine, interpreted and compiled, with
the same bits from every driver (``run_transfer``'s one transfer, the Monte Carlo batch), for
every sender that runs it; the rules' laws are one source, interpreted or compiled, and part
of the compiled engine's cache key."""

import os

import numpy as np
import pytest

from latency_model import TcpParams, apply_variant
from latency_model.growth import RULES, StandardRule, make_rule
from latency_model.growth import laws
from latency_model.growth.base import ACK, LOSS
from latency_model.sim import SimConfig, run_many
from latency_model.sim import kernel as K
from latency_model.sim.runner import fast_path_supported

from _kernel_twin import reference
from test_sim_engines import kernel_python

# Non-default parameters that reach each law's other branches.
VARIANTS = {
    "standard": [dict(abc_l=2)],
    "generalized": [dict(beta=3.0)],
    "btcp": [dict(f=2, mice_t=12.0)],
    "lss": [dict(max_ssthresh=6.0)],
    "ass": [dict(algorithm=3, decrease="fraction"), dict(algorithm=4, decrease="standard")],
    "smooth-start": [dict(per_ack="euler", a_a=5.0, b_a=0.05)],
    "smoothtcp": [dict(a_x=0.5, c_x=0.2, b_x=1.0, a_f=0.3, c_f=0.1, b_f=2.0, a_j=1.0, b_j=3.0, c_j=2.0,
                       ss_signal="all")],
    "cubic": [dict(hystart=False), dict(beta=512, hz=1000)],
}
RULE_CASES = [(name, {}) for name in RULES] + [(n, kw) for n, kws in VARIANTS.items() for kw in kws]
SENDERS = {
    "rfc": SimConfig(),
    "rfc-ts": SimConfig(rtt_sampling="timestamps", p_ack=0.05),
    "sack": SimConfig(sender="sack", prr="off", rack_tlp=False),
    "linux": SimConfig.profile("linux"),
}


def _params(name, kw, p, variant="lt"):
    return apply_variant(TcpParams(p=p, w0=2, w_ss=30, rwnd=60, b=1, mss_bytes=500, rtt_s=0.1,
                                   rule=make_rule(name, **kw)), variant)


def test_every_registered_rule_has_a_law_the_engine_dispatches_to():
    assert len(laws.LAW_SOURCE.split("law_")) - 1 == len(RULES)
    for k, cls in enumerate(RULES.values()):
        assert laws.rule_index(cls()) == k
        assert cls.law is not None and cls.state_class.N_SLOTS + 3 <= laws.N_STATE
        assert len(cls().law_params) <= laws.N_PARAMS


def test_an_unregistered_rule_class_has_no_law_index():
    class Half(StandardRule):
        name = "half"

    with pytest.raises(ValueError, match=r"rule 'half' of class .*Half is not a registered growth rule class"):
        laws.rule_index(Half())


def test_laws_by_hand():
    # generalized, beta = 3: slow start adds (beta - 1) min(N, SMSS) = 2 * 500; congestion
    # avoidance SMSS^2/cwnd = 250000/2000; a loss with FlightSize 3000 B: max(1500, 1000).
    rule = make_rule("generalized", beta=3.0)
    st = rule.new_state(1000.0, 1500.0, 500)
    rule.on_ack(st, 700)
    assert st.cwnd == 2000.0
    rule.on_ack(st, 500)
    assert st.cwnd == 2000.0 + 125.0
    assert rule.ssthresh_after_loss(st, 3000) == 1500.0
    # lss, max_ssthresh = 4 packets: above 4 * 500 B, K = int(cwnd / (0.5 * 4 * 500)) = 2 at
    # cwnd 2500 B, the increment int(500 / 2) = 250 B (RFC 3742 Section 2).
    v = [2500.0, 1e9, 0.0]
    RULES["lss"].law(ACK, v, (4.0,), 500, 500.0)
    assert v[0] == 2750.0
    assert RULES["lss"].law(LOSS, v, (4.0,), 500, 900.0) == 1000.0


@pytest.mark.parametrize("sender", list(SENDERS))
@pytest.mark.parametrize("name,kw", RULE_CASES, ids=[f"{n}-{'-'.join(map(str, kw.values())) or 'default'}"
                                                     for n, kw in RULE_CASES])
def test_interpreted_drivers_agree_for_every_rule(name, kw, sender):
    config = SENDERS[sender]
    for p, size, seed in ((0.1, 40 * 500 + 77, 1), (0.03, 90 * 500, 2), (0.25, 12 * 500 - 9, 3)):
        params = _params(name, kw, p)
        assert fast_path_supported(params, config)
        children = np.random.SeedSequence(seed).spawn(5)
        ref = reference(params, size, config, children)
        out, status = kernel_python(params, size, config, children)
        ok = status == 0
        assert ok.sum() >= 4
        assert np.array_equal(ref[ok], out[ok]), (name, kw, sender, p, size)


@pytest.mark.skipif(K.compiled_run_batch() is None, reason="numba not installed")
@pytest.mark.parametrize("sender", list(SENDERS))
@pytest.mark.parametrize("name,kw", RULE_CASES, ids=[f"{n}-{'-'.join(map(str, kw.values())) or 'default'}"
                                                     for n, kw in RULE_CASES])
def test_compiled_engine_matches_python_engine_for_every_rule(name, kw, sender):
    config = SENDERS[sender]
    for p, size, seed, variant in ((0.1, 40 * 500, 11, "newreno"), (0.02, 150 * 500 + 3, 12, "lt"),
                                   (0.3, 25 * 500, 13, "proposal")):
        params = _params(name, kw, p, variant)
        children = np.random.SeedSequence(seed).spawn(40)
        a = run_many(params, size, children, config, engine="python")
        b = run_many(params, size, children, config, engine="compiled", batch_size=17)
        assert np.array_equal(a, b), (name, kw, sender, p, size, variant)
        assert a[:, 2].sum() > 0  # losses happened: the loss hooks ran


def test_ns3_sender_runs_only_the_standard_rule_compiled():
    config = SimConfig.profile("ns3")
    assert fast_path_supported(_params("standard", {}, 0.1, "newreno"), config)
    for name in RULES:
        if name != "standard":
            assert not fast_path_supported(_params(name, {}, 0.1, "newreno"), config)


def test_the_rules_sources_are_part_of_the_compiled_engines_cache_key():
    from latency_model.accel import _source_files

    laws_ns = laws.compiled_laws()
    if laws_ns is None:
        pytest.skip("numba not installed")
    files = _source_files(K.compile_namespace(laws_ns), [K.run_batch])
    growth_dir = os.path.dirname(laws.__file__)
    for cls in RULES.values():
        assert os.path.join(growth_dir, os.path.basename(cls.law.__code__.co_filename)) in files
    assert laws.__file__ in files and os.path.join(growth_dir, "flow.py") in files  # smooth's helpers


@pytest.mark.parametrize("name,kw", RULE_CASES)
def test_a_law_changes_nothing_on_the_hooks_it_does_not_declare(name, kw):
    # The engine skips the calls a rule's law_hooks leaves out; the rule's methods (on_ack,
    # on_congestion_event, ...: growth.flow's per-round law, the scenarios' signals) make
    # them all. So a law must leave its state alone on any other hook.
    from latency_model.growth.base import FAST_RETRANSMIT, RTT, TIMEOUT

    rule = make_rule(name, **kw)
    st = rule.new_state(2 * 500.0, 8 * 500.0, 500)
    for rtt in (0.1, 0.12, 0.11, 0.3):
        rule.on_rtt_sample(st, rtt)
        rule.on_ack(st, 500)
    for hook in {FAST_RETRANSMIT, TIMEOUT, RTT} - rule.law_hooks:
        before = list(st.v)
        assert rule.law(hook, st.v, rule.law_params, 500, 0.2) == 0.0
        assert st.v == before or np.array_equal(st.v, before, equal_nan=True), hook
