"""The packet model against the simulator on paths other than the paper's (docs/packet-model.md).

The grids of ``validate.py`` keep the paper's path (RTT 0.1 s, MSS 500 B, rwnd = W_SS = 30
packets, 100 Mb/s); this draws the path too: RTT log-uniform on [0.01, 0.5] s, MSS 500,
1000 or 1460 B, rwnd = W_SS uniform on 4..61 packets, the link rate log-uniform on
[10 Mb/s, 1 Gb/s], with the variant, b, W0 (1..min(10, rwnd)), p (log-uniform on
[0.001, 0.2]) and the size (log-uniform on [1, 100] packets) as ``validate.py --grid
random`` draws them. Both sides take the ``rfc`` profile with that link. One CSV row per
cell (``--out``, appended; a re-run skips the cells it has).

Usage::

    .venv/bin/python validation/packet/paths.py [--cells 30] [--draw-seed 1] [--runs 20000] [--part 0 --parts 2]
        [--rwnd-range 4 61] [--size-range 1 100]
"""

from __future__ import annotations

import argparse
import csv
import os
import time

import numpy as np

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant
from latency_model.sim import SimConfig, simulate
from latency_model.studies.packet_setup import packet_options

VARIANTS = ("newreno", "lt", "proposal", "er")
FIELDS = ("variant", "b", "w0", "p", "size_packets", "rtt_s", "mss_bytes", "rwnd", "link_rate_bps",
          "model_s", "sim_s", "sim_se_s", "rel_err", "err_se", "within", "model_time_s", "runs")


def draw(count: int, seed: int, rwnd_range=(4, 61), size_range=(1, 100)) -> list[dict]:
    """``count`` cells, each a dict of the drawn values (see the module docstring);
    ``rwnd_range`` and ``size_range`` (packets, inclusive) narrow or widen the rwnd and the
    size (the defaults are the module docstring's, and draw the same cells as before)."""
    rng = np.random.default_rng(seed)
    out = []
    lo, hi = size_range
    for _ in range(count):
        rwnd = int(rng.integers(rwnd_range[0], rwnd_range[1] + 1))
        out.append(dict(
            variant=VARIANTS[int(rng.integers(len(VARIANTS)))], b=int(rng.integers(1, 3)),
            w0=float(rng.integers(1, min(10, rwnd) + 1)),
            p=float(f"{np.exp(rng.uniform(np.log(0.001), np.log(0.2))):.3g}"),
            size_packets=int(round(np.exp(rng.uniform(np.log(lo), np.log(hi))))),
            rtt_s=float(f"{np.exp(rng.uniform(np.log(0.01), np.log(0.5))):.3g}"),
            mss_bytes=int((500, 1000, 1460)[int(rng.integers(3))]), rwnd=rwnd,
            link_rate_bps=float(f"{np.exp(rng.uniform(np.log(1e7), np.log(1e9))):.3g}")))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=30)
    ap.add_argument("--draw-seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--part", type=int, default=0, help="run the cells i with i %% parts == part")
    ap.add_argument("--parts", type=int, default=1)
    ap.add_argument("--rwnd-range", type=int, nargs=2, default=(4, 61), metavar=("LO", "HI"),
                    help="rwnd = W_SS drawn uniform on LO..HI packets (4 61; the level DP takes up to 253)")
    ap.add_argument("--size-range", type=int, nargs=2, default=(1, 100), metavar=("LO", "HI"),
                    help="sizes drawn log-uniform on LO..HI packets (1 100)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results_paths.csv"))
    a = ap.parse_args()
    done = set()
    if os.path.exists(a.out):
        with open(a.out) as fh:
            done = {(r["variant"], r["b"], r["w0"], r["p"], r["size_packets"], r["rtt_s"]) for r in csv.DictReader(fh)}
    for i, c in enumerate(draw(a.cells, a.draw_seed, a.rwnd_range, a.size_range)):
        if i % a.parts != a.part:
            continue
        key = tuple(str(c[k]) for k in ("variant", "b", "w0", "p", "size_packets", "rtt_s"))
        if key in done:
            continue
        prm = apply_variant(TcpParams(p=c["p"], b=c["b"], w0=c["w0"], rwnd=c["rwnd"], w_ss=c["rwnd"],
                                      mss_bytes=c["mss_bytes"], rtt_s=c["rtt_s"]), c["variant"])
        config = SimConfig.profile("rfc", link_rate_bps=c["link_rate_bps"])
        t = time.process_time()
        m = PM.expected_latency(prm, size_packets=[c["size_packets"]], **packet_options(config))[0].expected_latency_s
        mt = time.process_time() - t
        s = simulate(prm, size_packets=[c["size_packets"]], runs=a.runs, seed=1000 + i, config=config,
                     engine="compiled").results[0]
        lo, hi = s.ci95_s
        se = (hi - lo) / (2 * 1.96)
        err = (m - s.mean_latency_s) / s.mean_latency_s
        row = dict(c, model_s=m, sim_s=s.mean_latency_s, sim_se_s=se, rel_err=err,
                   err_se=(m - s.mean_latency_s) / se if se > 0 else 0.0,
                   within=int(abs(err) <= 0.05 or lo <= m <= hi), model_time_s=mt, runs=a.runs)
        new = not os.path.exists(a.out)
        with open(a.out, "a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
        print(f"{i:3d} {c['variant']:8s} b={c['b']} W0={c['w0']:g} p={c['p']:<6g} n={c['size_packets']:<3d} "
              f"RTT={c['rtt_s']:<6g} MSS={c['mss_bytes']} rwnd={c['rwnd']} rate={c['link_rate_bps']:.3g}: "
              f"model {m:.4f} s, sim {s.mean_latency_s:.4f} +- {se:.4f} s: {100 * err:+.2f} % "
              f"({row['err_se']:+.1f} se), {mt:.1f} s", flush=True)


if __name__ == "__main__":
    main()
