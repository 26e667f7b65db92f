"""Words of a Kubernetes container's ``sh -c`` script read after ``$(VAR)`` expansion, placed
where the script writes them.

The kubelet expands ``$(VAR)`` in ``command`` and ``args`` from the container's ``env``
before the shell runs the script (Kubernetes docs, "Define a command and arguments for a
container": ``$(VAR)`` is replaced, ``$$`` is a literal ``$``, an undefined one stays as
written). The script is parsed as it runs, expanded; its words are measured in that text,
where a variable's value stands in place of ``$(VAR)``. :func:`expansion_relocator` maps
those positions back onto the text as written, and takes the spans away from a word that
holds an expansion: a fix never edits text measured on a value that is not written there
(``--max-num-partial-prefills $(PREFILLS)`` with ``PREFILLS=2`` is left to a person).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from vllm_upgrade_check.parsing.words import Point, Token

K8S_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
"""``$(VAR)`` in a Kubernetes container's ``command``, ``args`` and ``env`` values, and the
``$$`` escape (Kubernetes docs, "Define a command and arguments for a container")."""

Relocate = Callable[[Token], Token]


@dataclass(frozen=True)
class _Piece:
    start: int  # offset in the expanded text
    end: int
    written: int  # offset in the text as written
    literal: bool  # written as itself (not an expansion nor ``$$``)


def expanded_pieces(value: str, env: Mapping[str, str | None]) -> tuple[str, list[_Piece]]:
    """``value`` with the references ``env`` knows expanded (an unknown or ``valueFrom`` one,
    ``None`` in ``env``, stays as written and counts as written text), and its pieces: where
    each stretch of the expanded text stands in ``value``."""
    out: list[str] = []
    pieces: list[_Piece] = []
    at = cursor = 0

    def keep(text: str, written: int, literal: bool) -> None:
        nonlocal at
        pieces.append(_Piece(at, at + len(text), written, literal))
        out.append(text)
        at += len(text)

    for m in K8S_REFERENCE.finditer(value):
        found = "$" if m.group(1) is None else env.get(m.group(1))
        if found is None:
            continue  # left as written: part of the literal text around it
        keep(value[cursor : m.start()], cursor, True)
        keep(found, m.start(), False)
        cursor = m.end()
    keep(value[cursor:], cursor, True)
    return "".join(out), pieces


def expansion_relocator(value: str, env: Mapping[str, str | None], relocate: Relocate) -> tuple[str, Relocate]:
    """``(expanded script, relocate)``: ``value`` (a script as written) expanded as the kubelet
    expands it, and a map of a word parsed from the expanded text (1-based line and character
    column in it) to where it is written in ``value`` and then through ``relocate`` (which
    places a word of ``value`` in the file). A word whose span holds an expansion (or a
    ``$$``) keeps its place but loses its spans and neighbours: what a fix would edit there
    is not written as the word reads."""
    expanded, pieces = expanded_pieces(value, env)
    if all(p.literal for p in pieces):
        return expanded, relocate
    exp_starts = _line_starts(expanded)
    written_starts = _line_starts(value)
    starts = [p.start for p in pieces]

    def offset(point: Point) -> int:
        line, column = point
        row = min(max(line - 1, 0), len(exp_starts) - 1)
        return exp_starts[row] + column - 1

    def written(at: int) -> int:
        # the last piece starting at or before `at`: past an expansion, the text after it
        piece = pieces[max(bisect_right(starts, at) - 1, 0)]
        if not piece.literal:
            return piece.written  # in an expansion: where its reference starts
        return piece.written + at - piece.start

    def point(p: Point) -> Point:
        at = written(offset(p))
        row = bisect_right(written_starts, at) - 1
        return row + 1, at - written_starts[row] + 1

    def holds_expansion(token: Token) -> bool:
        span = token.span
        if span is None:
            return False
        a, b = offset(span.start), offset(span.end)
        return any(
            not p.literal and (p.start < b and a < p.end or (p.start == p.end and a <= p.start <= b)) for p in pieces
        )

    def move(token: Token) -> Token:
        moved = token.moved(point)
        if holds_expansion(token):
            moved = replace(moved.unplaced(), whole=None)
        return relocate(moved)

    return expanded, move


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts
