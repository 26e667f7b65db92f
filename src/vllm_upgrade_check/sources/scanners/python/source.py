"""One Python file as the readers see it: its text, path and tree, the vLLM names its imports
bind, and where each node is written: spans and locations in characters (:mod:`ast` counts
UTF-8 bytes), the text inside a string literal's quotes, a node's source text, the linked
words of a list's elements that a fix cuts, and the placing of words parsed from a string.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from vllm_upgrade_check.model.facts import Location, Span
from vllm_upgrade_check.parsing.textpos import ByteColumns, own_lines
from vllm_upgrade_check.parsing.words import Token, link, unlink_at_comments
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.python.literals import value_places
from vllm_upgrade_check.sources.scanners.python.names import const_text, dotted_name

_ELEMENT_HEAD = re.compile(r"[ \t]*")
_ELEMENT_TAIL = re.compile(r"[ \t]*,?[ \t]*(#.*)?")
"""What may follow a list element alone on its lines: its comma, a comment."""

_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
"""Splits after ``\\r\\n``, ``\\r`` or ``\\n``, keeping the breaks (the lines the tokenizer sees:
not ``\\f`` or the other characters :meth:`str.splitlines` breaks on)."""


COMMAND_MODULES = frozenset({"subprocess", "os", "asyncio", "shlex"})
"""The modules whose calls the reader knows by name (:data:`.names.SUBPROCESS_CALLS`,
``os.environ``, ``shlex.split``), also when imported under another name."""


class PythonSource:
    """A parsed Python file: its text and lines, path, tree and vLLM import aliases (which
    the walk fills in), with where each of its nodes is written."""

    def __init__(self, source: SourceFile, tree: ast.Module) -> None:
        self.src = source.text
        self.lines = source.text.split("\n")
        self._ff_lines: list[str] | None = None
        self._columns: dict[int, ByteColumns] = {}  # by line: a long line is indexed once
        self._ascii = source.text.isascii()
        self.path = source.relpath
        self.tree = tree
        self.aliases: dict[str, str] = {}
        self.command_aliases: dict[str, str] = {}  # names bound to subprocess/os/asyncio/shlex (command_import)

    def char_col(self, lineno: int, byte_col: int) -> int:
        """The 0-based character column of 0-based UTF-8 byte column ``byte_col`` (what
        :mod:`ast` gives) on 1-based line ``lineno``."""
        if self._ascii or not 1 <= lineno <= len(self.lines):
            return byte_col  # one byte per character
        columns = self._columns.get(lineno)
        if columns is None:
            columns = self._columns[lineno] = ByteColumns(self.lines[lineno - 1])
        return columns.chars(byte_col)

    def span(self, node: ast.AST) -> Span | None:
        """Where ``node`` is written (characters, 1-based, end exclusive), if :mod:`ast` says."""
        lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return None
        return Span(
            lineno, self.char_col(lineno, col) + 1, end_lineno, self.char_col(end_lineno, end_col) + 1
        )

    def loc(self, node: ast.AST) -> Location:
        """The location of ``node`` (columns in characters)."""
        span = self.span(node)
        if span is None:
            line = getattr(node, "lineno", None)
            return Location(self.path, line)
        return Location(self.path, span.line, span.column, span.end_line, span.end_column)

    def key_loc(self, node: ast.AST, name: str) -> Location:
        """Location of a keyword (``name=``) or a string key, pointing at the name itself."""
        loc = self.loc(node)
        if isinstance(node, ast.keyword) and loc.column is not None and loc.line is not None:
            return Location(self.path, loc.line, loc.column, loc.line, loc.column + len(name))
        if isinstance(node, ast.Constant) and loc.column is not None and loc.line is not None:
            return Location(self.path, loc.line, loc.column + 1, loc.line, loc.column + 1 + len(name))
        return loc

    def string_span(self, node: ast.AST | None) -> Span | None:
        """Where a plain string literal's value is written inside its quotes (one line, no
        prefix, no escape, no implicit concatenation), else ``None``."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return None
        span = self.span(node)
        if span is None or span.line != span.end_line:
            return None
        written = self.lines[span.line - 1][span.column - 1 : span.end_column - 1]
        if (
            len(written) < 2
            or written[0] not in "'\""
            or written[-1] != written[0]
            or written[1:-1] != node.value
        ):
            return None
        return Span(span.line, span.column + 1, span.line, span.end_column - 1)

    def value_span(self, node: ast.AST | None) -> Span | None:
        """Where a value is written: inside the quotes of a plain string, else the expression."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return self.string_span(node)
        return self.span(node)

    def whole_lines(self, span: Span) -> Span | None:
        """The whole lines ``span`` stands on when nothing else does: only blanks before it,
        and after it at most a comma and a comment; else ``None``."""
        return own_lines(self.lines, span.start, span.end, _ELEMENT_HEAD, _ELEMENT_TAIL)

    def elements(self, extents: list[Span | None]) -> list[Token]:
        """The elements of one comma-separated list (a call's arguments, a list's items, a
        dict's entries), each written at ``extents``, as linked words: an element alone on
        its lines is one of whole lines (its comma and comment go with it); one that starts
        a line, or ends one (before a comma and a comment), records that line's start or the
        next line's start (:attr:`~.words.Token.line_start`, ``line_end``: a group of
        elements on lines of their own goes with its lines, its comment with it, never
        joined onto another line's code); no link goes across a comment (cutting a neighbour
        never takes it)."""
        tokens = []
        for e in extents:
            line_start, line_end = self._line_ends(e)
            element = None if e is None else self.whole_lines(e)
            tokens.append(Token("", 0, 0, span=e, element=element, line_start=line_start, line_end=line_end))
        return unlink_at_comments(link(tokens), self.lines)

    def _line_ends(self, span: Span | None) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        if span is None or not 0 < span.line <= span.end_line < len(self.lines):
            return None, None
        starts = not self.lines[span.line - 1][: span.column - 1].strip()
        ends = _ELEMENT_TAIL.fullmatch(self.lines[span.end_line - 1][span.end_column - 1 :]) is not None
        return ((span.line, 1) if starts else None), ((span.end_line + 1, 1) if ends else None)

    def qualified(self, func: ast.AST) -> str | None:
        """The dotted name ``func`` stands for, its first part read through the file's
        import aliases (``LLM`` -> ``vllm.LLM``); ``None`` when it is no dotted name."""
        dotted = dotted_name(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head) or self.command_aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def command_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """Record the names an import of one of :data:`COMMAND_MODULES` binds, so that
        :meth:`qualified` reads ``sp.run`` (``import subprocess as sp``), ``getoutput``
        (``from subprocess import getoutput``) and ``popen`` (``from os import popen``) as the
        calls they are; the vLLM aliases (``aliases``) win over them."""
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module in COMMAND_MODULES:
                for alias in node.names:
                    if alias.name != "*":
                        self.command_aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            return
        for alias in node.names:
            if alias.asname and alias.name in COMMAND_MODULES:
                self.command_aliases[alias.asname] = alias.name

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``, as :func:`ast.get_source_segment` gives it, without
        splitting the whole file again for every node."""
        lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return ""
        if self._ff_lines is None:
            self._ff_lines = _LINE_BREAK.split(self.src)
        lines = self._ff_lines
        if end_lineno == lineno:
            return lines[lineno - 1].encode()[col:end_col].decode()
        first = lines[lineno - 1].encode()[col:].decode()
        last = lines[end_lineno - 1].encode()[:end_col].decode()
        return "".join([first, *lines[lineno : end_lineno - 1], last])

    def value_text(self, node: ast.AST) -> str:
        """A value as text: a literal's value, else its source text."""
        text = const_text(node)
        return text if text is not None else self.segment(node)

    def module_span(self, node: ast.ImportFrom, module: str) -> Span | None:
        """Where the module of ``from MODULE import ...`` is written, when it is written as one word."""
        span = self.span(node)
        if span is None:
            return None
        line = self.lines[span.line - 1]
        match = re.compile(rf"from\s+({re.escape(module)})(?![\w.])").search(line, span.column - 1)
        if match is None:
            return None
        return Span(span.line, match.start(1) + 1, span.line, match.end(1) + 1)

    def string_relocator(self, node: ast.AST):  # noqa: ANN201 - a Relocate
        """Place tokens parsed from a string literal's value where they are written: with
        their spans when the literal is written as its value (one line, no escapes; an
        ``r``/``u`` prefix allowed); else at the place their first character is written
        (through escapes, continuations, the lines of a triple-quoted string and the
        pieces of an implicit concatenation: :func:`.literals.value_places`) with no span,
        so that a fix leaves them to a person."""
        start = self.loc(node)
        line, col = start.line or 1, (start.column or 1) - 1
        value = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        mapped = None if value is None else value_places(self.segment(node), line, col + 1, value)
        prefix = self.lines[line - 1][col:] if line - 1 < len(self.lines) else ""
        quote = 3 if prefix[:3] in ('"""', "'''") else (1 if prefix[:1] in ("'", '"') else 0)
        exact = self.string_span(node) is not None or (mapped is not None and mapped[2])
        starts = [0] if value is None else [0, *(i + 1 for i, c in enumerate(value) if c == "\n")]

        def point(p: tuple[int, int]) -> tuple[int, int]:
            if mapped is not None and value is not None and 1 <= p[0] <= len(starts):
                index = starts[p[0] - 1] + p[1] - 1
                return mapped[0][index] if 0 <= index < len(mapped[0]) else mapped[1]
            return (line, col + quote + p[1]) if p[0] == 1 else (line + p[0] - 1, p[1])

        def move(token: Token) -> Token:
            return (
                token.moved(point)
                if exact
                else replace(token.unplaced(), line=point(token.start)[0], column=point(token.start)[1])
            )

        return move
