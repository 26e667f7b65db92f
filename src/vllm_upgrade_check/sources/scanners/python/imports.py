"""The facts of a Python file's imports of vLLM."""

from __future__ import annotations

import ast

from vllm_upgrade_check.model.facts import Fact, FactKind, Span, Spans
from vllm_upgrade_check.sources.scanners.python.source import PythonSource


def import_facts(source: PythonSource, node: ast.Import | ast.ImportFrom) -> list[Fact]:
    """``import`` facts for an import of vllm, whose names are recorded as aliases of
    ``source`` (``from vllm import LLM`` makes ``LLM`` stand for ``vllm.LLM``)."""
    facts: list[Fact] = []
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if node.level or not (module == "vllm" or module.startswith("vllm.")):
            return facts
        spans = Spans(name=source.module_span(node, module), syntax="python")
        for alias in node.names:
            source.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
            facts.append(
                Fact(
                    FactKind.IMPORT,
                    module,
                    source.loc(alias if hasattr(alias, "lineno") else node),
                    raw=f"from {module} import {alias.name}",
                    value=alias.name,
                    origin="python",
                    scanner="python",
                    spans=spans,
                )
            )
        return facts
    for alias in node.names:
        if not (alias.name == "vllm" or alias.name.startswith("vllm.")):
            continue
        if alias.asname:
            source.aliases[alias.asname] = alias.name
        at = source.span(alias) if hasattr(alias, "lineno") else None
        name = None if at is None else Span(at.line, at.column, at.line, at.column + len(alias.name))
        facts.append(
            Fact(
                FactKind.IMPORT,
                alias.name,
                source.loc(alias if hasattr(alias, "lineno") else node),
                raw=f"import {alias.name}",
                origin="python",
                scanner="python",
                spans=Spans(name=name, syntax="python"),
            )
        )
    return facts
