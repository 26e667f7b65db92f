"""One wording for what pydantic finds wrong in a user's file (a rule pack, the project
configuration): the data path of the first problem, in the data's own keys, and a short
message; each caller turns the path into its file's line.
"""

from __future__ import annotations

from collections.abc import Sequence
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
