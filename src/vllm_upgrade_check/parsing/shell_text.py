"""The text around a shell parse (:mod:`.shell`): where a token of the parsed text is in the
file (locators, character columns of byte columns), the unescaping of quoted and bare words,
and the text given to tree-sitter-bash (characters it cannot read replaced, a final line
continuation made a blank). Positions are never changed by any of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import tree_sitter

from vllm_upgrade_check.parsing.textpos import ByteColumns

# -- positions ------------------------------------------------------------------------

Locator = Callable[[int, int], tuple[int, int]]
"""Maps a 0-based (row, byte column) in the parsed text to a 1-based (line, column) in the file."""


def char_columns(lines: list[bytes]) -> Callable[[int, int], int]:
    """``chars(row, byte column)``: characters before the byte column on that row, from a
    :class:`~.textpos.ByteColumns` made once per row: a megabyte-long line, ASCII or not,
    costs no more per token than a short one."""
    rows: dict[int, ByteColumns] = {}

    def chars(row: int, col: int) -> int:
        if row >= len(lines):
            return 0
        columns = rows.get(row)
        if columns is None:
            columns = rows[row] = ByteColumns(lines[row])
        return columns.chars(col)

    return chars


def identity_locator(text: bytes) -> Locator:
    """The locator of shell text that is the whole file: row ``r`` is line ``r + 1``, and a
    byte column becomes a 1-based character column."""
    chars = char_columns(text.split(b"\n"))

    def locate(row: int, col: int) -> tuple[int, int]:
        return row + 1, chars(row, col) + 1

    return locate


def offset_locator(text: str, line: int, column: int, continuation_column: int = 1) -> Locator:
    """A locator for shell text embedded in a file at ``line``/``column`` (1-based).

    Rows after the first start at ``continuation_column`` (e.g. the indentation of a YAML
    block scalar).
    """
    chars = char_columns(text.encode("utf-8").split(b"\n"))

    def locate(row: int, col: int) -> tuple[int, int]:
        return line + row, (column if row == 0 else continuation_column) + chars(row, col)

    return locate


BLANKS = re.compile(rb"[ \t\r\x0b\x0c]*")
"""What :meth:`bytes.strip` removes within one line."""


def blanks_end(line: bytes, start: int) -> int:
    """Where the blanks of ``line`` from ``start`` on end."""
    match = BLANKS.match(line, start)
    return match.end() if match else start


# -- words ----------------------------------------------------------------------------

def unescape_double(text: str) -> str:
    """The value of the inside of a double-quoted bash string: ``\\`` before ``$ ` " \\``
    drops, a backslash-newline joins the lines, any other backslash stays."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "\n":
                i += 2
                continue
            if nxt in '$`"\\':
                out.append(nxt)
                i += 2
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_word(text: str) -> str:
    """The value of a bare bash word: a backslash quotes the next character, a
    backslash-newline joins the lines."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


# -- the text given to the parser -----------------------------------------------------

_ASTRAL = re.compile("[\U00010000-\U0010FFFF\ud800-\udfff]")


def parser_safe(text: str) -> str:
    """``text`` with every character outside the Basic Multilingual Plane (and any lone
    surrogate) replaced by U+FFFD.

    tree-sitter-bash 0.25's scanner reads out of bounds on some astral code points after a
    ``{`` (``"{\U000DBC5D"`` crashes the process, found by fuzzing), so they never reach it.
    Positions are unaffected: each replaced character is still one character, and columns
    are counted in characters of the text that was parsed.
    """
    return text if text.isascii() else _ASTRAL.sub("\ufffd", text)


_FINAL_CONTINUATION = re.compile(r"(?<!\\)((?:\\\\)*)\\((?:\n[ \t\r\n]*)?)\Z")


def without_final_continuation(text: str) -> str:
    """``text`` with a line continuation that ends the text (``--port 8000 \\`` on the last
    line, which bash reads as the end of the command: ``bash -n`` passes) replaced by a
    blank, so that tree-sitter does not see a command cut short. Positions are unchanged."""
    if "\\" not in text:
        return text  # no continuation at all
    return _FINAL_CONTINUATION.sub(lambda m: m.group(1) + " " + m.group(2), text)


# -- words tree-sitter-bash splits at a continuation ----------------------------------------

_GLUE = re.compile(rb"(?:\\\r?\n)+")
"""What stands between two nodes tree-sitter-bash reads as two words where bash reads one:
backslash-newlines alone (a line continuation inside a word)."""


def glued(
    src: bytes, words: Sequence[tree_sitter.Node], gaps: Sequence[bool]
) -> tuple[list[list[tree_sitter.Node]], list[bool]]:
    """``words`` (consecutive word nodes of ``src``) grouped into the words bash reads: nodes
    with only backslash-newlines between them (``--flag=\\`` then ``value`` at the start of
    the next line; bash drops each backslash-newline before it splits words) are one word,
    which tree-sitter-bash splits at the continuation. ``gaps`` (one flag per node) is
    returned as one flag per group, the flag of its first node."""
    groups: list[list[tree_sitter.Node]] = []
    kept: list[bool] = []
    for i, node in enumerate(words):
        if groups and _GLUE.fullmatch(src[words[i - 1].end_byte : node.start_byte]):
            groups[-1].append(node)
            continue
        groups.append([node])
        kept.append(gaps[i])
    return groups, kept
