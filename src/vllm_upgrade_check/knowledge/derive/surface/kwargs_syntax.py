"""Pure readers of the code in a release's ``get_kwargs`` loop: which
statements can change a field's argparse kwargs, ``kwargs[name]["key"]``
targets, ``field.type``, type names and sets, and the ``is_dataclass(th)``
style predicates on one hint.
"""

from __future__ import annotations

import ast
from typing import Any

from vllm_upgrade_check.knowledge.derive.surface.sources import _name_of
from vllm_upgrade_check.knowledge.derive.surface.type_hints import _BUILTIN_TYPES, _Hint
from vllm_upgrade_check.knowledge.derive.surface.unknown import UNKNOWN


def _relevant(stmt: ast.AST) -> bool:
    """Whether a statement of the get_kwargs loop can change a field's
    ``action``/``nargs``/``choices``/``type`` or end its processing."""
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Continue, ast.Break, ast.Raise, ast.Return)):
            return True
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("update", "append", "remove", "extend", "pop") and _rooted_at(
                node.func.value, "kwargs"
            ):
                return True
        for t in targets:
            if isinstance(t, ast.Subscript) and _rooted_at(t, "kwargs"):
                key = t.slice.value if isinstance(t.slice, ast.Constant) else None
                if key not in ("default", "help"):
                    return True
    return False


def _rooted_at(node: ast.AST, name: str) -> bool:
    """Whether subscripts and attributes of ``node`` start at the variable ``name``."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _kw_key(target: ast.AST) -> str | None:
    """``kwargs[name]["key"]`` -> ``"key"``."""
    if (
        isinstance(target, ast.Subscript)
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
        and _is_kw(target.value)
    ):
        return target.slice.value
    return None


def _is_kw(node: ast.AST) -> bool:
    """``kwargs[name]``."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "kwargs"
        and isinstance(node.slice, ast.Name)
        and node.slice.id == "name"
    )


def _type_name(node: ast.AST) -> str | None:
    """The type ``node`` names as :data:`_BUILTIN_TYPES` spells it
    (``List`` -> ``"list"``), ``"Literal"``, or None for any other."""
    name = _name_of(node)
    if name in _BUILTIN_TYPES:
        return _BUILTIN_TYPES[name]
    if name == "Literal":
        return "Literal"
    return None


def _is_field_type(node: ast.AST) -> bool:
    """``field.type``."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "type"
        and isinstance(node.value, ast.Name)
        and node.value.id == "field"
    )


def _origins(node: ast.AST) -> set[str] | None:
    """Names of the types a ``get_origin(...) is X`` / ``in {X, Y}`` test
    compares with; None when one is not a name."""
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        names = {_name_of(e) for e in node.elts}
    else:
        names = {_name_of(node)}
    return names if all(names) else None


def _type_set(node: ast.Set) -> set | None:
    """``{bool, str, type(None)}`` as type names (``"None"`` for
    ``type(None)``); None when one is not a known type."""
    out: set = set()
    for e in node.elts:
        if isinstance(e, ast.Call) and _name_of(e.func) == "type" and e.args:
            if isinstance(e.args[0], ast.Constant) and e.args[0].value is None:
                out.add("None")
                continue
            return None
        name = _type_name(e)
        if name is None:
            return None
        out.add(name)
    return out


def _hint_pred(cond: ast.AST, var: str, item: Any) -> Any:
    """``is_dataclass(var)``, ``is_not_builtin(var)`` or
    ``is_dict_subclass(var)`` of hint ``item``: True, False or UNKNOWN."""
    if (
        isinstance(cond, ast.Call)
        and len(cond.args) == 1
        and isinstance(cond.args[0], ast.Name)
        and cond.args[0].id == var
        and isinstance(item, _Hint)
    ):
        fname = _name_of(cond.func)
        if fname == "is_dataclass":
            return UNKNOWN if item.dataclass is None else item.dataclass
        if fname == "is_not_builtin":
            return UNKNOWN if item.builtin is None else not item.builtin
        if fname == "is_dict_subclass":
            return item.dict_subclass
    return UNKNOWN
