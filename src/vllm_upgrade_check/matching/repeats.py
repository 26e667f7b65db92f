"""Findings without repeats (:func:`distinct`): the same rule on the same words, seen through
several launches that share them (a YAML anchor or merge key several services use), is one
finding, naming the services or containers that share the words; and one finding per
change to one fact (:func:`one_per_change`): rules of several releases on the same words
and subject give the finding of the release that breaks it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.model.findings import Finding


def distinct(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` without repeats: the same rule on the same words, seen through two
    launches that share them (a compose ``<<: *anchor`` merged into two services), is
    reported once, even where the launches run different releases (one fingerprint, one
    finding): the one checked from the oldest release stands (an unknown release counts as
    the oldest), in the place of the first, naming the services or containers that share
    the words (``Finding.shared_by``, sorted) when more than one does. Order is kept."""
    kept: dict[tuple[object, ...], int] = {}
    owners: dict[int, list[str]] = {}
    out: list[Finding] = []
    for finding in findings:
        loc, fact = finding.location, finding.fact
        key = (finding.rule.id, loc.path, loc.line, loc.column, fact.kind, fact.name, fact.value)
        if key not in kept:
            kept[key] = len(out)
            out.append(finding)
        elif _older(finding.from_version, out[kept[key]].from_version):
            out[kept[key]] = finding
        if fact.owner is not None:
            seen = owners.setdefault(kept[key], [])
            if fact.owner not in seen:
                seen.append(fact.owner)
    for index, seen in owners.items():
        if len(seen) > 1:  # one anchor read by several services: named in the one finding
            out[index] = replace(out[index], shared_by=tuple(sorted(seen)))
    return out


def _older(a: str | None, b: str | None) -> bool:
    """Whether release ``a`` is older than ``b`` (``None``: unknown, the oldest)."""
    if a is None or b is None:
        return a is None and b is not None
    return Version(a) < Version(b)


_ARG_KINDS = frozenset({"engine_arg", "cli_flag"})


def _subject(finding: Finding) -> tuple[object, ...]:
    """What a finding says changes, and where: the fact's place and words, and the rule's
    subject (an engine arg and the CLI flag of the same name are one subject), with the
    values it is about."""
    loc, fact, match = finding.location, finding.fact, finding.rule.match
    kind = "arg" if match.kind.value in _ARG_KINDS else match.kind.value
    values = tuple(sorted(getattr(match, "values", None) or ()))
    return (loc.path, loc.line, loc.column, fact.kind, fact.name, fact.value, kind, match.name, values)


def one_per_change(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` with one finding per change to one fact: where rules of several releases
    of the window match the same words for the same subject (``LLM(swap_space=4)``: ignored
    with a warning from 0.18.0 in one pack, a ``TypeError`` from 0.26.0 in another; a flag
    deprecated in one release and removed in a later one), the finding of the release that
    breaks it stands (:func:`_breaks_first`): the most severe, and of those the earliest
    release (the first that breaks it). Rules about other values of the subject (``--quantization aqlm`` and
    ``--quantization marlin``) are other changes. Order is kept."""
    out: list[Finding] = []
    at: dict[tuple[object, ...], int] = {}
    for finding in findings:
        key = _subject(finding)
        index = at.get(key)
        if index is None:
            at[key] = len(out)
            out.append(finding)
        elif _breaks_first(finding, out[index]):
            out[index] = finding
    return out


def _breaks_first(a: Finding, b: Finding) -> bool:
    """Whether ``a`` tells the break better than ``b``: more severe here; as severe, more
    severe in its own release's pack (0.26.0's ``TypeError`` blocker over 0.18.0's
    "ignored" warning, which the target makes a blocker too); else from an earlier release
    (the first that breaks it)."""
    if a.severity.rank != b.severity.rank:
        return a.severity.rank > b.severity.rank
    if a.rule.severity.rank != b.rule.severity.rank:
        return a.rule.severity.rank > b.rule.severity.rank
    try:
        return Version(a.release) < Version(b.release)
    except InvalidVersion:
        return False
