"""Helpers shared by the reporters: rule lookup, mechanical fixes of findings, escaping."""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from vllm_upgrade_check.fixing import MECHANICAL, CannotFix, Edit, planned_edits
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Applicability
from vllm_upgrade_check.parsing.textfiles import OutsideRoots, read_text, resolve_in_roots


def mechanical_fix(finding: Finding, report: Report) -> list[Edit] | None:
    """The edits of ``finding``'s mechanical fix in its file as it is now, or ``None`` when
    there is none (display-only, environment, text moved)."""
    fix = finding.rule.fix
    rel = finding.location.path
    if rel is None or fix.action not in MECHANICAL or fix.applicability == Applicability.DISPLAY_ONLY:
        return None
    try:
        text = read_text(resolve_in_roots([Path(r) for r in report.roots], rel)).text
        edits = planned_edits(finding, text, Version(report.to_version))
    except (CannotFix, OutsideRoots, OSError, ValueError):
        return None
    return edits or None


def subject(finding: Finding) -> str:
    """The finding's subject as written, with its value (``--max-num-seqs 8``)."""
    fact = finding.fact
    text = fact.raw or fact.name
    if fact.value is not None and fact.kind.value == "arg" and "=" not in text:
        text += f" {fact.value}"
    return text


def uri_path(path: str) -> str:
    """``path`` (a relative POSIX path as reported) as a URI reference: percent-encoded, the
    bytes of a file name that is not UTF-8 (decoded with ``surrogateescape``) included, so
    that SARIF ``artifactLocation.uri`` and Markdown links stay valid and point at the file."""
    from urllib.parse import quote

    return quote(path.encode("utf-8", "surrogateescape"), safe="/")
