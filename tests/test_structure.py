"""The package's import structure (issue 18): no cycle among cdlab's modules, and the
solvers never import the theory layer (sympy is not needed to solve).

The graph is read with ``ast`` from every cdlab/**/*.py: an edge A → B for each
``import B`` / ``from B import ...`` in A, at module level or inside a function
(a function-level import is a dependency too, only a later one), and A → B.y when
``from B import y`` names a submodule y. An import names its module, not the
packages above it: Python runs those packages' ``__init__`` first, but counting
that would put every module in a cycle with ``cdlab/__init__.py``, which
imports the public API from its submodules.
"""
from __future__ import annotations

import ast
from pathlib import Path

import cdlab

ROOT = Path(cdlab.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


FILES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imported_modules(name: str) -> set:
    """The cdlab modules the module ``name`` imports anywhere in its file."""
    path = FILES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            submodules = {f"{module}.{alias.name}" for alias in node.names} & set(FILES)
            found.update(submodules)
            if len(submodules) < len(node.names):  # it takes names defined in the module itself
                found.add(module)
    return {m for m in found if m in FILES and m != name}


GRAPH = {name: imported_modules(name) for name in FILES}



def find_cycle(graph):
    """One cycle of ``graph`` as a list of modules (first = last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_graph_reads_the_imports_it_should():
    """The reader finds relative, absolute, submodule and function-level imports (else the
    two tests below would pass on an empty graph)."""
    assert "cdlab.solvers.driver" in GRAPH["cdlab.solvers.auto"]  # from . import driver
    assert "cdlab.solvers.base" in GRAPH["cdlab.solvers.driver"]  # from .base import ...
    assert "cdlab.reference" in GRAPH["cdlab.solvers.auto"]  # imported inside solve()
    assert "cdlab.solvers.driver" in GRAPH["cdlab.reference"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_solvers_never_import_the_theory_layer():
    offenders = {name: sorted(m for m in deps if (m == "cdlab.theory" or m.startswith("cdlab.theory.")))
                 for name, deps in GRAPH.items() if name.startswith("cdlab.solvers")}
    offenders = {name: deps for name, deps in offenders.items() if deps}
    assert not offenders, f"cdlab/solvers imports the theory layer: {offenders}"


def test_cdlab_theory_loads_on_first_use_only():
    """``import cdlab`` loads no sympy; ``cdlab.theory`` then works without an import of its own."""
    import subprocess
    import sys

    code = ("import sys, cdlab; assert 'sympy' not in sys.modules; bound = cdlab.theory.bound; "
            "assert 'sympy' in sys.modules and bound is __import__('cdlab.theory').theory.bound; "
            "getattr(cdlab, 'nonsense', None) is None or sys.exit(1)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT.parent)
