"""Where each character of a Python string literal's value is written (:func:`value_places`):
through its prefix, quotes, escapes (``\\n``, ``\\u00e9``, a ``\\`` line continuation), the lines of a
triple-quoted string and the pieces of an implicit concatenation (``"vllm serve m " "--flag 4"``),
read with the stdlib :mod:`tokenize` (the tokenizer Python itself uses), never evaluated.
"""

from __future__ import annotations

import io
import re
import tokenize
import unicodedata

Place = tuple[int, int]
"""A 1-based line and 1-based character column of the file."""

_ESCAPE = re.compile(r"\\(\r\n|\n|\r|x[0-9a-fA-F]{2}|[0-7]{1,3}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|.)", re.S)
_SIMPLE = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_PREFIX = re.compile(r"[A-Za-z]*")


def value_places(written: str, line: int, column: int, value: str) -> tuple[list[Place], Place, bool] | None:
    """``(places, end, plain)`` for the ``str`` literal ``written`` (its source text, as
    :mod:`ast` spans it: one literal or an implicit concatenation of several, over one or more
    lines) that starts at ``line``/``column`` (1-based, characters): ``places[i]`` is where
    ``value[i]`` is written (an escape's characters at its backslash), ``end`` where the value
    ends (its closing quote), ``plain``: each character is written as itself, one after the
    other on one line (one literal, no escape; an ``r``/``u`` prefix allowed). ``None`` for a
    bytes or f-string, text the tokenizer refuses, or one that does not give ``value``."""
    places: list[Place] = []
    text: list[str] = []
    end: Place = (line, column)
    pieces = 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("(" + written + ")").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    plain = True
    for token in tokens:
        if token.type != tokenize.STRING:
            if token.type in (tokenize.OP, tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE, tokenize.ENDMARKER):
                continue
            return None  # an f-string's parts, a name: not one str literal
        pieces += 1
        prefix = _PREFIX.match(token.string).group()  # type: ignore[union-attr]
        if set(prefix.lower()) - {"r", "u"}:
            return None
        body_at = len(prefix) + (3 if token.string[len(prefix) : len(prefix) + 3] in ('"""', "'''") else 1)
        quote = body_at - len(prefix)
        row, col = token.start[0], token.start[1] + body_at
        body = token.string[body_at : len(token.string) - quote]
        raw = "r" in prefix.lower()
        i = 0
        while i < len(body):
            here = _file_place(row, col, line, column)
            match = None if raw or body[i] != "\\" else _ESCAPE.match(body, i)
            if match is not None:
                seq, decoded = match.group(), _decoded(match.group())
            elif body.startswith("\r\n", i):
                seq, decoded = "\r\n", "\n"  # a line break of the file inside a triple-quoted literal
            elif body[i] == "\r":
                return None  # a lone carriage return: the tokenizer's lines and the file's differ
            else:
                seq = decoded = body[i]
            if decoded is None:
                return None
            plain = plain and seq == decoded and "\n" not in seq and "\r" not in seq
            places.extend([here] * len(decoded))
            text.append(decoded)
            for char in seq:
                row, col = (row + 1, 0) if char == "\n" else (row, col + 1)
            i += len(seq)
        end = _file_place(row, col, line, column)
    if pieces == 0 or "".join(text) != value:
        return None
    return places, end, plain and pieces == 1


def _file_place(row: int, col: int, line: int, column: int) -> Place:
    """The file's place of tokenizer row ``row``, 0-based column ``col`` of ``"(" + written``."""
    return (line, column + col - 1) if row == 1 else (line + row - 1, col + 1)


def _decoded(seq: str) -> str | None:
    """The characters a backslash escape ``seq`` stands for in a ``str`` literal."""
    kind = seq[1]
    if kind in "\r\n":
        return ""  # a line continuation inside the literal
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in "01234567":
        return chr(int(seq[1:], 8))
    if kind in "xuU":
        try:
            return chr(int(seq[2:], 16))
        except (ValueError, OverflowError):
            return None
    if kind == "N":
        try:
            return unicodedata.lookup(seq[3:-1])
        except KeyError:
            return None
    return seq  # an unknown escape is kept as written


_FSTRING = re.compile(r"(?P<prefix>[A-Za-z]*)(?P<quote>'''|\"\"\"|'|\")")


def fstring_places(written: str, line: int, column: int, texts: list[str]) -> list[tuple[list[Place], Place]] | None:
    """Where the literal parts of one f-string are written: ``written`` is its source text
    (one literal, no implicit concatenation) starting at ``line``/``column``; ``texts`` the
    values of its literal parts (:class:`ast.Constant` of its ``JoinedStr``), in order. One
    ``(places, end)`` per part, as :func:`value_places` gives for a string; ``{{`` and ``}}``
    are one brace, each ``{expression}`` (with its ``!r``/``:spec``) is skipped. ``None``
    when the text is no such f-string or does not give ``texts``."""
    head = _FSTRING.match(written)
    if head is None or "f" not in head.group("prefix").lower() or set(head.group("prefix").lower()) - {"f", "r"}:
        return None
    quote = head.group("quote")
    if not written.endswith(quote) or len(written) < head.end() + len(quote):
        return None
    body, raw = written[head.end() : len(written) - len(quote)], "r" in head.group("prefix").lower()
    row, col = line, column + head.end()
    runs: list[tuple[list[Place], list[str], Place]] = []
    places: list[Place] = []
    chars: list[str] = []
    i = 0
    while i < len(body):
        here = (row, col)
        if body.startswith(("{{", "}}"), i):
            seq, decoded = body[i : i + 2], body[i]
        elif body[i] == "{":
            runs.append((places, chars, here))
            places, chars = [], []
            seq, decoded = body[i : _expression_end(body, i)], ""
        elif body[i] == "\\" and not raw and (match := _ESCAPE.match(body, i)) is not None:
            seq, decoded = match.group(), _decoded(match.group())  # type: ignore[assignment]
        else:
            seq = decoded = body[i]
        if decoded is None or not seq:
            return None
        places.extend([here] * len(decoded))
        chars.append(decoded)
        for char in seq:
            row, col = (row + 1, 1) if char == "\n" else (row, col + 1)
        i += len(seq)
    runs.append((places, chars, (row, col)))
    found = [(p, end) for p, c, end in runs if c and "".join(c)]
    if ["".join(c) for _p, c, _e in runs if "".join(c)] != texts:
        return None
    return found


def _expression_end(body: str, start: int) -> int:
    """The offset after the ``}`` that closes the replacement field opening at ``start``
    (brackets and the strings inside it skipped); ``start`` when there is none."""
    depth, i, inner_quote = 0, start, ""
    while i < len(body):
        char = body[i]
        if inner_quote:
            if char == inner_quote:
                inner_quote = ""
        elif char in "'\"":
            inner_quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return start
