"""Cells of kernel transfers, summarised as ``simulate`` summarises its runs, the simulator
beside them, and the testbed's self-check.

A *cell* is one size, one loss probability (or one scripted loss pattern) and one congestion
control, run ``runs`` times; run ``i`` takes child ``i`` of ``SeedSequence(seed).spawn(runs)``
as its loss seed (:func:`~.testbed.transfer_seeds`), so results do not depend on the
concurrency.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .testbed import KernelTransfer, Testbed, TransferSpec, transfer_seeds

__all__ = ["KernelCell", "summarise", "sim_setup", "simulated", "self_check", "measure", "load_problem",
           "CC_RULES", "LINUX_CC_RULES", "CSV_COLUMNS"]

CC_RULES = {"reno": "standard", "cubic": "cubic"}
"""Kernel congestion control -> the simulator's growth rule that follows it (rfc, ns3 profiles)."""
LINUX_CC_RULES = {"reno": "linux-reno", "cubic": "cubic"}
"""The same under the ``linux`` profile: reno is Linux's own, in whole packets
(``growth/linux_reno.py``, ``tcp_cong.c`` ``tcp_reno_cong_avoid``)."""

CSV_COLUMNS = ("index", "size_bytes", "cc", "seed", "completion_s", "lost_packets", "first_transmissions_lost",
               "data_packets_sent", "retransmissions", "timeouts", "fin_bare", "total_retrans", "srtt_s", "rto_s",
               "dropped_segments")

PERCENTILES = (5.0, 25.0, 50.0, 75.0, 95.0, 99.0)

LATE_FRACTION = 0.001
"""A run is not trusted when more than this fraction of the emulator's deliveries were more
than 1 ms late (the machine was too loaded to hold the link's timing)."""


def summarise(transfers: list[KernelTransfer], mss_bytes: int) -> dict:
    """``simulate``'s per-size summary of kernel transfers of one size.

    Returns
    -------
    dict
        ``size_bytes``, ``size_packets``, ``runs``, ``mean_latency_s`` with ``ci95_s``
        (Student t), ``percentiles_s``, ``conditional`` (``{k: {"n", "mean_s", "ci95_s"}}``
        by lost data transmissions k), ``timeout_fraction`` (transfers with an RTO
        expiry), ``mean_timeouts``, ``mean_lost_packets``, ``mean_retransmissions``,
        ``fin_bare_fraction`` (seconds, packets).
    """
    from ..sim import mean_ci

    if not transfers:
        raise ValueError("transfers must hold at least one transfer")
    lat = np.array([t.completion_s for t in transfers])
    lost = np.array([t.lost_packets for t in transfers])
    mean, ci = mean_ci(lat)
    conditional = {}
    for k in np.unique(lost):
        m, c = mean_ci(lat[lost == k])
        conditional[int(k)] = {"n": int((lost == k).sum()), "mean_s": m, "ci95_s": c}
    size = transfers[0].size_bytes
    return {
        "size_bytes": size,
        "size_packets": size / mss_bytes,
        "runs": int(lat.size),
        "mean_latency_s": mean,
        "ci95_s": ci,
        "percentiles_s": {f"p{q:g}": float(v) for q, v in zip(PERCENTILES, np.percentile(lat, PERCENTILES))},
        "conditional": conditional,
        "timeout_fraction": float(np.mean([t.timeouts > 0 for t in transfers])),
        "mean_timeouts": float(np.mean([t.timeouts for t in transfers])),
        "mean_lost_packets": float(lost.mean()),
        "mean_retransmissions": float(np.mean([t.retransmissions for t in transfers])),
        "fin_bare_fraction": float(np.mean([t.fin_bare for t in transfers])),
    }


RECEIVE_WINDOW_BYTES = 65535
"""The receive window the testbed's receiver offers from its SYN-ACK on, bytes: Linux
``net/ipv4/tcp_output.c`` ``tcp_select_initial_window`` offers the receive buffer's space
(``tcp_rmem`` default 131072 bytes, half of it at ``tcp_adv_win_scale`` = 1: 65536) rounded
down to a multiple of the MSS, and the SYN-ACK's unscaled 16-bit field carries at most
65535; later ACKs offer no less while the receiving process reads (``tcp_select_window``).
The simulator's receive window (``TcpParams.rwnd``) is set to its whole segments."""


def sim_setup(cc: str, mss_bytes: int, delay_s: float, rate_bps: float, p: float, stack: str = "linux"):
    """The simulator's ``(TcpParams, SimConfig)`` for a kernel cell: ``--stack`` profile
    ``stack`` on the same path, growth rule :data:`CC_RULES` ``[cc]`` (:data:`LINUX_CC_RULES` under ``linux``), the
    receiver's window :data:`RECEIVE_WINDOW_BYTES` in whole segments, and every other
    parameter as ``simulate --stack STACK`` takes it by default (W0 from the profile)."""
    from ..growth import make_rule
    from ..params import TcpParams
    from ..sim import SimConfig
    from ..sim.profiles import check_stack

    w0 = check_stack(stack).params.get("w0", (TcpParams.w0, ""))[0]
    params = TcpParams(mss_bytes=mss_bytes, rtt_s=2.0 * delay_s, p=p, w0=w0, rwnd=RECEIVE_WINDOW_BYTES // mss_bytes,
                       rule=make_rule((LINUX_CC_RULES if stack == "linux" else CC_RULES)[cc]))
    return params, SimConfig.profile(stack, delay_s=delay_s, link_rate_bps=rate_bps)


def simulated(cc, size_bytes, *, mss_bytes, delay_s, rate_bps, p, runs, seed, stack="linux", drops=None) -> dict:
    """The simulator's summary of the same cell (``simulate``, or one scripted transfer for
    ``drops``)."""
    from ..sim import run_transfer, simulate

    params, config = sim_setup(cc, mss_bytes, delay_s, rate_bps, p, stack)
    if drops is not None:
        r = run_transfer(params.replace(p=0.0), size_bytes=size_bytes, config=config, drops=list(drops))
        return {"mean_latency_s": r.completion_s, "runs": 1, "timeout_fraction": float(r.timeouts > 0),
                "mean_lost_packets": float(r.lost_packets), "conditional": {}}
    return simulate(params, size_bytes=[size_bytes], runs=runs, seed=seed, config=config).results[0].to_dict()


def self_check(tb: Testbed, sizes_packets, cc: str = "reno", stack: str = "linux", tolerance_s: float = 1e-3,
               attempts: int = 3) -> dict:
    """No-loss staircase: loss-free kernel transfers beside the simulator's, one per size.

    A loss-free transfer has no randomness, so a size outside ``tolerance_s`` is run again
    (up to ``attempts`` times in all, one transfer at a time) and its closest run is kept: a
    repeat that agrees shows that the machine, not the stack, delayed the first one.

    Returns
    -------
    dict
        ``rows`` (``size_packets``, ``kernel_s``, ``simulated_s``, ``diff_ms``, ``attempts``),
        ``worst_ms``, ``ok`` (every ``|diff|`` within ``tolerance_s``) and ``link`` (the
        emulator's lateness during the check).
    """
    from ..sim import run_transfer

    params, config = sim_setup(cc, tb.mss_bytes, tb.delay_s, tb.rate_bps, 0.0, stack)
    sizes = sorted({int(n) for n in sizes_packets})
    tb.link_stats()  # reset the lateness counters
    got = tb.run([TransferSpec(i, n * tb.mss_bytes, cc, 0, 0.0) for i, n in enumerate(sizes)], concurrency=4)
    rows = []
    for n, k in zip(sizes, got):
        s = run_transfer(params, size_packets=n, config=config, drops=[]).completion_s
        row = {"size_packets": n, "kernel_s": k.completion_s, "simulated_s": s,
               "diff_ms": (k.completion_s - s) * 1e3, "attempts": 1}
        while abs(row["diff_ms"]) > tolerance_s * 1e3 and row["attempts"] < attempts:
            again = tb.run([TransferSpec(0, n * tb.mss_bytes, cc, 0, 0.0)], concurrency=1)[0].completion_s
            row["attempts"] += 1
            if abs(again - s) < abs(row["diff_ms"]) / 1e3:
                row.update(kernel_s=again, diff_ms=(again - s) * 1e3)
        rows.append(row)
    worst = max(abs(r["diff_ms"]) for r in rows)
    return {"rows": rows, "worst_ms": worst, "ok": worst <= tolerance_s * 1e3, "link": tb.link_stats().to_dict()}


def load_problem(link: dict) -> str | None:
    """Why a run's timing is not to be trusted, or ``None``: more than
    :data:`LATE_FRACTION` of the emulator's deliveries over 1 ms late. (The load average
    is reported beside it, but it is the lateness that decides: the emulator runs under
    SCHED_FIFO and holds its timing on a busy machine until the CPUs themselves stall.)"""
    n = link.get("packets", 0)
    if n and link["over_1ms"] > LATE_FRACTION * n:
        return (f"{link['over_1ms']:,} of {n:,} packets were delivered more than 1 ms late "
                f"(worst {link['max_us'] / 1e3:.1f} ms; load average {os.getloadavg()[0]:.1f} on "
                f"{os.cpu_count() or 1} CPUs)")
    return None


@dataclass(frozen=True)
class KernelCell:
    """One measured cell: its transfers, their summary and the emulator's lateness."""

    cc: str
    p: float
    drops: tuple
    transfers: list
    summary: dict
    link: dict
    wall_s: float


def measure(tb: Testbed, size_bytes: int, *, cc: str, p: float, runs: int, seed: int, drops=(),
            concurrency: int = 16, progress=None) -> KernelCell:
    """Run ``runs`` kernel transfers of ``size_bytes`` (losses of probability ``p`` and/or
    the scripted ``drops``) and summarise them (:func:`summarise`)."""
    import time

    seeds = transfer_seeds(seed, runs)
    tb.link_stats()
    t0 = time.monotonic()
    got = tb.run([TransferSpec(i, size_bytes, cc, seeds[i], p, tuple(drops)) for i in range(runs)],
                 concurrency=concurrency, progress=progress)
    wall = time.monotonic() - t0
    return KernelCell(cc, p, tuple(drops), got, summarise(got, tb.mss_bytes), tb.link_stats().to_dict(), wall)
