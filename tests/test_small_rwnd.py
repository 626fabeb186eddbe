"""A receiver window of at most 4 packets (issue 20's `latency --rwnd 4 --w0 1`): the post-loss
window families have a single reachable window; the tabulated solver must still answer and
agree with the nested-quadrature reference."""

import numpy as np
import pytest

from latency_model import TcpParams
from latency_model.model.recursion import conditional_latency, conditional_latency_direct


@pytest.mark.parametrize("rwnd, w0", [(2, 1), (3, 1), (4, 1), (4, 2), (5, 2)])
def test_small_receiver_window_tables_match_the_reference(rwnd, w0):
    # L_0, L_1 at three sizes, L_2 at one (the nested quadrature of L_2 costs ~1 s a size).
    p = TcpParams(rwnd=rwnd, w0=w0, w_ss=rwnd)
    sizes = np.array([1000.0, 2000.0, 5000.0])
    tab = conditional_latency(p, size_bytes=sizes, k=[0, 1, 2])
    ref = np.array([[conditional_latency_direct(p, s, k) for k in (0, 1)] for s in sizes])
    assert np.max(np.abs(tab[:, :2] - ref) / ref) < 1e-5  # the solver's documented table accuracy
    ref2 = conditional_latency_direct(p, 2000.0, 2)
    assert abs(tab[1, 2] - ref2) / ref2 < 1e-5
