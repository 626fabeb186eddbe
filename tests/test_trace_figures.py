"""The paper's trace figures (Figures 1-3 and 5) from both halves, `trace --plot`, `trace
--json` and the `drop` events of the event trace (issue 19, item 5)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from latency_model.cli import main
from latency_model.growth import make_rule
from latency_model.model.fluid import l0, w_f
from latency_model.params import TcpParams, apply_variant
from latency_model.sim.config import SimConfig
from latency_model.sim.singleloss import single_loss
from latency_model.sim.traces import mark_drops
from latency_model.sim.transfer import run_transfer
from latency_model.studies import reproduce
from latency_model.studies.draw import draw_csv
from latency_model.studies.trace_figures import TRACE_COLUMNS, TRACE_FIGURES, model_trace

PARAMS = apply_variant(TcpParams(b=1), "newreno")  # the captions' setting
MSS, RTT = 500, 0.1


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Figures 1-3 and 5 written exactly as `reproduce` writes them, read back from disk."""
    out = tmp_path_factory.mktemp("traces")
    got = {}
    for fig in TRACE_FIGURES:
        csv_path, _, paths = reproduce._trace_figure(out, fig, "test")
        with open(csv_path, newline="") as fh:
            reader = csv.DictReader(fh)
            got[fig] = {"header": reader.fieldnames, "rows": list(reader), "csv": csv_path,
                        "meta": json.loads(paths[1].read_text())}
    return got


def _series(rows, source, series, event=None):
    return [r for r in rows if r["source"] == source and r["series"] == series
            and (event is None or r["event"] == event)]


def _integral_bytes(rows):
    """Bytes under the model's rate curve: trapezoid over the CSV's (time, window) samples."""
    w = _series(rows, "model", "window")
    t = np.array([float(r["time_s"]) for r in w])
    win = np.array([float(r["value"]) for r in w])
    return float(np.sum(np.diff(t) * (win[1:] + win[:-1]) / 2.0)) * MSS / RTT


def test_trace_csvs_have_the_tidy_columns_and_both_halves(written):
    for fig, d in written.items():
        assert d["header"] == TRACE_COLUMNS, fig
        assert {r["source"] for r in d["rows"]} == {"model", "simulation"}
        assert {r["series"] for r in d["rows"] if r["source"] == "model"} >= {"window", "offset", "event"}
        assert d["meta"]["columns"] == TRACE_COLUMNS and "MSS = 500 B" in d["meta"]["setting"]
        sends = _series(d["rows"], "simulation", "trace", "send")
        assert sorted(int(r["segment"]) for r in sends) == list(range(TRACE_FIGURES[fig]["size_packets"]))


@pytest.mark.parametrize("fig", ["fig1", "fig2", "fig3", "fig5"])
def test_simulated_completion_equals_run_transfers(written, fig):
    spec = TRACE_FIGURES[fig]
    drops = [] if spec["drop"] is None else [spec["drop"]]
    res = run_transfer(PARAMS, size_packets=spec["size_packets"], config=SimConfig(), drops=drops)
    rows = written[fig]["rows"]
    done = _series(rows, "simulation", "trace", "done")
    assert len(done) == 1 and float(done[0]["time_s"]) == res.completion_s  # bit for bit
    sim = written[fig]["meta"]["simulation"]
    assert (sim["completion_s"], sim["timeouts"], sim["fast_retransmits"]) == (
        res.completion_s, res.timeouts, res.fast_retransmits)
    assert [int(r["segment"]) for r in _series(rows, "simulation", "trace", "drop")] == drops


def test_the_figures_show_what_the_paper_says():
    # Figure 1: a timeout; Figure 2: a fast retransmit; Figure 3: a timeout in the tail.
    expect = {"fig1": (1, 0, 1), "fig2": (0, 1, 2), "fig3": (1, 0, 3)}
    for fig, (timeouts, fast, region) in expect.items():
        spec = TRACE_FIGURES[fig]
        res = run_transfer(PARAMS, size_packets=spec["size_packets"], drops=[spec["drop"]])
        assert (res.timeouts, res.fast_retransmits) == (timeouts, fast), fig
        (loss,) = [e for e in model_trace(PARAMS, spec["size_packets"] * MSS, [spec["drop"]]).events
                   if e["event"] == "loss"]
        assert loss["region"] == region, fig


@pytest.mark.parametrize("fig, expected_bytes", [
    ("fig1", 20 * MSS + MSS),  # after the timeout the model resends y_bar - y + MSS: one packet twice
    ("fig2", 20 * MSS),        # fast recovery: the rest, y_bar - y, and nothing twice
    ("fig3", 19 * MSS),        # a tail loss: L_0(y) + RTO + L(MSS), the 20th packet left out
    ("fig5", 10 * MSS),        # no loss
])
def test_model_curve_integral_equals_the_file_size(written, fig, expected_bytes):
    # The rate is sampled at l0(s) and w_f(s) (two separate closed forms) through the
    # recursion's states; its area over time must give back the bytes, to quadrature error.
    assert _integral_bytes(written[fig]["rows"]) == pytest.approx(expected_bytes, rel=2e-4)
    meta = written[fig]["meta"]["model"]
    assert meta["sent_bytes"] == expected_bytes
    assert meta["sent_bytes"] == 500 * TRACE_FIGURES[fig]["size_packets"] + meta["retransmitted_bytes"] - \
        meta["neglected_bytes"]


def test_model_completion_is_the_recursions_path():
    # Figure 2: L_0(y) + L_0(y_bar - y; W0 = W_SS = W_f/2 - 1); Figure 1: L_0(y) + RTO +
    # L_0(y_bar - y + MSS; W0 = 1, W_SS = max(W_f/2, 2)); y = 8 and 1 packets.
    y = 8 * MSS
    wf = float(w_f(PARAMS, y))
    want = float(l0(PARAMS, y)) + float(l0(PARAMS, 20 * MSS - y, wf / 2 - 1, wf / 2 - 1))
    assert model_trace(PARAMS, 20 * MSS, [8]).completion_s == pytest.approx(want, rel=1e-12)
    y = 1 * MSS
    wf = float(w_f(PARAMS, y))
    want = float(l0(PARAMS, y)) + PARAMS.rto + float(l0(PARAMS, 20 * MSS - y + MSS, 1.0, max(wf / 2, 2.0)))
    assert model_trace(PARAMS, 20 * MSS, [1]).completion_s == pytest.approx(want, rel=1e-12)


def test_figure5_marks_filesize_min_and_each_packets_single_loss_outcome(written):
    rows = written["fig5"]["rows"]
    marks = {r["event"]: float(r["value"]) for r in _series(rows, "model", "threshold")}
    assert marks["filesize_min"] == pytest.approx(marks["y_to"] + 3 * MSS)
    assert marks["filesize_min_table"] == 5 * MSS  # Table 1: y_to = 2 packets + dup_t = 3
    letters = "".join(r["event"] for r in sorted(_series(rows, "simulation", "single_loss"),
                                                  key=lambda r: int(r["segment"])))
    assert letters == single_loss(PARAMS, size_packets=10).pattern == "TTFFFFFTTT"


def test_model_trace_lists_drops_its_states_do_not_reach_and_checks_input():
    # Packet 3 lost, then 3 again: after fast recovery the model's state starts past packet 3.
    tr = model_trace(PARAMS, 20 * MSS, [8, 3])
    assert tr.unmodelled_drops == (3,)
    with pytest.raises(ValueError, match="size_bytes must be > 0"):
        model_trace(PARAMS, 0)
    rounds = model_trace(PARAMS.replace(rule=make_rule("lss")), 20 * MSS, [5])
    assert rounds.time_model == "rounds"
    t, w = rounds.time_s, rounds.window_packets
    assert float(np.sum(np.diff(t) * (w[1:] + w[:-1]) / 2.0)) * MSS / RTT == pytest.approx(rounds.sent_bytes)


# ---------------------------------------------------------------------------
# drop events


def _drops(rows):
    return [r.segment for r in rows if r.event == "drop"]


@pytest.mark.parametrize("drops, expected", [([3], [3]), ([0, 2], [0, 2]), ({5: 3}, [5, 5, 5]),
                                             ([1, 8, 18], [1, 8, 18])])
def test_a_dropped_transmission_is_a_drop_event_after_it(drops, expected):
    cfg = SimConfig()
    res, rows = run_transfer(PARAMS, size_packets=20, config=cfg, drops=drops, trace=True)
    marked = mark_drops(rows, res.size_bytes, MSS, cfg, cfg.one_way_delay(RTT), res.lost_packets)
    assert _drops(marked) == expected
    assert [r for r in marked if r.event != "drop"] == rows  # nothing else changes
    for i, r in enumerate(marked):
        if r.event == "drop":
            prev = marked[i - 1]
            assert prev.event in ("send", "retransmit", "drop") and (prev.segment, prev.time_s) == (r.segment, r.time_s)


@pytest.mark.parametrize("cfg, params, n", [
    (SimConfig(), TcpParams(p=0.2), 30),
    (SimConfig(queue_packets=4, link_rate_bps=1e6), TcpParams(p=0.05, w_ss=1e6, rwnd=1e6), 60),  # buffer drops
])
def test_random_and_buffer_drops_are_all_found(cfg, params, n):
    agree = 0
    for seed in range(60):
        rng = np.random.Generator(np.random.PCG64(seed))
        res, rows = run_transfer(params, size_packets=n, config=cfg, rng=rng, trace=True)
        marked = mark_drops(rows, res.size_bytes, MSS, cfg, cfg.one_way_delay(params.rtt_s), res.lost_packets)
        assert len(_drops(marked)) <= res.lost_packets
        agree += len(_drops(marked)) == res.lost_packets
    assert agree >= 59  # only a loss still in flight at the end, among several, stays unknown


# ---------------------------------------------------------------------------
# CLI


def test_trace_csv_and_json_carry_drop_events(capsys):
    assert main(["trace", "--size-packets", "8", "--drop", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(",drop,3," in line for line in lines) == 1
    assert main(["trace", "--size-packets", "8", "--drop", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"params", "sim_config", "size_bytes", "drops", "result", "columns", "events"} <= set(d)
    assert len(d["events"]) == len(lines) - 1 and d["drops"] == [3]
    assert [e["segment"] for e in d["events"] if e["event"] == "drop"] == [3]
    assert d["events"][-1]["event"] == "done" and d["events"][-1]["time_s"] == d["result"]["completion_s"]
    assert main(["trace", "--size-packets", "8", "--p", "0.3", "--seed", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["seed"], d["run"]) == (2, 0)
    assert sum(e["event"] == "drop" for e in d["events"]) == d["result"]["lost_packets"]


@pytest.mark.parametrize("argv", [
    ["--size-packets", "20", "--drop", "3", "--drop", "12"],
    ["--size-packets", "30", "--p", "0.2", "--seed", "3"],
    ["--rule", "lss", "--size-packets", "40", "--drop", "10"],  # no continuous law: the per-round model
    ["--rule", "generalized", "--rule-param", "beta=4", "--rtts", "4"],
])
def test_trace_plot_draws_any_trace(tmp_path, capsys, argv):
    png = tmp_path / "t.png"
    assert main(["trace", *argv, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in capsys.readouterr().err


def test_trace_plot_rejects_an_unknown_format(capsys):
    assert main(["trace", "--size-packets", "5", "--plot", "t.txt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("latency-model: error: --plot must name a") and "\n" not in err


def test_plot_command_redraws_a_trace_figure_identically(written, tmp_path, capsys):
    src = written["fig2"]["csv"]
    first = draw_csv(src)
    assert main(["plot", str(src), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again.svg").read_bytes() == first[1].read_bytes()
    assert (tmp_path / "again.png").read_bytes() == first[0].read_bytes()
