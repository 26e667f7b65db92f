"""argparse arity: how many argv words an option takes and which values it
accepts (:class:`~vllm_upgrade_check.knowledge.derive.surface.model.FlagArity`),
from the ``action``/``nargs``/``choices`` of its ``add_argument`` call:
argparse's own actions, custom action classes, and ``choices=`` expressions
read statically (:class:`_Choices`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from vllm_upgrade_check.knowledge.derive.surface.model import FlagArity
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Def, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import _name_of, _top_level
from vllm_upgrade_check.knowledge.derive.surface.unknown import UNKNOWN

#: argparse actions that consume no argv word.
_ZERO_ACTIONS = frozenset(
    {
        "store_true",
        "store_false",
        "store_const",
        "append_const",
        "count",
        "help",
        "version",
        "BooleanOptionalAction",
    }
)
#: argparse actions whose arity is their ``nargs`` (None: one word).
_NARGS_ACTIONS = frozenset({"store", "append", "extend"})
#: argparse's private action classes, by the action string they implement.
_ARGPARSE_ACTION_CLASSES = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_AppendConstAction": "append_const",
    "_CountAction": "count",
    "_ExtendAction": "extend",
    "_HelpAction": "help",
    "_VersionAction": "version",
    "BooleanOptionalAction": "BooleanOptionalAction",
}
#: ``argparse.OPTIONAL`` and friends.
_ARGPARSE_NARGS = {"OPTIONAL": "?", "ZERO_OR_MORE": "*", "ONE_OR_MORE": "+", "REMAINDER": "...", "PARSER": "A..."}


class _Choices:
    """Reads a ``choices=`` expression statically: literal lists (with
    ``*SPREAD`` of module-level lists), names of module-level lists /
    ``Literal`` aliases, ``get_args(LiteralAlias)``, ``list()``/``sorted()``
    of those, ``[m.value for m in SomeEnum]``.  Anything else (registries
    filled at import time) is UNKNOWN."""

    def __init__(self, resolver: _Resolver, path: str) -> None:
        self.resolver = resolver
        self.path = path

    def read(self, node: ast.AST, path: str | None = None, depth: int = 0) -> Any:
        """The choice values (a list) or UNKNOWN."""
        path = path or self.path
        if depth > 8:
            return UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list = []
            for e in node.elts:
                if isinstance(e, ast.Constant):
                    out.append(e.value)
                elif isinstance(e, ast.Starred):
                    inner = self.read(e.value, path, depth + 1)
                    if inner is UNKNOWN:
                        return UNKNOWN
                    out += inner
                else:
                    return UNKNOWN
            return out
        if isinstance(node, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else UNKNOWN for k in node.keys]
            return UNKNOWN if any(k is UNKNOWN for k in keys) else keys
        if isinstance(node, ast.Subscript) and _name_of(node.value) == "Literal":
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            values = [a.value for a in args if isinstance(a, ast.Constant)]
            return values if len(values) == len(args) else UNKNOWN
        if isinstance(node, (ast.Name, ast.Attribute)):
            found = self.resolver.resolve(path, node)
            if found is None or isinstance(found.node, (ast.ClassDef, ast.FunctionDef, ast.Module)):
                return UNKNOWN
            return self.read(found.node, found.path, depth + 1)
        if isinstance(node, ast.Call) and node.args and not node.keywords:
            fname = _name_of(node.func)
            if fname == "get_args":
                return self._literal_values(node.args[0], path, depth)
            if fname in ("list", "tuple", "set", "sorted"):
                inner = self.read(node.args[0], path, depth + 1)
                if inner is UNKNOWN or fname != "sorted":
                    return inner
                try:
                    return sorted(inner)
                except TypeError:
                    return UNKNOWN
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            return self._enum_comprehension(node, path)
        return UNKNOWN

    def _literal_values(self, node: ast.AST, path: str, depth: int) -> Any:
        if isinstance(node, ast.Subscript) and _name_of(node.value) == "Literal":
            return self.read(node, path, depth + 1)
        if isinstance(node, (ast.Name, ast.Attribute)):
            found = self.resolver.resolve(path, node)
            if found is not None and not isinstance(found.node, (ast.ClassDef, ast.FunctionDef, ast.Module)):
                return self._literal_values(found.node, found.path, depth + 1)
        return UNKNOWN

    def _enum_comprehension(self, node: ast.ListComp, path: str) -> Any:
        """``[m.value for m in SomeEnum]`` / ``[m.name for m in SomeEnum]``."""
        gen = node.generators[0]
        elt = node.elt
        if (
            gen.ifs
            or not isinstance(gen.target, ast.Name)
            or not isinstance(elt, ast.Attribute)
            or not isinstance(elt.value, ast.Name)
            or elt.value.id != gen.target.id
            or elt.attr not in ("value", "name")
        ):
            return UNKNOWN
        found = self.resolver.resolve(path, gen.iter) if isinstance(gen.iter, (ast.Name, ast.Attribute)) else None
        if found is None or not isinstance(found.node, ast.ClassDef) or not self.resolver.is_enum(found):
            return UNKNOWN
        out: list = []
        for stmt in _top_level(found.node.body):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                continue
            member = stmt.targets[0].id
            if member.startswith("_"):
                continue
            if elt.attr == "name":
                out.append(member)
            elif isinstance(stmt.value, ast.Constant):
                out.append(stmt.value.value)
            else:
                return UNKNOWN  # auto() and computed values
        return out


def _custom_action_takes(resolver: _Resolver, cls: _Def) -> str | None:
    """``takes`` of a custom ``action=`` class: ``"0"`` when it (or a base)
    is a no-value argparse action or its ``__init__`` passes ``nargs=0``;
    ``"from-nargs"`` when the call's ``nargs`` decides (``argparse.Action``
    subclasses that leave ``nargs`` alone); None when it cannot be read."""
    for c in resolver.mro(cls):
        init = next(
            (
                s
                for s in _top_level(c.node.body)
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
            ),
            None,
        )
        if init is not None:
            fixed: list[ast.AST] = []
            other = False
            for n in ast.walk(init):
                if isinstance(n, ast.keyword) and n.arg == "nargs":
                    fixed.append(n.value)
                elif isinstance(n, ast.Constant) and n.value == "nargs":
                    other = True
                elif isinstance(n, ast.arg) and n.arg == "nargs":
                    other = True
            if fixed or other:
                if other or len(fixed) != 1 or not isinstance(fixed[0], ast.Constant):
                    return None
                value = fixed[0].value
                if value == 0:
                    return "0"
                return _nargs_takes({"nargs": value})
        for b in c.node.bases:
            name = _name_of(b)
            if name in _ARGPARSE_ACTION_CLASSES:
                return "0" if _ARGPARSE_ACTION_CLASSES[name] in _ZERO_ACTIONS else "from-nargs"
            if name == "Action" and resolver.resolve(c.path, b) is None:
                return "from-nargs"
            if resolver.resolve(c.path, b) is None:
                return None
    return None


def _takes(kw: Mapping[str, Any] | None) -> str | None:
    """``takes`` of an option from its arity-relevant argparse kwargs."""
    if kw is None:
        return None
    action = kw.get("action", "store")
    if action is UNKNOWN or action is None:
        return None if action is UNKNOWN else _nargs_takes(kw)
    if isinstance(action, tuple) and action and action[0] == "class":
        fixed = action[1]
        if fixed == "from-nargs":
            return _nargs_takes(kw)
        return fixed
    if not isinstance(action, str):
        return None
    if action in _ZERO_ACTIONS:
        return "0"
    if action in _NARGS_ACTIONS:
        return _nargs_takes(kw)
    return None


def _nargs_takes(kw: Mapping[str, Any]) -> str | None:
    nargs = kw.get("nargs")
    if nargs is None:
        return "1"
    if nargs in ("?", "*", "+"):
        return str(nargs)
    if isinstance(nargs, int) and not isinstance(nargs, bool) and nargs > 0:
        return str(nargs)
    return None


def _choice_words(kw: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """The value words ``choices`` accepts (None: unknown or unrestricted)."""
    if kw is None:
        return None
    choices = kw.get("choices")
    if not isinstance(choices, list):
        return None
    out: list[str] = []
    for c in choices:
        if c is None:
            word = "None"
        elif isinstance(c, bool | int | float | str):
            word = str(c)
        else:
            return None
        if word not in out:
            out.append(word)
    return tuple(out)


def _arity(kw: Mapping[str, Any] | None) -> FlagArity:
    takes = _takes(kw)
    return FlagArity(takes, _choice_words(kw) if takes not in ("0", None) else None)
