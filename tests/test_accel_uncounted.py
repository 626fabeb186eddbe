"""accel.uncounted and accel.held: views numba does not reference-count, and the use that
keeps their owners alive. The compiled kernels must give the same bits with them; here the
two intrinsics themselves, compiled through compile_twins as the kernels are, against their
pure twins (identity and nothing)."""

from __future__ import annotations

import numpy as np
import pytest

from latency_model.accel import compile_twins, held, numba_available, uncounted


def _bump(a, i):
    a[i] += 1.0


def _through_views(a, b):
    """Reads and writes through uncounted views of two arguments and of a local array."""
    x, y = uncounted((a, b))
    own = np.zeros(a.size)
    z = uncounted(own)
    for i in range(x.size):
        _bump(x, i)  # a helper call given a view (the atomics the views avoid)
        z[i] = x[i] * y[i]
    held(own)
    return own


def _scalar(x):
    return uncounted(x)


def test_the_pure_twins_are_identity_and_nothing():
    a, b = np.arange(3.0), np.arange(2)
    assert uncounted(a) is a
    t = uncounted((a, b))
    assert t[0] is a and t[1] is b
    assert held((a, b)) is None


@pytest.mark.skipif(not numba_available(), reason="numba is not installed or is switched off")
def test_compiled_views_read_and_write_the_owners_memory():
    (fn,) = compile_twins(globals(), ("_bump",), (_through_views,))
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4, 5, 6])
    a_pure = a.copy()
    want = _through_views(a_pure, b)
    got = fn(a, b)
    assert np.array_equal(got, want)  # [8, 15, 24]: the local owner's memory, kept alive
    assert np.array_equal(a, a_pure)  # the helper's writes reached the argument
    assert np.array_equal(want, [8.0, 15.0, 24.0])


@pytest.mark.skipif(not numba_available(), reason="numba is not installed or is switched off")
def test_the_compiled_uncounted_takes_only_arrays():
    import numba

    (fn,) = compile_twins(globals(), (), (_scalar,))
    with pytest.raises(numba.core.errors.TypingError):
        fn(1.0)
