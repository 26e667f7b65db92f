"""``--format sarif``: a SARIF 2.1.0 log (one run) for code-scanning tools.

Rules: every rule that has a result, in ``tool.driver.rules`` (id, name, short/full
description, help, ``properties.severity``/``properties.release``), so the log stays small
whatever the number of packs. Results: ``level``
``error`` for blockers, ``warning`` for warnings, ``note`` for info; a physical location
(relative ``uri`` and ``region``) for findings in files, a logical location for findings in the
Python environment; ``partialFingerprints["vllmUpgradeCheck/v1"]`` is the finding's
fingerprint; mechanical fixes become SARIF ``fixes`` (``deletedRegion`` by character offset).
"""

from __future__ import annotations

import json
from typing import Any

from vllm_upgrade_check import __version__
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.reporters._common import subject, uri_path

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.BLOCKER: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT_KEY = "vllmUpgradeCheck/v1"
INFORMATION_URI = "https://github.com/vllm-project/vllm/releases"


def _rule(pack_release: str, notes_url: str, rule: Any) -> dict[str, Any]:
    help_text = f"{rule.fix.summary}"
    if rule.docs.instead:
        help_text += f"\nInstead: {rule.docs.instead}"
    entry: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": rule.docs.why},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "severity": rule.severity.value,
            "release": pack_release,
            "fix_action": rule.fix.action.value,
            "tags": list(rule.tags),
            "evidence": [e.text for e in rule.evidence],
        },
    }
    if notes_url:
        entry["helpUri"] = notes_url
    return entry


def _result(finding: Finding, report: Report, index: int) -> dict[str, Any]:
    loc = finding.location
    result: dict[str, Any] = {
        "ruleId": finding.rule.id,
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {"text": f"{finding.rule.message} ({subject(finding)})"},
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": {
            "severity": finding.severity.value,
            "release": finding.release,
            "deprecated_only": finding.deprecated_only,
            "fix_before_upgrade": finding.fix_before_upgrade,
        },
    }
    if loc.path is None:
        result["locations"] = [
            {
                "logicalLocations": [
                    {"name": finding.fact.name, "fullyQualifiedName": f"environment/{finding.fact.name}"}
                ]
            }
        ]
    else:
        region: dict[str, int] = {}
        for key, value in (
            ("startLine", loc.line),
            ("startColumn", loc.column),
            ("endLine", loc.end_line),
            ("endColumn", loc.end_column),
        ):
            if value is not None:
                region[key] = value
        physical: dict[str, Any] = {"artifactLocation": {"uri": uri_path(loc.path)}}
        if "startLine" in region:
            physical["region"] = region
        result["locations"] = [{"physicalLocation": physical}]
        edits = finding.edits
        if edits:
            result["fixes"] = [
                {
                    "description": {"text": finding.rule.fix.summary},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": uri_path(loc.path)},
                            "replacements": [
                                {
                                    "deletedRegion": {"charOffset": e.start, "charLength": e.end - e.start},
                                    "insertedContent": {"text": e.new},
                                }
                                for e in edits
                            ],
                        }
                    ],
                }
            ]
    return result


def sarif_log(report: Report) -> dict[str, Any]:
    """The SARIF log object of ``report`` (valid against the SARIF 2.1.0 schema)."""
    notes_urls = {info.release: info.notes_url for info in report.release_info}
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    for finding in report.findings:
        if finding.rule.id not in index:
            index[finding.rule.id] = len(rules)
            rules.append(_rule(finding.release, notes_urls.get(finding.release, ""), finding.rule))
        results.append(_result(finding, report, index[finding.rule.id]))
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "vllm-upgrade-check",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {
                    "from_version": report.from_version,
                    "to_version": report.to_version,
                    "releases": list(report.releases),
                    "notes": list(report.notes),
                },
            }
        ],
    }


def render(report: Report) -> str:
    """Render ``report`` as SARIF 2.1.0 JSON text (ends with a newline)."""
    return json.dumps(sarif_log(report), indent=2) + "\n"
