"""Per-run uniforms of the compiled engines: numpy's PCG64 stream, seeded from a
``SeedSequence``, reproduced bit for bit in one numba loop over all the runs of a batch.

For a :class:`numpy.random.SeedSequence` ``child``,
``np.random.Generator(np.random.PCG64(child)).random(k)`` costs about 7 us of Python-level
set-up per run (a BitGenerator, a Generator, a uint64 state array), about a fifth of the
compiled engine's whole cost per 40-packet transfer (linux profile, p = 0.1). :func:`fill_uniforms` gives exactly the
same doubles from the children's entropy pools, with the set-up done in compiled code.

The steps, each a transcription of numpy's source (numpy/numpy, ``numpy/random``):

1. ``child.pool``: the uint32 entropy pool ``SeedSequence.__init__`` already mixed from the
   entropy and the spawn key (``mix_entropy`` over ``get_assembled_entropy``; the pool has
   ``pool_size`` words). Reading it, rather than re-mixing the entropy, makes every child of
   the exact class ``SeedSequence`` exact: any entropy (int of any size, sequence, None),
   any spawn key, any ``pool_size``; ``n_children_spawned`` does not enter the stream.
2. ``SeedSequence.generate_state(4, np.uint64)`` (``bit_generator.pyx``): 8 uint32 words,
   word ``i`` from ``pool[i % pool_size]`` hashed with ``hash_const`` starting at
   ``INIT_B = 0x8b51f9dd`` and multiplied by ``MULT_B = 0x58f38ded`` before each use,
   ``w ^= w >> 16``; pairs of words read as little-endian uint64 (low word first).
3. ``PCG64.__init__`` (``_pcg64.pyx``): ``pcg64_set_seed(state=val[0:2], inc=val[2:4])``
   with ``val[0]``, ``val[2]`` the HIGH halves (``pcg64.c``), then
   ``pcg_setseq_128_srandom_r`` (``pcg64.h``): ``state = 0``, ``inc = (initseq << 1) | 1``,
   step, ``state += initstate``, step, where a step is
   ``state = state * 0x2360ed051fc65da44385df649fccf645 + inc`` (mod 2**128).
4. Each draw (``pcg_setseq_128_xsl_rr_64_random_r``): step, then output
   ``rotr64(hi ^ lo, hi >> 58)``; ``Generator.random`` turns it into
   ``(x >> 11) * 2**-53`` (``uint64_to_double`` in ``_common.pxd``, via
   ``random_standard_uniform_fill``).

The 128-bit products use uint64 halves exactly as numpy's ``PCG_EMULATED_128BIT_MATH``
branch does (``pcg128_mult``, ``_pcg_mult64``, ``pcg128_add``). Children of any other class
(a subclass, a seedless or user-defined ``ISeedSequence``) and installs without numba take
numpy's own path, so the result never depends on which path ran.
"""

from __future__ import annotations

import functools

import numpy as np

from ..accel import compile_twin

__all__ = ["fill_uniforms", "entropy_pools", "compiled_fill", "root_seed"]

_M32 = np.uint64(0xFFFFFFFF)
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_SH16 = np.uint64(16)
_SH32 = np.uint64(32)
_SH11 = np.uint64(11)
_SH58 = np.uint64(58)
_SH63 = np.uint64(63)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_C63 = np.uint64(63)
_C64 = np.uint64(64)
# PCG_DEFAULT_MULTIPLIER_HIGH / _LOW (numpy/random/src/pcg64/pcg64.h).
_MUL_HI = np.uint64(2549297995355413924)
_MUL_LO = np.uint64(4865540595714422341)
_TWO_M53 = 1.0 / 9007199254740992.0


def _mul64(x, y):
    """High and low uint64 halves of the 128-bit product ``x * y`` (``_pcg_mult64``)."""
    z0 = x * y
    x0 = x & _M32
    x1 = x >> _SH32
    y0 = y & _M32
    y1 = y >> _SH32
    w0 = x0 * y0
    t = x1 * y0 + (w0 >> _SH32)
    w1 = t & _M32
    w2 = t >> _SH32
    w1 += x0 * y1
    z1 = x1 * y1 + w2 + (w1 >> _SH32)
    return z1, z0


def _step(s_hi, s_lo, i_hi, i_lo):
    """One LCG step ``state * MULT + inc`` mod 2**128 (``pcg_setseq_128_step_r``)."""
    h1 = s_hi * _MUL_LO + s_lo * _MUL_HI
    p_hi, p_lo = _mul64(s_lo, _MUL_LO)
    p_hi = p_hi + h1
    lo = p_lo + i_lo
    carry = _ONE if lo < i_lo else _ZERO
    return p_hi + i_hi + carry, lo


def _seed_row(pool, st):
    """PCG64's state after seeding from one entropy pool: ``st[:] = state hi, state lo,
    inc hi, inc lo`` (``generate_state(4, uint64)``, ``pcg64_set_seed``,
    ``pcg_setseq_128_srandom_r``)."""
    n = pool.shape[0]
    h = _INIT_B
    v0 = _ZERO  # val[0..3] of generate_state(4, np.uint64)
    v1 = _ZERO
    v2 = _ZERO
    v3 = _ZERO
    for i in range(8):
        d = np.uint64(pool[i % n])
        d ^= h
        h = (h * _MULT_B) & _M32
        d = (d * h) & _M32
        d ^= d >> _SH16
        if i % 2 == 1:
            d = d << _SH32
        if i < 2:
            v0 |= d
        elif i < 4:
            v1 |= d
        elif i < 6:
            v2 |= d
        else:
            v3 |= d
    # initstate = (v0, v1), initseq = (v2, v3), high half first.
    i_hi = (v2 << _ONE) | (v3 >> _SH63)
    i_lo = (v3 << _ONE) | _ONE
    s_hi, s_lo = _step(_ZERO, _ZERO, i_hi, i_lo)
    s_lo2 = s_lo + v1
    carry = _ONE if s_lo2 < v1 else _ZERO
    s_hi = s_hi + v0 + carry
    s_hi, s_lo = _step(s_hi, s_lo2, i_hi, i_lo)
    st[0] = s_hi
    st[1] = s_lo
    st[2] = i_hi
    st[3] = i_lo


def _fill(pools, out, states):
    """``out[j, :] = Generator(PCG64(child_j)).random(out.shape[1])`` from the children's
    pools (rows of ``pools``); ``states[j]`` receives run ``j``'s PCG64 state after seeding."""
    for j in range(pools.shape[0]):
        st = states[j]
        _seed_row(pools[j], st)
        s_hi = st[0]
        s_lo = st[1]
        i_hi = st[2]
        i_lo = st[3]
        row = out[j]
        for k in range(out.shape[1]):
            s_hi, s_lo = _step(s_hi, s_lo, i_hi, i_lo)
            x = s_hi ^ s_lo
            rot = s_hi >> _SH58
            x = (x >> rot) | (x << ((_C64 - rot) & _C63))
            row[k] = np.float64(x >> _SH11) * _TWO_M53


@functools.cache
def compiled_fill():
    """The numba-compiled ``_fill(pools, out, states)``, or ``None`` when numba is
    unavailable (or switched off by ``LATENCY_MODEL_NO_NUMBA``). Compiled once per process
    and cached on disk by numba, like the simulator kernels."""
    return compile_twin(globals(), ("_mul64", "_step", "_seed_row"), _fill)


def entropy_pools(children) -> np.ndarray | None:
    """The children's entropy pools as one uint32 array, or ``None`` when the fast path
    does not apply.

    Parameters
    ----------
    children : sequence
        Seeds of the runs.

    Returns
    -------
    ndarray of uint32, shape (len(children), pool_size), or None
        Row ``j`` is ``children[j].pool``. ``None`` unless every child is exactly a
        :class:`numpy.random.SeedSequence` and all share one ``pool_size`` (anything else
        is left to numpy's own path).
    """
    SS = np.random.SeedSequence
    pools = []
    try:
        for c in children:
            if type(c) is not SS:
                return None
            pools.append(c.pool)
    except AttributeError:  # a numpy that no longer exposes the pool: numpy's path
        return None
    if not pools:
        return np.zeros((0, 4), np.uint32)
    n = len(pools[0])
    if n < 1 or any(len(p) != n for p in pools):
        return None
    arr = np.array(pools, dtype=np.uint32)
    return arr if arr.ndim == 2 else None


def fill_uniforms(children, out: np.ndarray) -> None:
    """Fill ``out[j]`` with ``Generator(PCG64(children[j])).random(out.shape[1])``.

    Bit-identical to numpy for every child; the compiled path (see the module docstring)
    runs when numba is available and every child is exactly a ``SeedSequence`` of one
    pool size, numpy's path otherwise.

    Parameters
    ----------
    children : sequence of numpy.random.SeedSequence
        One seed per run (anything ``numpy.random.PCG64`` accepts).
    out : ndarray of float64, shape (len(children), k), C-contiguous, writable
        Receives the uniforms on [0, 1), ``k >= 0`` per run.

    Raises
    ------
    ValueError
        If ``out`` is not a writable C-contiguous 2-D float64 array with one row per child.
    """
    children = list(children)
    if (not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.ndim != 2
            or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError("out must be a writable C-contiguous 2-D float64 array, got "
                         f"{type(out).__name__} {getattr(out, 'dtype', None)} "
                         f"ndim {getattr(out, 'ndim', None)}")
    if out.shape[0] != len(children):
        raise ValueError(f"out must have one row per child ({len(children)}), got {out.shape[0]}")
    fn = compiled_fill()
    pools = entropy_pools(children) if fn is not None else None
    if pools is None:
        for j, child in enumerate(children):
            out[j] = np.random.Generator(np.random.PCG64(child)).random(out.shape[1])
        return
    fn(pools, out, np.empty((len(children), 4), np.uint64))


def root_seed(rng=None, seed=None, *, default: int = 0) -> int:
    """The integer root seed of a random run, from ``rng`` (SPEC 7) or the older ``seed``.

    Every random run in the package spawns its streams from ``SeedSequence(root)``; this
    turns what a caller gave into that root, so the run is recorded (and repeated) by one
    integer whatever was passed.

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence or numpy.random.Generator, optional
        An int is the root itself (``rng=5`` and ``seed=5`` give the same run); a
        SeedSequence gives ``generate_state(1, uint64)[0]`` (the same every time); a
        Generator draws the root (``integers(2**63)``), so it advances as any draw would.
    seed : int or numpy.random.Generator, optional
        The older keyword: the same values as ``rng``.
    default : int
        The root when neither is given.

    Returns
    -------
    int
        ``>= 0``.

    Raises
    ------
    ValueError
        Both given, or a value of another kind (a negative or non-integral number, a
        BitGenerator, ``True``), naming the keyword.
    """
    if rng is not None and seed is not None:
        raise ValueError(f"give rng or seed, not both (got rng={rng!r}, seed={seed!r})")
    name, value = ("rng", rng) if rng is not None else ("seed", seed)
    if value is None:
        return default
    if isinstance(value, np.random.Generator):
        return int(value.integers(0, 2**63))
    if isinstance(value, np.random.SeedSequence):
        return int(value.generate_state(1, np.uint64)[0])
    from ..checks import check_int

    return check_int(name, value, low=0)  # an int, or an integral float (2.0)
