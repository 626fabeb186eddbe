"""Random calls of the public API with adversarial arguments, each in a forked child
under a time and memory guard (tests/test_api_fuzz.py; ``python tests/_api_fuzz.py N``
runs N calls and prints the tally).

Every public callable has a cheap valid call here; a random call replaces one to three
of its arguments with adversarial values (NaN, infinities, 0, negatives, integers beyond
float range, huge floats, wrong types, strings, None), or adds an unknown keyword, or
passes valid but extreme parameters (p close to 1, an hour's round trip, the largest
window). The contract: a result or a :class:`ValueError`, nothing else.

The guard: each call runs in a child forked from a process that has loaded everything
(numba's kernels included), so a call costs a fork, not an import; the child's address
space is capped (:data:`MEMORY_CAP_BYTES` above what it starts with: a ``MemoryError``
is a failure, a call that needed it was not refused up front) and so is its CPU time
(``timeout_s``; the parent kills it after :data:`WALL_FACTOR` times that of wall-clock
time): reported as ``timeout``, not as an exception.
"""

from __future__ import annotations

import math
import os
import pickle
import resource
import select
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

MEMORY_CAP_BYTES = 2 * 2**30
"""Address space a call may add to its child's, bytes (the audit's 2 GB)."""

HUGE_INT = 10**400
ADVERSARIAL = [
    float("nan"), float("inf"), float("-inf"), 0, 0.0, -1, -0.5, -(10**400), HUGE_INT, 2**64, 2**64 + 1,
    2**63, 1e308, -1e308, 1.7976931348623157e308, 5e-324, True, False, None, "3", "", "nan", [], [1, "a"],
    [float("nan")], {}, (), object(), complex(1, 1), b"x", np.float64("nan"), np.int64(2**62),
    np.array([]), np.array([[1.0, 2.0]]), [10**400], [2**64], [1e308, 1e308],
]
"""Values no parameter of the API accepts as they are (or accepts only at an extreme)."""

UNKNOWN_KEYWORDS = ["bogus", "p90", "law", "stack", "eps", "method", "time_model", "options", "seed",
                    "sizes", "size", "rng", "path", "rtt", "quick"]
"""Keywords a caller may mistype or pass to the wrong function."""


def _tcp(**kw):
    from latency_model import TcpParams
    return TcpParams(**kw)


def _extreme_params():
    """Valid but extreme parameters: their calls must be refused with an estimate or finish."""
    from latency_model import TcpParams
    return [TcpParams(p=0.999999), TcpParams(rtt_s=3600.0, p=0.5), TcpParams(p=0.9, rto_s=3600.0),
            TcpParams(mss_bytes=1, rwnd=2**30, w_ss=2**30, w0=2**30), TcpParams(p=0.0, rwnd=2**21, w_ss=2**31 - 1),
            TcpParams(p=0.5, w0=1e-300), TcpParams(rtt_s=1e-6, p=0.3), TcpParams(rtt_s=60.0, p=0.5, rto_s=1e-6)]


@dataclass
class Entry:
    """A public callable and one cheap valid call of it."""

    name: str
    func: object
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    params_at: object = None  # position (int) or keyword (str) of a TcpParams argument


_CWD = None  # the children's working directory: relative output paths drawn land there


def entries(tmp: str) -> list[Entry]:
    """Every public callable with a cheap valid call (files under ``tmp``, where the calls
    also run: an output path drawn as ``"3"`` is written there)."""
    global _CWD
    _CWD = tmp
    import latency_model as lm
    from latency_model.experiments import (AssExperiment, BtcpExperiment, ModernExperiment, NgwaExperiment,
                                           SmoothTcpExperiment, run_ass, run_btcp, run_modern, run_ngwa,
                                           run_smoothtcp)
    from latency_model.model import registry

    P = lm.TcpParams()
    E = Entry
    out = [
        E("TcpParams", lm.TcpParams, (), dict(mss_bytes=500, rtt_s=0.1, p=0.1, w0=2.0, w_ss=30.0, rwnd=30.0, b=1,
                                              dup_t=3, dup_lt=2, rto_s=1.0)),
        E("TcpParams.replace", lambda **kw: P.replace(**kw), (), dict(p=0.2, w0=4.0)),
        E("apply_variant", lm.apply_variant, (P, "size-based"), dict(size_bytes=5000.0, size_threshold_bytes=1e4),
          params_at=0),
        E("initial_window_bytes", lm.initial_window_bytes, ("rfc3390", 1000)),
        E("StandardRule", lm.StandardRule, (), {}),
        E("make_rule", lm.make_rule, ("generalized",), dict(a=1.5)),
        E("y_f", lm.y_f, (P, [4.0, 8.0]), dict(w0=2.0, w_ss=30.0, time_model="fluid"), params_at=0),
        E("l0", lm.l0, (P, [1000.0, 4000.0]), dict(w0=None, w_ss=None, time_model="rounds"), params_at=0),
        E("w_f", lm.w_f, (P, [1000.0]), dict(time_model="fluid"), params_at=0),
        E("y_to", lm.y_to, (P,), dict(w0=2.0, time_model="fluid"), params_at=0),
        E("filesize_min", lm.filesize_min, (P,), dict(w_ss=30.0), params_at=0),
        E("loss_count_pmf", lm.loss_count_pmf, ([1000.0, 5000.0], 0.1, 500), dict(law="paper", normalize=True,
                                                                                   tail=1e-9)),
        E("SolverOptions", lm.SolverOptions, (), dict(time_model="fluid", panels=4, nodes=2, window_points=8)),
        E("conditional_latency", lm.conditional_latency, (P,), dict(k=[0, 1], size_packets=[2, 5]), params_at=0),
        E("expected_latency", lm.expected_latency, (P,), dict(size_packets=[1, 3], law="paper", tail=1e-6),
          params_at=0),
        E("conditional_latency_direct", lm.conditional_latency_direct, (P, 2000.0, 1), dict(epsrel=1e-4),
          params_at=0),
        E("SimConfig", lm.SimConfig, (), dict(link_rate_bps=1e7, p_ack=0.0, min_rto_s=1.0)),
        E("run_transfer", lm.run_transfer, (P,), dict(size_packets=5, rng=np.random.default_rng(1)), params_at=0),
        E("run_many", lm.run_many, (P, 5000, [1, 2, 3]), dict(engine="auto", batch_size=2), params_at=0),
        E("simulate", lm.simulate, (P,), dict(size_packets=[2, 5], runs=20, seed=1, workers=1), params_at=0),
        E("single_loss", lm.single_loss, (P,), dict(size_packets=4), params_at=0),
        E("grid_from_items", lm.grid_from_items, (["p=0.05,0.1", "size-packets=1:3"],), {}),
        E("grid_from_dict", lm.grid_from_dict, ({"p": [0.05, 0.1], "size_packets": range(1, 3)},), {}),
        E("evaluate_points", lm.evaluate_points, ([{"p": 0.05, "size_packets": 2}, {"p": 0.1, "size_packets": 3}],),
          dict(what="model", jobs=1)),
        E("SweepSpec", lambda **kw: lm.SweepSpec(lm.grid_from_items(["size-packets=1:2"]), **kw), (),
          dict(what="model", runs=10, seed=0, model_chunk=10)),
        E("run_sweep", lambda *a, **kw: lm.run_sweep(lm.SweepSpec(lm.grid_from_items(["size-packets=1:2"])),
                                                     *a, **kw), (os.path.join(tmp, "sweep.csv"),),
          dict(jobs=1, force=True, flush_interval_s=1.0)),
        E("run_reproduction", lm.run_reproduction, (os.path.join(tmp, "repro"),),
          dict(quick=True, jobs=1, progress=False, stack="rfc")),
        E("BtcpExperiment", BtcpExperiment, (), dict(scale=0.01, seeds=2, flows_per_node=2, nodes=2)),
        E("NgwaExperiment", NgwaExperiment, (), dict(scale=0.01, rounds=1, sources=1)),
        E("SmoothTcpExperiment", SmoothTcpExperiment, (), dict(scale=0.01, flows=2, queue_packets=20)),
        E("AssExperiment", AssExperiment, (), dict(scale=0.01, queues=(5,), algorithms=(1,), initial_windows=(1,),
                                                   bottlenecks_mbps=(0.3,))),
        E("ModernExperiment", ModernExperiment, (), dict(variants=("newreno",), iw_packets=(2,), ps=(0.1,),
                                                         sizes_packets=(2,), runs=2)),
        E("run_btcp", lambda **kw: run_btcp(BtcpExperiment(**kw)), (),
          dict(scale=0.005, seeds=2, flows_per_node=1, nodes=1, variants=("newreno",))),
        E("run_ngwa", lambda **kw: run_ngwa(NgwaExperiment(**kw)), (), dict(scale=0.005, rounds=1,
                                                                            variants=("newreno",))),
        E("run_smoothtcp", lambda **kw: run_smoothtcp(SmoothTcpExperiment(**kw)), (),
          dict(scale=0.005, flows=2, rules=("standard",))),
        E("run_ass", lambda **kw: run_ass(AssExperiment(**kw)), (),
          dict(scale=0.01, queues=(5,), algorithms=(1,), initial_windows=(1,), bottlenecks_mbps=(0.3,))),
        E("run_modern", lambda **kw: run_modern(ModernExperiment(**kw)), (),
          dict(variants=("newreno",), iw_packets=(2,), ps=(0.1,), sizes_packets=(2,), runs=2)),
    ]
    for model in registry.available_models():
        kw = {"fluid": dict(law="paper"), "packet": dict(eps=1e-6, k_max=2), "csa": dict(delack_s=0.1),
              "pftk": {}}.get(model, {})
        out.append(E(f"predict[{model}]", registry.predict, (model, P, [500.0, 1500.0]), kw, params_at=1))
    return out


def random_call(entry: Entry, rng: np.random.Generator, extreme: list):
    """``(args, kwargs, what)``: the entry's valid call with one to three arguments made bad."""
    args, kwargs = list(entry.args), dict(entry.kwargs)
    slots = [("a", i) for i in range(len(args))] + [("k", k) for k in kwargs]
    what = []
    roll = rng.random()
    if roll < 0.12:
        key = UNKNOWN_KEYWORDS[rng.integers(len(UNKNOWN_KEYWORDS))]
        kwargs[key] = 1
        what.append(f"+{key}=1")
    elif roll < 0.24 and entry.params_at is not None:
        value = extreme[rng.integers(len(extreme))]
        if isinstance(entry.params_at, int):
            args[entry.params_at] = value
        else:
            kwargs[entry.params_at] = value
        what.append(f"params={_short(value)}")
    elif slots:
        for i in rng.choice(len(slots), size=min(len(slots), 1 + rng.integers(3)), replace=False):
            kind, key = slots[i]
            value = ADVERSARIAL[rng.integers(len(ADVERSARIAL))]
            if kind == "a":
                args[key] = value
            else:
                kwargs[key] = value
            what.append(f"{key}={_short(value)}")
    else:
        key = UNKNOWN_KEYWORDS[rng.integers(len(UNKNOWN_KEYWORDS))]
        kwargs[key] = ADVERSARIAL[rng.integers(len(ADVERSARIAL))]
        what.append(f"+{key}")
    return tuple(args), kwargs, ", ".join(what)


def _short(value) -> str:
    text = repr(value)
    if hasattr(value, "p") and hasattr(value, "rtt_s"):
        text = f"TcpParams(p={value.p}, rtt_s={value.rtt_s}, rwnd={value.rwnd:g}, w0={value.w0:g}, ...)"
    return text if len(text) < 60 else text[:57] + "..."


TIME_LIMIT = "20"
"""The child's ``LATENCY_MODEL_TIME_LIMIT``: a call estimated over 20 s is refused up front, so
a valid but heavy call costs the test little; the guard's ``timeout_s`` (a few times this:
the estimates are rough) catches a call that runs away without an estimate."""

MEMORY_LIMIT = "2G"
"""The child's ``LATENCY_MODEL_MEMORY_LIMIT`` (the estimates count the process, 400 MB)."""


WALL_FACTOR = 10.0
"""The parent kills a child after this many times ``timeout_s`` of wall-clock time (a
backstop; the child's own limit is ``timeout_s`` of CPU)."""


def guarded(func, args, kwargs, timeout_s: float) -> tuple[str, str, float]:
    """Run ``func(*args, **kwargs)`` in a forked child under :data:`TIME_LIMIT` and
    :data:`MEMORY_LIMIT`: ``(outcome, message, seconds)`` with outcome ``"ok"``,
    ``"ValueError"`` (or a subclass), another exception's class name, ``"timeout"`` or
    ``"killed"``."""
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: run the call, report one pickled line, leave without cleanup
        os.close(r)
        try:
            with open("/proc/self/statm") as fh:
                vm = int(fh.read().split()[0]) * resource.getpagesize()
            resource.setrlimit(resource.RLIMIT_AS, (vm + MEMORY_CAP_BYTES, vm + MEMORY_CAP_BYTES))
            cpu = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime + math.ceil(timeout_s))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # CPU, not wall: the machine is shared
            os.environ["LATENCY_MODEL_TIME_LIMIT"] = TIME_LIMIT
            if _CWD is not None:
                os.chdir(_CWD)
            os.environ["LATENCY_MODEL_MEMORY_LIMIT"] = MEMORY_LIMIT
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            try:
                func(*args, **kwargs)
                result = ("ok", "")
            except BaseException as exc:  # noqa: BLE001 - the kind is the measurement
                kind = "ValueError" if isinstance(exc, ValueError) else type(exc).__name__
                result = (kind, f"{type(exc).__name__}: {exc}"[:300])
            os.write(w, pickle.dumps(result))
        finally:
            os._exit(0)
    os.close(w)
    ready, _, _ = select.select([r], [], [], WALL_FACTOR * timeout_s)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
        return "timeout", f"over {timeout_s:g} s", time.monotonic() - t0
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    seconds = time.monotonic() - t0
    if not chunks:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
            return "timeout", f"over {timeout_s:g} s of CPU", seconds
        return "killed", f"status {status}", seconds
    outcome, message = pickle.loads(b"".join(chunks))
    return outcome, message, seconds


def warm() -> None:
    """Load every compiled kernel in this process, so each forked child has them."""
    import latency_model as lm
    from latency_model.model import registry

    for model in registry.available_models():
        registry.warm(model)
    lm.simulate(lm.TcpParams(p=0.1), size_packets=[3], runs=4, seed=0)
    for stack in ("rfc", "ns3", "linux"):
        lm.run_many(lm.TcpParams(p=0.1), 2000, [1, 2], lm.SimConfig.profile(stack))


@dataclass
class Tally:
    calls: int = 0
    outcomes: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)  # (entry, what, outcome, message)
    slow: list = field(default_factory=list)

    def add(self, entry: str, what: str, outcome: str, message: str, seconds: float) -> None:
        self.calls += 1
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        if outcome == "timeout":
            self.slow.append((entry, what, seconds))
        elif outcome not in ("ok", "ValueError"):
            self.failures.append((entry, what, outcome, message))


def run_calls(n: int, seed: int, timeout_s: float, tally: Tally | None = None) -> Tally:
    """``n`` random calls (seed ``seed``), each guarded by ``timeout_s``."""
    tally = tally or Tally()
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        table = entries(tmp)
        extreme = _extreme_params()
        for _ in range(n):
            entry = table[rng.integers(len(table))]
            args, kwargs, what = random_call(entry, rng, extreme)
            outcome, message, seconds = guarded(entry.func, args, kwargs, timeout_s)
            tally.add(entry.name, what, outcome, message, seconds)
    return tally


if __name__ == "__main__":  # python tests/_api_fuzz.py N [seed] [timeout_s], from the repository root
    sys.path.insert(0, os.getcwd())
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    warm()
    t0 = time.time()
    tally = run_calls(n, seed, timeout)
    print(f"{tally.calls} calls in {time.time() - t0:.0f} s: {tally.outcomes}")
    for f in tally.failures:
        print("FAIL", *f, sep=" | ")
    for s in tally.slow:
        print("SLOW", *s, sep=" | ")
    sys.exit(1 if tally.failures else 0)
