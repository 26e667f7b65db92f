"""Shell text of plain words only, read without the parser: what
:func:`vllm_upgrade_check.parsing.shell.parse_shell` gives for it, for a fraction of the cost.

Most shell text a repository holds is lines of plain words (a Dockerfile's ``ENV
VLLM_USE_V1=1`` and ``RUN pip install vllm==0.8.0``, a script's ``vllm serve m --max-num-seqs
8``): no quotes, escapes, expansions, operators, comments or keywords. For such text every
line is one simple command (or assignments alone), each word a ``word`` node of
tree-sitter-bash and every word placed where it is written; this module builds the same
:class:`~.shell_script.ShellScript` the tree walk builds (the tests compare the two on
variants of each shape). Any other text gets ``None`` and goes to the parser.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping

from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.shell_script import Assignment, Command, ShellScript
from vllm_upgrade_check.parsing.shell_text import Locator
from vllm_upgrade_check.parsing.words import Token, written_word

_PLAIN = re.compile(r"[A-Za-z0-9_.,:/@=+\- \t\n]*")
"""Text whose words have nothing a shell reads specially: no quotes, backslashes, ``$``,
operators, redirections, globs, braces, tildes, comments or non-ASCII characters."""

_WORD = re.compile(r"[^ \t\n]+")

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=[^=]+")
_LEADING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
"""``NAME=value`` as tree-sitter-bash reads it before a command's name (a value of its own,
without another ``=``, which the fast path leaves to the parser)."""

_NAME_WORD = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
"""A command's name the fast path reads (tree-sitter-bash splits some other characters off
a word where a command's name stands)."""

_SPECIAL = frozenset(
    "if then else elif fi case esac for select while until do done in function time coproc "
    "export declare typeset local readonly unset unsetenv eval source . shift".split()
)
"""Words the parser or the walker reads as more than a word: reserved words, declaration
commands, and the commands :mod:`.shell` interprets."""


def plain_script(
    src: bytes, locate: Locator, variables: MutableMapping[str, list[Token]]
) -> ShellScript | None:
    """The :class:`ShellScript` of ``src`` (the text as given to the parser) when it is lines
    of plain words, with ``variables`` updated by its assignments as the tree walk updates
    them; ``None`` for any other text."""
    if not src.isascii():
        return None
    text = src.decode("ascii")
    if _PLAIN.fullmatch(text) is None:
        return None
    lines = []  # (row, the words with their columns, how many lead as assignments)
    for row, written in enumerate(text.split("\n")):
        words = [(m.start(), m.group()) for m in _WORD.finditer(written)]
        if not words:
            continue
        assigned, leading = 0, True
        for _col, word in words:
            if word in _SPECIAL or word[0] == "=" or "+=" in word:
                return None
            if leading and _LEADING_NAME.match(word):
                if _ASSIGNMENT.fullmatch(word) is None:
                    return None  # `A=` or `A==1`: the parser says what they are
                assigned += 1
            else:
                leading = False
        if assigned < len(words) and _NAME_WORD.fullmatch(words[assigned][1]) is None:
            return None  # `1A=2`, `a@b`, `a:b` where a command's name stands: the parser's to read
        lines.append((row, words, assigned))
    if any(assigned == len(words) for _row, words, assigned in lines[:-1]):
        return None  # assignments alone, then more lines: tree-sitter-bash reads on
    script = ShellScript()
    for row, words, assigned in lines:
        rest = words[assigned:]
        prefix = tuple(_assign(row, col, word, locate, variables, script, bool(rest)) for col, word in words[:assigned])
        if not rest:
            continue
        line, column = locate(row, words[0][0])
        starts = [locate(row, col) for col, _word in rest]
        ends = [locate(row, col + len(word)) for col, word in rest]
        last = len(rest) - 1
        argv = tuple(
            written_word(
                word,
                Span(starts[i][0], starts[i][1], ends[i][0], ends[i][1]),
                ends[i - 1] if i else None,
                starts[i + 1] if i < last else None,
            )
            for i, (_col, word) in enumerate(rest)
        )
        script.commands.append(Command(argv, prefix, line, column))
    return script


def _assign(
    row: int,
    col: int,
    word: str,
    locate: Locator,
    variables: MutableMapping[str, list[Token]],
    script: ShellScript,
    prefix: bool,
) -> Assignment:
    """Record ``NAME=value`` written at ``row``/``col`` as the walker records it."""
    name, _, raw = word.partition("=")
    at = col + len(name) + 1
    line, column = locate(row, at)
    span = Span(line, column, line, column + len(raw))  # as the walker splits a value
    variables[name] = [written_word(raw, span)]
    start = locate(row, col)
    assignment = Assignment(name, raw, start[0], start[1], False, prefix)
    script.assignments.append(assignment)
    return assignment
