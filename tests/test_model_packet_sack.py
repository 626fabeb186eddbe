"""The packet model's SACK sender and timestamps (``PathConfig(sender="sack")``,
``timestamps=True``; issue 18: "the stack profiles where they change the answer").

Checked against independent answers: the simulator's SACK sender and receiver
(``sim/kernel_sack.py``, ``sim/flat.py`` on_segment) on scripted loss patterns to 1e-9 s, for every
recovery the simulator has (RFC 6675 with cwnd = ssthresh, PRR-SSRB and PRR-CRB, RACK-TLP)
and Linux's non-SACK path with timestamps; and (slow) the tree DP's expectation against
the simulated ``linux`` profile's mean.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _loss_patterns import ALL_VARIANTS, RACK_VARIANTS, random_patterns

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import OUT_FIELDS, SimConfig, run_many
from latency_model.sim.transfer import run_transfer
from latency_model.studies.packet_setup import packet_path

# The linux profile without the Linux mechanisms the packet model does not have (its
# bare FIN, tcp_rack_advance's test, retransmitting marked-lost segments only, implicit LT,
# the RTO and RACK's reordering timer in jiffies, the RTO's restarts, SACK compression,
# quick-ack mode from the first data, the deferred send, growth by acked_sacked and only while
# cwnd-limited, Linux's PRR, the delayed ACK after quick-ack mode).
_MODELLED = dict(bare_fin=False, rack_tsecr_test=True, rxt_lost_only=False, implicit_lt=False, timer_hz=0,
                 rto_restart=False, sack_compression=False, quickack_on_data=False, tso_defer=False,
                 grow_acked_sacked=False, cwnd_limited_growth=False, linux_prr=False, linux_delack=False)
SETUPS = {
    "linux": SimConfig.profile("linux", **_MODELLED),  # SACK, PRR-SSRB, RACK-TLP, timestamps
    "linux-rfc-sender": SimConfig.profile("linux", sender="rfc", timer_hz=0),  # timestamps, RFC sender
    "sack": SimConfig.profile("linux", prr="off", rack_tlp=False, **_MODELLED),
    "sack-prr": SimConfig.profile("linux", rack_tlp=False, **_MODELLED),
    "sack-rack-tlp": SimConfig.profile("linux", prr="off", **_MODELLED),
    "rfc-sack-crb": SimConfig(sender="sack", prr="crb"),  # Karn's rule, 1 s minimum RTO
    "rfc-sack-rack-tlp-prr": SimConfig(sender="sack", prr="ssrb", rack_tlp=True),
}


def _patterns(count, seed, max_packets, rtts, variants=ALL_VARIANTS):
    for rtt in rtts:
        for prm, size, drops in random_patterns(count, seed, p=0.1, max_packets=max_packets,
                                                variants=variants):
            yield dataclasses.replace(prm, rtt_s=rtt), size, drops


@pytest.mark.parametrize("setup", list(SETUPS))
def test_the_object_engine_is_the_simulators_sender_on_random_loss_patterns(setup):
    # 300 patterns a set-up (every variant, b, W0 1-10, rwnd 4/10/30, W_SS, short last
    # segments, segments lost up to 3 times) at RTT 0.02, 0.1 and 0.7 s (at 0.02 s RACK's
    # reordering window and the probe timeout are short beside the delayed-ACK timer, at
    # 0.7 s the RTO's floor no longer binds): the same latency to 1e-9 s
    cfg = SETUPS[setup]
    path = packet_path(cfg)
    n = 0
    variants = RACK_VARIANTS if cfg.rack_tlp else ALL_VARIANTS  # RACK-TLP refuses ER
    for prm, size, drops in _patterns(100, 3 + len(setup), 40, (0.02, 0.1, 0.7), variants):
        sim = run_transfer(prm, size_bytes=size, drops=drops, config=cfg).completion_s
        assert PM.scripted_latency(prm, size_bytes=size, drops=drops, path=path) == \
            pytest.approx(sim, abs=1e-9), (prm, size, drops)
        n += 1
    assert n == 300


@pytest.mark.parametrize("setup", ["linux", "sack-prr", "rfc-sack-crb"])
def test_the_object_engine_is_the_simulators_sender_with_wide_windows(setup):
    # rwnd 30-100 packets with W_SS = rwnd, files up to 80 packets: several losses a
    # window, long recoveries where PRR's count sets the sending (120 patterns)
    cfg = SETUPS[setup]
    path = packet_path(cfg)
    variants = RACK_VARIANTS if cfg.rack_tlp else ALL_VARIANTS  # RACK-TLP refuses ER
    for prm, size, drops in random_patterns(120, 9, p=0.1, max_packets=80, rwnds=(30, 60, 100), wide=True,
                                            variants=variants):
        sim = run_transfer(prm, size_bytes=size, drops=drops, config=cfg).completion_s
        assert PM.scripted_latency(prm, size_bytes=size, drops=drops, path=path) == \
            pytest.approx(sim, abs=1e-9), (prm, size, drops)


def test_each_part_of_the_linux_sender_changes_the_answer():
    # the wide-window patterns without SACK, PRR, RACK-TLP or timestamps: a share of them
    # differ (PRR only where a recovery lasts: 17 % of them), so the tests above could not
    # pass with any part left out
    linux = packet_path(SETUPS["linux"])
    for change, share in ((dict(sender="rfc", prr="off", rack_tlp=False), 0.5), (dict(prr="off"), 0.1),
                          (dict(prr="crb"), 0.3), (dict(rack_tlp=False), 0.5), (dict(timestamps=False), 0.3)):
        other = dataclasses.replace(linux, **change)
        differ = total = 0
        for prm, size, drops in random_patterns(150, 3, p=0.1, max_packets=40, rwnds=(30, 60), wide=True,
                                                variants=RACK_VARIANTS):  # linux: RACK-TLP
            if drops:
                total += 1
                differ += PM.scripted_latency(prm, size_bytes=size, drops=drops, path=linux) != \
                    PM.scripted_latency(prm, size_bytes=size, drops=drops, path=other)
        assert differ > share * total, (change, differ, total)


def test_the_sack_sender_and_timestamps_refuse_what_they_do_not_run():
    with pytest.raises(ValueError, match="prr must be one of off, ssrb, crb"):
        PM.PathConfig(sender="sack", prr="fast")
    with pytest.raises(ValueError, match="prr and rack_tlp need sender 'sack'"):
        PM.PathConfig(prr="ssrb")
    with pytest.raises(ValueError, match="prr and rack_tlp need sender 'sack'"):
        PM.PathConfig(sender="ns3", rack_tlp=True)
    with pytest.raises(ValueError, match="timestamps must be False"):
        PM.PathConfig(sender="ns3", timestamps=True)
    with pytest.raises(ValueError, match="rack_tlp must be True or False"):
        PM.PathConfig(sender="sack", rack_tlp=1)
    prm = TcpParams(p=0.1)
    for path in (PM.PathConfig(sender="sack"), PM.PathConfig(timestamps=True)):
        assert path.object_engine_only
        with pytest.raises(ValueError, match="need method='tree'"):
            PM.expected_latency(prm, size_packets=[3], path=path, method="levels")
    assert not PM.PathConfig(sender="ns3").object_engine_only


def test_the_tree_dp_folds_little_where_it_can_be_run_unfolded():
    # tier-2 folding (the default for this sender) at 300 states a level, where the default
    # 10,000 does not fold at all, against no folding: LT, b = 2, W0 = 10, p = 0.1, 1-10
    # packets of the linux profile (measured: within 1.5e-4)
    prm = apply_variant(TcpParams(p=0.1, b=2, w0=10), "lt")
    path = packet_path(SETUPS["linux"])
    sizes = [1, 2, 3, 5, 8, 10]
    folded = PM.expected_latency(prm, size_packets=sizes, path=path, max_states=300)
    exact = PM.expected_latency(prm, size_packets=sizes, path=path, max_states=0)
    assert folded[-1].aggregated_mass > 0.01
    for a, e in zip(folded, exact):
        assert a.expected_latency_s == pytest.approx(e.expected_latency_s, rel=1e-3)
        assert e.aggregated_mass == 0.0 and e.dropped_mass < 1e-4


def test_the_second_tier_s_window_flight_and_missing_count_fold_closer(monkeypatch):
    # tier 2 folds a state into one with its window, data in flight and missing segments
    # before one with its progress and phase alone (_ExtState.coarse_keys2): forced at 40
    # states a level, NewReno, b = 1, W0 = 10, p = 0.05, 14 packets of the linux profile
    # are nearer the unfolded value than with progress and phase alone (measured
    # -0.07 % against -0.35 %; at 60 packets and the default bound, against the
    # simulator: -2.7 % against -4.6 %, docs/model.md 6.9)
    from latency_model.model import _packet_sack as XS

    prm = apply_variant(TcpParams(p=0.05, b=1, w0=10), "newreno")
    path = packet_path(SETUPS["linux"])
    exact = PM.expected_latency(prm, size_packets=[14], path=path, max_states=0)[0].expected_latency_s
    fine = PM.expected_latency(prm, size_packets=[14], path=path, max_states=40, tiers=2)[0]
    keys = XS._ExtState.coarse_keys2
    monkeypatch.setattr(XS._ExtState, "coarse_keys2", lambda self, mss: keys(self, mss)[1:])
    coarse = PM.expected_latency(prm, size_packets=[14], path=path, max_states=40, tiers=2)[0]
    assert fine.aggregated_mass > 0.05 and coarse.aggregated_mass > 0.05
    assert abs(fine.expected_latency_s / exact - 1) < 0.5 * abs(coarse.expected_latency_s / exact - 1)
    assert fine.expected_latency_s == pytest.approx(exact, rel=2e-3)


@pytest.mark.slow
@pytest.mark.parametrize("setup,variant,b,w0,p,sizes", [
    # the RFC sender on these cells: +71 % at 3 packets (it waits the RTO where Linux's
    # probe goes out after two RTTs; docs/model.md 6.9)
    ("linux", "newreno", 2, 10, 0.1, (3, 8)),
    pytest.param("linux", "lt", 1, 4, 0.05, (5, 12), marks=pytest.mark.full_budget),
    pytest.param("linux-rfc-sender", "newreno", 1, 10, 0.1, (15,), marks=pytest.mark.full_budget),
])
def test_the_tree_dp_agrees_with_the_simulated_profile(setup, variant, b, w0, p, sizes):
    # 20,000 simulated transfers against the tree DP at its defaults: within 3 standard
    # errors plus 1 % for its folding and truncation
    cfg = SETUPS[setup]
    prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
    model = PM.expected_latency(prm, size_packets=list(sizes), path=packet_path(cfg))
    for n, r in zip(sizes, model):
        runs = run_many(prm, n * prm.mss_bytes, np.random.SeedSequence(23).spawn(20000), cfg)
        lat = runs[:, OUT_FIELDS.index("completion_s")]
        se = lat.std(ddof=1) / np.sqrt(lat.size)
        assert abs(r.expected_latency_s - lat.mean()) < 3 * se + 0.01 * lat.mean(), (n, r.expected_latency_s,
                                                                                     lat.mean(), se)


def _merged_pairs(prm, n, path, limit):
    """Pairs of distinct states the tree DP merged (equal ``_ExtState.key``), copies."""
    pairs = []
    orig = PM._merge

    def spy(nxt, ch, cp, cpt, ch_h):
        ent = nxt.get(ch.key())
        if ent is not None and len(pairs) < limit:
            pairs.append((ent[0].copy(), ch.copy()))
        orig(nxt, ch, cp, cpt, ch_h)

    PM._merge = spy
    try:
        PM.expected_latency(prm, size_packets=[n], path=path, max_states=0, eps=1e-9)
    finally:
        PM._merge = orig
    return pairs


def _future(c, s, u, p):
    """Seconds from state ``s`` to the end when its k-th next arrival is lost iff u[k] < p."""
    from latency_model.model import _packet_engine as E

    s = s.copy()
    t = 0.0
    k = 0
    while not s.done:
        E.deliver_head(c, s, k < len(u) and u[k] < p)
        k += 1
        t += E.run_to_branch(c, s)
    return t


@pytest.mark.parametrize("setup", list(SETUPS))
def test_states_the_tree_dp_merges_have_the_same_future(setup):
    # the merge key is exact if two states with one key finish at the same time on every
    # loss pattern: up to 400 merged pairs of four cells, 12 random continuations each
    # (p = 0.3 for the continuations, up to 40 arrivals decided), equal to 1e-9 s. Most
    # pairs (46-97 % by set-up) differ in what the key normalises (the PRR counts, HighRxt and RescueRxt outside
    # recovery, RACK.end_seq, HighSACK, RACK.fack, the send times of SACKed segments, the
    # timestamps without timestamps), so the normalisations are what this checks; the key
    # with the send times left out fails here.
    path = packet_path(SETUPS[setup])
    rng = np.random.default_rng(5)
    checked = normalised = 0
    er = "newreno" if SETUPS[setup].rack_tlp else "er"  # RACK-TLP refuses ER (it would not read it)
    for variant, b, w0, p, n, rtt in [("newreno", 2, 10, 0.2, 6, 0.1), ("lt", 1, 2, 0.2, 5, 0.02),
                                      (er, 2, 3, 0.1, 6, 0.7), ("proposal", 1, 4, 0.2, 5, 0.1)]:
        prm = apply_variant(TcpParams(p=p, b=b, w0=w0, rtt_s=rtt), variant)
        c = PM._const(prm, n * prm.mss_bytes, path, True)
        for a, z in _merged_pairs(prm, n, path, 100):
            for _ in range(12):
                u = rng.random(40)
                assert _future(c, a, u, 0.3) == pytest.approx(_future(c, z, u, 0.3), abs=1e-9)
            checked += 1
            normalised += _raw(a) != _raw(z)
    assert checked >= 100 and normalised > 0.4 * checked


def _raw(s):
    """The values the merge key normalises or leaves out, as the state holds them."""
    return (s.prr_del, s.prr_out, s.rfs, s.high_rxt, s.rescue, s.rx_end, s.high_sacked, s.fack,
            tuple(sorted(s.sent_at.items())), s.ts_recent)


