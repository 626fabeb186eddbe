"""The compiled seeding of the simulator's runs (latency_model/sim/_seeding.py) gives
numpy's own uniforms bit for bit: ``Generator(PCG64(child)).random(k)``.

Every comparison is exact equality (``np.array_equal`` on float64): the compiled path is an
integer transcription of numpy's SeedSequence.generate_state, PCG64 seeding and XSL-RR
output plus one exact conversion ``(x >> 11) * 2**-53``, so any difference is a bug, not
rounding. numpy itself is the independent reference; the 128-bit halves are also checked
against Python's unbounded integers.
"""

import dataclasses

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_many
from latency_model.sim import _seeding as S
from latency_model.sim import kernel as K
from latency_model.sim.kernel import block_size
from latency_model.sim.runner import _python_row, pack_params

needs_numba = pytest.mark.skipif(S.compiled_fill() is None, reason="numba not installed")

BIG = 1234567890123456789012345678901234567890  # 5 uint32 words: longer than the pool


def numpy_uniforms(children, k):
    return np.array([np.random.Generator(np.random.PCG64(c)).random(k) for c in children]
                    ).reshape(len(children), k)


def fast_uniforms(children, k):
    out = np.empty((len(children), k))
    S.fill_uniforms(children, out)
    return out


@needs_numba
@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**32 - 1, 2**32, 2**63 + 5, 2**64 - 1,
                                  2**127 + 3, BIG, 3**200])
def test_spawned_children_match_numpy(seed):
    children = np.random.SeedSequence(seed).spawn(40)
    assert S.entropy_pools(children) is not None  # the compiled path runs
    assert np.array_equal(fast_uniforms(children, 104), numpy_uniforms(children, 104))


@needs_numba
@pytest.mark.parametrize("k", [1, 2, 3, 7, 104, 1000, 5000])
def test_every_block_length_matches_numpy(k):
    children = np.random.SeedSequence(2024).spawn(6)
    assert np.array_equal(fast_uniforms(children, k), numpy_uniforms(children, k))


@needs_numba
def test_zero_length_block_and_no_children():
    children = np.random.SeedSequence(5).spawn(3)
    assert fast_uniforms(children, 0).shape == (3, 0)
    assert fast_uniforms([], 10).shape == (0, 10)


@needs_numba
def test_spawn_keys_of_length_one_to_three_match_numpy():
    root = np.random.SeedSequence(99)
    depth1 = root.spawn(5)  # spawn keys (i,)
    depth2 = [g for c in depth1[:3] for g in c.spawn(4)]  # (i, j)
    depth3 = [g for c in depth2[:4] for g in c.spawn(3)]  # (i, j, l)
    assert {len(c.spawn_key) for c in depth1 + depth2 + depth3} == {1, 2, 3}
    for children in (depth1, depth2, depth3, depth1 + depth2 + depth3):
        assert np.array_equal(fast_uniforms(children, 300), numpy_uniforms(children, 300))


@needs_numba
def test_explicit_entropy_and_spawn_keys_match_numpy():
    SS = np.random.SeedSequence
    children = [
        SS(BIG, spawn_key=(3,)),
        SS(BIG, spawn_key=(2**40 + 1, 7, 2**70)),  # spawn-key words wider than 32 bits
        SS([1, 2**40, 3]),  # entropy as a sequence
        SS([5, 6, 7, 8, 9, 10, 11], spawn_key=(1, 2)),
        SS(np.array([1, 2, 3], dtype=np.uint32)),
        SS(0, spawn_key=()),
        SS(17, spawn_key=(0, 0, 0)),
        SS(17, spawn_key=(4,), n_children_spawned=12),  # spawn count does not enter the stream
        SS(),  # fresh OS entropy
    ]
    assert S.entropy_pools(children) is not None
    assert np.array_equal(fast_uniforms(children, 500), numpy_uniforms(children, 500))


@needs_numba
def test_non_default_pool_size_matches_numpy():
    eight = np.random.SeedSequence(11, pool_size=8).spawn(10)
    assert S.entropy_pools(eight).shape == (10, 8)
    assert np.array_equal(fast_uniforms(eight, 200), numpy_uniforms(eight, 200))
    mixed = eight[:3] + np.random.SeedSequence(11).spawn(3)  # two pool sizes: numpy's path
    assert S.entropy_pools(mixed) is None
    assert np.array_equal(fast_uniforms(mixed, 200), numpy_uniforms(mixed, 200))


class _MySeq(np.random.SeedSequence):
    def generate_state(self, n_words, dtype=np.uint32):
        return np.arange(1, n_words + 1, dtype=dtype)  # ignores the pool: must not be emulated


def test_other_seed_kinds_take_numpys_path():
    children = [_MySeq(1), 5, np.random.SeedSequence(2)]
    assert S.entropy_pools(children) is None
    assert np.array_equal(fast_uniforms(children, 50), numpy_uniforms(children, 50))


def test_without_numba_numpys_path_gives_the_same(monkeypatch):
    children = np.random.SeedSequence(8).spawn(5)
    monkeypatch.setattr(S, "compiled_fill", lambda: None)
    assert np.array_equal(fast_uniforms(children, 64), numpy_uniforms(children, 64))


@needs_numba
def test_seeded_pcg64_state_matches_numpy():
    # Steps 2-3 alone: the 128-bit state and increment PCG64(child) starts from.
    children = np.random.SeedSequence(31).spawn(20) + [np.random.SeedSequence(BIG, spawn_key=(1, 2, 3))]
    states = np.empty((len(children), 4), np.uint64)
    S.compiled_fill()(S.entropy_pools(children), np.empty((len(children), 0)), states)
    for c, st in zip(children, states):
        ref = np.random.PCG64(c).state["state"]
        assert (int(st[0]) << 64 | int(st[1])) == ref["state"]
        assert (int(st[2]) << 64 | int(st[3])) == ref["inc"]


@pytest.mark.parametrize("x, y", [(0, 0), (2**64 - 1, 2**64 - 1), (2**64 - 1, 1), (2**32, 2**32),
                                  (0x2360ED051FC65DA4, 0x4385DF649FCCF645), (2**63, 3)])
def test_128_bit_halves_match_python_integers(x, y):
    # The transcription of numpy's emulated 128-bit math, run uncompiled on uint64 scalars,
    # against exact integers; the compiled kernel runs the same code.
    with np.errstate(over="ignore"):
        hi, lo = S._mul64(np.uint64(x), np.uint64(y))
        assert (int(hi) << 64 | int(lo)) == x * y
        s_hi, s_lo = S._step(np.uint64(x), np.uint64(y), np.uint64(2**64 - 1), np.uint64(2**64 - 1))
    mult = 0x2360ED051FC65DA44385DF649FCCF645
    expect = ((x << 64 | y) * mult + (2**128 - 1)) % 2**128
    assert (int(s_hi) << 64 | int(s_lo)) == expect


def test_fill_uniforms_rejects_bad_output_arrays():
    children = np.random.SeedSequence(1).spawn(3)
    with pytest.raises(ValueError, match="out must be"):
        S.fill_uniforms(children, np.empty((3, 4), np.float32))
    with pytest.raises(ValueError, match="out must be"):
        S.fill_uniforms(children, np.empty((4, 3)).T)  # not C-contiguous
    with pytest.raises(ValueError, match="out must be"):
        S.fill_uniforms(children, np.empty(12))
    with pytest.raises(ValueError, match="one row per child"):
        S.fill_uniforms(children, np.empty((2, 4)))


# --- run_many: outputs unchanged -------------------------------------------------------

PARAMS = TcpParams(mss_bytes=500, rtt_s=0.1, p=0.1, w0=2, w_ss=30, rwnd=30, b=1)


def old_run_many(params, size_bytes, children, config, batch_size):
    """run_many's compiled branch as it was: numpy's Generator per child, then the kernel."""
    PI, PF = pack_params(params, size_bytes, config)
    k0 = block_size(int(PI[K.P_N]), params.p, config.p_ack)
    out = np.zeros((len(children), K.N_OUT))
    for lo in range(0, len(children), batch_size):
        chunk = children[lo:lo + batch_size]
        U = np.empty((len(chunk), k0))
        for j, child in enumerate(chunk):
            U[j] = np.random.Generator(np.random.PCG64(child)).random(k0)
        status = np.zeros(len(chunk), np.int64)
        K.compiled_run_batch()(U, PI, PF, out[lo:lo + len(chunk)], status)
        for j in np.flatnonzero(status):
            out[lo + j] = _python_row(params, size_bytes, config, chunk[j])
    return out


@needs_numba
@pytest.mark.parametrize("stack, p, p_ack", [("rfc", 0.1, 0.0), ("ns3", 0.1, 0.0),
                                             ("linux", 0.1, 0.0), ("linux", 0.05, 0.05),
                                             ("rfc", 0.6, 0.0)])
def test_run_many_compiled_outputs_unchanged(stack, p, p_ack):
    config = SimConfig.profile(stack, link_rate_bps=100e6, delay_s=0.05, p_ack=p_ack)
    params = dataclasses.replace(PARAMS, p=p)
    children = np.random.SeedSequence(17).spawn(300)
    new = run_many(params, size_bytes=40 * 500, children=children, config=config,
                   engine="compiled", batch_size=128)
    old = old_run_many(params, 40 * 500, children, config, batch_size=128)
    assert np.array_equal(new, old)
    # ... and both equal the engine interpreted (a subset: it is slower).
    ref = run_many(params, size_bytes=40 * 500, children=children[:40], config=config,
                   engine="python")
    assert np.array_equal(new[:40], ref)
