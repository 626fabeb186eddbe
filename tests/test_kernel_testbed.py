"""The kernel testbed run for real, for a few seconds: root and /dev/net/tun needed (skipped
with the reason otherwise). It checks the emulator's link from its packet log, the
loss-free staircase against the simulator, a scripted loss, that random loss never touches
a SYN, a pure ACK or a pure FIN, and that every process (and so every namespace and TUN
device) is gone afterwards."""

import csv
import os

import pytest

from latency_model.kernel.measure import self_check
from test_sweep_orphans import _children, _running as _alive  # /proc helpers
from latency_model.kernel.testbed import Testbed, TransferSpec, machine_problem, transfer_seeds

PROBLEM = machine_problem()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(PROBLEM is not None, reason=PROBLEM or "")]

MSS, DELAY_S, RATE = 500, 0.05, 100e6


def test_testbed_link_staircase_losses_and_cleanup(tmp_path):
    log = tmp_path / "packets.csv"
    with Testbed(delay_s=DELAY_S, rate_bps=RATE, mss_bytes=MSS, packet_log=str(log)) as tb:
        pids = [p.p.pid for p in tb._procs.values()]
        netns = {os.readlink(f"/proc/{pid}/ns/net") for pid in pids}
        assert len(netns) == 3  # client, server, and the caller's (the emulator's)
        assert tb.sysctls["net.ipv4.tcp_sack"] == "1" and tb.sysctls["net.ipv4.tcp_no_metrics_save"] == "1"
        # loss-free: within 1 ms of the simulator (its own repeats absorb a loaded moment)
        check = self_check(tb, [1, 10, 11, 20], "reno")
        assert check["ok"], check["rows"]
        # scripted: the first transmission of segment 3 of 10, repaired without a timeout
        (one,) = tb.run([TransferSpec(0, 10 * MSS, "reno", 1, 0.0, (3,))])
        assert one.lost_packets == 1 and one.dropped_segments == (3,) and one.retransmissions >= 1
        assert one.timeouts == 0 and 0.2 < one.completion_s < 0.25
        # heavy random loss: every transfer completes (SYNs, pure ACKs and pure FINs pass)
        seeds = transfer_seeds(3, 12)
        got = tb.run([TransferSpec(i, 5 * MSS, "cubic", seeds[i], 0.3) for i in range(12)], concurrency=12)
        assert all(t.completion_s >= 0.1 for t in got) and sum(t.lost_packets for t in got) > 0
        tb.link_stats()  # flushes the log
    for pid in pids:
        assert not _alive(pid), pid
    with open(log, newline="") as f:
        rows = list(csv.DictReader(f))
    ins = {}
    for r in rows:
        key = (r["port"], r["dir"], r["seq"], r["ack"], r["len"], r["flags"])
        if r["event"] == "drop":
            # only data from the sender is ever dropped
            assert r["dir"] == "0" and int(r["len"]) > 0, r
        elif r["event"] == "in":
            ins.setdefault(key, []).append(int(r["t_ns"]))
        elif r["event"] == "out" and ins.get(key):
            t_in = ins[key].pop(0)
            size = int(r["len"]) + 52
            ser_ns = size * 8 / RATE * 1e9
            # delivered one delay plus at least its own serialisation after it entered
            assert int(r["t_ns"]) - t_in >= DELAY_S * 1e9 + ser_ns - 1, r


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_the_command_leaves_nothing_behind_when_stopped(sig):
    import signal
    import subprocess
    import sys
    import time

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root}
    proc = subprocess.Popen([sys.executable, "-m", "latency_model", "kernel", "--size-packets", "20", "--runs", "5000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    kids = []
    for _ in range(100):  # until the testbed runs (client, server, emulator)
        time.sleep(0.1)
        kids = _children(proc.pid)
        if len(kids) >= 3:
            break
    assert len(kids) >= 3, kids
    time.sleep(0.5)
    proc.send_signal(getattr(signal, sig))
    code = proc.wait(timeout=20)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if sig == "SIGTERM":  # the clean exit, as Ctrl-C
        assert code == 130 and err.strip() == "latency-model: interrupted", (code, err)
    deadline = time.time() + 5
    while any(_alive(k) for k in kids) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids)  # PR_SET_PDEATHSIG even after SIGKILL
