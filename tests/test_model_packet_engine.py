"""The packet model on the simulator's own transitions (``expected_latency(config=...)``,
``model/_packet_sim.py``).

Checked against independent answers: the simulator's transfer on scripted loss patterns
(the stored form of a level state, relative to itself, must keep everything that acts:
the same latency to 1e-9 s), the relative-state method on the RFC sender (an exact
expectation by other code), and the simulated ``linux`` profile's mean (Monte Carlo with
its confidence interval)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _loss_patterns import ALL_VARIANTS, RACK_VARIANTS, random_patterns

from latency_model.growth import RULES
from latency_model.model import _packet_sim as PS
from latency_model.model import packet as PM
from latency_model.params import TcpParams
from latency_model.sim import SimConfig, run_transfer, simulate

SETUPS = {
    "rfc": (SimConfig(), "standard"),
    "ns3": (SimConfig.profile("ns3"), "standard"),
    "linux": (SimConfig.profile("linux"), "cubic"),
    "linux-reno": (SimConfig.profile("linux"), "linux-reno"),
    "linux-buffer": (SimConfig.profile("linux", queue_packets=6), "standard"),
    "sack-rfc": (SimConfig(sender="sack", prr="crb", rtt_sampling="timestamps"), "standard"),
}


@pytest.mark.parametrize("setup", list(SETUPS))
def test_the_stored_form_changes_nothing_on_random_loss_patterns(setup):
    # 40 patterns a set-up (every variant the sender takes, b = 1, 2, W0 1-10, rwnd 4/10/30,
    # short last segments, segments lost up to 3 times, files up to 80 packets), every level
    # state packed relative to itself (snd_max moved to 3 past the window, times from its
    # event) and loaded again: the simulator's latency to 1e-9 s
    cfg, rule = SETUPS[setup]
    variants = RACK_VARIANTS if cfg.rack_tlp else ("newreno", "lt", "newreno", "lt") if cfg.sender == "ns3" \
        else ALL_VARIANTS
    for prm, size, drops in random_patterns(40, 11, p=0.1, max_packets=80, variants=variants):
        prm = prm.replace(rule=RULES[rule]())
        want = run_transfer(prm, size_bytes=size, config=cfg, drops=drops).completion_s
        got = PS.scripted_latency(prm, cfg, size, drops, base=int(prm.rwnd) + 3, compiled=False)
        assert got == pytest.approx(want, abs=1e-9), (setup, prm, size, drops)


def test_the_rfc_sender_agrees_with_the_relative_state_method():
    # two exact expectations of the same sender by different code (the model's own engine and
    # the simulator's transitions), each truncated at 1e-5: within 0.1 %
    prm = TcpParams(p=0.05)
    sizes = list(range(1, 9))
    ours = PS.solve(prm, SimConfig(), [n * 500 for n in sizes], compiled=False)
    theirs = PM.expected_latency(prm, size_packets=sizes, method="relative")
    for n, r in zip(sizes, theirs):
        got = ours[n * 500]
        assert got.done_p.sum() == pytest.approx(1.0, abs=1e-12)
        assert got.done_pt.sum() == pytest.approx(r.expected_latency_s, rel=1e-3), n


@pytest.mark.parametrize("rule", ["linux-reno", "cubic"])
def test_the_linux_profile_agrees_with_its_simulation(rule):
    # the linux profile with every mechanism (bare FIN, RACK-TLP in jiffies, Linux's PRR,
    # SACK compression...): 40,000 simulated transfers, within 3 standard errors
    cfg = SimConfig.profile("linux")
    prm = TcpParams(p=0.05, w0=10, rule=RULES[rule]())
    sizes = [1, 5, 12]
    model = PM.expected_latency(prm, size_packets=sizes, config=cfg)
    sim = simulate(prm, size_packets=sizes, config=cfg, runs=40_000, seed=5)
    for r, s in zip(model, sim.results):
        se = (s.ci95_s[1] - s.ci95_s[0]) / (2 * 1.96)
        assert abs(r.expected_latency_s - s.mean_latency_s) < 3 * se, (r.size_bytes, r.expected_latency_s,
                                                                        s.mean_latency_s, se)
        assert r.dropped_mass < 1e-3  # the truncation's bound, reported


def test_what_the_engine_does_not_take_is_refused():
    prm = TcpParams(p=0.05)
    cfg = SimConfig.profile("linux")
    for kwargs, says in (({"config": SimConfig(p_ack=0.01)}, "p_ack"),
                         ({"config": cfg, "path": PM.PathConfig()}, "not both"),
                         ({"config": cfg, "quantiles": True}, "quantiles"),
                         ({"config": cfg, "max_states": 100}, "max_states"),
                         ({"config": cfg, "method": "levels"}, "method"),
                         ({"config": cfg, "serialisation": "rounds"}, "serialisation"),
                         ({"config": {"sender": "sack"}}, "config must be a SimConfig")):
        with pytest.raises(ValueError, match=says):
            PM.expected_latency(prm, size_packets=[2], **kwargs)
    with pytest.raises(ValueError, match="rule 'standard'"):  # the model's own engines run reno only
        PM.expected_latency(prm.replace(rule=RULES["cubic"]()), size_packets=[2])


def test_the_cli_runs_the_linux_profile_as_simulated(tmp_path):
    # `latency --model packet --stack linux`: the profile's W0 and rule (CUBIC), every mechanism
    # followed (nothing declared unfollowed), the same numbers as the Python call
    from test_cli_fuzz import run_cli

    code, out, err, exc = run_cli(["latency", "--model", "packet", "--stack", "linux", "--size-packets", "1,3",
                                   "--p", "0.1", "--json"])  # no --b: Linux's receiver ACKs as Linux does
    assert exc is None and code == 0, err
    doc = json.loads(out)
    want = PM.expected_latency(TcpParams(p=0.1, b=2, w0=10, rule=RULES["cubic"]()), size_packets=[1, 3],
                               config=SimConfig.profile("linux"))
    assert [r["expected_latency_s"] for r in doc["results"]] == pytest.approx(
        [r.expected_latency_s for r in want], rel=1e-12)
    assert doc["not_followed"] == [] and doc["params"]["rule"]["name"] == "cubic"
    assert doc["params"]["config"]["sender"] == "sack"
    assert np.isfinite(want[1].conditional_latency_s[:2]).all()
    code, out, err, exc = run_cli(["accuracy", "--stack", "linux", "--models", "packet", "--size-packets", "1,3",
                                   "--p", "0.1", "--b", "2", "--variants", "newreno", "--runs", "50",
                                   "--cache", str(tmp_path), "--json"])
    assert exc is None and code == 0, err
    assert "simulator's transitions" in err  # the cost note under the per-call time limit
    rows = json.loads(out)["rows"]
    assert [r["model_s"] for r in rows] == pytest.approx([r.expected_latency_s for r in want], rel=1e-12)


def test_the_file_ends_are_the_same_compiled_interpreted_and_after_growing(monkeypatch):
    # the file ends' walk (tail_root) is one source, run compiled or interpreted, and a memo
    # or node stack that fills up is grown and the walk run again on the values kept: the
    # same numbers to 1e-12 either way
    prm = TcpParams(p=0.1, b=2)
    sizes = [n * 500 for n in (1, 4, 8)]
    ref = PS.solve(prm, SimConfig(), sizes)
    interp = PS.solve(prm, SimConfig(), sizes, compiled=False)
    monkeypatch.setattr(PS, "MEMO0", 4)
    monkeypatch.setattr(PS, "DEPTH0", 2)
    grown = PS.solve(prm, SimConfig(), sizes)
    for size in sizes:
        for other in (interp[size], grown[size]):
            assert other.done_pt == pytest.approx(ref[size].done_pt, rel=1e-12, abs=1e-15)
            assert other.done_p == pytest.approx(ref[size].done_p, rel=1e-12, abs=1e-15)
            assert other.truncated == pytest.approx(ref[size].truncated, rel=1e-9, abs=1e-15)


def test_a_rule_with_unset_parameters_still_hands_off_at_level_states():
    # CUBIC's unset parameters are NaN in the packed parameters: a size's set-up equals the
    # unbounded transfer's though NaN != NaN, so a file past the first window leaves the
    # unbounded transfer at a later level state, not at the first one (bare FIN sizes do)
    prm = TcpParams(p=0.05, w0=10, rule=RULES["cubic"]())
    got = PS.solve(prm, SimConfig.profile("linux"), [5 * 500, 15 * 500])
    assert got[5 * 500].states == 1 and got[15 * 500].states > 1
