"""The command-line contract: output formats, files, and one-line errors with exit status 2."""

import csv
import json
import subprocess
import sys

import pytest

from latency_model.cli import main
from latency_model.model.thresholds import PAPER_TABLES
from _cli import run


def test_tables_json_contract(capsys):
    code, out, err = run(capsys, "tables", "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)["tables"]
    assert len(rows) == 8
    for row in rows:
        assert set(row) >= {"b", "phase", "lt", "w0", "model", "paper"}
        assert row["b"] in (1, 2) and row["phase"] in ("slow_start", "congestion_avoidance")
        assert row["w0"] == [1, 2, 3, 4]
        assert row["paper"] == list(PAPER_TABLES[(row["b"], row["phase"], row["lt"])])
        assert all(isinstance(v, int) for v in row["model"])
    assert sum(m == p for r in rows for m, p in zip(r["model"], r["paper"])) == 32


def test_tables_text_marks_differences(capsys):
    code, out, _ = run(capsys, "tables")
    assert code == 0
    assert "Table 1 (b = 1)" in out and "Table 2 (b = 2)" in out
    assert "model cells differing from the paper: 0 of 32" in out
    assert out.count("[0]") == 4  # the plain rule's four congestion-avoidance cells


def test_tables_out_writes_csv(tmp_path, capsys):
    code, _, _ = run(capsys, "tables", "--out", str(tmp_path))
    assert code == 0
    with open(tmp_path / "table2.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 16
    ca = [r for r in rows if r["phase"] == "congestion_avoidance" and r["lt"] == "False"]
    assert [int(r["paper"]) for r in ca] == [11, 10, 6, 1]
    assert [int(r["model"]) for r in ca] == [11, 10, 6, 1]
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write leaves no temp file


# `reproduce` (tables, figures, report) is tested in test_reproduce.py with a small budget.


def test_thresholds_json(capsys):
    code, out, _ = run(capsys, "thresholds", "--w0", "2", "--b", "1", "--json")
    assert code == 0
    rows = {r["time_model"]: r for r in json.loads(out)["thresholds"]}
    assert rows["rounds"]["y_to_packets"] == 2
    assert rows["rounds"]["filesize_min_packets"] == 5  # Table 1, W0 = 2: y_to 2 + dup_t 3


@pytest.mark.parametrize(
    "argv,message",
    [
        (["thresholds", "--b", "0"], "latency-model: error: --b must be an integer in [1, 2147483], got 0"),
        (["thresholds", "--p", "1"], "latency-model: error: --p must be in [0, 1), got 1"),
        (["thresholds", "--mss", "0"], "latency-model: error: --mss-bytes must be an integer in [1, 65535], got 0"),
        (["thresholds", "--w0", "40"], "latency-model: error: --w0 must be <= --rwnd (30 packets), got 40"),
        (["thresholds", "--rtt", "nan"], "latency-model: error: --rtt-s must be a finite number in [1e-06, 3600], got nan"),
        (["thresholds", "--variant", "reno"], "latency-model: error: --variant must be one of"),
        (["thresholds", "--rule", "vegas"], "latency-model: error: --rule must be one of"),
        (["thresholds", "--rule-param", "x"], "latency-model: error: --rule-param must be KEY=VALUE"),
        (["thresholds", "--b", "x"], "latency-model: error: argument --b: not a number: 'x'"),
        (["tables", "--nope"], "latency-model: error: unrecognized arguments: --nope"),
        (["frobnicate"], "latency-model: error: argument COMMAND: invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith(message), err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("module", ["latency_model.cli", "latency_model"])
def test_console_script_never_prints_a_traceback(module, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", module, "thresholds", "--p", "-0.5"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "latency-model: error: --p must be in [0, 1), got -0.5"
    # A CliError raised in a subcommand module (not cli.py itself) is caught too.
    (tmp_path / "f").write_text("")
    proc = subprocess.run([sys.executable, "-m", module, "experiment", "btcp", "--out", str(tmp_path / "f")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("latency-model: error: --out must be a directory")
    assert proc.stderr.count("\n") == 1


def test_latency_model_flag_defaults_to_the_papers_recursion(capsys):
    from latency_model import TcpParams, expected_latency

    code, out, _ = run(capsys, "latency", "--size-packets", "4,9", "--p", "0.05", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["params"]["model"] == "fluid"
    want = expected_latency(TcpParams(p=0.05), size_packets=[4, 9]).expected_latency_s
    assert [r["expected_latency_s"] for r in data["results"]] == list(want)
    assert run(capsys, "latency", "--size-packets", "4", "--model", "fluid", "--json")[0] == 0


def test_latency_unknown_model_is_one_line(capsys):
    code, _, err = run(capsys, "latency", "--size-packets", "4", "--model", "nope")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "--model" in err and "fluid" in err


def test_latency_other_models_keep_the_json_contract(capsys):
    from latency_model import TcpParams
    from latency_model.model.registry import predict

    code, out, _ = run(capsys, "latency", "--size-packets", "5,20", "--p", "0.02", "--model", "csa", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["params"]["model"] == "csa"
    want = predict("csa", TcpParams(p=0.02), [2500.0, 10000.0]).expected_latency_s
    assert [r["expected_latency_s"] for r in data["results"]] == list(want)


def test_latency_packet_model_takes_its_truncation_and_fold_bound(capsys):
    # --eps and --max-states reach expected_latency as eps and max_states (the same
    # numbers as the API's) and are echoed in the JSON's params
    from latency_model import TcpParams
    from latency_model.model.packet import expected_latency

    code, out, _ = run(capsys, "latency", "--model", "packet", "--size-packets", "8,12", "--p", "0.1",
                       "--eps", "1e-5", "--max-states", "300", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["params"]["eps"] == 1e-5 and data["params"]["max_states"] == 300
    want = [r.expected_latency_s for r in expected_latency(TcpParams(p=0.1), size_packets=[8, 12], eps=1e-5,
                                                             max_states=300)]
    default = [r.expected_latency_s for r in expected_latency(TcpParams(p=0.1), size_packets=[8, 12])]
    assert [r["expected_latency_s"] for r in data["results"]] == want != default


def test_latency_packet_model_p90_adds_the_trees_percentile(capsys, monkeypatch):
    # --p90: expected_latency(..., quantiles=True) (the tree DP), a p90 column and
    # results[].p90_latency_s; the table has the column only then
    from latency_model import TcpParams
    from latency_model.model import registry
    from latency_model.model.packet import expected_latency

    code, out, err = run(capsys, "latency", "--model", "packet", "--size-packets", "1,3", "--p", "0.2", "--p90",
                         "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["params"]["quantiles"] is True
    want = expected_latency(TcpParams(p=0.2), size_packets=[1, 3], quantiles=True)
    assert [r["p90_latency_s"] for r in data["results"]] == [w.p90_latency_s for w in want]
    assert [r["expected_latency_s"] for r in data["results"]] == [w.expected_latency_s for w in want]
    code, out, _ = run(capsys, "latency", "--model", "packet", "--size-packets", "1", "--p", "0.2", "--p90")
    assert code == 0 and "p90 (s)" in out.splitlines()[1]
    code, out, _ = run(capsys, "latency", "--model", "packet", "--size-packets", "1", "--p", "0.2")
    assert code == 0 and "p90" not in out
    # beyond 20 packets the tree DP is announced before any work, and only it (the level
    # DP's estimate would announce 1..200 packets at p = 0.2 too: the warning test below)
    monkeypatch.setattr(registry, "predict", lambda *a, **k: (_ for _ in ()).throw(ValueError("stop here")))
    code, _, err = run(capsys, "latency", "--model", "packet", "--size-packets", "1:200", "--p", "0.2", "--p90")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 2 and "stop here" in lines[1]
    assert "warning: --p90 computes every size with the tree DP" in lines[0]


def test_latency_packet_model_runs_the_papers_fixed_timer_with_rto(capsys):
    # --rto is the paper's fixed RTO for every model that reads it; the packet model ran
    # RFC 6298's timer whatever --rto said (the same numbers with and without it). Now it
    # runs the fixed timer (PathConfig(fixed_rto=True)), and one packet is the geometric
    # closed form: RTT + RTO p / (1 - p), every loss of the lone segment waiting 3 s.
    p, rto = 0.1, 3.0
    code, out, _ = run(capsys, "latency", "--model", "packet", "--size-packets", "1,3", "--p", str(p),
                       "--rto", str(rto), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["params"]["path"]["fixed_rto"] is True and data["params"]["rto_s"] == rto
    one, three = (r["expected_latency_s"] for r in data["results"])
    assert one == pytest.approx(0.1 + rto * p / (1 - p), rel=1e-3)  # 0.1 s: the loss-free round trip
    assert data["results"][0]["conditional_latency_s"]["1"] == pytest.approx(0.1 + rto, abs=1e-3)
    code, out, _ = run(capsys, "latency", "--model", "packet", "--size-packets", "1,3", "--p", str(p), "--json")
    default = [r["expected_latency_s"] for r in json.loads(out)["results"]]
    # RFC 6298: 1 s, doubling (Karn): k losses wait 2^k - 1 s, so RTT + (1 - p) / (1 - 2p) - 1
    assert default[0] == pytest.approx(0.1 + (1 - p) / (1 - 2 * p) - 1, rel=1e-3)
    assert three > default[1]
    code, out, _ = run(capsys, "latency", "--model", "packet", "--size-packets", "1", "--p", str(p),
                       "--rto", str(rto))
    assert code == 0 and "timer: the paper's fixed RTO of 3 s" in out
    # ns-3's sender runs ns-3's timer only: one line, exit 2
    code, _, err = run(capsys, "latency", "--model", "packet", "--size-packets", "1", "--rto", "3",
                       "--stack", "ns3")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--rto" in err and "ns-3's timer" in err


@pytest.mark.parametrize("command", ["simulate", "trace"])
def test_simulator_refuses_an_rto_its_timer_would_not_read(capsys, command):
    # RFC 6298's timer never reads TcpParams.rto: --rto without --rto-rule paper was
    # silently ignored; now it is one line naming the flag that reads it
    extra = ["--runs", "10"] if command == "simulate" else []
    code, _, err = run(capsys, command, "--size-packets", "3", "--p", "0.1", "--rto", "3", *extra)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--rto-rule paper" in err and "--min-rto-s" in err


def test_sweep_reads_rto_where_each_source_can(capsys, tmp_path):
    # the model alone: the packet model runs the paper's timer where rto is given (one
    # packet: RTT + rto p / (1 - p)); beside the simulator, rto needs --rto-rule paper
    out = tmp_path / "alone.csv"
    code, _, _ = run(capsys, "sweep", "--param", "size-packets=1", "--param", "rto=3", "--param", "p=0.1",
                     "--param", "model=packet", "--out", str(out), "--jobs", "1")
    assert code == 0
    row = next(csv.DictReader(out.open()))
    assert float(row["expected_latency_s"]) == pytest.approx(0.1 + 3.0 * 0.1 / 0.9, rel=1e-3)
    code, _, err = run(capsys, "sweep", "--param", "size-packets=1", "--param", "rto=3", "--what", "both",
                       "--runs", "10", "--out", str(tmp_path / "both.csv"), "--jobs", "1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "rto_rule paper" in err
    assert not (tmp_path / "both.csv").exists()


def test_sweep_refuses_a_wss_axis_csa_would_not_read(capsys, tmp_path):
    out = tmp_path / "w.csv"
    code, _, err = run(capsys, "sweep", "--param", "size-packets=3", "--param", "wss=8,30", "--param",
                       "model=fluid,csa", "--out", str(out), "--jobs", "1")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "w_ss must equal rwnd" in err
    assert not out.exists()
    # an rwnd axis with the default w_ss is CSA's W_max, read: it runs
    code, _, _ = run(capsys, "sweep", "--param", "size-packets=3", "--param", "rwnd=10,30", "--param",
                     "model=fluid,csa", "--out", str(out), "--jobs", "1")
    assert code == 0 and len(list(csv.DictReader(out.open()))) == 4


def test_simulate_with_the_paper_rule_reads_rto(capsys):
    # one packet with the fixed 3 s timer: every loss costs 3 s, so L_1 is RTT + 3 s exactly
    code, out, _ = run(capsys, "simulate", "--size-packets", "1", "--p", "0.3", "--runs", "300", "--seed", "1",
                       "--rto", "3", "--rto-rule", "paper", "--json")
    assert code == 0
    cond = json.loads(out)["results"][0]["conditional"]
    assert cond["1"]["n"] > 0 and cond["1"]["mean_s"] == pytest.approx(0.1 + 3.0, abs=1e-3)
    assert cond["2"]["mean_s"] == pytest.approx(0.1 + 6.0, abs=1e-3)  # no back-off


@pytest.mark.parametrize("argv,needle", [
    (["--model", "csa", "--variant", "lt"], "newreno"),       # CSA models NewReno only
    (["--model", "csa", "--rule", "btcp"], "standard"),       # and the standard rule only
    (["--model", "pftk", "--time-model", "rounds"], "--time-model"),
    (["--model", "csa", "--law", "exact"], "--law"),
    (["--eps", "1e-5"], "--eps: the packet model's options; --model fluid has none"),
    (["--model", "csa", "--max-states", "10"], "--max-states: the packet model's options"),
    (["--model", "packet", "--eps", "2"], "--eps must be in (0, 1), got 2"),
    (["--model", "packet", "--eps", "nan"], "--eps must be a finite number"),
    (["--model", "packet", "--max-states", "-1"], "--max-states must be an integer >= 0, got -1"),
    (["--model", "pftk", "--p90"], "--p90: the packet model's options; --model pftk has none"),
    (["--model", "csa", "--wss", "8"], "--model csa: --wss must equal --rwnd"),  # it would not read it
    (["--model", "pftk", "--wss", "8", "--rwnd", "20"], "--model pftk: --wss must equal --rwnd"),
])
def test_latency_model_that_cannot_answer_is_one_line(capsys, argv, needle):
    code, _, err = run(capsys, "latency", "--size-packets", "5", *argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_latency_csa_takes_a_wss_equal_to_its_rwnd(capsys):
    # W_SS = rwnd is what CSA assumes (slow start up to W_max): the same answer as without --wss
    code, out, _ = run(capsys, "latency", "--model", "csa", "--size-packets", "5", "--wss", "30", "--json")
    code0, out0, _ = run(capsys, "latency", "--model", "csa", "--size-packets", "5", "--json")
    assert code == code0 == 0
    assert json.loads(out)["results"] == json.loads(out0)["results"]


def test_latency_packet_model_warns_before_a_long_computation(capsys, monkeypatch):
    # The packet model's cost grows with size, p and W0 (docs/model.md 5.2): a request
    # estimated over a minute is announced on one line before any work (the call itself is
    # replaced here, so the test does not pay for it).
    from latency_model.checks import packet_model_seconds
    from latency_model.model import registry

    assert packet_model_seconds(0.1, 20) < 60 < packet_model_seconds(0.2, 200)
    # a larger first window and an ACK per segment cost more (validation runs: W0 = 10,
    # b = 1, p = 0.2, 40 packets took 497 s): announced too
    assert packet_model_seconds(0.2, 40) < 60 < packet_model_seconds(0.2, 40, w0=10, b=1)
    # one size costs its levels and its own tail only (docs/model.md 6.5: a quarter of the
    # all-sizes figure at the median): 200 packets alone is not announced, 1..200 is
    assert packet_model_seconds(0.2, 200, n_sizes=1) < 60 < packet_model_seconds(0.2, 200, n_sizes=200)
    assert packet_model_seconds(0.2, 200, n_sizes=200) == packet_model_seconds(0.2, 200)
    monkeypatch.setattr(registry, "predict", lambda *a, **k: (_ for _ in ()).throw(ValueError("stop here")))
    code, _, err = run(capsys, "latency", "--model", "packet", "--size-packets", "200", "--p", "0.2")
    assert code == 2 and "warning" not in err and "stop here" in err
    code, _, err = run(capsys, "latency", "--model", "packet", "--size-packets", "1:200", "--p", "0.2")
    assert code == 2
    lines = err.strip().splitlines()
    assert "warning: the packet model up to 200 packets at p = 0.2 may take about" in lines[0]
    assert "stop here" in lines[-1]


def test_the_linux_sender_s_tree_dp_is_announced_with_its_own_estimate(capsys, monkeypatch):
    # the SACK sender runs on the tree DP, whose cost is the sum of its sizes' own
    # (checks.packet_tree_seconds, measured on the linux profile within a factor of 2):
    # 60 packets at p = 0.1 took 272 s, 10 packets at p = 0.02 well under a second
    from latency_model.checks import packet_tree_seconds
    from latency_model.model import registry

    assert 136 < packet_tree_seconds(0.1, [60]) < 544
    assert packet_tree_seconds(0.02, [10]) < 1.0
    assert packet_tree_seconds(0.1, range(1, 21)) == pytest.approx(
        sum(packet_tree_seconds(0.1, [n]) for n in range(1, 21)))
    monkeypatch.setattr(registry, "predict", lambda *a, **k: (_ for _ in ()).throw(ValueError("stop here")))
    code, _, err = run(capsys, "latency", "--model", "packet", "--stack", "linux", "--size-packets", "60",
                       "--p", "0.1")
    lines = [ln for ln in err.strip().splitlines() if "warning" in ln]
    assert code == 2 and "stop here" in err
    assert len(lines) == 1 and "(--stack linux's sender on the simulator's transitions) up to 60 packets" in lines[0]
    assert "may take about" in lines[0]
    code, _, err = run(capsys, "latency", "--model", "packet", "--stack", "linux", "--size-packets", "10",
                       "--p", "0.02")
    assert code == 2 and "may take" not in err and "stop here" in err


@pytest.mark.parametrize("cap,computed,left", [("2", [2], [6]), ("0", [2, 6], [])])
def test_accuracy_packet_max_packets_sets_or_lifts_the_packet_models_size_cap(capsys, tmp_path, cap, computed,
                                                                             left):
    # --packet-max-packets N: the packet model is asked for sizes <= N only, the rest listed as not
    # computed with the cap as the reason; 0 lifts the cap (the whole map: minutes from 40 packets).
    argv = ["accuracy", "--models", "packet", "--sizes", "2,6", "--p", "0.05", "--b", "2", "--variants",
            "newreno", "--runs", "20", "--jobs", "1", "--quiet", "--json", "--model-timeout", "0",
            "--packet-max-packets", cap, "--cache", str(tmp_path)]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    doc = json.loads(out)
    assert [r["size_packets"] for r in doc["rows"]] == computed
    assert [nc["size_packets"] for nc in doc["not_computed"]] == left
    if left:
        assert "size cap of 2 packets" in doc["not_computed"][0]["reason"]
        assert doc["model_max_packets"] == {"packet": 2}
    else:
        assert "packet" not in doc["model_max_packets"]


def test_latency_packet_model_shows_its_levels_on_a_terminal(capsys, monkeypatch):
    # On a terminal the packet model's levels drive a bar on stderr (its calls take minutes
    # from about 40 packets); elsewhere (pipes, logs, these tests) nothing is added. The bar is
    # given every level, ends at its total, and is closed, even when the call fails.
    from latency_model.cli import model as cli_model

    calls, closed = [], []

    class Bar:
        def __call__(self, done, total):
            calls.append((done, total))

        def close(self):
            closed.append(True)

    assert cli_model._levels_bar() is None  # stderr is captured here, not a terminal
    monkeypatch.setattr(cli_model, "_levels_bar", Bar)
    code, out, err = run(capsys, "latency", "--model", "packet", "--size-packets", "6", "--p", "0.1", "--json")
    assert code == 0 and err == ""
    assert calls == [(L, 5) for L in range(6)] and closed == [True]
    code, out, err = run(capsys, "latency", "--model", "packet", "--size-packets", "6", "--p", "0.1", "--eps", "2")
    assert code == 2 and len(closed) == 2


def _strict(text: str):
    """json.loads that refuses NaN and Infinity (RFC 8259 has neither; JavaScript and jq fail)."""
    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_json_outputs_are_strict_where_a_value_is_missing(capsys, monkeypatch):
    # An extrapolated size of the packet model has no L_k (NaN): --json writes null, as
    # every --json output and JSON file does (studies.export.json_text)
    import numpy as np

    from latency_model.model import registry

    def predict(model, params, sizes_bytes, **options):
        n = len(sizes_bytes)
        return registry.Prediction(model, np.asarray(sizes_bytes, float), np.full(n, 1.5),
                                   np.column_stack([np.full(n, 1.0), np.full(n, np.nan)]))

    monkeypatch.setattr(registry, "predict", predict)
    code, out, err = run(capsys, "latency", "--model", "packet", "--size-packets", "3", "--json")
    assert code == 0, err
    row = _strict(out)["results"][0]
    assert row["expected_latency_s"] == 1.5
    assert row["conditional_latency_s"] == {"0": 1.0, "1": None}


def test_json_text_replaces_every_non_finite_number():
    from latency_model.studies.export import json_safe, json_text

    obj = {"a": float("nan"), "b": [1.0, float("inf"), (-float("inf"), 2)], "c": {"d": "NaN"}}
    assert json_safe(obj) == {"a": None, "b": [1.0, None, [None, 2]], "c": {"d": "NaN"}}
    assert _strict(json_text(obj)) == json_safe(obj)


def test_a_window_beyond_the_level_dp_is_announced(capsys, monkeypatch):
    # rwnd 300 with a 260-packet file: the packet model's tree DP, whose time grows with the
    # length, says so on stderr first (the level DP takes rwnd up to 253 packets, or any
    # rwnd with files of up to 253 packets: a window beyond the file never binds)
    import numpy as np

    from latency_model.model import registry

    def predict(model, params, sizes_bytes, **options):
        n = len(sizes_bytes)
        return registry.Prediction(model, np.asarray(sizes_bytes, float), np.full(n, 9.0), None)

    monkeypatch.setattr(registry, "predict", predict)
    base = ["latency", "--model", "packet", "--rwnd", "300", "--wss", "300", "--p", "0.01"]
    code, out, err = run(capsys, *base, "--size-packets", "260")
    assert code == 0 and "tree DP" in err and "rwnd above 253" in err, err
    code, out, err = run(capsys, *base, "--size-packets", "200")
    assert code == 0 and "tree DP" not in err, err


def test_cross_field_timer_error_names_both_flags(capsys):
    # SimConfig's message names min_rto_s first; the flag typed was --max-rto-s, so both
    # fields of the message are rewritten into flags, not only the leading one.
    assert main(["simulate", "--size-packets", "3", "--runs", "10", "--max-rto-s", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--max-rto-s (0.5)" in err and err.count("--min-rto-s") == 2 and "_rto_s" not in err
    assert len(err.splitlines()) == 1
