"""CLI fuzz: bad values for every flag of the model, simulator and sweep commands.

Issue 20's contract: whatever a user types, ``latency-model`` answers with one line,
``latency-model: error: ...``, that names the flag, and exit status 2; never a traceback,
never a silently accepted value. Each command starts from a small valid command line;
hypothesis adds one flag with a value that must be refused (not a number, not finite, out
of range, underflowing to 0, far too large to fit in memory, a file that cannot be written,
100 kB of text, ...). Flags are read from the parser, so a new flag is fuzzed as soon as it
exists.

``LATENCY_MODEL_FUZZ_EXAMPLES`` sets the examples per command (default 200: about 1,200
inputs, 10-20 s).
"""

from __future__ import annotations

import contextlib
import io
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from latency_model.cli import build_parser, main

EXAMPLES = int(os.environ.get("LATENCY_MODEL_FUZZ_EXAMPLES", "200"))
HUGE = "1" * 100_000  # a 100 kB argument: never echoed whole

# A small valid command line per command: the fuzzed flag is the only bad thing in it.
BASE = {
    "tables": ["tables", "--sim-lt-mode", "none"],
    "thresholds": ["thresholds"],
    "latency": ["latency", "--size-packets", "2"],
    "rules": ["rules"],
    "simulate": ["simulate", "--size-packets", "2", "--runs", "3"],
    "single-loss": ["single-loss", "--size-packets", "2"],
    "sweep": ["sweep", "--param", "size-packets=2", "--what", "simulation", "--runs", "2", "--jobs", "1",
              "--quiet", "--force", "--out", "{tmp}/sweep.csv"],
}

# Flags taking free text that must be one of a few names.
NAMES = ("--variant", "--rule", "--stack", "--sender", "--recovery", "--rtt-sampling", "--rto-rule", "--lt-mode", "--engine",
         "--prr", "--models", "--variants")
# Numeric flags that must be whole numbers.
INTEGERS = ("--mss-bytes", "--b", "--runs", "--seed", "--workers", "--jobs", "--dask-local", "--quick-acks",
            "--queue-packets", "--header-bytes", "--dup-t", "--dup-lt", "--max-states")
# Flags whose value is in [0, 1).
PROBABILITIES = ("--p", "--p-ack", "--eps")
# Values that cannot fit in memory (refused with the estimate and the limit).
TOO_MUCH = {
    ("simulate", "--runs"): ["100000000000", "1e12"],
    ("simulate", "--jobs"): ["1000000"],
    ("sweep", "--runs"): ["1e12"],
    ("sweep", "--jobs"): ["1000000"],
    ("sweep", "--dask-local"): ["1000000"],
    ("single-loss", "--size-packets"): ["1e12"],
}


def _flags(command: str) -> list:
    """(flag, action) of every option of ``command`` but --help."""
    parser = build_parser([command]).commands.choices[command]
    switches = {"--no-fin": "--fin", "--no-rack-tlp": "--rack-tlp"}  # BooleanOptionalAction pairs
    # the flag as shown (the first name; old names are hidden aliases, checked in test_cli_grammar.py)
    return [(switches.get(a.option_strings[0], a.option_strings[0]), a)
            for a in parser._actions if a.option_strings and a.dest != "help"]


def _parses_as_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


not_a_number = st.text(alphabet=string.printable + "éπ\u2009", max_size=12).filter(
    lambda s: not _parses_as_number(s) and s.strip() != "")
non_finite = st.sampled_from(["nan", "inf", "-inf", "NaN", "1e400", "-1e400", "9" * 400 + "e9"])
underflow = st.sampled_from(["1e-400", "-1e-400", "4e-330", "0.00001e-999"])
negative = st.sampled_from(["-1", "-0.5", "-1e300", "-3"])
huge_text = st.just(HUGE)


def _bad_number(command: str, flag: str):
    options = [not_a_number, non_finite, underflow, negative, huge_text]
    if flag in INTEGERS or (command == "single-loss" and flag == "--size-packets"):
        options.append(st.sampled_from(["2.5", "0.1", "1e-5"]))
    if flag in PROBABILITIES:
        options.append(st.sampled_from(["1", "1.5", "7"]))
    if (command, flag) in TOO_MUCH:
        options.append(st.sampled_from(TOO_MUCH[command, flag]))
    return st.one_of(options)


bad_sizes = st.one_of(
    st.sampled_from(["0", "-1", "1:0", "1:2:0", "1:2:-1", "a:b", "1,,2", "1e-400", "nan", "inf", "1:inf",
                     "2:1", ":", "1:2:3:4", "0:5", "1:1e12", "1:1e9", "1,x", "", " ", "1e400", HUGE,
                     "2.5e-400", "1:2:1e-400"]),
    not_a_number)
bad_rule_params = st.sampled_from([
    "x", "=1", "beta", "nokey=1", "beta=x", "beta=-1", "beta=nan", "beta=1e-400", "beta=" + HUGE,
    HUGE, "=", "beta=inf"])
bad_sweep_params = st.sampled_from([
    "x", "p=", "p=1e-400", "p=nan", "nosuch=1", "size-packets=1:1e12", "p=0.1,0.1", "p=logspace:1:2:10000000000000",
    "size-packets=1:1000000,p=1", "p=1:0", "=1", "p=" + HUGE, HUGE, "rule-param.x=1", "p=2", "w0=0",
    "size-packets=0", "variant=nope", "rule=nope", "stack=nope", "p=0.1:0.2:0", "p=logspace:0:1:3",
    "mss=1e-400", "b=1.5"])


def _bad_out(tmp: str):
    return st.sampled_from(["", f"{tmp}/file/x.csv", f"{tmp}/dir", "/proc/nope/x.csv", "/dev/null/x",
                            f"{tmp}/" + "n" * 300 + ".csv", f"{tmp}/" + "d/" * 3000 + "x.csv",
                            f"{tmp}/nul\0.csv", "/proc/version"])


def _bad_out_dir(tmp: str):
    return st.sampled_from(["", f"{tmp}/file", f"{tmp}/file/sub", "/proc/nope", "/dev/null/x",
                            f"{tmp}/" + "n" * 300, f"{tmp}/nul\0"])


def _bad_grid(tmp: str):
    return st.sampled_from([f"{tmp}/missing.toml", f"{tmp}/dir", f"{tmp}/binary.toml", f"{tmp}/bad.toml",
                            f"{tmp}/badkey.toml", f"{tmp}/badparam.toml", "", f"{tmp}/nul\0.toml"])


def bad_value(command: str, flag: str, action, tmp: str):
    """A strategy of values ``flag`` of ``command`` must refuse."""
    from latency_model.cli.common import number

    if action.nargs == 0 or flag in ("--fin", "--rack-tlp"):  # a switch given a value
        return st.sampled_from(["x", "1", "", HUGE])
    if flag == "--out":
        return _bad_out_dir(tmp) if command == "tables" else _bad_out(tmp)
    if flag == "--grid":
        return _bad_grid(tmp)
    if flag == "--points":  # missing, a folder, not text, not a CSV of points, empty
        return st.sampled_from([f"{tmp}/missing.csv", f"{tmp}/dir", f"{tmp}/binary.toml", f"{tmp}/bad.toml",
                                f"{tmp}/badkey.toml", f"{tmp}/file", "", f"{tmp}/nul\0.csv"])
    if flag == "--rule-param":
        return bad_rule_params
    if flag == "--param":
        return bad_sweep_params
    if flag == "--scheduler":  # malformed addresses (a well-formed one would wait for a scheduler)
        return st.sampled_from(["x", "", "::::", "tcp://", HUGE])
    if action.type is number:
        return _bad_number(command, flag)
    if flag in ("--size-packets", "--size-bytes"):
        return bad_sizes
    from latency_model.cli.common import ListAction

    if isinstance(action, ListAction) and action.kind != "name":  # a list of numbers (--p 0.01,0.1)
        no_list = _bad_number(command, flag).filter(lambda s: "," not in s and ":" not in s)
        return st.one_of(no_list, st.sampled_from(["1,,2", ",", "1:0", "a:b", "1:1e12", "0.1,x", "1:2:0"]))
    choices = list(action.choices or [])
    if flag in NAMES or choices:
        return st.one_of(st.text(max_size=15), huge_text).filter(
            lambda s: s not in choices and s.lower() not in _known_names(flag) and not s.startswith("-"))
    raise AssertionError(f"no bad values for {command} {flag}: add them to the fuzz test")


def _known_names(flag: str) -> set:
    from latency_model.growth import RULES
    from latency_model.params import VARIANTS
    from latency_model.sim.config import LT_MODES, PRR_MODES, RTO_RULES, RTT_SAMPLING, SENDERS
    from latency_model.sim.profiles import STACK_NAMES
    from latency_model.sim.runner import ENGINES

    return {"--variant": {*VARIANTS, "size-based"}, "--rule": set(RULES), "--stack": set(STACK_NAMES),
            "--sender": set(SENDERS), "--rtt-sampling": set(RTT_SAMPLING), "--rto-rule": set(RTO_RULES),
            "--lt-mode": set(LT_MODES), "--engine": set(ENGINES), "--prr": set(PRR_MODES)}.get(flag, set())


def argv_for(command: str, flag: str, value: str, tmp: str) -> list:
    """The base command line of ``command`` plus ``flag=value`` (replacing the base's own ``flag``)."""
    base = [w.format(tmp=tmp) for w in BASE[command]]
    drop = {flag} | ({"--jobs"} if flag in ("--scheduler", "--dask-local") else set())
    if flag == "--param":
        drop = set()
    if flag == "--points":  # the points replace the grid
        drop = {"--param"}
    out, i = [], 0
    while i < len(base):
        if base[i] in drop:
            i += 1 if base[i] in ("--quiet", "--force") else 2
            continue
        out.append(base[i])
        i += 1
    return out + [f"{flag}={value}"]


def run_cli(argv: list) -> tuple:
    """(exit status, stdout, stderr, exception) of ``latency-model argv`` in this process."""
    out, err = io.StringIO(), io.StringIO()
    exc = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse --help / --version only
            code = e.code
        except BaseException as e:  # noqa: BLE001 - a traceback is what we look for
            code, exc = None, e
    return code, out.getvalue(), err.getvalue(), exc


def problems(flag: str, result: tuple) -> list:
    """What is wrong with the answer to a bad value of ``flag`` (empty: the contract holds)."""
    code, _, err, exc = result
    found = []
    if exc is not None:
        found.append(f"traceback: {type(exc).__name__}: {str(exc)[:200]}")
        return found
    if code != 2:
        found.append(f"exit status {code}")
    if "Traceback" in err:
        found.append("traceback printed")
    lines = err.splitlines()
    if len(lines) != 1:
        found.append(f"{len(lines)} lines on stderr: {err[:300]!r}")
    elif not lines[0].startswith("latency-model: error: "):
        found.append(f"not an error line: {lines[0][:200]!r}")
    elif flag not in lines[0]:
        found.append(f"flag not named: {lines[0][:200]!r}")
    if len(err) > 600:
        found.append(f"{len(err)} characters on stderr")
    return found


def make_files(tmp: str) -> None:
    """The files the path values refer to."""
    os.makedirs(f"{tmp}/dir", exist_ok=True)
    open(f"{tmp}/file", "w").close()
    with open(f"{tmp}/binary.toml", "wb") as fh:
        fh.write(bytes(range(256)) * 4)
    with open(f"{tmp}/bad.toml", "w") as fh:
        fh.write("[params\np = ")
    with open(f"{tmp}/badkey.toml", "w") as fh:
        fh.write('nope = 1\n[params]\np = "0.1"\n')
    with open(f"{tmp}/badparam.toml", "w") as fh:
        fh.write('[params]\np = "1e-400"\n')


COMMANDS = list(BASE)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("fuzz"))
    make_files(path)
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_the_base_command_lines_are_valid(command, tmp):
    code, out, err, exc = run_cli([w.format(tmp=tmp) for w in BASE[command]])
    assert exc is None and code == 0, err


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "rules"] + ["rules"])
def test_every_bad_flag_value_is_one_line_exit_2_naming_the_flag(command, tmp):
    flags = _flags(command)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.data())
    def check(data):
        flag, action = data.draw(st.sampled_from(flags), label="flag")
        value = data.draw(bad_value(command, flag, action, tmp), label="value")
        argv = argv_for(command, flag, value, tmp)
        found = problems(flag, run_cli(argv))
        assert not found, (argv if len(" ".join(argv)) < 400 else argv[:-1] + ["<long>"], found)

    check()
