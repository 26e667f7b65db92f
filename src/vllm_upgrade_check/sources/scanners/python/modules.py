"""Other modules of the scanned repository, read for the dicts a vLLM call splats from them
(``from presets import FP8_PRESET; LLM(..., **FP8_PRESET)``, ``import presets;
presets.FP8_PRESET``): the module's file found by its dotted name among the repository's
files, parsed with :mod:`ast` (never imported), and the value its top level binds the name to.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Sequence

from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.python.scope import Scope, last_binding
from vllm_upgrade_check.sources.scanners.python.source import PythonSource

MAX_MODULES = 32
"""Modules read at most for one file (bounds a chain of re-exports)."""


def imported_names(tree: ast.Module) -> dict[str, tuple[str, str | None, int]]:
    """Local name -> ``(module, name in it or None for the module itself, relative level)``
    for each top-level ``import``/``from ... import`` of a module that is not vLLM's."""
    out: dict[str, tuple[str, str | None, int]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] == "vllm" and not node.level:
                continue
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = (module, alias.name, node.level)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "vllm":
                    local = alias.asname or alias.name.split(".")[0]
                    out[local] = (alias.name if alias.asname else local, None, 0)
    return out


class ModuleReader:
    """Finds and parses the repository's modules for one importing file.

    Args:
        importer: the importing file's report path.
        files: every repository file's report path.
        read: reads one of ``files`` (``None`` when it cannot be read).
    """

    def __init__(self, importer: str, files: Sequence[str], read: Callable[[str], SourceFile | None]) -> None:
        self.importer = importer
        self.files = [f for f in files if f.endswith(".py")]
        self.read = read
        self.parsed: dict[str, tuple[PythonSource, Scope] | None] = {}

    def path_of(self, module: str, level: int, importer: str | None = None) -> str | None:
        """The report path of ``module`` (dotted; ``level``: leading dots of a relative
        import) as imported from ``importer``: a relative one from the importer's package,
        an absolute one by path suffix, the importer's own directory first, then the
        shortest path; ``None`` when the repository holds no such file."""
        here = posixpath.dirname(importer or self.importer)
        tail = module.replace(".", "/") if module else ""
        names = [f"{tail}.py", f"{tail}/__init__.py"] if tail else ["__init__.py"]
        if level:
            base = here
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            wanted = {posixpath.join(base, n) if base else n for n in names}
            return next((f for f in self.files if f in wanted), None)
        found = [f for f in self.files if any(f == n or f.endswith("/" + n) for n in names)]
        if not found:
            return None
        beside = posixpath.join(here, posixpath.dirname(names[0])).strip("/")
        found.sort(key=lambda f: (posixpath.dirname(f) != beside, len(f), f))
        return found[0]

    def module(self, path: str) -> tuple[PythonSource, Scope] | None:
        """The parsed module at ``path`` and its top-level scope (``None``: unreadable)."""
        if path not in self.parsed:
            if len(self.parsed) >= MAX_MODULES:
                return None
            source = self.read(path)
            parsed: tuple[PythonSource, Scope] | None = None
            if source is not None:
                try:
                    tree = ast.parse(source.text, filename=path)
                except (SyntaxError, ValueError):
                    tree = None
                if tree is not None:
                    parsed = (PythonSource(source, tree), Scope(tree.body, None))
            self.parsed[path] = parsed
        return self.parsed[path]

    def binding(
        self, module: str, level: int, name: str, importer: str | None = None, hops: int = 0
    ) -> tuple[PythonSource, ast.AST, Scope] | None:
        """What ``name`` is bound to at the top of ``module`` (its source, value node and
        scope), following a re-export (``from .base import X as NAME``); ``None`` when the
        module or the binding is not in the repository."""
        path = self.path_of(module, level, importer)
        if path is None or hops > 8:
            return None
        parsed = self.module(path)
        if parsed is None:
            return None
        source, scope = parsed
        bound = last_binding(name, scope, 10**9)
        if bound is not None:
            return source, bound[0], scope
        imported = imported_names(source.tree).get(name)
        if imported is None or imported[1] is None:
            return None
        return self.binding(imported[0], imported[2], imported[1], path, hops + 1)
