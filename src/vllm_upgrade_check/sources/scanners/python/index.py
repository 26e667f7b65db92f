"""One pass over a Python file's :mod:`ast` (:class:`TreeIndex`): every scope's nodes in source
order, the functions each defines and the imports it holds, the calls of the whole tree, its
docstrings and the string literals naming ``vllm:`` metrics. The Python scanner and the
monitoring scanner's scraper code read the same index of the same parse
(:func:`parsed_module`), so no reader walks the tree again.

The walk is hand-written over each node's ``_fields`` (:func:`ast.walk` and
:func:`ast.iter_child_nodes` are generators; on a dense repository they were a third of the
Python scanner's time).
"""

from __future__ import annotations

import ast
from functools import lru_cache

from vllm_upgrade_check.sources.scanners.python.scope import MAX_SCOPE_NODES, Scope, target_names

METRIC_PREFIX = "vllm:"
"""What a string literal holds for the monitoring scanner to read it (a vLLM metric's prefix)."""

_AST = ast.AST
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_ASSIGNS = (ast.Assign, ast.AugAssign, ast.AnnAssign)


class TreeIndex:
    """What the readers of one parsed file look up, collected in one walk of its tree.

    Attributes:
        module: the module's scope; ``scopes``: every scope, breadth first (the module, then
            the bodies of the definitions in it in source order, then theirs); ``inner``: the
            scope of each definition's body, by ``id`` of its node. A scope holds at most
            :data:`~.scope.MAX_SCOPE_NODES` nodes (the rest of it is read by no reader).
        calls: every ``ast.Call`` of the tree, also those in decorators, defaults and lambdas.
        imports: every ``import``/``from ... import`` of the tree, in :func:`ast.walk` order.
        docstrings: ``id`` of each docstring's ``ast.Constant`` (module, class, function).
        metric_strings: the ``str`` constants holding ``vllm:`` that are not docstrings, in
            :func:`ast.walk` order.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.module = module = Scope.empty(None)
        self.inner: dict[int, Scope] = {}
        self.calls: list[ast.Call] = []
        self.docstrings: set[int] = set()
        imports: list[tuple[int, ast.Import | ast.ImportFrom]] = []
        metrics: list[tuple[int, ast.Constant]] = []
        calls, inner, docstrings = self.calls, self.inner, self.docstrings
        children: dict[int, list[Scope]] = {id(module): []}
        _docstring(tree, docstrings)
        # (node, the scope it is a node of or None, depth below the module): pre-order
        stack: list[tuple[ast.AST, Scope | None, int]] = [(n, module, 1) for n in reversed(tree.body)]
        pop, push = stack.pop, stack.append
        while stack:
            node, scope, depth = pop()
            if scope is not None:
                if len(scope.nodes) < MAX_SCOPE_NODES:
                    scope.nodes.append(node)
                else:
                    scope = None
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)  # type: ignore[arg-type]
            elif kind is ast.Constant:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is str and METRIC_PREFIX in value:
                    metrics.append((depth, node))  # type: ignore[arg-type]
                continue  # no children
            elif kind is ast.Name:
                continue
            elif kind in _IMPORTS:
                imports.append((depth, node))  # type: ignore[arg-type]
                if scope is not None:
                    scope.imports.append(node)  # type: ignore[arg-type]
            elif kind in _ASSIGNS and scope is not None:
                for target in node.targets if kind is ast.Assign else [node.target]:  # type: ignore[attr-defined]
                    if type(target) is ast.Name:
                        scope.assigned.add(target.id)
                    else:
                        scope.assigned.update(target_names(target))
            body_scope: Scope | None = None
            if kind in _DEFINITIONS:
                _docstring(node, docstrings)
                if scope is not None:
                    body_scope = inner[id(node)] = Scope.empty(scope)
                    children[id(scope)].append(body_scope)
                    children[id(body_scope)] = []
                    if kind is not ast.ClassDef:
                        scope.functions.append(node)  # type: ignore[arg-type]
                own: Scope | None = None  # decorators, arguments, bases: in no scope
            elif kind is ast.Lambda:
                own = None
            else:
                own = scope
            depth += 1
            fields = node._fields
            for i in range(len(fields) - 1, -1, -1):
                field = fields[i]
                if field == "ctx":
                    continue  # Load, Store, Del: no reader asks for them
                value = getattr(node, field, None)
                if isinstance(value, list):
                    into = body_scope if body_scope is not None and field == "body" else own
                    for j in range(len(value) - 1, -1, -1):
                        item = value[j]
                        if isinstance(item, _AST):
                            push((item, into, depth))
                elif isinstance(value, _AST):
                    push((value, own, depth))
        self.scopes = [module]
        for scope in self.scopes:  # grows while iterated: breadth first
            self.scopes.extend(children[id(scope)])
        # ast.walk's order is breadth first: pre-order sorted by depth (stable) is that order
        imports.sort(key=_depth)
        metrics.sort(key=_depth)
        self.imports = [node for _d, node in imports]
        self.metric_strings = [node for _d, node in metrics if id(node) not in docstrings]


def _depth(item: tuple[int, ast.AST]) -> int:
    return item[0]


def _docstring(node: ast.AST, into: set[int]) -> None:
    body = getattr(node, "body", None)
    if body and isinstance(node, _DOCUMENTED):
        first = body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            into.add(id(first.value))


@lru_cache(maxsize=4)
def parsed_module(text: str) -> tuple[ast.Module, TreeIndex]:
    """``ast.parse(text)`` and its :class:`TreeIndex`, made once per text: the Python scanner
    and the monitoring scanner offered the same file share both. Neither may be modified.

    Raises:
        SyntaxError: ``text`` is not Python (not cached: each caller gets its own).
        ValueError: ``text`` holds a null byte.
    """
    tree = ast.parse(text)
    return tree, TreeIndex(tree)
