"""Public simulator functions refuse invalid parameters with a ValueError naming them.

Each test here failed before its fix (a TypeError, an AttributeError, a numpy error, or
a result computed from a setting that was silently ignored or invalid).
"""

import math

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.sim import SimConfig, fast_path_supported, run_many

P = TcpParams()


def _children():
    return np.random.SeedSequence(1).spawn(5)


# 1. run_many, fast_path_supported -------------------------------------------------------

@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
@pytest.mark.parametrize("size", [1.5, 1500.7, True, math.nan, 0, -3, "1500", None])
def test_run_many_checks_size_bytes_on_every_engine(engine, size):
    with pytest.raises(ValueError, match=r"size_bytes must be an integer >= 1"):
        run_many(P, size, _children(), engine=engine)


@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
def test_run_many_checks_params_and_config(engine):
    with pytest.raises(ValueError, match=r"params must be a TcpParams, got 'x'"):
        run_many("x", 1000, _children(), engine=engine)
    with pytest.raises(ValueError, match=r"params must be a TcpParams, got None"):
        run_many(None, 1000, _children(), engine=engine)
    with pytest.raises(ValueError, match=r"config must be a SimConfig"):
        run_many(P, 1000, _children(), {"delay_s": 0.1}, engine=engine)


def test_fast_path_supported_checks_params_and_config():
    with pytest.raises(ValueError, match=r"params must be a TcpParams"):
        fast_path_supported(None)
    with pytest.raises(ValueError, match=r"config must be a SimConfig"):
        fast_path_supported(P, "x")
    assert fast_path_supported(P) and fast_path_supported(P, SimConfig())


@pytest.mark.parametrize("engine", ["auto", "python", "compiled"])
@pytest.mark.parametrize("children,match", [
    (5, r"children must be a sequence of numpy.random.SeedSequence"),
    (None, r"children must be a sequence"),
    ("abc", r"children must be a sequence"),
    (np.random.SeedSequence(1), r"children must be a sequence"),  # one child, not a sequence
    ([np.random.default_rng(1)], r"children\[0\] must be a numpy.random.SeedSequence"),
    ([np.random.PCG64(1)], r"children\[0\] must be"),
    ([-1], r"children\[0\] must be a numpy.random.SeedSequence or an integer >= 0 .*got -1"),
    ([None], r"children\[0\] must be"),  # fresh OS entropy: not reproducible
    ([True], r"children\[0\] must be"),
    ([np.random.SeedSequence(1), 2.5], r"children\[1\] must be"),
])
def test_run_many_checks_children(engine, children, match):
    with pytest.raises(ValueError, match=match):
        run_many(P, 1000, children, engine=engine)


def test_run_many_still_takes_integer_seeds_and_agrees_across_engines():
    children = [np.random.SeedSequence(3), 5, np.uint8(7)]
    tcp = TcpParams(p=0.2)
    a = run_many(tcp, 4000, children, engine="python")
    b = run_many(tcp, 4000.0, children, engine="compiled")
    assert np.array_equal(a, b)
