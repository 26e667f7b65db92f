"""Data model: rule packs (pydantic, validated from YAML) and the frozen records that flow
through the pipeline (facts, skipped files, findings, reports)."""

from vllm_upgrade_check.model.facts import (
    Fact,
    FactKind,
    Finding,
    Location,
    Report,
    Skipped,
    VersionBasis,
)
from vllm_upgrade_check.model.pack import (
    Applicability,
    Evidence,
    Fix,
    FixAction,
    Match,
    MatchKind,
    Pack,
    Rule,
    Severity,
)

__all__ = [
    "Applicability",
    "Evidence",
    "Fact",
    "FactKind",
    "Finding",
    "Fix",
    "FixAction",
    "Location",
    "Match",
    "MatchKind",
    "Pack",
    "Report",
    "Rule",
    "Severity",
    "Skipped",
    "VersionBasis",
]
