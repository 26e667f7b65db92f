"""The state of one ``fix`` run: which findings get a fix now, the edits, the checked writes.

:class:`_Run` holds what the passes of :func:`~.fix.fix_paths` share: the rule packs and
scanners (loaded once), the refusals remembered across passes, how each file's lines moved,
what the run wrote (to notice another writer) and the run's advisory lock
(:class:`~vllm_upgrade_check.parsing.locks.RunLock`). Planning turns findings into
candidates; writing applies a file's candidates when the fixed text passes the check of
:mod:`~vllm_upgrade_check.fixing.verify`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.version import Version

from vllm_upgrade_check.engine.fixcandidates import Candidate as _Candidate
from vllm_upgrade_check.engine.fixcandidates import by_file as _by_file
from vllm_upgrade_check.engine.fixcandidates import without_overlaps as _without_overlaps
from vllm_upgrade_check.engine.scan import response_vocabulary
from vllm_upgrade_check.errors import VucError
from vllm_upgrade_check.fixing.edits import LineMap, apply_to_text, edits_of, empty_lists
from vllm_upgrade_check.fixing.interface import (
    CannotFix,
    Edit,
    FixResult,
    NotBumped,
    NotWritten,
    StaleEditError,
    Unfixed,
)
from vllm_upgrade_check.fixing.planned import Planned, plan_finding, plan_moves, signature
from vllm_upgrade_check.fixing.verify import LINKED_VALUES, FileReading, check, read_file, referenced_readers
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.matching.advisories import VERSION_ADVISORY_IDS
from vllm_upgrade_check.model.facts import UNSURE_MODEL_NOTE, Fact
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import Applicability, FixAction
from vllm_upgrade_check.parsing.locks import RunLock
from vllm_upgrade_check.parsing.textfiles import FileText, read_text, write_atomic
from vllm_upgrade_check.sources.discovery import OutsideRoots, resolve_in_roots
from vllm_upgrade_check.sources.scanners import Scanner, default_scanners

if TYPE_CHECKING:  # pragma: no cover
    from vllm_upgrade_check.model.options import ScanOptions


def _move_key(finding: Finding) -> tuple[str | None, str | None, str]:
    """Which config flag of which launch a ``move_to_config`` finding moves its value into."""
    return (finding.location.path, finding.fact.group, (finding.rule.fix.replacement or "").partition(".")[0])


def _key(finding: Finding, lines: LineMap | None = None) -> tuple[str, str, tuple[str, ...], str]:
    """Which finding a refusal is remembered for across passes: its file, rule, what it reads
    as and its launch (two launches of one file may carry the same flag and value). A launch
    is named by ``line:column`` of the text it was read from; with ``lines`` (how that file's
    lines moved in the passes so far) the line is told as a line of the file before the run,
    so that a launch keeps its name when an earlier pass removed lines above it."""
    group = finding.fact.group or ""
    line, sep, column = group.partition(":")
    if lines is not None and sep and line.isdigit():
        group = f"{lines.original(int(line))}:{column}"
    return (finding.location.path or "", finding.rule.id, signature(finding.fact), group)


class ChangedDuringFix(VucError):
    """A file this run wrote was changed by something else before the run ended."""


class _Run:
    """State of one ``fix`` run."""

    def __init__(self, options: ScanOptions, unsafe: bool, overlay: dict[str, bytes] | None) -> None:
        self.options = options
        self.unsafe = unsafe
        self.overlay = overlay
        self.roots = list(options.paths)
        scanners = options.request.scanners
        self.registry = load_registry(options.rule_paths)  # once for every pass
        vocabulary = response_vocabulary(list(self.registry.rules()))
        self.scanners: Sequence[Scanner] = scanners if scanners is not None else default_scanners(vocabulary)
        self.result = FixResult()
        self.refused: dict[tuple[str, str, tuple[str, ...], str], str] = {}
        self.lines: dict[str, LineMap] = {}
        self.groups = 0
        self.applied: list[tuple[Edit, int]] = []  # each edit written, with the pass (of its file) it was made in
        self.wrote: dict[str, bytes] = {}  # what this run wrote to each file, to notice other writers
        # where the first scan saw each finding (several findings may share a key: the same
        # variable in two services of one compose file)
        self.first_seen: dict[tuple[str, str, tuple[str, ...], str], list[tuple[int | None, int | None]]] = {}
        self.versions: list[Finding] = []  # advisories on a vLLM pin or tag: the bump settles them
        self.lock = RunLock()  # held until the run ends (fix_paths releases it)

    def lock_files(self, rels: Iterable[str]) -> bool:
        """Take the run's lock on the files ``rels`` (those it will edit), before its first
        write, in a stable order (:meth:`RunLock.acquire`); returns whether it had to wait
        for another ``fix`` run (then what was scanned may be stale). With an overlay
        (``fix --diff``) nothing is written and nothing is locked."""
        if self.overlay is not None:
            return False
        paths = []
        for rel in sorted(set(rels)):
            try:
                paths.append(resolve_in_roots(self.roots, rel))
            except (OutsideRoots, OSError):
                continue  # refused when its fix is made
        self.lock.acquire(paths)
        return self.lock.waited

    # -- scanning ---------------------------------------------------------------------------
    def scan(self) -> tuple[list[Finding], list[Fact]]:
        from vllm_upgrade_check.engine import run_scan

        facts: list[Fact] = []
        report = run_scan(self.options, self.registry, facts_out=facts)
        if not self.result.target:
            self.result.from_version, self.result.target = report.from_version, report.to_version
        self.result.skipped = list(report.skipped)
        if not self.lines:  # no edit made yet: the files as they were
            for finding in report.findings:
                loc = finding.location
                seen = self.first_seen.setdefault(self._key(finding), [])
                if (loc.line, loc.column) not in seen:
                    seen.append((loc.line, loc.column))
        return list(report.findings), facts

    def text(self, rel: str) -> FileText:
        """File ``rel`` as it is now.

        Raises:
            ChangedDuringFix: it is not what this run wrote to it (something else wrote it).
        """
        source = read_text(resolve_in_roots(self.roots, rel), self.overlay)
        wrote = self.wrote.get(rel)
        if wrote is not None and source.encode(source.text) != wrote:
            raise ChangedDuringFix("changed by something else while fix ran (nothing more written to it); run fix again", rel)
        return source

    # -- planning ---------------------------------------------------------------------------
    def classify(
        self, findings: Sequence[Finding], facts: Sequence[Fact], target: Version
    ) -> tuple[list[_Candidate], list[Unfixed], list[Finding]]:
        """The fixes to make now, the findings left for a person, and the requirement pins
        that move with vLLM (set in the bump phase). Values moving into one config flag of
        one launch are one fix (:func:`~vllm_upgrade_check.fixing.planned.plan_moves`)."""
        by_file: dict[str, list[Fact]] = {}
        for fact in facts:
            if fact.location.path is not None:
                by_file.setdefault(fact.location.path, []).append(fact)
        candidates: list[_Candidate] = []
        unfixed: list[Unfixed] = []
        deferred: list[Finding] = []
        moves: dict[tuple[str | None, str | None, str], list[Finding]] = {}
        partly = {s.path: s.reason for s in self.result.skipped}
        self.versions = []
        for finding in findings:
            if finding.rule.id in VERSION_ADVISORY_IDS:
                self.versions.append(finding)  # the vLLM version itself: moved by the bump
                continue
            fix = finding.rule.fix
            refused = self.refused.get(self._key(finding))
            if refused is None and finding.location.path in partly:
                # No edit goes into a file that was not read whole: the check that the
                # fixed file reads as intended cannot be made of it.
                refused = f"{partly[finding.location.path]}; fix it by hand"
            if refused is not None:
                unfixed.append(Unfixed(finding, refused))
                continue
            if fix.action == FixAction.SET_SPECIFIER and finding.location.path is not None:
                deferred.append(finding)
                continue
            if fix.action == FixAction.MOVE_TO_CONFIG and finding.location.path is not None:
                moves.setdefault(_move_key(finding), []).append(finding)
                continue
            try:
                planned = plan_finding(finding, target, by_file.get(finding.location.path or "", ()))
            except CannotFix as exc:
                unfixed.append(Unfixed(finding, str(exc)))
                continue
            if not self._allowed(planned, finding, unfixed):
                continue
            candidates.append(_Candidate(planned, finding.fact, finding, finding.rule.id))
        for group in moves.values():
            if group[0].rule.fix.applicability == Applicability.DISPLAY_ONLY:
                unfixed.extend(Unfixed(f, "no mechanical fix") for f in group)
                continue
            try:
                planned = plan_moves(group, by_file.get(group[0].location.path or "", ()))
            except CannotFix as exc:
                unfixed.extend(Unfixed(f, str(exc)) for f in group)
                continue
            if not self._allowed(planned, group[0], unfixed, group):
                continue
            first = min(group, key=lambda f: (f.location.line or 0, f.location.column or 0))
            candidates.append(_Candidate(planned, first.fact, first, first.rule.id, members=group))
        return candidates, unfixed, deferred

    def _allowed(
        self, planned: Planned, finding: Finding, unfixed: list[Unfixed], group: Sequence[Finding] = ()
    ) -> bool:
        """Whether a fix may be made now: an unsafe one only with ``--unsafe-fixes``."""
        if planned.applicability != Applicability.UNSAFE or self.unsafe:
            return True
        spans = finding.fact.spans
        if finding.rule.fix.applicability == Applicability.UNSAFE:
            reason = "unsafe fix: use --unsafe-fixes"
        elif spans is not None and spans.note.startswith(UNSURE_MODEL_NOTE):
            reason = f"unsafe here: {spans.note}; use --unsafe-fixes"
        else:
            reason = "unsafe here: no release's parser says which words the flag takes; use --unsafe-fixes"
        unfixed.extend(Unfixed(f, reason) for f in (group or [finding]))
        return False

    # -- writing ----------------------------------------------------------------------------
    def apply(self, candidates: list[_Candidate], together: bool = False) -> int:
        """Make ``candidates`` (overlapping ones are left for the next pass); returns the
        number of edits written. Each file is written whole or not at all (an atomic
        replace of its checked text). With ``together`` (a vLLM bump and the pins that move
        with it) the files are one change: every fix of every file must pass the check, or
        none is written; a file that cannot be written puts back the ones written before it."""
        texts: dict[str, FileText] = {}
        placed: list[_Candidate] = []
        for candidate in candidates:
            rel = candidate.fact.location.path or ""
            try:
                if rel not in texts:
                    texts[rel] = self.text(rel)
                self.groups += 1
                candidate.group = self.groups
                candidate.edits = edits_of(
                    candidate.planned,
                    texts[rel].text,
                    rel,
                    candidate.rule_id,
                    candidate.fact.location.line or 0,
                    self.groups,
                )
            except (CannotFix, OutsideRoots) as exc:
                self._refuse(candidate, str(exc))
                continue
            except OSError as exc:
                self._refuse(candidate, f"cannot read: {exc.strerror or exc}")
                continue
            placed.append(candidate)
        files: list[tuple[str, list[_Candidate]]] = []
        for rel, group in sorted(_by_file(placed).items()):
            # The cuts of one list that take all of it are one replacement (`args: []`).
            edits, _joins = empty_lists([c.edits for c in group], texts[rel].text)
            for number, candidate in enumerate(group):
                candidate.edits = edits[number]
            kept = _without_overlaps(group)
            if kept:
                files.append((rel, kept))
        if together:
            return self._write_together(files, texts)
        return sum(self._write(rel, texts[rel], group) for rel, group in files)

    def _key(self, finding: Finding) -> tuple[str, str, tuple[str, ...], str]:
        """:func:`_key` with the lines of ``finding``'s file as this run moved them."""
        return _key(finding, self.lines.get(finding.location.path or ""))

    def _refuse(self, candidate: _Candidate, reason: str) -> None:
        if candidate.finding is not None:
            for finding in candidate.members or [candidate.finding]:
                self.refused[self._key(finding)] = reason
        else:
            self.result.not_bumped.append(
                NotBumped(candidate.fact.location.path or "", candidate.fact.location.line, candidate.fact.raw, reason)
            )

    def _write(self, rel: str, source: FileText, group: list[_Candidate]) -> int:
        """Write the fixes of ``group`` to file ``rel`` when the fixed text passes the check:
        all of them, else each on its own that passes; returns the edits written."""
        chosen, _reason = self._checked(rel, source, group, whole=False)
        if not chosen:
            return 0
        edits = [e for c in chosen for e in c.edits]
        try:
            self._store(rel, source, apply_to_text(source.text, edits, rel))
        except (StaleEditError, ChangedDuringFix, VucError) as exc:
            self.result.errors.append(exc)
            return 0
        self._record(rel, source, edits)
        return len(edits)

    def _write_together(self, files: list[tuple[str, list[_Candidate]]], texts: dict[str, FileText]) -> int:
        """:meth:`apply`'s ``together``: check every file, then write them all or none."""
        checked: list[tuple[str, list[_Candidate], str]] = []
        failed: list[tuple[str, str]] = []
        for rel, group in files:
            chosen, reason = self._checked(rel, texts[rel], group, whole=True)
            if not chosen:
                failed.append((rel, reason))
                continue
            edits = [e for c in chosen for e in c.edits]
            try:
                checked.append((rel, chosen, apply_to_text(texts[rel].text, edits, rel)))
            except StaleEditError as exc:
                failed.append((rel, str(exc)))
                self._unwritten(rel, chosen, str(exc))
        done: list[tuple[str, str]] = []  # (file, the text written): put back if a later one fails
        if not failed:
            for rel, _chosen, after in checked:
                try:
                    self._store(rel, texts[rel], after)
                except (ChangedDuringFix, VucError) as exc:
                    self.result.errors.append(exc)
                    failed.append((rel, exc.message))
                    self._unwritten(rel, _chosen, exc.message, told=False)
                    break
                done.append((rel, after))
        if failed:
            for rel, after in reversed(done):
                self._put_back(rel, texts[rel], after)
            first, why = failed[0]
            for rel, chosen, _after in checked:
                if rel != first:
                    self._unwritten(rel, chosen, f"{first} could not be changed ({why}); the vLLM version moves in every file or in none")
            return 0
        written = 0
        for rel, chosen, _after in checked:
            edits = [e for c in chosen for e in c.edits]
            self._record(rel, texts[rel], edits)
            written += len(edits)
        return written

    def _checked(
        self, rel: str, source: FileText, group: list[_Candidate], whole: bool
    ) -> tuple[list[_Candidate], str]:
        """The fixes of ``group`` whose fixed text of ``rel`` passes the check (all of them,
        else, unless ``whole``, each on its own that passes), and why the others do not; the
        others are refused, and a file left with none is told not written."""
        referenced = self._referenced(rel, source.text, group)
        before = read_file(rel, source.text, self.scanners, referenced)
        chosen, reason = self._passing(rel, source.text, before, group, referenced)
        if whole and len(chosen) < len(group):
            chosen = []
        if reason:
            self._unwritten(rel, [c for c in group if c not in chosen], reason, told=not chosen)
        return chosen, reason

    def _unwritten(self, rel: str, refused: list[_Candidate], reason: str, told: bool = True) -> None:
        """Refuse ``refused`` (fixes of ``rel``) for ``reason``; with ``told``, list ``rel``
        as not written."""
        for candidate in refused:
            self._refuse(candidate, f"not written: {reason}")
        if told and refused:
            self.result.not_written.append(NotWritten(rel, reason, tuple(sorted({c.rule_id for c in refused}))))

    def _store(self, rel: str, source: FileText, after: str) -> None:
        """Replace file ``rel`` (read as ``source``) by ``after``, whole (or put it in the
        overlay).

        Raises:
            ChangedDuringFix: another run holds its directory; VucError: it cannot be written.
        """
        data = source.encode(after)
        if self.overlay is not None:
            self.overlay[os.path.realpath(source.path)] = data
        elif not self.lock.hold(source.path):
            raise ChangedDuringFix("another fix run is editing files of its directory; not written (run fix again)", rel)
        else:
            try:
                write_atomic(source.path, data, expected=source.encode(source.text))
            except OSError as exc:
                raise VucError(f"cannot write: {exc.strerror or exc}", rel) from exc
        self.wrote[rel] = data

    def _put_back(self, rel: str, source: FileText, after: str) -> None:
        """Undo :meth:`_store` of ``after`` to ``rel``: its text as read, ``source``."""
        self.wrote[rel] = source.encode(source.text)  # what the file holds again
        if self.overlay is not None:
            self.overlay[os.path.realpath(source.path)] = source.encode(source.text)
            return
        try:
            write_atomic(source.path, source.encode(source.text), expected=source.encode(after))
        except OSError as exc:
            self.result.errors.append(VucError(f"cannot put back its text after another file failed: {exc}", rel))

    def _record(self, rel: str, source: FileText, edits: list[Edit]) -> None:
        """Remember ``edits``, written to ``rel``: the run's applied edits and moved lines."""
        lines = self.lines.setdefault(rel, LineMap())
        self.applied.extend((edit, len(lines.passes)) for edit in edits)
        lines.record(source.text, edits)

    def _passing(
        self, rel: str, text: str, before: FileReading, group: list[_Candidate], referenced: bool | str | tuple[str, ...]
    ) -> tuple[list[_Candidate], str]:
        def verdict(chosen: list[_Candidate]) -> str | None:
            edits = [e for c in chosen for e in c.edits]
            try:
                after_text = apply_to_text(text, edits, rel)
            except StaleEditError as exc:
                return str(exc)
            after = read_file(rel, after_text, self.scanners, referenced)
            replacements = [(e.old, e.new) for e in edits]
            return check(before, after, [(c.fact, c.planned) for c in chosen], replacements)

        reason = verdict(group)
        if reason is None:
            return group, ""
        if len(group) == 1:
            return [], reason
        alone = [c for c in group if verdict([c]) is None]
        if alone and verdict(alone) is None:
            return alone, reason
        return alone[:1], reason

    def _referenced(self, rel: str, text: str, group: list[_Candidate]) -> bool | str | tuple[str, ...]:
        """How ``rel`` was read as a file another file named, when some fact to fix is not
        one the scanners that accept it read: :data:`~.verify.LINKED_VALUES` for a values
        file a helm command passes (its facts are the ``helm`` scanner's), else the names of
        the readers that read those facts (:func:`~.verify.referenced_readers`; ``True``,
        every reader, when none does); ``False`` when every fact is the file's own."""
        plain = read_file(rel, text, self.scanners, referenced=False)
        known = {(signature(f), f.location.line, f.location.column) for f in plain.facts}
        named = [
            c
            for c in group
            if (signature(c.fact), c.fact.location.line, c.fact.location.column) not in known
            and c.fact.scanner != "kustomize"  # a patch file's words, read through its kustomization
        ]
        if not named:
            return False
        if all(c.fact.scanner == "helm" for c in named):
            return LINKED_VALUES
        # a Dockerfile's words an entry-point script reads, a compose file's words its
        # project reads with the build's Dockerfile or entry script: the file read as itself
        if all(c.fact.scanner == "dockerfile" for c in named):
            return False
        if rel.endswith((".yml", ".yaml")) and all(c.fact.scanner == "compose" for c in named):
            return False
        # read again with the readers that read these facts only (another reader of named
        # files would judge the text as a kind of file it is not: a YAML as requirements)
        wanted = [(signature(c.fact), c.fact.location.line, c.fact.location.column) for c in named]
        return referenced_readers(rel, text, self.scanners, wanted) or True

    # -- positions --------------------------------------------------------------------------
    def placed(self, unfixed: Unfixed) -> Unfixed:
        """``unfixed`` at its line and column as scanned, in the file before the run (as
        every line ``fix`` reports is: the fixes made, what is left to a person, whether
        written or shown with ``--diff``): the last scan's line told as a line of the file
        before the run's edits, with the column the first scan saw there (a column on an
        edited line is the column it had)."""
        loc = unfixed.finding.location
        if loc.path not in self.lines or loc.line is None:
            return unfixed
        line = self.lines[loc.path].original(loc.line)
        seen = [s for s in self.first_seen.get(self._key(unfixed.finding), []) if s[0] == line]
        if not seen:
            return replace(unfixed, line=line)
        column = loc.column or 0
        first = min(seen, key=lambda s: abs((s[1] or 0) - column))
        return replace(unfixed, line=first[0], column=first[1])

    def as_scanned(self, rel: str | None, line: int | None) -> int | None:
        """A line of the last scan's text, as a line of the file before the run's edits (the
        line the first scan saw)."""
        if rel is None or line is None or rel not in self.lines:
            return line
        return self.lines[rel].original(line)
