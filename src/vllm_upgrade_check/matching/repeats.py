"""Findings without repeats (:func:`distinct`): the same rule on the same words, seen through
several launches that share them (a YAML anchor or merge key several services use), is one
finding, naming the services or containers that share the words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from packaging.version import Version

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
