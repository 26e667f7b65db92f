"""The candidate rules of a draft pack: :class:`_Rules` numbers their ids from
the release's :func:`rule_id_prefix`, keeps their names unique and tags them
:data:`DRAFT_TAGS`; the helpers write their ``kind: wheel`` evidence.
"""

from __future__ import annotations

import re
from typing import Any

from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.derive.diff import SurfaceDiff
from vllm_upgrade_check.knowledge.derive.surface import SourceRef

__all__ = [
    "DRAFT_TAGS",
    "rule_id_prefix",
]


DRAFT_TAGS = ["draft", "unreviewed"]
"""Tags of every candidate rule of a draft pack."""


def rule_id_prefix(release: str) -> str:
    """``VUC`` plus the release's digits: ``0.28.0`` -> ``VUC0280``, ``0.6.1.post1`` ->
    ``VUC061P1`` (the id pattern allows letters, not dots).

    Raises:
        UsageError: ``release`` is not a PEP 440 version.
    """
    try:
        version = Version(release)
    except InvalidVersion:
        raise UsageError(f"not a valid version: {release!r}") from None
    prefix = "VUC" + "".join(str(p) for p in version.release)
    if version.post is not None:
        prefix += f"P{version.post}"
    if version.pre is not None:
        prefix += f"{version.pre[0].upper()}{version.pre[1]}"
    if version.dev is not None:
        prefix += f"D{version.dev}"
    return prefix


def _kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _where(version: str, ref: SourceRef | None) -> str:
    """``vllm-X wheel: path:line`` for a summary line (``vllm-X wheel`` without a ref)."""
    if ref is None:
        return f"vllm-{version} wheel"
    return f"vllm-{version} wheel: {ref.path}:{ref.line}"


def _wheel_item(version: str, ref: SourceRef | None, finding: str, default_path: str = "vllm/") -> dict:
    """A ``kind: wheel`` evidence item: ``finding`` read at ``ref`` of the vllm-``version``
    wheel (``default_path`` when the line is not known; line 0, a binary file, has none)."""
    item: dict = {"kind": "wheel", "release": version, "path": ref.path if ref else default_path}
    if ref is not None and ref.line >= 1:
        item["line"] = ref.line
    item["finding"] = finding
    return item


def _removed_evidence(diff: SurfaceDiff, what: str, ref: SourceRef) -> list[dict]:
    return [
        _wheel_item(
            diff.old_version,
            ref,
            f"{what} is defined here in vllm-{diff.old_version} and absent in vllm-{diff.new_version} "
            "(found by rules derive)",
        )
    ]


def _deprecation_evidence(diff: SurfaceDiff, rename: Any) -> list[dict]:
    dep = rename.deprecation
    return [_wheel_item(diff.old_version, dep.ref, f"deprecation notice: {dep.message[:300]}")]


class _Rules:
    """Collects candidate rules with ids numbered from 001 and unique names."""

    def __init__(self, diff: SurfaceDiff) -> None:
        self.diff = diff
        self.prefix = rule_id_prefix(diff.new_version)
        self.rules: list[dict] = []
        self.names: set[str] = set()

    def add(
        self,
        name: str,
        severity: str,
        match: dict,
        message: str,
        fix: dict,
        why: str,
        evidence: list[dict],
        **extra: Any,
    ) -> None:
        base = _kebab(name)
        unique, n = base, 2
        while unique in self.names:
            unique, n = f"{base}-{n}", n + 1
        self.names.add(unique)
        rule: dict = {
            "id": f"{self.prefix}-{len(self.rules) + 1:03d}",
            "name": unique,
            "severity": severity,
            "match": match,
            "message": message,
            "fix": fix,
            "docs": {"why": why, **extra},
            "evidence": evidence,
            "tags": list(DRAFT_TAGS),
        }
        self.rules.append(rule)
