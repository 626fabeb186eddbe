"""The package's import graph: no circle, the model and the simulator apart, the CLI layered.

Every module of ``latency_model`` is parsed with ``ast`` (no import is executed) and every
``import`` / ``from ... import`` statement is read, at module level and inside functions,
relative ones resolved. An edge goes to the module named: ``from a.b import c`` is an edge
to ``a.b.c`` when that is a module of the package, else to ``a.b``. Two kinds of import
are left out on purpose: the parent packages Python runs before a module (``a`` and ``a.b``
for ``a.b.c``: counting them would make every package with a submodule a circle), and
imports under ``if TYPE_CHECKING:`` (annotations only, never executed). The lazy
``__getattr__`` of ``latency_model`` and ``latency_model.sim`` imports by name on first
use and so adds no edge either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "latency_model"
ROOT = "latency_model"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """Import statements anywhere in ``tree`` (functions included), except under
    ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)  # the else branch runs
                continue
            stack.append(child)


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of ``from <node.module> import ...`` written in ``module``."""
    if node.level == 0:
        return node.module
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> set[str]:
    """Modules of the package that ``module`` imports."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), filename=str(MODULES[module]))
    out = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            target = _resolve(module, node)
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
        out.update(n for n in names if n == ROOT or n.startswith(ROOT + "."))
    unknown = out - MODULES.keys()
    assert not unknown, f"{module} imports modules that do not exist: {sorted(unknown)}"
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one module that
    imports itself (Tarjan)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _edges(src_pkg: str, dst_pkg: str) -> list[tuple[str, str]]:
    return sorted((m, d) for m, deps in GRAPH.items() if _under(m, src_pkg)
                  for d in deps if _under(d, dst_pkg))


def test_the_walk_sees_the_layout():
    # Guards the test itself: the packages exist and known imports are found (a function-level
    # one, a relative one two levels up, one of a package's __init__).
    for pkg in ("model", "sim", "growth", "experiments", "studies", "cli"):
        assert f"{ROOT}.{pkg}" in MODULES, pkg
    assert "latency_model.model.recursion" in GRAPH["latency_model.cli.model"]  # inside cmd_latency
    assert "latency_model.params" in GRAPH["latency_model.studies.sweep.plan"]  # from ...params
    assert "latency_model.cli.model" in GRAPH["latency_model.cli"]
    assert "latency_model.model._tables" in GRAPH["latency_model.model.recursion"]


def test_no_import_cycle_between_modules():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]


def test_model_and_simulator_never_import_each_other():
    # DESIGN.md: the two halves meet only in studies, tests and the CLI, which keeps the
    # cross-check honest; one exception, the developers' guide's updated independence rule:
    # the exact packet model may drive the simulator's own transitions, in one module
    # (model/_packet_sim.py; the independent check of the sender is the real stacks).
    assert _edges("latency_model.sim", "latency_model.model") == []
    assert {m for m, _ in _edges("latency_model.model", "latency_model.sim")} == {"latency_model.model._packet_sim"}



def test_cli_command_modules_never_import_the_cli_package():
    # cli/__init__ imports every command module to build the parser; a command module that
    # imported it back would close a circle. They import from cli.common instead.
    commands = [m for m in MODULES if m.startswith("latency_model.cli.") and m != "latency_model.cli.__main__"]
    assert len(commands) >= 8
    assert [(m, "latency_model.cli") for m in commands if "latency_model.cli" in GRAPH[m]] == []


@pytest.mark.parametrize("lower", ["latency_model.params", "latency_model.checks", "latency_model.values",
                                   "latency_model.accel", "latency_model.growth", "latency_model.model",
                                   "latency_model.sim"])
def test_core_model_and_simulator_import_no_study_experiment_or_cli(lower):
    for upper in ("latency_model.studies", "latency_model.experiments", "latency_model.cli"):
        assert _edges(lower, upper) == []
