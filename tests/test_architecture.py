"""The house's rules, read from the code's own imports (every import, at any depth: those in
functions and under ``TYPE_CHECKING`` count too). See docs/architecture.md."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "vllm_upgrade_check"
TOP = "vllm_upgrade_check"

ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "model": {"errors"},
    "parsing": {"model", "errors"},
    "knowledge": {"model", "parsing", "errors"},
    "sources": {"knowledge", "model", "parsing", "errors"},
    "matching": {"sources", "knowledge", "model", "parsing", "errors"},
    "fixing": {"sources", "knowledge", "model", "parsing", "errors"},
    "planning": {"matching", "knowledge", "model", "errors"},
    "engine": {"fixing", "matching", "sources", "knowledge", "model", "parsing", "errors", "planning"},
    "reporters": {"model"},
    "cli": {"engine", "fixing", "matching", "sources", "knowledge", "model", "parsing", "errors", "planning", "reporters"},
    "data": set(),
    "__main__": {"cli"},
}
"""What each stage may import besides itself and the top package (its version): the
pipeline reads upwards only, reporters turn a report into text and know nothing else."""

MAX_LINES = 500
"""No module is longer (the house is cut into rooms of about 500 lines)."""


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(path: Path, name: str) -> set[str]:
    """The package's modules ``path`` imports (``from a import b`` names module ``a.b`` when
    there is one); relative imports are resolved against ``name``."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        found.update(t for t in targets if t == TOP or t.startswith(TOP + "."))
    return {t for t in found if t in MODULES and t != name}


GRAPH = {name: _imports(path, name) for name, path in MODULES.items()}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else TOP


def test_every_stage_is_known() -> None:
    assert {_stage(m) for m in MODULES} - {TOP} <= set(ALLOWED)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_keep_to_the_stage_rules(module: str) -> None:
    stage = _stage(module)
    wrong = sorted(
        t for t in GRAPH[module] if _stage(t) not in {stage, TOP} and _stage(t) not in ALLOWED.get(stage, set())
    )
    assert not wrong, f"{module} ({stage}) may not import {wrong}"


def test_there_is_no_import_circle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(GRAPH[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not circles, f"import circles: {circles}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_too_long(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines"


def test_the_check_sees_a_wrong_import() -> None:
    """The rules are not vacuous: the graph holds the imports the pipeline is made of."""
    assert "vllm_upgrade_check.model.findings" in GRAPH["vllm_upgrade_check.reporters.json_report"]
    assert any(_stage(t) == "sources" for t in GRAPH["vllm_upgrade_check.engine.scan"])
