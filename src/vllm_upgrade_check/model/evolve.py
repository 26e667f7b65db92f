"""A cheaper :func:`dataclasses.replace` for the frozen dataclasses copied once per word or
per fact (:class:`~.facts.Fact`, the argv words of :mod:`..parsing.words`).

``dataclasses.replace`` looks up the class's fields and runs the generated ``__init__``
again on every call; a scan of a 1 MB compose file copies tens of thousands of facts and
words (an owner, a group, a list's links), and those copies were a large share of its
time. :func:`evolve` gives the same object: every field copied, the changed ones set.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from typing import Any, TypeVar

T = TypeVar("T")

_set = object.__setattr__

_PLANS: dict[type, tuple[frozenset[str], tuple[str, ...], Any] | None] = {}
"""Class -> (field names, field names in order, getter of them all), or ``None`` where
``dataclasses.replace`` must be used (a ``__post_init__``, a field not set by ``__init__``)."""


def _plan(cls: type) -> tuple[frozenset[str], tuple[str, ...], Any] | None:
    if cls not in _PLANS:
        fields = dataclasses.fields(cls)
        simple = (
            getattr(cls, "__post_init__", None) is None
            and all(f.init for f in fields)
            and all(not isinstance(f.type, dataclasses.InitVar) for f in fields)
        )
        names = tuple(f.name for f in fields)
        _PLANS[cls] = (frozenset(names), names, attrgetter(*names)) if simple and names else None
    return _PLANS[cls]


def evolve(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)`` for a dataclass whose ``__init__`` only sets
    its fields (frozen or not, with or without slots): the copy is made without running
    ``__init__`` again. Other dataclasses go through ``dataclasses.replace``.

    Raises:
        TypeError: ``obj`` is no dataclass instance, or a name in ``changes`` is no field.
    """
    cls = type(obj)
    plan = _plan(cls) if dataclasses.is_dataclass(cls) else None
    if plan is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    known, names, values = plan
    if not changes.keys() <= known:
        raise TypeError(f"{cls.__name__} has no field {sorted(changes.keys() - known)[0]!r}")
    new = object.__new__(cls)
    if hasattr(obj, "__dict__"):
        new.__dict__.update(obj.__dict__, **changes)
        return new
    got = values(obj)
    for name, value in zip(names, got if len(names) > 1 else (got,), strict=True):
        _set(new, name, changes.get(name, value) if changes else value)
    return new
