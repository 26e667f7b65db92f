"""Makefiles: recipe lines are shell commands (``make serve`` often launches vLLM).

The Makefile is turned into one shell text of the same shape: recipe lines (those starting
with a tab, and their ``\\`` continuations) keep their text at their own line and column,
with make's ``@``/``-``/``+`` prefixes blanked; every other line becomes empty. A make
reference ``$(NAME)`` to a simple variable is rewritten ``${NAME}`` (same length), and the
simple assignments of the Makefile (``NAME = value``, ``:=``, ``::=``, ``?=``) are handed to
the shell parser as known variables, so ``$(MODEL)`` resolves to what the Makefile says
and a reference to anything else stays unresolved. Comments are never launches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.parsing.shell import Token, parse_shell
from vllm_upgrade_check.parsing.words import Point
from vllm_upgrade_check.sources.scanners.base import ScanItem, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.shell import shell_facts

MAKEFILE_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(::=|:=|\?=|\+=|=)\s*(.*)$")
_MAKE_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def make_shell_text(text: str) -> tuple[str, dict[str, list[Token]]]:
    """The recipe lines of ``text`` as shell text (same lines and columns) and the
    Makefile's simple variables as shell tokens (placed at their values)."""
    lines = text.split("\n")
    out: list[str] = []
    variables: dict[str, list[Token]] = {}
    continuing = False
    for number, line in enumerate(lines, start=1):
        if line.startswith("\t") or continuing:
            body = line
            if line.startswith("\t") and not continuing:  # make's prefixes start a command only
                rest = line[1:]
                stripped = rest.lstrip("@-+ ")
                body = "\t" + " " * (len(rest) - len(stripped)) + stripped
            out.append(_MAKE_REF.sub(lambda m: "${" + m.group(1) + "}", body))
            continuing = line.endswith("\\")
            continue
        out.append("")
        match = _ASSIGN.match(line)
        if match and not line.lstrip().startswith("#"):
            name, operator, value = match.group(1), match.group(2), match.group(3).split(" #", 1)[0].strip()
            column = match.start(3) + 1
            if operator == "?=" and name in variables:
                continue  # set only when not set before
            words = parse_shell(
                _MAKE_REF.sub(lambda m: "${" + m.group(1) + "}", value), variables=dict(variables)
            )
            tokens = [t for c in words.commands for t in c.argv]
            # Placed where the value is written (spans and neighbours too), so that a fix
            # edits the assignment, unless another recipe reads the variable as well.
            placed = [t.moved(_at(number, column)) for t in tokens] or [Token(value, number, column, True, value)]
            # `+=` appends to what the variable holds (make puts a blank between)
            variables[name] = [*variables.get(name, []), *placed] if operator == "+=" else placed
    return "\n".join(out), variables


def recipe_shells(text: str) -> Callable[[int], int]:
    """Which shell runs each line of Makefile ``text``: the 1-based line that starts its
    recipe line (make runs every recipe line in a shell of its own, its ``\\`` continuations
    in the same one; with ``.ONESHELL:`` a whole recipe is one shell, GNU make's manual,
    "Recipe Execution"). A ``cd`` on one recipe line is not in force on the next."""
    one_shell = any(line.startswith(".ONESHELL:") for line in text.split("\n"))
    shells: dict[int, int] = {}
    start, continuing, in_recipe = 0, False, False
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("\t") or continuing:
            if not continuing and not (one_shell and in_recipe):
                start = number
            shells[number] = start
            continuing, in_recipe = line.endswith("\\"), True
        elif line.strip() and not line.lstrip().startswith("#"):
            in_recipe = False
    return lambda line: shells.get(line, 0)


def _at(line: int, column: int) -> Callable[[Point], Point]:
    """Maps a point of a one-line value parsed alone to where the value starts (``line``, ``column``)."""
    return lambda point: (line, column + point[1] - 1)


class MakefileScanner(Scanner):
    """``Makefile``, ``GNUmakefile`` and ``*.mk`` files that mention vLLM."""

    name = "makefile"

    def accepts_name(self, name: str) -> bool | None:
        return name in MAKEFILE_NAMES or name.endswith(".mk")

    def accepts(self, source: SourceFile) -> bool:
        return source.name in MAKEFILE_NAMES or source.name.endswith(".mk")

    def scan(self, source: SourceFile) -> Iterator[ScanItem]:
        if not source.mentions_vllm():
            return
        shell, variables = make_shell_text(source.text)
        facts, script = shell_facts(shell, source.relpath, self.name, variables=variables)
        yield from facts
        if script.has_error:
            yield Skipped(
                source.relpath,
                f"shell syntax error in a recipe at line {script.error_line}: the recipe was only partly read",
                configures_vllm=True,
                line=script.error_line,
            )
