"""Line and column of a character offset in a text, in logarithmic time, and back.

Counting newlines from the start of the text for every fact makes a file with many facts on
few lines quadratic (a dashboard of a quarter million queries on one line took minutes);
:func:`line_index` keeps the offsets of line starts of the last few texts instead.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache


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
