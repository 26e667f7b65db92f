"""Build pydantic models from data already known to be valid, without running validation.

The bundled rule packs are checked strictly by the test suite (and, in the wheel, travel as
pre-parsed JSON: :mod:`vllm_upgrade_check.knowledge.packbundle`); validating them again on
every run cost more than the rest of a scan of a small repository. :func:`construct` gives
the object :meth:`pydantic.BaseModel.model_validate` would give for such data - nested
models, the member of a discriminated union named by its discriminator, enum members,
defaults and ``str_strip_whitespace`` - through ``model_construct``, so the models' core
schemas are never built unless something validates (``--rules``, ``rules validate``).

It is not a validator: data that does not fit the annotations raises ``TypeError`` or
``KeyError`` or gives a wrong object. ``tests/test_pack_construct.py`` checks, for every
bundled pack, that the result equals ``model_validate``'s.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_UNIONS = (Union, types.UnionType)


Builder = Callable[[Any], Any]

_set = object.__setattr__

_PLANS: dict[type[BaseModel], tuple[tuple[tuple[str, str, Builder, bool, Any], ...], frozenset[str]]] = {}
"""Per model class: ``(field name, key, builder, required, default maker)`` of each field,
and the keys it takes; compiled once per process."""


def _plan(cls: type[BaseModel]) -> tuple[tuple[tuple[str, str, Builder, bool, Any], ...], frozenset[str]]:
    plan = _PLANS.get(cls)
    if plan is None:
        strip = bool(cls.model_config.get("str_strip_whitespace"))
        fields = []
        for name, field in cls.__pydantic_fields__.items():
            key = field.alias or name
            if field.default_factory is not None:
                default: Any = field.default_factory  # our factories take no arguments (list, dict)
            else:
                default = (lambda value: lambda: value)(field.default)
            fields.append((name, key, _compile(field.annotation, strip, field.discriminator), field.is_required(), default))
        plan = _PLANS[cls] = (tuple(fields), frozenset(f[1] for f in fields))
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
    values: dict[str, Any] = {}
    given: set[str] = set()
    for name, key, build, required, default in fields:
        if key in data:
            values[name] = build(data[key])
            given.add(name)
        elif required:
            raise KeyError(f"{cls.__name__}.{name} is required")
        else:
            values[name] = default()
    if cls.__private_attributes__ or cls.model_config.get("extra") == "allow":
        return cls.model_construct(_fields_set=given, **values)
    # What model_construct does for a model without private attributes or extra fields.
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", given)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _member_for(members: tuple[Any, ...], discriminator: str) -> dict[Any, type[BaseModel]]:
    out: dict[Any, type[BaseModel]] = {}
    for member in members:
        for tag in get_args(member.__pydantic_fields__[discriminator].annotation):
            out[tag] = member
    return out


def _none_or(build: Builder) -> Builder:
    return lambda value: None if value is None else build(value)


def _compile(tp: Any, strip: bool, discriminator: Any = None) -> Builder:
    """A function giving a value as the annotation ``tp`` holds it (``None`` stays ``None``)."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        inner, *meta = get_args(tp)
        found = next((getattr(m, "discriminator", None) for m in meta if getattr(m, "discriminator", None)), None)
        return _compile(inner, strip, found or discriminator)
    if origin in _UNIONS:
        members = tuple(a for a in get_args(tp) if a is not type(None))
        if discriminator is not None:
            by_tag = _member_for(members, str(discriminator))
            key = str(discriminator)
            return _none_or(lambda value: construct(by_tag[value[key]], value))
        if len(members) == 1:
            return _none_or(_compile(members[0], strip))
        choices = [(member, _compile(member, strip)) for member in members]

        def pick(value: Any) -> Any:
            for member, build in choices:  # the first member the value's type fits
                if _fits(member, value):
                    return build(value)
            return value

        return _none_or(pick)
    if origin is list or origin is tuple:
        args = get_args(tp)
        item = _compile(args[0] if args else Any, strip)
        if origin is list:
            return _none_or(lambda value: [item(v) for v in value])
        return _none_or(lambda value: tuple(item(v) for v in value))
    if origin is dict:
        key_type, value_type = get_args(tp) or (Any, Any)
        build_key, build_value = _compile(key_type, strip), _compile(value_type, strip)
        return _none_or(lambda value: {build_key(k): build_value(v) for k, v in value.items()})
    if origin is Literal:
        literals = get_args(tp)
        return _none_or(lambda value: next((a for a in literals if a == value), value))
    if isinstance(tp, type):
        if issubclass(tp, BaseModel):
            model = tp
            return _none_or(lambda value: construct(model, value))
        if issubclass(tp, enum.Enum):
            return _none_or(tp)
        if tp is str and strip:
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
        if issubclass(origin, BaseModel):
            return isinstance(value, dict)
        if origin is float:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return isinstance(value, origin)
    return True
