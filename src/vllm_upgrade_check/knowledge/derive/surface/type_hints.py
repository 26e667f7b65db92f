"""Field annotations read as a release's ``get_kwargs`` sees them: the
:class:`_Hint` set of ``get_type_hints(field.type)``, with unions and
``Annotated`` expanded as that release expands them (:class:`_Expansion`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from vllm_upgrade_check.knowledge.derive.surface.resolver import _Def, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import _name_of

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
