"""Timing of the packet-level model (latency_model.model.packet), issue 18's speed targets.

Usage::

    .venv/bin/python benchmarks/bench_packet.py [--max-packets 1000] [--p 0.01 0.2]
        [--variants proposal] [--b 1] [--w0 10] [--eps 1e-6] [--max-states 2000]
    .venv/bin/python benchmarks/bench_packet.py --map [--p 0.01 0.1] [--variants newreno]
    .venv/bin/python benchmarks/bench_packet.py --method tree --max-packets 20
    .venv/bin/python benchmarks/bench_packet.py --map-as-run [--jobs 2] [--models packet fluid] [--together]
    .venv/bin/python benchmarks/bench_packet.py --stack linux --max-packets 12 --p 0.05 [--w0 10] [--b 1]

Default: one ``expected_latency`` call for sizes 1..max_packets by the relative-state
method (``--method relative``: one forward pass for all sizes) at p = 0.01, 0.05, 0.1,
0.2 (b = 2, W0 = 2, NewReno: the first of ``--variants``); prints CPU seconds (process
time: this VM is shared, wall time varies), the truncated and lumped masses, the distinct
relative states and E[T] at a few sizes (with ``--method relative`` a second line: full
kernels, the largest level, the file ends' memo, the store's compactions and the CPU
split), and beside it the compiled simulator's CPU
seconds for one size of 100 packets at 20,000 runs (``--no-sim``: not run). With
``--method levels`` the level DP's line: the level where its distribution became
stationary (sizes beyond it are extrapolated) and the folded mass.
The numba kernels are compiled (or loaded from numba's cache) before the clock starts.
Every line ends with the process's peak resident memory so far (``getrusage``), so one
call alone (``--p 0.2 --w0 10 --b 1 --max-packets 40``) measures its peak.

``--stack rfc|ns3|linux``: the model on the simulator's own transitions (``config=`` the
profile, its W0 and rule unless ``--w0`` is given: Linux's 10 and CUBIC), one call for
sizes 1..max_packets, beside the simulator with the same profile at the largest size
(20,000 runs); also the level states, the truncation's bound and E[T] at every size shown.

``--map``: the accuracy map's model side, one call per (variant, b, p) with sizes 1..40,
60, 100, 200 (issue 18: the whole map in < 10 s); prints each call's CPU time and the
total, so a partial run (``--p``, ``--variants``) can be scaled to the whole map.

``--map-as-run``: the default accuracy map's model side as ``latency-model accuracy`` and
``reproduce`` run it (``studies.accuracy._predictions``: one call per model and
parameter set with the sizes up to each model's cap, on ``--jobs`` processes, each call
in a forked child, nothing cached); prints per model the wall time, the CPU time of the
children and of this process, and a hash of the values (equal hashes: equal values).
With ``--together`` the models' calls share the processes, as the map runs them (one line,
the hash per model).
"""

from __future__ import annotations

import argparse
import time

from latency_model.model import packet as PM
from latency_model.model._packet_levels import peak_resident_bytes
from latency_model.params import TcpParams, apply_variant

MAP_SIZES = list(range(1, 41)) + [60, 100, 200]


def peak() -> str:
    """The process's peak resident memory so far, in words."""
    return f"peak {peak_resident_bytes() / 2**30:.2f} GiB"


SHOW = (10, 20, 40, 100, 200, 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-packets", type=int, default=1000)
    ap.add_argument("--method", choices=("relative", "levels", "tree"), default="relative")
    ap.add_argument("--eps-state", type=float, default=None,
                    help="method relative: eps_state (default: the model's)")
    ap.add_argument("--light-tier", type=int, default=None,
                    help="method relative: lump unshared light states among themselves by this "
                         "signature tier (default: the model's, -1: none)")
    ap.add_argument("--no-sim", action="store_true",
                    help="do not time the simulator beside each p (100 packets, 20,000 runs)")
    ap.add_argument("--max-states", type=int, default=None,
                    help="max_states (default: the model's)")
    ap.add_argument("--map", action="store_true", help="the accuracy map's model side")
    ap.add_argument("--p", type=float, nargs="+", default=None)
    ap.add_argument("--b", type=int, nargs="+", default=None, help="ACK ratios (map: 1 2; else 2)")
    ap.add_argument("--variants", nargs="+", default=["newreno", "lt", "proposal"])
    ap.add_argument("--w0", type=float, default=None, help="initial window, packets (2; --stack: the profile's)")
    ap.add_argument("--stack", choices=("rfc", "ns3", "linux"), default=None,
                    help="the model on the simulator's transitions, this profile (and the simulator beside it)")
    ap.add_argument("--eps", type=float, default=None, help="eps (default: the model's)")
    ap.add_argument("--map-as-run", action="store_true",
                    help="the default accuracy map's model side as `accuracy` runs it")
    ap.add_argument("--jobs", type=int, default=2, help="--map-as-run: processes (2)")
    ap.add_argument("--models", nargs="+", default=["packet"], help="--map-as-run: models (packet)")
    ap.add_argument("--together", action="store_true",
                    help="--map-as-run: the models' calls on the same processes, as the map runs them")
    a = ap.parse_args()
    if a.stack is not None:
        for p in a.p or [0.01, 0.05, 0.1]:
            for b in a.b or [1]:
                on_stack(a, p, b)
        return
    a.w0 = 2.0 if a.w0 is None else a.w0
    if a.map_as_run:
        for models in [a.models] if a.together else [[m] for m in a.models]:
            map_as_run(models, a.jobs)
        return
    kw = {"method": a.method}
    if a.max_states is not None:
        kw["max_states"] = a.max_states
    if a.eps is not None:
        kw["eps"] = a.eps
    if a.eps_state is not None:
        kw["eps_state"] = a.eps_state
    if a.light_tier is not None:
        from latency_model.model import _packet_relative as RS

        RS.LIGHT_TIER = a.light_tier
    PM.expected_latency(TcpParams(p=0.1), size_packets=[3], **kw)  # compile / load kernels
    if not a.no_sim:
        sim_time(TcpParams(p=0.1), 3, 100)  # compile / load the simulator
    if a.map:
        total = 0.0
        cells = 0
        for variant in a.variants:
            for b in a.b or [1, 2]:
                for p in a.p or [0.01, 0.02, 0.05, 0.1, 0.2]:
                    prm = apply_variant(TcpParams(p=p, b=b, w0=a.w0), variant)
                    t = time.process_time()
                    res = PM.expected_latency(prm, size_packets=MAP_SIZES, **kw)
                    dt = time.process_time() - t
                    total += dt
                    cells += len(MAP_SIZES)
                    print(f"{variant:8s} b={b} p={p:<5}: {dt:7.2f} s CPU, E[T] at 200 packets "
                          f"{res[-1].expected_latency_s:.4f} s, folded "
                          f"{res[-1].aggregated_mass:.3f}; {peak()}", flush=True)
        print(f"map: {cells} cells, {total:.1f} s CPU")
        return
    sizes = list(range(1, a.max_packets + 1))
    for p in a.p or [0.01, 0.05, 0.1, 0.2]:
        for b in a.b or [2]:  # the table of docs/model.md 5.2: b = 2
            one(a, kw, sizes, p, b)


def on_stack(a, p: float, b: int) -> None:
    """``--stack``: one call of the model on the simulator's transitions for sizes
    1..max_packets, the simulator beside it at the largest size."""
    from latency_model.sim import SimConfig
    from latency_model.sim.profiles import profile_params

    config = SimConfig.profile(a.stack)
    given = ("b",) if a.w0 is None else ("b", "w0")
    prm = profile_params(a.stack, TcpParams(p=p, b=b, w0=2.0 if a.w0 is None else a.w0), given=given)
    sizes = list(range(1, a.max_packets + 1))
    PM.expected_latency(prm.replace(p=0.1), size_packets=[3], config=config)  # compile / load kernels
    t = time.process_time()
    try:
        res = PM.expected_latency(prm, size_packets=sizes, config=config)
    except ValueError as exc:  # a memory limit reached (BudgetError)
        print(f"--stack {a.stack} {prm.rule.name} b={b} W0={prm.w0:g} p={p:<5} sizes 1..{a.max_packets}: "
              f"stopped after {time.process_time() - t:.1f} s CPU: {exc}; {peak()}", flush=True)
        return
    dt = time.process_time() - t
    shown = ", ".join(f"{n}: {res[n - 1].expected_latency_s:.4f}" for n in sorted({*SHOW, a.max_packets})
                      if n <= len(res))
    print(f"--stack {a.stack} {prm.rule.name} b={b} W0={prm.w0:g} p={p:<5} sizes 1..{a.max_packets}: "
          f"{dt:7.2f} s CPU; {res[-1].states:,} level states, truncated {res[-1].dropped_mass:.3g}; "
          f"E[T] (s) {shown}; {peak()}", flush=True)
    if not a.no_sim:
        n = a.max_packets
        st, mean, half = sim_time(prm, n, 20000, config)
        print(f"    simulator, {n} packets, 20,000 runs: {st:7.2f} s CPU; E[T] {mean:.4f} +- {half:.4f} s "
              f"(model {res[-1].expected_latency_s:.4f} s)", flush=True)


def sim_time(prm, n: int, runs: int, config=None) -> tuple:
    """CPU seconds of the compiled simulator for one size of ``n`` packets, ``runs`` runs
    (one process; ``config`` by default ``SimConfig()``), and its mean and 95 % CI
    half-width, seconds."""
    from latency_model.sim import SimConfig, simulate

    t = time.process_time()
    r = simulate(prm, size_packets=[n], runs=runs, seed=1, config=SimConfig() if config is None else config,
                 engine="compiled").results[0]
    return time.process_time() - t, r.mean_latency_s, (r.ci95_s[1] - r.ci95_s[0]) / 2


def map_as_run(models: list, jobs: int) -> None:
    """The default map's calls of ``models``, as ``run_accuracy`` makes them, timed."""
    import hashlib
    import resource
    import tempfile

    from latency_model.studies import accuracy as A
    from latency_model.studies.sweep import plan_sweep

    groups = A._groups(plan_sweep(A.DEFAULT_MAP.sweep_spec()))
    missing = A._coverage(A.DEFAULT_MAP, tuple(models), groups)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as cache:
        t, c = time.perf_counter(), time.process_time()
        pred, calls, _, failures = A._predictions(tuple(models), groups, missing, cache, jobs, True, None,
                                                  A.MODEL_MAX_PACKETS, A.DEFAULT_MAP.sim_config)
        wall, own = time.perf_counter() - t, time.process_time() - c
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    kids = kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime
    digests = ", ".join(
        f"{m} {hashlib.sha256(repr(sorted((k, v) for k, v in pred.items() if k[0] == m)).encode()).hexdigest()[:12]}"
        for m in models)
    print(f"{'+'.join(models)}: {calls} calls on {jobs} processes: {wall:.1f} s wall, {kids:.1f} s CPU in the "
          f"calls' processes, {own:.1f} s here; {len(failures)} failed; values {digests}", flush=True)


def one(a, kw, sizes, p, b) -> None:
    """One call for sizes 1..max_packets at loss rate p, ACK ratio b (the first variant)."""
    prm = apply_variant(TcpParams(p=p, b=b, w0=a.w0), a.variants[0])
    stats = {}
    if a.method == "relative":  # the call's own counts (docs/packet-model.md 6)
        from latency_model.model import _packet_relative as RS

        solve = RS.solve
        RS.solve = lambda *args, **k: solve(*args, **{**k, "stats": stats})
    t = time.process_time()
    try:
        res = PM.expected_latency(prm, size_packets=sizes, **kw)
    finally:
        if a.method == "relative":
            RS.solve = solve
    dt = time.process_time() - t
    first = next((r.size_bytes // prm.mss_bytes for r in res if r.extrapolated), None)
    shown = ", ".join(f"{n}: {res[n - 1].expected_latency_s:.4f}" for n in SHOW if n <= len(res))
    extra = (f"truncated {res[-1].dropped_mass:.3g}, lumped {res[-1].aggregated_mass:.3g}, "
             f"{res[-1].states:,} states, extrapolated from {first} packets"
             if a.method == "relative"
             else f"extrapolated from {first} packets; folded {res[-1].aggregated_mass:.3f}")
    print(f"{a.variants[0]} b={b} W0={a.w0:g} p={p:<5} sizes 1..{a.max_packets}: {dt:7.2f} s CPU; "
          f"{extra}; E[T] (s) {shown}; {peak()}", flush=True)
    if stats:
        cpu = ", ".join(f"{k} {v:.1f} s" for k, v in stats["cpu_s"].items())
        print(f"    {stats['full_kernels']:,} full kernels, largest level {max(stats['level_states']):,} "
              f"states, {stats['tail_nodes']:,} file-end nodes in memo at the end "
              f"({stats['tail_hits']:,} memo hits, {stats['tail_recomputed']:,} nodes recomputed "
              f"at more than twice their mass), "
              f"{stats['compactions']} compactions of the store (kept {stats['stored']:,}); {cpu}",
              flush=True)
    if not a.no_sim:
        st, mean, half = sim_time(prm, 100, 20000)
        print(f"    simulator, 100 packets, 20,000 runs: {st:7.2f} s CPU; E[T] {mean:.4f} "
              f"+- {half:.4f} s (model {res[99].expected_latency_s:.4f} s)"
              if len(res) >= 100 else
              f"    simulator, 100 packets, 20,000 runs: {st:7.2f} s CPU; E[T] {mean:.4f} "
              f"+- {half:.4f} s", flush=True)


if __name__ == "__main__":
    main()
