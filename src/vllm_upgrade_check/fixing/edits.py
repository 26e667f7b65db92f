"""Planned changes turned into edits of a file's text, and edits applied.

An :class:`~.interface.Edit` replaces the exact text expected at its offsets; applying
refuses a stale edit (the text there is no longer what the fix read), so a file that
changed since it was scanned is never written.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from packaging.version import Version

from vllm_upgrade_check.errors import VucError
from vllm_upgrade_check.fixing.interface import CannotFix, Edit, StaleEditError
from vllm_upgrade_check.fixing.planned import Planned, plan_finding
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.parsing.textfiles import read_text, write_atomic
from vllm_upgrade_check.parsing.textpos import line_index
from vllm_upgrade_check.parsing.words import render
from vllm_upgrade_check.sources.discovery import OutsideRoots, resolve_in_roots


def edits_of(planned: Planned, text: str, path: str, rule_id: str, line: int, group: int = 0) -> list[Edit]:
    """The edits of ``planned`` in ``text`` (the file ``path`` as it is now).

    Every change's span is found in the text, what it must hold is checked, and a new
    value is quoted for the quotes found around it.

    Raises:
        CannotFix: a span is not in the text, or does not hold what the fix read there.
    """
    index = line_index(text)
    out: list[Edit] = []
    for change in planned.changes:
        span = change.span
        at = _relative(span.line, line)
        try:
            start = index.offset(span.line, span.column)
            end = index.offset(span.end_line, span.end_column)
        except ValueError as exc:
            raise CannotFix(str(exc)) from None
        if not 0 <= start <= end <= len(text):
            raise CannotFix(f"{at}the place the scan recorded is not in the file")
        old = text[start:end]
        if change.expect is not None and old != change.expect:
            raise CannotFix(
                f"{at}written as {old!r}, which reads as {change.expect!r} (a variable, a "
                "default or an escape decides it); change it by hand"
            )
        if change.inside is not None:
            inner_start = index.offset(change.inside.line, change.inside.column)
            inner_end = index.offset(change.inside.end_line, change.inside.end_column)
            if not start <= inner_start <= inner_end <= end:
                raise CannotFix(f"{at}what would be cut does not hold the flag")
        new = change.new
        if change.syntax:
            before = text[start - 1] if start > 0 else ""
            quote = before if before in "'\"" and before and text[end : end + 1] == before else ""
            rendered = render(new, change.syntax, quote)
            if rendered is None:
                where = f"inside the {quote} quotes there" if quote else "there as it is written"
                raise CannotFix(f"{at}{new!r} cannot be written {where}; write it by hand")
            new = rendered
        if "\n" in new and "\r\n" in old and "\r\n" not in new:
            new = new.replace("\n", "\r\n")  # the scanners read lines without their \r
        if new == old:
            continue
        listed = None
        if change.listed is not None:
            place, left, empty = change.listed
            try:
                listed = (
                    index.offset(place.line, place.column),
                    index.offset(place.end_line, place.end_column),
                    left,
                    empty,
                )
            except ValueError as exc:
                raise CannotFix(str(exc)) from None
            if not listed[0] <= start <= end <= listed[1] <= len(text):
                raise CannotFix(f"{at}the cut is not inside the list the scan recorded")
        out.append(Edit(path, start, end, old, new, rule_id, planned.description, line, group, listed))
    return out


def empty_lists(fixes: Sequence[list[Edit]], text: str) -> tuple[list[list[Edit]], dict[int, int]]:
    """The edits of ``fixes`` (each fix's edits of one file, ``text``) with the cuts out of
    one list that together take every element of it made one replacement of the list by
    what its scanner recorded (``args:`` left with no item would read as null: it becomes
    ``args: []``, its line and comment kept). Whether the cuts took every element is told
    by what they leave of the list: exactly what the scanner said remains then.

    Returns:
        ``(edits per fix, in the order given; fix index -> index of the fix whose group
        it joins)``: the fixes that empty one list are applied together or not at all.
    """
    lists: dict[tuple[int, int], list[tuple[int, Edit]]] = {}
    for number, edits in enumerate(fixes):
        for edit in edits:
            if edit.listed is not None and edit.new == "":
                lists.setdefault(edit.listed[:2], []).append((number, edit))
    out = [list(edits) for edits in fixes]
    joins: dict[int, int] = {}
    for (start, end), cuts in lists.items():
        left, empty = cuts[0][1].listed[2:]  # type: ignore[index]
        spans = sorted({(e.start, e.end) for _n, e in cuts})
        if any(a < b_end for (_a0, b_end), (a, _b) in zip(spans, spans[1:], strict=False)):
            continue  # overlapping cuts: the next pass sees the list again
        rest, cursor = [], start
        for a, b in spans:
            rest.append(text[cursor:a])
            cursor = b
        rest.append(text[cursor:end])
        if "".join(rest).replace("\r\n", "\n") != left.replace("\r\n", "\n"):
            continue  # some element stays: each cut is made as it is
        old = text[start:end]
        new = empty.replace("\n", "\r\n") if "\r\n" in old and "\r\n" not in empty else empty
        owners = sorted({n for n, _e in cuts})
        taken = {id(e) for _n, e in cuts}
        for number in owners:
            out[number] = [e for e in out[number] if id(e) not in taken]
            joins[number] = owners[0]
        head = cuts[0][1]
        out[owners[0]].append(Edit(head.path, start, end, old, new, head.rule_id, head.description, head.line, head.group))
        for number, cut_edit in cuts[1:]:
            # Each fix keeps an edit of its own (empty, where the list ends) so that the
            # summary names it: its words went with the list's one replacement.
            out[number].append(replace(cut_edit, start=end, end=end, old="", new="", listed=None))
    return out, joins


def apply_to_text(text: str, edits: Sequence[Edit], path: str = "") -> str:
    """``text`` with ``edits`` (non-overlapping) applied.

    Raises:
        StaleEditError: the text at an edit's offsets is not its ``old`` text.
    """
    pieces: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < cursor or text[edit.start : edit.end] != edit.old:
            raise StaleEditError(
                f"file changed since it was scanned: expected {edit.old!r}; nothing written to it",
                path or edit.path,
                edit.line or None,
            )
        pieces += (text[cursor : edit.start], edit.new)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def by_path(edits: Iterable[Edit]) -> dict[str, list[Edit]]:
    """``edits`` grouped by file, in order."""
    grouped: dict[str, list[Edit]] = {}
    for edit in edits:
        grouped.setdefault(edit.path, []).append(edit)
    return grouped


_C_ESCAPES = {"\t": "\\t", "\n": "\\n", '"': '\\"', "\\": "\\\\", "\r": "\\r"}


def diff_name(name: str) -> bytes:
    """A diff header's file name: as is, or, where it holds a space, a control character, a
    quote or a backslash, in double quotes with C escapes as git writes them (``git apply``
    and GNU ``patch`` both read them back; GNU ``patch`` would end a bare name at a space),
    so that a tab or newline in a name cannot end the header."""
    if not any(c in _C_ESCAPES or c == " " or ord(c) < 32 or ord(c) == 127 for c in name):
        return name.encode("utf-8", "surrogateescape")
    out = []
    for c in name:
        if c in _C_ESCAPES:
            out.append(_C_ESCAPES[c])
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return ('"' + "".join(out) + '"').encode("utf-8", "surrogateescape")


def diff_bytes(files: Iterable[tuple[str, bytes, bytes]]) -> bytes:
    """A unified diff (``a/PATH`` / ``b/PATH``) of ``(relative path, before, after)`` file
    contents, byte for byte as ``git apply`` and ``patch`` read it: the file's own encoding,
    BOM and line ends, and ``\\ No newline at end of file`` after a last line without one."""
    out: list[bytes] = []
    for rel, before, after in files:
        lines = difflib.diff_bytes(
            difflib.unified_diff,
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=diff_name("a/" + rel),
            tofile=diff_name("b/" + rel),
        )
        for line in lines:
            if line.endswith(b"\n"):
                out.append(line)
            elif line.startswith((b"---", b"+++", b"@@")):
                out.append(line + b"\n")
            else:
                out.append(line + b"\n\\ No newline at end of file\n")
    return b"".join(out)


def _relative(span_line: int, line: int) -> str:
    """Where a span is, for a refusal reported at the finding's ``line``: nothing on that
    line, else ``N line(s) below:`` / ``above:`` (line numbers of a later pass's text would
    not match the file the user opens)."""
    if line <= 0 or span_line == line:
        return ""
    distance = abs(span_line - line)
    return f"{distance} line{'s' if distance > 1 else ''} {'below' if span_line > line else 'above'}: "


class LineMap:
    """How the lines of one file moved through the passes of a ``fix`` run.

    Each pass records its edits (offsets into that pass's text); a line of any pass's text
    can then be told as a line of the original file or of the file at the end.
    """

    def __init__(self) -> None:
        # Per pass, each edit as (first line, first column, last line, last column, new
        # text's line breaks, whether the new text ends a line).
        self.passes: list[list[tuple[int, int, int, int, int, bool]]] = []

    def record(self, text: str, edits: Sequence[Edit]) -> None:
        """Record one pass's ``edits`` of ``text``."""
        index = line_index(text)
        moves = []
        for edit in sorted(edits, key=lambda e: e.start):
            first, first_col = index.line_col(edit.start)
            last, last_col = index.line_col(edit.end)
            ends = edit.new == "" or edit.new.endswith("\n")
            moves.append((first, first_col, last, last_col, edit.new.count("\n"), ends))
        self.passes.append(moves)

    @staticmethod
    def _forward(line: int, moves: list[tuple[int, int, int, int, int, bool]]) -> int:
        shift = 0
        for first, _first_col, last, last_col, added, _ends in moves:
            if line < first:
                break
            if line == last and last_col == 1 and last > first:
                return first + shift + added  # the line's text follows the new text
            if line <= last:
                return first + shift + min(line - first, added)
            shift += added - (last - first)
        return line + shift

    @staticmethod
    def _backward(line: int, moves: list[tuple[int, int, int, int, int, bool]]) -> int:
        shift = 0
        for first, first_col, last, last_col, added, ends in moves:
            if line < first + shift:
                break
            if line <= first + shift + added:
                if line == first + shift + added and last_col == 1 and first_col == 1 and ends and last > first:
                    return last  # a whole line after removed or replaced whole lines
                return first + min(line - first - shift, last - first)
            shift += added - (last - first)
        return line - shift

    def final(self, line: int, at_pass: int) -> int:
        """``line`` of the text pass ``at_pass`` edited, as a line of the file at the end."""
        for moves in self.passes[at_pass:]:
            line = self._forward(line, moves)
        return line

    def original(self, line: int, at_pass: int | None = None) -> int:
        """``line`` of the text before pass ``at_pass`` (default: the file at the end), as a
        line of the file before the run."""
        stop = len(self.passes) if at_pass is None else at_pass
        for moves in reversed(self.passes[:stop]):
            line = self._backward(line, moves)
        return line


def apply_edits(
    edits: Sequence[Edit], roots: Sequence[Path], overlay: dict[str, bytes] | None = None
) -> tuple[list[str], list[VucError]]:
    """Apply ``edits`` file by file (no check by scanning: for edits made by hand or in
    tests); with ``overlay``, read from and write to it (by real path) instead of the disk.

    Returns:
        ``(relative paths written, errors)``; a file with a stale edit or outside the roots
        is not written and contributes one error, the other files are still written.
    """
    written: list[str] = []
    errors: list[VucError] = []
    for rel, group in sorted(by_path(edits).items()):
        try:
            real = resolve_in_roots(roots, rel)
            source = read_text(real, overlay)
            data = source.encode(apply_to_text(source.text, group, rel))
            if overlay is not None:
                overlay[os.path.realpath(real)] = data
            else:
                write_atomic(real, data, expected=source.encode(source.text))
        except OutsideRoots as exc:
            errors.append(VucError(str(exc), rel))
            continue
        except StaleEditError as exc:
            errors.append(exc)
            continue
        except OSError as exc:
            errors.append(VucError(f"cannot write: {exc.strerror or exc}", rel))
            continue
        written.append(rel)
    return written, errors


def planned_edits(finding: Finding, text: str, target: Version) -> list[Edit]:
    """The edits of ``finding``'s mechanical fix in ``text`` (its file as it is now).

    Raises:
        CannotFix: as :func:`~.planned.plan_finding` and :func:`~.edits.edits_of`.
    """
    planned = plan_finding(finding, target)
    edits = edits_of(planned, text, finding.location.path or "", finding.rule.id, finding.location.line or 0)
    return empty_lists([edits], text)[0][0]
