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

_BUILDERS: dict[type[Record], Builder] = {}
"""Per record class: the function that builds it from a mapping, generated once per process."""


def _builder(cls: type[Record]) -> Builder:
    """Generate ``build(data)`` for ``cls``: one function per class, with each field's key
    test, converter and slot store inline (a generic loop over the fields costs about twice
    as much per record, and a run builds some 2,600 of them for the bundled packs)."""
    hints = typing.get_type_hints(cls)
    scope: dict[str, Any] = {"cls": cls, "new": cls.__new__, "fields": frozenset(cls._fields), "Factory": _Factory}
    lines = ["def build(data):"]
    lines.append("    if not isinstance(data, dict):")
    lines.append("        raise TypeError(f'{cls.__name__} needs a mapping, not {type(data).__name__}')")
    lines.append("    if not fields.issuperset(data):")
    lines.append("        raise KeyError(f\"{cls.__name__} has no field(s) {', '.join(sorted(set(data) - fields))}\")")
    lines.append("    record = new(cls)")
    for index, name in enumerate(cls._fields):
        optional, build = _bare(hints[name])
        scope[f"b{index}"] = build
        scope[f"s{index}"] = getattr(cls, name).__set__  # the slot, past the frozen __setattr__
        lines.append(f"    if {name!r} in data:")
        if build is _identity:
            lines.append(f"        s{index}(record, data[{name!r}])")
        elif optional:
            lines.append(f"        value = data[{name!r}]")
            lines.append(f"        s{index}(record, None if value is None else b{index}(value))")
        else:
            lines.append(f"        s{index}(record, b{index}(data[{name!r}]))")
        if name in cls._defaults:
            scope[f"d{index}"] = default = cls._defaults[name]
            made = f"d{index}.make()" if isinstance(default, _Factory) else f"d{index}"
            lines.append("    else:")
            lines.append(f"        s{index}(record, {made})")
        else:
            lines.append("    else:")
            lines.append(f"        raise KeyError({f'{cls.__name__}.{name} is required'!r})")
    lines.append("    return record")
    exec("\n".join(lines), scope)  # noqa: S102 - code made here from the class's own field names
    function: Builder = scope["build"]
    return function


def construct(cls: type[M], data: dict[str, Any]) -> M:
    """``cls`` built from ``data`` (a mapping as JSON or YAML gives it) without validation.

    Raises:
        TypeError, KeyError, ValueError: ``data`` does not have the shape of ``cls`` (it was
            not valid: validate it instead).
    """
    build = _BUILDERS.get(cls)
    if build is None:
        build = _BUILDERS[cls] = _builder(cls)
    record: M = build(data)
    return record


def _by_kind(members: tuple[Any, ...]) -> dict[Any, type[Record]]:
    out: dict[Any, type[Record]] = {}
    for member in members:
        for tag in get_args(typing.get_type_hints(member)["kind"]):
            out[tag] = member
    return out


def _none_or(build: Builder) -> Builder:
    if build is _identity:
        return build

    def none_or(value: Any) -> Any:
        return None if value is None else build(value)

    none_or.inner = build  # type: ignore[attr-defined]  # for _bare: the test inlined
    return none_or


def _bare(tp: Any) -> tuple[bool, Builder]:
    """``(whether None passes as None, the builder of the other values)`` of a field's
    annotation: what :func:`_compile` gives, with the test for ``None`` left to the caller."""
    if get_origin(tp) is typing.Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) in _UNIONS:
        members = tuple(a for a in get_args(tp) if a is not type(None))
        if len(members) == 1:
            return True, _bare(members[0])[1]
    build = _compile(tp)
    inner = getattr(build, "inner", None)
    return (True, inner) if inner is not None else (False, build)


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
        if issubclass(tp, enum.Enum):  # by value (or the member itself), as Enum(value) answers
            by_value = {**{m.value: m for m in tp}, **{m: m for m in tp}}
            return _none_or(by_value.__getitem__)
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


def deconstruct(value: Any) -> Any:
    """``value`` as plain JSON-ready data that :func:`construct` builds back into an equal
    record: a record as a mapping of its fields, an enum member as its value, a tuple as a
    list; other values as they are. (A string with surrounding white space would come back
    stripped: records built by validation or by :func:`construct` have none.)"""
    if isinstance(value, Record):
        return {name: deconstruct(getattr(value, name)) for name in value._fields}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [deconstruct(v) for v in value]
    if isinstance(value, dict):
        return {k: deconstruct(v) for k, v in value.items()}
    return value
