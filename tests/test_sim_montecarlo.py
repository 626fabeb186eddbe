"""Monte Carlo: loss counts follow their exact laws (chi-square goodness of fit at
significance 0.01), summaries are consistent, and seeds reproduce results exactly."""

import math

import numpy as np
import pytest
from _budget import pick
from scipy import stats

from latency_model import TcpParams
from latency_model.sim import OUT_FIELDS, SimConfig, simulate

ALPHA = 0.01  # stated significance level of every goodness-of-fit test below


def col(summary, name, i=0):
    return summary.results[i].samples[:, OUT_FIELDS.index(name)]


def chi2_pvalue(counts, probs):
    counts = np.asarray(counts, float)
    expected = counts.sum() * np.asarray(probs, float)
    assert expected.min() >= 5  # chi-square validity
    return stats.chisquare(counts, expected).pvalue


def binned(values, n_bins):
    """Counts of 0, 1, ..., n_bins-2 and '>= n_bins-1'."""
    values = np.asarray(values, int)
    return [np.sum(values == k) for k in range(n_bins - 1)] + [np.sum(values >= n_bins - 1)]


def binomial_probs(n, p, n_bins):
    pk = [stats.binom.pmf(k, n, p) for k in range(n_bins - 1)]
    return pk + [1.0 - sum(pk)]


def test_first_transmission_losses_are_binomial():
    # Each segment's first transmission is lost independently with probability p,
    # so their count is Binomial(N, p) whatever the recovery does.
    n, p = 10, 0.1
    s = simulate(TcpParams(p=p), size_packets=[n], runs=3000, seed=11)
    counts = binned(col(s, "first_transmissions_lost"), 4)
    assert chi2_pvalue(counts, binomial_probs(n, p, 4)) > ALPHA


def test_single_packet_losses_are_geometric():
    # One packet is resent until a copy gets through: P(k losses) = p^k (1 - p).
    p = 0.3
    s = simulate(TcpParams(p=p), size_packets=[1], runs=3000, seed=12)
    counts = binned(col(s, "lost_packets"), 4)
    probs = [p**k * (1 - p) for k in range(3)] + [p**3]
    assert chi2_pvalue(counts, probs) > ALPHA
    assert np.array_equal(col(s, "lost_packets"), col(s, "timeouts"))  # every loss -> RTO


@pytest.mark.slow
@pytest.mark.parametrize("n,p", [(40, 0.1), pytest.param(20, 0.3, marks=pytest.mark.full_budget), pytest.param(8, 0.02, marks=pytest.mark.full_budget)])
def test_first_transmission_losses_binomial_large(n, p):
    s = simulate(TcpParams(p=p), size_packets=[n], runs=pick(40_000, 8_000), seed=n)
    bins = 7 if p >= 0.1 else 3
    counts = binned(col(s, "first_transmissions_lost"), bins)
    assert chi2_pvalue(counts, binomial_probs(n, p, bins)) > ALPHA


def test_ack_losses_of_single_packet_are_geometric():
    # No data loss, one packet: each copy's ACK is lost with p_ack, and every lost ACK
    # costs one RTO and one more copy, so P(k lost ACKs) = p_ack^k (1 - p_ack).
    pa = 0.25
    s = simulate(TcpParams(p=0.0), size_packets=[1], runs=3000, seed=5, config=SimConfig(p_ack=pa))
    counts = binned(col(s, "lost_acks"), 4)
    probs = [pa**k * (1 - pa) for k in range(3)] + [pa**3]
    assert chi2_pvalue(counts, probs) > ALPHA
    assert np.array_equal(col(s, "lost_acks"), col(s, "timeouts"))


def test_summary_consistency():
    s = simulate(TcpParams(p=0.1), size_packets=[8, 40], runs=2000, seed=3)
    for r in s.results:
        lat = r.samples[:, 0]
        assert r.mean_latency_s == pytest.approx(lat.mean())
        lo, hi = r.ci95_s
        half = stats.t.ppf(0.975, lat.size - 1) * lat.std(ddof=1) / math.sqrt(lat.size)
        assert hi - lo == pytest.approx(2 * half)
        assert sum(v["n"] for v in r.conditional.values()) == r.runs
        assert r.percentiles_s["p50"] == pytest.approx(np.median(lat))
        assert r.timeout_fraction == pytest.approx(np.mean(r.samples[:, OUT_FIELDS.index("timeouts")] > 0))
        # No loss: everyone takes the no-loss time exactly.
        assert r.conditional[0]["mean_s"] == pytest.approx(lat[r.samples[:, 2] == 0].min())
    d = s.to_dict()
    assert d["runs"] == 2000 and d["seed"] == 3 and len(d["results"]) == 2
    assert d["results"][0]["size_packets"] == 8


def test_seed_reproducibility_and_independence_of_batching():
    p = TcpParams(p=0.1)
    a = simulate(p, size_packets=[8, 20], runs=500, seed=42)
    b = simulate(p, size_packets=[20], runs=500, seed=42, batch_size=13)
    c = simulate(p, size_packets=[20], runs=500, seed=42, engine="python")
    d = simulate(p, size_packets=[20], runs=500, seed=43)
    assert np.array_equal(a.results[1].samples, b.results[0].samples)
    assert np.array_equal(a.results[1].samples, c.results[0].samples)
    assert not np.array_equal(a.results[1].samples, d.results[0].samples)
    # The first 200 runs of a 500-run experiment are the 200 runs of a smaller one.
    e = simulate(p, size_packets=[20], runs=200, seed=42)
    assert np.array_equal(e.results[0].samples, a.results[1].samples[:200])


def test_worker_count_does_not_change_results():
    p = TcpParams(p=0.1)
    a = simulate(p, size_packets=[10], runs=300, seed=9, workers=1)
    b = simulate(p, size_packets=[10], runs=300, seed=9, workers=2)
    assert np.array_equal(a.results[0].samples, b.results[0].samples)
