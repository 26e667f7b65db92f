"""What ``self.X`` holds in a method of a class the file defines, when the file says it: the
one ``self.X = ...`` of the class, a literal, or a parameter of ``__init__`` whose literal
default no construction of the class in the file replaces (:func:`self_attribute`).
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.sources.scanners.python.source import PythonSource


def _enclosing_class(tree: ast.AST, line: int) -> ast.ClassDef | None:
    found: ast.ClassDef | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if found is None or node.lineno > found.lineno:
                found = node  # the innermost class around the line
    return found


def _constructions(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def self_attribute(source: PythonSource, line: int, attr: str) -> ast.Constant | None:
    """The literal ``self.<attr>`` holds in the method of a class of ``source`` written at
    ``line`` (1-based); ``None`` when the file does not say it: the class assigns it more than
    once or to something else, or it is a parameter of ``__init__`` without a literal default,
    or one the class is constructed with (or never constructed in the file)."""
    cls = _enclosing_class(source.tree, line)
    if cls is None:
        return None
    assigned: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.expr]] = []
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(method):
            targets = node.targets if isinstance(node, ast.Assign) else []
            targets = [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else targets
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == attr and dotted_name_self(target):
                    value = getattr(node, "value", None)
                    if isinstance(node, ast.AugAssign) or value is None:
                        return None
                    assigned.append((method, value))
    if len(assigned) != 1:
        return None
    method, value = assigned[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, (str, int, float)):
        return None if isinstance(value.value, bool) else value
    if not (isinstance(value, ast.Name) and method.name == "__init__"):
        return None
    args = method.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults) :], args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    default = defaults.get(value.id)
    if not (isinstance(default, ast.Constant) and isinstance(default.value, (str, int, float))):
        return None
    if isinstance(default.value, bool):
        return None
    calls = _constructions(source.tree, cls.name)
    index = [a.arg for a in positional].index(value.id) - 1 if value.id in [a.arg for a in positional] else None
    for call in calls:
        passed = any(k.arg == value.id or k.arg is None for k in call.keywords)
        spread = any(isinstance(a, ast.Starred) for a in call.args)
        if passed or spread or (index is not None and len(call.args) > index):
            return None
    return default if calls else None


def dotted_name_self(target: ast.Attribute) -> bool:
    """Whether ``target`` is ``self.<name>``."""
    return isinstance(target.value, ast.Name) and target.value.id == "self"
