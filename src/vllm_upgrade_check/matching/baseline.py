"""Baseline files: the fingerprints of findings a repository already has, so that the CI gate
fails only on new ones.

Format (JSON, ``schema_version: 1``)::

    {"schema_version": 1, "tool": "vllm-upgrade-check", "to_version": "0.28.0",
     "findings": [{"fingerprint": "16 hex digits", "rule_id": "VUC0270-001",
                   "path": "deploy/serve.sh" | null, "count": 2}]}

Fingerprints (:attr:`~vllm_upgrade_check.model.facts.Finding.fingerprint`) ignore line
numbers, so a baseline survives unrelated edits. Two identical findings in one file share a
fingerprint, so the baseline keeps how many there were (``count``, 1 when absent; an entry
listed twice counts twice, so older baselines still load): a scan with more occurrences than
the baseline reports the extra ones as new (the later ones by line), as Semgrep and ruff do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.parsing.textfiles import read_named_file

SCHEMA_VERSION = 1


def baseline_dict(report: Report) -> dict[str, Any]:
    """The baseline document of every finding in ``report`` (sorted; identical findings are
    one entry with their ``count``)."""
    entries: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in report.findings:
        key = (f.fingerprint, f.rule.id, f.location.path or "")
        entry = entries.setdefault(
            key, {"fingerprint": f.fingerprint, "rule_id": f.rule.id, "path": f.location.path, "count": 0}
        )
        entry["count"] += 1
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": "vllm-upgrade-check",
        "to_version": report.to_version,
        "findings": [entries[k] for k in sorted(entries)],
    }


def render_baseline(report: Report) -> str:
    """:func:`baseline_dict` as indented JSON text ending with a newline."""
    return json.dumps(baseline_dict(report), indent=2) + "\n"


def load_baseline(path: Path) -> Counter[str]:
    """The fingerprints in a baseline file, each with its number of occurrences (entries'
    ``count``, default 1, summed over entries with the same fingerprint).

    Raises:
        UsageError: unreadable file, invalid JSON or not a baseline document (naming the file).
    """
    try:
        data = json.loads(read_named_file(path).decode("utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read baseline: {exc.strerror or exc}", str(path)) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"baseline is not UTF-8 text: {exc.reason} at byte {exc.start}", str(path)) from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"baseline is not valid JSON: {exc.msg}", str(path), exc.lineno) from None
    except RecursionError:
        raise UsageError("baseline is nested too deeply to be a baseline file", str(path)) from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise UsageError(f"not a baseline file (schema_version {SCHEMA_VERSION} expected)", str(path))
    findings = data.get("findings")
    if not isinstance(findings, list) or not all(
        isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in findings
    ):
        raise UsageError("baseline 'findings' must be a list of objects with a 'fingerprint'", str(path))
    known: Counter[str] = Counter()
    for entry in findings:
        count = entry.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise UsageError(
                f"baseline finding {entry['fingerprint']}: 'count' must be a positive integer", str(path)
            )
        known[entry["fingerprint"]] += count
    return known


def new_findings(findings: Iterable[Finding], known: Counter[str]) -> list[Finding]:
    """The findings not covered by the baseline counts ``known``, in their original order.

    For each fingerprint, the first ``known[fingerprint]`` occurrences by (path, line, column)
    are baselined; later ones are new.
    """
    findings = list(findings)
    order = sorted(
        range(len(findings)),
        key=lambda i: (
            findings[i].location.path or "",
            findings[i].location.line or 0,
            findings[i].location.column or 0,
            i,
        ),
    )
    left = Counter(known)
    baselined: set[int] = set()
    for i in order:
        fingerprint = findings[i].fingerprint
        if left[fingerprint] > 0:
            left[fingerprint] -= 1
            baselined.add(i)
    return [f for i, f in enumerate(findings) if i not in baselined]
