"""The loss-count law p(k | y) and the first-loss density."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate

from latency_model.model.losses import first_loss_density, loss_count_pmf


def paper_pmf(k, y, p, mss):
    # As printed: exp(-lam (y + k MSS)) (lam (y + (k-1) MSS))^k / k!, lam = p / MSS.
    lam = p / mss
    return math.exp(-lam * (y + k * mss)) * (lam * (y + (k - 1) * mss)) ** k / math.factorial(k)


def test_printed_law_mass_for_8_packets_at_p_01():
    raw = sum(paper_pmf(k, 4000, 0.1, 500) for k in range(60))
    counts = loss_count_pmf([4000], 0.1, 500, normalize=False, k_max=60)
    assert counts.raw_mass[0] == pytest.approx(raw, rel=1e-12)
    assert raw == pytest.approx(1.005, abs=5e-4)  # the issue's own check: about 1.005
    np.testing.assert_allclose(counts.pmf[0, :5], [paper_pmf(k, 4000, 0.1, 500) for k in range(5)], rtol=1e-12)


def test_normalised_law_sums_to_one_up_to_the_tail():
    counts = loss_count_pmf([500, 4000, 50_000], 0.1, 500, tail=1e-9)
    np.testing.assert_allclose(counts.pmf.sum(axis=1) + counts.truncated_mass, 1.0, rtol=1e-12)
    assert np.all(counts.truncated_mass < 1e-9)


def test_exact_law_is_negative_binomial():
    # 3 packets at p = 0.2: P(k) = C(k + 2, k) 0.2^k 0.8^3.
    counts = loss_count_pmf([1500], 0.2, 500, law="exact", k_max=6)
    expected = [math.comb(k + 2, k) * 0.2**k * 0.8**3 for k in range(6)]
    np.testing.assert_allclose(counts.pmf[0], expected, rtol=1e-12)


def test_zero_loss_probability_is_certain_zero_losses():
    for law in ("paper", "exact"):
        counts = loss_count_pmf([4000], 0.0, 500, law=law)
        assert counts.pmf[0, 0] == pytest.approx(1.0)


@given(k=st.integers(1, 40), y_bar=st.floats(1.0, 1e6))
def test_first_loss_density_integrates_to_one(k, y_bar):
    total, _ = integrate.quad(lambda y: float(first_loss_density(y, k, y_bar)), 0, y_bar, limit=200)
    assert total == pytest.approx(1.0, rel=1e-8)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="^p must"):
        loss_count_pmf([1000], 1.0, 500)
    with pytest.raises(ValueError, match="^sizes_bytes"):
        loss_count_pmf([0.0], 0.1, 500)
    with pytest.raises(ValueError, match="^law"):
        loss_count_pmf([1000], 0.1, 500, law="poisson")
    with pytest.raises(ValueError, match="^k must"):
        first_loss_density(1.0, 0, 10.0)
