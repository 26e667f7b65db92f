"""BuildKit here-documents in a Dockerfile: ``RUN <<EOF``, ``RUN <<-EOT bash``, ``COPY <<EOF
/entry.sh`` (Dockerfile reference, "Here-Documents"; ``# syntax=docker/dockerfile:1.4`` and
later, the default of current Docker).

``dockerfile-parse`` knows no here-documents: it reads each line of a body as an
instruction of its own (``pip install ...`` as an instruction ``PIP``; a body line ``FROM x``
or ``CMD ...`` as a real one). :func:`fold` finds every body, by the markers of ``RUN``,
``COPY`` and ``ADD`` instructions and the delimiter line that ends it, and gives the text to
parse with each body and delimiter line blanked (line numbers kept), and the bodies by the
instruction's first line.

A ``RUN`` whose command is only here-documents runs each body as a shell script (unless its
``#!`` names another interpreter); a ``RUN`` with a command (``RUN <<-EOT bash``, ``RUN
python3 <<EOF``) is that command with the body as its standard input, read as shell
(:mod:`~vllm_upgrade_check.parsing.shell_heredoc` says when a shell runs it). A ``COPY``/
``ADD`` here-document is a file the image holds, at its destination: a shell script there is
read at its lines, and when the stage's exec-form ``ENTRYPOINT`` runs it, with the
``ENTRYPOINT``'s further words and the ``CMD`` as its ``"$@"``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.parsing.shell import Token, offset_locator
from vllm_upgrade_check.parsing.shell_flow import positional
from vllm_upgrade_check.parsing.shell_heredoc import SHELLS, quoted_delimiter
from vllm_upgrade_check.sources.scanners.shell import SHELL_SUFFIXES, shell_facts

MARKER = re.compile(r"<<(-?)[ \t]*((['\"]?)([A-Za-z0-9_.\-]+)\3)")
"""A here-document marker: ``<<EOF``, ``<<-EOT``, ``<<"EOF"``, ``<<'EOF'``."""

HEREDOC_INSTRUCTIONS = frozenset({"RUN", "COPY", "ADD"})
"""The instructions BuildKit reads here-documents for."""

_MAX_PASSES = 8
"""Parses of a Dockerfile with bodies blanked at most (a body whose last line continues
hides the instructions after it from the first parse)."""


@dataclass(frozen=True)
class Heredoc:
    """One here-document of an instruction.

    Attributes:
        delimiter: the word that ends it (``EOF``); quoted: whether the marker quotes it
            (then nothing in it is expanded when the instruction is read);
        strip_tabs: ``<<-``: leading tabs of its lines are removed;
        body: its lines, each ended by ``\\n``; line: the 1-based file line of its first
            line; end: the 1-based line of the delimiter line.
    """

    delimiter: str
    quoted: bool
    strip_tabs: bool
    body: str
    line: int
    end: int


def _bodies(lines: Sequence[str], after: int, markers: list[re.Match[str]]) -> list[Heredoc] | None:
    """The bodies ``markers`` open, one after another from 0-based line ``after`` + 1, or
    ``None`` when one of them has no delimiter line (not a here-document BuildKit reads)."""
    out: list[Heredoc] = []
    start = after + 1
    for marker in markers:
        delimiter, strip = marker.group(4), marker.group(1) == "-"
        end = start
        while end < len(lines):
            written = lines[end].rstrip("\r")
            if (written.lstrip("\t") if strip else written) == delimiter:
                break
            end += 1
        if end >= len(lines):
            return None
        body = "".join(line + "\n" for line in lines[start:end])
        out.append(Heredoc(delimiter, quoted_delimiter(marker.group(2)), strip, body, start + 1, end + 1))
        start = end + 1
    return out


def fold(text: str, parse: Callable[[str], Any]) -> tuple[Any, dict[int, list[Heredoc]]]:
    """The parse of Dockerfile ``text`` (``parse(text)``: a ``DockerfileParser``, whose
    ``structure`` lists the instructions) with its here-document bodies blanked, and the
    bodies of each instruction by its 0-based ``startline``. Text without ``<<`` is parsed
    once. Raises what ``parse`` raises."""
    parser = parse(text)
    structure = parser.structure
    if "<<" not in text:
        return parser, {}
    lines = text.split("\n")
    found: dict[int, list[Heredoc]] = {}
    for _ in range(_MAX_PASSES):
        new = False
        for item in structure:
            start = int(item["startline"])
            if start in found or str(item["instruction"]).upper() not in HEREDOC_INSTRUCTIONS:
                continue
            markers = list(MARKER.finditer(str(item["content"])))
            bodies = _bodies(lines, int(item["endline"]), markers) if markers else None
            if bodies:
                found[start] = bodies
                new = True
        if not new:
            break
        blanked = list(lines)
        for bodies in found.values():
            for doc in bodies:
                for index in range(doc.line - 1, doc.end):
                    blanked[index] = ""
        parser = parse("\n".join(blanked))
        structure = parser.structure
    return parser, found


def without_markers(value: str) -> str:
    """An instruction's value with its here-document markers removed (``<<-EOT bash`` ->
    ``bash``; ``<<EOF`` -> ``""``)."""
    return MARKER.sub("", value).strip()


def _interpreter(body: str) -> str | None:
    """The program a body's ``#!`` line names (``bash`` for ``#!/usr/bin/env bash``), or
    ``None`` without one."""
    first = body.split("\n", 1)[0]
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    return words[1].rsplit("/", 1)[-1] if program == "env" and len(words) > 1 else program


def is_shell_body(body: str, dest: str = "") -> bool:
    """Whether a body is a shell script: a ``#!`` naming a shell, or none and (for a file a
    ``COPY`` makes) a shell script's name."""
    program = _interpreter(body)
    if program is not None:
        return program in SHELLS
    return not dest or dest.endswith(SHELL_SUFFIXES)


def run_facts(
    item: Mapping[str, Any],
    bodies: Sequence[Heredoc],
    lines: Sequence[str],
    path: str,
    scanner: str,
    variables: MutableMapping[str, list[Token]],
    hint: tuple[str, str] | None,
) -> Iterator[tuple[list[Fact], str]]:
    """``(facts, text read)`` of a ``RUN`` with here-documents (see the module docstring),
    each fact at its line in the file; ``variables``: the ``ARG``/``ENV`` values in scope."""
    command = without_markers(str(item["value"]))
    if not command:
        for doc in bodies:
            if is_shell_body(doc.body):
                facts, _ = shell_facts(doc.body, path, scanner, offset_locator(doc.body, doc.line, 1), variables, hint)
                yield facts, doc.body
        return
    # the command with its bodies as the shell reads them: from the instruction's first
    # word to the last delimiter line, every line where the file has it
    first = int(item["startline"])
    head = lines[first]
    keyword = len(head) - len(head.lstrip()) + len(str(item["instruction"])) + 1
    text = "\n".join([head[keyword:], *lines[first + 1 : bodies[-1].end]]) + "\n"
    facts, _ = shell_facts(text, path, scanner, offset_locator(text, first + 1, keyword + 1), variables, hint)
    yield facts, text


def copy_destinations(value: str, bodies: Sequence[Heredoc], workdir: str) -> list[tuple[str, Heredoc]]:
    """Where a ``COPY``/``ADD`` puts each of its here-documents (``COPY <<EOF /entry.sh``:
    ``/entry.sh``; several into a folder, ``COPY <<a.sh <<b.sh /opt/``: each by its
    delimiter), relative destinations under ``workdir``."""
    words = [w for w in without_markers(value).split() if not w.startswith("--")]
    if not words:
        return []
    dest = posixpath.normpath(posixpath.join(workdir, words[-1]))
    if len(bodies) == 1 and not words[-1].endswith("/"):
        return [(dest, bodies[0])]
    return [(posixpath.join(dest, doc.delimiter), doc) for doc in bodies]


def copied_script_facts(
    scripts: Mapping[str, Heredoc],
    entry: Sequence[Token] | None,
    cmd: Sequence[Token],
    env: Mapping[str, list[Token]],
    path: str,
    scanner: str,
    hint: tuple[str, str] | None,
) -> tuple[list[Fact], bool]:
    """The facts of the shell scripts a stage's ``COPY`` here-documents create (``scripts``:
    destination -> body), and whether the stage's exec-form ``ENTRYPOINT`` (``entry``) runs
    one of them: that one is read with the ``ENTRYPOINT``'s further words and ``cmd`` as
    its ``"$@"`` (those words' facts where the Dockerfile writes them), the stage's ``ENV``
    as its environment; the others with the ``ENV`` only."""
    words = list(entry or [])
    at = 1 if len(words) >= 2 and words[0].text.rsplit("/", 1)[-1] in SHELLS and not words[1].text.startswith("-") else 0
    run = posixpath.normpath(words[at].text) if at < len(words) and words[at].text.startswith("/") else None
    facts: list[Fact] = []
    launches = False
    for dest, doc in scripts.items():
        if not is_shell_body(doc.body, dest) and dest != run:
            continue
        known: dict[str, list[Token]] = dict(env)
        if dest == run:
            known.update(positional([*words[at + 1 :], *cmd]))
        found, _ = shell_facts(doc.body, path, scanner, offset_locator(doc.body, doc.line, 1), known, hint)
        facts.extend(found)
        launches = launches or (dest == run and any(f.kind == FactKind.LAUNCH for f in found))
    return facts, launches


__all__ = [
    "HEREDOC_INSTRUCTIONS",
    "MARKER",
    "Heredoc",
    "copied_script_facts",
    "copy_destinations",
    "fold",
    "is_shell_body",
    "run_facts",
    "without_markers",
]
