"""TOML read in one place (tomllib, or tomli before Python 3.11), with the line of a syntax
error told apart from its message."""

from __future__ import annotations

import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["TomlProblem", "load_toml"]

_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


_AT_END = " (at end of document)"


class TomlProblem(ValueError):
    """TOML that cannot be read.

    Attributes:
        message: what is wrong, without the position (``Expected ']' at the end of a table
            declaration``).
        line: 1-based line of the problem, ``None`` where the parser does not say.
        column: 1-based column on ``line``, ``None`` where the parser does not say.
    """

    def __init__(self, message: str, line: int | None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"TOML syntax error: {self.message}"


def load_toml(text: str) -> dict[str, Any]:
    """The TOML document ``text`` as Python data.

    Raises:
        TomlProblem: a syntax error (with its line), or nesting too deep for the parser.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(getattr(exc, "msg", None) or exc)
        line = getattr(exc, "lineno", None)
        column = getattr(exc, "colno", None)
        found = _AT.search(message)
        if found:
            line = line or int(found.group(1))
            column = column or int(found.group(2))
            message = message[: found.start()]
        elif message.endswith(_AT_END):
            # The document ended inside a value: the place is the end of the text.
            rows = text.split("\n")
            line, column = line or len(rows), column or len(rows[-1]) + 1
            message = message[: -len(_AT_END)]
        raise TomlProblem(message, line, column) from None
    except RecursionError:
        raise TomlProblem("nested too deeply", None) from None
