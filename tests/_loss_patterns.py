"""Random loss patterns for the packet model's engine tests (scripted paths against the
simulator, the flat engine against the object engine): every variant, b = 1, 2, W0 1..10,
rwnd 4/10/30, W_SS 3/30, short last segments, up to 5 segments lost up to 3 times each;
and one pattern's latency on the flat engine (:func:`flat_scripted`)."""

from __future__ import annotations

import numpy as np

from latency_model.params import TcpParams, apply_variant

MSS = 500


ALL_VARIANTS = ("newreno", "lt", "proposal", "er")
RACK_VARIANTS = ("newreno", "lt", "proposal", "newreno")
"""For a sender with RACK-TLP, which refuses Early Retransmit (it would not read it): the
fourth trial of each cycle is NewReno's, so the draws stay those of :data:`ALL_VARIANTS`."""


def random_patterns(count: int, seed: int, *, p: float, max_packets: int,
                    rwnds=(4, 10, 30), wide: bool = False, variants=ALL_VARIANTS):
    """``count`` tuples (params, size in bytes, {segment: times lost}), reproducible from
    ``seed``; ``p`` only goes into the parameters (the pattern fixes the losses); rwnd
    drawn from ``rwnds``, W_SS 3 or 30 (``wide``: W_SS = rwnd, so that slow start fills
    a wide window); trial i runs ``variants[i % 4]``."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        var = variants[trial % 4]
        rw = rwnds[int(rng.integers(0, len(rwnds)))]
        w0 = min(int(rng.integers(1, 11)), rw)
        w_ss = rw if wide else (3, 30)[int(rng.integers(0, 2))]
        prm = apply_variant(TcpParams(p=p, b=1 + trial % 2, w0=w0, rwnd=rw, w_ss=w_ss), var)
        n = int(rng.integers(1, max_packets + 1))
        size = n * MSS - (int(rng.integers(0, 400)) if trial % 3 == 0 else 0)
        drops = {int(s): int(rng.integers(1, 4))
                 for s in rng.integers(0, n, size=int(rng.integers(0, 6)))}
        yield prm, size, drops


def flat_scripted(prm, size, drops, cut, path, serial=False, compiled=True):
    """Latency of one loss pattern (``drops``: segment -> times lost) on the flat engine,
    seconds: with ``cut`` stopped at every level and resumed as the level DP runs it;
    ``serial``: the exact time model (else the rounds model)."""
    from latency_model.model import _packet_flat as FL
    from latency_model.model import _packet_levels as LV
    from latency_model.model import packet as PM

    C, CF = PM._flat_consts(prm, path, serial)(size)
    I, F = FL.new_state(C, CF, prm.w0, prm.w_ss)
    lost = np.zeros(int(C[FL.C_N]), np.int64)
    for seg, k in drops.items():
        lost[seg] += k
    return LV.kernels(compiled).scripted(C, CF, I, F, lost, cut)
