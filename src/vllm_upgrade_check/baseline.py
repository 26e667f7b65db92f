"""Baseline files: the fingerprints of findings a repository already has, so that the CI gate
fails only on new ones.

Format (JSON, ``schema_version: 1``)::

    {"schema_version": 1, "tool": "vllm-upgrade-check", "to_version": "0.28.0",
     "findings": [{"fingerprint": "16 hex digits", "rule_id": "VUC0270-001",
                   "path": "deploy/serve.sh" | null}]}

Fingerprints (:attr:`~vllm_upgrade_check.model.facts.Finding.fingerprint`) ignore line
numbers, so a baseline survives unrelated edits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import Report

SCHEMA_VERSION = 1


def baseline_dict(report: Report) -> dict[str, Any]:
    """The baseline document of every finding in ``report`` (sorted, duplicates merged)."""
    entries = {
        (f.fingerprint, f.rule.id, f.location.path or ""): {
            "fingerprint": f.fingerprint,
            "rule_id": f.rule.id,
            "path": f.location.path,
        }
        for f in report.findings
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": "vllm-upgrade-check",
        "to_version": report.to_version,
        "findings": [entries[k] for k in sorted(entries)],
    }


def render_baseline(report: Report) -> str:
    """:func:`baseline_dict` as indented JSON text ending with a newline."""
    return json.dumps(baseline_dict(report), indent=2) + "\n"


def load_baseline(path: Path) -> set[str]:
    """The fingerprints in a baseline file.

    Raises:
        UsageError: unreadable file, invalid JSON or not a baseline document (naming the file).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read baseline: {exc.strerror or exc}", str(path)) from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"baseline is not valid JSON: {exc.msg}", str(path), exc.lineno) from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise UsageError(f"not a baseline file (schema_version {SCHEMA_VERSION} expected)", str(path))
    findings = data.get("findings")
    if not isinstance(findings, list) or not all(
        isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in findings
    ):
        raise UsageError("baseline 'findings' must be a list of objects with a 'fingerprint'", str(path))
    return {e["fingerprint"] for e in findings}
