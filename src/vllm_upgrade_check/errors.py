"""Errors raised for bad input to the tool itself (not for problems in scanned files).

Every error carries the file and, where known, the line it is about, so that the command
line prints one line such as ``rules/0.27.0.yaml:12: rules[0].match.kind: ...`` and exits
with status 2. Problems in *scanned* files are never raised: scanners return
:class:`~vllm_upgrade_check.model.facts.Skipped` records instead.
"""

from __future__ import annotations

# Every character ``str.splitlines`` breaks at (LF, CR, VT, FF, FS, GS, RS, NEL, LS, PS).
_LINE_BREAKS = {
    ord(c): f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
    for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
}


def one_line(text: str) -> str:
    """``text`` with every line break written as its escape (``\\x0a``, ``\\u2028``...), so
    that a value quoted from bad input cannot split an error into several lines."""
    return text.translate(_LINE_BREAKS)


class VucError(Exception):
    """Base error of vllm-upgrade-check; the CLI turns it into one line and exit code 2.

    Args:
        message: what is wrong, in one sentence.
        path: the file the error is about, if any.
        line: 1-based line in ``path``, if known.
        column: 1-based column on ``line``, if known (a syntax error's).
    """

    def __init__(
        self, message: str, path: str | None = None, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = ""
        if self.path:
            at = f":{self.line}" + (f":{self.column}" if self.column else "") if self.line else ""
            where = f"{self.path}{at}: "
        return one_line(f"{where}{self.message}")


class UsageError(VucError):
    """A bad option or argument: an unknown or malformed version, a missing path, ..."""


class RulePackError(VucError):
    """A rule pack that cannot be loaded: YAML syntax, schema violation, duplicate id."""
