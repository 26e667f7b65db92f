"""Indented JSON text, the same characters as ``json.dumps(value, indent=2)`` at a fraction
of its cost: :mod:`json` writes indented text with its pure-Python encoder (its C encoder
only writes compact text), a chain of generators per nested value; a report of many
findings spent most of its rendering there. Here each value is one call that appends its
parts to a list, strings escaped by the C escaper :mod:`json` itself uses."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any


def dumps_indented(value: Any, indent: int = 2) -> str:
    """``json.dumps(value, indent=indent)``, character for character (``ensure_ascii``,
    ``NaN``/``Infinity`` for the non-finite floats, keys of ``str``, ``int``, ``float``,
    ``bool`` or ``None`` written as :mod:`json` writes them, dict order kept).

    Args:
        value: dicts, lists, tuples, strings (their subclasses, such as ``str`` enums, as
            their text), ints (``int`` enums as their number), floats, booleans, ``None``.

    Raises:
        TypeError: a value or key :mod:`json` cannot write either (with :mod:`json`'s message).
        ValueError: a container that holds itself (as :mod:`json` says: "Circular reference detected").
    """
    parts: list[str] = []
    _write(value, parts, "\n", " " * indent, set())
    return "".join(parts)


def _float(number: float) -> str:
    if number != number:
        return "NaN"
    if number == float("inf"):
        return "Infinity"
    if number == -float("inf"):
        return "-Infinity"
    return float.__repr__(number)


def _key(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _write(value: Any, parts: list[str], newline: str, step: str, active: set[int]) -> None:
    append = parts.append
    if isinstance(value, str):
        append(encode_basestring_ascii(value))
    elif value is None:
        append("null")
    elif value is True:
        append("true")
    elif value is False:
        append("false")
    elif isinstance(value, int):
        append(int.__repr__(value))
    elif isinstance(value, float):
        append(_float(value))
    elif isinstance(value, (list, tuple, dict)):
        if not value:
            append("{}" if isinstance(value, dict) else "[]")
            return
        marker = id(value)
        if marker in active:
            raise ValueError("Circular reference detected")
        active.add(marker)
        inner = newline + step
        if isinstance(value, dict):
            append("{")
            separator = inner
            for key, item in value.items():
                append(separator)
                append(encode_basestring_ascii(_key(key)))
                append(": ")
                _write(item, parts, inner, step, active)
                separator = "," + inner
            append(newline + "}")
        else:
            append("[")
            separator = inner
            for item in value:
                append(separator)
                _write(item, parts, inner, step, active)
                separator = "," + inner
            append(newline + "]")
        active.discard(marker)
    else:
        json.dumps(value)  # raises json's own TypeError for what it cannot write
        raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")
