"""Fluid rate evolution: closed forms re-derived with sympy, checked against mpmath
integration of the rate equation, the per-round staircase, and monotonicity properties."""

import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from latency_model import TcpParams
from latency_model.model.fluid import l0, w_f, y_f

# ---------------------------------------------------------------------------
# sympy: derive y(w), t(w) for each phase from the rate equation and compare
# with the production closed forms.

t, w, w0, c0, R, MSS, b, m = sp.symbols("t w w_0 c_0 R MSS b M", positive=True)


def _sympy_slow_start():
    """dw/dt = ln(1 + 1/b) w / R, bytes flow at w MSS / R."""
    g = sp.log(1 + 1 / b)
    wt = sp.Function("w")
    sol = sp.dsolve(sp.Eq(wt(t).diff(t), g * wt(t) / R), wt(t), ics={wt(0): w0}).rhs
    y_t = sp.integrate(sol.subs(t, sp.Symbol("s", positive=True)) * MSS / R, (sp.Symbol("s", positive=True), 0, t))
    t_w = sp.solve(sp.Eq(sol, w), t)[0]
    return sp.simplify(y_t.subs(t, t_w)), sp.simplify(t_w)


def _sympy_congestion_avoidance():
    """dw/dt = (1/b) / R from c0."""
    wt = sp.Function("w")
    sol = sp.dsolve(sp.Eq(wt(t).diff(t), 1 / (b * R)), wt(t), ics={wt(0): c0}).rhs
    s = sp.Symbol("s", positive=True)
    y_t = sp.integrate(sol.subs(t, s) * MSS / R, (s, 0, t))
    t_w = sp.solve(sp.Eq(sol, w), t)[0]
    return sp.simplify(y_t.subs(t, t_w)), sp.simplify(t_w)


def test_sympy_rederives_slow_start_closed_form():
    y_w, t_w = _sympy_slow_start()
    # The forms stated in latency_model.model.fluid's docstring.
    assert sp.simplify(y_w - MSS * (w - w0) / sp.log(1 + 1 / b)) == 0
    # log identities need positivity, which expand_log(force=True) assumes (all symbols are positive)
    assert sp.simplify(sp.expand_log(t_w - R * sp.log(w / w0) / sp.log(1 + 1 / b), force=True)) == 0
    f_y = sp.lambdify((w, w0, MSS, b), y_w)
    f_t = sp.lambdify((w, w0, R, b), t_w)
    for bb, ww0, target in [(1, 2.0, 4.0), (2, 1.0, 7.5), (3, 1.5, 29.0)]:
        p = TcpParams(b=bb, w0=ww0, w_ss=30, rwnd=30)
        y = float(y_f(p, target))
        assert y == pytest.approx(f_y(target, ww0, 500, bb), rel=1e-12)
        assert float(l0(p, y)) == pytest.approx(f_t(target, ww0, 0.1, bb), rel=1e-12)
        assert float(w_f(p, y)) == pytest.approx(target, rel=1e-12)


def test_sympy_rederives_congestion_avoidance_closed_form():
    y_w, t_w = _sympy_congestion_avoidance()
    assert sp.simplify(y_w - MSS * b * (w**2 - c0**2) / 2) == 0
    assert sp.simplify(t_w - b * R * (w - c0)) == 0
    f_y = sp.lambdify((w, c0, MSS, b), y_w)
    f_t = sp.lambdify((w, c0, R, b), t_w)
    for bb, cc0, target in [(1, 4.0, 10.0), (2, 2.0, 7.5)]:
        p = TcpParams(b=bb, w0=cc0, w_ss=1.0, rwnd=30)  # w0 >= w_ss: congestion avoidance
        y = float(y_f(p, target))
        assert y == pytest.approx(f_y(target, cc0, 500, bb), rel=1e-12)
        assert float(l0(p, y)) == pytest.approx(f_t(target, cc0, 0.1, bb), rel=1e-12)


# ---------------------------------------------------------------------------
# mpmath: integrate the rate equation in w (piecewise at W_SS and M) at 30 digits.


def _mp_reference(params, w_target):
    """(bytes, seconds) to grow from params.w0 to w_target by quadrature of the rate equation."""
    mp.mp.dps = 30
    g = mp.log(1 + mp.mpf(1) / params.b)
    rtt, mss = mp.mpf(params.rtt_s), mp.mpf(params.mss_bytes)

    def dwdt(u):  # packets per second
        return g * u / rtt if u < params.w_ss else 1 / (params.b * rtt)

    cuts = sorted({params.w0, min(max(params.w_ss, params.w0), w_target), w_target})
    seconds = mp.quad(lambda u: 1 / dwdt(u), cuts)
    nbytes = mp.quad(lambda u: (u * mss / rtt) / dwdt(u), cuts)
    return nbytes, seconds


params_strategy = st.builds(
    TcpParams,
    mss_bytes=st.integers(100, 1500),
    rtt_s=st.floats(0.01, 1.0),
    w0=st.floats(0.5, 10.0),
    w_ss=st.floats(1.0, 60.0),
    rwnd=st.just(64.0),
    b=st.integers(1, 4),
)


@given(params=params_strategy, frac=st.floats(0.01, 1.0))
def test_closed_forms_match_mpmath_integration_to_1e_10(params, frac):
    w_target = params.w0 + frac * (params.rwnd - params.w0)
    nbytes, seconds = _mp_reference(params, w_target)
    assert float(y_f(params, w_target)) == pytest.approx(float(nbytes), rel=1e-10)
    assert float(l0(params, float(nbytes))) == pytest.approx(float(seconds), rel=1e-10, abs=1e-15)
    assert float(w_f(params, float(nbytes))) == pytest.approx(w_target, rel=1e-10)


def test_capped_phase_is_linear_in_size():
    p = TcpParams(w0=2, w_ss=30, rwnd=30)
    y_cap = float(y_f(p, 30.0))
    extra = 30 * 500 * 7.0  # seven more RTTs at 30 packets
    assert float(l0(p, y_cap + extra)) == pytest.approx(float(l0(p, y_cap)) + 7 * 0.1, rel=1e-12)
    assert float(w_f(p, y_cap + extra)) == 30.0
    assert np.isinf(y_f(p, 31.0))


# ---------------------------------------------------------------------------
# Per-round (staircase) model, derived by hand.


def test_rounds_staircase_b1_w0_2():
    # Windows 2, 4, 8, 16 (then 30): sizes 1-2 take 1 RTT, 3-6 take 2, 7-14 take 3, 15-30 take 4.
    p = TcpParams(b=1, w0=2, w_ss=30, rwnd=30)
    sizes = np.arange(1, 31) * 500
    expected = np.repeat([1, 2, 3, 4], [2, 4, 8, 16]) * 0.1
    np.testing.assert_allclose(l0(p, sizes, time_model="rounds"), expected, rtol=1e-12)
    np.testing.assert_array_equal(w_f(p, sizes, time_model="rounds"), np.repeat([2, 4, 8, 16], [2, 4, 8, 16]))


def test_rounds_staircase_b2_w0_2():
    # Windows 2, 3, 4.5, 6.75, 10.125: cumulative 2, 5, 9.5, 16.25, 26.375 packets.
    p = TcpParams(b=2, w0=2, w_ss=30, rwnd=30)
    sizes = np.arange(1, 27) * 500
    expected = np.repeat([1, 2, 3, 4, 5], [2, 3, 4, 7, 10]) * 0.1
    np.testing.assert_allclose(l0(p, sizes, time_model="rounds"), expected, rtol=1e-12)


def test_rounds_congestion_avoidance_and_cap():
    # w0 = 28 >= w_ss: 28, 29, 30, 30, ... -> 28 + 29 + 30 = 87 packets in 3 rounds, then 30 per round.
    p = TcpParams(b=1, w0=28, w_ss=10, rwnd=30)
    assert float(l0(p, 87 * 500, time_model="rounds")) == pytest.approx(0.3)
    assert float(l0(p, 88 * 500, time_model="rounds")) == pytest.approx(0.4)
    assert float(l0(p, (87 + 300) * 500, time_model="rounds")) == pytest.approx(1.3)
    assert float(y_f(p, 30, time_model="rounds")) == (28 + 29) * 500
    assert np.isinf(y_f(p, 31, time_model="rounds"))


def test_zero_bytes_take_no_time_and_keep_w0():
    p = TcpParams(w0=3)
    for model in ("fluid", "rounds"):
        assert float(l0(p, 0.0, time_model=model)) == 0.0
        assert float(w_f(p, 0.0, time_model=model)) == 3.0


def test_vectorised_over_sizes_and_windows():
    p = TcpParams()
    out = l0(p, [[500.0], [5000.0]], w0=[1.0, 2.0, 4.0], time_model="rounds")
    assert out.shape == (2, 3)
    single = [float(l0(p, s, w0=w, time_model="rounds")) for s in (500.0, 5000.0) for w in (1.0, 2.0, 4.0)]
    np.testing.assert_allclose(out.ravel(), single)


# ---------------------------------------------------------------------------
# Properties

models = st.sampled_from(["fluid", "rounds"])
small_params = st.builds(
    TcpParams,
    w0=st.floats(0.5, 8.0),
    w_ss=st.floats(1.0, 40.0),
    rwnd=st.just(40.0),
    b=st.integers(1, 3),
)


@given(params=small_params, t1=st.floats(0.5, 40.0), t2=st.floats(0.5, 40.0), model=models)
def test_y_f_is_non_decreasing_in_target(params, t1, t2, model):
    lo, hi = sorted((t1, t2))
    assert y_f(params, lo, time_model=model) <= y_f(params, hi, time_model=model)


@given(params=small_params, s1=st.floats(0.0, 1e5), s2=st.floats(0.0, 1e5))
def test_l0_increasing_in_size(params, s1, s2):
    lo, hi = sorted((s1, s2))
    assert l0(params, lo) <= l0(params, hi)
    if hi > lo * (1 + 1e-9) + 1e-9:
        assert l0(params, lo) < l0(params, hi)
    assert l0(params, lo, time_model="rounds") <= l0(params, hi, time_model="rounds")


@given(params=small_params, size=st.floats(0.0, 1e5), extra=st.floats(0.0, 4.0), model=models)
def test_l0_non_increasing_in_w0(params, size, extra, model):
    bigger = min(params.w0 + extra, params.rwnd)
    assert l0(params, size, w0=bigger, time_model=model) <= l0(params, size, time_model=model) * (1 + 1e-12)


@given(params=small_params, size=st.floats(0.0, 1e5), model=models)
def test_w_f_at_least_w0_and_at_most_rwnd(params, size, model):
    wf = float(w_f(params, size, time_model=model))
    assert params.w0 * (1 - 1e-12) <= wf <= params.rwnd


@pytest.mark.parametrize("fn", [y_f, l0, w_f])
def test_functions_reject_bad_inputs(fn):
    p = TcpParams()
    with pytest.raises(ValueError, match="time_model"):
        fn(p, 1000.0, time_model="exact")
    with pytest.raises(ValueError):
        fn(p, float("nan"))
    with pytest.raises(ValueError, match="w0"):
        fn(p, 1000.0, w0=-1.0)


def test_sizes_must_be_non_negative():
    with pytest.raises(ValueError, match="size_bytes"):
        l0(TcpParams(), -1.0)
    with pytest.raises(ValueError, match="target"):
        y_f(TcpParams(), 0.0)


def test_continuous_law_of_rfc5681_is_factor_one_plus_one_over_b_per_rtt():
    # One RTT of slow start multiplies the window by 1 + 1/b.
    for bb in (1, 2, 3):
        p = TcpParams(b=bb, w0=1.0, w_ss=1e9, rwnd=1000.0)
        y_one_rtt = 500 * (math.exp(math.log1p(1 / bb)) - 1) / math.log1p(1 / bb)
        assert float(w_f(p, y_one_rtt)) == pytest.approx(1 + 1 / bb)
        assert float(l0(p, y_one_rtt)) == pytest.approx(0.1)
