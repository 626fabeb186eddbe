"""Every public simulator entry point rejects bad input with a ValueError naming it."""

import math

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.sim import SimConfig, run_many, run_transfer, simulate, single_loss, y_to_packets

P = TcpParams(p=0.1)


@pytest.mark.parametrize("kwargs,match", [
    ({"link_rate_bps": 0}, "link_rate_bps"),
    ({"link_rate_bps": math.nan}, "link_rate_bps"),
    ({"delay_s": -0.01}, "delay_s"),
    ({"header_bytes": -1}, "header_bytes"),
    ({"header_bytes": 1.5}, "header_bytes"),
    ({"delack_timeout_s": 0}, "delack_timeout_s"),
    ({"min_rto_s": 0}, "min_rto_s"),
    ({"initial_rto_s": -1}, "initial_rto_s"),
    ({"max_rto_s": 0.5}, "max_rto_s"),
    ({"clock_granularity_s": -1}, "clock_granularity_s"),
    ({"rto_rule": "linux"}, "rto_rule"),
    ({"lt_mode": "x"}, "lt_mode"),
    ({"p_ack": 1.0}, "p_ack"),
    ({"p_ack": -0.1}, "p_ack"),
])
def test_sim_config_rejects(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SimConfig(**kwargs)


@pytest.mark.parametrize("kwargs,match", [
    ({"runs": 0}, "runs must be an integer >= 1"),
    ({"runs": 2.5}, "runs"),
    ({"seed": -1}, "seed"),
    ({"size_packets": [0]}, "size_packets"),
    ({"size_packets": [-3]}, "size_packets"),
    ({"size_packets": [1.5]}, "size_packets must be whole"),
    ({"size_packets": [math.nan]}, "size_packets"),
    ({"size_packets": []}, "size_packets"),
    ({"size_packets": None, "size_bytes": [700.5]}, "size_bytes must be whole"),
    ({"size_packets": None}, "exactly one of size_bytes"),
    ({"size_bytes": [1000]}, "exactly one of size_bytes"),
    ({"engine": "gpu"}, "engine"),
    ({"batch_size": 0}, "batch_size"),
    ({"workers": 0}, "workers"),
])
def test_simulate_rejects(kwargs, match):
    args = {"size_packets": [4], "runs": 10, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=match):
        simulate(P, **args)


def test_simulate_rejects_a_positional_size():
    # issue 20: a bare size meant packets here and bytes in the model; now it is an error
    with pytest.raises(ValueError, match="positional size is ambiguous.*size_bytes.*size_packets"):
        simulate(P, [4], runs=10, seed=0)
    with pytest.raises(ValueError, match="positional size is ambiguous"):
        run_transfer(P, 4)
    with pytest.raises(ValueError, match="size_packets=... .*by keyword"):
        single_loss(P, 4)


def test_simulate_size_units_agree():
    # 4 packets of 500 B and 2000 B are the same transfer, run for run
    a = simulate(P, size_packets=[4], runs=50, seed=3)
    b = simulate(P, size_bytes=[2000], runs=50, seed=3)
    assert a.results[0].size_bytes == b.results[0].size_bytes == 2000
    assert a.results[0].mean_latency_s == b.results[0].mean_latency_s


def test_simulate_rejects_wrong_types():
    with pytest.raises(ValueError, match="params"):
        simulate({"p": 0.1}, size_packets=[4], runs=10, seed=0)
    with pytest.raises(ValueError, match="config"):
        simulate(P, size_packets=[4], runs=10, seed=0, config={"delay_s": 1})


def test_tcp_params_reject_p_one():
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        TcpParams(p=1.0)


@pytest.mark.parametrize("kwargs,match", [
    ({"size_packets": 0}, "size_packets"),
    ({"size_packets": None, "size_bytes": 0}, "size_bytes"),
    ({"size_packets": 3, "size_bytes": 100}, "exactly one"),
    ({"size_packets": 3, "drops": [3]}, "drops segment index"),
    ({"size_packets": 3, "drops": {1: 0}}, "drops count"),
    ({"size_packets": 3}, "rng"),
    ({"size_packets": 3, "rng": "5"}, "rng"),
])
def test_run_transfer_rejects(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_transfer(P, **kwargs)


def test_run_many_rejects():
    ch = np.random.SeedSequence(0).spawn(2)
    with pytest.raises(ValueError, match="engine"):
        run_many(P, 1000, ch, engine="fast")
    with pytest.raises(ValueError, match="batch_size"):
        run_many(P, 1000, ch, batch_size=0)


def test_single_loss_rejects():
    with pytest.raises(ValueError, match="size_packets"):
        single_loss(P, size_packets=0)
    with pytest.raises(ValueError, match="horizon_packets"):
        y_to_packets(P, horizon_packets=5)
