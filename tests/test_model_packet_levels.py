"""The level DP of the packet model (latency_model.model._packet_levels, issue 18).

Its answers are checked against independent ones: the object engine's scripted paths
(the flat engine must be the same state machine, bit for bit), the per-size tree DP
(the same expectation computed another way), the geometric closed form of one segment,
and the simulator (slow suite).
"""

from __future__ import annotations

import numpy as np
import pytest
from _loss_patterns import flat_scripted, random_patterns

from latency_model.model import _packet_flat as FL
from latency_model.model import _packet_levels as LV
from latency_model.model import packet as PM
from latency_model.params import TcpParams, apply_variant

MSS = 500
PATH = PM.PathConfig()


def _flat_scripted(prm, size, drops, cut, compiled=True):
    return flat_scripted(prm, size, drops, cut, PATH, compiled=compiled)



def test_flat_engine_is_the_object_engine_bit_for_bit():
    # 400 random patterns (variants, b, W0, rwnd, W_SS, short last segments, segments lost
    # up to 3 times): the same floating-point operations, so the same bits; cut at every
    # level and resumed (as the level DP runs it), the same path to 1e-9 s.
    for prm, size, drops in random_patterns(400, 3, p=0.1, max_packets=40):
        ref = PM.scripted_latency(prm, size_bytes=size, drops=drops, serialisation="rounds")
        assert _flat_scripted(prm, size, drops, False) == ref, (prm, size, drops)
        assert _flat_scripted(prm, size, drops, True) == pytest.approx(ref, abs=1e-9)


def test_wide_windows_on_the_flat_engine_are_the_object_engine_s():
    # rwnd 80-253 packets: segment sets of two and four 64-bit words (_packet_flat.set_words),
    # windows of up to 253 segments in slow start (W_SS = rwnd), files of up to 300 packets
    # (segment numbers past 64, 128 and 256, where the words wrap); the object engine
    # keeps sets of any size
    wide = 0
    for prm, size, drops in random_patterns(48, 7, p=0.1, max_packets=300,
                                            rwnds=(80, 150, 253), wide=True):
        ref = PM.scripted_latency(prm, size_bytes=size, drops=drops, serialisation="rounds")
        assert _flat_scripted(prm, size, drops, False) == ref, (prm, size, drops)
        assert _flat_scripted(prm, size, drops, True) == pytest.approx(ref, abs=1e-9)
        wide += size > 128 * MSS
    assert wide >= 20


def test_wider_segment_sets_change_no_bit():
    # the same DP with the sets (and send times) spread over two or four words: segments
    # 64-127 (and 128-255) live in the other words, which the rows of one word do not have
    prm = apply_variant(TcpParams(p=0.2, b=2, w0=4), "lt")
    sizes = [66 * MSS, 130 * MSS - 100]
    kw = dict(eps=1e-5, k_max=3, tail_eps=1e-6, max_states=300, tol=None)
    ref = LV.solve(PM._flat_consts(prm, PATH, True), prm, sizes, **kw)
    for words in (2, 4):
        got = LV.solve(PM._flat_consts(prm, PATH, True, words=words), prm, sizes, **kw)
        for s in sizes:
            assert got[s].expected_s == ref[s].expected_s
            assert np.array_equal(got[s].done_p, ref[s].done_p)
            assert np.array_equal(got[s].done_pt, ref[s].done_pt)
    with pytest.raises(ValueError, match="words must be 1, 2 or 4"):
        PM._flat_consts(TcpParams(rwnd=100), PATH, words=1)(MSS)
    assert [FL.set_words(r) for r in (4, 61, 62, 125, 126, 253)] == [1, 1, 2, 2, 4, 4]
    with pytest.raises(ValueError, match="at most 253"):
        FL.set_words(254)


def test_keys_of_a_wide_window_see_members_beyond_64_segments():
    # A 120-segment window (rwnd 120: two-word sets): the state key must tell a segment
    # resent or held 80 segments past snd_una / rcv_nxt (state_hash's members beyond the
    # first word of its window), and the folding signature must count a segment held or
    # missing there (class_keys' held and missing counts); a one-word key would not.
    prm = TcpParams(p=0.1, b=2, w0=120, rwnd=120, w_ss=120)
    C, CF = PM._flat_consts(prm, PATH)(200 * MSS)
    assert C[FL.C_SETW] == 2
    I, F = FL.new_state(C, CF, prm.w0, prm.w_ss)
    FL.resume(C, CF, I, F)
    FL.run_to_branch(C, CF, I, F)
    assert I[FL.I_SMAX] - I[FL.I_UNA] == 120 and I[FL.I_RCV] == 0
    base = I[FL.I_SMAX]
    with np.errstate(over="ignore"):
        ref, ref_cls = LV.state_hash(C, CF, I, F, base), LV.class_keys(C, CF, I, F)
        for which, seg in [(FL.RETX_SET, 80), (FL.RETX_SET, 10), (FL.BUF_SET, 81), (FL.BUF_SET, 11)]:
            J = I.copy()
            FL._put(C, J, which, seg)
            assert FL._has(C, J, which, seg) and not FL._has(C, I, which, seg)
            assert LV.state_hash(C, CF, J, F, base) != ref, (which, seg)
            if which == FL.BUF_SET:  # one more held segment: the tiers that count them
                assert all(a != b for a, b in zip(LV.class_keys(C, CF, J, F)[:3], ref_cls)), seg
        # segment 90's arrival taken away (lost, not held, not in flight): one more missing
        # segment, in every tier (the coarse ones count missing segments only)
        J, G = I.copy(), F.copy()
        j = [i for i in range(I[FL.I_NEV]) if I[FL.N_I0 + i] == 90 * 4 + FL.DATA]
        FL._delete(J, G, j[0])
        assert all(a != b for a, b in zip(LV.class_keys(C, CF, J, G), ref_cls))


def test_folding_signatures_of_a_window_beyond_the_radices_do_not_collide():
    # class_keys packs its counts in radices that hold a 61-packet window (128 for the
    # data in flight and snd_max - snd_una); beyond them two different states could get
    # one signature. A 200-segment flight (rwnd 200: four-word sets), and the same with
    # snd_una 128 segments later and one data event more: packed, 200 x 128 + 200 equals
    # 201 x 128 + 72, so without the radix check tiers 0-2 would fold them together.
    prm = TcpParams(p=0.1, b=2, w0=200, rwnd=200, w_ss=200)
    C, CF = PM._flat_consts(prm, PATH)(400 * MSS)
    I, F = FL.new_state(C, CF, prm.w0, prm.w_ss)
    FL.resume(C, CF, I, F)
    FL.run_to_branch(C, CF, I, F)
    nd = sum(1 for j in range(I[FL.I_NEV]) if I[FL.N_I0 + j] & 3 == FL.DATA)
    assert I[FL.I_SMAX] - I[FL.I_UNA] == 200 and nd == 200
    J, G = I.copy(), F.copy()
    J[FL.I_UNA] += 128
    n = J[FL.I_NEV]
    J[FL.N_I0 + n] = 150 * 4 + FL.DATA  # a second copy of segment 150 in flight
    G[FL.OFF_EVT + n] = G[FL.OFF_EVT + n - 1]
    J[FL.I_NEV] = n + 1
    assert 200 * 128 + 200 == (nd + 1) * 128 + (J[FL.I_SMAX] - J[FL.I_UNA])
    with np.errstate(over="ignore"):
        a, b = LV.class_keys(C, CF, I, F), LV.class_keys(C, CF, J, G)
    assert all(x != y for x, y in zip(a[:3], b[:3]))


def test_pure_and_compiled_kernels_agree():
    # the pure-Python twin runs the same code: same paths, same DP result
    for prm, size, drops in random_patterns(8, 5, p=0.1, max_packets=40):
        assert _flat_scripted(prm, size, drops, True, compiled=False) == \
            _flat_scripted(prm, size, drops, True)
    prm = apply_variant(TcpParams(p=0.2, b=2, w0=2), "proposal")
    sizes = [MSS, 3 * MSS, 5 * MSS - 100]
    kw = dict(eps=1e-7, k_max=3, tail_eps=1e-7, max_states=40, tol=None)
    pure = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, compiled=False, **kw)
    comp = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, compiled=True, **kw)
    for s in sizes:
        assert pure[s].expected_s == comp[s].expected_s
        assert np.array_equal(pure[s].done_p, comp[s].done_p)


@pytest.mark.parametrize("compiled", [True, False])
def test_the_tails_memo_grows_without_changing_a_bit(compiled):
    # A memo that starts at 64 nodes grows (node arrays enlarged in place, keys rehashed;
    # the borrowing signatures' table apart) many times over; a grown memo holds the same
    # nodes, values and lenders as one large from the start, so the results are the
    # same bits.
    prm = apply_variant(TcpParams(p=0.2, b=1, w0=4), "newreno")
    sizes = [3 * MSS, 6 * MSS - 100]
    kw = dict(eps=1e-5, k_max=3, tail_eps=1e-6, max_states=200, tol=None,
              compiled=compiled)
    small, big = {}, {}
    grown = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, memo=64, stats=small, **kw)
    ref = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, memo=1 << 18, stats=big, **kw)
    assert small["memo_nodes"] == big["memo_nodes"] > 64 * 16
    assert small["tail_signatures"] == big["tail_signatures"] > 4 * 128
    for s in sizes:
        assert grown[s].expected_s == ref[s].expected_s
        assert np.array_equal(grown[s].done_p, ref[s].done_p)
        assert np.array_equal(grown[s].done_pt, ref[s].done_pt)


@pytest.mark.parametrize("variant, b, w0, p", [
    ("newreno", 2, 2, 0.1), ("newreno", 1, 10, 0.05), ("lt", 1, 4, 0.1),
    ("lt", 2, 1, 0.2), ("proposal", 1, 4, 0.1), ("proposal", 2, 2, 0.2),
    ("er", 2, 4, 0.1), ("er", 1, 1, 0.05),
])
def test_level_dp_equals_the_tree_dp(variant, b, w0, p):
    # The same expectation over loss patterns, organised by levels relative to snd_max
    # (merging paths of different histories) instead of per size: with no folding and
    # truncation at 1e-11 both are exact to ~1e-6 (measured <= 4.2e-6 relative on these;
    # the level DP continues its dropped mass, the tree DP drops it).
    prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
    sizes = [1, 2, 3, 5, 8, 11]
    lv = PM.expected_latency(prm, size_packets=sizes, method="levels", max_states=0,
                             eps=1e-11, stationary_tol=None)
    tr = PM.expected_latency(prm, size_packets=sizes, method="tree", max_states=0,
                             eps=1e-11)
    for x, y in zip(lv, tr):
        assert x.expected_latency_s == pytest.approx(y.expected_latency_s, rel=2e-5)
        assert x.loss_count_pmf == pytest.approx(y.loss_count_pmf, rel=1e-6, abs=1e-12)
        assert x.conditional_latency_s == pytest.approx(y.conditional_latency_s, rel=1e-5)


def test_a_transfer_ending_at_a_branch_point_s_instant_is_not_a_failure():
    # With a 0.2 s minimum RTO (two RTTs) spurious timeouts resend segments the receiver
    # holds; one such arrival can coincide with the last ACK's, and the loss-free remaining
    # time from it is 0 up to the rebased times' rounding (-1.4e-17 s here), which the tail
    # took for a state out of event slots (RuntimeError, status 2). Against the tree DP.
    from latency_model.model.packet import PathConfig

    prm = apply_variant(TcpParams(p=0.02, b=1), "lt")
    path = PathConfig(delack_timeout_s=0.04, min_rto_s=0.2)
    lv = PM.expected_latency(prm, size_packets=[15], path=path, method="levels")  # the defaults truncate there
    tr = PM.expected_latency(prm, size_packets=[15], path=path, method="tree", eps=1e-10)
    # measured 1.0e-5 apart (0.443405 s against 0.443401 s): the default truncation's error
    assert lv[0].expected_latency_s == pytest.approx(tr[0].expected_latency_s, rel=1e-4)


def test_short_last_segments_hand_off_one_level_earlier():
    # a short last segment decides the transition that sends it: sizes 1..6 packets less
    # 120 B against the tree DP
    prm = apply_variant(TcpParams(p=0.1, b=1, w0=3), "er")
    sizes = [k * MSS - 120 for k in range(1, 7)] + [4 * MSS]
    lv = PM.expected_latency(prm, size_bytes=sizes, method="levels", max_states=0,
                             eps=1e-11, stationary_tol=None)
    tr = PM.expected_latency(prm, size_bytes=sizes, method="tree", max_states=0, eps=1e-11)
    for x, y in zip(lv, tr):
        assert x.expected_latency_s == pytest.approx(y.expected_latency_s, rel=2e-5)


def test_one_segment_is_the_geometric_closed_form_on_the_level_dp():
    # n = 1: k losses in a row cost sum_{j<k} min(2^j, 60) s of timer; P(k) = p^k (1 - p)
    p = 0.2
    prm = TcpParams(p=p, b=1, w0=1)
    r = PM.expected_latency(prm, size_packets=[1], method="levels", eps=1e-15)[0]
    ks = np.arange(200)
    waits = np.concatenate([[0.0], np.cumsum(np.minimum(2.0 ** ks, 60.0))])[:200]
    s = (MSS + 40) * 8 / 100e6
    exact = float(np.sum(p ** ks * (1 - p) * (waits + s + 0.1)))
    assert r.expected_latency_s == pytest.approx(exact, rel=1e-9)


def test_key_reductions_are_exact():
    # cwnd >= rwnd and ssthresh under cwnd (outside recovery and back-off) and the
    # partial-ACK flag outside recovery are keyed as irrelevant: the same answer as the
    # full key, with a small rwnd so that cwnd reaches it
    prm = apply_variant(TcpParams(p=0.1, b=1, w0=2, rwnd=4), "lt")
    sizes = [3 * MSS, 9 * MSS, 16 * MSS]
    kw = dict(eps=1e-12, k_max=3, tail_eps=1e-12, tol=None)
    try:
        LV._REDUCE = False
        full = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, compiled=False, **kw)
    finally:
        LV._REDUCE = True
    red = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, compiled=False, **kw)
    for s in sizes:  # merging other paths shifts what falls under eps: ~1e-9 apart
        assert red[s].expected_s == pytest.approx(full[s].expected_s, rel=1e-7)


def test_stationary_extrapolation_matches_the_levels_it_skips():
    # once the level distribution is stationary (here from level 85), E[T(N)] grows by
    # a constant per packet: the extrapolated 140 packets equal the level-by-level value
    # to the stationary_tol given (the projected drift of the increment: 1e-3; measured
    # 8.8e-4 apart, same folding)
    # (the progress callback sees every level run, then the end: fewer levels when the
    # rest is extrapolated)
    prm = TcpParams(p=0.2, b=2, w0=2)
    kw = dict(size_packets=[40, 140], method="levels", max_states=300, eps=1e-6)
    seen = {"ext": [], "full": []}
    ext = PM.expected_latency(prm, stationary_tol=1e-3, progress=lambda *a: seen["ext"].append(a), **kw)
    full = PM.expected_latency(prm, stationary_tol=None, progress=lambda *a: seen["full"].append(a), **kw)
    top = 139  # the level where 140 packets are handed to the file's end
    assert seen["full"] == [(L, top) for L in range(top)] + [(top, top)]
    stop = len(seen["ext"]) - 1
    assert 40 < stop < top and seen["ext"] == [(L, top) for L in range(stop)] + [(top, top)]
    with pytest.raises(ValueError, match="progress must be a callable"):
        PM.expected_latency(prm, progress=1, **kw)
    assert [r.extrapolated for r in ext] == [False, True]
    assert not any(r.extrapolated for r in full)
    assert ext[0].expected_latency_s == full[0].expected_latency_s
    assert ext[1].expected_latency_s == pytest.approx(full[1].expected_latency_s, rel=2e-3)
    assert np.isnan(ext[1].conditional_latency_s).all()


def test_level_cap_bounds_the_states_kept_for_their_timer_alone():
    # fold_level with given signatures (a stand-in for the classes kernel): 100 probable
    # states, max_states 10. Every state has its own tier-1 signature (the timer's due
    # time differs) and, but for fifteen, the kept states' tier-2 one. The 10 most
    # probable beyond the 10 kept stay (LEVEL_CAP = 2: 20 in all), the rest fold by tier 2
    # into the kept states in proportion to their masses. Of the fifteen, the ten that
    # share the kept states' tier-3 signature fold there, as the level is full; the five
    # with signatures of their own on every tier stay, as they match no kept state.
    # No probability and no elapsed time is lost.
    n, keep = 100, 10
    assert LV.LEVEL_CAP == 2
    pool = LV._Pool(128, 4, 4, 3)
    mass = np.linspace(1.0, 0.01, n) / 50.0
    pool.I[:n, 0] = np.arange(n)
    pool.P[:n, 0] = 0.7 * mass
    pool.P[:n, 2] = 0.3 * mass
    pool.Q[:n, 1] = mass * np.linspace(1.0, 3.0, n)
    pool.cnt[0] = n
    own = np.isin(np.arange(n), [25, 37, 56, 75, 94])
    orphan = (np.arange(n) >= 40) & (np.arange(n) < 50)  # a tier-2 signature of their own
    sig = np.empty((LV.NTIERS, n), np.int64)
    sig[0] = sig[1] = np.arange(n)
    sig[LV.NO_TIMER] = np.where(own | orphan, 1000 + np.arange(n), 7)
    for tier in range(LV.COARSE, LV.NTIERS):
        sig[tier] = np.where(own, 1000 * tier + np.arange(n), 7)

    def classes(C, CF, I, F, m, out):
        out[:, :m] = sig[:, I[:m, 0]]

    p0, q0 = pool.P[:n].sum(), pool.Q[:n].sum()
    LV.fold_level(pool, keep, 1e-7, classes, None, None)
    stay = np.sort(pool.I[:pool.cnt[0], 0])
    cap = LV.LEVEL_CAP * keep
    assert stay.tolist() == list(range(cap)) + np.flatnonzero(own).tolist()
    m = pool.cnt[0]  # (a folded path takes on its kept state's loss counts)
    assert pool.P[:m].sum() == pytest.approx(p0, rel=1e-12)
    assert pool.Q[:m].sum() == pytest.approx(q0, rel=1e-12)
    folded = mass[cap:][~own[cap:]].sum()
    assert pool.folded == pytest.approx(folded, rel=1e-12)
    # the states beyond the cap went to the kept ones only, in proportion to their mass
    grown = pool.P[:keep].sum(axis=1) / mass[pool.I[:keep, 0]]
    assert np.allclose(grown, 1.0 + folded / mass[:keep].sum(), rtol=1e-12)


def test_folding_bounds_the_level_and_keeps_the_mass():
    # folding moves probability between states, never loses it: the finished mass is 1
    # (to rounding); the levels shrink to LEVEL_CAP x max_states probable states plus
    # those that match no kept state on any tier and one light state per coarsest
    # signature that none matches (measured: at most 2,014 states a level and 12,268 over
    # all levels, against 6,208 and 35,604 unfolded; 5,481 and 29,507 while only the
    # states kept for their timer were bounded)
    prm = TcpParams(p=0.1, b=2, w0=2)
    st, st0 = {}, {}
    kw = dict(eps=1e-7, tail_eps=1e-7, k_max=3, tol=None)
    r = LV.solve(PM._flat_consts(prm, PATH), prm, [30 * MSS], max_states=200, stats=st, **kw)
    LV.solve(PM._flat_consts(prm, PATH), prm, [30 * MSS], max_states=0, stats=st0, **kw)
    r = r[30 * MSS]
    assert float(r.done_p.sum()) == pytest.approx(1.0, abs=1e-9)
    assert st["folded"] > 0.0
    assert max(st["level_states"]) < 0.5 * max(st0["level_states"])
    assert sum(st["level_states"]) < 0.5 * sum(st0["level_states"])


def test_growing_past_the_memory_limit_is_refused_with_a_clear_error(monkeypatch, capsys):
    # Before it enlarges its memo or its level pools, the level DP compares this
    # process's resident memory plus the enlargement with the memory limit and refuses
    # (BudgetError, a ValueError; the CLI: one line, exit 2) instead of being killed by
    # the system. Here the process is said to sit just under a 1 GiB limit.
    from latency_model.checks import BudgetError
    from latency_model.cli import main

    monkeypatch.setenv("LATENCY_MODEL_MEMORY_LIMIT", "1G")
    monkeypatch.setattr(LV, "resident_bytes", lambda: 2**30 - 1024)
    prm = TcpParams(p=0.2, b=1, w0=4)
    with pytest.raises(BudgetError) as exc:
        LV.solve(PM._flat_consts(prm, PATH), prm, [6 * MSS], eps=1e-5, k_max=3,
                 tail_eps=1e-6, max_states=200, tol=None, memo=64)
    msg = str(exc.value)
    assert "the packet model (level DP; p = 0.2, W0 = 4, b = 1) enlarging its" in msg
    assert "more than the limit of 1 GiB" in msg and "a larger eps or a smaller max_states" in msg
    # the CLI's own estimate (a process's base memory) passes; the DP's guard refuses
    code = main(["latency", "--model", "packet", "--size-packets", "20", "--p", "0.2",
                 "--w0", "4"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "--model packet:" in err and "enlarging its" in err and "1 GiB" in err
    # with room to spare, the same call runs
    monkeypatch.setattr(LV, "resident_bytes", lambda: 2**20)
    ok = LV.solve(PM._flat_consts(prm, PATH), prm, [6 * MSS], eps=1e-5, k_max=3,
                  tail_eps=1e-6, max_states=200, tol=None, memo=64)
    assert ok[6 * MSS].done_p.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("variant, b, w0, p", [
    ("newreno", 1, 10, 0.1), ("lt", 2, 4, 0.2), ("proposal", 1, 2, 0.05), ("er", 2, 10, 0.1),
])
def test_a_receiver_window_beyond_the_file_is_the_file_s(variant, b, w0, p, monkeypatch):
    # rwnd = 200 packets: a window of the file's whole packets never binds where rwnd
    # does not (packet.binding_rwnd), so the level DP runs the largest file's 8 packets
    # of window (one-word segment sets): equal to the tree DP, which runs the object
    # engine with rwnd = 200 itself, to the tolerance of test_level_dp_equals_the_tree_dp
    prm = apply_variant(TcpParams(p=p, b=b, w0=w0, rwnd=200, w_ss=200), variant)
    sizes = [1, 2, 3, 5, 8]
    assert PM.binding_rwnd(prm, 8 * MSS) == 8.0
    rwnds = []
    solve = LV.solve
    monkeypatch.setattr(LV, "solve", lambda consts, *a, **k: rwnds.append(
        consts(MSS)[1][FL.CF_RWND] / MSS) or solve(consts, *a, **k))
    lv = PM.expected_latency(prm, size_packets=sizes, max_states=0, eps=1e-11,
                             stationary_tol=None)  # auto: the level DP
    assert rwnds == [8.0]
    tr = PM.expected_latency(prm, size_packets=sizes, method="tree", max_states=0,
                             eps=1e-11)
    for x, y in zip(lv, tr):
        assert x.expected_latency_s == pytest.approx(y.expected_latency_s, rel=2e-5)
        assert x.loss_count_pmf == pytest.approx(y.loss_count_pmf, rel=1e-6, abs=1e-12)


def test_method_choice_and_refusals():
    prm = TcpParams(p=0.1, rwnd=300, w0=2)
    with pytest.raises(ValueError, match="rwnd <= 253 packets or files of at most 253"):
        PM.expected_latency(prm, size_packets=[3, 254], method="levels")
    with pytest.raises(ValueError, match="got rwnd 300 and a file of 400 packets"):
        PM.expected_latency(prm, size_packets=[400], method="levels")
    assert PM.binding_rwnd(prm, 254 * MSS) == 254.0
    assert PM.binding_rwnd(prm, 400 * MSS) == 300.0
    assert PM.binding_rwnd(TcpParams(rwnd=30.5), 31 * MSS) == 30.5
    with pytest.raises(ValueError, match="quantiles"):
        PM.expected_latency(TcpParams(p=0.1), size_packets=[3], method="levels",
                            quantiles=True)
    with pytest.raises(ValueError, match="method"):
        PM.expected_latency(TcpParams(p=0.1), size_packets=[3], method="fast")
    with pytest.raises(ValueError, match="stationary_tol"):
        PM.expected_latency(TcpParams(p=0.1), size_packets=[3], stationary_tol=2.0)


@pytest.mark.slow
@pytest.mark.parametrize("variant, b, w0, p, n", [
    ("newreno", 2, 2, 0.05, 60), ("proposal", 1, 4, 0.1, 40), ("lt", 2, 10, 0.02, 100),
])
def test_long_transfers_agree_with_the_simulator(variant, b, w0, p, n):
    # 3 standard errors of 20,000 runs, plus 1 % for truncation (it lowers E[T]) and
    # folding (either way; docs/model.md sections 4 and 6.2 measure both: within 2.2 %
    # at 40-100 packets with W0 <= 4; these cells' seeded runs fall inside this bound)
    from latency_model.sim import SimConfig, simulate

    prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
    r = PM.expected_latency(prm, size_packets=[n])[0]
    s = simulate(prm, size_packets=[n], runs=20000, seed=17, config=SimConfig(),
                 engine="compiled").results[0]
    se = (s.ci95_s[1] - s.ci95_s[0]) / (2 * 1.959964)
    assert abs(r.expected_latency_s - s.mean_latency_s) <= 3 * se + 0.01 * s.mean_latency_s


@pytest.mark.slow
def test_a_wide_window_agrees_with_the_simulator():
    # rwnd = W_SS = 100 packets: slow start from W0 = 10 (b = 1) passes 61 segments in
    # flight, the segment sets' two words (_packet_flat.set_words) are used; the bound of
    # test_long_transfers_agree_with_the_simulator (measured +0.76 %, 0.4 % a standard error)
    from latency_model.sim import SimConfig, simulate

    prm = TcpParams(p=0.01, b=1, w0=10, rwnd=100, w_ss=100)
    r = PM.expected_latency(prm, size_packets=[100])[0]
    s = simulate(prm, size_packets=[100], runs=20000, seed=11, config=SimConfig(),
                 engine="compiled").results[0]
    se = (s.ci95_s[1] - s.ci95_s[0]) / (2 * 1.959964)
    assert abs(r.expected_latency_s - s.mean_latency_s) <= 3 * se + 0.01 * s.mean_latency_s


@pytest.mark.parametrize("b", [1, 2])
def test_folding_signatures_tell_a_lost_segment_from_a_delivered_one(b):
    # the first segment lost at the head of the link against the same segment delivered
    # (its ACK, or delayed-ACK timer, still to come): windows, in-flight data, held
    # segments and snd_una are equal, so only the missing count tells them apart; a
    # signature without it folded the loss away (docs/model.md section 4). Every tier
    # must separate them, and each must count one missing segment on the lost side.
    prm = TcpParams(p=0.1, b=b, w0=1)
    C, CF = PM._flat_consts(prm, PATH)(20 * MSS)
    I, F = FL.new_state(C, CF, prm.w0, prm.w_ss)
    FL.resume(C, CF, I, F)
    FL.run_to_branch(C, CF, I, F)
    keys = {}
    for lost in (False, True):
        I2, F2 = I.copy(), F.copy()
        FL.deliver_head(C, CF, I2, F2, lost)
        with np.errstate(over="ignore"):  # the tier-0 hash wraps, as compiled
            keys[lost] = LV.class_keys(C, CF, I2, F2)
        assert I2[FL.I_UNA] == 0 and I2[FL.I_SMAX] == 1
    assert len(keys[True]) == LV.NTIERS
    for tier in range(LV.NTIERS):
        assert keys[True][tier] != keys[False][tier], tier
    assert keys[True][LV.NTIERS - 1] - keys[False][LV.NTIERS - 1] == 1  # missing: 1 vs 0


def _first_branch_point():
    """(C, CF, I, F) at the first branch point of 20 packets, b = 2, W0 = 4, p = 0.1: four
    segments in flight, the retransmission timer armed."""
    prm = TcpParams(p=0.1, b=2, w0=4)
    C, CF = PM._flat_consts(prm, PATH)(20 * MSS)
    I, F = FL.new_state(C, CF, prm.w0, prm.w_ss)
    FL.resume(C, CF, I, F)
    FL.run_to_branch(C, CF, I, F)
    return C, CF, I, F


def test_folding_signatures_tell_a_blocked_recovery_and_a_held_back_off():
    # NewReno's recovery point still ahead (recover >= snd_una: no new fast retransmit,
    # RFC 6582 3.2 step 1) and, when backed off, a resent segment outstanding (no RTT
    # sample: the back-off stays, RFC 6298 5) decide whether the next losses cost a fast
    # retransmit or a (doubled) timeout: tiers 1-4 must separate them.
    C, CF, I, F = _first_branch_point()
    assert I[FL.I_SMAX] == 4 and I[FL.I_RECOVER] < I[FL.I_UNA] == 0
    blocked = I.copy()
    blocked[FL.I_RECOVER] = I[FL.I_SMAX] - 1
    backed, resent = I.copy(), I.copy()
    backed[FL.I_BACKOFF] = resent[FL.I_BACKOFF] = 1
    FL._put(C, resent, FL.RETX_SET, 1)
    with np.errstate(over="ignore"):  # the tier-0 hash wraps, as compiled
        k = {name: LV.class_keys(C, CF, x, F)
             for name, x in [("free", I), ("blocked", blocked), ("backed", backed),
                             ("resent", resent)]}
    for tier in range(1, LV.NTIERS):
        assert k["free"][tier] != k["blocked"][tier], tier
        assert k["backed"][tier] != k["resent"][tier], tier
        assert k["free"][tier] != k["backed"][tier], tier


def test_folding_signatures_tell_when_the_retransmission_timer_fires():
    # Two states equal but for the retransmission timer's due time: if the flight is lost
    # the sender waits for that timer, so their futures differ by the gap (folds across it
    # made E[T] 3.2 % lower at NewReno, b = 1, W0 = 10, p = 0.2, 30 packets: docs/model.md
    # section 4). Tiers 0 and 1 must separate due times a round trip (2d) apart and keep
    # together those within one round trip; tiers 2-4, which a state falls back on when
    # no kept state shares its tier 1 (so that max_states still bounds a level), ignore it.
    C, CF, I, F = _first_branch_point()
    kinds = [I[FL.N_I0 + j] & 3 for j in range(I[FL.I_NEV])]
    assert kinds.count(FL.RTO) == 1 and kinds[-1] == FL.RTO  # due last: 1 s from now
    rtt = 2.0 * CF[FL.CF_D]
    due = F[FL.OFF_EVT + I[FL.I_NEV] - 1]
    assert int(due / rtt) == int((due + 1e-3) / rtt)  # the test's shift stays in the slot
    near, later = F.copy(), F.copy()
    near[FL.OFF_EVT + I[FL.I_NEV] - 1] = due + 1e-3
    later[FL.OFF_EVT + I[FL.I_NEV] - 1] = due + rtt
    with np.errstate(over="ignore"):  # the tier-0 hash wraps, as compiled
        k = {name: LV.class_keys(C, CF, I, x)
             for name, x in [("now", F), ("near", near), ("later", later)]}
    for tier in range(LV.NTIERS):
        assert k["now"][tier] == k["near"][tier], tier
        assert (k["now"][tier] != k["later"][tier]) == (tier <= 1), tier


@pytest.mark.parametrize("variant, b, w0, p, n", [("newreno", 1, 4, 0.2, 8),
                                                  ("proposal", 2, 2, 0.1, 10)])
def test_truncated_tail_nodes_borrow_later_losses(variant, b, w0, p, n):
    # A tail node under tail_eps finished loss-free leaves its later losses out (E[T]
    # low); borrowing those of the most probable expanded node of its signature, from its
    # own loss-free time, keeps probability (sum 1) and recovers part of that (measured:
    # 29-32 % of the gap at tail_eps 1e-4 and 1e-5 on these cells). Reference: no
    # truncation that matters (tail_eps 1e-12, eps 1e-10, no folding).
    prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
    run = lambda **kw: LV.solve(PM._flat_consts(prm, PATH), prm, [n * MSS], eps=1e-10,  # noqa: E731
                                k_max=3, max_states=0, tol=None, **kw)[n * MSS]
    ref = run(tail_eps=1e-12)
    st = {}
    borrow = run(tail_eps=1e-5, stats=st)
    lossfree = run(tail_eps=1e-5, tail_borrow=False)
    assert st["tail_borrowed"] > 0
    for r in (ref, borrow, lossfree):
        assert r.done_p.sum() == pytest.approx(1.0, abs=1e-12)
    assert lossfree.expected_s < borrow.expected_s
    assert abs(ref.expected_s - borrow.expected_s) < 0.9 * (ref.expected_s - lossfree.expected_s)


@pytest.mark.parametrize("variant, b, w0, p, n", [("newreno", 1, 4, 0.2, 8),
                                                  ("proposal", 2, 2, 0.1, 10)])
def test_a_tail_node_with_no_lender_is_expanded_and_lends(variant, b, w0, p, n):
    # A truncated tail node whose signature no expanded node has yet used to finish
    # loss-free (tail_seed=0); now it is expanded unless lighter than tail_eps x
    # TAIL_SEED, and lends to the next truncated node of its signature. So nearly every
    # truncated node borrows, and E[T] moves from the borrowing value toward the
    # untruncated one without passing it (measured at tail_eps 1e-4: 2.02513 -> 2.02669 s,
    # reference 2.04333 s; 1.12170 -> 1.12261 s, reference 1.13019 s), for a few dozen
    # more nodes.
    prm = apply_variant(TcpParams(p=p, b=b, w0=w0), variant)
    run = lambda **kw: LV.solve(PM._flat_consts(prm, PATH), prm, [n * MSS], eps=1e-10,  # noqa: E731
                                k_max=3, max_states=0, tol=None, tail_eps=1e-4, **kw)[n * MSS]
    ref = LV.solve(PM._flat_consts(prm, PATH), prm, [n * MSS], eps=1e-10, k_max=3,
                   max_states=0, tol=None, tail_eps=1e-12)[n * MSS]
    st0, st1 = {}, {}
    unseeded = run(tail_seed=0.0, stats=st0)
    seeded = run(stats=st1)
    assert st1["tail_truncated"] < st0["tail_truncated"] / 4
    assert st1["tail_borrowed"] > st0["tail_borrowed"]
    assert st0["memo_nodes"] < st1["memo_nodes"] < 1.1 * st0["memo_nodes"]
    assert seeded.done_p.sum() == pytest.approx(1.0, abs=1e-12)
    assert unseeded.expected_s < seeded.expected_s < ref.expected_s


def test_light_branch_points_fold_into_probable_ones_of_their_signature():
    # _fold_branches (a level's sub-step): every negligible branch point whose signature
    # (tier 1, else 2, 3, 4) a probable one has folds into it, masses added per loss
    # count, so no probability, elapsed time or loss count is lost; the light ones left
    # (finished loss-free by advance_level) match no probable one even on tier 4
    rng = np.random.default_rng(18)
    prm = TcpParams(p=0.2, b=1, w0=10)
    C, CF = PM._flat_consts(prm, PATH)(LV.BIG * MSS)
    C[FL.C_LIM] = 1 << 30
    I0, F0 = FL.new_state(C, CF, prm.w0, prm.w_ss)
    FL.resume(C, CF, I0, F0)
    FL.run_to_branch(C, CF, I0, F0)
    rows = []
    for _ in range(300):  # branch points after up to 12 random arrivals
        I, F = I0.copy(), F0.copy()
        for _ in range(int(rng.integers(0, 13))):
            FL.deliver_head(C, CF, I, F, bool(rng.random() < 0.3))
            FL.run_to_branch(C, CF, I, F)
        rows.append((I, F))
    xn = len(rows)
    XI = np.array([r[0] for r in rows])
    XF = np.array([r[1] for r in rows])
    eps = 1e-7
    XP = rng.random((xn, 3)) * np.where(rng.random(xn) < 0.5, 1e-10, 1e-3)[:, None]
    XQ = XP * rng.random((xn, 3)) * 5.0
    P0, Q0 = XP.copy(), XQ.copy()
    light = np.array([LV._negligible(XP[j].sum(), XF[j], CF, eps) for j in range(xn)])
    with np.errstate(over="ignore"):  # the signature hash wraps, as compiled
        sig = np.array([LV.class_keys(C, CF, XI[j], XF[j]) for j in range(xn)])
        gone = LV._fold_branches(C, CF, eps, XI, XF, XP, XQ, xn)
    assert light.sum() > 50 and gone.sum() > 10
    assert not (gone & ~light).any()  # only light ones fold
    np.testing.assert_allclose(XP[~gone].sum(axis=0), P0.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(XQ[~gone].sum(axis=0), Q0.sum(axis=0), rtol=1e-12)
    changed = ~np.isclose(XP, P0).all(axis=1)
    assert not (changed & light).any()  # targets are probable ones
    coarsest = LV.NTIERS - 1
    heavy = set(sig[~light, coarsest])
    for j in np.flatnonzero(light & ~gone):  # the rest had nowhere to go
        assert sig[j, coarsest] not in heavy
    for j in np.flatnonzero(gone):
        assert sig[j, coarsest] in heavy


def test_the_level_pools_are_enlarged_before_a_level_fills_them(monkeypatch):
    # LT, b = 1, p = 0.2: level 12 holds 2,254 states with 5,231 distinct children, more
    # than the first pools' 4,096 rows. The pools are enlarged before that level (by the
    # children per state of the last two levels) instead of running it again (three levels
    # ran twice for sizes 1-20 before); a level that fills them anyway (here with no
    # enlargement ahead) runs again in larger pools, with the same bits either way.
    prm = apply_variant(TcpParams(p=0.2, b=1, w0=2), "lt")
    sizes = [n * MSS for n in (5, 14)]
    kw = dict(eps=1e-7, k_max=3, tail_eps=1e-8, max_states=16000, tol=None)
    ahead, small = {}, {}
    ref = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, stats=ahead, **kw)
    assert ahead.get("level_reruns", 0) == 0
    assert max(ahead["level_states"]) > 2000
    monkeypatch.setattr(LV, "POOL_MARGIN", 0.0)
    again = LV.solve(PM._flat_consts(prm, PATH), prm, sizes, pool=16, stats=small, **kw)
    assert small["level_reruns"] >= 1
    for s in sizes:
        assert again[s].expected_s == ref[s].expected_s
        assert np.array_equal(again[s].done_p, ref[s].done_p)


@pytest.mark.parametrize("path", [PATH, PM.PathConfig(link_rate_bps=1e6, header_bytes=40),
                                  PM.PathConfig(fin=True, quick_acks=2, delack_timeout_s=0.04)])
def test_the_serialisation_shift_is_the_object_engine_s(path):
    # The loss-free transfer's serialisation (added back to the rounds-model DP) runs on
    # the compiled flat engine: the same bits as the object engine's two scripted runs
    # (exact minus rounds), short last segments and every variant included.
    for variant, b, w0, rwnd in [("newreno", 2, 2, 30), ("lt", 1, 10, 30), ("proposal", 1, 3, 61),
                                 ("er", 2, 1, 30)]:
        prm = apply_variant(TcpParams(p=0.1, b=b, w0=w0, rwnd=rwnd), variant)
        for n in (1, 2, 3, 7, 20, 41, 200):
            for size in (n * MSS, n * MSS - 137):
                if size < 1:
                    continue
                want = (PM.scripted_latency(prm, size_bytes=size, path=path)
                        - PM.scripted_latency(prm, size_bytes=size, path=path, serialisation="rounds"))
                assert PM._serialisation_shift(prm, size, path) == want, (variant, b, w0, size)


def test_the_pools_are_not_enlarged_ahead_from_the_first_levels_few_states(monkeypatch):
    # W0 = 10, b = 1: the first levels' one or few states have hundreds of children each.
    # Estimated from those, the pools asked for 16.8 million rows (115 GiB) at level 11 and
    # the call was refused; levels of fewer than POOL_SPREAD_FROM states no longer count,
    # and an enlargement ahead is at most 4x and never refused (1 GiB above what this
    # process holds here).
    monkeypatch.setenv("LATENCY_MODEL_MEMORY_LIMIT", str(LV.resident_bytes() + 2**30))
    prm = apply_variant(TcpParams(p=0.2, b=1, w0=10), "newreno")
    st = {}
    LV.solve(PM._flat_consts(prm, PATH), prm, [12 * MSS], eps=1e-6, k_max=3, tail_eps=1e-7,
             max_states=2000, tol=None, stats=st)
    assert max(st["level_states"]) > 500
