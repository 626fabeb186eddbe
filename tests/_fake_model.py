"""A stand-in registry model for the tests of the registry's users (the sweep's model axis,
the accuracy map): a closed form, newreno only, so that those tests neither depend on the
other models' modules nor pay for them."""

from __future__ import annotations

import importlib.machinery
import sys
import time
import types

import numpy as np

from latency_model.model import registry


def fake_module(name: str, latency, slow_from_packets=None) -> types.ModuleType:
    """A registry model module called ``name``: ``latency(params, n) -> (E[L], L_0)`` seconds
    for n packets, L_1 = L_0 + 1 s; newreno only; it sleeps a minute for sizes from
    ``slow_from_packets`` (to meet a time limit)."""
    mod = types.ModuleType(name)
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None)

    def check_supported(params):
        if params.dup_lt is not None or params.tail_retransmit or params.early_retransmit:
            raise ValueError("the fake model supports the newreno variant only")

    def predict(params, sizes_bytes, **options):
        n = np.asarray(sizes_bytes) / params.mss_bytes
        if slow_from_packets is not None and n.max() >= slow_from_packets:
            time.sleep(60)
        expected, l0 = latency(params, n)
        return registry.Prediction("fake", np.asarray(sizes_bytes), expected, np.column_stack([l0, l0 + 1.0]))

    mod.check_supported, mod.predict = check_supported, predict
    return mod


def install(mp, module: types.ModuleType) -> None:
    """With the monkeypatch ``mp``: the registry holds fluid and ``fake`` (``module``) only."""
    mp.setattr(registry, "MODELS", {"fluid": "latency_model.model.recursion", "fake": module.__name__})
    mp.setitem(sys.modules, module.__name__, module)
