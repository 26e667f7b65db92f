"""``--format sarif``: a SARIF 2.1.0 log (one run) for code-scanning tools.

Rules: every rule loaded for the run, in ``tool.driver.rules`` (id, name, short/full
description, help, ``properties.severity``/``properties.release``), in pack order, then the
built-in checks that have a result; an empty run lists them too. Each result names its rule
by ``ruleId`` and ``ruleIndex``. Results: ``level`` ``error`` for blockers, ``warning`` for
warnings, ``note`` for info; a physical location for findings in files (``uri`` relative to
the repository root, ``uriBaseId`` ``%SRCROOT%``, which ``originalUriBaseIds`` gives as a
``file:`` URI; an absolute ``file:`` URI for a file outside it), a logical location for
findings in the Python environment; ``partialFingerprints["vllmUpgradeCheck/v1"]`` is the
finding's fingerprint; mechanical fixes become SARIF ``fixes`` (``deletedRegion`` by
character offset).

Invocation: ``runs[0].invocations[0]`` gives the exit code and why
(``exitCode``, ``exitCodeDescription``), ``executionSuccessful`` (``false`` when a file that
configures vLLM could not be read and the gate fails closed) and one
``toolExecutionNotifications`` entry per skipped file, with its location and reason
(``error`` when it fails the gate, ``warning`` when it configures vLLM, else ``note``).
"""

from __future__ import annotations

from typing import Any

from vllm_upgrade_check import __version__
from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.reporters._common import subject, uri_path
from vllm_upgrade_check.reporters.jsontext import dumps_indented

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.BLOCKER: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT_KEY = "vllmUpgradeCheck/v1"
INFORMATION_URI = "https://github.com/vllm-project/vllm/releases"
SRCROOT = "%SRCROOT%"


def artifact(report: Report, path: str) -> dict[str, Any]:
    """The SARIF ``artifactLocation`` of reported ``path``: relative to ``%SRCROOT%`` (the
    repository root), or an absolute ``file:`` URI for a file outside it."""
    shown = report.base.of(path)
    if shown.startswith("/"):
        return {"uri": "file://" + uri_path(shown)}
    return {"uri": uri_path(shown), "uriBaseId": SRCROOT}


def _notification(report: Report, skip: Skipped) -> dict[str, Any]:
    level = "error" if report.gate.fails_closed(skip) else "warning" if skip.configures_vllm else "note"
    physical: dict[str, Any] = {"artifactLocation": artifact(report, skip.path)}
    if skip.line:
        physical["region"] = {"startLine": skip.line, **({"startColumn": skip.column} if skip.column else {})}
    text = f"skipped {report.base.of(skip.path)}: {skip.reason}"
    if skip.configures_vllm:
        text += " (it configures vLLM" + ("; the gate fails closed)" if level == "error" else ")")
    return {
        "level": level,
        "message": {"text": text},
        "locations": [{"physicalLocation": physical}],
        "descriptor": {"id": "skipped-file"},
        "properties": {"configures_vllm": skip.configures_vllm, "fails_gate": level == "error"},
    }


def invocation(report: Report) -> dict[str, Any]:
    """The run's SARIF ``invocation``: exit code, success, and the skipped files."""
    return {
        "executionSuccessful": not report.failing_skips,
        "exitCode": report.exit_code,
        "exitCodeDescription": report.verdict(),
        "toolExecutionNotifications": [_notification(report, s) for s in report.skipped],
        "properties": {
            "fail_on": report.gate.fail_on_name,
            "files_scanned": report.files_scanned,
            "skipped": len(report.skipped),
        },
    }


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


def _included(finding: Finding) -> str:
    """The include chain of a finding's file, as a sentence for its message (``""``: none)."""
    return f"; included: {finding.include_context}" if finding.included_by else ""


def _result(finding: Finding, report: Report, index: int) -> dict[str, Any]:
    loc = finding.location
    result: dict[str, Any] = {
        "ruleId": finding.rule.id,
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {
            "text": f"{finding.rule.message} ({subject(finding)}"
            + (f"; {finding.shared_context})" if finding.shared_context else ")")
            + _included(finding)
        },
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": {
            "severity": finding.severity.value,
            "release": finding.release,
            "deprecated_only": finding.deprecated_only,
            "fix_before_upgrade": finding.fix_before_upgrade,
            "shared_by": list(finding.shared_by),
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
        physical: dict[str, Any] = {"artifactLocation": artifact(report, loc.path)}
        if "startLine" in region:
            physical["region"] = region
        result["locations"] = [{"physicalLocation": physical}]
        if finding.included_by:
            result["properties"]["included_by"] = finding.include_context
            result["relatedLocations"] = [
                {
                    "id": number,
                    "physicalLocation": {"artifactLocation": artifact(report, link.path), "region": {"startLine": link.line}},
                    "message": {"text": f"{link.option} {link.target}"},
                }
                for number, link in enumerate(finding.included_by)
            ]
        edits = finding.edits
        if edits:
            result["fixes"] = [
                {
                    "description": {"text": finding.rule.fix.summary},
                    "artifactChanges": [
                        {
                            "artifactLocation": artifact(report, loc.path),
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
    for release, rule in report.rules:
        if rule.id not in index:
            index[rule.id] = len(rules)
            rules.append(_rule(release, notes_urls.get(release, ""), rule))
    for finding in report.findings:
        if finding.rule.id not in index:
            index[finding.rule.id] = len(rules)
            rules.append(_rule(finding.release, notes_urls.get(finding.release, ""), finding.rule))
        results.append(_result(finding, report, index[finding.rule.id]))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "vllm-upgrade-check",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "invocations": [invocation(report)],
    }
    if report.base.root:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": report.base.root_uri}}
    run.update(
        {
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": {
                "from_version": report.from_version,
                "to_version": report.to_version,
                "releases": list(report.releases),
                "notes": list(report.notes),
                "files_scanned": report.files_scanned,
                "base": report.base.kind,
            },
        }
    )
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(report: Report) -> str:
    """Render ``report`` as SARIF 2.1.0 JSON text (ends with a newline)."""
    return dumps_indented(sarif_log(report)) + "\n"
