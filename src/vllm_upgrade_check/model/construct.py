"""Build plain records (:mod:`~vllm_upgrade_check.model.records`) from data already known
to be valid, without validation and without pydantic.

The bundled rule packs are checked strictly by the test suite (and, in the wheel, travel as
pre-parsed JSON: :mod:`vllm_upgrade_check.knowledge.packbundle`); validating them again on
every run cost more than the rest of a scan of a small repository. :func:`construct` gives
the record that validating the data with the pack schema
(:mod:`~vllm_upgrade_check.model.pack_schema`) and converting the result
(:func:`~vllm_upgrade_check.model.pack_schema.to_record`) gives: nested records, the member
of a union of records named by its ``kind``, enum members, defaults, and every string
stripped of surrounding white space (the schema's ``str_strip_whitespace``).

It is not a validator: data that does not fit the annotations raises ``TypeError`` or
``KeyError`` or gives a wrong object. ``tests/test_pack_construct.py`` checks, for every
bundled pack, that the result equals the validated one.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from vllm_upgrade_check.model.records import Record, _Factory

M = TypeVar("M", bound=Record)

_UNIONS = (Union, types.UnionType)

Builder = Callable[[Any], Any]

_Plan = tuple[tuple[tuple[str, Builder, bool, Any], ...], frozenset[str]]

_PLANS: dict[type[Record], _Plan] = {}
"""Per record class: ``(field name, builder, required, default)`` of each field, and the
field names; compiled once per process."""


def _plan(cls: type[Record]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        fields = tuple(
            (name, _compile(hints[name]), name not in cls._defaults, cls._defaults.get(name)) for name in cls._fields
        )
        plan = _PLANS[cls] = (fields, frozenset(cls._fields))
    return plan


def construct(cls: type[M], data: dict[str, Any]) -> M:
    """``cls`` built from ``data`` (a mapping as JSON or YAML gives it) without validation.

    Raises:
        TypeError, KeyError, ValueError: ``data`` does not have the shape of ``cls`` (it was
            not valid: validate it instead).
    """
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__} needs a mapping, not {type(data).__name__}")
    fields, keys = _plan(cls)
    if not keys.issuperset(data):
        raise KeyError(f"{cls.__name__} has no field(s) {', '.join(sorted(set(data) - keys))}")
    values = []
    for name, build, required, default in fields:
        if name in data:
            values.append(build(data[name]))
        elif required:
            raise KeyError(f"{cls.__name__}.{name} is required")
        else:
            values.append(default.make() if isinstance(default, _Factory) else default)
    return cls._from_values(tuple(values))


def _by_kind(members: tuple[Any, ...]) -> dict[Any, type[Record]]:
    out: dict[Any, type[Record]] = {}
    for member in members:
        for tag in get_args(typing.get_type_hints(member)["kind"]):
            out[tag] = member
    return out


def _none_or(build: Builder) -> Builder:
    return lambda value: None if value is None else build(value)


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Record)


def _compile(tp: Any) -> Builder:
    """A function giving a value as the annotation ``tp`` holds it (``None`` stays ``None``)."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _compile(get_args(tp)[0])
    if origin in _UNIONS:
        members = tuple(a for a in get_args(tp) if a is not type(None))
        if len(members) == 1:
            return _none_or(_compile(members[0]))
        if all(_is_record(m) for m in members):  # a union of records: the one its kind names
            by_kind = _by_kind(members)
            return _none_or(lambda value: construct(by_kind[value["kind"]], value))
        choices = [(member, _compile(member)) for member in members]

        def pick(value: Any) -> Any:
            for member, build in choices:  # the first member the value's type fits
                if _fits(member, value):
                    return build(value)
            return value

        return _none_or(pick)
    if origin is list or origin is tuple:
        args = get_args(tp)
        item = _compile(args[0] if args else Any)
        if origin is list:
            return _none_or(lambda value: [item(v) for v in value])
        return _none_or(lambda value: tuple(item(v) for v in value))
    if origin is dict:
        key_type, value_type = get_args(tp) or (Any, Any)
        build_key, build_value = _compile(key_type), _compile(value_type)
        return _none_or(lambda value: {build_key(k): build_value(v) for k, v in value.items()})
    if origin is Literal:
        literals = get_args(tp)
        return _none_or(lambda value: next((a for a in literals if a == value), value))
    if isinstance(tp, type):
        if issubclass(tp, Record):
            record = tp
            return _none_or(lambda value: construct(record, value))
        if issubclass(tp, enum.Enum):
            return _none_or(tp)
        if tp is str:
            return _none_or(str.strip)
    return _identity


def _identity(value: Any) -> Any:
    return value


def _fits(tp: Any, value: Any) -> bool:
    origin = get_origin(tp) or tp
    if origin is typing.Annotated:
        return _fits(get_args(tp)[0], value)
    if origin is Literal:
        return value in get_args(tp)
    if isinstance(origin, type):
        if issubclass(origin, Record):
            return isinstance(value, dict)
        if origin is float:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return isinstance(value, origin)
    return True
