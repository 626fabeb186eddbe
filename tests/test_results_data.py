"""Results as data in Python: ``rng=`` (SPEC 7) wherever randomness enters, ``to_dict()`` and
``to_frame()`` on every result, shapes kept."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.model.recursion import expected_latency
from latency_model.sim._seeding import root_seed
from latency_model.sim.montecarlo import simulate
from latency_model.sim.runner import run_many
from latency_model.sim.singleloss import single_loss
from latency_model.sim.transfer import run_transfer

P = TcpParams(p=0.1)


def test_rng_int_is_the_same_run_as_seed():
    a = simulate(P, size_packets=[3, 7], runs=200, seed=11)
    b = simulate(P, size_packets=[3, 7], runs=200, rng=11)
    assert a.seed == b.seed == 11
    for x, y in zip(a.results, b.results):
        assert np.array_equal(x.samples, y.samples)


def test_a_generator_draws_a_recorded_seed_that_repeats_the_run():
    g = np.random.default_rng(2024)
    a = simulate(P, size_packets=6, runs=150, rng=g)
    again = simulate(P, size_packets=6, runs=150, seed=a.seed)  # the recorded root repeats it
    assert np.array_equal(a.results[0].samples, again.results[0].samples)
    # the Generator advanced, as any draw: the next call is another run
    b = simulate(P, size_packets=6, runs=150, rng=g)
    assert b.seed != a.seed
    # and a Generator passed as seed= (the old keyword) is taken too
    assert simulate(P, size_packets=6, runs=150, seed=np.random.default_rng(2024)).seed == a.seed


def test_seed_sequence_and_refusals():
    ss = np.random.SeedSequence(5)
    assert root_seed(ss) == root_seed(np.random.SeedSequence(5)) == int(ss.generate_state(1, np.uint64)[0])
    with pytest.raises(ValueError, match="give rng or seed"):
        simulate(P, size_packets=3, runs=10, rng=1, seed=1)
    for bad in (-1, 1.5, True, "3", np.random.PCG64(1)):
        with pytest.raises(ValueError, match="rng"):
            simulate(P, size_packets=3, runs=10, rng=bad)


def test_runs_default_to_ten_thousand():
    s = simulate(TcpParams(p=0.0), size_packets=2)
    assert s.runs == 10_000 and s.results[0].runs == 10_000


def test_run_many_counts_runs_from_rng_as_simulate_does():
    s = simulate(P, size_packets=[2, 4], runs=120, rng=9)
    assert np.array_equal(run_many(P, 2 * P.mss_bytes, 120, rng=9), s.results[0].samples)
    with pytest.raises(ValueError, match="rng"):
        run_many(P, 1000, np.random.SeedSequence(1).spawn(3), rng=1)


def test_run_transfer_takes_a_seed_as_rng():
    a = run_transfer(P, size_packets=20, rng=4)
    b = run_transfer(P, size_packets=20, rng=np.random.default_rng(4))
    assert a == b
    with pytest.raises(ValueError, match="rng"):
        run_transfer(P, size_packets=20, rng=-3)


def test_experiments_take_rng():
    from latency_model.experiments.ngwa import NgwaExperiment, run_ngwa

    ex = NgwaExperiment(scale=0.01, rounds=1, variants=("newreno",))
    a = run_ngwa(ex, rng=3)
    assert a.experiment.seed == 3
    assert a.to_dict()["series"] == run_ngwa(NgwaExperiment(scale=0.01, rounds=1, variants=("newreno",),
                                                            seed=3)).to_dict()["series"]


def test_sizes_keep_their_shape():
    s = simulate(P, size_packets=[[1, 2, 3], [4, 5, 6]], runs=50, rng=1)
    assert s.mean_latency_s.shape == (2, 3) and s.sizes_bytes.shape == (2, 3)
    assert s.sizes_bytes[1, 2] == 6 * P.mss_bytes
    assert s.mean_latency_s[1, 2] == s.results[5].mean_latency_s
    assert simulate(P, size_packets=4, runs=20).mean_latency_s.shape == ()


def test_to_dict_is_json_and_to_frame_has_one_row_per_record():
    pd = pytest.importorskip("pandas")
    s = simulate(P, size_packets=[2, 4, 6], runs=100, rng=2)
    json.dumps(s.to_dict())
    f = s.to_frame()
    assert isinstance(f, pd.DataFrame) and len(f) == 3
    assert list(f["size_packets"]) == [2, 4, 6]
    assert f["mean_latency_s"].tolist() == [r.mean_latency_s for r in s.results]
    assert "percentiles_s.p50" in f.columns
    one = s.results[0].to_frame()
    assert len(one) == 1 and one["mean_latency_s"][0] == s.results[0].mean_latency_s

    r = expected_latency(P, size_packets=[1, 5, 10])
    d = json.loads(json.dumps(r.to_dict()))
    assert d["k_max"] == r.k_max and np.shape(d["conditional_latency_s"]) == r.conditional_latency_s.shape
    f = r.to_frame()
    assert f["expected_latency_s"].tolist() == r.expected_latency_s.tolist()
    long = r.to_frame("k")
    assert len(long) == 3 * r.k_max
    # the long table's sum over k of p(k) L_k is the expected latency (Eq. 1)
    e = (long["loss_probability"] * long["conditional_latency_s"]).groupby(long["size_bytes"]).sum()
    assert np.allclose(e.to_numpy(), r.expected_latency_s, rtol=1e-12)

    t = run_transfer(P, size_packets=8, rng=1)
    assert t.to_frame()["completion_s"][0] == t.completion_s
    sl = single_loss(P, size_packets=6)
    assert sl.to_frame()["pattern"][0] == sl.pattern


def test_experiment_results_are_frames_of_their_rows():
    pytest.importorskip("pandas")
    from latency_model.experiments.ngwa import NgwaExperiment, run_ngwa

    res = run_ngwa(NgwaExperiment(scale=0.01, rounds=1, variants=("newreno", "mode1")), rng=1)
    f = res.to_frame()
    assert f["variant"].tolist() == [r["variant"] for r in res.summary]


def test_to_frame_without_pandas_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    s = simulate(P, size_packets=2, runs=10)
    with pytest.raises(ImportError, match=r"latency_model\[pandas\]"):
        s.to_frame()
    json.dumps(s.to_dict())  # needs nothing


def test_expected_latency_keeps_a_2d_size_array_shape():
    from latency_model import TcpParams, conditional_latency, expected_latency

    p = TcpParams()
    grid = np.array([[2, 5, 8], [10, 20, 30]])
    shaped = expected_latency(p, size_packets=grid)
    flat = expected_latency(p, size_packets=grid.ravel())
    assert shaped.sizes_bytes.shape == shaped.expected_latency_s.shape == grid.shape
    assert shaped.conditional_latency_s.shape == grid.shape + (flat.k_max,)
    assert shaped.loss_pmf.shape == grid.shape + (flat.k_max,)
    np.testing.assert_array_equal(shaped.expected_latency_s.ravel(), flat.expected_latency_s)
    assert shaped.records() == flat.records() and shaped.records("k") == flat.records("k")
    lk = conditional_latency(p, k=[0, 1], size_packets=grid)
    assert lk.shape == grid.shape + (2,)
    np.testing.assert_array_equal(lk.reshape(-1, 2), conditional_latency(p, k=[0, 1], size_packets=grid.ravel()))
    assert conditional_latency(p, k=1, size_packets=grid).shape == grid.shape
    assert conditional_latency(p, k=1, size_packets=[2, 5]).shape == (2,)  # 1-D as before


def test_a_prediction_and_a_packet_result_are_data():
    pytest.importorskip("pandas")
    from latency_model import TcpParams, expected_latency
    from latency_model.model import packet
    from latency_model.model.registry import predict

    p = TcpParams()
    pred = predict("fluid", p, [1000, 4000])
    direct = expected_latency(p, size_bytes=[1000, 4000])
    frame = pred.to_frame()
    assert list(frame["size_bytes"]) == [1000.0, 4000.0]
    np.testing.assert_allclose(frame["expected_latency_s"], direct.expected_latency_s, rtol=0, atol=0)
    np.testing.assert_allclose(frame["L1_s"], direct.conditional_latency_s[:, 1], rtol=0, atol=0)
    assert pred.to_dict()["model"] == "fluid"
    one = packet.expected_latency(p, size_packets=[3])[0]
    assert one.to_frame().shape[0] == 1 and one.to_dict()["size_bytes"] == 1500
