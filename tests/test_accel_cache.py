"""numba's on-disk cache follows the sources a kernel depends on (accel._fresh).

numba keys a cached kernel by its own function's bytecode and file: a helper inlined from
another module, or a constant read from it, could change without the kernel being
compiled again (a kernel of ``_packet_levels.py`` kept an older ``_packet_flat.py``'s RTO
rule). Two fresh interpreters on a small package, the helper's module edited between them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from latency_model.accel import numba_available

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba is not installed or is switched off")

ENTRY = textwrap.dedent("""
    from latency_model.accel import compile_twins
    from .a import K, helper

    def entry(x):
        return helper(x) * 10 + K

    KERNELS = compile_twins(globals(), ("helper",), (entry,))
""")


def _run(root) -> str:
    env = {k: v for k, v in os.environ.items() if k != "LATENCY_MODEL_NO_NUMBA"}
    env["NUMBA_CACHE_DIR"] = str(root / "numba-cache")
    env["PYTHONPATH"] = os.pathsep.join([str(root), *sys.path])
    out = subprocess.run([sys.executable, "-c", "import kpkg.b as b; print(b.KERNELS[0](1))"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_kernel_is_compiled_again_when_a_module_it_reads_changes(tmp_path):
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("K = 1\n\ndef helper(x):\n    return x + K\n")
    (pkg / "b.py").write_text(ENTRY)
    assert _run(tmp_path) == "21"  # (1 + 1) * 10 + 1
    assert list((tmp_path / "numba-cache").rglob("b.entry-*.nbi")), "the kernel was cached"
    assert _run(tmp_path) == "21"  # from the cache
    (pkg / "a.py").write_text("K = 2\n\ndef helper(x):\n    return x + 2 * K\n")  # b.py unchanged
    assert _run(tmp_path) == "52"  # (1 + 4) * 10 + 2, not the cached 21
    assert _run(tmp_path) == "52"
