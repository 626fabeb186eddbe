"""The relative-state method's file-end cut against accuracy: sizes 1..N by the method
with ``packet.RELATIVE_TAIL_EPS_RATIO`` (the file ends' cut as a fraction of eps: 1e-3,
the default, is an absolute 1e-8 at eps = 1e-5) set to each of the given ratios, beside
the level DP, on the cells where the cut matters most (a large first window at p = 0.2:
the losses it leaves out wait for backed-off timers) and one where it does not.

Usage::

    python validation/packet/relative_tail_cut.py 1e-3 1e-2 1e-1

Prints a line per cell: the level DP's E[T] at the compared sizes, then per ratio the CPU
seconds of the call and E[T] with its difference from the level DP and the dropped mass.
relative_tail_cut.txt holds its output (2026-11-29).
"""

from __future__ import annotations

import sys
import time

from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant

CELLS = [("lt", 1, 10, 0.2, [10, 20]), ("newreno", 1, 2, 0.05, [20]),
         ("proposal", 2, 10, 0.2, [20])]


def main() -> None:
    ratios = [float(x) for x in sys.argv[1:]] or [PM.RELATIVE_TAIL_EPS_RATIO]
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], method="relative")  # compile
    for v, b, w0, p, sizes in CELLS:
        prm = apply_variant(TcpParams(p=p, b=b, w0=w0), v)
        ref = PM.expected_latency(prm, size_packets=sizes, method="levels")
        line = (f"{v} b={b} W0={w0} p={p} levels "
                + " ".join(f"{r.expected_latency_s:.5f}" for r in ref))
        for ratio in ratios:
            PM.RELATIVE_TAIL_EPS_RATIO = ratio
            t = time.process_time()
            rs = PM.expected_latency(prm, size_packets=list(range(1, max(sizes) + 1)),
                                     method="relative")
            c = time.process_time() - t
            line += f" | {ratio:g}: {c:.1f}s " + " ".join(
                f"{rs[n - 1].expected_latency_s:.5f} "
                f"({100 * (rs[n - 1].expected_latency_s / r.expected_latency_s - 1):+.3f}%, "
                f"dr {rs[n - 1].dropped_mass:.1e})" for n, r in zip(sizes, ref))
        print(line, flush=True)


if __name__ == "__main__":
    main()
