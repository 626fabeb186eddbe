"""numba's compiled-code cache goes to the user cache folder, never beside the installed sources.

numba's default (a ``__pycache__`` next to each source file) left files in site-packages that
pip does not record; after ``pip install .`` and a run, ``pip install -e .`` then left a
half-removed package folder that shadowed the editable install.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

_PROBE = textwrap.dedent(
    """
    import sys
    if {numba_first}:
        import numba  # imported before latency_model, without NUMBA_CACHE_DIR
    from latency_model.accel import numba_available
    assert numba_available()
    import numba
    sys.path.insert(0, {src!r})
    import probe_mod
    assert numba.njit(cache=True)(probe_mod.twice)(21) == 42
    """
)


def _run(tmp_path: Path, numba_first: bool, env_extra: dict) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "probe_mod.py").write_text("def twice(x):\n    return 2 * x\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "LATENCY_MODEL_NO_NUMBA")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), **env_extra)
    code = _PROBE.format(numba_first=numba_first, src=str(src))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
    beside = [p.name for p in src.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert beside == [], f"numba cached beside the source: {beside}"


@pytest.mark.parametrize("numba_first", [False, True])
def test_cache_goes_to_the_user_cache_folder(tmp_path, numba_first):
    _run(tmp_path, numba_first, {})
    cached = [p for p in (tmp_path / "xdg" / "latency_model" / "numba").rglob("*.nbi")]
    assert cached, "no index file in <XDG_CACHE_HOME>/latency_model/numba"


def test_numba_cache_dir_is_honoured(tmp_path):
    chosen = tmp_path / "chosen"
    _run(tmp_path, False, {"NUMBA_CACHE_DIR": str(chosen)})
    assert list(chosen.rglob("*.nbi"))
    assert not (tmp_path / "xdg" / "latency_model").exists()


_SHARED_PROBE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    import latency_model
    assert latency_model.__file__.startswith({root!r}), latency_model.__file__
    from latency_model.accel import numba_available
    assert numba_available()
    import numba
    from latency_model.sim.flat import tick
    compiled = numba.njit(cache=True)(tick)
    assert compiled(0.25) == 250_000_000
    print(sum(compiled.stats.cache_hits.values()))
    """
)


def test_two_installed_copies_of_the_same_sources_share_the_compiled_code(tmp_path):
    """``pip install .`` and then ``pip install -e .`` (the README's order) give two copies of
    the package at two paths; numba's own key (the absolute folder) made each compile
    everything afresh. The same sources at another path now load the first copy's code;
    changed sources compile anew."""
    import shutil

    import latency_model

    here = Path(latency_model.__file__).parent
    copies = []
    for name in ("site", "editable", "changed"):
        root = tmp_path / name
        shutil.copytree(here, root / "latency_model", ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(root)
    flat = copies[2] / "latency_model" / "sim" / "flat.py"
    flat.write_text(flat.read_text() + "\n# changed\n")
    env = {k: v for k, v in os.environ.items() if k not in ("LATENCY_MODEL_NO_NUMBA",)}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH="")

    def hits(root):
        out = subprocess.run([sys.executable, "-c", _SHARED_PROBE.format(root=str(root))], check=True,
                             env=env, timeout=300, capture_output=True, text=True, cwd=tmp_path)
        return int(out.stdout.split()[-1])

    assert [hits(root) for root in copies] == [0, 1, 0]
