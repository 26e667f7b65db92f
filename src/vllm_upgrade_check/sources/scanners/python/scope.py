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



def target_names(target: ast.AST) -> list[str]:
    """The names an assignment target binds: ``x`` -> ``["x"]``; ``a, (b, *c)`` ->
    ``["a", "b", "c"]``; an attribute or a subscript binds none."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in target_names(element)]
    return []


def unpacked_value(target: ast.AST, value: ast.AST, name: str) -> ast.AST | None:
    """What ``name`` is bound to by ``target = value``: ``value`` itself for a plain name, the
    matching element when both sides are tuples or lists of the same length with no starred
    element (``model, opts = "m", {...}`` binds ``opts`` to the dict), else ``None`` (the
    target does not bind ``name``) or, when it binds ``name`` from a value that cannot be
    paired, the value as a whole: a node no reader takes for a literal of its own."""
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if name not in target_names(target):
        return None
    if (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
    ):
        for element, element_value in zip(target.elts, value.elts, strict=True):
            found = unpacked_value(element, element_value, name)
            if found is not None:
                return found
    whole = ast.Starred(value=value, ctx=ast.Load())  # type: ignore[arg-type]
    return ast.copy_location(whole, value)


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
            name
            for n in self.nodes
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            for name in target_names(t)
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
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bound = unpacked_value(target, node.value, name)
                if bound is not None:
                    found = bound
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
