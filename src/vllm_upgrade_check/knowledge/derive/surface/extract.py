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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from vllm_upgrade_check.knowledge.derive.surface.cuda import _cuda_major
from vllm_upgrade_check.knowledge.derive.surface.files import _open_release
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
#: Builtin types ``get_kwargs`` tests for (``contains_type(type_hints, X)``).
_BUILTIN_TYPES = {
    "bool": "bool",
    "str": "str",
    "int": "int",
    "float": "float",
    "complex": "complex",
    "bytes": "bytes",
    "dict": "dict",
    "Dict": "dict",
    "list": "list",
    "List": "list",
    "tuple": "tuple",
    "Tuple": "tuple",
    "set": "set",
    "Set": "set",
    "frozenset": "frozenset",
    "FrozenSet": "frozenset",
    "type": "type",
    "Type": "type",
    "object": "object",
}
#: Modules whose classes are known not to be dataclasses (typing forms,
#: torch dtypes, stdlib paths); a class imported from anywhere else outside
#: vllm has an unknown ``is_dataclass``.
_NON_DATACLASS_MODULES = ("typing", "typing_extensions", "collections", "torch", "pathlib", "enum", "re")


class _Unknown:
    """The statically unknown value (three-valued logic's third value)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class _Hint:
    """One member of ``get_type_hints(field.type)`` as a release computes it.

    ``origin`` is what ``is_type(hint, X)`` compares with: a builtin type
    name (``"list"`` for ``list[int]`` and ``List[int]``), ``"Literal"``,
    ``"None"`` (``type(None)``), ``"Union"`` (an unexpanded ``X | Y`` or
    ``Union``), or ``"class"`` for anything else.  ``args`` are the
    subscript arguments (AST, read in ``path``), ``values`` a Literal's
    values (None when not all constants), ``dataclass`` whether
    ``is_dataclass`` holds (None: unknown), ``builtin`` whether
    ``__module__ == "builtins"``, ``dict_subclass`` whether it subclasses
    ``dict`` (TypedDict excluded)."""

    origin: str
    path: str = ""
    args: tuple = ()
    values: tuple | None = None
    dataclass: bool | None = False
    builtin: bool | None = True
    dict_subclass: bool = False
    name: str = ""


@dataclass(frozen=True)
class _Expansion:
    """How a release's ``get_kwargs`` expands a field annotation into hints.

    ``typing.Union``/``Optional`` members are always taken (typing itself
    flattens nested unions; aliases are transparent at run time).
    ``pipe``: ``X | Y`` (``types.UnionType``) is expanded too (0.11.1+),
    else it is one opaque hint.  ``annotated``: ``"no"`` (0.8.5: an
    ``Annotated`` field is one opaque hint), ``"top"`` (0.9.0: a top-level
    ``Annotated`` gives its type and its metadata objects, inner ones stay
    opaque), ``"all"`` (0.9.1+ ``get_type_hints``: recursively)."""

    pipe: bool = True
    annotated: str = "all"


class _TypeReader:
    """Reads field annotations into :class:`_Hint` sets."""

    def __init__(self, resolver: _Resolver) -> None:
        self.resolver = resolver

    def import_module(self, path: str, name: str) -> str | None:
        """Module a top-level ``from M import name`` / ``import M as name``
        in ``path`` names (None when ``name`` is not imported there)."""
        entry = self.resolver._symbols_of(path).get(name) if self.resolver.src.has(path) else None
        if entry is None or entry[0] == "node":
            return None
        return str(entry[1])

    def hints(
        self, path: str, ann: ast.AST | None, exp: _Expansion, depth: int = 0, top: bool = True
    ) -> list[_Hint] | None:
        """The hint set of annotation ``ann`` read in ``path`` (None: unknown)."""
        if ann is None or depth > 12:
            return None
        if isinstance(ann, ast.Constant):
            if ann.value is None:
                return [_Hint("None")]
            if isinstance(ann.value, str):
                try:
                    parsed = ast.parse(ann.value, mode="eval").body
                except SyntaxError:
                    return None
                return self.hints(path, parsed, exp, depth + 1, top)
            return None
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            if not exp.pipe:
                return [_Hint("Union", path, builtin=False, name="UnionType")]
            return self._members(path, [ann.left, ann.right], exp, depth)
        if isinstance(ann, ast.Subscript):
            origin = _name_of(ann.value)
            args = list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if origin == "Optional":
                return self._members(path, [args[0], ast.Constant(None)], exp, depth)
            if origin == "Union":
                return self._members(path, args, exp, depth)
            if origin in ("Annotated", "SkipValidation"):
                return self._annotated(path, origin, args, exp, depth, top)
            if origin in ("InitVar", "Final"):
                return self.hints(path, args[0], exp, depth + 1, top)
            if origin == "Literal":
                return [_Hint("Literal", path, tuple(args), self._literal_values(path, args, depth))]
            base = self.hints(path, ann.value, exp, depth + 1, top)
            if base is None or len(base) != 1:
                return None
            return [_replace_args(base[0], path, tuple(args))]
        if isinstance(ann, (ast.Name, ast.Attribute)):
            return self._named(path, ann, exp, depth, top)
        return None

    def _literal_values(self, path: str, args: Sequence[ast.AST], depth: int) -> tuple | None:
        """Values of ``Literal[args]``; nested Literal aliases are flattened
        (as typing does); None when one is not a constant."""
        out: list = []
        for a in args:
            if isinstance(a, ast.Constant):
                out.append(a.value)
                continue
            if isinstance(a, ast.Subscript) and _name_of(a.value) == "Literal":
                nested = self.hints(path, a, _Expansion(), depth + 1)
                if not nested or nested[0].values is None:
                    return None
                out += [v for v in nested[0].values if v not in out]
                continue
            found = self.resolver.resolve(path, a) if isinstance(a, (ast.Name, ast.Attribute)) else None
            inner = self.hints(found.path, found.node, _Expansion(), depth + 1) if found is not None else None
            if not inner or len(inner) != 1 or inner[0].origin != "Literal" or inner[0].values is None:
                return None
            out += [v for v in inner[0].values if v not in out]
        return tuple(out)

    def _members(self, path: str, anns: Sequence[ast.AST], exp: _Expansion, depth: int) -> list[_Hint] | None:
        out: list[_Hint] = []
        for a in anns:
            got = self.hints(path, a, exp, depth + 1, top=False)
            if got is None:
                return None
            out += [h for h in got if h not in out]
        return out

    def _annotated(
        self, path: str, origin: str, args: Sequence[ast.AST], exp: _Expansion, depth: int, top: bool
    ) -> list[_Hint] | None:
        if exp.annotated == "all":
            return self.hints(path, args[0], exp, depth + 1, top)
        if exp.annotated == "no" or not top:
            # typing._AnnotatedAlias: is_type() false for everything, and
            # its __module__ is forwarded to the wrapped type: unknown
            return [_Hint("class", path, builtin=None, name="Annotated")]
        inner = self.hints(path, args[0], exp, depth + 1, top=False)
        if inner is None:
            return None
        if len(inner) != 1:
            inner = [_Hint("Union", path, builtin=None, name="Union")]
        if origin == "Annotated":
            inner = inner + [_Hint("class", path, dataclass=None, builtin=None, name="metadata") for _ in args[1:]]
        return inner

    def _named(
        self, path: str, ann: ast.AST, exp: _Expansion, depth: int, top: bool
    ) -> list[_Hint] | None:
        name = _name_of(ann)
        if isinstance(ann, ast.Name) and name in ("None", "NoneType"):
            return [_Hint("None")]
        found = self.resolver.resolve(path, ann)
        if found is None:
            if isinstance(ann, ast.Name) and name in _BUILTIN_TYPES and self.import_module(path, name) in (
                None,
                "typing",
                "typing_extensions",
            ):
                return [_Hint(_BUILTIN_TYPES[name], path, name=name)]
            module = self.import_module(path, name) if isinstance(ann, ast.Name) else None
            if isinstance(ann, ast.Attribute) and isinstance(ann.value, ast.Name):
                module = self.import_module(path, ann.value.id) or ann.value.id
            if name == "Any" or (module and module.split(".")[0] in _NON_DATACLASS_MODULES):
                return [_Hint("class", path, builtin=False, name=name)]
            return [_Hint("class", path, dataclass=None, builtin=False, name=name)]
        node = found.node
        if isinstance(node, ast.ClassDef):
            return [self._class_hint(found)]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return None
        if isinstance(node, ast.Call):
            # TypeVar(...), NewType(...), TypeAliasType(...): not a class get_kwargs knows
            return [_Hint("class", found.path, builtin=False, name=_name_of(node))]
        return self.hints(found.path, node, exp, depth + 1, top)

    def _class_hint(self, cls: _Def) -> _Hint:
        chain = self.resolver.mro(cls)
        bases = {_base_name(b) for c in chain for b in c.node.bases}
        is_dc = any(self._dataclass_decorated(c) for c in chain)
        unknown_base = any(
            self.resolver.resolve(c.path, b) is None and _base_name(b) not in _KNOWN_BASES
            for c in chain
            for b in c.node.bases
        )
        dict_sub = bool(bases & {"dict", "Dict"}) and "TypedDict" not in bases
        return _Hint(
            "class",
            cls.path,
            dataclass=True if is_dc else (None if unknown_base else False),
            builtin=False,
            dict_subclass=dict_sub,
            name=cls.node.name,
        )

    def _dataclass_decorated(self, cls: _Def) -> bool:
        for dec in cls.node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if _name_of(target) == "dataclass":
                return True
            found = self.resolver.resolve(cls.path, target)
            if found is not None and isinstance(found.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(
                    isinstance(n, ast.Call) and _name_of(n.func) == "dataclass" for n in ast.walk(found.node)
                ):
                    return True
        return False


#: Base classes outside vllm that are known not to make a dataclass.
_KNOWN_BASES = frozenset(
    {
        "Enum",
        "IntEnum",
        "StrEnum",
        "str",
        "int",
        "dict",
        "Dict",
        "object",
        "TypedDict",
        "BaseModel",
        "Protocol",
        "Generic",
        "ABC",
        "NamedTuple",
        "Exception",
        "list",
    }
)


def _base_name(base: ast.AST) -> str:
    """Name of a base class expression (``dict[str, X]`` -> ``"dict"``)."""
    return _name_of(base.value if isinstance(base, ast.Subscript) else base)


def _replace_args(hint: _Hint, path: str, args: tuple) -> _Hint:
    return _Hint(
        hint.origin,
        path,
        args,
        hint.values,
        hint.dataclass,
        hint.builtin,
        hint.dict_subclass,
        hint.name,
    )


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
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


class _FieldEval:
    """Runs the per-field body of a release's ``get_kwargs`` loop on one
    field, statically.  The result is the argparse kwargs that matter for
    arity (``action``, ``nargs``, ``choices``, ``metavar``, ``type`` as a
    Literal :class:`_Hint` or ``"other"``), with :data:`UNKNOWN` values
    where the code could not be followed, or None when the whole field is
    unknown (a test that cannot be decided, or a ``raise``)."""

    def __init__(self, model: _KwargsModel, fld: _Field, hints: list[_Hint] | None) -> None:
        self.model = model
        self.fld = fld
        self.hints = hints
        self.env: dict[str, Any] = {"type_hints": hints if hints is not None else UNKNOWN}
        self.kw: dict[str, Any] = {}
        self.failed = False
        self.stopped = False

    def run(self, body: list[ast.stmt]) -> dict[str, Any] | None:
        """Execute ``body``; the field's kwargs or None (unknown)."""
        self._exec(body)
        return None if self.failed else self.kw

    # -- statements ----------------------------------------------------------

    def _exec(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            if self.failed or self.stopped:
                return
            self._stmt(stmt)

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Continue, ast.Return, ast.Break)):
            self.stopped = True
        elif isinstance(stmt, ast.Raise):
            self.failed = True
        elif isinstance(stmt, ast.If):
            if not _relevant(stmt):
                return
            test = self._test(stmt.test)
            if test is UNKNOWN:
                self.failed = True
            else:
                self._exec(stmt.body if test else stmt.orelse)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            value = stmt.value
            targets = list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
            if value is None:
                return
            for t in targets:
                self._assign(t, value)
        elif isinstance(stmt, ast.AugAssign):
            key = self._kw_key(stmt.target)
            if key == "choices" and isinstance(stmt.op, ast.Add):
                extra = self._value(stmt.value)
                cur = self.kw.get("choices")
                self.kw["choices"] = cur + extra if isinstance(cur, list) and isinstance(extra, list) else UNKNOWN
            elif key not in (None, "help", "default"):
                self.kw[key] = UNKNOWN
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._call_stmt(stmt.value)
        elif isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                key = self._kw_key(t)
                if key is not None:
                    self.kw.pop(key, None)
        elif isinstance(stmt, (ast.For, ast.While, ast.With, ast.Try, ast.Match)):
            if _relevant(stmt):
                self.failed = True

    def _kw_key(self, target: ast.AST) -> str | None:
        """``kwargs[name]["key"]`` -> ``"key"``."""
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
            and self._is_kw(target.value)
        ):
            return target.slice.value
        return None

    def _is_kw(self, node: ast.AST) -> bool:
        """``kwargs[name]``."""
        return (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "kwargs"
            and isinstance(node.slice, ast.Name)
            and node.slice.id == "name"
        )

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        if self._is_kw(target):
            got = self._value(value)
            self.kw = dict(got) if isinstance(got, dict) else {"action": UNKNOWN, "nargs": UNKNOWN}
            return
        key = self._kw_key(target)
        if key is not None:
            if key not in ("default", "help"):
                self.kw[key] = self._value(value)
            return
        if isinstance(target, ast.Name) and target.id == "type_hints":
            # the hints were computed up front; 0.33's dict-subclass mapping
            # ({dict if is_dict_subclass(th) else th for th in type_hints})
            if isinstance(value, ast.SetComp) and self.hints is not None:
                if any(isinstance(n, ast.Call) and _name_of(n.func) == "is_dict_subclass" for n in ast.walk(value)):
                    self.env["type_hints"] = [_Hint("dict") if h.dict_subclass else h for h in self.hints]
            return
        if isinstance(target, ast.Name):
            self.env[target.id] = self._value(value)

    def _call_stmt(self, call: ast.Call) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr == "update" and self._is_kw(func.value) and call.args:
            got = self._value(call.args[0])
            if isinstance(got, dict):
                self.kw.update(got)
                return
            helper = _name_of(call.args[0].func) if isinstance(call.args[0], ast.Call) else ""
            if helper == "literal_to_kwargs":
                # sets type and choices (or metavar) only
                self.kw.update({"choices": UNKNOWN, "type": UNKNOWN})
            elif helper == "collection_to_kwargs":
                self.kw.update({"nargs": UNKNOWN, "type": UNKNOWN})
            else:
                self.kw.update({"action": UNKNOWN, "nargs": UNKNOWN, "choices": UNKNOWN})
            return
        key = self._kw_key(func.value)
        if key == "choices" and func.attr in ("append", "remove") and call.args:
            cur = self.kw.get("choices")
            item = self._value(call.args[0])
            if not isinstance(cur, list) or item is UNKNOWN:
                self.kw["choices"] = UNKNOWN
            elif func.attr == "append":
                # optional_type() turns the word "None" into None: an appended
                # None is accepted as "None", an appended "None" string never
                # matches the converted value
                if item is None:
                    self.kw["choices"] = cur + [None]
            elif item in cur:
                self.kw["choices"] = [c for c in cur if c != item]

    # -- expressions -----------------------------------------------------------

    def _value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    inner = self._value(v)
                    if not isinstance(inner, dict):
                        return UNKNOWN
                    out.update(inner)
                elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out[k.value] = self._value(v) if k.value not in ("default", "help") else None
            return out
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            items = [self._value(e) for e in node.elts]
            return UNKNOWN if any(i is UNKNOWN for i in items) else items
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            if node.id in ("name",):
                return self.fld.name
            if node.id == "Ellipsis":
                return Ellipsis
            return ("name", node.id)
        if isinstance(node, ast.Attribute):
            if node.attr == "BooleanOptionalAction":
                return "BooleanOptionalAction"
            if isinstance(node.value, ast.Name) and node.value.id == "field" and node.attr == "name":
                return self.fld.name
            return ("name", node.attr)
        if isinstance(node, ast.Subscript):
            if self._is_kw(node):
                return self.kw
            base = self._value(node.value)
            idx = self._value(node.slice)
            if isinstance(base, list) and isinstance(idx, int) and -len(base) <= idx < len(base):
                return base[idx]
            if isinstance(base, dict) and isinstance(idx, str):
                return base.get(idx, UNKNOWN)
            return UNKNOWN
        if isinstance(node, ast.IfExp):
            test = self._test(node.test)
            if test is UNKNOWN:
                return UNKNOWN
            return self._value(node.body if test else node.orelse)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.GeneratorExp):
            return self._generator(node)
        if isinstance(node, (ast.Lambda, ast.JoinedStr, ast.BinOp)):
            return "other"  # a parser function or a help text: never a Literal
        return UNKNOWN

    def _generator(self, node: ast.GeneratorExp) -> Any:
        """``(th for th in type_hints if is_dataclass(th))``: the matching hints."""
        if len(node.generators) != 1:
            return UNKNOWN
        gen = node.generators[0]
        items = self._value(gen.iter)
        if not isinstance(items, list) or not isinstance(gen.target, ast.Name):
            return UNKNOWN
        out = []
        for item in items:
            verdict: Any = True
            for cond in gen.ifs:
                c = self._hint_pred(cond, gen.target.id, item)
                if c is UNKNOWN:
                    return UNKNOWN
                verdict = verdict and c
            if verdict:
                out.append(item)
        return out

    def _hint_pred(self, cond: ast.AST, var: str, item: Any) -> Any:
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

    def _hints_of(self, node: ast.AST) -> list[_Hint] | Any:
        got = self._value(node)
        if isinstance(got, _Hint):
            return [got]
        if isinstance(got, list) and all(isinstance(h, _Hint) for h in got):
            return got
        return UNKNOWN

    def _call(self, node: ast.Call) -> Any:
        fname = _name_of(node.func)
        args = node.args
        if isinstance(node.func, ast.Attribute) and fname == "get" and self._is_kw(node.func.value) and args:
            key = self._value(args[0])
            return self.kw.get(key) if isinstance(key, str) else UNKNOWN
        if fname == "get_type_hints" and args:
            return self.env["type_hints"]
        if fname == "next" and args:
            got = self._value(args[0])
            if isinstance(got, list):
                if got:
                    return got[0]
                return self._value(args[1]) if len(args) > 1 else UNKNOWN
            return UNKNOWN
        if fname == "get_type" and len(args) == 2:
            hints = self._hints_of(args[0])
            want = self._type_name(args[1])
            if hints is UNKNOWN or want is None:
                return UNKNOWN
            return next((h for h in hints if h.origin == want), None)
        if fname == "get_args" and args:
            h = self._value(args[0])
            if isinstance(h, _Hint):
                if h.origin == "Literal":
                    return list(h.values) if h.values is not None else UNKNOWN
                return [self._arg_hint(h.path, a) for a in h.args]
            return UNKNOWN
        if fname in ("sorted", "list") and args:
            got = self._value(args[0])
            if isinstance(got, list):
                try:
                    return sorted(got) if fname == "sorted" else list(got)
                except TypeError:
                    return UNKNOWN
            return UNKNOWN
        if fname == "len" and args:
            got = self._value(args[0])
            return len(got) if isinstance(got, list) else UNKNOWN
        if fname == "literal_to_kwargs" and args:
            return self._literal_to_kwargs(args[0])
        if fname == "collection_to_kwargs" and len(args) == 2:
            return self._collection_to_kwargs(args[0], args[1])
        if fname == "type" and args:
            return "other"
        return "other"

    def _arg_hint(self, path: str, arg: ast.AST) -> Any:
        """A subscript argument (``list[X]``'s X) as a value: Ellipsis, a
        Literal or Union hint, or a plain hint."""
        if isinstance(arg, ast.Constant) and arg.value is Ellipsis:
            return Ellipsis
        if isinstance(arg, ast.Subscript) and _name_of(arg.value) in ("Union", "Optional"):
            return _Hint("Union", path, builtin=False, name="Union")
        if isinstance(arg, ast.BinOp):
            return _Hint("Union", path, builtin=False, name="UnionType")
        got = self.model.types.hints(path, arg, _Expansion(True, "no"), top=False)
        if got is None:
            return UNKNOWN
        if len(got) == 1:
            return got[0]
        return _Hint("Union", path, builtin=False, name="Union")

    def _literal_to_kwargs(self, arg: ast.AST) -> Any:
        hints = self._hints_of(arg)
        if hints is UNKNOWN:
            return UNKNOWN
        lit = next((h for h in hints if h.origin == "Literal"), None)
        if lit is None or lit.values is None:
            return UNKNOWN
        key = "metavar" if self.model.literal_metavar and any(h.origin == "str" for h in hints) else "choices"
        try:
            options = sorted(lit.values)
        except TypeError:
            return UNKNOWN
        return {"type": "other", key: options}

    def _collection_to_kwargs(self, hints_arg: ast.AST, type_arg: ast.AST) -> Any:
        hints = self._hints_of(hints_arg)
        want = self._type_name(type_arg)
        if hints is UNKNOWN or want is None:
            return UNKNOWN
        hint = next((h for h in hints if h.origin == want), None)
        if hint is None:
            return UNKNOWN
        types = [self._arg_hint(hint.path, a) for a in hint.args]
        if not types or any(t is UNKNOWN for t in types):
            return UNKNOWN
        elem = types[0]
        if isinstance(elem, _Hint) and elem.origin == "Union":
            elem = "other"
        nargs = "+" if want != "tuple" or Ellipsis in types else len(types)
        return {"type": elem if isinstance(elem, _Hint) and elem.origin == "Literal" else "other", "nargs": nargs}

    def _type_name(self, node: ast.AST) -> str | None:
        name = _name_of(node)
        if name in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[name]
        if name == "Literal":
            return "Literal"
        return None

    # -- tests -------------------------------------------------------------

    def _test(self, node: ast.AST) -> Any:
        """True / False / UNKNOWN."""
        if isinstance(node, ast.BoolOp):
            results = [self._test(v) for v in node.values]
            if isinstance(node.op, ast.And):
                if any(r is False for r in results):
                    return False
                return UNKNOWN if any(r is UNKNOWN for r in results) else True
            if any(r is True for r in results):
                return True
            return UNKNOWN if any(r is UNKNOWN for r in results) else False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            r = self._test(node.operand)
            return UNKNOWN if r is UNKNOWN else not r
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.left, node.ops[0], node.comparators[0])
        if isinstance(node, ast.Call):
            return self._pred_call(node)
        value = self._value(node)
        if value is UNKNOWN or (isinstance(value, tuple) and value and value[0] == "name"):
            return UNKNOWN
        return bool(value)

    def _pred_call(self, node: ast.Call) -> Any:
        fname = _name_of(node.func)
        args = node.args
        if fname == "contains_type" and len(args) == 2:
            hints = self._hints_of(args[0])
            want = self._type_name(args[1])
            if hints is UNKNOWN or want is None:
                return UNKNOWN
            return any(h.origin == want for h in hints)
        if fname == "any" and args and isinstance(args[0], ast.GeneratorExp):
            got = self._generator(args[0])
            return UNKNOWN if got is UNKNOWN else bool(got)
        if fname in ("is_optional", "is_type_in_union") and args and self._is_field_type(args[0]):
            # 0.8.4: get_origin(field.type) is Union and X in get_args(field.type)
            want = "None" if fname == "is_optional" else self._type_name(args[1]) if len(args) > 1 else None
            raw = self._raw_union()
            if raw is UNKNOWN or want is None:
                return UNKNOWN
            return raw is not None and any(h.origin == want for h in raw)
        if fname in ("hasattr", "isinstance", "is_in_doc_build"):
            return UNKNOWN
        value = self._value(node)
        if value is UNKNOWN or value == "other":
            return UNKNOWN
        return bool(value)

    def _is_field_type(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "type"
            and isinstance(node.value, ast.Name)
            and node.value.id == "field"
        )

    def _raw_union(self) -> Any:
        """Members of ``field.type`` when its origin is ``typing.Union``
        (``Optional``/``Union``, not ``X | Y``), None for other types."""
        ann = self.fld.annotation
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN
        if isinstance(ann, ast.Subscript) and _name_of(ann.value) in ("Optional", "Union"):
            got = self.model.types.hints(self.fld.ref.path, ann, _Expansion(False, "no"))
            return UNKNOWN if got is None else got
        if isinstance(ann, (ast.Name, ast.Attribute)):
            found = self.model.types.resolver.resolve(self.fld.ref.path, ann)
            if found is not None and isinstance(found.node, ast.Subscript):
                if _name_of(found.node.value) in ("Optional", "Union"):
                    got = self.model.types.hints(found.path, found.node, _Expansion(False, "no"))
                    return UNKNOWN if got is None else got
        return None

    def _compare(self, left: ast.AST, op: ast.cmpop, right: ast.AST) -> Any:
        # field.type is bool (0.8.4)
        if self._is_field_type(left) and isinstance(op, (ast.Is, ast.IsNot)):
            ann = self.fld.annotation
            hit = isinstance(ann, ast.Name) and ann.id == _name_of(right) and self._type_name(right) is not None
            if not isinstance(ann, ast.Name):
                hit = False
            return hit if isinstance(op, ast.Is) else not hit
        # get_origin(kwargs[name].get("type")) is Literal
        if (
            isinstance(left, ast.Call)
            and _name_of(left.func) == "get_origin"
            and left.args
            and isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
        ):
            target = self._value(left.args[0])
            origins = self._origins(right)
            if origins is None:
                return UNKNOWN
            if target is UNKNOWN:
                return UNKNOWN
            origin = target.origin if isinstance(target, _Hint) else None
            if isinstance(target, _Hint) and target.origin == "Union":
                origin = "Union" if target.name == "Union" else "UnionType"
            hit = origin in origins
            return hit if isinstance(op, (ast.Is, ast.In)) else not hit
        # type(None) in type_hints
        if (
            isinstance(left, ast.Call)
            and _name_of(left.func) == "type"
            and left.args
            and isinstance(left.args[0], ast.Constant)
            and left.args[0].value is None
            and isinstance(op, (ast.In, ast.NotIn))
        ):
            hints = self._hints_of(right)
            if hints is UNKNOWN:
                return UNKNOWN
            hit = any(h.origin == "None" for h in hints)
            return hit if isinstance(op, ast.In) else not hit
        # type_hints == {bool, str, type(None)}
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Set):
            hints = self._hints_of(left)
            want = self._type_set(right)
            if hints is UNKNOWN or want is None:
                return UNKNOWN
            have: set = set()
            for h in hints:
                if h.origin == "class":
                    have.add(("class", h.name))
                else:
                    have.add(h.origin)
            hit = have == want
            return hit if isinstance(op, ast.Eq) else not hit
        # Ellipsis in types
        lval = self._value(left)
        rval = self._value(right)
        if lval is UNKNOWN or rval is UNKNOWN:
            return UNKNOWN
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(rval, list):
            hit = any(lval is r or (not isinstance(r, _Hint) and lval == r) for r in rval)
            return hit if isinstance(op, ast.In) else not hit
        if isinstance(op, (ast.Is, ast.IsNot)) and (lval is None or rval is None):
            hit = lval is rval
            return hit if isinstance(op, ast.Is) else not hit
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(lval, (str, int)) and isinstance(rval, (str, int)):
            hit = lval == rval
            return hit if isinstance(op, ast.Eq) else not hit
        return UNKNOWN

    def _origins(self, node: ast.AST) -> set[str] | None:
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            names = {_name_of(e) for e in node.elts}
        else:
            names = {_name_of(node)}
        return names if all(names) else None

    def _type_set(self, node: ast.Set) -> set | None:
        out: set = set()
        for e in node.elts:
            if isinstance(e, ast.Call) and _name_of(e.func) == "type" and e.args:
                if isinstance(e.args[0], ast.Constant) and e.args[0].value is None:
                    out.add("None")
                    continue
                return None
            name = self._type_name(e)
            if name is None:
                return None
            out.add(name)
        return out


class _KwargsModel:
    """A release's ``get_kwargs`` (``_compute_kwargs`` since 0.9.2) in
    ``vllm/engine/arg_utils.py``, read once and emulated per field by
    :class:`_FieldEval`: the ``for field in fields(cls)`` loop body is run
    statement by statement on the field's annotation, so each release's own
    branches (dataclass -> JSON, ``bool | str | None`` -> ``nargs="?"``,
    bool -> ``BooleanOptionalAction``, Literal -> choices, tuple/list/set ->
    ``nargs``, 0.8.4's ``field.type is bool`` ...) decide.  ``loop`` is None
    when the release has no such function (before 0.8.4)."""

    def __init__(self, src: _Sources, resolver: _Resolver) -> None:
        self.types = _TypeReader(resolver)
        tree = src.tree("vllm/engine/arg_utils.py")
        funcs = {
            n.name: n
            for n in (ast.walk(tree) if tree else ())
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.loop: ast.For | None = None
        candidates = [
            n
            for fname in ("_compute_kwargs", "get_kwargs")
            for n in (ast.walk(tree) if tree else ())
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == fname
        ]
        for func in candidates:
            loop = next(
                (
                    n
                    for n in ast.walk(func)
                    if isinstance(n, ast.For)
                    and isinstance(n.iter, ast.Call)
                    and _name_of(n.iter.func) == "fields"
                    and isinstance(n.target, ast.Name)
                    and n.target.id == "field"
                ),
                None,
            )
            if loop is not None:
                self.loop = loop
                break
        helper = funcs.get("literal_to_kwargs")
        self.literal_metavar = helper is not None and any(
            isinstance(n, ast.Constant) and n.value == "metavar" for n in ast.walk(helper)
        )
        self.expansion = self._expansion(funcs)
        self._cache: dict[tuple, dict[str, Any] | None] = {}

    def _expansion(self, funcs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> _Expansion:
        if self.loop is None:
            return _Expansion()
        calls = {_name_of(n.func) for n in ast.walk(self.loop) if isinstance(n, ast.Call)}
        helper = funcs.get("get_type_hints")
        if "get_type_hints" in calls:
            if helper is None:
                return _Expansion()
            names = {_name_of(n) for n in ast.walk(helper) if isinstance(n, (ast.Name, ast.Attribute))}
            return _Expansion(pipe="UnionType" in names, annotated="all" if "Annotated" in names else "no")
        # 0.8.5-0.9.0: ``if get_origin(field.type) in {Union, ...}: type_hints.update(get_args(field.type))``
        for n in ast.walk(self.loop):
            if (
                isinstance(n, ast.If)
                and isinstance(n.test, ast.Compare)
                and isinstance(n.test.left, ast.Call)
                and _name_of(n.test.left.func) == "get_origin"
            ):
                names = {_name_of(x) for x in ast.walk(n.test.comparators[0])}
                return _Expansion(pipe="UnionType" in names, annotated="top" if "Annotated" in names else "no")
        return _Expansion()

    def field_kwargs(self, fld: _Field) -> dict[str, Any] | None:
        """The arity-relevant argparse kwargs ``get_kwargs`` gives ``fld``
        (None: unknown; ``{}`` when the release has no get_kwargs)."""
        key = (fld.ref, fld.name)
        if key not in self._cache:
            self._cache[key] = self._compute(fld)
        got = self._cache[key]
        return None if got is None else dict(got)

    def _compute(self, fld: _Field) -> dict[str, Any] | None:
        if self.loop is None:
            return None
        hints = self.types.hints(fld.ref.path, fld.annotation, self.expansion)
        return _FieldEval(self, fld, hints).run(self.loop.body)


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
class _KwargsSemantics:
    """What ``get_kwargs(ConfigClass)`` of a release does with bool fields
    (``vllm/engine/arg_utils.py``): since 0.8.5 it sets
    ``action=argparse.BooleanOptionalAction`` (so ``--no-x`` exists), except,
    in later releases, for ``bool | str | None`` fields."""

    bool_optional: bool
    bool_str_none_excluded: bool


def _kwargs_semantics(src: _Sources) -> _KwargsSemantics:
    tree = src.tree("vllm/engine/arg_utils.py")
    bodies = [
        n
        for n in (ast.walk(tree) if tree else ())
        if isinstance(n, ast.FunctionDef) and n.name in ("get_kwargs", "_compute_kwargs")
    ]
    nodes = [n for b in bodies for n in ast.walk(b)]
    bool_optional = any(
        isinstance(n, (ast.Attribute, ast.Name)) and _name_of(n) == "BooleanOptionalAction" for n in nodes
    )
    excluded = any(
        isinstance(n, ast.Set) and {_name_of(e) for e in n.elts} >= {"bool", "str", "type"} for n in nodes
    )
    return _KwargsSemantics(bool_optional, excluded)


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
