"""The ``fix`` run: scan, fix, check, write; repeat; then bump vLLM versions when nothing
blocks the upgrade any more.

Each pass scans the files, plans a fix for every finding whose rule has a mechanical one
(:func:`~.planned.plan_finding`), turns the plans into edits (overlapping ones wait for the
next pass), and writes each file only when its fixed text passes the check of
:mod:`.verify`. Requirement pins that a release moves together with vLLM (torch, ...) are
set only with the vLLM pin or image of the same file, and vLLM pins and images are bumped
to the target only once no blocker is left: a bump never opens the gate on a deployment
that still fails at the target.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from vllm_upgrade_check.engine.fixcandidates import Candidate as _Candidate
from vllm_upgrade_check.engine.fixrun import ChangedDuringFix, _Run
from vllm_upgrade_check.fixing.interface import (
    UPGRADE_ID,
    CannotFix,
    Edit,
    FixResult,
    NotBumped,
    Unfixed,
)
from vllm_upgrade_check.fixing.planned import plan_finding, version_change
from vllm_upgrade_check.knowledge.versions import version_from_tag
from vllm_upgrade_check.matching.advisories import VERSION_ADVISORY_IDS
from vllm_upgrade_check.model.facts import COMPILED, Fact, FactKind
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.sources.dispatch import pinned_version
from vllm_upgrade_check.sources.scanners.images import is_vllm_image

__all__ = ["ChangedDuringFix", "fix_paths"]

if TYPE_CHECKING:  # pragma: no cover
    from vllm_upgrade_check.model.options import ScanOptions


def _admits(fact: Fact, target: Version) -> bool | None:
    """Whether vLLM pin or image ``fact`` is at ``target``: ``True`` when it admits it,
    ``False`` when it names an older vLLM, ``None`` when it names none or a newer one."""
    if fact.kind == FactKind.IMAGE:
        version = version_from_tag(fact.value or "")
        if version is None or version > target:
            return None
        return version == target
    try:
        spec = SpecifierSet(fact.value or "")
    except InvalidSpecifier:
        return None
    if not str(spec):
        return None
    if spec.contains(target, prereleases=True):
        return True
    versions = [Version(s.version.removesuffix(".*")) for s in spec if s.operator != "!="]
    return False if versions and min(versions) < target else None


def _vllm_facts(facts: Iterable[Fact]) -> dict[str, list[Fact]]:
    out: dict[str, list[Fact]] = {}
    for fact in facts:
        rel = fact.location.path
        if rel is None:
            continue
        vllm_pin = fact.kind == FactKind.REQUIREMENT and fact.name == "vllm" and fact.origin == "file"
        vllm_image = fact.kind == FactKind.IMAGE and (is_vllm_image(fact.raw or fact.name) or is_vllm_image(fact.name)) and bool(fact.value)
        if vllm_pin or vllm_image:
            out.setdefault(rel, []).append(fact)
    return out


def fix_paths(
    options: ScanOptions,
    unsafe: bool = False,
    bump: bool = True,
    max_passes: int = 10,
    overlay: dict[str, bytes] | None = None,
    hold_at: Severity = Severity.BLOCKER,
) -> FixResult:
    """Scan, fix and scan again until no mechanical fix is left, then, when no blocker is
    left for the target, bump vLLM pins and images to it together with the requirement pins
    of the same files that the target sets (torch, ...).

    With ``overlay`` (real path -> bytes, filled in here) nothing is written: every pass reads
    and edits the overlay (``fix --diff``), and the lines reported are those of the files as
    they are on disk.

    Raises:
        UsageError, RulePackError: as :func:`~vllm_upgrade_check.engine.run_scan`.
    """
    if overlay is not None:
        options = replace(options, request=replace(options.request, overlay=overlay))
    run = _Run(options, unsafe, overlay)
    run.result.hold_at = hold_at
    with run.lock:
        _passes(run, max_passes, bump)
    return run.result


def _files_to_edit(candidates: Iterable[_Candidate], facts: Iterable[Fact], deferred: Iterable[Finding]) -> set[str]:
    """The files a run may edit, as the first scan sees them: those of the fixes to make, of
    the vLLM pins and images a bump moves, and of the pins that move with them."""
    rels = {c.fact.location.path or "" for c in candidates}
    rels |= set(_vllm_facts(facts))
    rels |= {f.location.path or "" for f in deferred}
    return rels - {""}


def _passes(run: _Run, max_passes: int, bump: bool) -> None:
    """The passes of :func:`fix_paths`, with the run's lock taken after the first scan."""
    findings: list[Finding] = []
    facts: list[Fact] = []
    for number in range(max_passes):
        findings, facts = run.scan()
        candidates, _unfixed, deferred = run.classify(findings, facts, Version(run.result.target))
        if number == 0 and run.lock_files(_files_to_edit(candidates, facts, deferred)):
            # Another fix run held them and may have written them: start from what is there now.
            findings, facts = run.scan()
            candidates, _unfixed, deferred = run.classify(findings, facts, Version(run.result.target))
        if not candidates or not run.apply(candidates):
            break
        if run.result.errors:
            break
    findings, facts = run.scan()
    target = Version(run.result.target)
    candidates, unfixed, deferred = run.classify(findings, facts, target)
    unfixed.extend(Unfixed(c.finding, "its fix clashes with another one; run fix again") for c in candidates if c.finding)
    if not run.result.errors:
        unfixed.extend(_bump_phase(run, findings, facts, deferred, target, bump))
    run.result.unfixed = [run.placed(u) for u in unfixed]
    run.result.held_by = [run.placed(u) for u in run.result.held_by]
    not_bumped = [replace(n, line=run.as_scanned(n.path, n.line)) for n in run.result.not_bumped]
    run.result.not_bumped = list(dict.fromkeys(not_bumped))
    run.result.applied = _applied_lines(run)


def _applied_lines(run: _Run) -> list[Edit]:
    """The edits written, one per fix (the first edit of each), each at the line of the fact
    it fixed, told as a line of the file before the run (a removed flag's line is gone at
    the end; a diff's old side shows it there)."""
    out = []
    groups: set[int] = set()
    for edit, at_pass in run.applied:
        if edit.group and edit.group in groups:
            continue
        groups.add(edit.group)
        lines = run.lines[edit.path]
        shown = lines.original(edit.line, at_pass)
        out.append(replace(edit, line=shown))
    return out


def _bump_phase(
    run: _Run,
    findings: Sequence[Finding],
    facts: Sequence[Fact],
    deferred: Sequence[Finding],
    target: Version,
    bump: bool,
) -> list[Unfixed]:
    """Bump vLLM pins and images with the pins that move with them, or say why not."""
    unfixed: list[Unfixed] = []
    vllm = _vllm_facts(facts)
    bumps: list[_Candidate] = []
    left: dict[str, str] = {}  # file -> why its vLLM version does not reach the target
    relock: set[str] = set()
    for rel, pins in vllm.items():
        for fact in pins:
            state = _admits(fact, target)
            if state is True:
                continue
            if fact.spans is not None and fact.spans.note in COMPILED:
                relock.add(rel)  # moves when the lock is made again
                left.setdefault(rel, "its vLLM pin moves when the file is compiled again")
                continue
            if state is None:
                # A URL, no specifier, a tag without a version: no bump sets it, so nothing
                # that must move with it may move either.
                left.setdefault(
                    rel,
                    f"its vLLM requirement {' '.join(fact.raw.split())} names no version the bump can set; "
                    "pin vLLM there, then run fix again",
                )
                continue
            if not bump:
                left[rel] = "vLLM versions are not bumped (--no-bump)"
                continue
            named = pinned_version(fact)
            checked_from = run.options.window.from_version
            if named is not None and checked_from is not None and named < Version(checked_from):
                # --from skipped the releases between this file's own version and it.
                why = (
                    f"it names vLLM {named}, older than --from {checked_from}: the releases between were "
                    f"not checked; run fix with --from {named} (or without --from)"
                )
                run.result.not_bumped.append(NotBumped(rel, fact.location.line, fact.raw, why))
                left[rel] = f"its vLLM version is not bumped: {why}"
                continue
            try:
                planned = version_change(fact, target, f"bump {' '.join(fact.raw.split())} to {target}")
            except CannotFix as exc:
                run.result.not_bumped.append(NotBumped(rel, fact.location.line, fact.raw, str(exc)))
                left[rel] = f"its vLLM version is not bumped: {exc}"
                continue
            bumps.append(_Candidate(planned, fact, None, UPGRADE_ID))
    moving = {rel for rel in vllm if rel not in left}
    companions: list[_Candidate] = []
    waiting: list[tuple[Finding, str]] = []
    locked: list[Finding] = []
    for finding in deferred:
        rel = finding.location.path or ""
        spans = finding.fact.spans
        if spans is not None and spans.note in COMPILED:
            locked.append(finding)
            continue
        if rel not in moving:
            why = left.get(rel, "this file names no vLLM pin or image")
            waiting.append((finding, f"moves with the vLLM version of its file; {why}"))
            continue
        try:
            planned = plan_finding(finding, target)
        except CannotFix as exc:
            unfixed.append(Unfixed(finding, str(exc)))
            continue
        companions.append(_Candidate(planned, finding.fact, finding, finding.rule.id))
    blockers = [
        f
        for f in findings
        if f.severity.rank >= run.result.hold_at.rank
        and f.rule.id not in VERSION_ADVISORY_IDS
        and f.location.path is not None
        and not any(c.finding is f for c in companions)
        and f not in locked
        and not (f.fact.spans is not None and f.fact.spans.note in COMPILED)  # made again by its tool
    ]
    unreadable = [s for s in run.result.skipped if s.configures_vllm]
    if bumps and (blockers or unreadable):
        run.result.held_by = [Unfixed(f, "blocker") for f in blockers]
        run.result.held_by_unreadable = unreadable
        level = "blockers" if run.result.hold_at == Severity.BLOCKER else f"findings at fail-on {run.result.hold_at.value}"
        held = [f"{level} remain for {target}"] if blockers else []
        held += ["files that configure vLLM cannot be read"] if unreadable else []
        reason = f"held back while {' and '.join(held)}"
        for candidate in bumps:
            run.result.not_bumped.append(
                NotBumped(candidate.fact.location.path or "", candidate.fact.location.line, candidate.fact.raw, reason)
            )
        unfixed.extend(
            Unfixed(c.finding, f"moves with the vLLM version of its file, {reason}") for c in companions if c.finding
        )
    elif bumps or companions:
        run.apply([*bumps, *companions], together=True)
        for candidate in companions:
            if candidate.finding is not None and run._key(candidate.finding) in run.refused:
                unfixed.append(Unfixed(candidate.finding, run.refused[run._key(candidate.finding)]))
    unfixed.extend(Unfixed(f, why) for f, why in waiting)
    unfixed.extend(Unfixed(f, f.fact.spans.note if f.fact.spans else "") for f in locked)
    moved = {(c.fact.location.path, c.fact.location.line, c.fact.raw) for c in bumps} if not run.result.held_by else set()
    for finding in run.versions:
        fact = finding.fact
        if (fact.location.path, fact.location.line, fact.raw) in moved:
            continue
        why = left.get(fact.location.path or "", "the vLLM version is not bumped")
        unfixed.append(Unfixed(finding, why if not run.result.held_by else "held back while blockers remain"))
    run.result.relock = sorted(relock | {f.location.path or "" for f in locked})
    return unfixed
