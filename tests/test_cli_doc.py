"""docs/cli.md is the command reference generated from the argparse parsers: it must match them."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("make_cli_doc", ROOT / "tools" / "make_cli_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_docs_cli_md_matches_the_parsers():
    gen = _generator()
    text = gen.render()
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == text, (
        f"docs/cli.md has drifted from the argparse parsers: regenerate it with `{gen.REGENERATE}` "
        "(from the repository root) and commit the result")


def test_reference_lists_every_command_and_visible_flag():
    """Every subcommand and every flag its parser shows in --help has a line in the reference."""
    import argparse

    gen = _generator()
    text = gen.render()
    from latency_model.cli import build_parser

    def walk(parser, path):
        for name, _, sub in gen._subcommands(parser):
            yield [*path, name], sub
            yield from walk(sub, [*path, name])

    seen = 0
    for path, sub in walk(build_parser(None), ["latency-model"]):
        assert f"`{' '.join(path)}`" in text
        for action in sub._actions:
            if action.help != argparse.SUPPRESS and action.option_strings and action.dest != "help":
                assert f"`{action.option_strings[0]}`" in text
                seen += 1
    assert seen > 100  # the walk reached the flags of every command, not an empty parser
