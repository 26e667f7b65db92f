"""A release's ``get_kwargs`` (``_compute_kwargs`` since 0.9.2) in
``vllm/engine/arg_utils.py``, read once: what it does with bool fields
(:class:`_KwargsSemantics`) and its per-field emulation (:class:`_KwargsModel`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from vllm_upgrade_check.knowledge.derive.surface.field_eval import _FieldEval
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Field, _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import _name_of, _Sources
from vllm_upgrade_check.knowledge.derive.surface.type_hints import _Expansion, _TypeReader


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
        return _FieldEval(self.types, self.literal_metavar, fld, hints).run(self.loop.body)
