"""The packet model beside the simulator follows the simulated link and timers, and names
the simulator's settings it does not follow (studies/packet_setup.py; issue 18: "the stack
profiles where they change the answer")."""

from __future__ import annotations

import pytest

from latency_model import TcpParams
from latency_model.model import packet
from latency_model.model.packet import PathConfig
from latency_model.sim import SimConfig
from latency_model.studies.packet_setup import packet_differences, packet_options, packet_path
from latency_model.studies.sweep import SweepSpec, grid_from_items, read_rows, run_sweep


def test_the_options_are_the_simulated_link_and_timers():
    assert packet_options(None) == {} and packet_options(SimConfig()) == {}  # the rfc profile: the defaults
    ns3 = packet_options(SimConfig.profile("ns3"))["path"]
    assert ns3 == PathConfig(header_bytes=42)
    linux = packet_options(SimConfig.profile("linux"))["path"]
    assert linux == PathConfig(header_bytes=52, delack_timeout_s=0.04, min_rto_s=0.2, initial_rto_s=1.0,
                               max_rto_s=120.0)
    cfg = SimConfig(link_rate_bps=2e6, delay_s=0.03, min_rto_s=0.5, max_rto_s=30.0, fin=False)
    assert packet_path(cfg) == PathConfig(link_rate_bps=2e6, delay_s=0.03, min_rto_s=0.5, max_rto_s=30.0, fin=False)


def test_the_differences_name_each_setting_the_model_does_not_follow():
    assert packet_differences(SimConfig()) == []
    assert packet_differences(SimConfig(min_rto_s=0.2, delack_timeout_s=0.04, header_bytes=52)) == []
    for cfg, says in [(SimConfig(rto_rule="paper"), "RTO rule paper"), (SimConfig(lt_mode="paper"), "Limited Transmit"),
                      (SimConfig(p_ack=0.01), "p_ack = 0.01"), (SimConfig(queue_packets=5), "buffer of 5 packets"),
                      (SimConfig(quick_acks=2), "2 quick ACKs"), (SimConfig(clock_granularity_s=0.01), "0.01 s")]:
        (only,) = packet_differences(cfg)
        assert says in only
    ns3 = packet_differences(SimConfig.profile("ns3"))
    assert [d.split(",")[0] for d in ns3] == ["its sender ns3", "its RTT sampling ns3",
                                            "its clock granularity 0.001 s", "its 1 quick ACK at the start"]
    linux = packet_differences(SimConfig.profile("linux"))
    assert linux[0].startswith("its sender sack (SACK, PRR, RACK-TLP)") and "timestamps" in linux[1]
    with pytest.raises(ValueError, match="config must be a SimConfig"):
        packet_differences({"sender": "rfc"})
    with pytest.raises(ValueError, match="config must be a SimConfig"):
        packet_path("rfc")


TIMERS = dict(min_rto_s=0.3, delack_timeout_s=0.05)


def _packet_rows(path):
    _, rows = read_rows(path)
    return {r["size_packets"]: r for r in rows if r.get("model") == "packet"}


def test_a_sweep_gives_the_packet_model_the_simulated_timers(tmp_path):
    items = ["model=packet", "p=0.1", "b=1", "size-packets=1,3"]
    mine = run_sweep(SweepSpec(grid_from_items(items), what="both", runs=20, sim_config=SimConfig(**TIMERS)),
                     tmp_path / "a.csv")
    plain = run_sweep(SweepSpec(grid_from_items(items), what="both", runs=20), tmp_path / "b.csv")
    a, b = _packet_rows(mine.out), _packet_rows(plain.out)
    params = TcpParams(p=0.1, b=1)
    want = packet.expected_latency(params, size_packets=[1, 3], path=PathConfig(**TIMERS))
    default = packet.expected_latency(params, size_packets=[1, 3])
    for i, n in enumerate(("1", "3")):
        assert float(a[n]["expected_latency_s"]) == pytest.approx(want[i].expected_latency_s, rel=1e-12)
        assert float(b[n]["expected_latency_s"]) == pytest.approx(default[i].expected_latency_s, rel=1e-12)
        assert a[n]["key"] != b[n]["key"]
    # one segment waits the initial RTO (1 s in both) when lost; three segments lose also
    # after an RTT sample, when the RTO is its minimum (0.3 s instead of 1 s)
    assert want[0].expected_latency_s == pytest.approx(default[0].expected_latency_s, rel=1e-6)
    assert want[1].expected_latency_s < 0.9 * default[1].expected_latency_s


def test_the_map_gives_the_packet_model_the_simulated_timers_and_caches_them_apart(tmp_path):
    from latency_model.studies.accuracy import AccuracyMap, run_accuracy

    kw = dict(models=("packet",), sizes_packets=(1, 3), p=(0.1,), b=(1,), variants=("newreno",), runs=20)
    mine = run_accuracy(AccuracyMap(**kw, sim_config=SimConfig(**TIMERS)), cache_dir=tmp_path, model_timeout_s=None)
    plain = run_accuracy(AccuracyMap(**kw), cache_dir=tmp_path, model_timeout_s=None)
    assert mine["model_calls_computed"] == plain["model_calls_computed"] == 1  # not served from the other's cache
    params = TcpParams(p=0.1, b=1)
    want = packet.expected_latency(params, size_packets=[1, 3], path=PathConfig(**TIMERS))
    default = packet.expected_latency(params, size_packets=[1, 3])
    assert [r["model_s"] for r in mine["rows"]] == pytest.approx([w.expected_latency_s for w in want], rel=1e-12)
    assert [r["model_s"] for r in plain["rows"]] == pytest.approx([d.expected_latency_s for d in default], rel=1e-12)
    again = run_accuracy(AccuracyMap(**kw, sim_config=SimConfig(**TIMERS)), cache_dir=tmp_path, model_timeout_s=None)
    assert again["model_calls_computed"] == 0 and again["rows"] == mine["rows"]
