"""Argv words with the places they are written, and how to cut some of them out.

Every scanner that reads a command line (shell text, a YAML or JSON list, a Python list)
turns it into :class:`Token` words. Besides its text, a word records where it is written
(:attr:`Token.span`) and, within the list that holds it, where its neighbours end and
start (:attr:`Token.prev_end`, :attr:`Token.next_start`). That is all a fix needs to remove
words without knowing the syntax they are written in: the gap between two words is the
separator of that syntax (blanks and ``\\`` continuations in shell, a comma in JSON and
flow lists), and a YAML block item or a Python keyword alone on its lines is an element of
whole lines (:attr:`Token.element`) that carries its own separator and trailing comment.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace

from vllm_upgrade_check.model.facts import Location, Span

Point = tuple[int, int]
"""``(line, column)``, both 1-based; columns count characters."""


@dataclass(frozen=True)
class Token:
    """One argv word.

    Attributes:
        text: the word after quote removal and expansion.
        line: 1-based line where it is written (for a word from an array or variable, the
            place the array/variable element is written).
        column: 1-based column.
        resolved: ``False`` when it contains an expansion that could not be resolved.
        written: the text as written in the file.
        span: where the word is written in its list, quotes included; ``None`` when not
            known exactly.
        element: the whole lines of a list element that stands on lines of its own (a YAML
            block item with its dash and trailing comment, a Python keyword with its comma
            and comment): a removal takes out those lines and leaves the neighbours alone.
        item: the list element the word stands for when that is more than the word (a JSON
            6902 operation in a flow or JSON list whose ``value`` the word is): a removal
            takes the whole element with one separator, as it would take a word; ``None``:
            the word is its own element (or :attr:`element` says which lines are).
        prev_end: where the element before it in the same list ends (``None``: it is the
            first, or its neighbour is not written as a word of this list).
        next_start: where the element after it starts (``None``: it is the last).
        line_start: the start of its line, when only blanks stand before it there (a flow
            list written one element group per line).
        whole: where its list is written, where a list left with no element must be
            written as ``empty`` (a YAML block list: from just after its key's colon to the
            end of its last item's lines; a plain scalar command: its words), else ``None``.
        empty: what ``whole`` is written as when every element is cut (`` []`` and what
            ``left`` holds: the key keeps its line and comment).
        left: what remains of ``whole`` once every element is cut (the rest of the key's
            line, comment lines between items), which tells the fixer that the cuts of one
            list took all of it.
        line_end: the start of the next line, when after it only a comma, blanks and a
            comment stand on its line.
        path: the file it is written in, when that is another file than the one read (a
            value from a systemd ``EnvironmentFile=``); ``None``: the file read. Such a word
            has no ``span`` (a fix of the file read cannot edit it).
        defined: for a word that is the one word a variable holds (``"$IMAGE"`` after
            ``IMAGE=vllm/vllm-openai:v0.16.0``), where that word is written as its text in
            the file read, so that a part of it (an image tag's version) can be edited
            there; ``None`` otherwise.
    """

    text: str
    line: int
    column: int
    resolved: bool = True
    written: str = ""
    span: Span | None = None
    element: Span | None = None
    item: Span | None = None
    prev_end: Point | None = None
    next_start: Point | None = None
    line_start: Point | None = None
    line_end: Point | None = None
    whole: Span | None = None
    empty: str = ""
    left: str = ""
    path: str | None = None
    defined: Span | None = None

    @property
    def start(self) -> Point:
        """``(line, column)`` of the token."""
        return self.line, self.column

    @property
    def extent(self) -> Span | None:
        """The element a removal takes out: :attr:`element`, else :attr:`item`, else :attr:`span`."""
        return self.element or self.item or self.span

    def moved(self, point: Callable[[Point], Point]) -> Token:
        """This token with every position mapped through ``point`` (line, column and spans)."""
        line, column = point((self.line, self.column))

        def span(s: Span | None) -> Span | None:
            return None if s is None else Span.between(point(s.start), point(s.end))

        return replace(
            self,
            line=line,
            column=column,
            span=span(self.span),
            element=span(self.element),
            item=span(self.item),
            prev_end=None if self.prev_end is None else point(self.prev_end),
            next_start=None if self.next_start is None else point(self.next_start),
            line_start=None if self.line_start is None else point(self.line_start),
            line_end=None if self.line_end is None else point(self.line_end),
            defined=span(self.defined),
        )

    def unplaced(self) -> Token:
        """This token without spans or neighbours (its text is not where it is used)."""
        return replace(
            self,
            span=None,
            element=None,
            item=None,
            prev_end=None,
            next_start=None,
            line_start=None,
            line_end=None,
            defined=None,
        )


def relinked(token: Token, **links: Point | None) -> Token:
    """``token`` with the neighbour points in ``links`` (``prev_end``, ``next_start``,
    ``line_start``, ``line_end``) set: what ``dataclasses.replace`` gives, a quarter of its
    cost (the frozen ``__init__`` is not run again; every word of every list is linked, so
    the copy was much of the cost of a word).

    Raises:
        TypeError: a name that is not one of those four.
    """
    if not links.keys() <= _LINKS:
        raise TypeError(f"not a neighbour point of a Token: {sorted(links.keys() - _LINKS)}")
    new = object.__new__(Token)
    new.__dict__.update(token.__dict__, **links)
    return new


_LINKS = frozenset({"prev_end", "next_start", "line_start", "line_end"})


def written_word(text: str, span: Span, prev_end: Point | None = None, next_start: Point | None = None) -> Token:
    """``Token(text, span.line, span.column, True, text, span=span, prev_end=...,
    next_start=...)``: a resolved word written as its text, made without the frozen
    ``__init__`` (a megabyte of plain shell words is that many tokens)."""
    new = object.__new__(Token)
    values = new.__dict__
    values.update(_TOKEN_DEFAULTS)
    values["text"] = values["written"] = text
    values["line"], values["column"], values["span"] = span.line, span.column, span
    values["prev_end"], values["next_start"] = prev_end, next_start
    return new


_TOKEN_DEFAULTS = {f.name: f.default for f in fields(Token)}


def token_location(path: str | None, token: Token) -> Location:
    """Where ``token`` is written in ``path`` (or in its own :attr:`Token.path`), as a fact's
    location: its text without the quotes around it (:func:`content_columns`), else from its
    line and column to the end of the word as written."""
    path = token.path or path
    found = content_columns(token)
    if found is not None:
        line, column, end = found
        return Location(path, line, column, line, end)
    return Location(path, token.line, token.column, token.line, token.column + len(token.written or token.text))


def link(tokens: Sequence[Token], extents: Sequence[Span | None] | None = None) -> list[Token]:
    """``tokens``, consecutive elements of one list, each told where its neighbours are.

    Args:
        tokens: the words in list order.
        extents: the element each word is written as, when some words stand for more than
            themselves (``None`` entries and a missing list: each token's own extent).
    """
    spans = list(extents) if extents is not None else [t.extent for t in tokens]
    out = []
    for i, token in enumerate(tokens):
        before = spans[i - 1] if i > 0 else None
        after = spans[i + 1] if i + 1 < len(spans) else None
        if extents is None and token.element is None:
            # A neighbour of whole lines ends where its line does; the separator between it
            # and a word that shares a line with something else is right after its text
            # (``a=1,`` / ``    b=2)``: removing b takes ``,`` and the line break, not the
            # indent before b, which would leave ``)`` alone at the start of the line).
            if i > 0 and tokens[i - 1].element is not None:
                before = tokens[i - 1].span
            if i + 1 < len(tokens) and tokens[i + 1].element is not None:
                after = tokens[i + 1].span
        out.append(
            relinked(
                token,
                prev_end=None if before is None or spans[i] is None else before.end,
                next_start=None if after is None or spans[i] is None else after.start,
            )
        )
    return out


def content_columns(token: Token) -> tuple[int, int, int] | None:
    """``(line, column, end_column)`` of ``token``'s text where it is written, without the
    quotes around it (``"--swap-space"`` -> the columns of ``--swap-space``; the end is just
    past it), or ``None`` when the word is not written as its text on one line (escapes,
    variables, a word over lines, no recorded place)."""
    span = token.span
    if span is None or span.line != span.end_line:
        return None
    written = token.written or token.text
    width = span.end_column - span.column
    if written == token.text and width == len(written):
        return span.line, span.column, span.end_column
    if (
        len(written) == len(token.text) + 2
        and written[0] in "'\""
        and written[-1] == written[0]
        and written[1:-1] == token.text
        and width == len(written)
    ):
        return span.line, span.column + 1, span.end_column - 1
    return None


def unlink_at_comments(tokens: Sequence[Token], lines: Sequence[str]) -> list[Token]:
    """``tokens`` (linked, see :func:`link`) with no link across a gap that holds a comment:
    the separator between two elements then ends a line that a neighbour's comment sits on,
    and cutting it would take the comment too. ``lines``: the text the positions are in;
    any ``#`` in a gap between two elements is a comment (only separators stand there)."""
    out = list(tokens)
    for i in range(1, len(out)):
        before, after = out[i - 1], out[i]
        if before.next_start is None or after.prev_end is None:
            continue
        if "#" in _between(lines, after.prev_end, before.next_start):
            out[i - 1] = replace(before, next_start=None)
            out[i] = replace(after, prev_end=None)
    return out


def _between(lines: Sequence[str], start: Point, end: Point) -> str:
    (l1, c1), (l2, c2) = start, end
    if l1 == l2:
        return lines[l1 - 1][c1 - 1 : c2 - 1] if 0 < l1 <= len(lines) else ""
    chunk = [lines[l1 - 1][c1 - 1 :]] if 0 < l1 <= len(lines) else []
    chunk += [lines[n - 1] for n in range(l1 + 1, l2) if 0 < n <= len(lines)]
    chunk += [lines[l2 - 1][: c2 - 1]] if 0 < l2 <= len(lines) else []
    return "\n".join(chunk)


def contiguous(first: Token, second: Token) -> bool:
    """Whether ``second`` is the element right after ``first`` in the same list."""
    a, b = first.extent, second.extent
    return a is not None and b is not None and first.next_start == b.start and second.prev_end == a.end


def cut(words: Sequence[Token]) -> Span | None:
    """What to delete to remove ``words`` (consecutive elements of one list) with one
    separator, or ``None`` when they are not written as consecutive elements.

    Elements of whole lines (:attr:`Token.element`) go with their lines and nothing else.
    Otherwise the separator before the words goes with them when there is one (so the last
    element of a list leaves no trailing comma); else the one after them; a list of these
    words alone loses just them.
    """
    if not words or any(w.extent is None for w in words):
        return None
    for first, second in zip(words, words[1:], strict=False):
        if not contiguous(first, second):
            return None
    head, tail = words[0], words[-1]
    start, end = head.extent, tail.extent
    assert start is not None and end is not None
    whole = [w.element is not None for w in words]
    if all(whole):
        return Span.between(start.start, end.end)
    if any(whole):
        return None
    if head.line_start is not None and tail.line_end is not None:
        # A group of elements on lines of their own: those lines go, with the comma and
        # comment after them (a neighbour's comment on its own line stays with it).
        return Span.between(head.line_start, tail.line_end)
    if head.prev_end is not None:
        if (
            head.line_start is not None
            and head.prev_end[0] < start.line
            and tail.next_start is not None
            and tail.next_start[0] == end.end_line
        ):
            # The words start their line and a neighbour follows on it: the separator after
            # them goes, so that the rest of the line (its comment) is not joined onto the
            # line before.
            return Span.between(start.start, tail.next_start)
        return Span.between(head.prev_end, end.end)
    if tail.next_start is not None:
        return Span.between(start.start, tail.next_start)
    return Span.between(start.start, end.end)


def sub_span(token: Token, start: int, end: int) -> Span | None:
    """The span of ``token.text[start:end]`` where the token is written, when the word is
    written as its text (or as its text in one pair of quotes); ``None`` otherwise (escapes,
    partial quoting, an expansion, a word split over lines)."""
    span = token.span
    if span is None or span.line != span.end_line:
        return None
    written = token.written or token.text
    if written == token.text:
        shift = 0
    elif len(written) == len(token.text) + 2 and written[0] == written[-1] and written[0] in "\"'":
        if written[1:-1] != token.text:
            return None
        shift = 1
    else:
        return None
    if span.end_column - span.column != len(written):
        return None
    return Span(span.line, span.column + shift + start, span.line, span.column + shift + end)


def inside_quotes(token: Token) -> Span | None:
    """Where the text inside the quotes of a quoted word is written (escapes and all: the
    text there may read differently from the word), when the word is one quoted string on
    one line; ``None`` otherwise."""
    span = token.span
    written = token.written or token.text
    if span is None or span.line != span.end_line or len(written) < 2:
        return None
    if written[0] not in "\"'" or written[-1] != written[0] or span.end_column - span.column != len(written):
        return None
    return Span(span.line, span.column + 1, span.line, span.end_column - 1)


def part(token: Token, start: int, end: int) -> Token:
    """A word for ``token.text[start:end]`` (``docker:IMAGE`` -> ``IMAGE``), placed where it
    is written when :func:`sub_span` can tell, else at the token without spans."""
    span = sub_span(token, start, end)
    text = token.text[start:end]
    if span is None:
        return replace(token.unplaced(), text=text, written=text)
    return Token(text, span.line, span.column, token.resolved, text, span=span)


_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
"""Text that every supported syntax reads as itself when written bare."""

_YAML_PLAIN = re.compile(r"[A-Za-z_./][A-Za-z0-9_@%+=,./-]*")
"""Bare text YAML reads as the same string (no leading digit: ``4`` would be a number)."""


def render(value: str, syntax: str, quote: str) -> str | None:
    """``value`` as text to write where a word of ``syntax`` stands, inside the ``quote``
    already around it (``"``, ``'`` or ``""`` for none), so that it reads back as ``value``;
    ``None`` when that cannot be written there (a quote character the enclosing quotes do
    not allow).

    Args:
        value: the new text.
        syntax: ``shell``, ``yaml``, ``json``, ``python``, ``toml``, ``requirements`` or ``""``;
            ``INNER|OUTER`` for text of one held in a string of another (``shell|yaml'``:
            shell words in a single-quoted YAML scalar; ``yaml`` alone: a plain scalar).
        quote: the quote character around the place written to.
    """
    if "|" in syntax:
        # Text of one syntax held in a quoted scalar of another (shell in a YAML string):
        # quoted for the inner one, then escaped for the string that holds it.
        inner, outer = syntax.split("|", 1)
        rendered = render(value, inner, quote)
        if rendered is None:
            return None
        if outer == "yaml'":
            return rendered.replace("'", "''")
        if outer == 'yaml"':
            return json.dumps(rendered)[1:-1]
        return rendered if outer == "yaml" and ": " not in rendered and " #" not in rendered else None
    if syntax in ("", "requirements"):
        return value if not quote or quote not in value else None
    if syntax == "shell":
        if quote == "'":
            return None if "'" in value else value
        if quote == '"':
            return re.sub(r'(["\\$`])', r"\\\1", value)
        return value if _PLAIN.fullmatch(value) else shlex.quote(value)
    if syntax == "yaml":
        if quote == "'":
            return value.replace("'", "''")
        if quote == '"':
            return json.dumps(value)[1:-1]
        return value if _YAML_PLAIN.fullmatch(value) else json.dumps(value)
    if syntax in ("json", "toml"):
        return json.dumps(value)[1:-1] if quote == '"' else (None if quote else json.dumps(value))
    if syntax == "python":
        if quote:
            body = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
            return None if "\n" in body else body
        return repr(value)
    return None
