"""Scopes of a Python file: the statements of one function (or the module) in source order,
without the bodies of nested definitions, the names each assigns, and the two questions the
readers ask of them: what a name was last bound to before a line (:func:`last_binding`), and
which statements after its binding may change it (:func:`later_updates`).
"""

from __future__ import annotations

import ast

_MAX_ITEMS = 10_000
MAX_SCOPE_NODES = _MAX_ITEMS * 10
"""Nodes one scope holds at most (a generated module of millions of lines is read in part)."""
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_AST = ast.AST


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The direct children of ``node``, as :func:`ast.iter_child_nodes` yields them (the same
    nodes in the same order), as a list and without its generators (the scope collection of
    every file visits every node once: the generators were most of its time)."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, _AST)])
    return out



class Scope:
    """Statements of one function (or the module) in source order, without nested defs."""

    def __init__(self, body: list[ast.stmt], parent: Scope | None) -> None:
        """The scope of ``body`` (a module's or a definition's statements) inside ``parent``."""
        self.parent = parent
        self.nodes: list[ast.AST] = []
        # filled by .index.TreeIndex only: the functions defined and the imports written here
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.imports: list[ast.Import | ast.ImportFrom] = []
        stack: list[ast.AST] = list(reversed(body))
        nodes = self.nodes
        while stack and len(nodes) < MAX_SCOPE_NODES:
            node = stack.pop()
            nodes.append(node)
            if isinstance(node, _DEFINITIONS):
                continue
            stack.extend(reversed(child_nodes(node)))
        self.assigned = {
            t.id
            for n in self.nodes
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)
        }

    @classmethod
    def empty(cls, parent: Scope | None) -> Scope:
        """A scope with no nodes yet, for :class:`.index.TreeIndex` to fill in one walk of the
        whole tree (nodes in source order, ``assigned``, ``functions``, ``imports``)."""
        return cls([], parent)

    def owner(self, name: str) -> Scope | None:
        """This scope or the nearest enclosing one that assigns ``name``, if any."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.assigned:
                return scope
            scope = scope.parent
        return None


def last_binding(name: str, scope: Scope, before: int) -> tuple[ast.AST, Scope] | None:
    """The value ``name`` was last bound to before line ``before`` (in ``scope`` or the
    enclosing scope that assigns it), and that scope; ``None`` when it is bound nowhere."""
    owner = scope.owner(name)
    if owner is None:
        return None
    found: ast.AST | None = None
    for node in owner.nodes:
        line = getattr(node, "lineno", 0)
        if line >= before and owner is scope:
            break
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            found = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name and node.value is not None:
                found = node.value
    return (found, owner) if found is not None else None


def later_updates(
    name: str, owner: Scope, start: int, before: int, scope: Scope
) -> list[ast.AST]:
    """The nodes of ``owner`` after line ``start`` (and, in ``scope`` itself, before line
    ``before``): where a name bound at ``start`` may be changed before it is read."""
    out = []
    for node in owner.nodes:
        line = getattr(node, "lineno", 0)
        if line <= start:
            continue
        if line >= before and owner is scope:
            break
        out.append(node)
    return out
