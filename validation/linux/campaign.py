"""The kernel campaign: this machine's Linux TCP beside the simulator's ``--stack linux``.

    sudo python validation/linux/campaign.py run [--runs 2000] [--sizes 1,3,8,20,40] \
        [--ps 0.02,0.1] [--ccs reno,cubic] [--concurrency 16]
    sudo python validation/linux/campaign.py single [--sizes 1,2,3,5,8,10,11,15,20,30,40] [--repeats 5] [--packet-log]
    python validation/linux/campaign.py report      # tables for validation/LINUX.md
    python validation/linux/campaign.py mechanisms  # paired replays grouped by repair path
    python validation/linux/campaign.py resim       # simulated columns again, after a simulator change
    python validation/linux/campaign.py gaps        # a cell's gap: loss counts drawn vs mechanisms
    python validation/linux/campaign.py positions   # single-loss positions outside 3 ms, by repair path
    python validation/linux/campaign.py repeat      # the kernel against itself on single losses, the sim against each
    python validation/linux/campaign.py fast        # class fast's replays: whole rounds or timer-sized
    python validation/linux/campaign.py compare --before DIR   # simulated columns before (DIR) and after a change
    sudo python validation/linux/campaign.py rerun --cell reno:0.1:11   # the kernel again on a cell's own losses
    python validation/linux/campaign.py kernel-timeouts  # the rerun's kernel-timeout transfers, with RTTs

``run`` measures every cell (cc x p x N) that has no results yet (interrupted work resumes):
``results/transfers_<cc>_p<p>_n<N>.csv.gz`` (one row per kernel transfer, with the segment of
each dropped transmission), one row per cell in ``results/cells.csv`` (kernel beside the
simulator, overall and given k = 0, 1, 2 lost data transmissions, and the paired replay of
each kernel transfer's loss pattern through ``run_transfer(drops=...)``), the loss-free
staircase in ``results/selfcheck.csv`` and the kernel release and every ``net.ipv4.tcp_*``
sysctl in ``results/kernel.json``. Seeds: cell (cc, p, N) uses root seed ``--seed``; run i
takes child i of ``SeedSequence(seed).spawn(runs)``, as ``simulate`` does.

``single`` drops the first transmission of each segment i of N-segment transfers,
``--repeats`` (5) transfers per (cc, N, i), the kernel's median beside
``run_transfer(drops=[i])``: ``results/single_loss.csv`` (``single_loss_first.csv`` and
``single_loss_rerun.csv``: two earlier runs of one transfer a position).

``report`` prints the Markdown tables of validation/LINUX.md from the committed CSVs.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from latency_model.kernel.cells import (CAMPAIGN_SEED, read_transfers as _read_transfers, sim_columns, tolerance_s,
                                        transfers_path as _transfers_path)
from latency_model.kernel.measure import CSV_COLUMNS, measure, self_check, sim_setup
from latency_model.kernel.testbed import Testbed, TransferSpec
from latency_model.sim import run_transfer
from latency_model.studies.export import atomic_write_bytes, atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
MSS, DELAY_S, RATE_BPS = 500, 0.05, 100e6
CELL_COLUMNS = ["cc", "p", "size_packets", "runs", "kernel_mean_s", "kernel_sem_s", "kernel_timeout_fraction",
                "kernel_fin_bare_fraction", "sim_mean_s", "sim_sem_s", "sim_timeout_fraction",
                *[f"{who}_k{k}_{what}" for k in (0, 1, 2) for who in ("kernel", "sim") for what in ("n", "mean_s", "sem_s")],
                "replay_mean_s", "replay_diff_mean_s", "replay_within_3ms", "late_over_1ms", "packets",
                "late_max_ms", "load_average", "wall_s", "date"]


def _sem(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")


def replay(transfers, cc: str) -> list:
    """Each kernel transfer's loss pattern through the simulator: segment s dropped m times
    in the kernel -> its first m transmissions dropped (``run_transfer(drops={s: m})``)."""
    params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
    out = []
    for t in transfers:
        drops = dict(Counter(t.dropped_segments))
        out.append(run_transfer(params, size_bytes=t.size_bytes, config=config, drops=drops).completion_s)
    return out


def run(args) -> int:
    global RESULTS
    RESULTS = Path(args.results)
    RESULTS.mkdir(parents=True, exist_ok=True)
    cells_path = RESULTS / "cells.csv"
    done = set()
    rows = []
    if cells_path.exists():
        with open(cells_path, newline="") as f:
            rows = list(csv.DictReader(f))
        done = {(r["cc"], float(r["p"]), int(r["size_packets"])) for r in rows}
    sizes = [int(x) for x in args.sizes.split(",")]
    with Testbed(delay_s=DELAY_S, rate_bps=RATE_BPS, mss_bytes=MSS) as tb:
        atomic_write_text(RESULTS / "kernel.json", json.dumps(
            {"release": tb.kernel_release, "config_hz": tb.hz, "sched_fifo": tb.fifo, "sysctls": tb.sysctls,
             "path": {"mss_bytes": MSS, "delay_s": DELAY_S, "link_rate_bps": RATE_BPS}}, indent=1) + "\n")
        if not (RESULTS / "selfcheck.csv").exists():
            lines = ["cc,size_packets,kernel_s,simulated_s,diff_ms,attempts"]
            for cc in args.ccs.split(","):
                chk = self_check(tb, range(1, 41), cc)
                lines += [f"{cc},{r['size_packets']},{r['kernel_s']:.6f},{r['simulated_s']:.6f},{r['diff_ms']:.3f},{r['attempts']}"
                          for r in chk["rows"]]
                print(f"self-check {cc}: worst {chk['worst_ms']:.3f} ms, link {chk['link']}", flush=True)
            atomic_write_text(RESULTS / "selfcheck.csv", "\n".join(lines) + "\n")
        for cc in args.ccs.split(","):
            for p in [float(x) for x in args.ps.split(",")]:
                for n in sizes:
                    if (cc, p, n) in done:
                        continue
                    cell = measure(tb, n * MSS, cc=cc, p=p, runs=args.runs, seed=args.seed,
                                   concurrency=args.concurrency)
                    _write_transfers(cc, p, n, cell.transfers)
                    rows.append(_cell_row(cc, p, n, cell, args))
                    _write_cells(cells_path, rows)
                    r = rows[-1]
                    print(f"{cc} p={p} N={n}: kernel {float(r['kernel_mean_s']):.4f} sim {float(r['sim_mean_s']):.4f}"
                          f" replay {float(r['replay_mean_s']):.4f} ({cell.wall_s:.0f} s, late>1ms "
                          f"{r['late_over_1ms']}/{r['packets']})", flush=True)
    return 0


SINGLE_COLUMNS = ["cc", "size_packets", "segment", "kernel_s", "sim_s", "diff_ms", "kernel_timeouts", "sim_timeouts",
                  "sim_tlp_probes", "kernel_fin_bare", "kernel_retransmissions", "kernel_min_s", "kernel_max_s",
                  "kernel_repeats", "kernel_runs_s", "kernel_ports"]
"""``single_loss.csv``'s columns. ``kernel_s`` is the median of the ``kernel_repeats``
transfers of a position (``kernel_runs_s``: each one's time, in the order run;
``kernel_ports``: their client ports in the packet log), ``diff_ms`` the simulator's
time minus that median; the timeout, FIN and retransmission columns are the median
transfer's. Files written before the repeats have the first eleven columns only (one
transfer a position)."""


SINGLE_FILES = ("single_loss.csv", "single_loss_repeat2.csv", "single_loss_first.csv", "single_loss_rerun.csv")
"""The single-loss CSVs that ``resim`` and ``compare`` follow: the repeated campaign (the
reference) and its second run, and the two earlier runs of one kernel transfer a position."""


def single(args) -> int:
    """Scripted single losses: the first transmission of segment i of an N-segment transfer,
    every i, each position ``--repeats`` times (in ``--repeats`` rounds over all positions,
    so a position's transfers are minutes apart), the kernel's median beside
    ``run_transfer(drops=[i])`` (deterministic): ``results/single_loss.csv``
    (:data:`SINGLE_COLUMNS`) and ``single_loss.json`` (release, sysctls, the emulator's
    lateness per cc, load, date). ``--packet-log`` keeps the testbed's packet log
    (``single_loss_packets.csv.gz``)."""
    import tempfile

    from latency_model.kernel.measure import load_problem

    if args.repeats < 1 or args.repeats % 2 == 0:
        print(f"campaign.py single: --repeats must be odd and >= 1 (the median is a transfer), got {args.repeats}",
              file=sys.stderr)
        return 2
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in args.sizes.split(",")]
    lines = [",".join(SINGLE_COLUMNS)]
    meta = {"command": "python validation/linux/campaign.py single " + " ".join(sys.argv[2:]),
            "repeats": args.repeats, "concurrency": args.concurrency, "load_average_before": os.getloadavg(),
            "link": {}, "loaded": {}}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "packets.csv"
        with Testbed(delay_s=DELAY_S, rate_bps=RATE_BPS, mss_bytes=MSS,
                     packet_log=str(log) if args.packet_log else None) as tb:
            meta.update({"release": tb.kernel_release, "config_hz": tb.hz, "sched_fifo": tb.fifo,
                         "sysctls": tb.sysctls})
            for cc in args.ccs.split(","):
                params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
                specs = [(n, i) for n in sizes for i in range(n)]
                got = []
                tb.link_stats()  # reset the lateness counters
                for rep in range(args.repeats):
                    got.append(tb.run([TransferSpec(j, n * MSS, cc, 0, 0.0, (i,)) for j, (n, i) in enumerate(specs)],
                                      concurrency=args.concurrency))
                    print(f"{cc}: round {rep + 1} of {args.repeats} ({time.monotonic() - t0:.0f} s)", flush=True)
                link = tb.link_stats().to_dict()
                meta["link"][cc] = link
                meta["loaded"][cc] = load_problem(link)
                within = 0
                for j, (n, i) in enumerate(specs):
                    line, diff = single_row(cc, n, i, [g[j] for g in got],
                                            run_transfer(params, size_packets=n, config=config, drops=[i]))
                    within += abs(diff) <= 3.0
                    lines.append(line)
                print(f"{cc}: {within} of {len(specs)} single-loss positions within 3 ms of the kernel's median, "
                      f"link {link}" + (f"; NOT TRUSTED: {meta['loaded'][cc]}" if meta["loaded"][cc] else ""),
                      flush=True)
        packets = log.read_bytes() if args.packet_log else None
    meta.update({"load_average_after": os.getloadavg(), "wall_s": round(time.monotonic() - t0, 1),
                 "date": time.strftime("%Y-%m-%d", time.gmtime())})
    atomic_write_text(out / "single_loss.csv", "\n".join(lines) + "\n")
    atomic_write_text(out / "single_loss.json", json.dumps(meta, indent=1) + "\n")
    if packets is not None:
        atomic_write_bytes(out / "single_loss_packets.csv.gz", gzip.compress(packets, mtime=0))
    return 0


def single_row(cc: str, n: int, segment: int, kernel: list, sim) -> tuple:
    """One line of ``single_loss.csv`` (:data:`SINGLE_COLUMNS`) and sim - kernel (ms) for the
    kernel transfers ``kernel`` of one position (an odd number, in the order run) and the
    simulator's ``sim`` (a TransferResult): the median transfer's time and columns, the
    spread, every time and port."""
    times = np.array([k.completion_s for k in kernel])
    med = kernel[int(np.argsort(times, kind="stable")[len(kernel) // 2])]
    diff = (sim.completion_s - med.completion_s) * 1e3
    line = (f"{cc},{n},{segment},{med.completion_s:.6f},{sim.completion_s:.6f},{diff:.3f},{med.timeouts},"
            f"{sim.timeouts},{sim.tlp_probes},{med.fin_bare},{med.retransmissions},{times.min():.6f},"
            f"{times.max():.6f},{len(kernel)},{' '.join(f'{x:.6f}' for x in times)},"
            f"{' '.join(str(k.port) for k in kernel)}")
    return line, diff


def resim(args) -> int:
    """Recompute every simulated column (cells.csv: simulator and paired replays, from the
    committed per-transfer CSVs; single_loss.csv: the simulator's times) with the code as it
    is now, keeping the kernel's columns: the simulator is deterministic, so this is how the
    committed data follow a change of the simulator without measuring the kernel again."""
    global RESULTS
    RESULTS = Path(args.results)
    with open(RESULTS / "cells.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        cc, p, n, runs = r["cc"], float(r["p"]), int(r["size_packets"]), int(r["runs"])
        ts = _read_transfers(_transfers_path(RESULTS, cc, p, n))
        r.update(sim_columns(cc, n, p, runs, seed=int(args.seed), mss_bytes=MSS, delay_s=DELAY_S,
                             rate_bps=RATE_BPS))
        params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
        lat = np.array([float(t["completion_s"]) for t in ts])
        rep = np.array([run_transfer(params, size_bytes=int(t["size_bytes"]), config=config,
                                     drops=dict(Counter(int(x) for x in t["dropped_segments"].split()))).completion_s
                        for t in ts])
        r["replay_mean_s"], r["replay_diff_mean_s"] = float(rep.mean()), float((rep - lat).mean())
        r["replay_within_3ms"] = float(np.mean(np.abs(rep - lat) <= 3e-3))
        for key, v in list(r.items()):
            if isinstance(v, str) and v not in ("",) and key not in ("cc", "date"):
                try:
                    r[key] = float(v) if any(ch in v for ch in ".e") or key.endswith("_s") else int(v)
                except ValueError:
                    pass
        print(f"{cc} p={p:g} N={n}: sim {r['sim_mean_s']:.4f} replay {r['replay_mean_s']:.4f}", flush=True)
    _write_cells(RESULTS / "cells.csv", rows)
    for name in SINGLE_FILES:
        _resim_single(RESULTS / name)
    return 0


def _resim_single(single_path) -> None:
    """The simulator's columns of a single-loss CSV (``single``'s format) again."""
    if single_path.exists():
        with open(single_path, newline="") as f:
            srows = list(csv.DictReader(f))
        header = list(srows[0])
        for r in srows:
            params, config = sim_setup(r["cc"], MSS, DELAY_S, RATE_BPS, 0.0)
            sim = run_transfer(params, size_packets=int(r["size_packets"]), config=config, drops=[int(r["segment"])])
            r["sim_s"] = f"{sim.completion_s:.6f}"
            r["diff_ms"] = f"{(sim.completion_s - float(r['kernel_s'])) * 1e3:.3f}"
            r["sim_timeouts"], r["sim_tlp_probes"] = sim.timeouts, sim.tlp_probes
        atomic_write_text(single_path, "\n".join([",".join(header)] + [",".join(str(r[h]) for h in header)
                                                                      for r in srows]) + "\n")


def _cell_key(path) -> tuple:
    """(p, N) from ``transfers_<cc>_p<p>_n<N>.csv[.gz]``."""
    stem = Path(path).name.split(".csv")[0]
    p, n = stem.split("_p")[1].split("_n")
    return float(p), int(n)


def repair_class(n: int, kernel: dict, sim) -> str:
    """Which mechanism a paired replay exercises, from how each side repaired the losses:

    - ``fin``: the sender's write fit in the initial window (N <= 10: the FIN left bare,
      ``tcp_send_fin``) and the simulator needed a probe or a timeout;
    - ``sim-timeout``: the simulator timed out, the kernel did not (the rescue
      retransmission, RACK on SACKed retransmissions);
    - ``kernel-timeout``: the kernel timed out, the simulator did not;
    - ``both-timeout``;
    - ``probe``: the simulator repaired with a tail loss probe and no timeout (N > 10);
    - ``fast``: both repaired without a timeout and the simulator without a probe (implicit
      Limited Transmit, PRR, the timers' granularity and the delayed ACK).
    """
    k_to, s_to = int(kernel["timeouts"]) > 0, sim.timeouts > 0
    if n <= 10 and int(kernel["fin_bare"]) and (s_to or sim.tlp_probes) and not k_to:
        return "fin"
    if s_to and k_to:
        return "both-timeout"
    if s_to:
        return "sim-timeout"
    if k_to:
        return "kernel-timeout"
    if sim.tlp_probes:
        return "probe"
    return "fast"


def mechanisms(args) -> int:
    """Paired replays of every lossy kernel transfer, grouped by :func:`repair_class`: count,
    mean (sim - kernel) and the share within 3 ms, per cc, p and N."""
    folder = Path(args.results)
    print("| cc | p | N | class | transfers | mean sim - kernel (ms) | within 3 ms |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(folder.glob("transfers_*.csv*"), key=lambda q: (q.name.split("_")[1], _cell_key(q))):
        rows = [r for r in _read_transfers(path) if int(r["lost_packets"]) > 0]
        if not rows:
            continue
        cc, n = rows[0]["cc"], int(rows[0]["size_bytes"]) // MSS
        p = _cell_key(path)[0]
        params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
        groups: dict = {}
        for r in rows:
            drops = dict(Counter(int(x) for x in r["dropped_segments"].split()))
            sim = run_transfer(params, size_bytes=int(r["size_bytes"]), config=config, drops=drops)
            groups.setdefault(repair_class(n, r, sim), []).append((sim.completion_s - float(r["completion_s"])) * 1e3)
        for cls in ("fin", "fast", "probe", "sim-timeout", "kernel-timeout", "both-timeout"):
            if cls in groups:
                d = np.array(groups[cls])
                print(f"| {cc} | {p} | {n} | {cls} | {d.size} | {d.mean():+.1f} | {100 * np.mean(abs(d) <= 3):.0f}% |")
    return 0


def sim_repair_path(n: int, segment: int, cc: str = "reno") -> str:
    """How the simulator repairs a single loss of ``segment`` of ``n`` (its trace):
    ``rack-timer`` (RACK marks it lost more than 1 ms after the last ACK: its reordering
    timer), ``rack-ack`` (on an ACK), ``probe`` (a tail loss probe), ``rto``."""
    params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
    r, trace = run_transfer(params, size_packets=n, config=config, drops=[segment], trace=True)
    if r.timeouts:
        return "rto"
    if r.tlp_probes:
        return "probe"
    lost = next((e.time_s for e in trace if e.event == "rack_lost"), None)
    acks = [e.time_s for e in trace if e.event in ("ack", "dupack") and lost is not None and e.time_s <= lost]
    return "rack-timer" if lost is not None and (not acks or lost - acks[-1] > 1e-3) else "rack-ack"


def positions(args) -> int:
    """Single-loss positions outside 3 ms (``single_loss.csv``), grouped by the simulator's
    repair path (:func:`sim_repair_path`): count, the range of sim - kernel, the positions."""
    with open(Path(args.results) / "single_loss.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    print("| cc | simulator's repair | positions outside 3 ms | sim - kernel (ms) | positions (N:segment; with repeats: "
          "the kernel's min and max - median, ms) |")
    print("|---|---|---|---|---|")
    for cc in sorted({r["cc"] for r in rows}):
        groups: dict = {}
        mine = [r for r in rows if r["cc"] == cc]
        for r in mine:
            d = float(r["diff_ms"])
            if abs(d) > 3.0:
                path = sim_repair_path(int(r["size_packets"]), int(r["segment"]), cc)
                spread = (f" ({(float(r['kernel_min_s']) - float(r['kernel_s'])) * 1e3:+.0f}/"
                          f"{(float(r['kernel_max_s']) - float(r['kernel_s'])) * 1e3:+.0f})"
                          if r.get("kernel_min_s") else "")
                groups.setdefault(path, []).append((d, f"{r['size_packets']}:{r['segment']}{spread}"))
        for path, v in sorted(groups.items()):
            d = np.array([x for x, _ in v])
            print(f"| {cc} | {path} | {d.size} of {len(mine)} | {d.min():+.0f} to {d.max():+.0f} | "
                  f"{' '.join(q for _, q in v)} |")
    return 0


def _two_runs(first: dict, second: dict, agree_what: str) -> None:
    """Two single-loss runs ({(cc, N, segment): row}) side by side, per cc: where the kernel's
    times (``kernel_s``) agree within 3 ms, and where the simulator is within 3 ms of each."""
    print(f"| cc | positions | {agree_what} within 3 ms | simulator within 3 ms of run 1 | of run 2 | "
          "of both | outside in run 2 (N:segment, sim - kernel ms) |")
    print("|---|---|---|---|---|---|---|")
    for cc in sorted({k[0] for k in second}):
        keys = sorted(k for k in second if k[0] == cc and k in first)
        kk = sum(abs(float(second[k]["kernel_s"]) - float(first[k]["kernel_s"])) <= 3e-3 for k in keys)
        s1 = [abs(float(first[k]["diff_ms"])) <= 3.0 for k in keys]
        s2 = [abs(float(second[k]["diff_ms"])) <= 3.0 for k in keys]
        out = " ".join(f"{k[1]}:{k[2]} ({float(second[k]['diff_ms']):+.0f})" for k, ok in zip(keys, s2) if not ok)
        print(f"| {cc} | {len(keys)} | {kk} ({kk / len(keys):.0%}) | {sum(s1)} ({sum(s1) / len(keys):.0%}) | "
              f"{sum(s2)} ({sum(s2) / len(keys):.0%}) | {sum(a and b for a, b in zip(s1, s2))} | {out} |")


def _positions_of(path) -> dict:
    """A single-loss CSV as {(cc, N, segment): row}."""
    with open(path, newline="") as f:
        return {(r["cc"], int(r["size_packets"]), int(r["segment"])): r for r in csv.DictReader(f)}


def repeat(args) -> int:
    """How far the kernel repeats itself on a scripted single loss. First the two runs of one
    kernel transfer a position (``single_loss_first.csv``, ``single_loss_rerun.csv``): per cc,
    the positions where they agree within 3 ms, and where the simulator agrees with each;
    then the repeated campaign (``single_loss.csv``, ``kernel_repeats`` transfers a position):
    the positions whose transfers all lie within 3 ms of their median, the single transfers
    within 3 ms of their position's median (the most a deterministic simulator can match
    transfer by transfer), and the simulator within 3 ms of the median and of each transfer;
    last, with ``single_loss_repeat2.csv`` (the repeated campaign run again), where the two
    medians agree within 3 ms and where the simulator is within 3 ms of each."""
    folder = Path(args.results)
    _two_runs(_positions_of(folder / "single_loss_first.csv"), _positions_of(folder / "single_loss_rerun.csv"),
              "kernel run 2")
    rows = [r for r in _positions_of(folder / "single_loss.csv").values() if r.get("kernel_runs_s")]
    if not rows:
        return 0
    print("\n| cc | positions | transfers a position | all within 3 ms of the median | transfers within 3 ms of "
          "their median | simulator within 3 ms of the median | of each transfer |")
    print("|---|---|---|---|---|---|---|")
    for cc in sorted({r["cc"] for r in rows}):
        mine = [r for r in rows if r["cc"] == cc]
        each = [np.array([float(x) for x in r["kernel_runs_s"].split()]) for r in mine]
        med = np.array([float(r["kernel_s"]) for r in mine])
        sim = np.array([float(r["sim_s"]) for r in mine])
        n_all = sum(int(np.all(abs(e - m) <= 3e-3)) for e, m in zip(each, med))
        near = sum(int(np.sum(abs(e - m) <= 3e-3)) for e, m in zip(each, med))
        total = sum(e.size for e in each)
        s_med = int(np.sum(abs(sim - med) <= 3e-3))
        s_each = sum(int(np.sum(abs(e - x) <= 3e-3)) for e, x in zip(each, sim))
        reps = sorted({e.size for e in each})
        print(f"| {cc} | {len(mine)} | {', '.join(map(str, reps))} | {n_all} ({n_all / len(mine):.0%}) | {near} of "
              f"{total} ({near / total:.0%}) | {s_med} ({s_med / len(mine):.0%}) | {s_each} of {total} "
              f"({s_each / total:.0%}) |")
    if (folder / "single_loss_repeat2.csv").exists():
        print()
        _two_runs(_positions_of(folder / "single_loss.csv"), _positions_of(folder / "single_loss_repeat2.csv"),
                  "medians of the two repeated runs")
    return 0


def gaps(args) -> int:
    """The gap of each chosen cell (cc, p, N) split in two: the loss counts each side drew
    (kernel and simulator beside p/(1 - p) N), the gap at equal loss counts (conditional means
    weighted by the pooled count of each k), and the paired replays' gap by repair class
    (:func:`repair_class`) as its contribution to the mean."""
    from latency_model.kernel.measure import simulated

    folder = Path(args.results)
    with open(folder / "cells.csv", newline="") as f:
        runs = {(r["cc"], float(r["p"]), int(r["size_packets"])): int(r["runs"]) for r in csv.DictReader(f)}
    print("| cc | p | N | gap (ms) | lost: kernel / sim / p N/(1-p) | gap at equal loss counts (ms) | "
          "paired replays (ms) | by class: contribution (ms) [transfers, mean each] |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in args.cells.split(","):
        cc, p, n = cell.split(":")
        p, n = float(p), int(n)
        ts = _read_transfers(_transfers_path(folder, cc, p, n))
        lat = np.array([float(t["completion_s"]) for t in ts])
        lost = np.array([int(t["lost_packets"]) for t in ts])
        s = simulated(cc, n * MSS, mss_bytes=MSS, delay_s=DELAY_S, rate_bps=RATE_BPS, p=p, runs=runs[(cc, p, n)],
                      seed=args.seed)
        cond = {int(k): v for k, v in s["conditional"].items()}
        both = [k for k in cond if (lost == k).any()]
        w = {k: (lost == k).sum() + cond[k]["n"] for k in both}
        same_k = sum(w[k] * (cond[k]["mean_s"] - lat[lost == k].mean()) for k in both) / sum(w.values())
        params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
        groups: dict = {}
        for t in ts:
            if int(t["lost_packets"]) == 0:
                continue
            drops = dict(Counter(int(x) for x in t["dropped_segments"].split()))
            sim = run_transfer(params, size_bytes=int(t["size_bytes"]), config=config, drops=drops)
            groups.setdefault(repair_class(n, t, sim), []).append((sim.completion_s - float(t["completion_s"])) * 1e3)
        replay = sum(sum(v) for v in groups.values()) / len(ts)
        classes = "; ".join(f"{c} {sum(v) / len(ts):+.1f} [{len(v)}, {np.mean(v):+.0f}]"
                            for c, v in sorted(groups.items(), key=lambda kv: sum(kv[1])))
        print(f"| {cc} | {p:g} | {n} | {(s['mean_latency_s'] - lat.mean()) * 1e3:+.1f} | {lost.mean():.3f} / "
              f"{s['mean_lost_packets']:.3f} / {p * n / (1 - p):.3f} | {same_k * 1e3:+.1f} | {replay:+.1f} | {classes} |")
    return 0


def rerun(args) -> int:
    """The kernel again on a committed cell's own loss draws (same seeds: the emulator's
    streams give the same drop list as long as the kernel sends in the same order), with the
    packet log: ``results/rerun_<cc>_p<p>_n<N>.csv.gz`` (one row per transfer, the campaign's
    columns plus the client ``port`` of the packet log), ``..._packets.csv.gz`` and
    ``..._meta.json`` (release, sysctls, lateness, load, date). Prints how far each transfer
    moved from its campaign twin: the kernel's run-to-run spread on identical losses."""
    import tempfile

    folder = Path(args.results)
    cc, p, n = args.cell.split(":")
    p, n = float(p), int(n)
    camp = _read_transfers(_transfers_path(folder, cc, p, n))
    stem = f"rerun_{cc}_p{p:g}_n{n}"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "packets.csv"
        with Testbed(delay_s=DELAY_S, rate_bps=RATE_BPS, mss_bytes=MSS, packet_log=str(log)) as tb:
            cell = measure(tb, n * MSS, cc=cc, p=p, runs=len(camp), seed=args.seed, concurrency=args.concurrency)
            meta = {"release": tb.kernel_release, "config_hz": tb.hz, "sched_fifo": tb.fifo, "sysctls": tb.sysctls,
                    "cell": {"cc": cc, "p": p, "size_packets": n, "runs": len(camp), "seed": args.seed,
                             "concurrency": args.concurrency},
                    "link": cell.link, "load_average": round(os.getloadavg()[0], 2), "wall_s": round(cell.wall_s, 1),
                    "date": time.strftime("%Y-%m-%d", time.gmtime())}
        packets = log.read_bytes()
    cols = [*CSV_COLUMNS, "port"]
    lines = [",".join(cols)]
    for t in cell.transfers:
        d = t.to_dict()
        d["dropped_segments"] = " ".join(map(str, d["dropped_segments"]))
        lines.append(",".join(str(d[k]) for k in cols))
    atomic_write_bytes(folder / f"{stem}.csv.gz", gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    atomic_write_bytes(folder / f"{stem}_packets.csv.gz", gzip.compress(packets, mtime=0))
    atomic_write_text(folder / f"{stem}_meta.json", json.dumps(meta, indent=1) + "\n")
    same = sum(a["dropped_segments"] == " ".join(map(str, b.dropped_segments)) for a, b in zip(camp, cell.transfers))
    x = np.array([t.completion_s for t in cell.transfers])
    y = np.array([float(t["completion_s"]) for t in camp])
    d = (x - y) * 1e3
    to_x = np.array([t.timeouts > 0 for t in cell.transfers])
    to_y = np.array([int(t["timeouts"]) > 0 for t in camp])
    print(f"{cc} p={p:g} N={n}: {same} of {len(camp)} drop lists as in the campaign; mean {x.mean():.4f} s "
          f"(campaign {y.mean():.4f}); each transfer against its campaign twin: mean {d.mean():+.2f} ms, "
          f"{100 * np.mean(abs(d) <= 3):.1f}% within 3 ms, {int((abs(d) > 50).sum())} over 50 ms; with an RTO "
          f"{int(to_x.sum())} (campaign {int(to_y.sum())}, both {int((to_x & to_y).sum())}); late > 1 ms "
          f"{cell.link['over_1ms']} of {cell.link['packets']} deliveries; load {meta['load_average']}")
    return 0


def kernel_timeouts(args) -> int:
    """The rerun's ``kernel-timeout`` transfers (:func:`repair_class`: the kernel timed out,
    the simulator's replay did not) with, from its packet log, the handshake's RTT (SYN into
    the link to SYN-ACK delivered: the sample that sets the kernel's min_RTT) and each
    retransmission's (into the link to the first ACK delivered at least 99 ms later), both
    as the emulator sees them; and the handshake RTTs of all the rerun's connections."""
    folder = Path(args.results)
    cc, p, n = args.cell.split(":")
    stem = f"rerun_{cc}_p{float(p):g}_n{int(n)}"
    rows = _read_transfers(folder / f"{stem}.csv.gz")
    with gzip.open(folder / f"{stem}_packets.csv.gz", "rt", newline="") as f:
        by_port: dict = {}
        for r in csv.DictReader(f):
            if r["event"] in ("in", "out", "drop"):
                by_port.setdefault(int(r["port"]), []).append(r)

    def rtts(port):
        ev = sorted(by_port[port], key=lambda r: int(r["t_ns"]))
        ms = [int(r["t_ns"]) / 1e6 for r in ev]
        syn = next(i for i, r in enumerate(ev) if r["dir"] == "0" and int(r["flags"]) & 2)
        sa = next(i for i, r in enumerate(ev) if r["dir"] == "1" and r["event"] == "out" and int(r["flags"]) & 2)
        seen, out = set(), []
        for i, r in enumerate(ev):
            if r["dir"] == "0" and r["event"] in ("in", "drop") and int(r["len"]) > 0:
                if int(r["seq"]) in seen and r["event"] == "in":
                    ack = next((ms[j] for j in range(i, len(ev)) if ev[j]["dir"] == "1" and ev[j]["event"] == "out"
                                and ms[j] > ms[i] + 99.0), None)
                    out.append(f"{int(r['seq']) // MSS}: {ack - ms[i]:.3f}" if ack else f"{int(r['seq']) // MSS}: -")
                seen.add(int(r["seq"]))
        return ms[sa] - ms[syn], out

    params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
    print("| transfer | dropped | kernel (s) | simulator (s) | handshake RTT (ms) | retransmissions' RTT (ms) |")
    print("|---|---|---|---|---|---|")
    for i, t in enumerate(rows):
        if int(t["lost_packets"]) == 0:
            continue
        drops = dict(Counter(int(x) for x in t["dropped_segments"].split()))
        sim = run_transfer(params, size_bytes=int(t["size_bytes"]), config=config, drops=drops)
        if repair_class(int(n), t, sim) == "kernel-timeout":
            hs, out = rtts(int(t["port"]))
            print(f"| {i} | {t['dropped_segments']} | {float(t['completion_s']):.3f} | {sim.completion_s:.3f} | "
                  f"{hs:.3f} | {'; '.join(out)} |")
    hs = np.array([rtts(int(t["port"]))[0] for t in rows])
    print(f"\nhandshake RTT of all {hs.size} connections (ms): percentiles 5/50/95 "
          f"{' / '.join(f'{v:.3f}' for v in np.percentile(hs, [5, 50, 95]))}")
    return 0


def fast_class(args) -> int:
    """The paired replays of class ``fast`` (:func:`repair_class`) of the chosen cells, by the
    size of sim - kernel: whole round trips (about 100 ms and more) or timer-sized (3-12 ms),
    with each band's contribution to the cell's mean (ms)."""
    folder = Path(args.results)
    bands = [(-1e9, -150), (-150, -90), (-90, -60), (-60, -30), (-30, -12), (-12, -3), (-3, 3), (3, 12), (12, 30),
             (30, 90), (90, 150), (150, 1e9)]
    print("| cc | p | N | band of sim - kernel (ms) | transfers | mean (ms) | contribution to the mean (ms) |")
    print("|---|---|---|---|---|---|---|")
    for cell in args.cells.split(","):
        cc, p, n = cell.split(":")
        p, n = float(p), int(n)
        ts = _read_transfers(_transfers_path(folder, cc, p, n))
        params, config = sim_setup(cc, MSS, DELAY_S, RATE_BPS, 0.0)
        d = []
        for t in ts:
            if int(t["lost_packets"]) == 0:
                continue
            drops = dict(Counter(int(x) for x in t["dropped_segments"].split()))
            sim = run_transfer(params, size_bytes=int(t["size_bytes"]), config=config, drops=drops)
            if repair_class(n, t, sim) == "fast":
                d.append((sim.completion_s - float(t["completion_s"])) * 1e3)
        d = np.array(d)
        for lo, hi in bands:
            sel = d[(d >= lo) & (d < hi)]
            if sel.size:
                name = f"below {hi:g}" if lo < -1e8 else f"{lo:g} and above" if hi > 1e8 else f"{lo:g} to {hi:g}"
                print(f"| {cc} | {p:g} | {n} | {name} | {sel.size} | {sel.mean():+.1f} | {sel.sum() / len(ts):+.2f} |")
    return 0


def compare(args) -> int:
    """The simulated columns before and after a simulator change, cell by cell: the committed
    ``cells.csv`` of ``--results`` (after ``resim``) beside an earlier one (``--before``, a
    folder holding ``cells.csv`` and the single-loss CSVs, e.g. from ``git show``), with the
    counts of cells within the tolerance and of single-loss positions within 3 ms."""
    before, after = Path(args.before), Path(args.results)

    def cells(folder):
        with open(folder / "cells.csv", newline="") as f:
            return {(r["cc"], float(r["p"]), int(r["size_packets"])): r for r in csv.DictReader(f)}

    def num(r, c):
        return float(r[c]) if r.get(c) not in ("", None) else float("nan")

    def within(r, k=""):
        km, ks, sm, ss = (num(r, f"kernel{k}_mean_s"), num(r, f"kernel{k}_sem_s"), num(r, f"sim{k}_mean_s"),
                          num(r, f"sim{k}_sem_s"))
        if math.isnan(km) or math.isnan(sm) or math.isnan(ks):
            return False
        return abs(sm - km) <= tolerance_s(km, ks, 0.0 if math.isnan(ss) else ss)

    b, a = cells(before), cells(after)
    print("| cc | p | N | kernel | sim before | sim after | sim - kernel before (ms) | after (ms) | tolerance (ms) "
          "| within before | after | replay - kernel before (ms) | after (ms) | replays within 3 ms before | after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(a):
        rb, ra = b[key], a[key]
        km = num(ra, "kernel_mean_s")
        tol = tolerance_s(km, num(ra, "kernel_sem_s"), num(ra, "sim_sem_s"))
        print(f"| {key[0]} | {key[1]:g} | {key[2]} | {km:.4f} | {num(rb, 'sim_mean_s'):.4f} | {num(ra, 'sim_mean_s'):.4f} | "
              f"{(num(rb, 'sim_mean_s') - km) * 1e3:+.1f} | {(num(ra, 'sim_mean_s') - km) * 1e3:+.1f} | {tol * 1e3:.1f} | "
              f"{'yes' if within(rb) else '**no**'} | {'yes' if within(ra) else '**no**'} | "
              f"{num(rb, 'replay_diff_mean_s') * 1e3:+.1f} | {num(ra, 'replay_diff_mean_s') * 1e3:+.1f} | "
              f"{100 * num(rb, 'replay_within_3ms'):.0f}% | {100 * num(ra, 'replay_within_3ms'):.0f}% |")
    print(f"\nwithin the tolerance: overall {sum(within(r) for r in b.values())} of {len(b)} before, "
          f"{sum(within(r) for r in a.values())} of {len(a)} after; given one loss "
          f"{sum(within(r, '_k1') for r in b.values())} before, {sum(within(r, '_k1') for r in a.values())} after")
    for name in SINGLE_FILES:
        counts = []
        for folder in (before, after):
            if (folder / name).exists():
                with open(folder / name, newline="") as f:
                    c = Counter(r["cc"] for r in csv.DictReader(f) if abs(float(r["diff_ms"])) <= 3)
                counts.append(", ".join(f"{cc} {c[cc]}" for cc in sorted(c)))
        if len(counts) == 2:
            print(f"{name}: positions within 3 ms before {counts[0]}; after {counts[1]}")
    return 0


def _write_transfers(cc, p, n, transfers) -> None:
    lines = [",".join(CSV_COLUMNS)]
    for t in transfers:
        d = t.to_dict()
        d["dropped_segments"] = " ".join(map(str, d["dropped_segments"]))
        lines.append(",".join(str(d[k]) for k in CSV_COLUMNS))
    text = ("\n".join(lines) + "\n").encode()
    atomic_write_bytes(RESULTS / f"transfers_{cc}_p{p:g}_n{n}.csv.gz", gzip.compress(text, mtime=0))



def _cell_row(cc, p, n, cell, args) -> dict:
    k = cell.summary
    lat = np.array([t.completion_s for t in cell.transfers])
    rep = np.array(replay(cell.transfers, cc))
    row = {"cc": cc, "p": p, "size_packets": n, "runs": args.runs,
           "kernel_mean_s": k["mean_latency_s"], "kernel_sem_s": _sem(lat),
           "kernel_timeout_fraction": k["timeout_fraction"], "kernel_fin_bare_fraction": k["fin_bare_fraction"],
           **sim_columns(cc, n, p, args.runs, seed=args.seed, mss_bytes=MSS, delay_s=DELAY_S, rate_bps=RATE_BPS)}
    lost = np.array([t.lost_packets for t in cell.transfers])
    for kk in (0, 1, 2):
        sel = lat[lost == kk]
        row[f"kernel_k{kk}_n"] = int(sel.size)
        row[f"kernel_k{kk}_mean_s"] = float(sel.mean()) if sel.size else ""
        row[f"kernel_k{kk}_sem_s"] = _sem(sel) if sel.size > 1 else ""
    row.update({"replay_mean_s": float(rep.mean()), "replay_diff_mean_s": float((rep - lat).mean()),
                "replay_within_3ms": float(np.mean(np.abs(rep - lat) <= 3e-3)),
                "late_over_1ms": cell.link["over_1ms"], "packets": cell.link["packets"],
                "late_max_ms": cell.link["max_us"] / 1e3, "load_average": round(os.getloadavg()[0], 2),
                "wall_s": round(cell.wall_s, 1), "date": time.strftime("%Y-%m-%d", time.gmtime())})
    return row


def _write_cells(path, rows) -> None:
    lines = [",".join(CELL_COLUMNS)]
    for r in rows:
        lines.append(",".join(_fmt(r.get(c, "")) for c in CELL_COLUMNS))
    atomic_write_text(path, "\n".join(lines) + "\n")


def _fmt(v) -> str:
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return str(v)


def report(args) -> int:
    """Markdown tables of validation/LINUX.md from the committed CSVs."""
    folder = Path(args.results)
    with open(folder / "cells.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: (r["cc"], float(r["p"]), int(r["size_packets"])))

    def num(r, c):
        return float(r[c]) if r.get(c) not in ("", None) else float("nan")

    def within(km, ks, sm, ss):
        return abs(sm - km) <= tolerance_s(km, ks, ss)

    print("Overall (mean completion time, s; ± is the kernel's 95% CI half-width):\n")
    print("| cc | p | N | kernel | `--stack linux` | sim - kernel | within 2.5 SE + 2% | kernel P[RTO] | sim P[RTO] "
          "| late > 1 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        km, sm = num(r, "kernel_mean_s"), num(r, "sim_mean_s")
        ok = within(km, num(r, "kernel_sem_s"), sm, num(r, "sim_sem_s"))
        print(f"| {r['cc']} | {r['p']} | {r['size_packets']} | {km:.4f} ± {1.96 * num(r, 'kernel_sem_s'):.4f} | "
              f"{sm:.4f} | {sm - km:+.4f} | {'yes' if ok else '**no**'} | {num(r, 'kernel_timeout_fraction'):.3f} | "
              f"{num(r, 'sim_timeout_fraction'):.3f} | {100 * num(r, 'late_over_1ms') / num(r, 'packets'):.2f}% |")
    print("\nGiven k lost data transmissions (mean s, n; sim beside):\n")
    print("| cc | p | N | k=0 kernel | k=0 sim | k=1 kernel | k=1 sim | k=1 within | k=2 kernel | k=2 sim | k=2 within |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = []
        for k in (0, 1, 2):
            km, sm = num(r, f"kernel_k{k}_mean_s"), num(r, f"sim_k{k}_mean_s")
            kn = r[f"kernel_k{k}_n"]
            text = [f"{km:.3f} (n={kn})" if kn not in ("0", "") else "-", f"{sm:.3f}" if not math.isnan(sm) else "-"]
            if k:
                ks, ss = num(r, f"kernel_k{k}_sem_s"), num(r, f"sim_k{k}_sem_s")
                ok = (not math.isnan(km) and not math.isnan(sm) and not math.isnan(ks)
                      and within(km, ks, sm, 0.0 if math.isnan(ss) else ss))
                text.append("yes" if ok else ("**no**" if not math.isnan(ks) else "-"))
            cells += text
        print(f"| {r['cc']} | {r['p']} | {r['size_packets']} | " + " | ".join(cells) + " |")
    print("\nPaired replays (each kernel transfer's dropped segments through run_transfer(drops=...)):\n")
    print("| cc | p | N | kernel | replay | replay - kernel (mean) | replays within 3 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['cc']} | {r['p']} | {r['size_packets']} | {num(r, 'kernel_mean_s'):.4f} | "
              f"{num(r, 'replay_mean_s'):.4f} | {num(r, 'replay_diff_mean_s'):+.4f} | "
              f"{100 * num(r, 'replay_within_3ms'):.0f}% |")
    single_path = folder / "single_loss.csv"
    if single_path.exists():
        with open(single_path, newline="") as f:
            single_rows = list(csv.DictReader(f))
        print("\nScripted single losses (segment i of N, every i; diff = sim - kernel, the kernel's median of its "
              "repeats where the CSV has them):\n")
        print("| cc | N | positions | within 3 ms | sim faster by > 3 ms | sim slower by > 3 ms | worst diff (ms) |")
        print("|---|---|---|---|---|---|---|")
        groups: dict = {}
        for r in single_rows:
            groups.setdefault((r["cc"], int(r["size_packets"])), []).append(float(r["diff_ms"]))
        for (cc, n), d in sorted(groups.items()):
            d = np.array(d)
            print(f"| {cc} | {n} | {d.size} | {int((abs(d) <= 3).sum())} | {int((d < -3).sum())} | "
                  f"{int((d > 3).sum())} | {d[np.argmax(abs(d))]:+.1f} |")
        for cc in sorted({c for c, _ in groups}):
            d = np.concatenate([v for (c, _), v in groups.items() if c == cc])
            print(f"\n{cc}: {int((abs(d) <= 3).sum())} of {d.size} positions within 3 ms "
                  f"({100 * np.mean(abs(d) <= 3):.0f}%)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--runs", type=int, default=2000)
    r.add_argument("--sizes", default="1,3,8,20,40")
    r.add_argument("--ps", default="0.02,0.1")
    r.add_argument("--ccs", default="reno,cubic")
    r.add_argument("--seed", type=int, default=CAMPAIGN_SEED)
    r.add_argument("--concurrency", type=int, default=16)
    r.add_argument("--results", default=str(RESULTS))
    sg = sub.add_parser("single")
    sg.add_argument("--sizes", default="1,2,3,5,8,10,11,15,20,30,40")
    sg.add_argument("--ccs", default="reno,cubic")
    sg.add_argument("--concurrency", type=int, default=4)
    sg.add_argument("--repeats", type=int, default=5, help="kernel transfers per position (odd; the median is the reference)")
    sg.add_argument("--packet-log", action="store_true", help="keep the testbed's packet log")
    sg.add_argument("--results", default=str(RESULTS))
    rs = sub.add_parser("resim")
    rs.add_argument("--seed", type=int, default=CAMPAIGN_SEED)
    rs.add_argument("--results", default=str(RESULTS))
    mech = sub.add_parser("mechanisms")
    mech.add_argument("--results", default=str(RESULTS))
    rep = sub.add_parser("report")
    rep.add_argument("--results", default=str(RESULTS))
    gp = sub.add_parser("gaps")
    gp.add_argument("--cells", default=",".join(f"{cc}:0.1:{n}" for cc in ("reno", "cubic") for n in (5, 11, 30, 40)))
    gp.add_argument("--seed", type=int, default=CAMPAIGN_SEED)
    gp.add_argument("--results", default=str(RESULTS))
    rr = sub.add_parser("rerun")
    rr.add_argument("--cell", default="reno:0.1:11", help="cc:p:N of a committed cell")
    rr.add_argument("--seed", type=int, default=CAMPAIGN_SEED)
    rr.add_argument("--concurrency", type=int, default=16)
    rr.add_argument("--results", default=str(RESULTS))
    kt = sub.add_parser("kernel-timeouts")
    kt.add_argument("--cell", default="reno:0.1:11", help="cc:p:N of a rerun cell")
    kt.add_argument("--results", default=str(RESULTS))
    fc = sub.add_parser("fast")
    fc.add_argument("--cells", default="reno:0.1:30,reno:0.1:40")
    fc.add_argument("--results", default=str(RESULTS))
    rp = sub.add_parser("repeat")
    rp.add_argument("--results", default=str(RESULTS))
    cmp = sub.add_parser("compare")
    cmp.add_argument("--before", required=True, help="folder with the earlier cells.csv and single-loss CSVs")
    cmp.add_argument("--results", default=str(RESULTS))
    pos = sub.add_parser("positions")
    pos.add_argument("--results", default=str(RESULTS))
    args = ap.parse_args(argv)
    return {"run": run, "single": single, "report": report, "mechanisms": mechanisms,
            "resim": resim, "gaps": gaps, "positions": positions, "repeat": repeat, "rerun": rerun,
            "kernel-timeouts": kernel_timeouts, "fast": fast_class, "compare": compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
