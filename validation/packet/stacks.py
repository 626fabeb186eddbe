"""The packet model beside the simulator's other stack profiles (docs/packet-model.md).

Usage::

    .venv/bin/python validation/packet/stacks.py [--runs 10000] [--jobs 2] [--cache DIR]

The packet model runs the RFC sender or ns-3's; beside the simulator it follows the simulated
link and timers (``studies/packet_setup.py``). Three simulated set-ups, each on the same cells
(sizes 1-20 packets, the packet model's cap on the accuracy map; p = 0.02, 0.1; b = 1, 2;
NewReno and LT; W0 as the profile gives it):

- ``rfc-linux-timers``: the RFC sender with Linux's timers and headers (delayed ACK 40 ms,
  RTO 200 ms min, 1 s initial, 120 s max; 52-byte headers): every setting followed, so the
  model should be as close as on the rfc profile;
- ``ns3``: the profile, whose sender and timer the model runs too (``PathConfig.sender``,
  since 2026-11-27; before, the RFC sender: how much the stack changes the answer);
- ``linux``: the profile, whose SACK sender (PRR, RACK-TLP) and timestamps the model runs
  too (``PathConfig(sender="sack", timestamps=True)``, on the tree DP, since 2026-11-27;
  before, the RFC sender with Karn's rule: how much the stack changes the answer);
- ``linux-rfc-sender``: Linux's non-SACK path (``--stack linux --sender rfc``): the RFC
  sender with Linux's timers, quick ACKs, timestamps and 200 ms clock granularity.

Writes ``results_stacks.csv`` (the accuracy map's tidy rows, a ``setup`` column first; a
run of some ``--setups`` keeps the others' rows) and ``summary_stacks.txt`` (per set-up and variant: median, p90 and max |error|, mean signed
error, cells within max(5 %, CI)) in this folder.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics

from latency_model.sim import SimConfig
from latency_model.studies.accuracy import COLUMNS, AccuracyMap, run_accuracy
from latency_model.studies.packet_setup import packet_differences

HERE = os.path.dirname(os.path.abspath(__file__))

SETUPS = {
    "rfc-linux-timers": SimConfig(delack_timeout_s=0.04, min_rto_s=0.2, initial_rto_s=1.0, max_rto_s=120.0,
                                  header_bytes=52),
    "ns3": SimConfig.profile("ns3"),
    "linux": SimConfig.profile("linux"),
    "linux-rfc-sender": SimConfig.profile("linux", sender="rfc", rack_tlp=False),
}


def _summary(name: str, rows: list, cfg) -> list[str]:
    """The summary lines of one set-up's rows (CSV strings or the map's values)."""
    diffs = packet_differences(cfg)
    lines = [f"{name}: not followed: {'; '.join(diffs) if diffs else 'nothing'}"]
    for variant in ("newreno", "lt", None):
        sel = [r for r in rows if variant is None or r["variant"] == variant]
        err = [float(r["error"]) for r in sel]
        ae = sorted(abs(e) for e in err)
        p90 = ae[min(len(ae) - 1, int(round(0.9 * (len(ae) - 1))))]
        lines.append(f"  {variant or 'all':8s} cells {len(sel):3d}  median |err| {100 * statistics.median(ae):5.2f} %"
                     f"  p90 {100 * p90:5.2f} %  max {100 * ae[-1]:5.2f} %  mean {100 * statistics.mean(err):+6.2f} %"
                     f"  within max(5 %, CI) {sum(str(r['within']) in ('True', '1', '1.0') for r in sel)}")
    worst = sorted(rows, key=lambda r: -abs(float(r["error"])))[:3]
    for r in worst:
        lines.append(f"    worst: {r['variant']} b={r['b']} W0={float(r['w0']):g} p={float(r['p']):g} "
                     f"{float(r['size_packets']):g} packets: model {float(r['model_s']):.4f} s, sim "
                     f"{float(r['sim_mean_s']):.4f} +- {1.96 * float(r['sim_se_s']):.4f} s, "
                     f"{100 * float(r['error']):+.2f} %")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(HERE, ".stacks-cache"))
    ap.add_argument("--setups", nargs="+", default=list(SETUPS), choices=list(SETUPS),
                    help="set-ups to run; the others keep their rows of results_stacks.csv")
    a = ap.parse_args()
    out = os.path.join(HERE, "results_stacks.csv")
    by_setup: dict = {}
    if os.path.exists(out):
        with open(out, newline="") as fh:
            for r in csv.DictReader(fh):
                by_setup.setdefault(r["setup"], []).append(r)
    for name in a.setups:
        cfg = SETUPS[name]
        amap = AccuracyMap(models=("packet",), sizes_packets=(1, 2, 3, 5, 8, 10, 15, 20), p=(0.02, 0.1), b=(1, 2),
                           variants=("newreno", "lt"), runs=a.runs, sim_config=cfg)
        res = run_accuracy(amap, cache_dir=a.cache, jobs=a.jobs, model_timeout_s=None, progress=True)
        by_setup[name] = [{"setup": name, **r} for r in res["rows"]]
    rows, lines = [], []
    for name in SETUPS:
        if name in by_setup:
            rows += by_setup[name]
            lines += _summary(name, by_setup[name], SETUPS[name])
    with open(out + ".tmp", "w", newline="") as fh:
        w = csv.DictWriter(fh, ["setup", *COLUMNS])
        w.writeheader()
        w.writerows(rows)
    os.replace(out + ".tmp", out)
    text = "\n".join([f"packet model vs simulator per stack set-up, {a.runs} runs a cell "
                      "(validation/packet/stacks.py)", *lines]) + "\n"
    with open(os.path.join(HERE, "summary_stacks.txt"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
