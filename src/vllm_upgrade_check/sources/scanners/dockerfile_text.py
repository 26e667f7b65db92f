"""Where the words of a Dockerfile instruction are written: exec-form JSON words placed at
their strings (:func:`exec_tokens`), an instruction's text line for line as the file holds
it (:func:`as_written`), one word found in it (:func:`word_at`)."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.shell import Token
from vllm_upgrade_check.parsing.words import link, unlink_at_comments

_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
"""A JSON string as written on one line (its escapes, ``\\u00e9`` among them, undecoded)."""


def exec_tokens(content: str, words: list[str], first_line: int, file_lines: Sequence[str]) -> list[Token]:
    """Place each exec-form word at the line/column where its JSON string is written; words
    found as written get their spans and are linked as elements of one JSON array (not
    across a comment line: cutting a neighbour never takes it). ``file_lines``: the file's
    lines, which the positions are in.

    The JSON strings of ``content`` are read in order and decoded, each matched to the next
    word it decodes to, so a word is found however it is written (``"mé"`` or ``"m\\u00e9"``);
    columns count characters (a non-ASCII word before a flag moves it by one column per
    character). A word not found (a string cut by a line continuation) is placed at column 1
    of the instruction with no span, and no word is linked: a fix leaves them to a person."""
    written = [
        (row, match)
        for row, text in enumerate(content.split("\n"))
        for match in _JSON_STRING.finditer(text)
    ]
    tokens: list[Token] = []
    at = 0
    exact = True
    for word in words:
        found = False
        while at < len(written):
            row, match = written[at]
            at += 1
            if _json_text(match.group()) == word:
                line, column = first_line + row, match.start() + 1
                span = Span(line, column, line, match.end() + 1)
                tokens.append(Token(word, line, column + 1, True, match.group(), span=span))
                found = True
                break
        if not found:
            exact = False
            tokens.append(Token(word, first_line, 1, True, json.dumps(word, ensure_ascii=False)))
    return unlink_at_comments(link(tokens), file_lines) if exact else tokens


def _json_text(literal: str) -> str | None:
    """The value of one JSON string literal as written, ``None`` when it is none."""
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def as_written(lines: list[str], item: dict[str, Any], comments: list[int]) -> str:
    """Instruction ``item``'s text line for line as the file holds it, so that positions in it
    are positions in the file. dockerfile-parse drops the comment lines inside a continued
    instruction from its ``content`` (Docker removes them before reading the instruction):
    each becomes a lone ``\\`` at its indentation, which continues the shell words across it
    as Docker does and holds no exec-form word. ``comments``: the 0-based lines of comment
    instructions, sorted (found by bisection: a file of many comments and many continued
    instructions stays linear)."""
    start, end = item["startline"], item["endline"]
    first = bisect_right(comments, start)  # the first comment line after the start
    if start == end or first == len(comments) or comments[first] > end:
        return str(item["content"])
    inside = set(comments[first : bisect_right(comments, end)])
    out = []
    for number in range(start, min(end, len(lines) - 1) + 1):
        written = lines[number]
        if number in inside:
            body = written.rstrip("\r")
            indent = body[: len(body) - len(body.lstrip())]
            written = indent + "\\" + written[len(body) :]
        out.append(written)
    return "\n".join(out) + "\n"


def word_at(content: str, written: str, start: int, first_line: int, reference: str) -> Token:
    """The token for ``written`` found in instruction ``content`` from offset ``start``,
    placed (with its span) where it is written; its text is ``reference``."""
    index = content.find(written, max(start, 0))
    if index < 0:
        return Token(reference, first_line, 1, True, written)
    row = content.count("\n", 0, index)
    column = index - (content.rfind("\n", 0, index) + 1) + 1
    line = first_line + row
    return Token(reference, line, column, True, written, span=Span(line, column, line, column + len(written)))
