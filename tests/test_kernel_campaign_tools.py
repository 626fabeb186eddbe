"""The analysis helpers of the kernel campaign scripts (validation/linux/), without the kernel.

``timers._timeline`` on a hand-written packet log (times chosen so that the expected trigger,
retransmission, timer and jiffy phase are known), and ``campaign.sim_repair_path`` on single
losses whose repair the RACK rules decide by hand.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "validation" / "linux"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"lm_{name}", SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def timers():
    return _load("timers")


@pytest.fixture(scope="module")
def campaign():
    return _load("campaign")


def _row(t_ms, direction, event, seq=0, ack=0, length=0, flags=16):
    return {"t_ns": str(int(round(t_ms * 1e6))), "dir": str(direction), "event": event, "seq": str(seq),
            "ack": str(ack), "len": str(length), "flags": str(flags)}


def test_timeline_finds_the_trigger_ack_and_the_timer(timers):
    base = 1_000_001.5  # ms: 1.5 ms into a 4 ms jiffy (1_000_000 is a multiple of 4)
    log = [
        _row(base - 100.0, 0, "in", flags=2),                       # SYN: before the data, ignored
        _row(base, 0, "drop", seq=0, length=500, flags=24),         # segment 0 dropped
        _row(base + 0.02, 0, "in", seq=500, flags=17),              # bare FIN
        _row(base + 100.1, 1, "out", ack=0),                        # its SACK reaches the sender
        _row(base + 130.6, 0, "in", seq=0, length=500, flags=24),   # the retransmission
        _row(base + 230.9, 1, "out", ack=501),
    ]
    got = timers._timeline(log, 4.0)
    assert float(got["trigger_s"]) == pytest.approx(0.1001, abs=1e-9)
    assert float(got["retransmit_s"]) == pytest.approx(0.1306, abs=1e-9)
    assert float(got["timer_ms"]) == pytest.approx(30.5, abs=1e-6)
    assert float(got["trigger_phase_ms"]) == pytest.approx((1_000_001.5 + 100.1) % 4.0, abs=1e-6)


def test_timeline_without_a_retransmission_is_empty(timers):
    log = [_row(0.0, 0, "in", seq=0, length=500), _row(100.0, 1, "out", ack=500)]
    assert timers._timeline(log, 4.0)["timer_ms"] == ""


@pytest.mark.parametrize("n, segment, path", [
    (3, 1, "rack-timer"),   # two segments SACKed after it (2 and the FIN): RACK waits min_RTT/4
    (20, 3, "rack-ack"),    # six SACKed at once: reo_wnd = 0, lost on the ACK
    (11, 10, "probe"),      # the last segment, nothing after it: the tail loss probe
])
def test_sim_repair_path_of_single_losses(campaign, n, segment, path):
    assert campaign.sim_repair_path(n, segment) == path


def test_single_row_takes_the_median_transfer(campaign):
    """Three kernel transfers of one position: the row carries the median one's time and
    columns (its timeouts, FIN, retransmissions), the spread and every time and port in the
    order run, and sim - median in ms."""
    from types import SimpleNamespace as NS

    kernel = [NS(completion_s=0.2400, timeouts=1, fin_bare=0, retransmissions=2, port=10000),
              NS(completion_s=0.2300, timeouts=0, fin_bare=1, retransmissions=1, port=10001),
              NS(completion_s=0.2310, timeouts=0, fin_bare=1, retransmissions=3, port=10002)]
    sim = NS(completion_s=0.2325, timeouts=0, tlp_probes=1)
    line, diff = campaign.single_row("reno", 3, 1, kernel, sim)
    row = dict(zip(campaign.SINGLE_COLUMNS, line.split(",")))
    assert diff == pytest.approx(1.5, abs=1e-9)  # 0.2325 - 0.2310 s
    assert row["kernel_s"] == "0.231000" and row["kernel_retransmissions"] == "3"
    assert (row["kernel_min_s"], row["kernel_max_s"], row["kernel_repeats"]) == ("0.230000", "0.240000", "3")
    assert row["kernel_runs_s"] == "0.240000 0.230000 0.231000" and row["kernel_ports"] == "10000 10001 10002"
    assert (row["sim_s"], row["sim_tlp_probes"], row["diff_ms"]) == ("0.232500", "1", "1.500")


def test_single_refuses_an_even_number_of_repeats(campaign, capsys):
    assert campaign.main(["single", "--repeats", "4", "--results", "/nonexistent"]) == 2
    assert "--repeats must be odd" in capsys.readouterr().err
