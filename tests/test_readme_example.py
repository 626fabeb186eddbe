"""The README's ten-line Python example prints exactly the output shown under it."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _example():
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- example -->\s*```python\n(.*?)```\s*prints[^\n]*\n\s*```text\n(.*?)```", text, re.S)
    assert m, "README must hold a python block marked <!-- example --> followed by 'prints' and a text block"
    return m.group(1), m.group(2)


def test_readme_example_prints_what_the_readme_shows():
    code, expected = _example()
    assert len(code.strip().splitlines()) <= 10
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    assert buf.getvalue() == expected
