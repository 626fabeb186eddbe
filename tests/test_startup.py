"""Start-up: each command imports only what it runs; the public API is lazy.

Timings are measured by ``benchmarks/bench_cli.py``, not here; these tests pin what makes
them small: which modules a command leaves unimported.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import latency_model
from latency_model.cli import build_parser

HEAVY = ("scipy", "matplotlib", "numba")


def _imported_by(code: str) -> set[str]:
    """Top-level packages and latency_model modules in sys.modules after ``code`` runs in a
    fresh interpreter (its stdout is discarded)."""
    probe = (
        "import contextlib, io, json, sys\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} | "
        "{m for m in sys.modules if m.startswith('latency_model')})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(proc.stdout))


def _cli(argv: list[str]) -> str:
    return f"from latency_model.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"


def test_import_latency_model_imports_nothing_heavy():
    mods = _imported_by("import latency_model")
    assert not {"numpy", *HEAVY} & mods
    assert not any(m.startswith("latency_model.") for m in mods)


@pytest.mark.parametrize("argv", [["--help"], ["thresholds"], ["rules"], ["tables", "--sim-lt-mode", "none"]])
def test_model_commands_import_no_simulator_scipy_matplotlib_or_numba(argv):
    mods = _imported_by(_cli(argv))
    assert not set(HEAVY) & mods
    assert not {m for m in mods if m.startswith("latency_model.sim")}
    if argv == ["--help"]:
        assert "numpy" not in mods


def test_tables_runs_the_simulator_without_scipy_matplotlib_or_numba():
    # The simulated column is one pure-Python transfer per cell: no Monte Carlo (scipy) and
    # no compiled engine.
    mods = _imported_by(_cli(["tables"]))
    assert "latency_model.sim.singleloss" in mods
    assert not set(HEAVY) & mods


def _commands(parser, path=()):
    """(path, parser) of every command and command group, depth first."""
    if parser.commands is None:
        yield path, parser
        return
    for name, child in parser.commands.choices.items():
        yield from _commands(child, (*path, name))


def test_a_command_gets_the_same_flags_alone_as_in_the_full_parser():
    full = dict(_commands(build_parser()))
    assert len(full) == 18  # 13 commands and 5 experiments
    for path, parser in full.items():
        alone = dict(_commands(build_parser([*path, "--json"])))[path]
        assert alone.format_help() == parser.format_help(), path
    # Only the command named gets its flags.
    lazy = dict(_commands(build_parser(["thresholds"])))
    assert lazy[("thresholds",)].format_help() == full[("thresholds",)].format_help()
    assert lazy[("simulate",)].format_help() != full[("simulate",)].format_help()


def test_public_api_is_importable_from_the_package():
    for name in latency_model.__all__:
        assert getattr(latency_model, name) is not None, name
    from latency_model import TcpParams, expected_latency, simulate
    from latency_model.model.recursion import expected_latency as el
    from latency_model.sim.montecarlo import simulate as sim

    assert expected_latency is el and simulate is sim and TcpParams().w0 == 2
    assert set(latency_model.__all__) <= set(dir(latency_model))
    with pytest.raises(AttributeError):
        latency_model.no_such_name  # noqa: B018
    from latency_model import sim as sim_package  # a subpackage, not an API name

    assert sim_package.__name__ == "latency_model.sim"
