"""One grammar for every command: walks the parser of every subcommand (as built by
``latency_model.cli.build_parser()``) and fails on a flag that breaks it.

The rules (docs of ``latency_model.cli.common``):
- a flag that takes several values is a list flag (``ListAction``): commas, spaces and
  ``a:b[:step]`` ranges all work;
- the worker count of a parallel command is ``--jobs`` (``--workers`` a hidden alias);
- a flag in seconds ends in ``-s``, one in bytes in ``-bytes`` (the old names are hidden aliases);
- every command has ``--json``;
- a numeric flag refuses an integer too large for a float in one line naming the flag.
"""

from __future__ import annotations

import argparse
import re

import pytest

from latency_model.cli import build_parser
from latency_model.cli.common import CliError, ListAction, hidden_aliases, integer, number, parse_list

from _cli import one_error_line, refused, run

PARALLEL = {"simulate", "reproduce", "validate", "accuracy", "sweep", "experiment ass", "experiment modern"}
"""Commands that run worker processes."""

def commands():
    """``(name, parser)`` of every command that runs something (has a handler)."""
    out = []

    def walk(parser, path):
        if parser.get_default("func") is not None:
            out.append((" ".join(path), parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, [*path, name])

    walk(build_parser(), [])
    return out


COMMANDS = commands()
OPTIONS = [(name, a) for name, p in COMMANDS for a in p._actions
           if a.option_strings and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


def _id(item):
    name, action = item
    return f"{name} {action.option_strings[0]}"


def test_the_walk_sees_every_command():
    names = {n for n, _ in COMMANDS}
    assert {"tables", "thresholds", "latency", "rules", "reproduce", "validate", "plot", "simulate",
            "single-loss", "trace", "experiment", "experiment btcp", "experiment smoothtcp", "experiment ngwa",
            "experiment ass", "experiment modern", "sweep", "accuracy"} <= names


@pytest.mark.parametrize("name,parser", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_has_json(name, parser):
    flags = {s for a in parser._actions for s in a.option_strings}
    assert "--json" in flags, name


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_a_flag_taking_several_values_is_a_list_flag(item):
    name, action = item
    text = (action.help or "").lower()
    several = action.nargs in ("+", "*") or "comma" in text or re.search(r"\ba,b\b", text)
    if "=" in str(action.metavar):  # KEY=VALUE items (--rule-param, --param, --where): one per flag
        return
    if several:
        assert isinstance(action, ListAction), f"{name} {action.option_strings[0]} takes several values"
    if isinstance(action, ListAction):
        assert action.nargs == "+"


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_no_flag_uses_a_bare_int_or_float_type(item):
    # int('1' * 400) passes and overflows later; number and integer bound it
    name, action = item
    assert action.type not in (int, float), f"{name} {action.option_strings[0]}"


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_units_are_in_the_names(item):
    name, action = item
    flag = action.option_strings[0]
    text = action.help or ""
    if action.metavar == "SECONDS" or re.search(r"\bseconds\b", text.split("(")[0]):
        assert flag.endswith("-s"), f"{name} {flag}: a time in seconds"
    if re.search(r"\bbytes\b", text.split("(")[0]) and "packets" not in flag:
        assert flag.endswith("-bytes"), f"{name} {flag}: a size in bytes"


@pytest.mark.parametrize("item", OPTIONS, ids=_id)
def test_old_names_are_hidden_aliases(item):
    name, action = item
    shown = [s for s in action.option_strings if s not in hidden_aliases(action)]
    # one name shown (the canonical one, first); --fin/--no-fin is one flag and its negation
    assert shown == [action.option_strings[0]] or isinstance(action, argparse.BooleanOptionalAction), \
        (name, action.option_strings)
    if action.dest in ("jobs", "workers"):
        assert action.option_strings[0] == "--jobs", (name, action.option_strings)
        assert "--workers" not in shown


@pytest.mark.parametrize("name,parser", COMMANDS, ids=[n for n, _ in COMMANDS])
def test_help_shows_no_hidden_alias_and_parallel_commands_take_jobs(name, parser):
    help_text = parser.format_help()
    # the usage and each flag's own line (a help sentence may cite another command's flag)
    text = parser.format_usage() + "\n".join(line for line in help_text.splitlines()
                                              if line.lstrip().startswith("-"))
    for action in parser._actions:
        for alias in hidden_aliases(action):
            assert not re.search(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", text), (name, alias)
    flags = {s for a in parser._actions for s in a.option_strings}
    if name in PARALLEL:
        assert "--jobs" in flags and "--jobs" in help_text, name


BIG = "1" * 400


@pytest.mark.parametrize("item", [o for o in OPTIONS if o[1].type in (number, integer)
                                  or (isinstance(o[1], ListAction) and o[1].kind != "name")], ids=_id)
def test_an_integer_too_large_for_a_float_is_one_line_naming_the_flag(capsys, item):
    name, action = item
    for flag in action.option_strings:
        line = refused(capsys, [*name.split(), flag, BIG, *(["x.csv"] if name == "plot" else [])])
        shown = action.option_strings[0] if flag in hidden_aliases(action) else flag
        assert shown in line and ("too large" in line or "range" in line), line


# ---------------------------------------------------------------------------
# The list grammar itself


@pytest.mark.parametrize("words,kind,expected", [
    (["0.01,0.1"], "number", [0.01, 0.1]),
    (["0.01", "0.1"], "number", [0.01, 0.1]),
    (["1:3,7", "9:13:2"], "number", [1, 2, 3, 7, 9, 11, 13]),
    (["0.5:1.5:0.5"], "number", [0.5, 1.0, 1.5]),
    (["2,10"], "integer", [2, 10]),
    (["a,b", "c"], "name", ["a", "b", "c"]),
])
def test_commas_spaces_and_ranges_mix(words, kind, expected):
    assert parse_list(words, "--x", kind) == expected


@pytest.mark.parametrize("words,kind,needle", [
    (["2,,10"], "number", "empty item"), ([","], "number", "at least one value"),
    (["x"], "number", "must be a number, list or range"), (["1.5"], "integer", "must be an integer"),
    (["3:1"], "number", "is empty"), (["1:1e12"], "number", "more than the 1,000,000"),
    ([BIG], "number", "too large"),
])
def test_bad_lists_name_the_flag(words, kind, needle):
    with pytest.raises(CliError, match="--x") as err:
        parse_list(words, "--x", kind)
    assert needle in str(err.value)


def test_the_same_list_by_commas_spaces_or_a_range(capsys):
    outs = []
    for sizes in (["1,2,3"], ["1", "2", "3"], ["1:3"]):
        code, out, _ = run(capsys, "latency", "--size-packets", *sizes, "--json")
        assert code == 0
        outs.append(out)
    assert outs[0] == outs[1] == outs[2]


def test_old_names_still_work(capsys):
    a = run(capsys, "thresholds", "--mss", "1000", "--json")
    b = run(capsys, "thresholds", "--mss-bytes", "1000", "--json")
    assert a[0] == b[0] == 0 and a[1] == b[1]
    a = run(capsys, "latency", "--rtt", "0.2", "--size-packets", "4", "--rto", "2", "--json")
    b = run(capsys, "latency", "--rtt-s", "0.2", "--size-packets", "4", "--rto-s", "2", "--json")
    assert a[0] == b[0] == 0 and a[1] == b[1]
    a = run(capsys, "simulate", "--size-packets", "3", "--runs", "50", "--workers", "2", "--json")
    b = run(capsys, "simulate", "--size-packets", "3", "--runs", "50", "--jobs", "2", "--json")
    assert a[0] == b[0] == 0 and a[1] == b[1]


def test_single_loss_takes_a_range(capsys):
    import json

    code, out, _ = run(capsys, "single-loss", "--size-packets", "1:12", "--json")
    assert code == 0
    d = json.loads(out)["results"]
    assert [r["size_packets"] for r in d] == list(range(1, 13))
    # each size as it runs alone
    alone = json.loads(run(capsys, "single-loss", "--size-packets", "12", "--json")[1])["results"][0]
    assert d[-1] == alone


def test_experiment_alone_lists_the_experiments(capsys):
    import json

    code, out, _ = run(capsys, "experiment")
    assert code == 0 and all(n in out for n in ("btcp", "smoothtcp", "ngwa", "ass", "modern"))
    code, out, _ = run(capsys, "experiment", "--json")
    assert [e["name"] for e in json.loads(out)["experiments"]] == ["btcp", "smoothtcp", "ngwa", "ass", "modern"]


def test_list_flags_of_experiments_take_spaces_and_commas(capsys):
    a = run(capsys, "experiment", "modern", "--quick", "--variants", "newreno", "lt", "--iw", "2",
            "--p", "0.05", "0.1", "--size-packets", "2:4", "--runs", "20", "--json")
    b = run(capsys, "experiment", "modern", "--quick", "--variant", "newreno,lt", "--iw", "2",
            "--p", "0.05,0.1", "--size-packets", "2,3,4", "--runs", "20", "--json")
    assert a[0] == b[0] == 0
    assert a[1] == b[1]
    one_error_line(refused(capsys, ["experiment", "modern", "--iw", "2.5"], "--iw") + "\n")


def test_trace_follows_one_transfer_and_says_so(capsys):
    refused(capsys, ["trace", "--size-packets", "1:5"], "--size-packets gives 5 sizes", "one transfer")
    refused(capsys, ["trace", "--size-bytes", "500,1000"], "--size-bytes gives 2 sizes")
    code, out, _ = run(capsys, "trace", "--size-packets", "3", "--drop", "1")
    assert code == 0 and out.startswith("time_s,event")


@pytest.mark.parametrize("argv", [["thresholds", "--rule", "generalized", "--rule-param", "beta=" + BIG],
                                  ["latency", "--rule", "btcp", "--rule-param", "f=" + BIG, "--size-packets", "3"]])
def test_a_rule_parameter_too_large_for_a_float_is_one_line(capsys, argv):
    refused(capsys, argv, "--rule-param", "too large")
