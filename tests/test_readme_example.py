"""The README's worked examples (model, simulator, sweep) print exactly the output shown under each."""

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
NAMES = ("model", "simulator", "sweep")
_BLOCK = re.compile(r"<!-- example: (\w+) -->\s*```python\n(.*?)```\s*prints\s*```text\n(.*?)```", re.S)


def _examples() -> dict:
    return {m.group(1): (m.group(2), m.group(3)) for m in _BLOCK.finditer(README.read_text(encoding="utf-8"))}


def test_readme_has_the_three_examples_and_nothing_unchecked():
    text = README.read_text(encoding="utf-8")
    assert tuple(_examples()) == NAMES
    # every python block of the README is one of the checked examples
    assert text.count("```python") == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_readme_example_prints_what_the_readme_shows(name, tmp_path, monkeypatch):
    code, expected = _examples()[name]
    assert len(code.strip().splitlines()) <= 12, "a README example is short"
    monkeypatch.chdir(tmp_path)  # the sweep example writes sweep.csv in the working folder
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, f"README.md ({name} example)", "exec"), {"__name__": "readme_example"})
    assert buf.getvalue() == expected


def test_readme_opens_with_the_two_commands_the_fresh_clone_script_runs():
    """The README's two commands, in order, as benchmarks/fresh_clone.py reads them."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fresh_clone", README.parent / "benchmarks" / "fresh_clone.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.readme_commands(README.read_text(encoding="utf-8")) == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/latency-model reproduce",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest --slow-budget small",
    ]


def test_readme_quotes_the_fresh_clone_scripts_latest_run():
    """The README's timing table is `python benchmarks/fresh_clone.py --table` (rerun it after a new run)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fresh_clone", README.parent / "benchmarks" / "fresh_clone.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    table = mod.markdown_table(README.parent / "validation" / "fresh_clone.csv")
    assert table in README.read_text(encoding="utf-8"), (
        "README's timing table differs from validation/fresh_clone.csv's latest run: paste the output of "
        "`python benchmarks/fresh_clone.py --table`")
