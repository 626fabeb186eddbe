"""``registry.warm`` (latency_model.model.registry): a model's warm-up loads every compiled
kernel that its calls on the accuracy map use, so that processes forked afterwards load
none (the map forks one process per model call: docs/model.md section 5.2).

Checked in a fresh interpreter (the test process may have loaded the kernels already): the
numba overloads held by every dispatcher are counted after ``warm`` and again after calls
of other variants, ACK ratios, loss rates and sizes; no call may add one.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from latency_model.accel import numba_available

SCRIPT = textwrap.dedent("""
    import gc, sys
    import numba.core.dispatcher as D
    from latency_model.model import registry
    from latency_model.params import TcpParams, apply_variant

    def loaded():
        return sum(len(d.overloads) for d in gc.get_objects() if isinstance(d, D.Dispatcher))

    name = sys.argv[1]
    before = loaded()
    registry.warm(name)
    warmed = loaded()
    for variant, b, p, sizes in (("lt", 1, 0.2, (1, 2, 3, 5, 8, 10, 15, 20)),
                                 ("proposal", 2, 0.02, (1, 3, 8, 20)),
                                 ("newreno", 2, 0.1, (2, 6))):
        params = apply_variant(TcpParams(p=p, b=b), variant)
        registry.predict(name, params, [n * params.mss_bytes for n in sizes])
    print(before, warmed, loaded())
""")


@pytest.mark.skipif(not numba_available(), reason="numba is not installed or switched off")
@pytest.mark.parametrize("model", ["packet", "fluid"])
def test_warm_loads_every_kernel_a_map_call_uses(model):
    out = subprocess.run([sys.executable, "-c", SCRIPT, model], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    before, warmed, after = map(int, out.stdout.split())
    assert warmed > before  # the warm-up loaded kernels
    assert after == warmed  # and the calls loaded none


def test_a_model_without_kernels_warms_as_a_no_op():
    from latency_model.model import registry

    registry.warm("csa")
    with pytest.raises(ValueError, match="model must be one of"):
        registry.warm("nope")


@pytest.mark.parametrize("module", ["latency_model.model.packet", "latency_model.model.recursion"])
def test_without_numba_warm_computes_nothing(module, monkeypatch):
    """With numba switched off there is nothing to load: ``warm`` makes no model call (the
    pure-Python level DP would spend seconds on its warm-up call for nothing)."""
    import importlib

    mod = importlib.import_module(module)
    monkeypatch.setenv("LATENCY_MODEL_NO_NUMBA", "1")

    def refuse(*args, **kwargs):
        raise AssertionError("warm computed without numba")

    monkeypatch.setattr(mod, "expected_latency", refuse)
    mod.warm()
    monkeypatch.delenv("LATENCY_MODEL_NO_NUMBA")
    if numba_available():
        with pytest.raises(AssertionError, match="warm computed"):
            mod.warm()  # the same call with numba does compute: the stub is reached
