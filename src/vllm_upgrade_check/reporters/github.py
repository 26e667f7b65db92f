"""``--format github``: GitHub Actions workflow commands that annotate the changed files.

``::error file=PATH,line=L,col=C,endColumn=E,title=ID name::message`` for blockers,
``::warning`` for warnings, ``::notice`` for info; environment findings carry no file.
Values are escaped as the runner expects (``%``, CR, LF; plus ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.reporters._common import subject

COMMANDS = {Severity.BLOCKER: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    """One workflow command line for ``finding``."""
    loc = finding.location
    props: list[tuple[str, object]] = []
    if loc.path is not None:
        props.append(("file", loc.path))
        for key, value in (
            ("line", loc.line),
            ("endLine", loc.end_line),
            ("col", loc.column),
            ("endColumn", loc.end_column),
        ):
            if value is not None:
                props.append((key, value))
    props.append(("title", f"{finding.rule.id} {finding.rule.name}"))
    head = ",".join(f"{k}={escape_property(str(v))}" for k, v in props)
    message = f"{subject(finding)}: {finding.rule.message}\nfix: {finding.rule.fix.summary}"
    return f"::{COMMANDS[finding.severity]} {head}::{escape_data(message)}"


def render(report: Report) -> str:
    """Render ``report`` as workflow commands, one per finding, then a summary line."""
    lines = [annotation(f) for f in report.findings]
    counts = ", ".join(
        f"{report.count(s)} {s.value}" for s in (Severity.BLOCKER, Severity.WARNING, Severity.INFO)
    )
    lines.append(
        f"vllm-upgrade-check: {counts} for vLLM {report.from_version or 'unknown'} -> {report.to_version}"
    )
    lines.extend(f"vllm-upgrade-check: note: {n}" for n in report.notes)
    return "\n".join(lines) + "\n"
