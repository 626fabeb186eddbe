"""Bad input to the model, growth-rule, parameter and study APIs: a ValueError naming the
parameter (never a TypeError, an AttributeError, numpy's own error or a silent result).

Each case below returned a value or raised something else before (an audit of
2026-11-28); the matched text is the parameter's name and what is allowed.
"""

from __future__ import annotations

import numpy as np
import pytest

from latency_model import TcpParams, conditional_latency, expected_latency
from latency_model.checks import check_array, check_choice, check_file_path, check_flag
from latency_model.growth import StandardRule, make_rule, rule_parameters
from latency_model.model.fluid import l0, w_f, y_f
from latency_model.model.losses import loss_count_pmf
from latency_model.model.recursion import conditional_latency_direct
from latency_model.model.thresholds import filesize_min, y_to
from latency_model.params import apply_variant
from latency_model.sim.config import SimConfig
from latency_model.studies.reproduce import run_reproduction
from latency_model.studies.sweep import SweepSpec, grid_from_items, run_sweep

P = TcpParams()


@pytest.mark.parametrize("value", [True, "3", [1, "a"], None, [True, False], {"a": 1}])
def test_check_array_refuses_booleans_and_strings(value):
    # numpy converts True to 1.0 and "3" to 3.0: a size of True packets was one packet.
    with pytest.raises(ValueError, match="x must be real numbers"):
        check_array("x", value)


def test_check_array_keeps_numbers():
    assert check_array("x", [1, 2.5]).tolist() == [1.0, 2.5]
    assert check_array("x", np.arange(3, dtype=np.int32)).tolist() == [0.0, 1.0, 2.0]


def test_check_choice_unhashable_and_check_flag():
    with pytest.raises(ValueError, match="rule must be one of a, b, got"):
        check_choice("rule", ["a"], {"a": 1, "b": 2})
    for bad in ("no", None, 2.5, 1):
        with pytest.raises(ValueError, match="normalize must be True or False"):
            check_flag("normalize", bad)
    assert check_flag("normalize", np.bool_(False)) is False


def test_check_file_path(tmp_path):
    for bad in ("", None, 5):
        with pytest.raises(ValueError, match="out must be a file path"):
            check_file_path("out", bad)
    with pytest.raises(ValueError, match="got the directory"):
        check_file_path("out", tmp_path)
    assert check_file_path("out", str(tmp_path / "x.csv")) == tmp_path / "x.csv"


@pytest.mark.parametrize("call, needle", [
    (lambda: expected_latency(P, size_packets=True), "size_packets must be real numbers"),
    (lambda: expected_latency(P, size_packets="3"), "size_packets must be real numbers"),
    (lambda: expected_latency(P, size_packets=[1], normalize=None), "normalize must be True or False"),
    (lambda: expected_latency(P, size_packets=[1], options="x"), "options must be a SolverOptions"),
    (lambda: expected_latency(P, size_packets=[1], options={}), "options must be a SolverOptions"),
    (lambda: conditional_latency(P, size_packets=[1], k=[]), r"k must be an integer or a non-empty"),
    (lambda: conditional_latency(P, size_packets=[1], k=10**6), r"k must be an integer in \[0, 10000\]"),
    (lambda: conditional_latency_direct(None, 1000, 0), "params must be a TcpParams"),
    (lambda: conditional_latency_direct(P, 1000, 0, w0=100), r"w0 must be in \(0, 30\]"),
    (lambda: conditional_latency_direct(P, 1000, 0, epsrel=float("nan")), "epsrel must be"),
    (lambda: conditional_latency_direct(P, 1000, 0, epsrel=True), "epsrel must be"),
    (lambda: conditional_latency_direct(P, 1000, 4), r"k must be an integer in \[0, 3\]"),
    (lambda: l0(None, [4]), "params must be a TcpParams"),
    (lambda: y_to(None), "params must be a TcpParams"),
    (lambda: filesize_min("x"), "params must be a TcpParams"),
    (lambda: l0(P, [4000], w0=100), r"w0 must be finite and in \(0, 30\]"),
    (lambda: y_f(P, [4], w0=100), r"w0 must be finite and in \(0, 30\]"),
    (lambda: w_f(P, [4000], w0=100), r"w0 must be finite and in \(0, 30\]"),
    (lambda: y_to(P, w0=True), "w0 must be real numbers"),
    (lambda: l0(P, [1, 2, 3], w0=[1, 2]), r"w0 must be a scalar or broadcast against the sizes"),
    (lambda: w_f(P, [1, 2, 3], w_ss=[1, 2]), r"w_ss must be a scalar or broadcast"),
    (lambda: loss_count_pmf([1000], 0.1, 1000, normalize="no"), "normalize must be True or False"),
])
def test_model_bad_input(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_model_huge_tables_are_refused_before_allocating(monkeypatch):
    # 1e9 loss counts x 8 bytes x the pmf's copies: refused with the estimate, not a
    # MemoryError (or the OOM killer) later.
    monkeypatch.setenv("LATENCY_MODEL_MEMORY_LIMIT", "1G")
    with pytest.raises(ValueError, match="loss-count law of 1 size.* would need about"):
        loss_count_pmf([1e6], 0.1, 1000, k_max=10**9)
    with pytest.raises(ValueError, match="loss-count law of 1 size.* would need about"):
        loss_count_pmf([1e6], 0.0, 1000, law="exact", k_max=10**9)
    with pytest.raises(ValueError, match="would need about"):
        expected_latency(P, size_bytes=1e300)


def test_model_valid_calls_unchanged():
    # The window override at M is still allowed, and w0 = M sends at M from the start:
    # 4000 bytes = 4 packets of 1000 in one round of 30, i.e. 4000 / (30 * 1000 / 0.1) s
    # on the fluid law's rate M MSS / RTT.
    assert l0(P, [4000], w0=float(P.rwnd))[0] == pytest.approx(4000 / (P.rwnd * P.mss_bytes / P.rtt_s))
    assert conditional_latency(P, size_packets=[3], k=[0, 1]).shape == (1, 2)


@pytest.mark.parametrize("call, needle", [
    (lambda: apply_variant({}, "lt"), "params must be a TcpParams"),
    (lambda: apply_variant(P, "lt", float("nan")), "size_bytes must be a finite number > 0"),
    (lambda: apply_variant(P, "lt", True), "size_bytes must be a real number > 0"),
    (lambda: apply_variant(P, "lt", size_threshold_bytes=-1), "size_threshold_bytes must be"),
    (lambda: P.replace(bogus=1), "TcpParams has no field 'bogus' .fields: mss_bytes"),
    (lambda: make_rule(["standard"]), "rule must be one of .*standard, got \\['standard'\\]"),
    (lambda: rule_parameters(["btcp"]), "rule must be one of"),
    (lambda: StandardRule().next_round_window(2.0, 4.0, 0), "b must be an integer >= 1"),
    (lambda: StandardRule().continuous_law(0), "b must be an integer >= 1"),
    (lambda: make_rule("generalized").continuous_law(0.5), "b must be an integer >= 1"),
])
def test_params_and_rules_bad_input(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_apply_variant_still_works():
    assert apply_variant(P, "lt").dup_lt == 2
    assert apply_variant(P, "size-based", 5000).tail_retransmit
    assert not apply_variant(P, "size-based", 50_000).tail_retransmit


GRID = ["p=0.1", "size-packets=1,2"]


@pytest.mark.parametrize("call, needle", [
    (lambda: grid_from_items(None), "items must be a list of 'NAME=VALUES' strings"),
    (lambda: grid_from_items("p=0.1"), "items must be a list of 'NAME=VALUES' strings"),
    (lambda: grid_from_items([5]), "items must be a list"),
    (lambda: grid_from_items(GRID, toml_params=5), "toml_params must be a dict"),
    (lambda: SweepSpec(grid_from_items(GRID), what="both", sim_config="x"), "sim_config must be a SimConfig"),
    (lambda: SweepSpec(grid_from_items(GRID), what="both", sim_overrides="x"), "sim_overrides must be a dict"),
    (lambda: SweepSpec(grid_from_items(GRID), what="both", sim_overrides={"p_ack": 2}), "p_ack"),
])
def test_sweep_spec_bad_input(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()


def test_sweep_overrides_reach_the_simulator_without_a_stack_axis():
    # They were read only beside a stack or recovery axis, and silently dropped otherwise.
    spec = SweepSpec(grid_from_items(GRID), what="simulation", sim_overrides={"min_rto_s": 0.2})
    assert spec.settings()["sim_config"]["min_rto_s"] == 0.2
    base = SweepSpec(grid_from_items(GRID), what="simulation", sim_config=SimConfig(min_rto_s=0.3),
                     sim_overrides={"min_rto_s": 0.2})
    assert base.settings()["sim_config"]["min_rto_s"] == 0.2


@pytest.mark.parametrize("kwargs, needle", [
    (dict(spec=None, out="x.csv"), "spec must be a SweepSpec"),
    (dict(out=""), "out must be a file path"),
    (dict(out=3), "out must be a file path"),  # (None keeps the table in memory)
    (dict(out="s.json"), "names a json file"),
    (dict(force="no"), "force must be True or False"),
    (dict(progress=1), "progress must be True or False"),
    (dict(plan="x"), "plan must be a Plan"),
    (dict(client="x"), "client must be a distributed.Client"),
    (dict(command="latency-model sweep"), "command must be a list of str"),
])
def test_run_sweep_bad_input(tmp_path, monkeypatch, kwargs, needle):
    monkeypatch.chdir(tmp_path)
    args = {"spec": SweepSpec(grid_from_items(GRID)), "out": tmp_path / "s.csv", **kwargs}
    with pytest.raises(ValueError, match=needle):
        run_sweep(args.pop("spec"), args.pop("out"), **args)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temp file


def test_run_sweep_out_is_a_directory(tmp_path):
    with pytest.raises(ValueError, match="got the directory"):
        run_sweep(SweepSpec(grid_from_items(GRID)), tmp_path)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(jobs=0), r"jobs must be an integer in \[1, "),
    (dict(jobs="2"), r"jobs must be an integer in \[1, "),
    (dict(budget="x"), "budget must be a Budget"),
    (dict(quick="yes"), "quick must be True or False"),
    (dict(force=None), "force must be True or False"),
    (dict(progress=2), "progress must be True or False"),
    (dict(command=["latency-model"]), "command must be a str"),
    (dict(stack=["rfc"]), "stack must be one of"),
])
def test_run_reproduction_checks_before_writing(tmp_path, kwargs, needle):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=needle):
        run_reproduction(out, **kwargs)
    assert not out.exists()  # tables/ and .cache/ were written before the jobs check


def test_run_reproduction_out_must_be_a_directory(tmp_path):
    f = tmp_path / "f"
    f.write_text("")
    for bad, needle in ((f, "got the file"), (None, "out must be a directory path"), ("", "directory path")):
        with pytest.raises(ValueError, match=needle):
            run_reproduction(bad)


@pytest.mark.parametrize("args, needle", [
    (("x", 1.0, 1), "cwnd must be a finite number > 0"),
    ((1.0, None, 1), "ssthresh must be a number > 0"),
    ((0.0, 1.0, 1), "cwnd must be a finite number > 0"),
    ((1.0, 1.0, 0), "mss must be an integer >= 1"),
    ((float("nan"), 1.0, 1), "cwnd must be"),
    ((1.0, 1.0, 1, -1.0), "bytes_acked must be a finite number >= 0"),
])
def test_congestion_state_bad_input(args, needle):
    from latency_model.growth import CongestionState

    with pytest.raises(ValueError, match=needle):
        CongestionState(*args)
    assert CongestionState(1000.0, float("inf"), 1000).in_slow_start  # no threshold: inf


def test_simulator_refuses_a_transfer_that_cannot_fit(monkeypatch):
    # 10^12 packets: a MemoryError (99 GiB) before; now the estimate and the limit.
    import numpy as np

    from latency_model.sim import run_many, run_transfer

    monkeypatch.setenv("LATENCY_MODEL_MEMORY_LIMIT", "1G")
    with pytest.raises(ValueError, match=r"simulating a transfer of 1,000,000,000,000 packets would need"):
        run_transfer(TcpParams(p=0.0), size_packets=10**12)
    with pytest.raises(ValueError, match=r"simulating a transfer of 1,000,000,000,000 packets \(2 runs.*would need"):
        run_many(P, 10**12 * P.mss_bytes, np.random.SeedSequence(1).spawn(2))


@pytest.mark.parametrize("field, value, needle", [
    ("mss_bytes", 65_536, r"mss_bytes must be an integer in \[1, 65535\]"),
    ("rtt_s", 1e308, r"rtt_s must be in \[1e-06, 3600\]"),
    ("rto_s", 1e308, r"rto_s must be in \[1e-06, 3600\]"),
    ("rtt_s", 5e-324, r"rtt_s must be in \[1e-06, 3600\]"),
    ("rto_s", 1e-7, r"rto_s must be in \[1e-06, 3600\]"),
    ("rwnd", 1e308, r"rwnd must be in \[1, 2147483\]"),   # 2**30 bytes / 500-byte segments
    ("b", 10**18, r"b must be an integer in \[1, 2147483\]"),
    ("dup_t", 10**308, r"dup_t must be an integer in \[1, 2147483\]"),
])
def test_tcp_params_upper_bounds(field, value, needle):
    # Each of these gave an OverflowError, NaN latencies or L_0 = 0 before.
    with pytest.raises(ValueError, match=needle):
        TcpParams(**{field: value})
    # The bounds themselves are accepted (rwnd at the largest window of 1460-byte segments).
    TcpParams(mss_bytes=65_535, rtt_s=3600.0, rto_s=3600.0, w0=1)
    TcpParams(mss_bytes=1460, rwnd=2**30 // 1460, w_ss=2**30 // 1460)


@pytest.mark.parametrize("field, value, needle", [
    ("link_rate_bps", 1e-300, "link_rate_bps must be >= 1"),
    ("delay_s", 1e308, r"delay_s must be in \[0, 3600\]"),
    ("header_bytes", 1e9, r"header_bytes must be in \[0, 65535\]"),
    ("delack_timeout_s", 1e308, r"delack_timeout_s must be in \(0, 3600\]"),
    ("clock_granularity_s", 1e308, r"clock_granularity_s must be in \[0, 3600\]"),
])
def test_sim_config_bounds(field, value, needle):
    # A rate of 1e-300 bit/s gave a mean of 1e304 s with an infinite CI.
    with pytest.raises(ValueError, match=needle):
        SimConfig(**{field: value})


def test_accuracy_map_w0_axis_refuses_pftk():
    # PFTK has no initial window: a W0 axis scored it identically at every W0.
    from latency_model.studies.accuracy import AccuracyMap

    with pytest.raises(ValueError, match="w0 1,4: model pftk does not read it .*name the models"):
        AccuracyMap(w0=(1, 4))
    with pytest.raises(ValueError, match="model pftk does not read it .*leave pftk out of the models"):
        AccuracyMap(w0=(1, 4), models="fluid,pftk")
    assert AccuracyMap(w0=(1, 4), models="fluid,packet").n_cells == 2 * AccuracyMap(models="fluid").n_cells


def test_fluid_api_refuses_what_the_recursion_does_not_read():
    # expected_latency with variant er returned NewReno's numbers (the recursion never
    # reads early_retransmit); predict, the CLI and sweep refused it, the API did not.
    er = apply_variant(P, "er")
    with pytest.raises(ValueError, match="does not read early_retransmit"):
        expected_latency(er, size_packets=[3])
    with pytest.raises(ValueError, match="does not read early_retransmit"):
        conditional_latency(er, size_packets=[3], k=1)
    with pytest.raises(ValueError, match="abc_l"):
        expected_latency(P.replace(rule=StandardRule(abc_l=2)), size_packets=[3])


def test_worker_counts_are_bounded_by_the_machine(tmp_path):
    # jobs=14144 started 304 worker processes for a quick reproduction on a 2-CPU machine
    # (over a minute of start-up) where a count beyond 4 x the CPUs buys nothing.
    import os

    from latency_model import simulate
    from latency_model.checks import check_jobs
    from latency_model.experiments.ass import run_ass

    high = 4 * (os.cpu_count() or 1)
    assert check_jobs("jobs", high) == high and check_jobs("jobs", 1.0) == 1
    for bad in (0, high + 1, 10**400, 2.5, True, "2"):
        with pytest.raises(ValueError, match=r"jobs must be an integer"):
            check_jobs("jobs", bad)
    with pytest.raises(ValueError, match=rf"jobs must be an integer in \[1, {high}\] \(4 x the"):
        run_reproduction(str(tmp_path / "r"), quick=True, jobs=14144, progress=False)
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="workers must be an integer in"):
        simulate(P, size_packets=[2], runs=10, seed=1, workers=high + 1)
    with pytest.raises(ValueError, match="jobs must be an integer in"):
        run_ass(jobs=high + 1)
