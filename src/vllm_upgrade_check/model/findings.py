"""Frozen records of what a run found: a rule applied to a fact (:class:`Finding`) and every
finding of one run with its version window (:class:`Report`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
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


@dataclass(frozen=True, order=True)
class Include:
    """One ``-r``/``-c`` line of a requirements file that names another file.

    Attributes:
        path: the including file (a reported path).
        line: the 1-based line of the include.
        option: the option as written (``-r``, ``--constraint``).
        target: the included file, resolved against the includer's folder (a reported path).
    """

    path: str
    line: int
    option: str
    target: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.option} {self.target}"


def chain_text(chain: tuple[Include, ...]) -> str:
    """An include chain as one line, outermost includer first:
    ``requirements.txt:3 -r requirements/prod.txt -> requirements/prod.txt:1 -c gpu.txt``."""
    return " -> ".join(str(link) for link in chain)


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
        included_by: when its file is a requirements file another one includes (``-r``/
            ``-c``), the chain of includes that reach it, outermost first; empty otherwise.
        shared_by: the services or containers (``service api``) that read the words it is
            about, when more than one does (a YAML anchor several services use): the
            finding is reported once, in the place it is written.
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
    included_by: tuple[Include, ...] = ()
    shared_by: tuple[str, ...] = ()

    @property
    def include_context(self) -> str:
        """The include chain that reaches the finding's file (:func:`chain_text`), or ``""``."""
        return chain_text(self.included_by)

    @property
    def shared_context(self) -> str:
        """What else reads the words it is about: ``shared by services a, b, c`` when one
        YAML anchor (or merge key) is read by several services or containers; ``""``
        otherwise."""
        if len(self.shared_by) < 2:
            return ""
        kinds = {who.partition(" ")[0] for who in self.shared_by}
        if len(kinds) == 1:
            kind = next(iter(kinds))
            names = ", ".join(who.partition(" ")[2] for who in self.shared_by)
            return f"shared by {kind}s {names}"
        return "shared by " + ", ".join(self.shared_by)

    @property
    def context(self) -> str:
        """Where the finding's words come from, for the reports: the include chain that
        reaches its file (:func:`chain_text`) and who shares them (:attr:`shared_context`),
        joined by ``; ``; ``""`` when neither applies."""
        return "; ".join(part for part in (self.include_context, self.shared_context) if part)

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
class Gate:
    """What makes a run fail, as the command was asked (``--fail-on``, ``--skip-unreadable``).

    Attributes:
        fail_on: the lowest severity that makes the exit code 1, or ``None`` (``--fail-on
            never``): nothing does.
        strict_skips: ``True`` when a file that configures vLLM and could not be read makes
            the exit code 2 (the gate fails closed; ``--skip-unreadable`` turns it off).
    """

    fail_on: Severity | None = Severity.BLOCKER
    strict_skips: bool = True

    @property
    def fail_on_name(self) -> str:
        """``fail_on`` as written on the command line (``blocker`` ... ``never``)."""
        return self.fail_on.value if self.fail_on is not None else "never"

    def fails(self, severity: Severity) -> bool:
        """Whether a finding of ``severity`` makes the run fail."""
        return self.fail_on is not None and severity.rank >= self.fail_on.rank

    def fails_closed(self, skip: Skipped) -> bool:
        """Whether ``skip`` makes the run fail (exit 2)."""
        return self.strict_skips and skip.configures_vllm


@dataclass(frozen=True)
class PathBase:
    """Where the paths of the outputs that point at files (SARIF, GitHub annotations,
    Markdown links, console, JUnit) start: the repository root (the nearest folder holding
    ``.git`` above the scanned paths), else the working directory when they lie under it,
    else the scanned folder.

    Attributes:
        root: the base folder as an absolute POSIX path (``/home/ci/repo``).
        kind: ``repository root``, ``working directory`` or ``scanned folder``.
        paths: each reported path (:attr:`Location.path`, :attr:`Skipped.path`, relative to
            the scanned root) -> the same file relative to ``root`` (``Dockerfile`` ->
            ``deploy/Dockerfile`` for ``scan deploy``); an absolute POSIX path for a file
            outside ``root``.
        roots: the scanned roots the same way (``deploy``; ``.`` for ``root`` itself), for
            the commands a report tells to run from ``root``.
    """

    root: str = ""
    kind: str = "scanned folder"
    paths: Mapping[str, str] = field(default_factory=dict)
    roots: tuple[str, ...] = ()

    def of(self, path: str) -> str:
        """``path`` (as a scanner reported it) relative to :attr:`root` (itself when unknown)."""
        return self.paths.get(path, path)

    @property
    def root_uri(self) -> str:
        """:attr:`root` as a ``file:`` URI ending in ``/`` (SARIF ``originalUriBaseIds``)."""
        from urllib.parse import quote

        return "file://" + quote(self.root.rstrip("/").encode("utf-8", "surrogateescape")) + "/"


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
        gate: what makes this run fail (:attr:`exit_code` follows from it).
        base: where reported paths start in the outputs (see :class:`PathBase`).
        scanned: the files read, as reported paths, in the order read.
        rules: every rule loaded for the run (bundled packs, ``--rules`` packs and the rules
            derived from the environment), with its pack's release, in pack order.
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
    gate: Gate = field(default_factory=Gate)
    base: PathBase = field(default_factory=PathBase)
    scanned: tuple[str, ...] = ()
    rules: tuple[tuple[str, Rule], ...] = ()

    @property
    def failing_skips(self) -> tuple[Skipped, ...]:
        """The skipped files that make the run fail closed (exit 2)."""
        return tuple(s for s in self.skipped if self.gate.fails_closed(s))

    @property
    def failing_findings(self) -> tuple[Finding, ...]:
        """The findings at or above the gate's ``fail_on``."""
        return tuple(f for f in self.findings if self.gate.fails(f.severity))

    @property
    def exit_code(self) -> int:
        """2 when a file that configures vLLM could not be read (and skips are strict), else
        1 when a finding is at or above ``fail_on``, else 0."""
        if self.failing_skips:
            return 2
        return 1 if self.failing_findings else 0

    def verdict(self) -> str:
        """One sentence on why the run passes or fails (``failed: 2 blocker(s) at or above
        --fail-on blocker; 1 file that configures vLLM could not be read: compose.yaml``)."""
        reasons = []
        skips = self.failing_skips
        if skips:
            names = ", ".join(self.base.of(s.path) for s in skips[:5]) + (", ..." if len(skips) > 5 else "")
            reasons.append(f"{len(skips)} file(s) that configure vLLM could not be read ({names})")
        found = self.failing_findings
        if found:
            counts = ", ".join(
                f"{n} {s.value}(s)"
                for s in (Severity.BLOCKER, Severity.WARNING, Severity.INFO)
                if (n := sum(1 for f in found if f.severity == s))
            )
            reasons.append(f"{counts} at or above --fail-on {self.gate.fail_on_name}")
        if reasons:
            return f"failed (exit {self.exit_code}): " + "; ".join(reasons)
        why = (
            "--fail-on never"
            if self.gate.fail_on is None
            else f"nothing at or above --fail-on {self.gate.fail_on_name}"
        )
        text = f"passed: {why}; {self.files_scanned} file(s) scanned"
        unread = sum(1 for s in self.skipped if s.configures_vllm)
        if unread:
            text += f"; {unread} file(s) that configure vLLM not read (--skip-unreadable)"
        return text

    def count(self, severity: Severity) -> int:
        """Number of findings of exactly ``severity``."""
        return sum(1 for f in self.findings if f.severity == severity)
