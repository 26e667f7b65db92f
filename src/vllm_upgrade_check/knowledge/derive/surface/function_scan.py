""":class:`_FunctionScan`: one function of the ``vllm serve`` parser code, its
``add_argument`` calls (literal option strings, ``**get_kwargs(Config)["field"]``
splats, loops over ``get_kwargs(Cls).items()``) and the vllm functions it
hands the parser to.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from vllm_upgrade_check.knowledge.derive.surface.arity import (
    _ARGPARSE_ACTION_CLASSES,
    _ARGPARSE_NARGS,
    _arity,
    _Choices,
    _custom_action_takes,
)
from vllm_upgrade_check.knowledge.derive.surface.get_kwargs import _KwargsModel
from vllm_upgrade_check.knowledge.derive.surface.model import FlagArity, SourceRef
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Def, _Field, _is_initvar, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import (
    _const_str,
    _name_of,
    _nested_subscript,
    _str_elements,
)
from vllm_upgrade_check.knowledge.derive.surface.unknown import UNKNOWN


@dataclass(frozen=True)
class _Scope:
    """A function to scan: ``func`` (a _Def), the class ``cls`` is bound to
    (for classmethods reached as ``SomeClass.add_cli_args``), and, for the
    function that creates the serve subparser, the parser variable names
    whose calls count (None: every add_argument call counts)."""

    func: _Def
    owner: _Def | None
    parser_vars: frozenset[str] | None


def _literal_loop(node: ast.For) -> dict[str, list[str]] | None:
    """``for a, b in [("--x", str), ...]`` / ``for a in ("--x", "--y")``:
    the string values each loop variable takes."""
    if not isinstance(node.iter, (ast.List, ast.Tuple)):
        return None
    target = node.target
    names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
    if not names or not all(isinstance(n, ast.Name) for n in names):
        return None
    out: dict[str, list[str]] = {n.id: [] for n in names}
    for elt in node.iter.elts:
        values = [elt] if isinstance(target, ast.Name) else list(getattr(elt, "elts", []))
        for name, value in zip(names, values, strict=False):
            s = _const_str(value)
            if s is not None:
                out[name.id].append(s)
    return out


#: Help texts that mark their flag deprecated.
_DEPRECATED_HELP = re.compile(
    r"\[deprecated\]|\(deprecated|^deprecated|\b(?:is|are|has been|have been|now)\s+deprecated",
    re.IGNORECASE,
)


def _is_boolean_optional_action(node: ast.AST | None) -> bool:
    return node is not None and _name_of(node) == "BooleanOptionalAction"


#: Kwargs whose arity-relevant keys are all unknown.
_ALL_UNKNOWN: Mapping[str, Any] = MappingProxyType({"action": UNKNOWN, "nargs": UNKNOWN, "choices": UNKNOWN})


class _FlagSink(Protocol):
    """What a :class:`_FunctionScan` needs from the collector that runs it
    (:class:`~vllm_upgrade_check.knowledge.derive.surface.cli_flags._CliCollector`):
    the resolver and get_kwargs model it reads with, and where the flags and
    the deprecated flags it finds go."""

    resolver: _Resolver
    kwmodel: _KwargsModel
    deprecated: list[tuple[str, str, SourceRef]]

    def add_flag(self, flag: str, ref: SourceRef, bool_optional: bool, arity: FlagArity | None = None) -> None:
        """Record ``flag`` with its arity (see ``_CliCollector.add_flag``)."""

    def field_bool_optional(self, fld: _Field) -> bool:
        """Whether get_kwargs makes dataclass field ``fld`` a BooleanOptionalAction flag."""


class _FunctionScan:
    """One function of the serve parser code (see :class:`_CliCollector`)."""

    def __init__(self, coll: _FlagSink, scope: _Scope) -> None:
        self.coll, self.scope = coll, scope
        self.path = scope.func.path
        self.func = scope.func.node
        self.resolver = coll.resolver
        self.kw_vars: dict[str, _Def] = {}  # kw = get_kwargs(Cls) -> Cls
        self.deleted: dict[str, set[str]] = {}  # del kw["field"] here
        self.class_deleted: set[str] = set()  # del kw["field"] in class methods
        self.splat_alias: dict[str, ast.AST] = {}  # x = kw["field"]
        self.field_alias: dict[str, tuple[_Def, str]] = {}  # x = get_kwargs(Cls)["field"]
        self.parser_vars = set(scope.parser_vars or ())
        self.callees: list[_Scope] = []
        # (field, "action"|"nargs"|"choices"|"flags") -> value; (field,
        # "del nargs"|"del choices"|"choices +="|"choices.remove") -> operand
        self.overrides: dict[tuple[str, str], ast.AST] = {}

    # -- pass 1 ------------------------------------------------------------

    def _class_arg(self, arg: ast.AST) -> _Def | None:
        if isinstance(arg, ast.Name) and arg.id == "cls":
            return self.scope.owner
        found = self.resolver.resolve(self.path, arg)
        return found if found and isinstance(found.node, ast.ClassDef) else None

    def _collect_bindings(self) -> None:
        for node in ast.walk(self.func):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                target, value = node.targets[0].id, node.value
                if (
                    isinstance(value, ast.Call)
                    and _name_of(value) in ("get_kwargs", "_compute_kwargs")
                    and value.args
                ):
                    cls = self._class_arg(value.args[0])
                    if cls is not None:
                        self.kw_vars[target] = cls
                elif _nested_subscript(value) is not None:
                    self.splat_alias[target] = value
                elif (
                    isinstance(value, ast.Subscript)
                    and isinstance(value.value, ast.Call)
                    and _name_of(value.value) in ("get_kwargs", "_compute_kwargs")
                    and value.value.args
                    and isinstance(value.slice, ast.Constant)
                ):
                    # x = get_kwargs(Cls)["field"]
                    cls = self._class_arg(value.value.args[0])
                    if cls is not None:
                        self.field_alias[target] = (cls, str(value.slice.value))
                elif isinstance(value, ast.Call):
                    src_var = next(
                        (a.id for a in value.args if isinstance(a, ast.Name) and a.id in self.kw_vars), None
                    )
                    if src_var:
                        self.kw_vars[target] = self.kw_vars[src_var]
            elif isinstance(node, ast.Delete):
                for t in node.targets:
                    key = _nested_subscript(t)
                    if key and len(key[1]) == 1:
                        self.deleted.setdefault(key[0], set()).add(key[1][0])
        # kw["field"]["action" | "flags"] = ... and del kw["field"] in the
        # methods of the bound class (e.g. _customize_cli_kwargs)
        bodies = [self.func] + (
            [c.node for c in self.resolver.mro(self.scope.owner)] if self.scope.owner else []
        )
        for body in bodies:
            for node in ast.walk(body):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        key = _nested_subscript(t)
                        if key and len(key[1]) == 2 and key[1][1] in ("action", "flags", "nargs", "choices"):
                            self.overrides.setdefault((key[1][0], key[1][1]), node.value)
                elif isinstance(node, ast.AugAssign):
                    key = _nested_subscript(node.target)
                    if key and len(key[1]) == 2 and key[1][1] == "choices":
                        self.overrides.setdefault((key[1][0], "choices +="), node.value)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                    key = _nested_subscript(node.func.value)
                    if key and len(key[1]) == 2 and key[1][1] == "choices" and node.func.attr == "remove":
                        self.overrides.setdefault((key[1][0], "choices.remove"), node.args[0])
                    elif key and len(key[1]) == 2 and key[1][1] == "choices":
                        self.overrides.setdefault((key[1][0], "choices +="), ast.List([], ast.Load()))
                        self.overrides[(key[1][0], "choices ?")] = node
                elif isinstance(node, ast.Delete):
                    for t in node.targets:
                        key = _nested_subscript(t)
                        if key and len(key[1]) == 1 and body is not self.func:
                            self.class_deleted.add(key[1][0])
                        elif key and len(key[1]) == 2 and key[1][1] in ("nargs", "choices", "action"):
                            self.overrides.setdefault((key[1][0], "del " + key[1][1]), t)

    # -- pass 2 ------------------------------------------------------------

    def run(self) -> list[_Scope]:
        """Record this function's flags; return the functions it hands the
        parser to."""
        self._collect_bindings()
        if self.scope.parser_vars is None:
            args = self.func.args
            self.parser_vars = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} - {
                "self",
                "cls",
            }
        self._visit(self.func, ())
        return self.callees

    def _visit(self, node: ast.AST, loops: tuple) -> None:
        if isinstance(node, ast.For):
            loop = self._items_loop(node) or _literal_loop(node)
            inner = loops + (loop,) if loop else loops
            for stmt in node.body + node.orelse:
                self._visit(stmt, inner)
            return
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and self._uses_parser(node.value)
        ):
            # parser = make_arg_parser(parser); group = parser.add_argument_group(...)
            self.parser_vars.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if isinstance(node, ast.Call):
            if _name_of(node.func) == "add_argument":
                self._add_argument(node, loops)
            elif self._uses_parser(node):
                self._follow(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, loops)

    def _uses_parser(self, call: ast.Call) -> bool:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        names = [a for a in call.args if isinstance(a, ast.Name)]
        if isinstance(receiver, ast.Name):
            names.append(receiver)
        return any(n.id in self.parser_vars for n in names)

    def _follow(self, call: ast.Call) -> None:
        """Queue the vllm function or method a parser is handed to."""
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and _name_of(func.value) == "super"
        ):
            owner = self.scope.owner
            if owner is not None:
                for base in self.resolver.mro(owner)[1:]:
                    method = self.resolver.method(base, func.attr)
                    if method:
                        self.callees.append(_Scope(method, owner, None))
                        break
            return
        if isinstance(func, ast.Attribute):
            target = self._class_arg(func.value)
            if target is not None:
                method = self.resolver.method(target, func.attr)
                if method:
                    self.callees.append(_Scope(method, target, None))
                return
        found = self.resolver.resolve(self.path, func)
        if found and isinstance(found.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.callees.append(_Scope(found, None, None))

    def _items_loop(self, node: ast.For) -> tuple[str, str, str] | None:
        """``for key, value in kw.items()`` over a kwargs variable:
        ``(key, value, kw)``."""
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "items"
            and isinstance(it.func.value, ast.Name)
            and it.func.value.id in self.kw_vars
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
        ):
            key, value = node.target.elts
            if isinstance(key, ast.Name) and isinstance(value, ast.Name):
                return key.id, value.id, it.func.value.id
        return None

    def _option_strings(self, arg: ast.AST, loops: tuple) -> list[str]:
        """Option strings a positional add_argument argument stands for:
        a literal, or a name bound by an enclosing loop over literals."""
        s = _const_str(arg)
        if s is None and isinstance(arg, ast.Name):
            for loop in reversed(loops):
                if isinstance(loop, dict) and arg.id in loop:
                    return [v for v in loop[arg.id] if v.startswith("-")]
        return [s] if s and s.startswith("-") else []

    def _add_argument(self, call: ast.Call, loops: tuple) -> None:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not (isinstance(receiver, ast.Name) and receiver.id in self.parser_vars):
            return
        ref = SourceRef(self.path, call.lineno)
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        literal = [flag for a in call.args for flag in self._option_strings(a, loops)]
        items_loop = next(
            (
                loop
                for a in call.args
                if _const_str(a) is None and not isinstance(a, ast.Starred)
                for loop in loops
                if isinstance(loop, tuple)
                and any(isinstance(n, ast.Name) and n.id == loop[0] for n in ast.walk(a))
            ),
            None,
        )
        if literal:
            kw = self._call_kwargs(call)
            action = kw.get("action") if kw is not None else UNKNOWN
            if isinstance(action, str):
                bool_opt = action == "BooleanOptionalAction"
            else:
                bool_opt = self._bool_optional(keywords.get("action"), call)
            arity = _arity(kw)
            for flag in literal:
                self.coll.add_flag(flag, ref, bool_opt, arity)
            dep = keywords.get("deprecated")
            help_text = " ".join((_const_str(keywords.get("help"), holes=True) or "").split())
            if (isinstance(dep, ast.Constant) and dep.value is True) or _DEPRECATED_HELP.search(help_text):
                self.coll.deprecated.extend(
                    (flag, help_text, ref) for flag in literal if flag.startswith("--")
                )
        if items_loop is not None:
            self._add_loop_flags(items_loop[2], keywords)

    def _add_loop_flags(self, var: str, keywords: dict) -> None:
        cls = self.kw_vars[var]
        for name, fld in self.resolver.fields(cls).items():
            if name in self.deleted.get(var, ()) or name in self.class_deleted or _is_initvar(fld.annotation):
                continue
            explicit = keywords.get("action")
            kw = self._explicit(self._field_kwargs(cls, name), keywords)
            action = kw.get("action") if kw is not None else UNKNOWN
            if isinstance(action, str):
                bool_opt = action == "BooleanOptionalAction"
            elif explicit is not None:
                bool_opt = _is_boolean_optional_action(explicit)
            else:
                bool_opt = self._field_bool_optional(cls, name)
            arity = _arity(kw)
            self.coll.add_flag("--" + name.replace("_", "-"), fld.ref, bool_opt, arity)
            for alias, _line in _str_elements(self.overrides.get((name, "flags"))):
                self.coll.add_flag(alias, fld.ref, False, arity)

    def _field_bool_optional(self, cls: _Def, name: str) -> bool:
        override = self.overrides.get((name, "action"))
        if override is not None:
            return _is_boolean_optional_action(override)
        fld = self.resolver.fields(cls).get(name)
        return fld is not None and self.coll.field_bool_optional(fld)

    def _bool_optional(self, action: ast.AST | None, call: ast.Call) -> bool:
        if action is not None:
            return _is_boolean_optional_action(action)
        for kw in call.keywords:
            if kw.arg is None:
                result = self._splat_bool_optional(kw.value)
                if result is not None:
                    return result
        return False

    def _splat_bool_optional(self, node: ast.AST) -> bool | None:
        """BooleanOptionalAction-ness of a ``**expr`` kwargs splat; None if
        ``expr`` says nothing about the action."""
        if isinstance(node, ast.Dict):
            result = None
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inner = self._splat_bool_optional(v)
                    result = inner if inner is not None else result
                elif isinstance(k, ast.Constant) and k.value == "action":
                    result = _is_boolean_optional_action(v)
            return result
        if isinstance(node, ast.Name) and node.id in self.splat_alias:
            return self._splat_bool_optional(self.splat_alias[node.id])
        if isinstance(node, ast.Name) and node.id in self.field_alias:
            return self._field_bool_optional(*self.field_alias[node.id])
        key = _nested_subscript(node)
        if key and len(key[1]) == 1 and key[0] in self.kw_vars:
            return self._field_bool_optional(self.kw_vars[key[0]], key[1][0])
        return None


    # -- argparse kwargs (arity) ---------------------------------------------

    def _call_kwargs(self, call: ast.Call) -> dict[str, Any] | None:
        """Arity-relevant kwargs of an ``add_argument`` call: its ``**``
        splats (get_kwargs fields, dict literals, aliases), then its explicit
        keywords.  Unresolvable splats make action/nargs/choices unknown."""
        kw: dict[str, Any] = {}
        for k in call.keywords:
            if k.arg is None:
                got = self._splat_kwargs(k.value)
                kw.update(got if got is not None else _ALL_UNKNOWN)
        return self._explicit(kw, {k.arg: k.value for k in call.keywords if k.arg})

    def _explicit(self, kw: dict[str, Any] | None, keywords: Mapping[str, ast.AST]) -> dict[str, Any] | None:
        """``kw`` with the call's explicit ``action=``/``nargs=``/``choices=``."""
        out = dict(kw) if kw is not None else dict(_ALL_UNKNOWN)
        for key in ("action", "nargs", "choices"):
            if key in keywords:
                out[key] = self._site_value(key, keywords[key])
        return out

    def _splat_kwargs(self, node: ast.AST, depth: int = 0) -> dict[str, Any] | None:
        """Kwargs of a ``**expr`` splat; None when ``expr`` cannot be followed."""
        if depth > 8:
            return None
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inner = self._splat_kwargs(v, depth + 1)
                    out.update(inner if inner is not None else _ALL_UNKNOWN)
                elif isinstance(k, ast.Constant) and k.value in ("action", "nargs", "choices"):
                    out[str(k.value)] = self._site_value(str(k.value), v)
            return out
        if isinstance(node, ast.Name) and node.id in self.splat_alias:
            return self._splat_kwargs(self.splat_alias[node.id], depth + 1)
        if isinstance(node, ast.Name) and node.id in self.field_alias:
            return self._field_kwargs(*self.field_alias[node.id])
        key = _nested_subscript(node)
        if key and len(key[1]) == 1 and key[0] in self.kw_vars:
            return self._field_kwargs(self.kw_vars[key[0]], key[1][0])
        return None

    def _field_kwargs(self, cls: _Def, name: str) -> dict[str, Any] | None:
        """What ``get_kwargs(cls)[name]`` holds once the overrides in this
        function and the class's methods have run (None: unknown)."""
        fld = self.resolver.fields(cls).get(name)
        kw = self.coll.kwmodel.field_kwargs(fld) if fld is not None else None
        kw = dict(kw) if kw is not None else dict(_ALL_UNKNOWN)
        for key in ("nargs", "choices", "action"):
            if (name, "del " + key) in self.overrides:
                kw.pop(key, None)
        for key in ("action", "nargs", "choices"):
            value = self.overrides.get((name, key))
            if value is not None:
                kw[key] = self._site_value(key, value)
        if (name, "choices ?") in self.overrides:
            kw["choices"] = UNKNOWN
        extra = self.overrides.get((name, "choices +="))
        if extra is not None:
            more = self._site_value("choices", extra)
            cur = kw.get("choices")
            kw["choices"] = cur + more if isinstance(cur, list) and isinstance(more, list) else UNKNOWN
        gone = self.overrides.get((name, "choices.remove"))
        if gone is not None:
            item = self._constant(gone)
            cur = kw.get("choices")
            kw["choices"] = [c for c in cur if c != item] if isinstance(cur, list) and item is not UNKNOWN else UNKNOWN
        return kw

    def _constant(self, node: ast.AST, depth: int = 0) -> Any:
        """A literal, or a module-level constant it names (UNKNOWN otherwise)."""
        if isinstance(node, ast.Constant):
            return node.value
        if depth < 6 and isinstance(node, (ast.Name, ast.Attribute)):
            found = self.resolver.resolve(self.path, node)
            if found is not None and isinstance(found.node, ast.Constant):
                return found.node.value
        return UNKNOWN

    def _site_value(self, key: str, node: ast.AST) -> Any:
        """An ``action``/``nargs``/``choices`` value written in the source."""
        if key == "action":
            return self._action_value(node)
        if key == "nargs":
            if isinstance(node, ast.Attribute) and node.attr in _ARGPARSE_NARGS:
                return _ARGPARSE_NARGS[node.attr]
            return self._constant(node)
        return _Choices(self.resolver, self.path).read(node)

    def _action_value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else UNKNOWN
        name = _name_of(node)
        if name in _ARGPARSE_ACTION_CLASSES and not isinstance(node, ast.Call):
            return _ARGPARSE_ACTION_CLASSES[name]
        found = self.resolver.resolve(self.path, node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if found is not None and isinstance(found.node, ast.ClassDef):
            return ("class", _custom_action_takes(self.resolver, found))
        return UNKNOWN
