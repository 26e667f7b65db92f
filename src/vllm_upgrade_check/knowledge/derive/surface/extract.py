"""Static extraction of the public surface of a vLLM release.

Everything here reads files only: Python sources are parsed with :mod:`ast`,
``METADATA`` with :mod:`email.parser`, compiled extensions with a small ELF
dynamic-section reader.  Nothing from the release is imported or executed.

A release can be given as a ``.whl`` file, an unpacked wheel directory, or a
``site-packages`` directory holding ``vllm/`` and ``vllm-*.dist-info``.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from vllm_upgrade_check.knowledge.derive.surface.cuda import _cuda_major
from vllm_upgrade_check.knowledge.derive.surface.files import _open_release
from vllm_upgrade_check.knowledge.derive.surface.get_kwargs import _kwargs_semantics, _KwargsModel
from vllm_upgrade_check.knowledge.derive.surface.metadata import _read_metadata
from vllm_upgrade_check.knowledge.derive.surface.model import (
    Deprecation,
    FlagArity,
    ReleaseSurface,
    SourceRef,
)
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Def, _Field, _is_initvar, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import (
    _add,
    _const_str,
    _name_of,
    _nested_subscript,
    _Sources,
    _str_elements,
    _top_level,
)
from vllm_upgrade_check.knowledge.derive.surface.unknown import UNKNOWN

__all__ = ["extract_surface"]


# --------------------------------------------------------------------------
# argparse arity: get_kwargs emulation
# --------------------------------------------------------------------------

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
#: Kwargs whose arity-relevant keys are all unknown.
_ALL_UNKNOWN: Mapping[str, Any] = MappingProxyType({"action": UNKNOWN, "nargs": UNKNOWN, "choices": UNKNOWN})


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


# --------------------------------------------------------------------------
# CLI flags
# --------------------------------------------------------------------------

#: Files that may define the ``vllm serve`` subparser: ``vllm/scripts.py``
#: (0.6-0.7, with ``add_parser("serve", ...)``) and
#: ``vllm/entrypoints/cli/serve.py`` (0.8+, any ``add_parser`` call).
_SERVE_ENTRY_FILES = ("vllm/entrypoints/cli/serve.py", "vllm/scripts.py")


#: Where ``FlexibleArgumentParser`` lives, newest layout first.
_FLEXIBLE_PARSER_FILES = ("vllm/utils/argparse_utils.py", "vllm/utils/__init__.py", "vllm/utils.py")
_PREPROCESSED_FLAG = re.compile(r"-[A-Za-z]|--[a-z][a-z0-9-]*[a-z0-9]")


@dataclass(frozen=True)
class _Scope:
    """A function to scan: ``func`` (a _Def), the class ``cls`` is bound to
    (for classmethods reached as ``SomeClass.add_cli_args``), and, for the
    function that creates the serve subparser, the parser variable names
    whose calls count (None: every add_argument call counts)."""

    func: _Def
    owner: _Def | None
    parser_vars: frozenset[str] | None


class _CliCollector:
    """Collects ``vllm serve`` option strings by walking the parser-building
    code from the serve subparser (see ``_SERVE_ENTRY_FILES``) through every
    vllm function it hands the parser to (``make_arg_parser(parser)``,
    ``AsyncEngineArgs.add_cli_args(parser)``, ``FrontendArgs.add_cli_args``,
    ``EngineArgs.add_cli_args``, wherever the release defines them).

    Three shapes of ``add_argument`` are understood, in any mix:

    1. ``parser.add_argument("--foo", "-f", ..., action=argparse.BooleanOptionalAction)``
       (literal option strings, also bound by ``for arg in ["--a", "--b"]``
       loops; 0.6-0.8 style, and the odd flag later);
    2. ``group.add_argument("--foo", **cfg_kwargs["foo"])`` where
       ``cfg_kwargs = get_kwargs(SomeConfig)`` (0.8.5+): ``--no-foo`` is added
       when the field's annotation contains ``bool`` and get_kwargs turns bool
       fields into BooleanOptionalAction (``**{**cfg_kwargs["foo"], ...}``
       dict splats and ``x = cfg_kwargs["foo"]`` aliases are followed, an
       explicit ``action=`` wins);
    3. ``for key, value in kw.items(): group.add_argument(f"--{key.replace('_', '-')}", **value)``
       where ``kw = get_kwargs(FrontendArgs)`` or ``get_kwargs(cls)`` (the
       class the method was reached through): one flag per dataclass field
       not removed with ``del kw["field"]``; aliases set with
       ``kw["field"]["flags"] = [...]`` and action overrides set with
       ``kw["field"]["action"] = ...`` in the class's methods are honoured.
    """

    def __init__(self, src: _Sources, resolver: _Resolver) -> None:
        self.src = src
        self.resolver = resolver
        self.sem = _kwargs_semantics(src)
        self.kwmodel = _KwargsModel(src, resolver)
        self.flags: dict[str, SourceRef] = {}
        self.arity: dict[str, FlagArity] = {}
        self._boolean_optional: dict[str, bool] = {}
        self.deprecated: list[tuple[str, str, SourceRef]] = []
        self.scanned: list[str] = []

    def collect(self) -> dict[str, SourceRef]:
        """Scan from the serve entry point; returns flag -> SourceRef."""
        seen: set[tuple] = set()
        todo = list(self._entries())
        while todo:
            scope = todo.pop()
            key = (scope.func.path, scope.func.node.lineno, scope.owner.node.name if scope.owner else None)
            if key in seen:
                continue
            seen.add(key)
            self.scanned.append(f"{scope.func.path}:{scope.func.node.name}")
            todo.extend(_FunctionScan(self, scope).run())
        self._enable_disable_pairs()
        self._preprocessed_flags()
        return self.flags

    def _preprocessed_flags(self) -> None:
        """Spellings that ``FlexibleArgumentParser`` rewrites before argparse
        sees them (``-O3`` -> ``--optimization-level 3`` since 0.12): flag
        literals compared with ``==`` or ``startswith`` in that class."""
        for path in _FLEXIBLE_PARSER_FILES:
            found = self.resolver.lookup(path, "FlexibleArgumentParser") if self.src.has(path) else None
            if found is None or not isinstance(found.node, ast.ClassDef) or found.path != path:
                continue
            for node in ast.walk(found.node):
                if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq) for op in node.ops):
                    candidates = [node.left, *node.comparators]
                elif isinstance(node, ast.Call) and _name_of(node.func) == "startswith":
                    candidates = list(node.args)
                else:
                    continue
                for c in candidates:
                    flag = _const_str(c)
                    if (
                        flag
                        and _PREPROCESSED_FLAG.fullmatch(flag)
                        and flag not in self.flags
                        and flag != "--help"
                    ):
                        self.flags[flag] = SourceRef(path, c.lineno)
                        self.arity[flag] = FlagArity(self._rewritten_takes(found.node, flag))
            return

    def _rewritten_takes(self, cls: ast.ClassDef, flag: str) -> str | None:
        """``takes`` of a flag that FlexibleArgumentParser rewrites: a
        branch testing ``arg == FLAG`` that appends one option string in its
        place (``-O`` -> ``--optimization-level`` / ``-O.mode``) makes the
        next word that option's value: the target's ``takes``, ``"1"`` for
        a dotted ``-X.key`` (a JSON sub-key).  None when no such branch
        exists (``-O3`` attached forms only: a bare flag is not rewritten)."""
        for node in ast.walk(cls):
            if not isinstance(node, ast.If):
                continue
            tests = [n for n in ast.walk(node.test) if isinstance(n, ast.Compare)]
            if not any(
                any(isinstance(op, ast.Eq) for op in t.ops) and flag in {_const_str(x) for x in [t.left, *t.comparators]}
                for t in tests
            ):
                continue
            appended = [
                n.args[0]
                for stmt in node.body
                for n in ast.walk(stmt)
                if isinstance(n, ast.Call) and _name_of(n.func) == "append" and len(n.args) == 1
            ]
            if len(appended) != 1:
                return None
            target = _const_str(appended[0], holes=True)
            if target is None:
                return None
            target = target.split("=", 1)[0]
            if "=" in (_const_str(appended[0], holes=True) or ""):
                return None  # -O<value> rewritten with its value attached
            if target.startswith("--") and "." not in target:
                known = self.arity.get("--" + target[2:].replace("_", "-"))
                return known.takes if known else None
            if "." in target:
                return "1"
            return None
        return None

    def _enable_disable_pairs(self) -> None:
        """0.33+: FlexibleArgumentParser registers an action class for
        ``BooleanOptionalAction`` that pairs ``--enable-x`` with
        ``--disable-x`` (``_inverse_prefixes``); those spellings are flags too."""
        for path in _FLEXIBLE_PARSER_FILES:
            tree = self.src.tree(path)
            if tree is None:
                continue
            prefixes: dict[str, str] = {}
            for cls in (n for n in _top_level(tree.body) if isinstance(n, ast.ClassDef)):
                for stmt in _top_level(cls.body):
                    if (
                        isinstance(stmt, ast.Assign)
                        and any(_name_of(t) == "_inverse_prefixes" for t in stmt.targets)
                        and isinstance(stmt.value, ast.Dict)
                        and any(_name_of(b) == "BooleanOptionalAction" for b in cls.bases)
                        and self._registered_for_boolean_optional(tree, cls.name)
                    ):
                        for k, v in zip(stmt.value.keys, stmt.value.values, strict=True):
                            ks, vs = _const_str(k), _const_str(v)
                            if ks and vs:
                                prefixes[ks] = vs
            if not prefixes:
                continue
            for flag in sorted(self.flags):
                if self.arity.get(flag) != FlagArity("0") or flag.startswith("--no-"):
                    continue
                if not self._boolean_optional.get(flag):
                    continue
                for prefix, inverse in prefixes.items():
                    if flag.startswith(prefix):
                        self._record(inverse + flag[len(prefix) :], self.flags[flag], FlagArity("0"))
            return

    @staticmethod
    def _registered_for_boolean_optional(tree: ast.Module, name: str) -> bool:
        """``self.register("action", BooleanOptionalAction, NAME)`` somewhere in ``tree``."""
        return any(
            isinstance(n, ast.Call)
            and _name_of(n.func) == "register"
            and len(n.args) == 3
            and _name_of(n.args[1]) == "BooleanOptionalAction"
            and _name_of(n.args[2]) == name
            for n in ast.walk(tree)
        )

    def _entries(self) -> list[_Scope]:
        """The function(s) creating the serve subparser, in the first of
        ``_SERVE_ENTRY_FILES`` that has one."""
        for path in _SERVE_ENTRY_FILES:
            tree = self.src.tree(path)
            entries = []
            for owner, func in _functions(path, tree) if tree else ():
                for node in ast.walk(func):
                    if not (
                        isinstance(node, ast.Assign)
                        and isinstance(node.value, ast.Call)
                        and _name_of(node.value) == "add_parser"
                        and isinstance(node.targets[0], ast.Name)
                    ):
                        continue
                    first = _const_str(node.value.args[0]) if node.value.args else None
                    if path == "vllm/scripts.py" and first != "serve":
                        continue
                    entries.append(_Scope(_Def(path, func), owner, frozenset({node.targets[0].id})))
            if entries:
                return entries
        return []

    def add_flag(self, flag: str, ref: SourceRef, bool_optional: bool, arity: FlagArity | None = None) -> None:
        """Record ``flag`` (and ``--no-`` form for BooleanOptionalAction)
        with its :class:`FlagArity` (unknown when not given); long options
        are stored dashed (FlexibleArgumentParser accepts ``--foo_bar`` and
        ``--foo-bar`` alike)."""
        if flag.startswith("--"):
            flag = "--" + flag[2:].replace("_", "-")
        arity = arity or FlagArity(None)
        if bool_optional:
            arity = FlagArity("0")
        self._record(flag, ref, arity)
        self._boolean_optional[flag] = self._boolean_optional.get(flag, False) or bool_optional
        if bool_optional and flag.startswith("--"):
            self._record("--no-" + flag[2:], ref, FlagArity("0"))

    def _record(self, flag: str, ref: SourceRef, arity: FlagArity) -> None:
        """Keep the first definition of ``flag`` (smallest ref) and its arity."""
        if flag not in self.flags or ref < self.flags[flag]:
            self.flags[flag] = ref
            self.arity[flag] = arity

    def field_bool_optional(self, fld: _Field) -> bool:
        """Whether get_kwargs makes dataclass field ``fld`` a
        BooleanOptionalAction flag."""
        if not self.sem.bool_optional:
            return False
        members = self.resolver.union_members(fld.ref.path, fld.annotation)
        if "bool" not in members:
            return False
        return not (self.sem.bool_str_none_excluded and members == {"bool", "str", "None"})


def _functions(
    path: str, tree: ast.Module
) -> Iterator[tuple[_Def | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Top-level functions and methods of top-level classes (with the owning
    class); nested functions are part of their enclosing function."""
    for stmt in _top_level(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, stmt
        elif isinstance(stmt, ast.ClassDef):
            for sub in _top_level(stmt.body):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield _Def(path, stmt), sub


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


class _FunctionScan:
    """One function of the serve parser code (see :class:`_CliCollector`)."""

    def __init__(self, coll: _CliCollector, scope: _Scope) -> None:
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


# --------------------------------------------------------------------------
# Other categories
# --------------------------------------------------------------------------


def _class_fields(resolver: _Resolver, path: str, class_names: Iterable[str]) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for cname in class_names:
        found = resolver.lookup(path, cname) if resolver.src.has(path) else None
        if found and isinstance(found.node, ast.ClassDef):
            for name, fld in resolver.fields(found).items():
                out.setdefault(name, fld.ref)
    return out


def _engine_args(resolver: _Resolver) -> dict[str, SourceRef]:
    return _class_fields(resolver, "vllm/engine/arg_utils.py", ("EngineArgs", "AsyncEngineArgs"))


def _sampling_params(resolver: _Resolver) -> dict[str, SourceRef]:
    return _class_fields(resolver, "vllm/sampling_params.py", ("SamplingParams",))


def _config_fields(resolver: _Resolver) -> dict[str, SourceRef]:
    out: dict[str, SourceRef] = {}
    for cls in resolver.top_classes(resolver.src.config_files()):
        cname = cls.node.name
        if not cname.endswith("Config") or resolver.is_enum(cls):
            continue
        for name, fld in resolver.fields(cls).items():
            out.setdefault(f"{cname}.{name}", fld.ref)
    return out


def _env_vars(src: _Sources) -> dict[str, SourceRef]:
    path = "vllm/envs.py"
    tree = src.tree(path)
    out: dict[str, SourceRef] = {}
    if tree is None:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name) and t.id == "environment_variables" and isinstance(value, ast.Dict):
                for name, line in _str_elements(value):
                    _add(out, name, SourceRef(path, line))
            key = _nested_subscript(t)
            if key and key[0] == "environment_variables" and len(key[1]) == 1:
                _add(out, key[1][0], SourceRef(path, t.lineno))
    return out


_METRIC = re.compile(r"vllm:[A-Za-z_][A-Za-z0-9_]*[A-Za-z0-9]")


def _metrics(src: _Sources) -> tuple[dict[str, SourceRef], list[tuple[str, str, SourceRef]]]:
    """Exposed metric names and deprecation notices of metrics.

    Every string literal (or ``+`` concatenation of literals) under ``vllm/``
    that is a whole ``vllm:<name>``; a name ending in ``_`` is a prefix, not
    a metric.  Names passed to a counter constructor (a call whose name
    contains "counter": ``Counter``, ``self._counter_cls``) are stored as
    prometheus_client exposes them, with a ``_total`` suffix.  A
    ``documentation=`` text saying "deprecated" marks its metric deprecated."""
    out: dict[str, SourceRef] = {}
    notices: list[tuple[str, str, SourceRef]] = []
    counter_families: set[str] = set()
    for path in src.grep("vllm:"):
        tree = src.tree(path)
        if tree is None:
            continue
        counter_nodes = _counter_name_nodes(tree)
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            name_node = keywords.get("name", call.args[0] if call.args else None)
            name = _const_str(name_node)
            doc = " ".join((_const_str(keywords.get("documentation"), holes=True) or "").split())
            if name and _METRIC.fullmatch(name) and "deprecat" in doc.lower():
                notices.append(
                    (_exposed(name, id(name_node) in counter_nodes), doc, SourceRef(path, call.lineno))
                )
        for node in ast.walk(tree):
            if isinstance(node, (ast.Constant, ast.BinOp)):
                value = _const_str(node)
                if value and _METRIC.fullmatch(value):
                    exposed = _exposed(value, id(node) in counter_nodes)
                    if exposed != value:
                        counter_families.add(value)
                    _add(out, exposed, SourceRef(path, node.lineno))
    # a counter's family name (e.g. compared against in a metrics reader) is
    # not a separately exposed metric
    return {k: v for k, v in out.items() if k not in counter_families}, notices


def _exposed(name: str, counter: bool) -> str:
    """Metric name as prometheus_client exposes it (counters get ``_total``)."""
    return name + "_total" if counter and not name.endswith("_total") else name


def _counter_name_nodes(tree: ast.Module) -> set[int]:
    """ids of the string nodes naming counters: the ``name`` of a call whose
    callee name contains "counter" (``Counter``, ``self._counter_cls``; a
    module-level constant passed as ``name`` is followed), and
    the strings of a value assigned to a variable whose name contains
    "counter" (``counter_specs = [("vllm:x", "doc"), ...]`` fed to such a
    call in a loop)."""
    out: set[int] = set()
    constants = {
        t.id: stmt.value
        for stmt in _top_level(tree.body)
        if isinstance(stmt, ast.Assign)
        for t in stmt.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and "counter" in _name_of(node.func).lower():
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            name_node = keywords.get("name", node.args[0] if node.args else None)
            if isinstance(name_node, ast.Name) and name_node.id in constants:
                name_node = constants[name_node.id]  # NAME = "vllm:x"; Counter(name=NAME)
            if name_node is not None:
                out.add(id(name_node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("counter" in _name_of(t).lower() for t in targets):
                out.update(id(n) for n in ast.walk(node.value) if not isinstance(n, ast.Call))
    return out


def _named_string_sets(resolver: _Resolver, path: str, names: Iterable[str]) -> dict[str, SourceRef]:
    """Strings of the module-level values ``names`` of ``path`` (a Literal,
    a list/tuple/set literal, or dict keys), imports followed."""
    out: dict[str, SourceRef] = {}
    for name in names:
        found = resolver.lookup(path, name) if resolver.src.has(path) else None
        if found is not None:
            for value, line in _str_elements(found.node):
                _add(out, value, SourceRef(found.path, line))
    return out


def _quantization_methods(resolver: _Resolver) -> dict[str, SourceRef]:
    return _named_string_sets(
        resolver,
        "vllm/model_executor/layers/quantization/__init__.py",
        ("QuantizationMethods", "QUANTIZATION_METHODS"),
    )


def _load_formats(resolver: _Resolver) -> dict[str, SourceRef]:
    out = _named_string_sets(
        resolver,
        "vllm/model_executor/model_loader/__init__.py",
        ("LoadFormats", "_LOAD_FORMAT_TO_MODEL_LOADER"),
    )
    for cls in resolver.top_classes(resolver.src.config_files()):
        if cls.node.name != "LoadFormat":
            continue
        for stmt in _top_level(cls.node.body):
            value = _const_str(stmt.value) if isinstance(stmt, ast.Assign) else None
            if value is not None:
                _add(out, value, SourceRef(cls.path, stmt.lineno))
    return out


def _architectures(resolver: _Resolver) -> dict[str, SourceRef]:
    for path in ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py"):
        if not resolver.src.has(path):
            continue
        root = resolver.lookup(path, "_VLLM_MODELS") or resolver.lookup(path, "_MODELS")
        if root is not None:
            out: dict[str, SourceRef] = {}
            _dict_keys(resolver, root, out, set())
            return out
    return {}


def _dict_keys(resolver: _Resolver, found: _Def, out: dict[str, SourceRef], seen: set) -> None:
    """String keys of a dict literal, following ``**NAME`` spreads of other
    module-level dicts."""
    if not isinstance(found.node, ast.Dict):
        return
    for k, v in zip(found.node.keys, found.node.values, strict=True):
        if k is None:
            inner = resolver.resolve(found.path, v) if isinstance(v, ast.Name) else _Def(found.path, v)
            if inner is not None and id(inner.node) not in seen:
                seen.add(id(inner.node))
                _dict_keys(resolver, inner, out, seen)
        elif isinstance(k, ast.Constant) and isinstance(k.value, str):
            _add(out, k.value, SourceRef(found.path, k.lineno))


def _modules(src: _Sources) -> dict[str, SourceRef]:
    out = {}
    for path in src.py:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = SourceRef(path, 1)
    return out


# --------------------------------------------------------------------------
# Deprecations
# --------------------------------------------------------------------------

_TOKEN = r"(?:`([^`\n]+)`|'([^'\n]+)'|\"([^\"\n]+)\"|(-{1,2}[A-Za-z0-9][\w.-]*[\w]|[A-Za-z_][\w.:]*[\w]))"
_NEW_RE = re.compile(
    r"(?:\buse\b|\busing\b|replaced\s+(?:by|with)|renamed\s+to|in\s+favou?r\s+of|switch\s+to|migrate\s+to)"
    r"\s+(?:the\s+)?(?:new\s+)?(?:argument\s+|option\s+|flag\s+|parameter\s+|field\s+|variable\s+)?" + _TOKEN,
    re.IGNORECASE,
)
_OLD_RES = (
    re.compile(
        _TOKEN
        + r"(?:\s+(?:argument|option|flag|parameter|field|env(?:ironment)?\s+var(?:iable)?|variable|arg))?"
        r"\s+(?:is|are|has\s+been|have\s+been|was|were)\s+(?:now\s+)?(?:being\s+)?deprecated",
        re.IGNORECASE,
    ),
    re.compile(
        r"deprecated\s+(?:argument|option|flag|parameter|field|env(?:ironment)?\s+var(?:iable)?|variable)s?\s+"
        + _TOKEN,
        re.IGNORECASE,
    ),
)
_ENGLISH = {
    "this",
    "it",
    "that",
    "which",
    "the",
    "a",
    "an",
    "argument",
    "option",
    "flag",
    "parameter",
    "field",
    "value",
    "feature",
    "setting",
    "method",
    "function",
    "api",
    "mode",
    "support",
    "they",
    "these",
    "those",
    "there",
    "passing",
    "usage",
    "specifying",
}


def _token(m: re.Match, *, with_value: bool = False) -> tuple[str, bool] | None:
    """(token, was_quoted) of a _TOKEN match; None for plain English words
    and for quoted text that is not a single name.  ``with_value``: accept a
    quoted ```--flag value``` and keep the flag (for replacements; a
    deprecated ```--flag value``` deprecates a value, not the flag)."""
    quoted = next((g for g in m.groups()[:3] if g), None)
    tok = quoted if quoted else (m.groups()[3] or "").rstrip(".:")
    if with_value and quoted and tok.startswith("-"):
        tok = re.split(r"[\s=]", tok, maxsplit=1)[0]
    if not re.fullmatch(r"-{0,2}[A-Za-z_](?:[\w.:-]*\w)?", tok) or ".." in tok or tok.lower() in _ENGLISH:
        return None
    if not quoted and not re.search(r"[-_.]", tok):
        return None
    return tok, bool(quoted)


def _replacement(message: str) -> str | None:
    """The new spelling a deprecation message points to ("use X instead",
    "replaced by X", ...), looked for after the word "deprecated" first."""
    start = message.lower().find("deprecat")
    for text in (message[start:], message) if start > 0 else (message,):
        for m in _NEW_RE.finditer(text):
            tok = _token(m, with_value=True)
            if tok:
                return tok[0]
    return None


def _parse_deprecation(message: str) -> tuple[str, str | None] | None:
    """``(old, new)`` spellings named by a deprecation message (``new`` None
    when the message names no replacement); None when no old spelling is
    recognisable."""
    if "deprecat" not in message.lower():
        return None
    new = _replacement(message)
    for rx in _OLD_RES:
        for m in rx.finditer(message):
            old = _token(m)
            if old and old[0] != new:
                return old[0], new
    return None


@dataclass(frozen=True)
class _RawDeprecation:
    name: str
    message: str
    ref: SourceRef
    replacement: str | None
    structural: bool  # from the parser definition itself (always kept)


def _raw_deprecations(src: _Sources, structural: list[tuple[str, str, SourceRef]]) -> list[_RawDeprecation]:
    """``structural``: (name, text, ref) of definitions marked deprecated
    (``add_argument(deprecated=True)``, metric documentation), kept even
    without a replacement; plus every string literal saying "X is
    deprecated" with a recognisable X."""
    out = [_RawDeprecation(name, text, ref, _replacement(text), True) for name, text, ref in structural]
    for path in src.grep("deprecat", ignore_case=True):
        tree = src.tree(path)
        if tree is None:
            continue
        seen: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in seen or not isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr)):
                continue
            msg = _const_str(node, holes=True)
            if msg is None:
                continue
            seen.update(id(n) for n in ast.walk(node))
            msg = " ".join(msg.split())
            parsed = _parse_deprecation(msg)
            if parsed:
                out.append(_RawDeprecation(parsed[0], msg, SourceRef(path, node.lineno), parsed[1], False))
    return out


def _classify(name: str, sets: Mapping[str, Mapping[str, SourceRef]]) -> tuple[str, bool]:
    """``(kind, known)``: the category of a deprecated spelling and whether
    the release defines it."""
    dashed = "--" + name.lstrip("-").replace("_", "-")
    snake = name.lstrip("-").replace("-", "_")
    if name.startswith("-"):
        return "cli_flag", name in sets["cli_flags"] or dashed in sets["cli_flags"]
    if name.startswith("vllm:"):
        return "metric", name in sets["metrics"]
    if name in sets["env_vars"]:
        return "env_var", True
    if re.fullmatch(r"VLLM_[A-Z0-9_]+", name):
        return "env_var", False
    for kind, cat in (("engine_arg", "engine_args"), ("sampling_param", "sampling_params")):
        if snake in sets[cat]:
            return kind, True
    if name in sets["config_fields"] or any(k.endswith("." + snake) for k in sets["config_fields"]):
        return "config_field", True
    if name in sets["modules"]:
        return "module", True
    return "name", False


def _deprecations(
    src: _Sources, structural: list[tuple[str, str, SourceRef]], sets: Mapping[str, Mapping[str, SourceRef]]
) -> tuple[Deprecation, ...]:
    """Deprecations that name a replacement, or that come from a definition
    marked deprecated, or whose old spelling the release defines."""
    found = set()
    for raw in _raw_deprecations(src, structural):
        kind, known = _classify(raw.name, sets)
        if raw.replacement or raw.structural or known:
            found.add(Deprecation(kind, raw.name, raw.message, raw.ref, raw.replacement))
    return tuple(sorted(found, key=lambda d: (d.ref, d.name)))


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def extract_surface(path: str | os.PathLike) -> ReleaseSurface:
    """Extract the :class:`ReleaseSurface` of the vLLM release at ``path``.

    ``path`` is a ``.whl`` file (read with :mod:`zipfile`, only the members
    needed), an unpacked wheel directory, or a site-packages directory with
    ``vllm/`` and exactly one ``vllm-*.dist-info``.  Nothing is imported."""
    files = _open_release(path)
    try:
        meta = _read_metadata(files)
        cuda, cuda_ref = _cuda_major(files)
        src = _Sources(files)
        resolver = _Resolver(src)
        cli = _CliCollector(src, resolver)
        flags = cli.collect()
        metrics, metric_notices = _metrics(src)
        sets: dict[str, Mapping[str, SourceRef]] = {
            "cli_flags": flags,
            "engine_args": _engine_args(resolver),
            "config_fields": _config_fields(resolver),
            "sampling_params": _sampling_params(resolver),
            "env_vars": _env_vars(src),
            "metrics": metrics,
            "quantization_methods": _quantization_methods(resolver),
            "load_formats": _load_formats(resolver),
            "architectures": _architectures(resolver),
            "modules": _modules(src),
        }
        return ReleaseSurface(
            version=meta.version,
            requires_python=meta.requires_python,
            requires_dist=meta.requires_dist,
            requires_dist_refs=meta.requires_dist_refs,
            requires_python_ref=meta.requires_python_ref,
            cuda_major=cuda,
            cuda_ref=cuda_ref,
            deprecations=_deprecations(src, cli.deprecated + metric_notices, sets),
            unparsed=tuple(sorted(src.unparsed)),
            cli_arity={f: cli.arity.get(f, FlagArity(None)) for f in flags},
            **cast(dict[str, Any], sets),
        )
    finally:
        files.close()
