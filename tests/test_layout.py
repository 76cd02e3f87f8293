"""The package layout of DESIGN.md holds: each layer imports only the layers below it, and no module
imports itself back through others (no import circles).

Read from the sources (runtime imports; those under `if TYPE_CHECKING:` only name types), so a change
that adds an upward import or a circle fails here, with the offending modules named.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Bottom to top; a module may import its own package and any package of a lower rank. `api` is plain data
# (it imports nothing but itself), so `k8s` may read its types, as Go's component-helpers and
# dynamic-resource-allocation read k8s.io/api. scheduler and multicluster are siblings (one cluster, a
# fleet): neither imports the other; so are planning and checks (kubefit check's assertions, which call the
# verbs back through the functions `verbs.check` hands them). serve (the web page) is a view over the verbs,
# started by the cli. dataclasscode (the dataclasses' bytecode cache, installed by the command) imports nothing of
# kubefit's.
RANK = {"errors": 0, "told": 0, "collector": 0, "dataclasscode": 0, "api": 1, "k8s": 2, "manifests": 3, "scheduler": 4, "multicluster": 4,
        "planning": 5, "checks": 5, "report": 6, "verbs": 7, "serve": 8, "cli": 9, "": 10}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) and id(n) not in typing_only]


def import_graph() -> dict[str, set[str]]:
    """kubefit module → the kubefit modules it imports at run time."""
    files = {_module_name(p): p for p in SRC.joinpath("kubefit").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
                continue
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for alias in node.names:  # `from kubefit import verbs` imports the module kubefit.verbs
                deps.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def layer(module: str) -> str:
    """`kubefit.manifests.load` → `manifests`; the top-level `kubefit` package → ``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_package_has_a_rank():
    assert {layer(m) for m in import_graph()} <= set(RANK)


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_layers_import_only_below():
    upward = sorted(f"{m} imports {d}" for m, deps in import_graph().items() for d in deps
                    if layer(d) != layer(m) and RANK[layer(d)] >= RANK[layer(m)])
    assert upward == []


def test_the_checks_can_fail():
    """A circle and an upward import in a made-up graph are found (the checks are not vacuous)."""
    graph = {"kubefit.k8s.a": {"kubefit.scheduler.b"}, "kubefit.scheduler.b": {"kubefit.k8s.a"}}
    assert circles(graph) == [["kubefit.k8s.a", "kubefit.scheduler.b"]]
    assert RANK[layer("kubefit.scheduler.b")] > RANK[layer("kubefit.k8s.a")]
