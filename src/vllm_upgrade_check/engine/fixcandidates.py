"""The fixes one ``fix`` run plans (:class:`Candidate`) and how they are grouped by file and
kept free of overlapping edits."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vllm_upgrade_check.fixing.edits import Edit
from vllm_upgrade_check.fixing.planned import Planned
from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.model.findings import Finding


@dataclass
class Candidate:
    """One fix to make: the plan, its fact, the finding (``None`` for a bump)."""

    planned: Planned
    fact: Fact
    finding: Finding | None
    rule_id: str
    group: int = 0
    edits: list[Edit] = field(default_factory=list)
    members: Sequence[Finding] = ()


def by_file(candidates: Iterable[Candidate]) -> dict[str, list[Candidate]]:
    """The candidates by the file their fact is in (``""`` for none), in order."""
    grouped: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        grouped.setdefault(candidate.fact.location.path or "", []).append(candidate)
    return grouped


def without_overlaps(group: list[Candidate]) -> list[Candidate]:
    """The candidates whose edits overlap no earlier one's (by offset); the same edit made
    by two fixes is made once."""
    kept: list[Candidate] = []
    taken: list[tuple[int, int, str]] = []
    for candidate in sorted(group, key=lambda c: min((e.start for e in c.edits), default=0)):
        edits = []
        clash = False
        for edit in candidate.edits:
            if (edit.start, edit.end, edit.new) in taken:
                continue
            if any(edit.start < end and start < edit.end or (edit.start == edit.end == start) for start, end, _ in taken):
                clash = True
                break
            edits.append(edit)
        if clash:
            continue
        taken.extend((e.start, e.end, e.new) for e in edits)
        candidate.edits = edits
        kept.append(candidate)
    return kept

