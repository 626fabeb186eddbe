"""reproduce without a terminal: plain progress lines on stderr (issue 20, item 8)."""

import io

from latency_model.studies.figures import _progress


class _Pipe(io.StringIO):
    def isatty(self):
        return False


def test_lines_when_stderr_is_not_a_terminal():
    out = _Pipe()
    bar = _progress(3, True, "reproduce", stream=out, every_s=0.0)
    for _ in range(3):
        bar.update(1)
    bar.close()
    lines = out.getvalue().splitlines()
    assert [ln.split(",")[0] for ln in lines] == [f"reproduce: {i}/3 pieces computed" for i in (1, 2, 3)]


def test_lines_are_spaced_but_the_last_one_always_shows():
    out = _Pipe()
    bar = _progress(50, True, "reproduce", stream=out, every_s=3600.0)
    for _ in range(50):
        bar.update(1)
    assert out.getvalue().splitlines() == [out.getvalue().splitlines()[-1]]
    assert out.getvalue().startswith("reproduce: 50/50 pieces computed")


def test_silent_when_disabled():
    out = _Pipe()
    bar = _progress(2, False, "reproduce", stream=out, every_s=0.0)
    bar.update(2)
    assert out.getvalue() == ""


def test_a_sweep_without_a_terminal_prints_lines_to_its_last_point(monkeypatch):
    """run_sweep(progress=True) on a log: lines counting the points, the last one at the end,
    so that reproduce's accuracy map is not silent while its cells are simulated."""
    import sys

    from latency_model import SweepSpec, run_sweep

    err = _Pipe()
    monkeypatch.setattr(sys, "stderr", err)
    report = run_sweep(SweepSpec({"p": [0.05, 0.1], "size_packets": [2, 3, 4]}, what="simulation", runs=5),
                       progress=True)
    assert report.complete
    lines = err.getvalue().splitlines()
    assert lines and lines[-1].startswith("sweep: 6/6 points, ") and lines[-1].endswith(" s")
    assert all(ln.startswith("sweep: ") for ln in lines)


def test_a_sweep_resumed_counts_from_its_finished_points_and_says_rows_with_two_sources(tmp_path, monkeypatch):
    import sys

    from latency_model import SweepSpec, run_sweep
    from latency_model.studies.sweep.run import _bar
    from latency_model.studies.sweep import plan_sweep

    spec = SweepSpec({"p": [0.1], "size_packets": [2, 3]}, what="both", runs=5)
    err = _Pipe()
    monkeypatch.setattr(sys, "stderr", err)
    bar = _bar(spec, plan_sweep(spec), 2, True, every_s=0.0)
    bar.update(1)
    bar.update(1)
    assert err.getvalue().splitlines()[-1].startswith("sweep: 4/4 rows (points x sources), ")
    assert err.getvalue().splitlines()[0].startswith("sweep: 3/4 ")
    assert _bar(spec, plan_sweep(spec), 0, False) is None


def test_a_sweep_on_a_terminal_keeps_its_bar(monkeypatch):
    import sys

    from latency_model import SweepSpec
    from latency_model.studies.sweep import plan_sweep
    from latency_model.studies.sweep.run import _bar

    err = _Pipe()
    err.isatty = lambda: True
    monkeypatch.setattr(sys, "stderr", err)
    spec = SweepSpec({"p": [0.1], "size_packets": [2]})
    bar = _bar(spec, plan_sweep(spec), 0, True)
    assert type(bar).__name__ == "tqdm"
    bar.close()


def test_the_accuracy_map_passes_its_progress_to_the_sweep_without_a_terminal(tmp_path, monkeypatch):
    """run_accuracy(progress=True) on a log (as reproduce runs it): the sweep of its simulated
    cells is asked for progress too, and so prints lines rather than ~30 s of silence."""
    import sys

    from latency_model.studies import accuracy, sweep

    asked = {}

    class Stop(Exception):
        pass

    def fake_run_sweep(spec, out=None, **kw):
        asked.update(kw)
        raise Stop

    monkeypatch.setattr(sys, "stderr", _Pipe())
    monkeypatch.setattr(sweep, "run_sweep", fake_run_sweep)
    amap = accuracy.AccuracyMap(models=("fluid",), sizes_packets=(2,), p=(0.1,), b=(1,), runs=5)
    try:
        accuracy.run_accuracy(amap, cache_dir=tmp_path, progress=True)
    except Stop:
        pass
    assert asked["progress"] is True


def test_a_plain_progress_line_says_it_is_still_working_and_stops_at_close():
    import io
    import time

    from latency_model.studies.figures import _progress

    stream = io.StringIO()
    bar = _progress(3, True, "reproduce", stream, every_s=0.02, alive_s=0.1)
    time.sleep(0.45)  # nothing finishes: a line about every 0.1 s
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("reproduce: 0/3 pieces computed, ") for line in lines)
    assert all(line.endswith("(still working)") for line in lines)
    time.sleep(0.25)
    assert stream.getvalue().splitlines() == lines  # nothing after close
    quiet = io.StringIO()
    _progress(3, False, "reproduce", quiet, every_s=0.02, alive_s=0.05)
    time.sleep(0.15)
    assert quiet.getvalue() == ""  # disabled: no heartbeat either
