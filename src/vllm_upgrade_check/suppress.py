"""Findings the user chose not to see: inline comments, a baseline file, configured ignores.

Inline: ``# vllm-upgrade-check: ignore[VUC0270-001]`` (several ids comma-separated; a bare
``ignore`` silences every rule) on the finding's line or the line above, in any file kind the
scanners read (shell, YAML, Python, Dockerfile, TOML, requirements files all use ``#``).
Baseline: a JSON file of fingerprints with their counts (:mod:`vllm_upgrade_check.baseline`). Configured
ignores: ``[[tool.vllm-upgrade-check.ignore]]`` tables with ``id``, optional ``path`` glob,
``reason`` and optional ``expires`` date; an expired ignore stops applying and is reported.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec

from vllm_upgrade_check.model.facts import Finding

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


def _inline_suppressed(
    finding: Finding, lines_of: dict[str, list[str] | None], roots: Sequence[Path]
) -> bool:
    from vllm_upgrade_check.fixer import CannotFix, read_text, resolve_in_roots

    loc = finding.location
    if loc.path is None or loc.line is None:
        return False
    if loc.path not in lines_of:
        try:
            lines_of[loc.path] = read_text(resolve_in_roots(roots, loc.path)).text.split("\n")
        except (CannotFix, OSError):
            lines_of[loc.path] = None
    lines = lines_of[loc.path]
    if not lines:
        return False
    for number in (loc.line, loc.line - 1):
        if 1 <= number <= len(lines):
            ids = inline_ids(lines[number - 1])
            if ids is not None and ("*" in ids or finding.rule.id.upper() in ids):
                return True
    return False


def rule_selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """``True`` when ``rule_id`` starts with a ``select`` prefix (or ``select`` is empty) and
    with no ``ignore`` prefix; prefixes compare case-insensitively (``VUC027`` selects every
    0.27.x rule, ``VUC000-001`` one rule)."""
    wanted = rule_id.upper()
    if select and not any(wanted.startswith(p.upper()) for p in select):
        return False
    return not any(wanted.startswith(p.upper()) for p in ignore)


def apply_filters(
    findings: list[Finding], options: ScanOptions, today: dt.date | None = None
) -> tuple[list[Finding], list[str]]:
    """Drop suppressed, baselined and ignored findings.

    Returns:
        ``(findings kept, notes for the report)``: how many each mechanism hid, and every
        expired ignore.

    Raises:
        UsageError: an unreadable or malformed baseline file.
    """
    from vllm_upgrade_check.baseline import load_baseline, new_findings

    today = today or dt.date.today()
    notes: list[str] = []
    kept = [f for f in findings if rule_selected(f.rule.id, options.select, options.ignore_rules)]
    if options.inline_suppressions:
        lines_of: dict[str, list[str] | None] = {}
        before = len(kept)
        kept = [f for f in kept if not _inline_suppressed(f, lines_of, list(options.paths))]
        if before - len(kept):
            notes.append(f"{before - len(kept)} finding(s) suppressed by inline comments")
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
