"""The words of shell text: how tree-sitter-bash word nodes expand into argv tokens with
positions (quote removal, ``$VAR``/``${VAR:-x}``/``${VAR:+x}``, arrays, word splitting of a
variable's value), the part of the walker of :mod:`vllm_upgrade_check.parsing.shell` that
reads words; the walker itself reads commands and control flow."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, MutableMapping
from dataclasses import replace

import tree_sitter

from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.shell_flow import Alternatives
from vllm_upgrade_check.parsing.shell_script import ShellScript
from vllm_upgrade_check.parsing.shell_text import Locator, blanks_end, glued, unescape_double, unescape_word
from vllm_upgrade_check.parsing.words import Token, link, relinked

_QUOTING = re.compile(r"[\"'\\]")
"""What makes :func:`shlex.split` more than a split at blanks: quotes and backslashes."""

_BLANK_SPLIT = re.compile(r"[^ \t\r\n]+")
"""The words :func:`shlex.split` (POSIX, no comments) finds in text without quotes or
backslashes: runs of anything but its whitespace (space, tab, CR, LF)."""

class WordWalker:
    """Expands word nodes of one parsed text (``src``) with the variables known so far.

    Attributes:
        vars: variable -> the words it holds (updated by the walker's assignments).
        alts: variables assigned in alternative branches -> every value each may hold.
        foreign: variables whose words differ at each use (bound by a function call, or
            derived from such): never placed where they are used.
        script: what the walk has read (unresolved names go to it).
    """

    def __init__(self, src: bytes, locate: Locator, variables: MutableMapping[str, list[Token]]) -> None:
        self.src = src
        self.locate = locate
        self.vars = variables
        self.script = ShellScript()
        self._lines: list[bytes] | None = None
        self.alts: dict[str, Alternatives] = {}
        self.foreign: set[str] = set()
        self.files: Callable[[str], tuple[str, str] | None] | None = None
        """Reads the file a ``$(cat FILE)`` names (``(text, report path)`` or ``None``)."""

    def text(self, node: tree_sitter.Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def pos(self, node: tree_sitter.Node) -> tuple[int, int]:
        return self.locate(node.start_point[0], node.start_point[1])

    def span(self, node: tree_sitter.Node) -> Span:
        """Where ``node`` is written in the file."""
        return Span.between(self.pos(node), self.locate(node.end_point[0], node.end_point[1]))

    def words(self, nodes: list[tree_sitter.Node], array: bool = False) -> list[Token]:
        """The argv tokens of consecutive word nodes of one list (a command's words, an
        array's elements): the tokens written as one of these words are told where the
        neighbouring words are, so that a fix can cut them out. An array's elements written
        one group per line also know their line (so that a cut takes the line, comment and
        all); a command's never do (its line may end in a continuation)."""
        # A comment between two elements (an array written one group per line) ends the
        # line of the element before it: the two are not linked across it, so that cutting
        # one never takes the other's comment.
        broken = {i for i, n in enumerate(nodes) if n.type == "comment"}
        words = [n for n in nodes if n.type != "comment"]
        after_comment = [i > 0 and (i - 1) in broken for i in range(len(nodes))]
        gaps = [after_comment[i] for i, n in enumerate(nodes) if n.type != "comment"]
        # A line holding only a continuation stands where a Dockerfile had a comment line
        # inside a continued instruction (the scanner blanks it so; Docker drops it): a
        # cut does not go across it either.
        for i in range(1, len(words)):
            between = self.src[words[i - 1].end_byte : words[i].start_byte].split(b"\n")[1:-1]
            if any(part.strip() == b"\\" for part in between):
                gaps[i] = True
        groups, gaps = glued(self.src, words, gaps)
        spans = [Span.between(self.span(n[0]).start, self.span(n[-1]).end) for n in groups]
        out: list[Token] = []
        for i, node in enumerate(groups):
            tokens = self._expand_glued(node, spans[i])
            if len(tokens) == 1 and tokens[0].extent == spans[i]:
                linked_before = i > 0 and not gaps[i]
                linked_after = i + 1 < len(spans) and not gaps[i + 1]
                line_start, line_end = self._own_line(node[0]) if array and len(node) == 1 else (None, None)
                tokens = [
                    relinked(
                        tokens[0],
                        prev_end=spans[i - 1].end if linked_before else None,
                        next_start=spans[i + 1].start if linked_after else None,
                        line_start=line_start,
                        line_end=line_end,
                    )
                ]
            out.extend(tokens)
        return out

    def _expand_glued(self, nodes: list[tree_sitter.Node], span: Span) -> list[Token]:
        """The tokens of one word written as ``nodes`` (:func:`~.shell_text.glued`): one node's own, or
        the glued parts' texts as one token placed at ``span`` when each part is one word;
        otherwise each part's tokens, the first glued onto the last word before it."""
        if len(nodes) == 1:
            return self.expand(nodes[0], span=span)
        parts = [self.expand(n, span=self.span(n)) for n in nodes]
        out = list(parts[0])
        for tokens in parts[1:]:
            if not out or not tokens:
                out.extend(tokens)
                continue
            head, tail = out[-1], tokens[0]
            written = self.src[nodes[0].start_byte : nodes[-1].end_byte].decode("utf-8", "replace")
            out[-1] = Token(head.text + tail.text, head.line, head.column, head.resolved and tail.resolved, written)
            out.extend(tokens[1:])
        if len(out) == 1 and all(len(p) == 1 for p in parts):
            first = out[0]
            out[0] = Token(first.text, first.line, first.column, first.resolved, first.written, span=span)
        return out

    def _own_line(self, node: tree_sitter.Node) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """``line_start``/``line_end`` of an array element: the start of its line when only
        blanks stand before it there, the start of the next line when only blanks and a
        comment stand after it."""
        (row, col), (end_row, end_col) = node.start_point, node.end_point
        if self._lines is None:
            self._lines = self.src.split(b"\n")  # once: an array of many elements stays linear
        lines = self._lines
        if row != end_row or row + 1 >= len(lines):
            return None, None
        line = lines[row]
        after = blanks_end(line, end_col)  # only the blanks, not the rest of a long line
        return (
            self.locate(row, 0) if blanks_end(line, 0) >= col else None,
            self.locate(row + 1, 0) if after == len(line) or line.startswith(b"#", after) else None,
        )
    def _whole_variable(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """The expansion ``node`` consists of (``$A``, ``${A}``, ``"$A"``) when it names a
        known variable with no operator; ``None`` otherwise."""
        if node.type == "string" and len(node.named_children) == 1:
            inner = node.named_children[0]
            if self.text(node) != f'"{self.text(inner)}"':
                return None
            node = inner
        if node.type not in ("simple_expansion", "expansion") or len(node.named_children) != 1:
            return None
        name = self._var_name(node)
        return node if name is not None and name in self.vars else None

    def _split_value(self, node: tree_sitter.Node, value: str, tokens: list[Token]) -> list[Token]:
        """Word-split a scalar variable's value, keeping positions within its text. A word
        found as written inside the value gets its span (and its neighbours within the value)."""
        line, col = self.pos(node)
        resolved = all(t.resolved for t in tokens)
        if not _QUOTING.search(value):  # no quotes, no escapes: shlex splits at its blanks only
            words = _BLANK_SPLIT.findall(value)
        else:
            try:
                words = shlex.split(value, comments=False, posix=True)
            except ValueError:
                words = value.split()
        out: list[Token] = []
        cursor = 0
        raw = self.text(node)
        exact = True
        for word in words:
            found = raw.find(word, cursor)
            offset = found if found >= 0 else 0
            if found >= 0:
                cursor = found + len(word)
            pre = raw[:offset]
            row = pre.count("\n")
            c = (col + offset) if row == 0 else len(pre.rsplit("\n", 1)[1]) + 1
            span = Span(line + row, c, line + row, c + len(word)) if found >= 0 and "\n" not in word else None
            exact = exact and span is not None
            out.append(Token(word, line + row, c, resolved, word, span=span))
        return link(out) if exact and resolved else out

    # -- expansion -----------------------------------------------------------------
    def expand(self, node: tree_sitter.Node, split: bool = True, span: Span | None = None) -> list[Token]:
        """Expand one argument node into argv tokens; ``span``: where ``node`` is, when the
        caller has it already (:meth:`span` of ``node``)."""
        kind = node.type
        if kind in ("simple_expansion", "expansion") and split:
            return self.expand_variable(node, quoted=False)
        if kind == "command_substitution" and split and (read := self._substituted_file(node)) is not None:
            return read
        if kind == "string":
            parts = [c for c in node.named_children if c.type != "string_content" or True]
            expansions = [c for c in parts if c.type in ("simple_expansion", "expansion")]
            if len(expansions) == 1 and len(node.named_children) == 1:
                name = self._var_name(expansions[0])
                varies = name is not None and (name in self.alts or name in self.foreign)
                if varies or self._is_array_all(expansions[0]):
                    return self.expand_variable(expansions[0], quoted=True)
        if span is None:
            span = self.span(node)
        text, resolved = self.flatten(node)
        defined = None
        if kind == "string" and (whole := self._whole_variable(node)) is not None:  # `"$IMAGE"`
            name = self._var_name(whole) or ""
            defined = None if name in self.alts or name in self.foreign else _defined(self.vars[name])
        return [Token(text, span.line, span.column, resolved, self.text(node), span=span, defined=defined)]

    def _substituted_file(self, node: tree_sitter.Node) -> list[Token] | None:
        """The words an unquoted ``$(cat FILE...)``, ``$(< FILE)``, ``$(grep -v PATTERN
        FILE...)`` (or the same in backquotes; the first of a pipeline whose other commands
        are ``grep -v PATTERN`` and ``xargs``) gives: the files' text split at blanks as
        bash splits it (lines ``grep -v`` drops left out), each word placed where it is
        written in its file (:attr:`Token.path`, no span). The files named are added to
        :attr:`ShellScript.substituted`; ``None`` (the word stays unresolved) for another
        command, a name not resolved, or a file :attr:`files` cannot read."""
        inner = node.named_children
        if len(inner) != 1:
            return None
        names: list[str] | None = None
        drops: list[re.Pattern[str]] = []
        if inner[0].type == "file_redirect" and self.text(node).lstrip("$(`").startswith("<"):
            target = inner[0].child_by_field_name("destination")
            flat = self.flatten(target) if target is not None else ("", False)
            names = [flat[0]] if flat[1] else None
        elif inner[0].type in ("command", "pipeline"):
            commands = [inner[0]] if inner[0].type == "command" else inner[0].named_children
            for index, command in enumerate(commands):
                read = self._file_command(command, drops, first=index == 0)
                if read is None:
                    return None
                names = read if index == 0 else names
        if not names:
            return None
        self.script.substituted.extend(names)
        out: list[Token] = []
        for name in names:
            found = self.files(name) if self.files is not None else None
            if found is None:
                return None
            text, path = found
            for row, line in enumerate(text.split("\n"), 1):
                if any(drop.search(line) for drop in drops):
                    continue
                for m in _BLANK_SPLIT.finditer(line):
                    out.append(Token(m.group(), row, m.start() + 1, True, m.group(), path=path))
        return out

    def _file_command(self, node: tree_sitter.Node, drops: list[re.Pattern[str]], first: bool) -> list[str] | None:
        """One command of a :meth:`_substituted_file` pipeline: the files it reads (the
        first: ``cat FILE...``, ``grep -v PATTERN FILE...``), or ``[]`` for a filter after it
        (``grep -v PATTERN``, adding the pattern to ``drops``; ``xargs``); ``None`` for any
        other command."""
        if node.type != "command" or any(c.type.endswith("redirect") for c in node.named_children):
            return None
        words = [self.flatten(c) for c in node.named_children]
        if not words or not all(ok for _w, ok in words):
            return None
        program, args = words[0][0], [w for w, _ok in words[1:]]
        if program == "grep" and len(args) >= 2 and args[0] in ("-v", "-vE", "-Ev", "-ve"):
            try:
                drops.append(re.compile(args[1]))
            except re.error:
                return None
            args = args[2:]
        elif program == "xargs" and not first and not args:
            return []
        elif program != "cat" or not first:
            return None
        if any(a.startswith("-") for a in args) or bool(args) != first:
            return None
        return args

    def _is_array_all(self, node: tree_sitter.Node) -> bool:
        """``${A[@]}``, ``${A[*]}`` and ``$@`` (the positional parameters)."""
        sub = next((c for c in node.named_children if c.type == "subscript"), None)
        if sub is None:
            return any(c.type == "special_variable_name" and self.text(c) == "@" for c in node.named_children)
        return self.text(sub).endswith(("[@]", "[*]"))

    def _var_name(self, node: tree_sitter.Node) -> str | None:
        for child in node.named_children:
            if child.type == "variable_name":
                return self.text(child)
            if child.type == "special_variable_name" and self.text(child) in ("@", "*"):
                return self.text(child)
            if child.type == "subscript":
                inner = child.child_by_field_name("name")
                return self.text(inner) if inner is not None else None
        return None

    def expand_variable(self, node: tree_sitter.Node, quoted: bool) -> list[Token]:
        """``$X``, ``${X}``, ``${X[@]}``, ``${X:-default}``, ``${X:+alt}``."""
        line, col = self.pos(node)
        written = self.text(node)
        name = self._var_name(node)
        operator = None
        alt_node = None
        children = list(node.children)
        for i, child in enumerate(children):
            if child.type in (":-", "-", ":+", "+", ":=", "="):
                operator = child.type
                rest = children[i + 1 : -1]
                alt_node = rest[0] if rest else None
                break
        known = name is not None and name in self.vars
        if operator is None and known and name in self.foreign and len(children) > 3:
            # `${@:2}`, `${1#x}` of a function's parameters: a slice of the call's words is
            # taken; any other operator's result is not guessed
            return self._operated(node, children, name or "", line, col, written)
        if operator in (":-", "-", ":=", "=") and not (known and self.vars[name or ""]):
            if operator in (":=", "=") and name is not None and name not in ("@", "*") and not name.isdigit():
                # `: "${IMAGE:=vllm/vllm-openai:v0.16.0}"` assigns the default: later uses read it
                self._assign_default(name, alt_node)
            return self._alternative(alt_node, line, col, quoted)
        if operator in (":+", "+"):
            # Written in the file and used whenever the variable is set: report what it holds
            # even when the variable is set outside the repository.
            if known and not self.vars[name or ""]:
                return []
            return self._alternative(alt_node, line, col, quoted)
        if not known:
            if name is not None and name not in ("@", "*"):
                self.script.unresolved.add(name)
            return [Token(written, line, col, False, written, span=self.span(node))]
        tokens = list(self.vars[name or ""])
        # A variable of alternative values, or bound by a function call, holds other words
        # at each launch: they are cut where they are written, never at this use.
        varies = name in self.alts or name in self.foreign
        if quoted and not self._is_array_all(node):
            if varies and len(tokens) == 1:
                return tokens
            joined = " ".join(t.text for t in tokens)
            span = None if varies else self.span(node)
            defined = _defined(tokens)
            return [Token(joined, line, col, all(t.resolved for t in tokens), written, span=span, defined=defined)]
        if len(tokens) == 1 and not quoted and not varies and not tokens[0].text.startswith("-"):
            # `$SWAP` holding one value: reported where the word is defined, cut out where it
            # is used (`$SWAP` itself, not the definition other lines may read). A variable
            # holding flags (`OPTS="--enforce-eager"`) is edited where the flags are written.
            return [
                replace(
                    tokens[0], span=self.span(node), element=None, prev_end=None, next_start=None, defined=_defined(tokens)
                )
            ]
        if name in self.foreign and any(t.resolved and any(c in t.text for c in " \t\n") for t in tokens):
            # a call's word used unquoted (`$1`, `$@`): the shell splits it at blanks
            return [piece for t in tokens for piece in _split_word(t)]
        return tokens

    def _assign_default(self, name: str, node: tree_sitter.Node | None) -> None:
        """Bind ``name`` to the default of ``${NAME:=word}`` (bash assigns it when the
        variable is unset or empty): the words ``word`` splits into, placed where written."""
        if node is None:
            self.vars[name] = []
            return
        text, resolved = self.flatten(node)
        tokens = [Token(text, *self.pos(node), resolved, self.text(node), span=self.span(node))]
        self.vars[name] = self._split_value(node, text, tokens)
        self.alts.pop(name, None)

    def _operated(
        self, node: tree_sitter.Node, children: list[tree_sitter.Node], name: str, line: int, col: int, written: str
    ) -> list[Token]:
        """``${@:OFFSET}`` / ``${@:OFFSET:LENGTH}`` (bash: offset 1 is ``$1``) of the words
        ``name`` holds; any other operator gives one unresolved word."""
        rest = [self.text(c) for c in children[2:-1]]
        numbers = rest[1::2]
        if (
            name in ("@", "*")
            and rest[:1] == [":"]
            and len(rest) in (2, 4)
            and all(n.isdigit() for n in numbers)
            and rest[2:3] in ([], [":"])
        ):
            start = max(int(numbers[0]) - 1, 0)
            words = self.vars[name][start:]
            return words[: int(numbers[1])] if len(numbers) > 1 else words
        return [Token(written, line, col, False, written, span=self.span(node))]

    def _alternative(self, node: tree_sitter.Node | None, line: int, col: int, quoted: bool) -> list[Token]:
        """The words of ``${X:-word}``/``${X:+word}``: quoted, one word; unquoted, split where
        bash splits it (at blanks outside quotes: ``${X:+--lora-modules "a=$X"}`` gives
        ``--lora-modules`` and ``a=$X``), each at its own position."""
        if node is None:
            return []
        if quoted:
            text, resolved = self.flatten(node)
            return [Token(text, line, col, resolved, text)]
        pieces = list(node.children) if node.type == "concatenation" else [node]
        out: list[Token] = []
        current: list[tuple[str, bool, tuple[int, int]]] = []

        def close() -> None:
            if current:
                word = "".join(p[0] for p in current)
                out.append(Token(word, *current[0][2], all(p[1] for p in current), word))
                current.clear()

        end = pieces[0].start_byte if pieces else 0
        for piece in pieces:
            if self.src[end : piece.start_byte].strip() != self.src[end : piece.start_byte]:
                close()
            end = piece.end_byte
            if piece.type in ("simple_expansion", "expansion"):
                # unquoted: what the variable holds is split too
                words = self.expand_variable(piece, quoted=False)
                for i, token in enumerate(words):
                    if i:
                        close()
                    current.append((token.text, token.resolved, (token.line, token.column)))
                continue
            if piece.type != "word":
                text, resolved = self.flatten(piece)
                current.append((text, resolved, self.pos(piece)))
                continue
            row, column = piece.start_point
            raw = self.text(piece)
            for m in re.finditer(r"(?:\\.|[^\s\\])+|\s+", raw, re.DOTALL):
                if m.group().isspace():
                    close()
                    continue
                at = self.locate(row, column + len(raw[: m.start()].encode("utf-8")))
                current.append((unescape_word(m.group()), True, at))
        close()
        return out

    def flatten(self, node: tree_sitter.Node) -> tuple[str, bool]:
        """The text of a word after quote removal, expansions substituted where known."""
        kind = node.type
        if kind == "raw_string":
            return self.text(node)[1:-1], True
        if kind in ("simple_expansion", "expansion"):
            tokens = self.expand_variable(node, quoted=True)
            return " ".join(t.text for t in tokens), all(t.resolved for t in tokens)
        if kind in ("command_substitution", "process_substitution", "arithmetic_expansion"):
            return self.text(node), False
        if kind == "string":
            # tree-sitter-bash leaves line breaks next to the quotes out of every child
            # (``"\n  vllm serve m\n"``): the bytes between children are the string's too
            out, ok = "", True
            end = node.start_byte
            for child in node.children:
                if child.start_byte > end:
                    out += self.src[end : child.start_byte].decode("utf-8", "replace")
                end = max(end, child.end_byte)
                if child.type == '"':
                    continue
                if child.type == "string_content":
                    out += unescape_double(self.text(child))
                else:
                    piece, good = self.flatten(child)
                    out += piece
                    ok = ok and good
            return out, ok
        if kind in ("concatenation",):
            out, ok = "", True
            for child in node.children:
                piece, good = self.flatten(child)
                out += piece
                ok = ok and good
            return out, ok
        if kind == "ansi_c_string":
            return self.text(node)[2:-1], True
        return unescape_word(self.text(node)), True


def _defined(tokens: list[Token]) -> Span | None:
    """Where the one word a variable holds is written as its text (its span, when the word
    is written there exactly: :attr:`Token.defined` of its uses); ``None`` otherwise."""
    if len(tokens) != 1:
        return None
    token = tokens[0]
    if token.defined is not None:
        return token.defined
    span = token.span
    if span is None or token.path is not None or not token.resolved or (token.written or token.text) != token.text:
        return None
    if span.line != span.end_line or span.end_column - span.column != len(token.text):
        return None
    return span


def _split_word(token: Token) -> list[Token]:
    """The words an unquoted expansion of ``token`` (one word of a call, ``"--tp 2"``)
    makes: split at blanks, each placed at its character in the word as written (inside
    its quotes), with no span (the call's word is edited where it is written, if at all)."""
    if not token.resolved or not any(c in token.text for c in " \t\n"):
        return [token]
    written = token.written or token.text
    shift = 1 if written[:1] in ("'", '"') and written[1:].startswith(token.text[:1]) else 0
    out = []
    for m in _BLANK_SPLIT.finditer(token.text):
        out.append(Token(m.group(0), token.line, token.column + shift + m.start(), True, m.group(0)))
    return out
