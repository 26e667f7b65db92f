"""Frozen records of what a run found: a rule applied to a fact (:class:`Finding`) and every
finding of one run with its version window (:class:`Report`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum

from vllm_upgrade_check.model.facts import Fact, Location, Skipped
from vllm_upgrade_check.model.pack import Rule, Severity


class VersionBasis(str, Enum):
    """How the "from" version of a finding was decided."""

    OPTION = "option"
    """Given with ``--from``."""
    FILE = "file"
    """Read from the same file as the finding (an image tag or a vllm pin)."""
    REPOSITORY = "repository"
    """Read from another scanned file."""
    ENVIRONMENT = "environment"
    """The installed vllm distribution."""
    UNKNOWN = "unknown"
    """Nothing told the version: every release up to the target was checked."""


@dataclass(frozen=True)
class Replacement:
    """One replacement a finding's mechanical fix makes in its file as it is now.

    Attributes:
        start: character offset of the first replaced character (the file decoded, newlines
            as written; SARIF ``deletedRegion.charOffset``).
        end: character offset just past the replaced text.
        new: the text written there (SARIF ``insertedContent``).
    """

    start: int
    end: int
    new: str


@dataclass(frozen=True)
class ReleaseInfo:
    """A release a run crossed, as its packs tell it (for the reporters).

    Attributes:
        release: the release (``0.28.0``).
        notes_url: its release notes, or ``""``.
        summary: its packs' summaries, or ``""``.
        rules: the rules of its packs (loaded in the run), in pack order.
    """

    release: str
    notes_url: str = ""
    summary: str = ""
    rules: tuple[Rule, ...] = ()


@dataclass(frozen=True)
class Finding:
    """A rule applied to a fact.

    Attributes:
        rule: the rule that matched.
        fact: the fact it matched.
        severity: the effective severity (a deprecation not yet removed at the target is a
            ``warning`` whatever the rule's own severity).
        release: the release whose pack holds the rule.
        from_version: the version assumed to be in use for this finding (``None`` = unknown).
        from_basis: how ``from_version`` was decided.
        from_source: human-readable origin of ``from_version`` (``Dockerfile:1``, ...).
        deprecated_only: ``True`` when the target is inside the deprecation window: the thing
            still works at the target but is slated for removal in ``release``.
        fix_before_upgrade: ``True`` when the rule's replacement already exists in
            ``from_version``, so the fix can land before the upgrade.
        edits: the replacements of its mechanical fix in its file as it is (filled in when
            the run is asked for them; empty when there is none).
    """

    rule: Rule
    fact: Fact
    severity: Severity
    release: str
    from_version: str | None
    from_basis: VersionBasis
    from_source: str
    deprecated_only: bool = False
    fix_before_upgrade: bool = False
    edits: tuple[Replacement, ...] = ()

    @property
    def location(self) -> Location:
        """The fact's location."""
        return self.fact.location

    @property
    def fingerprint(self) -> str:
        """A stable 16-hex-digit id of (rule id, path, fact kind, subject as written).

        It ignores line numbers so that baselines survive unrelated edits.
        """
        key = "\x1f".join([self.rule.id, self.fact.location.path or "", self.fact.kind.value, self.fact.raw])
        return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


@dataclass(frozen=True)
class Report:
    """Everything one run found.

    Attributes:
        to_version: the target release.
        from_version: the version detected or given for the run as a whole (``None`` =
            unknown); single findings may assume another (see :class:`Finding`).
        from_basis: how ``from_version`` was decided.
        from_source: where it was read.
        releases: releases whose packs were applied, oldest first.
        findings: sorted by path, line, column, rule id.
        skipped: files that could not be read or parsed.
        files_scanned: number of files read.
        roots: the scanned directories/files as given.
        notes: extra lines for the summary (e.g. "several vllm versions found: ...").
        release_info: the releases crossed, with their packs' notes, summaries and rules.
    """

    to_version: str
    from_version: str | None
    from_basis: VersionBasis
    from_source: str
    releases: tuple[str, ...]
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...] = ()
    files_scanned: int = 0
    roots: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    release_info: tuple[ReleaseInfo, ...] = ()

    def count(self, severity: Severity) -> int:
        """Number of findings of exactly ``severity``."""
        return sum(1 for f in self.findings if f.severity == severity)
