"""A cheaper :func:`dataclasses.replace` for the frozen dataclasses copied once per word or
per fact (:class:`~.facts.Fact`, the argv words of :mod:`..parsing.words`).

``dataclasses.replace`` looks up the class's fields and runs the generated ``__init__``
again on every call; a scan of a 1 MB compose file copies tens of thousands of facts and
words (an owner, a group, a list's links), and those copies were a large share of its
time. :func:`evolve` gives the same object: every field copied, the changed ones set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_UNSET = object()

_COPIERS: dict[type, Callable[..., Any] | None] = {}
"""Class -> its copier (``copier(obj, **changes)``), or ``None`` where ``dataclasses.replace``
must be used (a ``__post_init__``, a field ``__init__`` does not set)."""


def _copier(cls: type) -> Callable[..., Any] | None:
    """A function made for ``cls`` that copies one instance field by field, each changed
    field given as a keyword (an unknown keyword is a ``TypeError``, as for ``replace``)."""
    if cls in _COPIERS:
        return _COPIERS[cls]
    fields = dataclasses.fields(cls)
    copier: Callable[..., Any] | None = None
    simple = getattr(cls, "__post_init__", None) is None and all(f.init for f in fields)
    if simple and fields and all(f.name.isidentifier() for f in fields):
        names = [f.name for f in fields]
        if "__slots__" in cls.__dict__ and "__dict__" not in cls.__dict__:
            body = "".join(f"    setter(new, {n!r}, obj.{n} if {n} is unset else {n})\n" for n in names)
        else:
            body = "    new.__dict__.update(obj.__dict__)\n" + "".join(
                f"    if {n} is not unset:\n        new.__dict__[{n!r}] = {n}\n" for n in names
            )
        source = (
            f"def copy(obj, *, {', '.join(f'{n}=unset' for n in names)}):\n"
            f"    new = make(cls)\n{body}    return new\n"
        )
        scope: dict[str, Any] = {"unset": _UNSET, "make": object.__new__, "cls": cls, "setter": object.__setattr__}
        exec(source, scope)  # noqa: S102 - our own text, made of the class's field names
        copier = scope["copy"]
    _COPIERS[cls] = copier
    return copier


def evolve(obj: T, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)`` for a dataclass whose ``__init__`` only sets
    its fields (frozen or not, with or without slots): the copy is made without running
    ``__init__`` again. Other dataclasses go through ``dataclasses.replace``.

    Raises:
        TypeError: ``obj`` is no dataclass instance, or a name in ``changes`` is no field.
    """
    copier = _COPIERS.get(type(obj), _UNSET)
    if copier is _UNSET:
        copier = _copier(type(obj)) if dataclasses.is_dataclass(type(obj)) else None
    if copier is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    return copier(obj, **changes)  # type: ignore[operator]
