"""The records of the fixing stage and its errors.

A fix is planned from the spans the scanners recorded on each fact (:mod:`.planned`),
turned into :class:`Edit` replacements of exact text in a file, checked by scanning the
fixed text again (:mod:`.verify`) and written atomically (:mod:`.run`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vllm_upgrade_check.errors import VucError
from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import FixAction, Severity

MECHANICAL = frozenset(
    {
        FixAction.REMOVE_ARG,
        FixAction.RENAME,
        FixAction.REPLACE_VALUE,
        FixAction.SET_SPECIFIER,
        FixAction.BUMP_IMAGE,
        FixAction.MOVE_TO_CONFIG,
    }
)
"""Fix actions that can be applied mechanically."""

UPGRADE_ID = "upgrade"
"""``Edit.rule_id`` of the built-in bump of vLLM pins and vLLM image tags to the target."""


class CannotFix(Exception):
    """A finding whose fix cannot be applied mechanically here; the message says why."""


class StaleEditError(VucError):
    """The file changed since the edit was computed: the expected text is not at the offsets."""


@dataclass(frozen=True)
class Edit:
    """One replacement in one file.

    Attributes:
        path: POSIX path relative to the scanned root (as in findings).
        start: character offset of the first replaced character in the decoded file.
        end: character offset just past the replaced text.
        old: the exact text expected at ``[start, end)``.
        new: the replacement text.
        rule_id: the rule whose fix this is, or :data:`UPGRADE_ID`.
        description: one line for the summary (``remove --max-num-partial-prefills 4``).
        line: 1-based line of the fact the edit fixes, for the summary.
        group: edits of one fix share a group: they are applied together or not at all.
        listed: for a cut out of a list that must not be left with nothing, ``(start, end,
            left, empty)``: the list's offsets, what remains of it once every element is cut
            and what to write there then (:func:`~.edits.empty_lists`).
    """

    path: str
    start: int
    end: int
    old: str
    new: str
    rule_id: str
    description: str
    line: int = 0
    group: int = 0
    listed: tuple[int, int, str, str] | None = None


@dataclass(frozen=True)
class Unfixed:
    """A finding left for a person, and why (``display-only``, ``unsafe``, ``value not as written``).

    Attributes:
        finding: the finding.
        reason: why no mechanical fix was made.
        line: the finding's line in the file as it is on disk when the run ends (``None``:
            the finding's own line).
        column: its column there (``None``: the finding's own column).
    """

    finding: Finding
    reason: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class NotBumped:
    """A vLLM pin or image tag older than the target that the bump did not set, and why.

    Attributes:
        path: the file (as reported).
        line: 1-based line of the pin or image.
        raw: the pin or image as read (``vllm/vllm-openai:v0.26.0``).
        reason: why it was left alone (blockers remain, an ARG used elsewhere, a digest, ...).
    """

    path: str
    line: int | None
    raw: str
    reason: str


@dataclass(frozen=True)
class NotWritten:
    """A file whose fixed text failed the check, so nothing was written to it.

    Attributes:
        path: the file (as reported).
        reason: what the check found (``the fixed text would not parse: ...``, ``it would
            lose the model ...``).
        rules: the rules whose fixes were held back.
    """

    path: str
    reason: str
    rules: tuple[str, ...] = ()


@dataclass
class FixResult:
    """What a ``fix`` run did.

    Attributes:
        applied: edits written, in order (lines: the file as it is when the run ends).
        unfixed: findings left for a person (from the last scan).
        not_bumped: vLLM pins and image tags not bumped, with the reason.
        not_written: files whose fixed text failed the check (nothing written to them).
        skipped: files the last scan could not read or parse (nothing in them was fixed).
        errors: stale edits and unwritable files (those files were not written).
        from_version: the run-wide "from" version of the first scan, or ``None``.
        target: the target release.
        held_by: the blockers left at the target that held the bump back (the vLLM
            versions stay where they are, so the next scan still checks from them), each
            with its line in the file on disk.
        held_by_unreadable: files that configure vLLM but could not be read, which also hold
            the bump back (what they hold is not known).
        relock: lock files whose pins move only when the lock is made again.
    """

    applied: list[Edit] = field(default_factory=list)
    unfixed: list[Unfixed] = field(default_factory=list)
    not_bumped: list[NotBumped] = field(default_factory=list)
    not_written: list[NotWritten] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[VucError] = field(default_factory=list)
    from_version: str | None = None
    target: str = ""
    held_by: list[Unfixed] = field(default_factory=list)
    held_by_unreadable: list[Skipped] = field(default_factory=list)
    relock: list[str] = field(default_factory=list)
    hold_at: Severity = Severity.BLOCKER

    @property
    def blocked(self) -> bool:
        """Whether the upgrade is still blocked when the run ends: a finding at or above
        ``hold_at`` (the gate's ``fail-on``) left for a person (or in a file not written), or
        a file that configures vLLM and could not be read. ``fix`` exits 1 then, like
        ``scan``."""
        return (
            bool(self.not_written)
            or any(u.finding.severity.rank >= self.hold_at.rank for u in self.unfixed)
            or any(s.configures_vllm for s in self.skipped)
        )
