"""y_to, FileSize_min and the paper's Tables 1-2."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from latency_model import TcpParams
from latency_model.model.thresholds import PAPER_TABLES, filesize_min, table_rows, table_y_to, y_to

CELLS = [
    (b, phase, lt, w0, printed[w0 - 1])
    for (b, phase, lt), printed in PAPER_TABLES.items()
    for w0 in (1, 2, 3, 4)
]


@pytest.mark.parametrize("b,phase,lt,w0,printed", CELLS)
def test_y_to_matches_tables_1_and_2(b, phase, lt, w0, printed):
    threshold = 1 + (2 if lt else 3)
    assert table_y_to(w0, b, phase, threshold, convention="paper") == printed


def test_plain_rule_differs_only_in_the_four_ca_cells_at_the_threshold():
    differing = [
        (b, phase, lt, w0)
        for b, phase, lt, w0, printed in CELLS
        if table_y_to(w0, b, phase, 1 + (2 if lt else 3), convention="plain") != printed
    ]
    assert differing == [
        (1, "congestion_avoidance", False, 4),
        (1, "congestion_avoidance", True, 3),
        (2, "congestion_avoidance", False, 4),
        (2, "congestion_avoidance", True, 3),
    ]


def test_paper_section3_example_b2_w0_1():
    # Section 3: W0 = 1, b = 2, slow start: windows 1, 2, 3, 5; y_to = 4 MSS (the first
    # packet of the 3-window is the last whose loss times out).
    assert table_y_to(1, 2, "slow_start", 4) == 4


def test_table_rows_shape():
    rows = table_rows()
    assert len(rows) == 8
    assert all(r["model"] == r["paper"] for r in rows)
    assert {(r["b"], r["phase"], r["lt"]) for r in rows} == set(PAPER_TABLES)


def test_table_rule_validates_inputs():
    with pytest.raises(ValueError, match="phase"):
        table_y_to(1, 1, "recovery", 4)
    with pytest.raises(ValueError, match="w0"):
        table_y_to(0, 1, "slow_start", 4)
    with pytest.raises(ValueError, match="convention"):
        table_y_to(1, 1, "slow_start", 4, convention="other")


def test_y_to_fluid_closed_form_b1():
    # Slow start b = 1: y_f = MSS (4 - W0) / ln 2.
    for w0 in (1.0, 2.0, 3.0):
        assert float(y_to(TcpParams(w0=w0))) == pytest.approx(500 * (4 - w0) / math.log(2), rel=1e-12)


def test_y_to_rounds_b1_matches_table_slow_start():
    # Whole windows 1, 2, 4 / 2, 4 / 3, 6: packets sent in rounds below 4 -> 3, 2, 3, 0.
    got = [float(y_to(TcpParams(w0=w), time_model="rounds")) / 500 for w in (1, 2, 3, 4)]
    assert got == [3, 2, 3, 0]  # W0 = 3: the round law sends all 3 packets of the first round


def test_y_to_uses_limited_transmit_threshold():
    p = TcpParams(w0=2, dup_lt=2)
    assert float(y_to(p)) == pytest.approx(500 * (3 - 2) / math.log(2))
    assert float(filesize_min(p)) == pytest.approx(float(y_to(p)) + 3 * 500)


def test_filesize_min_is_y_to_plus_dup_t_packets():
    p = TcpParams(w0=2, b=2)
    for model in ("fluid", "rounds"):
        assert float(filesize_min(p, time_model=model)) == float(y_to(p, time_model=model)) + 1500


def test_receiver_window_below_threshold_means_every_loss_times_out():
    assert np.isinf(y_to(TcpParams(w0=2, rwnd=3)))


@given(w0=st.floats(0.5, 30.0), dup_t=st.integers(1, 6), b=st.integers(1, 3))
def test_y_to_zero_once_w0_reaches_threshold(w0, dup_t, b):
    p = TcpParams(w0=w0, dup_t=dup_t, b=b)
    for model in ("fluid", "rounds"):
        value = float(y_to(p, time_model=model))
        if w0 >= 1 + dup_t:
            assert value == 0.0
        else:
            assert value > 0.0


@given(w1=st.floats(0.5, 6.0), w2=st.floats(0.5, 6.0), b=st.integers(1, 3))
def test_y_to_non_increasing_in_w0_fluid(w1, w2, b):
    lo, hi = sorted((w1, w2))
    assert y_to(TcpParams(w0=hi, b=b)) <= y_to(TcpParams(w0=lo, b=b))


def test_y_to_rounds_is_not_monotone_in_w0():
    # The staircase can need one round fewer below the threshold from a smaller W0 (b = 2):
    # W0 = 1:     1 + 1.5 + 2.25 + 3.375          = 8.125 packets below 4
    # W0 = 0.875: 0.875 + 1.3125 + 1.96875 + 2.953125 = 7.109375 packets (next round: 4.43)
    assert float(y_to(TcpParams(w0=1.0, b=2), time_model="rounds")) == 8.125 * 500
    assert float(y_to(TcpParams(w0=0.875, b=2), time_model="rounds")) == 7.109375 * 500
