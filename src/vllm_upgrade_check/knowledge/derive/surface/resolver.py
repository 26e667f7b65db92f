"""Name resolution across ``vllm`` modules: top-level symbols through
``import`` and ``from ... import`` re-exports, base classes, methods, public
fields and the members of a type annotation.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from vllm_upgrade_check.knowledge.derive.surface.model import SourceRef
from vllm_upgrade_check.knowledge.derive.surface.sources import _name_of, _Sources, _top_level


@dataclass(frozen=True)
class _Def:
    """A resolved top-level definition: a ClassDef, FunctionDef, assigned
    value expression, or a whole module (``ast.Module``), and its file.
    ``node`` is typed ``Any``: callers check the node kind they need."""

    path: str
    node: Any


class _Resolver:
    """Top-level symbols of ``vllm`` modules, following ``import`` and
    ``from ... import`` (absolute and relative) re-exports."""

    def __init__(self, src: _Sources) -> None:
        self.src = src
        self._symbols: dict[str, dict[str, tuple]] = {}
        self._stars: dict[str, list[str]] = {}  # from M import * (module names)

    def module_path(self, module: str) -> str | None:
        """File of dotted ``module`` (``pkg/__init__.py`` for a package)."""
        base = module.replace(".", "/")
        return next((c for c in (base + ".py", base + "/__init__.py") if self.src.has(c)), None)

    def _symbols_of(self, path: str) -> dict[str, tuple]:
        if path in self._symbols:
            return self._symbols[path]
        table: dict[str, tuple] = {}
        self._symbols[path] = table
        tree = self.src.tree(path)
        package = path[:-3].split("/")
        package = package[:-1]  # a module's package; __init__'s own package
        for stmt in _top_level(tree.body if tree else []):
            if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                table.setdefault(stmt.name, ("node", stmt))
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        table.setdefault(t.id, ("node", stmt.value))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
                table.setdefault(stmt.target.id, ("node", stmt.value))
            elif isinstance(stmt, ast.ImportFrom):
                parts = package[: len(package) - stmt.level + 1] if stmt.level else []
                module = ".".join(parts + ([stmt.module] if stmt.module else []))
                for alias in stmt.names:
                    if alias.name == "*":
                        self._stars.setdefault(path, []).append(module)
                        continue
                    table.setdefault(alias.asname or alias.name, ("from", module, alias.name))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        table.setdefault(alias.asname, ("module", alias.name))
        return table

    def lookup(self, path: str, name: str, depth: int = 0) -> _Def | None:
        """Definition that ``name`` denotes at the top level of ``path``."""
        entry = self._symbols_of(path).get(name) if depth < 12 else None
        if entry is None:
            for module in self._stars.get(path, []) if depth < 12 else []:
                target = self.module_path(module)
                found = self.lookup(target, name, depth + 1) if target else None
                if found is not None:
                    return found
            return None
        if entry[0] == "node":
            return _Def(path, entry[1])
        if entry[0] == "module":
            return self._module_def(entry[1])
        module, orig = entry[1], entry[2]
        target = self.module_path(module)
        found = self.lookup(target, orig, depth + 1) if target else None
        return found or self._module_def(f"{module}.{orig}")

    def _module_def(self, module: str) -> _Def | None:
        path = self.module_path(module)
        tree = self.src.tree(path) if path else None
        return _Def(path, tree) if path and tree is not None else None

    def resolve(self, path: str, expr: ast.AST) -> _Def | None:
        """Definition of a ``Name`` or ``module.attr`` expression in ``path``."""
        if isinstance(expr, ast.Name):
            return self.lookup(path, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve(path, expr.value)
            if base is not None and isinstance(base.node, ast.Module):
                return self.lookup(base.path, expr.attr)
        return None

    def mro(self, cls: _Def, _seen: frozenset = frozenset()) -> list[_Def]:
        """``cls`` and its resolvable base classes, depth first."""
        out = [cls]
        for base in cls.node.bases:
            found = self.resolve(cls.path, base)
            if found and isinstance(found.node, ast.ClassDef) and (found.path, found.node.name) not in _seen:
                out += self.mro(found, _seen | {(cls.path, cls.node.name)})
        return out

    def method(self, cls: _Def, name: str) -> _Def | None:
        """Method ``name`` of ``cls`` or of its first base defining it."""
        for c in self.mro(cls):
            for stmt in _top_level(c.node.body):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                    return _Def(c.path, stmt)
        return None

    def is_enum(self, cls: _Def) -> bool:
        """Whether some base class is named ``*Enum``."""
        return any(_name_of(b).endswith("Enum") for c in self.mro(cls) for b in c.node.bases)

    def fields(self, cls: _Def) -> dict[str, _Field]:
        """Public fields of a class: annotated class attributes (ClassVar
        excluded; inherited ones first), or the ``__init__`` parameters of a
        class without annotated attributes (pre-dataclass configs)."""
        out: dict[str, _Field] = {}
        chain = self.mro(cls)
        for c in reversed(chain):
            for stmt in _top_level(c.node.body):
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and not _is_classvar(stmt.annotation)
                ):
                    out[stmt.target.id] = _Field(
                        stmt.target.id, stmt.annotation, SourceRef(c.path, stmt.lineno)
                    )
        if not out:
            init = self.method(cls, "__init__")
            if init is not None:
                args = init.node.args
                params = args.posonlyargs + args.args + args.kwonlyargs
                for a in params[1:] if params and params[0].arg == "self" else params:
                    out[a.arg] = _Field(a.arg, a.annotation, SourceRef(init.path, a.lineno))
        return {k: v for k, v in out.items() if not k.startswith("_")}

    def union_members(self, path: str, ann: ast.AST | None, depth: int = 0) -> set[str]:
        """Flattened member names of a type annotation read in ``path``:
        ``Optional``/``Union``/``|``/``Annotated``/``SkipValidation`` are
        expanded, aliases resolved through imports, string annotations
        parsed; ``None`` is ``"None"``, generics give their origin
        (``list[int]`` -> ``"list"``)."""
        if ann is None or depth > 10:
            return set()
        if isinstance(ann, ast.Constant):
            if ann.value is None:
                return {"None"}
            if isinstance(ann.value, str):
                try:
                    return self.union_members(path, ast.parse(ann.value, mode="eval").body, depth + 1)
                except SyntaxError:
                    return set()
            return set()
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self.union_members(path, ann.left, depth + 1) | self.union_members(
                path, ann.right, depth + 1
            )
        if isinstance(ann, ast.Subscript):
            origin = _name_of(ann.value)
            args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if origin == "Optional":
                return self.union_members(path, args[0], depth + 1) | {"None"}
            if origin == "Union":
                return set().union(*(self.union_members(path, a, depth + 1) for a in args))
            if origin in _TRANSPARENT_WRAPPERS:
                return self.union_members(path, args[0], depth + 1)
            return {origin}
        found = self.resolve(path, ann) if isinstance(ann, (ast.Name, ast.Attribute)) else None
        if found is not None and not isinstance(found.node, (ast.ClassDef, ast.FunctionDef, ast.Module)):
            resolved = self.union_members(found.path, found.node, depth + 1)
            if resolved:
                return resolved
        name = _name_of(ann)
        return {name} if name else set()

    def top_classes(self, paths: Iterable[str]) -> Iterator[_Def]:
        """Top-level classes defined in ``paths``."""
        for path in paths:
            tree = self.src.tree(path)
            for stmt in _top_level(tree.body if tree else []):
                if isinstance(stmt, ast.ClassDef):
                    yield _Def(path, stmt)


@dataclass(frozen=True)
class _Field:
    name: str
    annotation: ast.AST | None
    ref: SourceRef


#: Subscripted annotations that stand for their first argument
#: (``SkipValidation[X]`` is pydantic's ``Annotated[X, SkipValidation()]``).
_TRANSPARENT_WRAPPERS = frozenset({"Annotated", "SkipValidation", "InitVar", "Final"})


def _is_initvar(ann: ast.AST | None) -> bool:
    return isinstance(ann, ast.Subscript) and _name_of(ann.value) == "InitVar"


def _is_classvar(ann: ast.AST) -> bool:
    if isinstance(ann, ast.Subscript):
        ann = ann.value
    return _name_of(ann) == "ClassVar"
