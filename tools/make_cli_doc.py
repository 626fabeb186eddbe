"""Write docs/cli.md, the command reference, from the `latency-model` argparse parsers.

Run from the repository root:

    python tools/make_cli_doc.py           # rewrite docs/cli.md
    python tools/make_cli_doc.py --check   # exit 1 (and say so) when docs/cli.md differs

The reference is generated, never edited by hand: it walks ``latency_model.cli.build_parser()``
(every command, every command group, every flag that is not hidden) and writes each command's
usage, its description and one table row per flag (names, value, default, help).
``tests/test_cli_doc.py`` fails when the file drifts from the parsers.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "cli.md"
REGENERATE = "python tools/make_cli_doc.py"
WIDTH = 100  # argparse wraps usage lines to the terminal; fixed so the file does not depend on it


def _subcommands(parser: argparse.ArgumentParser):
    """(name, help, subparser) of each subcommand of ``parser``, in registration order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(action: argparse.Action) -> str:
    d = action.default
    if d is None or d is argparse.SUPPRESS or isinstance(action, (argparse._StoreTrueAction,
                                                                  argparse._StoreFalseAction,
                                                                  argparse._HelpAction,
                                                                  argparse._VersionAction)):
        return ""
    if isinstance(d, (list, tuple)):
        d = " ".join(map(str, d))
    return f"`{d}`" if str(d) else ""


def _value(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None and action.metavar is None:
        return "`" + "\\|".join(map(str, action.choices)) + "`"
    return "`" + formatter._format_args(action, formatter._get_default_metavar_for_optional(action)) + "`"


def _command(lines: list, path: list[str], help_line: str, parser: argparse.ArgumentParser) -> None:
    formatter = parser._get_formatter()
    lines += [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", ""]
    if help_line:
        lines += [_cell(help_line) + ("" if help_line.endswith(".") else "."), ""]
    if parser.description and parser.description != help_line:
        lines += [parser.description.strip(), ""]
    lines += ["```", parser.format_usage().strip().removeprefix("usage: "), "```", ""]
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction,
                                                                    argparse._SubParsersAction)):
            continue
        names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.dest}`"
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {names} | {_value(action, formatter)} | {_default(action)} | {_cell(help_text)} |")
    if rows:
        lines += ["| flag | value | default | meaning |", "|---|---|---|---|", *rows, ""]
    subs = list(_subcommands(parser))
    if subs:
        lines += ["Commands: " + ", ".join(f"[`{n}`](#{'-'.join([*path, n]).replace(' ', '-')})"
                                           for n, _, _ in subs) + ".", ""]
    for name, sub_help, sub in subs:
        _command(lines, [*path, name], sub_help, sub)


def render() -> str:
    """The whole reference as Markdown text."""
    from latency_model.cli import build_parser

    parser = build_parser(None)
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # argparse reads it when it formats usage
    try:
        return _render(parser)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _render(parser) -> str:
    lines = ["# Command reference: `latency-model`", "",
             f"Generated from the argparse parsers by `{REGENERATE}`; do not edit by hand "
             "(`tests/test_cli_doc.py` fails when this file and the parsers differ).", "",
             "Every command prints one line and exits with status 2 on bad input; "
             "`latency-model COMMAND --help` prints the same text as below.", ""]
    _command(lines, ["latency-model"], "", parser)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md differs from the parsers")
    args = ap.parse_args(argv)
    text = render()
    old = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    if args.check:
        if old != text:
            print(f"{OUT.relative_to(ROOT)} differs from the parsers: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if old != text:
        tmp = OUT.with_suffix(".md.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(OUT)
        print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
