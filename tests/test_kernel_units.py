"""The kernel testbed's logic that runs without root: seeds, summaries, the lateness verdict,
the emulator's build, and the command's refusals (one line, exit 2, before any testbed)."""

import os
import shutil

import numpy as np
import pytest

from _cli import refused
from latency_model.kernel import emulator
from latency_model.kernel.measure import LATE_FRACTION, load_problem, sim_setup, summarise
from latency_model.kernel.testbed import KernelTransfer, transfer_seeds


def _t(i, completion, lost, timeouts=0):
    return KernelTransfer(index=i, size_bytes=5000, cc="reno", seed=i, completion_s=completion, lost_packets=lost,
                          first_transmissions_lost=lost, data_packets_sent=10 + lost, retransmissions=lost,
                          timeouts=timeouts, fin_bare=1, total_retrans=lost, srtt_s=0.1, rto_s=0.3, port=10000 + i)


def test_seeds_are_simulates_children_and_do_not_depend_on_the_count_taken():
    seeds = transfer_seeds(7, 5)
    kids = np.random.SeedSequence(7).spawn(5)
    assert seeds == [int(k.generate_state(1, np.uint64)[0]) for k in kids]
    assert transfer_seeds(7, 3) == seeds[:3] and len(set(seeds)) == 5


def test_summary_means_by_lost_packets_and_timeout_fraction_by_hand():
    ts = [_t(0, 0.1, 0), _t(1, 0.1, 0), _t(2, 0.2, 1), _t(3, 0.4, 1), _t(4, 1.3, 2, timeouts=1)]
    s = summarise(ts, 500)
    assert s["runs"] == 5 and s["size_packets"] == 10
    assert s["mean_latency_s"] == pytest.approx(2.1 / 5)
    assert s["conditional"][0]["mean_s"] == pytest.approx(0.1) and s["conditional"][1]["mean_s"] == pytest.approx(0.3)
    assert s["conditional"][2]["n"] == 1 and s["conditional"][2]["ci95_s"] is None
    assert s["timeout_fraction"] == 0.2 and s["mean_lost_packets"] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="transfers"):
        summarise([], 500)


def test_a_run_is_untrusted_only_when_too_many_deliveries_were_late():
    n = 10_000
    assert load_problem({"packets": n, "over_1ms": int(LATE_FRACTION * n), "max_us": 5000.0}) is None
    msg = load_problem({"packets": n, "over_1ms": int(LATE_FRACTION * n) + 1, "max_us": 5000.0})
    assert "11 of 10,000 packets" in msg and "5.0 ms" in msg


def test_the_emulator_rules_restated():
    # 552-byte data packet (500 + 52) at 100 Mb/s: 44.16 us; a 52-byte ACK 4.16 us
    assert emulator.serialisation_ns(552, 100e6) == 44160 and emulator.serialisation_ns(52, 100e6) == 4160
    assert emulator.is_droppable(500, emulator.TCP_ACK, True)
    assert emulator.is_droppable(500, emulator.TCP_ACK | emulator.TCP_FIN, True)  # FIN riding on data
    for payload, flags, side in ((0, emulator.TCP_SYN, True), (0, emulator.TCP_ACK, True),
                                 (0, emulator.TCP_FIN | emulator.TCP_ACK, True), (500, emulator.TCP_ACK, False)):
        assert not emulator.is_droppable(payload, flags, side)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")
def test_the_emulator_builds_once_into_the_cache_and_never_into_the_package(tmp_path):
    exe = emulator.build(tmp_path)
    assert exe.parent == tmp_path and os.access(exe, os.X_OK)
    mtime = exe.stat().st_mtime_ns
    assert emulator.build(tmp_path) == exe and exe.stat().st_mtime_ns == mtime
    assert not any(p.name.startswith("link_emulator-") for p in emulator.SOURCE.parent.iterdir())


@pytest.mark.parametrize("kw, name", [({"delay_s": -1}, "delay_s"), ({"rate_bps": 10}, "rate_bps"),
                                      ({"mss_bytes": 9000}, "mss_bytes")])
def test_testbed_parameters_are_checked_before_anything_starts(kw, name):
    from latency_model.kernel.testbed import Testbed

    with pytest.raises(ValueError, match=name):
        Testbed(**kw)


def test_the_simulator_beside_the_kernel_is_the_linux_profile_with_the_matching_rule():
    params, config = sim_setup("cubic", 500, 0.05, 100e6, 0.1)
    assert params.rule.name == "cubic" and params.w0 == 10 and params.rtt_s == 0.1 and params.p == 0.1
    assert config.stack == "linux" and config.delay_s == 0.05 and config.link_rate_bps == 100e6
    assert sim_setup("reno", 500, 0.05, 100e6, 0.0)[0].rule.name == "linux-reno"
    assert sim_setup("reno", 500, 0.05, 100e6, 0.0, stack="rfc")[0].rule.name == "standard"


def test_the_simulator_beside_the_kernel_has_the_kernel_receivers_window():
    """The receiver offers 65535 bytes (``tcp_select_initial_window``): 131 segments of 500
    bytes, 44 of 1460. Scripted: segment 9 of 40 lost under cubic. Round 2 sends 10-27 (cwnd
    19); RACK marks 9 lost on the first SACK, ssthresh = 19 x 717 / 1024 = 13, and PRR lets
    ceil(18 x 13 / 19) = 13 segments leave in round 3: the retransmission and 28-39, the
    last ACK one round later (0.30 s, the kernel: 0.3022 s in all 5 transfers,
    single_loss.csv). Under the paper's 30-segment window only 30 segments from snd_una = 9
    may be out (9..38) and segment 39 waits one more round (0.40 s)."""
    from latency_model.sim import run_transfer

    assert sim_setup("cubic", 500, 0.05, 100e6, 0.0)[0].rwnd == 131
    assert sim_setup("cubic", 1460, 0.05, 100e6, 0.0)[0].rwnd == 44
    params, config = sim_setup("cubic", 500, 0.05, 100e6, 0.0)
    assert 0.300 < run_transfer(params, size_packets=40, config=config, drops=[9]).completion_s < 0.303
    paper = run_transfer(params.replace(rwnd=30), size_packets=40, config=config, drops=[9]).completion_s
    assert 0.400 < paper < 0.403


@pytest.mark.parametrize("argv, needles", [
    (["--cc", "bbr"], ["--cc must be one of reno, cubic"]),
    (["--drop", "3", "--p", "0.1"], ["--drop", "--p 0.1"]),
    (["--drop", "12"], ["--drop 12", "segments 0..9"]),
    (["--p", "1"], ["--p"]),
    (["--concurrency", "0"], ["--concurrency"]),
    (["--rtt", "0.2", "--delay-s", "0.05"], ["--rtt-s", "--delay-s"]),
    (["--stack", "bsd"], ["--stack must be one of"]),
])
def test_bad_flags_are_one_line_before_any_testbed(capsys, argv, needles):
    refused(capsys, ["kernel", "--size-packets", "10", *argv], *needles)


def test_without_root_one_line_exit_2(capsys, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    refused(capsys, ["kernel", "--size-packets", "1", "--runs", "1"], "needs root")
