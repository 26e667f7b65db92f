"""Findings the user chose not to see: inline comments, a baseline file, configured ignores.

Inline: ``# vllm-upgrade-check: ignore[VUC0270-001]`` (several ids comma-separated; a bare
``ignore`` silences every rule) after code on the finding's line (that line only), or alone on
the line above it (a comment-only line covers itself and the next line), or alone on the line
above the command the finding's flag belongs to (a backslash-continued shell launch, a
multi-line ``CMD``, an ``LLM(...)`` call over several lines: the whole command), or alone on the
line above a YAML key (its whole value: an ``args:`` list, a compose ``command:`` block), in any file kind the
scanners read (shell, YAML, Python, Dockerfile, TOML, requirements files all use ``#``). An id
that no loaded rule has gives a report note naming the file and line.
Baseline: a JSON file of fingerprints with their counts (:mod:`vllm_upgrade_check.matching.baseline`). Configured
ignores: ``[[tool.vllm-upgrade-check.ignore]]`` tables with ``id``, optional ``path`` glob,
``reason`` and optional ``expires`` date; an expired ignore stops applying and is reported.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.options import Filters, Ignore
from vllm_upgrade_check.parsing.globs import GitIgnoreRules
from vllm_upgrade_check.sources.inline import inline_ids


@lru_cache(maxsize=256)
def _glob(pattern: str) -> GitIgnoreRules:
    """The compiled gitignore-style glob ``pattern`` (each compiled once per run; matched in
    linear time, see :mod:`vllm_upgrade_check.parsing.globs`)."""
    return GitIgnoreRules([pattern])


def covers(ignore: Ignore, finding: Finding) -> bool:
    """``True`` when ``ignore``'s id and path glob match ``finding``."""
    if ignore.id != "*" and ignore.id.upper() != finding.rule.id.upper():
        return False
    if ignore.path is None:
        return True
    rel = finding.location.path
    return rel is not None and _glob(ignore.path).matches(rel)


def _lines(path: str, lines_of: dict[str, list[str] | None], roots: Sequence[Path]) -> list[str] | None:
    # The scan keeps the lines of every file that holds a suppression comment (see
    # sources.inline): the suppression pass reads no file itself.
    return lines_of.get(path)


def _comment_only(line: str) -> bool:
    return line.lstrip().startswith("#")


def _launch_line(finding: Finding) -> int | None:
    """The line the finding's launch (the command, ``LLM(...)`` call or container entry its
    flag belongs to, as the scanner recorded it in ``Fact.group``) starts on, if any."""
    group = finding.fact.group
    if not group:
        return None
    head = group.split(":", 1)[0]
    return int(head) if head.isdigit() else None


def _continued(line: str) -> bool:
    """Whether ``line`` ends in a ``\\`` that joins the next line to it (shell, Dockerfile)."""
    stripped = line.rstrip()
    return stripped.endswith("\\") and not _comment_only(line)


def _command_start(lines: Sequence[str], line: int, launch: int | None) -> int:
    """The first line of the command holding 1-based ``line``: the launch's first line when
    the scanner recorded one above it, then up through lines that end in ``\\``
    (``exec \\`` before ``vllm serve``, ``CMD [ \\``)."""
    start = launch if launch is not None and launch < line else line
    while start > 1 and start - 1 <= len(lines) and _continued(lines[start - 2]):
        start -= 1
    return start


def _inline_suppressed(
    finding: Finding,
    lines_of: dict[str, list[str] | None],
    roots: Sequence[Path],
    blocks: Sequence[tuple[int, int]] = (),
) -> bool:
    loc = finding.location
    if loc.path is None or loc.line is None:
        return False
    lines = _lines(loc.path, lines_of, roots)
    if not lines:
        return False
    numbers = [loc.line, loc.line - 1]
    # a YAML key right below a comment: the comment covers the key's whole value
    numbers += [key - 1 for key, last in blocks if key <= loc.line <= last]
    start = _command_start(lines, loc.line, _launch_line(finding))
    if start < loc.line:
        numbers += [start, start - 1]  # the line the command starts on, and the one above it
    for number in numbers:
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


def check_ignores(ignores: Sequence[Ignore], known_ids: Iterable[str]) -> None:
    """Check that every configured ignore names ``*`` or a rule id in ``known_ids``
    (case-insensitive), so that a mistyped id cannot leave the finding it meant in the gate
    unnoticed, nor an ignore that can never apply sit in the configuration. Ids of the rules
    generated from a release's wheel (``VUCENV…``, made only when an environment is read) are
    taken as given.

    Raises:
        UsageError: naming the configuration file and line of the first unknown id.
    """
    from vllm_upgrade_check.errors import UsageError

    known = {i.upper() for i in known_ids}
    for ignore in ignores:
        wanted = ignore.id.upper()
        if wanted == "*" or wanted in known or wanted.startswith("VUCENV"):
            continue
        close = sorted(i for i in known if i.startswith(wanted.rsplit("-", 1)[0]))[:3]
        hint = f" (rules of that release: {', '.join(close)} …)" if close else ""
        raise UsageError(
            f"ignore id {ignore.id!r} matches no rule id{hint}; see 'vllm-upgrade-check rules list'",
            ignore.source or None,
            ignore.line,
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
    filters: Filters,
    roots: Sequence[Path] = (),
    today: dt.date | None = None,
    known_ids: Iterable[str] | None = None,
    scanned: Iterable[str] = (),
    lines_of: dict[str, list[str] | None] | None = None,
    blocks_of: dict[str, list[tuple[int, int]]] | None = None,
) -> tuple[list[Finding], list[str]]:
    """Drop suppressed, baselined and ignored findings.

    Args:
        filters: what not to report.
        roots: the scanned roots (to read a file whose lines the scan did not keep).
        known_ids: every loaded rule id; when given, inline ``ignore[...]`` ids in the files
            ``scanned`` (relative paths, as in fact locations) that are not among them give notes.
        lines_of: lines of files already read by the scan (:func:`~vllm_upgrade_check.sources.inline.suppression_lines`), by
            relative path; other files are read when a finding needs them.
        blocks_of: by relative path, ``(key line, last line)`` of the YAML keys written right
            below a suppression comment (the scan's ``FileResult.blocks``): such a comment
            covers every line of the key's value.

    Returns:
        ``(findings kept, notes for the report)``: how many each mechanism hid, and every
        expired ignore.

    Raises:
        UsageError: an unreadable or malformed baseline file.
    """
    from vllm_upgrade_check.matching.baseline import load_baseline, new_findings

    today = today or dt.date.today()
    notes: list[str] = []
    kept = [f for f in findings if rule_selected(f.rule.id, filters.select, filters.ignore_rules)]
    if filters.inline_suppressions:
        lines_of = {} if lines_of is None else lines_of
        before = len(kept)
        blocks = blocks_of or {}
        kept = [
            f
            for f in kept
            if not _inline_suppressed(f, lines_of, list(roots), blocks.get(f.location.path or "", ()))
        ]
        if before - len(kept):
            notes.append(f"{before - len(kept)} finding(s) suppressed by inline comments")
        if known_ids is not None:
            notes.extend(unknown_inline_ids(scanned, known_ids, list(roots), lines_of))
    active = [i for i in filters.ignores if not i.expired(today)]
    for ignore in filters.ignores:
        if ignore.expired(today):
            where = f" ({ignore.path})" if ignore.path else ""
            notes.append(
                f"ignore of {ignore.id}{where} in {ignore.source or 'configuration'} expired on "
                f"{ignore.expires}: its findings are reported again ({ignore.reason})"
            )
    if active:
        before = len(kept)
        kept = [f for f in kept if not any(covers(i, f) for i in active)]
        if before - len(kept):
            notes.append(f"{before - len(kept)} finding(s) ignored by configuration")
    if filters.baseline is not None:
        known = load_baseline(filters.baseline)
        before = len(kept)
        kept = new_findings(kept, known)
        notes.append(f"{before - len(kept)} finding(s) in baseline {filters.baseline} not reported")
    return kept, notes
