"""Every process pool of the package ends its workers with the parent (issue 20, item 3).

The guard itself (``latency_model.workers.watch_parent``) is exercised with real processes
in tests/test_sweep_orphans.py; here every ``ProcessPoolExecutor(...)`` call in the package
is read with ``ast`` and must pass an ``initializer`` (a pool added without one fails).
"""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "latency_model"


def _pool_calls():
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name == "ProcessPoolExecutor":
                    yield path.relative_to(PKG.parent), node


def test_every_process_pool_has_the_parent_death_guard():
    calls = list(_pool_calls())
    assert len(calls) >= 5  # sweep, reproduce (pieces, drawing), Monte Carlo workers, ASS experiment
    missing = [f"{p}:{n.lineno}" for p, n in calls if not any(k.arg == "initializer" for k in n.keywords)]
    assert missing == []
