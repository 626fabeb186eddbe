"""sweep --what both says where its model and simulator differ by design."""

from latency_model.sim import SimConfig
from latency_model.studies.sweep import SweepSpec, grid_from_items


def _notes(items, what="both", **cfg):
    return SweepSpec(grid=grid_from_items(items), what=what, runs=10,
                     sim_config=SimConfig(**cfg) if cfg else None).comparison_notes()


def test_default_comparison_names_the_rto_back_off():
    notes = _notes(["size-packets=3"])
    assert len(notes) == 1 and "backs off" in notes[0]


def test_each_known_difference_is_named_once_and_only_when_present():
    assert _notes(["size-packets=3"], rto_rule="paper") == []
    assert _notes(["size-packets=3", "b=1,2", "variant=newreno,lt"], rto_rule="paper", lt_mode="paper") == [
        _notes(["size-packets=3", "b=2"], rto_rule="paper")[0]]
    lt = _notes(["size-packets=3", "variant=lt"], rto_rule="paper")
    assert len(lt) == 1 and "Limited Transmit" in lt[0]
    st = _notes(["size-packets=3", "stack=rfc,ns3"], rto_rule="paper")
    assert len(st) == 1 and st[0].startswith("stack ns3")


def test_no_notes_without_a_comparison():
    assert _notes(["size-packets=3"], what="model") == []
    assert _notes(["size-packets=3"], what="simulation") == []


def test_the_packet_model_names_the_simulated_settings_it_does_not_follow():
    plain = _notes(["size-packets=3", "model=packet"])
    assert plain == [n for n in plain if n.startswith("model packet: no difference")] and len(plain) == 1
    assert _notes(["size-packets=3", "model=packet"], min_rto_s=0.2, delack_timeout_s=0.04) == plain  # followed
    assert _notes(["size-packets=3", "model=packet"], rto_rule="paper") == [
        n for n in _notes(["size-packets=3", "model=fluid,packet"], rto_rule="paper") if n.startswith("model packet")]
    (lt,) = _notes(["size-packets=3", "model=packet", "variant=lt"], lt_mode="paper")
    assert lt.startswith("model packet: the simulator's settings the model does not follow: its Limited Transmit")
    # every profile's sender, timer and RTT sampling are followed (PathConfig.sender, timestamps;
    # the linux profile's SACK sender on the simulator's own transitions); named: ns3's serialised ACKs
    (ns3,) = _notes(["size-packets=3", "model=packet", "stack=rfc,ns3,linux"])
    assert ns3.startswith("model packet: stack ns3:") and "serialisation of ACKs" in ns3
    stacks = _notes(["size-packets=3", "model=packet", "stack=rfc,ns3,linux"], queue_packets=5)
    assert [n.split(":")[1] for n in stacks] == [" stack rfc", " stack ns3"]  # linux's runs the buffer too
    assert all("drop-tail buffer of 5 packets" in n for n in stacks)
