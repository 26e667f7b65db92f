"""Shell command lines parsed with tree-sitter-bash into argv tokens with positions.

Used for launch scripts and for every place that holds shell text: Dockerfile ``RUN`` and
shell-form ``CMD``, compose ``command`` strings, ``sh -c`` arguments in Kubernetes. Quoting,
line continuations, ``$VAR`` / ``${VAR:-default}`` / ``${VAR:+alt}`` and bash arrays
(``ARGS=(...)`` expanded as ``"${ARGS[@]}"``) are resolved from assignments in the same
text; what cannot be resolved becomes an unresolved token, never an invented value.
"""

from __future__ import annotations

import re
import shlex
from collections import ChainMap
from collections.abc import Callable, MutableMapping
from dataclasses import replace
from functools import lru_cache

import tree_sitter
import tree_sitter_bash

from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.shell_flow import (
    MAX_CALL_DEPTH,
    POSITIONAL,
    Alternatives,
    branches,
    combinations,
    expansion_names,
    merged,
    positional,
)
from vllm_upgrade_check.parsing.shell_script import Assignment, Command, Cut, ShellScript
from vllm_upgrade_check.parsing.shell_text import (
    Locator,
    blanks_end,
    identity_locator,
    offset_locator,
    parser_safe,
    unescape_double,
    unescape_word,
    without_final_continuation,
)
from vllm_upgrade_check.parsing.words import Token, link, relinked

__all__ = ["Assignment", "Command", "Cut", "Locator", "ShellScript", "Token", "offset_locator", "parse_shell"]


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


Sourced = Callable[[str], tuple[str, str] | None]
"""Reads the file a ``source FILE`` / ``. FILE`` command names (as written, after quote
removal): ``(its text, its report path)``, or ``None`` when the repository cannot say."""


class _Walker:
    def __init__(
        self,
        src: bytes,
        locate: Locator,
        variables: MutableMapping[str, list[Token]],
        sourced: Sourced | None = None,
    ) -> None:
        self.src = src
        self.locate = locate
        self.vars = variables
        self.script = ShellScript()
        self._lines: list[bytes] | None = None
        self.sourced = sourced
        # variables assigned in alternative branches: every value each may hold
        self.alts: dict[str, Alternatives] = {}
        # one per branch being walked: what it assigned (name -> its values)
        self.recorders: list[dict[str, Alternatives]] = []
        # variables whose words are not the same at every use (bound by a function call,
        # or derived from such): never placed where they are used
        self.foreign: set[str] = set()
        self.functions: dict[str, tree_sitter.Node] = {}
        self.called: set[str] = set()
        self.calls: list[str] = []
        self._at: dict[tuple[int, int], int] = {}  # commands recorded at each place

    def record(self, command: Command) -> None:
        """Append ``command``, numbered after those recorded at its place before (a launch
        read once per branch value or per function call)."""
        where = (command.line, command.column)
        variant = self._at.get(where, 0)
        self._at[where] = variant + 1
        self.script.commands.append(replace(command, variant=variant) if variant else command)

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
        spans = [self.span(n) for n in words]
        out: list[Token] = []
        for i, node in enumerate(words):
            tokens = self.expand(node)
            if len(tokens) == 1 and tokens[0].extent == spans[i]:
                linked_before = i > 0 and not gaps[i]
                linked_after = i + 1 < len(spans) and not gaps[i + 1]
                line_start, line_end = self._own_line(node) if array else (None, None)
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

    # -- assignments ---------------------------------------------------------------
    def assignment(self, node: tree_sitter.Node, exported: bool, prefix: bool) -> None:
        """Record ``NAME=value``, ``NAME=(words)`` and their appending forms ``NAME+=...``
        (which add to what the variable holds: every branch that appends may reach the
        command that expands it)."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        name = self.text(name_node)
        if name_node.type == "subscript":
            return
        line, col = self.pos(node)
        append = any(c.type == "+=" for c in node.children)
        used = expansion_names([value_node], self._var_name) if value_node is not None else []
        if any(n in self.foreign for n in used):
            self.foreign.add(name)
        varying = [n for n in used if n in self.alts]
        if append and name in self.alts and name not in varying:
            varying.append(name)
        if varying and not prefix:
            # one value per value of the alternatives it is made of
            values: Alternatives = []
            saved = {n: self.vars[n] for n in varying}
            for binding in combinations(self.alts, varying):
                self.vars.update(binding)
                tokens, value = self._assigned(name, value_node, append)
                values.append(tokens)
            self.vars.update(saved)
            self.vars[name] = values[-1]
            self.alts[name] = values
        else:
            tokens, value = self._assigned(name, value_node, append)
            self.vars[name] = tokens
            if not append:
                self.alts.pop(name, None)
        if not prefix and self.recorders and (not append or name in self.recorders[-1]):
            self.recorders[-1][name] = self.alts.get(name) or [self.vars[name]]
        self.script.assignments.append(Assignment(name, value, line, col, exported, prefix))

    def _assigned(self, name: str, value_node: tree_sitter.Node | None, append: bool) -> tuple[list[Token], str]:
        """The words ``name`` holds after an assignment of ``value_node`` (appended to what
        it held for ``+=``), and the value as :class:`Assignment` records it."""
        before = list(self.vars.get(name, [])) if append else []
        if value_node is not None and value_node.type == "array":
            held = before + self.words(list(value_node.named_children), array=True)
            return held, " ".join(t.text for t in held)
        if value_node is not None and (alias := self._whole_variable(value_node)) is not None:
            # `B=$A`, `B="${A}"`: B holds A's words, placed where A's are written
            held = before + self.expand_variable(alias, quoted=False)
            return held, " ".join(t.text for t in held)
        if value_node is not None:
            tokens = self.expand(value_node, split=False)
            value = tokens[0].text if tokens else ""
            held = before + self._split_value(value_node, value, tokens)
            return held, " ".join(t.text for t in held) if append else value
        return before, ""

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
    def expand(self, node: tree_sitter.Node, split: bool = True) -> list[Token]:
        """Expand one argument node into argv tokens."""
        line, col = self.pos(node)
        written = self.text(node)
        kind = node.type
        if kind in ("simple_expansion", "expansion") and split:
            return self.expand_variable(node, quoted=False)
        if kind == "string":
            parts = [c for c in node.named_children if c.type != "string_content" or True]
            expansions = [c for c in parts if c.type in ("simple_expansion", "expansion")]
            if len(expansions) == 1 and len(node.named_children) == 1:
                name = self._var_name(expansions[0])
                varies = name is not None and (name in self.alts or name in self.foreign)
                if varies or self._is_array_all(expansions[0]):
                    return self.expand_variable(expansions[0], quoted=True)
        text, resolved = self.flatten(node)
        return [Token(text, line, col, resolved, written, span=self.span(node))]

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
        if operator in (":-", "-", ":=", "=") and not (known and self.vars[name or ""]):
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
            return [Token(joined, line, col, all(t.resolved for t in tokens), written, span=span)]
        if len(tokens) == 1 and not quoted and not varies and not tokens[0].text.startswith("-"):
            # `$SWAP` holding one value: reported where the word is defined, cut out where it
            # is used (`$SWAP` itself, not the definition other lines may read). A variable
            # holding flags (`OPTS="--enforce-eager"`) is edited where the flags are written.
            return [replace(tokens[0], span=self.span(node), element=None, prev_end=None, next_start=None)]
        return tokens

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
            out, ok = "", True
            for child in node.children:
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

    # -- commands --------------------------------------------------------------------
    def command(self, node: tree_sitter.Node) -> None:
        argv: list[Token] = []
        words: list[tree_sitter.Node] = []
        prefix: list[Assignment] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                before = len(self.script.assignments)
                self.assignment(child, exported=False, prefix=True)
                prefix.extend(self.script.assignments[before:])
            elif child.type == "command_name":
                words.extend(child.named_children)
            elif child.type.endswith("redirect") or child.type in ("comment", "heredoc_body"):
                continue
            else:
                words.append(child)
        line, col = self.pos(node)
        varying = [n for n in expansion_names(words, self._var_name) if n in self.alts]
        if not varying:
            self._run(self.words(words), words, tuple(prefix), line, col)
            return
        # One argv per combination of the alternative values it expands (two branches of
        # the same words stay two launches: a fix of one branch leaves the count alone).
        saved = {n: self.vars[n] for n in varying}
        for binding in combinations(self.alts, varying):
            self.vars.update(binding)
            argv = self.words(words)
            self.vars.update(saved)
            self._run(argv, words, tuple(prefix), line, col)

    def _run(
        self, argv: list[Token], words: list[tree_sitter.Node], prefix: tuple[Assignment, ...], line: int, col: int
    ) -> None:
        """Record one command: a call of a function defined in the text walks its body
        with the call's words as positional parameters; ``eval`` of resolved words reads
        them as a command line; ``source FILE`` binds the file's assignments."""
        program = argv[0].text if argv else ""
        if program in self.functions and program not in self.calls and len(self.calls) < MAX_CALL_DEPTH:
            self._call(program, argv[1:])
            return
        if program == "eval" and len(argv) > 1 and all(t.resolved for t in argv[1:]):
            self._eval(argv, words)
            return
        if program in ("source", ".") and len(argv) > 1:
            self._source(argv[1])
        if program == "shift" and self.calls:
            count = int(argv[1].text) if len(argv) > 1 and argv[1].text.isdigit() else 1
            self.vars.update(positional(list(self.vars.get("@", []))[count:]))
        self.record(Command(tuple(argv), prefix, line, col))

    def _call(self, function: str, args: list[Token]) -> None:
        """Walk ``function``'s body once for this call, ``"$@"`` and ``$1`` … ``$9``
        holding the call's words (placed where the call writes them)."""
        self.called.add(function)
        saved = {k: list(self.vars[k]) for k in POSITIONAL if k in self.vars}
        foreign = set(self.foreign)
        self.vars.update(positional(args))
        self.foreign.update(POSITIONAL)
        self.calls.append(function)
        try:
            self.walk(self.functions[function])
        finally:
            self.calls.pop()
            self.foreign = foreign
            for k in POSITIONAL:
                if k in saved:
                    self.vars[k] = saved[k]
                else:
                    self.vars.pop(k, None)

    def _eval(self, argv: list[Token], words: list[tree_sitter.Node]) -> None:
        """``eval WORDS``: the words joined by blanks are read as shell, every command of it
        placed, without spans (a fix leaves it to a person), where the string is written:
        the assignment of ``eval "$cmd"``'s variable, else the first word."""
        alias = self._whole_variable(words[1]) if len(words) > 1 else None
        held = self.vars.get(self._var_name(alias) or "", []) if alias is not None else []
        at = held[0] if held else argv[1]
        inner = parse_shell(" ".join(t.text for t in argv[1:]), variables=self.vars)
        for command in inner.commands:
            moved = tuple(replace(t.unplaced(), line=at.line, column=at.column, path=at.path) for t in command.argv)
            self.record(Command(moved, command.prefix, at.line, at.column))
        self.script.unresolved |= inner.unresolved

    def _source(self, token: Token) -> None:
        """``source FILE``: the assignments of the file (read by :attr:`sourced`) bind its
        variables, each word placed in that file without a span."""
        self.script.sourced.append(token.text)
        found = self.sourced(token.text) if self.sourced is not None else None
        if found is None:
            return
        text, path = found
        own: dict[str, list[Token]] = {}
        parse_shell(text, variables=ChainMap(own, self.vars))
        for name, tokens in own.items():
            self.vars[name] = [replace(t.unplaced(), path=path) for t in tokens]
            self.alts.pop(name, None)
            if self.recorders:
                self.recorders[-1][name] = [self.vars[name]]

    def _branching(
        self, always: list[tree_sitter.Node], bodies: list[list[tree_sitter.Node]], exhaustive: bool
    ) -> None:
        """Walk a ``case``/``if``/``&&`` construct: each branch from the values before it; a
        variable assigned in several branches then holds each of their values (see
        :func:`~.shell_flow.merged`)."""
        self._walk_children(always)
        before_vars = {n: list(v) for n, v in self.vars.items()}
        before_alts = dict(self.alts)
        recorded: list[dict[str, Alternatives]] = []
        for body in bodies:
            self.recorders.append({})
            self._walk_children(body)
            recorded.append(self.recorders.pop())
            for name in recorded[-1]:
                self._restore(name, before_vars, before_alts)
        names = list(dict.fromkeys(n for branch in recorded for n in branch))
        before = {n: before_alts.get(n) or [before_vars[n]] for n in names if n in before_vars}
        for name, values in merged(names, recorded, before, exhaustive).items():
            last = next(branch[name] for branch in reversed(recorded) if name in branch)
            self.vars[name] = last[-1]
            if len(values) > 1:
                self.alts[name] = values
            else:
                self.alts.pop(name, None)
            if self.recorders:
                self.recorders[-1][name] = values

    def _restore(self, name: str, values: dict[str, list[Token]], alts: dict[str, Alternatives]) -> None:
        if name in values:
            self.vars[name] = values[name]
        else:
            self.vars.pop(name, None)
        if name in alts:
            self.alts[name] = alts[name]
        else:
            self.alts.pop(name, None)

    def walk(self, node: tree_sitter.Node) -> None:
        if (node.type == "ERROR" or node.is_missing) and not self.script.has_error:
            self.script.has_error = True
            self.script.error_line = self.pos(node)[0]
        kind = node.type
        if kind == "comment":
            return
        if kind == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                self.functions[self.text(name)] = body
                self.called.discard(self.text(name))
            return
        flow = branches(node, self.text)
        if flow is not None:
            self._branching(*flow)
            return
        if kind == "command":
            self.command(node)
            self.walk_substitutions(node)
            return
        if kind == "variable_assignment":
            self.assignment(node, exported=False, prefix=False)
            self.walk_substitutions(node)  # PID=$(vllm serve ... & echo $!)
            return
        if kind == "declaration_command":
            self.walk_substitutions(node)
            exported = self.text(node).startswith(("export", "declare -x"))
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assignment(child, exported=exported, prefix=False)
                elif child.type == "variable_name" and exported:
                    line, col = self.pos(child)
                    name = self.text(child)
                    value = " ".join(t.text for t in self.vars.get(name, []))
                    self.script.assignments.append(Assignment(name, value, line, col, True))
            return
        self._walk_children(node.children)

    def _walk_children(self, children: list[tree_sitter.Node]) -> None:
        """Walk sibling nodes in order, noting the comments that cut a command short."""
        commands = self.script.commands
        pending: tuple[int, int, int] | None = None  # (command, line, column) a comment may cut
        for i, child in enumerate(children):
            first = len(commands)
            self.walk(child)
            read = child.type == "command" and first < len(commands)
            if pending is not None and read and commands[first].argv and commands[first].argv[0].text.startswith("-"):
                index, line, column = pending
                commands[index] = replace(commands[index], cut=Cut(line, column, commands[first].argv))
            if child.type != "comment":
                pending = None
            if read and (where := self._continued_into_comment(children, i)) is not None:
                pending = (first, *where)

    def _continued_into_comment(self, siblings: list[tree_sitter.Node], at: int) -> tuple[int, int] | None:
        """Where the comment stands that ends command ``siblings[at]`` although its author
        continued the command past it: a line continuation before the comment (``--tp 2
        \\`` / ``# --old \\``), or a comment that itself ends in one (``--tp 2 # note
        \\``); ``None`` when no comment follows the command or nothing continues it."""
        end = at + 1
        while end < len(siblings) and siblings[end].type == "comment":
            end += 1
        comments = siblings[at + 1 : end]
        if not comments:
            return None
        gap = self.src[siblings[at].end_byte : comments[0].start_byte]
        if b"\\\n" in gap or any(self.text(c).rstrip().endswith("\\") for c in comments):
            return self.pos(comments[0])
        return None

    def walk_substitutions(self, node: tree_sitter.Node) -> None:
        """Walk the commands run inside ``$(...)``, backquotes and ``<(...)`` in ``node``'s words."""
        for child in node.named_children:
            for sub in _descendants(child, ("command_substitution", "process_substitution")):
                for inner in sub.named_children:
                    self.walk(inner)


def _descendants(node: tree_sitter.Node, kinds: tuple[str, ...]) -> list[tree_sitter.Node]:
    out = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in kinds:
            out.append(current)
            continue
        stack.extend(current.children)
    return out


def parse_shell(
    text: str,
    locate: Locator | None = None,
    variables: MutableMapping[str, list[Token]] | None = None,
    sourced: Sourced | None = None,
) -> ShellScript:
    """Parse shell text into commands and assignments.

    Control flow is followed as far as the text tells it: a variable assigned in several
    alternative branches (``case``, ``if``/``elif``/``else``, ``&&``/``||``) makes each
    command that expands it one command per value (at most
    :data:`~.shell_flow.MAX_COMBINATIONS`); a call of a function defined in the text is
    its body's commands with the call's words for ``"$@"``/``$1``…``$9`` (a function never
    called is read once, its parameters unresolved); ``eval`` of resolved words is the
    command line they make; ``source FILE`` binds the assignments of the file ``sourced``
    reads.

    Args:
        text: the shell source.
        locate: maps positions in ``text`` to file positions (default: ``text`` is the file).
        variables: variables known before this text (e.g. Dockerfile ``ENV``/``ARG``); the
            mapping is updated with the text's own assignments (a ``ChainMap`` keeps them
            out of the mappings behind it).
        sourced: reads the files ``source``/``.`` commands name (none are read without it).

    Returns:
        A :class:`ShellScript`; a syntax error marks ``has_error`` but never raises.
    """
    src = without_final_continuation(parser_safe(text)).encode("utf-8", "replace")
    tree = _parser().parse(src)
    walker = _Walker(src, locate or identity_locator(src), variables if variables is not None else {}, sourced)
    walker.walk(tree.root_node)
    for name, body in list(walker.functions.items()):
        if name not in walker.called:
            walker.walk(body)
    return walker.script


def tokens_from_words(words: list[str], line: int, column: int) -> tuple[Token, ...]:
    """Tokens for an exec-form argv given as a list (all at one position)."""
    return tuple(Token(w, line, column, True, w) for w in words)


def with_position(token: Token, line: int, column: int) -> Token:
    """A copy of ``token`` placed at ``line``/``column``."""
    return replace(token, line=line, column=column)
