"""Line and column of a character offset in a text, in logarithmic time, and back.

Counting newlines from the start of the text for every fact makes a file with many facts on
few lines quadratic (a dashboard of a quarter million queries on one line took minutes);
:func:`line_index` keeps the offsets of line starts of the last few texts instead.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache

from vllm_upgrade_check.model.facts import Span


class LineIndex:
    """The offsets at which the lines of one text start.

    Args:
        text: the text (lines end at ``\\n``).
    """

    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        index = find("\n")
        while index >= 0:
            starts.append(index + 1)
            index = find("\n", index + 1)
        self.starts = starts

    def offset(self, line: int, column: int) -> int:
        """Character offset (0-based) of 1-based ``line`` and ``column``.

        Raises:
            ValueError: ``line`` is not a line of the text.
        """
        if not 1 <= line <= len(self.starts):
            raise ValueError(f"line {line} is past the end of the file")
        return self.starts[line - 1] + column - 1

    def line_col(self, offset: int) -> tuple[int, int]:
        """``(line, column)``, both 1-based, of character ``offset`` (0-based)."""
        row = bisect_right(self.starts, offset) - 1
        return row + 1, offset - self.starts[row] + 1


@lru_cache(maxsize=8)
def line_index(text: str) -> LineIndex:
    """The :class:`LineIndex` of ``text``, built once per text."""
    return LineIndex(text)


INDENT = re.compile(r"[ \t]*")
"""Blanks at the start of a line."""

LINE_TAIL = re.compile(r"[ \t]*(#.*)?")
"""What may follow an element on its last line for it to stand alone there: a comment."""


def own_lines(
    lines: Sequence[str],
    start: tuple[int, int],
    end: tuple[int, int],
    head: re.Pattern[str],
    tail: re.Pattern[str] = LINE_TAIL,
) -> Span | None:
    """The whole lines from ``start`` to ``end`` (1-based points in ``lines``) when the text
    before ``start`` on its line matches ``head`` and the text after ``end`` on its line
    matches ``tail``: from the start of the first line to the start of the line after the
    last (the end of the text when there is none); ``None`` otherwise."""
    line, column = start
    end_line, end_column = end
    if end_column == 1 and end_line > line:  # a block ends where the next line starts
        end_line, end_column = end_line - 1, len(lines[end_line - 2]) + 1
    if not 1 <= line <= len(lines) or not 1 <= end_line <= len(lines):
        return None
    if head.fullmatch(lines[line - 1][: column - 1]) is None:
        return None
    if tail.fullmatch(lines[end_line - 1][end_column - 1 :]) is None:
        return None
    if end_line < len(lines):
        return Span(line, 1, end_line + 1, 1)
    return Span(line, 1, end_line, len(lines[end_line - 1]) + 1)


_MULTIBYTE = re.compile(rb"[\xc0-\xff][\x80-\xbf]*")


class ByteColumns:
    """Characters before a UTF-8 byte column of one line (what tree-sitter and :mod:`ast`
    give), in logarithmic time: decoding the prefix for every token made a long line with one
    non-ASCII character quadratic.

    Args:
        line: the line as UTF-8 bytes (or text, encoded once here).
    """

    __slots__ = ("_starts", "_ends", "_extra")

    def __init__(self, line: bytes | str) -> None:
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._extra: list[int] = []  # bytes beyond one per character, up to and including each
        if data.isascii():
            return
        total = 0
        for match in _MULTIBYTE.finditer(data):
            start, end = match.span()
            total += end - start - 1
            self._starts.append(start)
            self._ends.append(end)
            self._extra.append(total)

    def chars(self, byte_col: int) -> int:
        """The number of characters before ``byte_col`` (a character cut by it counts once,
        as :meth:`bytes.decode` with ``"replace"`` counts it)."""
        i = bisect_right(self._starts, byte_col - 1)  # multibyte characters starting before it
        if i == 0:
            return byte_col
        if self._ends[i - 1] <= byte_col:
            return byte_col - self._extra[i - 1]
        before = self._extra[i - 2] if i > 1 else 0
        return byte_col - before - (byte_col - self._starts[i - 1] - 1)
