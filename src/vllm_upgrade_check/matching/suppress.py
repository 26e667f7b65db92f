"""Findings the user chose not to see: inline comments, a baseline file, configured ignores.

Inline: ``# vllm-upgrade-check: ignore[VUC0270-001]`` (several ids comma-separated; a bare
``ignore`` silences every rule) after code on the finding's line (that line only), or alone on
the line above it (a comment-only line covers itself and the next line), in any file kind the
scanners read (shell, YAML, Python, Dockerfile, TOML, requirements files all use ``#``). An id
that no loaded rule has gives a report note naming the file and line.
Baseline: a JSON file of fingerprints with their counts (:mod:`vllm_upgrade_check.matching.baseline`). Configured
ignores: ``[[tool.vllm-upgrade-check.ignore]]`` tables with ``id``, optional ``path`` glob,
``reason`` and optional ``expires`` date; an expired ignore stops applying and is reported.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec

from vllm_upgrade_check.model.findings import Finding

if TYPE_CHECKING:  # pragma: no cover
    from vllm_upgrade_check.engine import ScanOptions

_INLINE = re.compile(r"#\s*vllm-upgrade-check:\s*ignore(?:\[(?P<ids>[^\]]*)\])?", re.I)


@dataclass(frozen=True)
class Ignore:
    """One configured ignore.

    Attributes:
        id: rule id (case-insensitive) or ``*`` for every rule.
        path: gitignore-style glob of relative paths, or ``None`` for every path.
        reason: why (required: shown when the ignore expires).
        expires: last day the ignore applies, or ``None``.
        source: the configuration file it came from, for messages.
    """

    id: str
    reason: str
    path: str | None = None
    expires: dt.date | None = None
    source: str = ""

    def expired(self, today: dt.date) -> bool:
        """``True`` once ``today`` is after :attr:`expires`."""
        return self.expires is not None and today > self.expires

    def covers(self, finding: Finding) -> bool:
        """``True`` when the ignore's id and path glob match ``finding``."""
        if self.id != "*" and self.id.upper() != finding.rule.id.upper():
            return False
        if self.path is None:
            return True
        rel = finding.location.path
        return rel is not None and pathspec.PathSpec.from_lines("gitwildmatch", [self.path]).match_file(rel)


def inline_ids(line: str) -> set[str] | None:
    """The rule ids an inline comment on ``line`` silences (upper-case), ``{"*"}`` for a bare
    ``ignore``, or ``None`` when the line has no such comment."""
    m = _INLINE.search(line)
    if not m:
        return None
    ids = m.group("ids")
    if ids is None or not ids.strip():
        return {"*"}
    return {part.strip().upper() for part in ids.split(",") if part.strip()}


def suppression_lines(text: str) -> list[str]:
    """The lines of a scanned file for the inline-suppression pass: all of them when the
    text has a suppression comment, none otherwise (so that pass never reads it again)."""
    return text.split("\n") if _INLINE.search(text) else []


def _lines(path: str, lines_of: dict[str, list[str] | None], roots: Sequence[Path]) -> list[str] | None:
    from vllm_upgrade_check.parsing.textfiles import OutsideRoots, read_text, resolve_in_roots

    if path not in lines_of:
        try:
            lines_of[path] = read_text(resolve_in_roots(roots, path)).text.split("\n")
        except (OutsideRoots, OSError):
            lines_of[path] = None
    return lines_of[path]


def _comment_only(line: str) -> bool:
    return line.lstrip().startswith("#")


def _inline_suppressed(
    finding: Finding, lines_of: dict[str, list[str] | None], roots: Sequence[Path]
) -> bool:
    loc = finding.location
    if loc.path is None or loc.line is None:
        return False
    lines = _lines(loc.path, lines_of, roots)
    if not lines:
        return False
    for number in (loc.line, loc.line - 1):
        if not 1 <= number <= len(lines):
            continue
        line = lines[number - 1]
        if number != loc.line and not _comment_only(line):
            continue  # a trailing comment covers its own line only
        ids = inline_ids(line)
        if ids is not None and ("*" in ids or finding.rule.id.upper() in ids):
            return True
    return False


def unknown_inline_ids(
    paths: Iterable[str],
    known_ids: Iterable[str],
    roots: Sequence[Path],
    lines_of: dict[str, list[str] | None] | None = None,
) -> list[str]:
    """Report notes for inline ``ignore[...]`` ids that no loaded rule has.

    Args:
        paths: relative paths of scanned files (as in fact locations).
        known_ids: every loaded rule id (case-insensitive).
        roots: the scanned roots the paths are relative to.
        lines_of: cache of file lines by path, shared with the suppression pass.

    Returns:
        one note per unknown id, ``"run.sh:2: inline ignore of unknown rule id VUC9999-001"``,
        in path and line order.
    """
    cache = {} if lines_of is None else lines_of
    known = {i.upper() for i in known_ids}
    notes = []
    for path in sorted(set(paths)):
        for number, line in enumerate(_lines(path, cache, roots) or [], start=1):
            ids = inline_ids(line)
            for rule_id in sorted((ids or set()) - known - {"*"}):
                notes.append(
                    f"{path}:{number}: inline ignore of unknown rule id {rule_id} (no loaded rule has it)"
                )
    return notes


def check_prefixes(select: Sequence[str], ignore: Sequence[str], known_ids: Iterable[str]) -> None:
    """Check that every ``--select``/``--ignore`` prefix starts at least one rule id in
    ``known_ids`` (case-insensitive), so that a mistyped ``--select`` cannot turn the gate off.

    Raises:
        UsageError: naming the first option value that is empty or matches no rule id.
    """
    from vllm_upgrade_check.errors import UsageError

    known = [i.upper() for i in known_ids]
    for option, prefixes in (("--select", select), ("--ignore", ignore)):
        for prefix in prefixes:
            if not prefix.strip():  # an empty prefix starts every id: --ignore "" would turn the gate off
                raise UsageError(f"{option} is empty (give a rule id or an id prefix such as VUC027)")
            if not any(rule_id.startswith(prefix.upper()) for rule_id in known):
                raise UsageError(
                    f"{option} {prefix} matches no rule id (see 'vllm-upgrade-check rules list')"
                )


def rule_selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """``True`` when ``rule_id`` starts with a ``select`` prefix (or ``select`` is empty) and
    with no ``ignore`` prefix; prefixes compare case-insensitively (``VUC027`` selects every
    0.27.x rule, ``VUC000-001`` one rule)."""
    wanted = rule_id.upper()
    if select and not any(wanted.startswith(p.upper()) for p in select):
        return False
    return not any(wanted.startswith(p.upper()) for p in ignore)


def apply_filters(
    findings: list[Finding],
    options: ScanOptions,
    today: dt.date | None = None,
    known_ids: Iterable[str] | None = None,
    scanned: Iterable[str] = (),
    lines_of: dict[str, list[str] | None] | None = None,
) -> tuple[list[Finding], list[str]]:
    """Drop suppressed, baselined and ignored findings.

    Args:
        known_ids: every loaded rule id; when given, inline ``ignore[...]`` ids in the files
            ``scanned`` (relative paths, as in fact locations) that are not among them give notes.
        lines_of: lines of files already read by the scan (:func:`suppression_lines`), by
            relative path; other files are read when a finding needs them.

    Returns:
        ``(findings kept, notes for the report)``: how many each mechanism hid, and every
        expired ignore.

    Raises:
        UsageError: an unreadable or malformed baseline file.
    """
    from vllm_upgrade_check.matching.baseline import load_baseline, new_findings

    today = today or dt.date.today()
    notes: list[str] = []
    kept = [f for f in findings if rule_selected(f.rule.id, options.select, options.ignore_rules)]
    if options.inline_suppressions:
        lines_of = {} if lines_of is None else lines_of
        before = len(kept)
        kept = [f for f in kept if not _inline_suppressed(f, lines_of, list(options.paths))]
        if before - len(kept):
            notes.append(f"{before - len(kept)} finding(s) suppressed by inline comments")
        if known_ids is not None:
            notes.extend(unknown_inline_ids(scanned, known_ids, list(options.paths), lines_of))
    active = [i for i in options.ignores if not i.expired(today)]
    for ignore in options.ignores:
        if ignore.expired(today):
            where = f" ({ignore.path})" if ignore.path else ""
            notes.append(
                f"ignore of {ignore.id}{where} in {ignore.source or 'configuration'} expired on "
                f"{ignore.expires}: its findings are reported again ({ignore.reason})"
            )
    if active:
        before = len(kept)
        kept = [f for f in kept if not any(i.covers(f) for i in active)]
        if before - len(kept):
            notes.append(f"{before - len(kept)} finding(s) ignored by configuration")
    if options.baseline is not None:
        known = load_baseline(options.baseline)
        before = len(kept)
        kept = new_findings(kept, known)
        notes.append(f"{before - len(kept)} finding(s) in baseline {options.baseline} not reported")
    return kept, notes
