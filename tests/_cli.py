"""Shared helpers of the command-line tests: run ``latency-model`` in-process and check
that a command was refused the way every refusal must be (one line, exit 2)."""

from latency_model.cli import main


def run(capsys, *argv):
    """``(exit status, stdout, stderr)`` of ``latency-model argv`` (arguments made strings)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The one ``latency-model: error: ...`` line of ``err`` (no traceback, nothing else)."""
    assert err.count("\n") == 1 and err.startswith("latency-model: error: ") and "Traceback" not in err, err
    return err.strip()


def refused(capsys, argv, *needles):
    """Exit 2, nothing on stdout and one error line containing every needle; returns the line."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (argv, code, out, err)
    line = one_error_line(err)
    for needle in needles:
        assert needle in line, (needle, line)
    return line
