"""One wording for what pydantic finds wrong in a user's file (a rule pack, the project
configuration): the data path of the first problem, in the data's own keys, and a short
message; each caller turns the path into its file's line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

_PLAIN = {
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be a table",
    "model_type": "must be a table",
    "bool_type": "must be true or false",
    "int_type": "must be an integer",
    "date_type": "must be a date YYYY-MM-DD",
    "date_parsing": "must be a date YYYY-MM-DD",
    "date_from_datetime_parsing": "must be a date YYYY-MM-DD",
    "date_from_datetime_inexact": "must be a date YYYY-MM-DD",
}
"""Pydantic error types and how a person who wrote the file reads them."""


def format_path(loc: Sequence[Any]) -> str:
    """``("rules", 0, "id")`` as ``rules[0].id``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def first_problem(exc: ValidationError, data: Any) -> tuple[tuple[Any, ...], str]:
    """The data path of ``exc``'s first error and its message.

    Args:
        exc: what pydantic raised validating ``data``.
        data: the mapping that was validated (read to tell the data's keys from the tags
            pydantic adds to a location).

    Returns:
        ``(path, message)``: ``path`` a tuple of keys and list indexes into ``data`` (for a
        missing field, the mapping that lacks it); ``message`` one line, ending in ``(and N
        more)`` when there are more errors.
    """
    errors = exc.errors()
    error = errors[0]
    loc = [p for p in error["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
    # pydantic appends the model/union tag to some locations; keep the data path only.
    loc = [p for p in loc if isinstance(p, int) or p in _key_names(data, loc)]
    shown = 1
    kind = error["type"]
    if kind == "extra_forbidden":
        message = "unknown key"
    elif kind == "missing":
        # Name every field missing from the same mapping, not just "Field required".
        parent = tuple(error["loc"][:-1])
        missing = [e for e in errors if e["type"] == "missing" and tuple(e["loc"][:-1]) == parent]
        shown = len(missing)
        message = "missing field(s): " + ", ".join(str(e["loc"][-1]) for e in missing)
        if loc and loc[-1] == error["loc"][-1]:
            loc = loc[:-1]
    elif kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        message = f"must be one of {expected.replace(' or ', ', ')}".replace("'", "")
    elif kind in ("value_error", "assertion_error"):
        message = str(error.get("ctx", {}).get("error", error["msg"]))
    else:
        message = _PLAIN.get(kind, error["msg"])
    rest = exc.error_count() - shown
    if rest > 0:
        message += f" (and {rest} more)"
    return tuple(loc), message


def _key_names(data: Any, loc: Sequence[Any]) -> set[str]:
    names: set[str] = set()
    node = data
    for part in loc:
        if isinstance(node, dict):
            names.update(str(k) for k in node)
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            names.add(str(part))
            node = None
    return names


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a user's file, as :func:`problems` words it.

    Attributes:
        loc: the data path it is at (keys and list indexes; for a missing field, the mapping
            that lacks it), for the caller to turn into a line.
        where: the data path as the message names it (``rules[0]``).
        message: one line (``unknown key nmae (did you mean name?)``).
    """

    loc: tuple[Any, ...]
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


def problems(exc: ValidationError, data: Any) -> list[Problem]:
    """Every error of ``exc`` as a :class:`Problem`, in the order pydantic found them.

    A key the model does not know is ``unknown key NAME``; when the same mapping lacks a
    required field whose name is close to it (a typo: ``nmae`` for ``name``), the message says
    ``(did you mean name?)`` and the missing field is not reported again. The required fields
    missing from one mapping are one problem, ``missing field(s): a, b``.
    """
    import difflib

    errors = exc.errors()
    cleaned: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for raw in errors:
        parts = [p for p in raw["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        parts = [p for p in parts if isinstance(p, int) or p in _key_names(data, parts)]
        cleaned.append((tuple(parts), dict(raw)))
    missing: dict[tuple[Any, ...], list[str]] = {}
    for at, error in cleaned:
        if error["type"] == "missing":
            name = str(error["loc"][-1])
            parent = at[:-1] if at and at[-1] == error["loc"][-1] else at
            missing.setdefault(parent, []).append(name)
    meant: dict[tuple[Any, ...], str] = {}
    for at, error in cleaned:
        if error["type"] == "extra_forbidden" and at:
            close = difflib.get_close_matches(str(at[-1]), missing.get(at[:-1], []), n=1, cutoff=0.6)
            if close:
                meant[at] = close[0]
                missing[at[:-1]].remove(close[0])
    out: list[Problem] = []
    said: set[tuple[Any, ...]] = set()
    for at, error in cleaned:
        kind = error["type"]
        if kind == "extra_forbidden" and at:
            hint = f" (did you mean {meant[at]}?)" if at in meant else ""
            out.append(Problem(at, format_path(at[:-1]), f"unknown key {at[-1]}{hint}"))
        elif kind == "missing":
            parent = at[:-1] if at and at[-1] == error["loc"][-1] else at
            if parent in said or not missing.get(parent):
                continue
            said.add(parent)
            out.append(Problem(parent, format_path(parent), "missing field(s): " + ", ".join(missing[parent])))
        elif kind in ("literal_error", "enum"):
            expected = error.get("ctx", {}).get("expected", "")
            message = f"must be one of {expected.replace(' or ', ', ')}".replace("'", "")
            out.append(Problem(at, format_path(at), message))
        elif kind in ("value_error", "assertion_error"):
            out.append(Problem(at, format_path(at), str(error.get("ctx", {}).get("error", error["msg"]))))
        else:
            out.append(Problem(at, format_path(at), _PLAIN.get(kind, error["msg"])))
    return out
