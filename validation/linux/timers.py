"""Scripted losses on the kernel with the emulator's packet log: how long the kernel's timers
really wait (RACK's reordering timer, the loss probe, the RTO) beside the ``linux`` profile.

    sudo python validation/linux/timers.py run [--runs 20]   # results/timers.csv, timers_packets.csv.gz
    python validation/linux/timers.py report                 # the table of validation/LINUX.md
    sudo python validation/linux/timers.py minrtt [--runs 300]  # segments 3 and 10 of 11: RTO vs min_RTT

Each case drops the first transmission of the given segments of an N-segment reno transfer
(``--drop``), ``--runs`` times, 4 at a time, with the packet log on. Per transfer,
``results/timers.csv`` has the completion time, the simulator's (``run_transfer(drops=...)``,
``--stack linux``), and from the packet log: ``trigger_s``, the arrival at the sender of the
last ACK before the first retransmission; ``retransmit_s``, when that retransmission entered
the link (both from the first data packet); ``timer_ms`` = their difference, the wait of the
timer that sent it; and ``trigger_phase_ms``, the trigger's time modulo one jiffy of the
emulator's clock (CLOCK_MONOTONIC, the kernel's own: a timer fires on a jiffy boundary, so
the retransmissions' phase is the same in every transfer). ``results/timers.json``: kernel
release, CONFIG_HZ, every ``net.ipv4.tcp_*`` sysctl, load average and date.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from latency_model.kernel.measure import sim_setup
from latency_model.kernel.testbed import Testbed, TransferSpec
from latency_model.sim import run_transfer
from latency_model.studies.export import atomic_write_bytes, atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
MSS, DELAY_S, RATE_BPS = 500, 0.05, 100e6

CASES = (
    # name, N, dropped segments (first transmissions), what it isolates
    ("n1_seg0", 1, (0,), "RACK reordering timer after the bare FIN's SACK (no other timer can fire first)"),
    ("n2_seg1", 2, (1,), "the same with one segment ACKed before (its ACK and the FIN's SACK arrive together)"),
    ("n2_seg0", 2, (0,), "the same with two segments SACKed (segment 1 and the FIN: still below 3)"),
    ("n11_seg10", 11, (10,), "the last segment (FIN on it) of a transfer that needs a second round"),
    ("n20_seg0", 20, (0,), "the first segment of 20"),
    ("n20_seg19", 20, (19,), "the last segment of 20 (FIN on it): repaired by the loss probe"),
)

COLUMNS = ["case", "size_packets", "drops", "run", "port", "completion_s", "sim_s", "diff_ms", "trigger_s",
           "retransmit_s", "timer_ms", "trigger_phase_ms", "timeouts", "sim_timeouts", "sim_tlp_probes"]


def _timeline(events: list[dict], jiffy_ms: float) -> dict:
    """Trigger, first retransmission and the timer between them, from one port's log rows."""
    ev = sorted(events, key=lambda r: int(r["t_ns"]))
    data = [r for r in ev if r["dir"] == "0" and r["event"] in ("in", "drop") and int(r["len"]) > 0]
    t0 = int(data[0]["t_ns"])
    seen, retx = set(), None
    for r in data:
        key = int(r["seq"])
        if r["event"] == "in" and key in seen:
            retx = r
            break
        seen.add(key)
    if retx is None:
        return {"trigger_s": "", "retransmit_s": "", "timer_ms": "", "trigger_phase_ms": ""}
    acks = [r for r in ev if r["dir"] == "1" and r["event"] == "out" and int(r["t_ns"]) <= int(retx["t_ns"])]
    trig = int(acks[-1]["t_ns"]) if acks else t0
    return {"trigger_s": f"{(trig - t0) / 1e9:.6f}", "retransmit_s": f"{(int(retx['t_ns']) - t0) / 1e9:.6f}",
            "timer_ms": f"{(int(retx['t_ns']) - trig) / 1e6:.3f}",
            "trigger_phase_ms": f"{(trig / 1e6) % jiffy_ms:.3f}"}


def run(args) -> int:
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    params, config = sim_setup("reno", MSS, DELAY_S, RATE_BPS, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "packets.csv"
        with Testbed(delay_s=DELAY_S, rate_bps=RATE_BPS, mss_bytes=MSS, packet_log=str(log)) as tb:
            jiffy_ms = 1e3 / (tb.hz or 250)
            specs, labels = [], []
            for name, n, drops, _ in CASES:
                for i in range(args.runs):
                    specs.append(TransferSpec(len(specs), n * MSS, "reno", 0, 0.0, drops))
                    labels.append((name, n, drops, i))
            got = tb.run(specs, concurrency=args.concurrency)
            meta = {"release": tb.kernel_release, "config_hz": tb.hz, "sched_fifo": tb.fifo, "sysctls": tb.sysctls,
                    "path": {"mss_bytes": MSS, "delay_s": DELAY_S, "link_rate_bps": RATE_BPS},
                    "link": tb.link_stats().to_dict(), "load_average": round(os.getloadavg()[0], 2),
                    "date": time.strftime("%Y-%m-%d", time.gmtime()), "runs": args.runs,
                    "concurrency": args.concurrency}
        text = log.read_text()
    by_port = defaultdict(list)
    for r in csv.DictReader(text.splitlines()):
        if r["event"] in ("in", "out", "drop"):
            by_port[int(r["port"])].append(r)
    lines = [",".join(COLUMNS)]
    for (name, n, drops, i), k in zip(labels, got):
        sim = run_transfer(params, size_packets=n, config=config, drops=list(drops))
        row = {"case": name, "size_packets": n, "drops": " ".join(map(str, drops)), "run": i, "port": k.port,
               "completion_s": f"{k.completion_s:.6f}", "sim_s": f"{sim.completion_s:.6f}",
               "diff_ms": f"{(sim.completion_s - k.completion_s) * 1e3:.3f}", "timeouts": k.timeouts,
               "sim_timeouts": sim.timeouts, "sim_tlp_probes": sim.tlp_probes,
               **_timeline(by_port[k.port], jiffy_ms)}
        lines.append(",".join(str(row[c]) for c in COLUMNS))
    atomic_write_text(out / "timers.csv", "\n".join(lines) + "\n")
    atomic_write_bytes(out / "timers_packets.csv.gz", gzip.compress(text.encode(), mtime=0))
    atomic_write_text(out / "timers.json", json.dumps(meta, indent=1) + "\n")
    report(args)
    return 0


def minrtt(args) -> int:
    """Segments 3 and 10 of 11 dropped once, ``--runs`` times 16 at a time (as loaded as the
    campaign), with the packet log: does the kernel time out exactly when the retransmission
    of 3 comes back faster than the handshake did (``tcp_rack_advance`` ignores a
    retransmission's (S)ACK whose RTT is below min_RTT, which the handshake sets)?
    ``results/minrtt.csv``: per transfer the completion time, RTO count, the handshake's RTT
    (SYN into the link to SYN-ACK delivered) and the retransmission's (into the link to the
    delivery of the first ACK covering it), both as the emulator sees them;
    ``minrtt_packets.csv.gz``, ``minrtt.json``."""
    out = Path(args.results)
    n, drops = 11, (3, 10)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "packets.csv"
        with Testbed(delay_s=DELAY_S, rate_bps=RATE_BPS, mss_bytes=MSS, packet_log=str(log)) as tb:
            got = tb.run([TransferSpec(i, n * MSS, "reno", 0, 0.0, drops) for i in range(args.runs)],
                         concurrency=args.concurrency)
            meta = {"release": tb.kernel_release, "config_hz": tb.hz, "sched_fifo": tb.fifo, "sysctls": tb.sysctls,
                    "case": {"size_packets": n, "drops": list(drops), "runs": args.runs,
                             "concurrency": args.concurrency},
                    "link": tb.link_stats().to_dict(), "load_average": round(os.getloadavg()[0], 2),
                    "date": time.strftime("%Y-%m-%d", time.gmtime())}
        text = log.read_text()
    by_port = defaultdict(list)
    for r in csv.DictReader(text.splitlines()):
        if r["event"] in ("in", "out", "drop"):
            by_port[int(r["port"])].append(r)
    lines = ["run,port,completion_s,timeouts,handshake_rtt_ms,retransmission_rtt_ms"]
    table = []
    for i, k in enumerate(got):
        ev = sorted(by_port[k.port], key=lambda r: int(r["t_ns"]))
        ms = [int(r["t_ns"]) / 1e6 for r in ev]
        syn = next(j for j, r in enumerate(ev) if r["dir"] == "0" and int(r["flags"]) & 2)
        sa = next(j for j, r in enumerate(ev) if r["dir"] == "1" and r["event"] == "out" and int(r["flags"]) & 2)
        rx = next(j for j, r in enumerate(ev) if r["dir"] == "0" and r["event"] == "in" and int(r["len"]) > 0
                  and int(r["seq"]) == drops[0] * MSS)
        ack = next(j for j in range(rx, len(ev)) if ev[j]["dir"] == "1" and ev[j]["event"] == "out"
                   and int(ev[j]["ack"]) >= (drops[0] + 1) * MSS)
        hs, rt = ms[sa] - ms[syn], ms[ack] - ms[rx]
        table.append((k.timeouts > 0, rt < hs))
        lines.append(f"{i},{k.port},{k.completion_s:.6f},{k.timeouts},{hs:.3f},{rt:.3f}")
    atomic_write_text(out / "minrtt.csv", "\n".join(lines) + "\n")
    atomic_write_bytes(out / "minrtt_packets.csv.gz", gzip.compress(text.encode(), mtime=0))
    atomic_write_text(out / "minrtt.json", json.dumps(meta, indent=1) + "\n")
    for below in (True, False):
        sel = [to for to, b in table if b == below]
        print(f"retransmission RTT {'below' if below else 'at or above'} the handshake's: {len(sel)} transfers, "
              f"{sum(sel)} with an RTO")
    print(f"late > 1 ms: {meta['link']['over_1ms']} of {meta['link']['packets']} deliveries; load "
          f"{meta['load_average']}")
    return 0


def report(args) -> int:
    """Per case: kernel completion (min, mean, max), simulator, timer wait (min, mean, max)."""
    with open(Path(args.results) / "timers.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    print("| case | N | dropped | runs | kernel completion (s): min / mean / max | sim (s) | "
          "timer wait (ms): min / mean / max | trigger (s) | trigger phase in its jiffy (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, n, drops, _ in CASES:
        rs = [r for r in rows if r["case"] == name]
        if not rs:
            continue
        c = np.array([float(r["completion_s"]) for r in rs])
        w = np.array([float(r["timer_ms"]) for r in rs if r["timer_ms"]])
        tr = np.array([float(r["trigger_s"]) for r in rs if r["trigger_s"]])
        ph = np.array([float(r["trigger_phase_ms"]) for r in rs if r["trigger_phase_ms"]])
        print(f"| {name} | {n} | {' '.join(map(str, drops))} | {len(rs)} | {c.min():.4f} / {c.mean():.4f} / "
              f"{c.max():.4f} | {float(rs[0]['sim_s']):.4f} | {w.min():.2f} / {w.mean():.2f} / {w.max():.2f} | "
              f"{tr.mean():.4f} | {ph.min():.2f}-{ph.max():.2f} |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--runs", type=int, default=20)
    r.add_argument("--concurrency", type=int, default=4)
    r.add_argument("--results", default=str(RESULTS))
    rep = sub.add_parser("report")
    rep.add_argument("--results", default=str(RESULTS))
    mr = sub.add_parser("minrtt")
    mr.add_argument("--runs", type=int, default=300)
    mr.add_argument("--concurrency", type=int, default=16)
    mr.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args(argv)
    return {"run": run, "report": report, "minrtt": minrtt}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
