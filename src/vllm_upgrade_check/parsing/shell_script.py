"""What :func:`vllm_upgrade_check.parsing.shell.parse_shell` reads from shell text: commands,
assignments, and the comments that cut a continued command short."""

from __future__ import annotations

from dataclasses import dataclass, field

from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.words import Token


@dataclass(frozen=True)
class Assignment:
    """A variable assignment: ``NAME=value``, ``export NAME=value`` or a command prefix."""

    name: str
    value: str
    line: int
    column: int
    exported: bool
    prefix: bool = False


@dataclass(frozen=True)
class Cut:
    """A comment that ends a command its author continued past it: a line continuation
    (``\\``) does not carry across a comment, so the words on the lines after it are a
    command of their own (bash runs them after the first one, and they never reach it).

    Attributes:
        line: 1-based line of the comment; column: 1-based column of its ``#``.
        words: the argv of the command the comment cuts off (the first one after it,
            whose first word is an option: ``--port 8000``).
    """

    line: int
    column: int
    words: tuple[Token, ...]


@dataclass(frozen=True)
class Command:
    """A simple command: its argv, the assignments written before it (``VAR=1 cmd``) and,
    when a comment cuts it short, the :class:`Cut`. ``variant``: how many commands were read
    at the same place before this one (``0``: the first; a command that expands a variable
    of alternative values, or a function body's command, is read once per value or call)."""

    argv: tuple[Token, ...]
    prefix: tuple[Assignment, ...]
    line: int
    column: int
    cut: Cut | None = None
    variant: int = 0


@dataclass
class ShellScript:
    """Everything read from one piece of shell text.

    Attributes:
        commands: every simple command, in source order (nested ones included).
        assignments: every assignment (plain, exported, and command prefixes).
        unresolved: names of variables used in commands but never assigned in the text.
        has_error: ``True`` when tree-sitter found a syntax error somewhere (the rest is
            still read).
        error_line: 1-based line of the first syntax error.
        sourced: the files ``source FILE`` / ``. FILE`` commands name, as written (after
            quote removal; a word not resolved keeps its expansions).
        substituted: the files an unquoted ``$(cat FILE)``, ``$(< FILE)`` or ``$(grep -v
            PATTERN FILE)`` reads into a command's words, as written.
        subshells: where each ``( ... )`` subshell is written: what changes there (a ``cd``)
            is not in force after it.
    """

    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    unresolved: set[str] = field(default_factory=set)
    has_error: bool = False
    error_line: int | None = None
    sourced: list[str] = field(default_factory=list)
    substituted: list[str] = field(default_factory=list)
    subshells: list[Span] = field(default_factory=list)
