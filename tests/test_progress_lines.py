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
