"""Plain frozen records with slots, declared by their annotations: what a run holds the
rule packs in (:mod:`~vllm_upgrade_check.model.pack`, :mod:`~vllm_upgrade_check.model.evidence`).

A :class:`Record` subclass declares its fields as annotations, with a default value or
:func:`field` (``default_factory``) for the optional ones, as a dataclass does. Making the
class costs what a plain ``class`` statement costs: no method is generated (``dataclass``
compiles ``__init__``, ``__eq__`` and ``__repr__`` per class, pydantic builds field infos
and validators), which matters for the fixed start-up of every run. Records are
keyword-only, frozen (assignment raises ``AttributeError``), compared and hashed by type
and field values (a record holding a list is unhashable, as a frozen pydantic model is),
and copied or pickled by value.

Validation is not done here: input from users is validated by the pydantic models of
:mod:`~vllm_upgrade_check.model.pack_schema` and converted to these records;
:mod:`~vllm_upgrade_check.model.construct` builds records from data already known valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:  # typing has it from Python 3.11; at run time it only marks the class
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_options: Any) -> Callable[[type], type]:
        return lambda cls: cls

T = TypeVar("T")
R = TypeVar("R", bound="Record")

_set = object.__setattr__


class _Factory:
    """A default made anew for each record (``field(default_factory=list)``)."""

    __slots__ = ("make",)
    make: Callable[[], Any]

    def __init__(self, make: Callable[[], Any]) -> None:
        _set(self, "make", make)


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is ``default_factory()``, called for each record made."""
    return _Factory(default_factory)  # type: ignore[return-value]


class _RecordType(type):
    """Turns a class body's annotations into slots, :attr:`Record._fields` (inherited fields
    first, in declaration order) and :attr:`Record._defaults`."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> _RecordType:
        inherited: tuple[str, ...] = ()
        defaults: dict[str, Any] = {}
        for base in reversed(bases):
            for key in getattr(base, "_fields", ()):
                if key not in inherited:
                    inherited += (key,)
            defaults.update(getattr(base, "_defaults", {}))
        new: list[str] = []
        for key in namespace.get("__annotations__", {}):
            if key.startswith("_"):
                continue
            if key in namespace:
                defaults[key] = namespace.pop(key)
            else:  # declared again without a default: required here
                defaults.pop(key, None)
            if key not in inherited:
                new.append(key)
        namespace["__slots__"] = tuple(new)
        cls = super().__new__(mcls, name, bases, namespace)
        cls._fields = inherited + tuple(new)  # type: ignore[attr-defined]
        cls._defaults = defaults  # type: ignore[attr-defined]
        return cls


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Record(metaclass=_RecordType):
    """Base of the plain records: keyword-only, frozen, compared by value."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The field names, inherited ones first."""
    _defaults: ClassVar[dict[str, Any]] = {}
    """Field name -> default value (or :class:`_Factory`) of the optional fields."""

    def __init__(self, **values: Any) -> None:
        cls = type(self)
        for name in cls._fields:
            if name in values:
                value = values.pop(name)
            elif name in cls._defaults:
                value = cls._defaults[name]
                if isinstance(value, _Factory):
                    value = value.make()
            else:
                raise TypeError(f"{cls.__name__}() needs the field {name!r}")
            _set(self, name, value)
        if values:
            raise TypeError(f"{cls.__name__}() has no field(s) {', '.join(sorted(values))}")

    @classmethod
    def _from_values(cls: type[R], values: tuple[Any, ...]) -> R:
        """The record holding ``values``, one per :attr:`_fields` in order (no defaults)."""
        record = cls.__new__(cls)
        for name, value in zip(cls._fields, values, strict=True):
            _set(record, name, value)
        return record

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def replace(self: R, **changes: Any) -> R:
        """A copy with ``changes`` (field name -> new value).

        Raises:
            TypeError: a name that is not a field.
        """
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(unknown))}")
        return self._from_values(tuple(changes.get(n, getattr(self, n)) for n in self._fields))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self._values()))


def _rebuild(cls: type[R], values: tuple[Any, ...]) -> R:
    return cls._from_values(values)
