"""Where the relative-state method's time goes: one call for sizes 1..N (NewReno, b = 2,
W0 = 2, the method's defaults unless given), the CPU seconds of each compiled entry point,
the file ends' memo (nodes entered fresh, hits, recomputations at more than twice their
mass) and, per level, the states, the light ones, the states whose file end was computed
(all, heavy, heavy recomputed because their mass doubled), the nodes entered fresh and
the file ends' CPU.

Usage::

    python validation/packet/relative_profile.py --p 0.05 --max-packets 300
        [--memo-nodes 1048576] [--tail-ratio 1e-3] [--every 20]

``--tail-ratio``: ``packet.RELATIVE_TAIL_EPS_RATIO`` (the file ends' cut as a fraction of
eps); ``--memo-nodes``: ``_packet_relative.MEMO_NODES``. Prints; relative_profile.txt
holds its output at the defaults (p = 0.05, 300 packets; p = 0.01, 150 packets).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, default=0.05)
    ap.add_argument("--max-packets", type=int, default=300)
    ap.add_argument("--memo-nodes", type=int, default=None)
    ap.add_argument("--tail-ratio", type=float, default=None)
    ap.add_argument("--every", type=int, default=20, help="print every this many levels")
    a = ap.parse_args()
    from latency_model.model import _packet_relative as RS
    from latency_model.model import packet as PM
    from latency_model.params import TcpParams, apply_variant

    if a.tail_ratio is not None:
        PM.RELATIVE_TAIL_EPS_RATIO = a.tail_ratio
    if a.memo_nodes is not None:
        RS.MEMO_NODES = a.memo_nodes
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], method="relative")  # compile
    k = RS.kernels(True)
    cpu = {}
    log = []

    def timed(name):
        f = getattr(k, name)

        def run(*args):
            t = time.process_time()
            f(*args)
            cpu[name] = cpu.get(name, 0.0) + time.process_time() - t
        return run

    for name in ("expand_level", "propagate", "finish", "mark_light", "lump"):
        setattr(k, name, timed(name))
    tails = k.tails

    def logged_tails(*args):
        ids, LP, light, n, TM, done, ncnt = (args[5], args[6], args[7], args[8], args[16],
                                            args[17], args[26])
        mass = LP[:n].sum(axis=1)
        s = ids[:n]
        need = ~(((done[s] == 1) & (mass <= 2 * TM[s])) | ((done[s] == 2) & light[:n]))
        heavy = need & ~light[:n]
        again = heavy & (done[s] == 1)
        c0 = int(ncnt[0])
        t = time.process_time()
        tails(*args)
        dt = time.process_time() - t
        cpu["tails"] = cpu.get("tails", 0.0) + dt
        log.append((n, int(light[:n].sum()), int(need.sum()), int(heavy.sum()),
                    int(again.sum()), max(int(ncnt[0]) - c0, 0), dt))
    k.tails = logged_tails
    stats = {}
    solve = RS.solve
    RS.solve = lambda *args, **kw: solve(*args, **{**kw, "stats": stats})
    prm = apply_variant(TcpParams(p=a.p, b=2, w0=2), "newreno")
    t = time.process_time()
    res = PM.expected_latency(prm, size_packets=list(range(1, a.max_packets + 1)),
                              method="relative")
    total = time.process_time() - t
    L = np.array(log)
    print(f"NewReno b=2 W0=2 p={a.p:g} sizes 1..{a.max_packets}: {total:.1f} s CPU; "
          + ", ".join(f"{n} {v:.1f} s" for n, v in sorted(cpu.items()))
          + f", the rest {total - sum(cpu.values()):.1f} s")
    print(f"  states {stats['states']:,}, full kernels {stats['full_kernels']:,}; file ends: "
          f"{int(L[:, 3].sum()):,} heavy tails ({int(L[:, 4].sum()):,} recomputed at doubled "
          f"mass), {int(L[:, 5].sum()):,} nodes entered fresh, {stats['tail_hits']:,} memo hits, "
          f"{stats['tail_recomputed']:,} nodes recomputed at more than twice their mass")
    print("  level: states, light, tails computed (heavy, heavy recomputed), fresh nodes, "
          "file ends' CPU s")
    for i in range(0, len(L), a.every):
        n, nl, need, hv, rc, nodes, dt = L[i]
        print(f"  {i:5d}: {int(n):6d} {int(nl):6d} {int(need):6d} ({int(hv)}, {int(rc)}) "
              f"{int(nodes):9d} {dt:.3f}")
    for n in (10, 100, a.max_packets):
        r = res[n - 1]
        print(f"  E[T({n})] = {r.expected_latency_s:.6f} s, dropped {r.dropped_mass:.3g}")


if __name__ == "__main__":
    main()
