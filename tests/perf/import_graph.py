#!/usr/bin/env python3
"""Count the import cycles, cross-module private-name imports and upward imports of the service's apps.

    .venv/bin/python tests/perf/import_graph.py            (a summary; exit status 0 whatever it finds)
    .venv/bin/python tests/perf/import_graph.py --list     (every cycle, private import and upward import)

It reads the source with the standard library's `ast` (nothing is imported, no Django set-up) under sizing/,
benchmarks_app/, reports/ and frontend/ (deploy/ is read too, as the top of the layers). An edge A → B is any
`import B` / `from B import x` in A, resolved to the module it names (`from p import m` is an edge to p.m when p/m.py
exists), at any depth in the file; each edge is marked `top` (runs when A is imported), `func` (inside a function) or
`typing` (under `if TYPE_CHECKING:`).

- cycles: strongly connected components of two or more modules, once over all edges (what import-linter sees),
  once over the `top` edges alone (the cycles Python meets at import time), and once over all edges but a task's
  import of its own app's services inside the task body (services import tasks at module top: the sanctioned break);
- private imports: `from B import _name` or `B._name` (B a module imported in A), A ≠ B, `_name` not a dunder, and
  `_name` not a module (importing a private module is the package's business: counted apart);
- upward imports: an edge against the layers frontend → reports → benchmarks_app → sizing, or from an app into
  deploy (the contracts in pyproject.toml's [tool.importlinter] hold these; this only counts them).

Not part of the test suite: it measures (issue 21's "say how you measured").
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("sizing", "benchmarks_app", "reports", "frontend")
LAYERS = ("frontend", "reports", "benchmarks_app", "sizing")  # high to low
PACKAGES = (*APPS, "deploy")


@dataclass(frozen=True, kw_only=True)
class Edge:
    importer: str
    imported: str
    kind: str  # top | func | typing
    line: int


def module_files() -> dict[str, Path]:
    """Map every module name under PACKAGES to its file."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def resolve_from(node: ast.ImportFrom, importer: str, modules: dict[str, Path]) -> str | None:
    """Return the absolute module named by a `from ... import` (None when it is outside PACKAGES)."""
    if node.level:
        base = importer.split(".")
        if not is_package(importer, modules):
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        name = ".".join([*base, node.module] if node.module else base)
    else:
        name = node.module or ""
    return name if name.split(".")[0] in PACKAGES else None


def nearest_module(name: str, modules: dict[str, Path]) -> str | None:
    """Return the longest prefix of a dotted name that is a module of ours."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


class Reader(ast.NodeVisitor):
    """Collect one module's edges and its private-name uses."""

    def __init__(self, importer: str, modules: dict[str, Path]) -> None:
        self.importer = importer
        self.modules = modules
        self.depth = 0  # functions we are inside
        self.typing = 0  # `if TYPE_CHECKING:` blocks we are inside
        self.edges: list[Edge] = []
        self.private: list[tuple[str, str, str, int]] = []  # importer, module, name, line
        self.private_modules: list[tuple[str, str, int]] = []  # importer, private module, line
        self.aliases: dict[str, str] = {}  # local name → module of ours

    def kind(self) -> str:
        return "typing" if self.typing else "func" if self.depth else "top"

    def add(self, imported: str, line: int) -> None:
        if imported != self.importer:
            self.edges.append(Edge(importer=self.importer, imported=imported, kind=self.kind(), line=line))

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        self.typing += checking
        for child in node.body:
            self.visit(child)
        self.typing -= checking
        for child in node.orelse:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            module = nearest_module(alias.name, self.modules)
            if module is None:
                continue
            self.add(module, node.lineno)
            self.note_private_module(module, node.lineno)
            if alias.asname:
                self.aliases[alias.asname] = module

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = resolve_from(node, self.importer, self.modules)
        if base is None:
            return
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if submodule in self.modules:
                self.add(submodule, node.lineno)
                self.note_private_module(submodule, node.lineno)
                self.aliases[alias.asname or alias.name] = submodule
                continue
            module = nearest_module(base, self.modules)
            if module is None:
                continue
            self.add(module, node.lineno)
            if is_private(alias.name) and module != self.importer:
                self.private.append((self.importer, module, alias.name, node.lineno))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases and is_private(node.attr):
            module = self.aliases[node.value.id]
            if f"{module}.{node.attr}" not in self.modules and module != self.importer:
                self.private.append((self.importer, module, node.attr, node.lineno))
        self.generic_visit(node)

    def note_private_module(self, module: str, line: int) -> None:
        last = module.rsplit(".", 1)[-1]
        if is_private(last) and not module.startswith(self.importer.rsplit(".", 1)[0] + "."):
            self.private_modules.append((self.importer, module, line))


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def strongly_connected(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of two or more modules, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def layer(module: str) -> str:
    return module.split(".")[0]


def upward(edge: Edge) -> bool:
    low, high = layer(edge.importer), layer(edge.imported)
    if high == "deploy":
        return low in APPS
    if low in LAYERS and high in LAYERS:
        return LAYERS.index(high) < LAYERS.index(low)
    return False


def task_body(edge: Edge) -> bool:
    """A task module's function-level import of its own app's services (the sanctioned break of the cycle)."""
    app = edge.importer.split(".")[0]
    return (
        edge.kind == "func"
        and edge.importer == f"{app}.tasks"
        and (edge.imported == f"{app}.services" or edge.imported.startswith(f"{app}.services."))
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every cycle, private import and upward import")
    args = parser.parse_args()
    modules = module_files()
    edges: list[Edge] = []
    private: list[tuple[str, str, str, int]] = []
    private_modules: list[tuple[str, str, int]] = []
    for name, path in modules.items():
        reader = Reader(name, modules)
        reader.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        edges += reader.edges
        private += reader.private
        private_modules += reader.private_modules
    app_modules = sorted(m for m in modules if layer(m) in APPS)
    graphs = {
        "all imports": {(e.importer, e.imported) for e in edges},
        "top-level imports": {(e.importer, e.imported) for e in edges if e.kind == "top"},
        # the pattern that breaks services ↔ tasks (HackSoft): services import their app's tasks at module top, a task
        # imports the service it runs inside its body; every other function-level import counts
        "all but task bodies": {(e.importer, e.imported) for e in edges if not task_body(e)},
    }
    up = sorted({(e.importer, e.imported, e.kind, e.line) for e in edges if upward(e)})
    private_unique = sorted(set(private))
    print(f"modules: {len(app_modules)} in {', '.join(APPS)}")
    for label, pairs in graphs.items():
        adjacency: dict[str, set[str]] = {}
        for a, b in pairs:
            if layer(a) in APPS and layer(b) in APPS:
                adjacency.setdefault(a, set()).add(b)
        cycles = strongly_connected(app_modules, adjacency)
        print(f"import cycles ({label}): {len(cycles)} ({sum(map(len, cycles))} modules)")
        if args.list:
            for cycle in cycles:
                print("   ", " ↔ ".join(cycle))
    print(f"function-level imports of our modules: {sum(e.kind == 'func' for e in edges if layer(e.importer) in APPS)}")
    if args.list:
        for e in sorted(edges, key=lambda e: (e.importer, e.line)):
            if e.kind == "func" and layer(e.importer) in APPS and layer(e.imported) in APPS and not task_body(e):
                print(f"    {e.importer}:{e.line} → {e.imported}")
    print(f"private names imported across modules: {len(private_unique)}")
    if args.list:
        for importer, module, name, line in private_unique:
            print(f"    {importer}:{line} {module}.{name}")
    print(f"private modules imported from outside their package: {len(set(private_modules))}")
    if args.list:
        for importer, module, line in sorted(set(private_modules)):
            print(f"    {importer}:{line} {module}")
    print(f"upward imports: {len(up)}")
    if args.list:
        for importer, imported, kind, line in up:
            print(f"    {importer}:{line} → {imported} ({kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
