"""Shell command lines parsed with tree-sitter-bash into argv tokens with positions.

Used for launch scripts and for every place that holds shell text: Dockerfile ``RUN`` and
shell-form ``CMD``, compose ``command`` strings, ``sh -c`` arguments in Kubernetes. Quoting,
line continuations, ``$VAR`` / ``${VAR:-default}`` / ``${VAR:+alt}`` and bash arrays
(``ARGS=(...)`` expanded as ``"${ARGS[@]}"``) are resolved from assignments in the same
text; what cannot be resolved becomes an unresolved token, never an invented value.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import replace
from functools import lru_cache

import tree_sitter
import tree_sitter_bash

from vllm_upgrade_check.parsing.shell_expand import WordWalker
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
from vllm_upgrade_check.parsing.shell_heredoc import body_locator, quoted_delimiter, runs_stdin
from vllm_upgrade_check.parsing.shell_plain import plain_script
from vllm_upgrade_check.parsing.shell_script import Assignment, Command, Cut, ShellScript
from vllm_upgrade_check.parsing.shell_text import (
    Locator,
    identity_locator,
    offset_locator,
    parser_safe,
    without_final_continuation,
)
from vllm_upgrade_check.parsing.words import Token

__all__ = ["Assignment", "Command", "Cut", "Locator", "ShellScript", "Token", "offset_locator", "parse_shell"]


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


Sourced = Callable[[str], tuple[str, str] | None]
"""Reads the file a ``source FILE`` / ``. FILE`` command names (as written, after quote
removal): ``(its text, its report path)``, or ``None`` when the repository cannot say."""


class _Walker(WordWalker):
    def __init__(
        self,
        src: bytes,
        locate: Locator,
        variables: MutableMapping[str, list[Token]],
        sourced: Sourced | None = None,
    ) -> None:
        super().__init__(src, locate, variables)
        self.sourced = sourced
        # one per branch being walked: what it assigned (name -> its values)
        self.recorders: list[dict[str, Alternatives]] = []
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
        with the call's words as positional parameters; ``eval``'s words are read as a
        command line (what they leave unresolved stays so); ``source FILE`` binds the file's assignments."""
        program = argv[0].text if argv else ""
        if program in self.functions and program not in self.calls and len(self.calls) < MAX_CALL_DEPTH:
            self._call(program, argv[1:])
            return
        if program == "eval" and len(argv) > 1:
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
        if kind == "subshell":
            self.script.subshells.append(self.span(node))
        if kind == "function_definition":
            named = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if named is not None and body is not None:
                self.functions[self.text(named)] = body
                self.called.discard(self.text(named))
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
        if kind == "redirected_statement":
            self._redirected(node)
            return
        self._walk_children(node.children)

    def _redirected(self, node: tree_sitter.Node) -> None:
        """A command with redirections; when a here-document is the standard input of a
        shell that runs it (:func:`~.shell_heredoc.runs_stdin`: ``bash <<'EOF'``, ``ssh host
        bash -s <<EOF``), the body's commands are read too, at their lines: expanded with
        this text's variables for an unquoted delimiter, with none of them for a quoted one
        (the body's own assignments only)."""
        first = len(self.script.commands)
        self._walk_children(node.children)
        body = node.child_by_field_name("body")
        if body is None or body.type != "command" or first >= len(self.script.commands):
            return
        words = [t.text for t in self.script.commands[first].argv]
        for redirect in node.named_children:
            if redirect.type != "heredoc_redirect" or not runs_stdin(self._stdin_reader(words, redirect)):
                continue
            start = next((c for c in redirect.named_children if c.type == "heredoc_start"), None)
            text = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
            if start is None or text is None:
                continue
            locate = body_locator(self.locate, text.start_point[0], text.start_point[1])
            known: MutableMapping[str, list[Token]] = {} if quoted_delimiter(self.text(start)) else ChainMap({}, self.vars)
            inner = parse_shell(self.text(text), locate, known)
            for command in inner.commands:
                self.record(command)
            self.script.assignments.extend(inner.assignments)
            self.script.unresolved |= inner.unresolved
            if inner.has_error and not self.script.has_error:
                self.script.has_error, self.script.error_line = True, inner.error_line

    def _stdin_reader(self, words: list[str], redirect: tree_sitter.Node) -> list[str]:
        """The words of the command that reads a here-document: the command it is written
        on, or for ``cat <<EOF | CMD`` the command the pipe feeds (its words as written)."""
        if not words or words[0].rsplit("/", 1)[-1] != "cat" or any(w != "-" for w in words[1:]):
            return words
        pipe = next((c for c in redirect.named_children if c.type == "pipeline"), None)
        fed = next((c for c in pipe.named_children if c.type == "command"), None) if pipe is not None else None
        return self.text(fed).split() if fed is not None else []

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
    files: Sourced | None = None,
    alternatives: Mapping[str, Alternatives] | None = None,
) -> ShellScript:
    """Parse shell text into commands and assignments.

    Control flow is followed as far as the text tells it: a variable assigned in several
    alternative branches (``case``, ``if``/``elif``/``else``, ``&&``/``||``) makes each
    command that expands it one command per value (at most
    :data:`~.shell_flow.MAX_COMBINATIONS`); a call of a function defined in the text is
    its body's commands with the call's words for ``"$@"``/``$1``…``$9`` (a function never
    called is read once, its parameters unresolved); ``eval``'s words are the command
    line they make (an expansion not resolved stays one); ``source FILE`` binds the assignments of the file ``sourced``
    reads.

    Args:
        text: the shell source.
        locate: maps positions in ``text`` to file positions (default: ``text`` is the file).
        variables: variables known before this text (e.g. Dockerfile ``ENV``/``ARG``); the
            mapping is updated with the text's own assignments (a ``ChainMap`` keeps them
            out of the mappings behind it).
        sourced: reads the files ``source``/``.`` commands name (none are read without it).
        files: reads the files an unquoted ``$(cat FILE)``, ``$(< FILE)`` or ``$(grep -v
            PATTERN FILE)`` names: their words are the command's words there, placed in
            those files (none are read without it; the word stays unresolved).
        alternatives: variables known beforehand to hold one of several values (a CI
            matrix): each command that expands one is read once per value, as a variable
            the text assigns in alternative branches is.

    Returns:
        A :class:`ShellScript`; a syntax error marks ``has_error`` but never raises.
    """
    src = without_final_continuation(parser_safe(text)).encode("utf-8", "replace")
    locate = locate or identity_locator(src)
    variables = variables if variables is not None else {}
    if alternatives:
        for name, values in alternatives.items():
            if values:
                variables[name] = values[0]
    else:
        plain = plain_script(src, locate, variables)  # lines of plain words: no parse needed
        if plain is not None:
            return plain
    tree = _parser().parse(src)
    walker = _Walker(src, locate, variables, sourced)
    walker.files = files
    walker.alts.update({n: list(v) for n, v in (alternatives or {}).items() if v})
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
