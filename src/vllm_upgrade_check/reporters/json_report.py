"""``--format json``: a documented, versioned public schema.

Schema version 1 (``schema_version: 1``)::

    {
      "schema_version": 1,
      "tool": {"name": "vllm-upgrade-check", "version": "0.1.0"},
      "from_version": "0.26.0" | null,      # run-wide assumption
      "from_basis": "option|file|repository|environment|unknown",
      "from_source": "Dockerfile:1 vllm/vllm-openai:v0.26.0",
      "to_version": "0.28.0",
      "releases": ["0.27.0", "0.27.1", "0.28.0"],
      "summary": {"blocker": 3, "warning": 1, "info": 0, "files_scanned": 5, "skipped": 0},
      "gate": {"fail_on": "blocker", "strict_skips": true, "exit_code": 1, "verdict": "failed (exit 1): ..."},
      "findings": [{
          "rule_id": "VUC0270-001", "rule_name": "removed-max-num-partial-prefills",
          "severity": "blocker|warning|info", "release": "0.27.0",
          "deprecated_only": false,
          "path": "scripts/serve.sh" | null,   # relative to the scanned root, "/" separators; null = environment
          "repo_path": "deploy/scripts/serve.sh" | null,  # relative to the repository root (else the working directory)
          "line": 7 | null, "column": 4 | null, "end_line": 7 | null, "end_column": 31 | null,
          "kind": "arg", "subject": "--max_num_partial_prefills", "value": "3" | null,
          "message": "...",
          "fix": {"summary": "...", "action": "remove_arg", "replacement": null,
                  "applicability": "safe", "before_upgrade": false},
          "from_version": "0.26.0" | null, "from_basis": "file", "from_source": "...",
          "fingerprint": "16 hex digits",
          "context": "requirements.txt:3 -r requirements/prod.txt" | "shared by services a, b" | "",
                     # the include chain (outermost first) and the services sharing the words, "; "-joined
          "included_by": [{"path": "requirements.txt", "line": 3, "option": "-r",
                           "target": "requirements/prod.txt"}]  # [] when no file includes it
          "shared_by": ["service a", "service b"],  # the services one YAML anchor is read by (else [])
      }],
      "skipped": [{"path": "...", "repo_path": "...", "reason": "...", "line": 3 | null,
                   "configures_vllm": true, "fails_gate": true}]
    }

Fields are only ever added within a schema version; removing or changing one bumps it.
"""

from __future__ import annotations

from typing import Any

from vllm_upgrade_check import __version__
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.reporters.jsontext import dumps_indented

SCHEMA_VERSION = 1


def finding_dict(finding: Finding, report: Report | None = None) -> dict[str, Any]:
    """The public JSON object of one finding (see the module docstring); ``repo_path`` from
    ``report``'s base (the path itself without a report)."""
    loc = finding.location
    rule = finding.rule
    return {
        "rule_id": rule.id,
        "rule_name": rule.name,
        "severity": finding.severity.value,
        "release": finding.release,
        "deprecated_only": finding.deprecated_only,
        "path": loc.path,
        "repo_path": loc.path if loc.path is None or report is None else report.base.of(loc.path),
        "line": loc.line,
        "column": loc.column,
        "end_line": loc.end_line,
        "end_column": loc.end_column,
        "kind": finding.fact.kind.value,
        "subject": finding.fact.raw or finding.fact.name,
        "value": finding.fact.value,
        "message": rule.message,
        "fix": {
            "summary": rule.fix.summary,
            "action": rule.fix.action.value,
            "replacement": rule.fix.replacement,
            "applicability": rule.fix.applicability.value,
            "before_upgrade": finding.fix_before_upgrade,
        },
        "from_version": finding.from_version,
        "from_basis": finding.from_basis.value,
        "from_source": finding.from_source,
        "fingerprint": finding.fingerprint,
        "context": finding.context,
        "included_by": [
            {"path": i.path, "line": i.line, "option": i.option, "target": i.target} for i in finding.included_by
        ],
        "shared_by": list(finding.shared_by),
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The public JSON object of a whole report."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "vllm-upgrade-check", "version": __version__},
        "from_version": report.from_version,
        "from_basis": report.from_basis.value,
        "from_source": report.from_source,
        "to_version": report.to_version,
        "releases": list(report.releases),
        "summary": {
            "blocker": report.count(Severity.BLOCKER),
            "warning": report.count(Severity.WARNING),
            "info": report.count(Severity.INFO),
            "files_scanned": report.files_scanned,
            "skipped": len(report.skipped),
        },
        "gate": {
            "fail_on": report.gate.fail_on_name,
            "strict_skips": report.gate.strict_skips,
            "exit_code": report.exit_code,
            "verdict": report.verdict(),
        },
        "notes": list(report.notes),
        "findings": [finding_dict(f, report) for f in report.findings],
        "skipped": [
            {
                "path": s.path,
                "repo_path": report.base.of(s.path),
                "reason": s.reason,
                "line": s.line,
                "column": s.column,
                "configures_vllm": s.configures_vllm,
                "fails_gate": report.gate.fails_closed(s),
            }
            for s in report.skipped
        ],
    }


def render(report: Report) -> str:
    """Render ``report`` as indented JSON text (ends with a newline)."""
    return dumps_indented(report_dict(report)) + "\n"
