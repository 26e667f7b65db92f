"""``--format github``: GitHub Actions workflow commands that annotate the changed files.

``::error file=PATH,line=L,col=C,endColumn=E,title=ID name::message`` for blockers,
``::warning`` for warnings, ``::notice`` for info; environment findings carry no file.
Paths are relative to the repository root (where the runner resolves ``file=``), whatever
folder was scanned. Each skipped file gets an annotation too: ``::error`` when it fails the
gate (it configures vLLM and could not be read), ``::warning`` when it configures vLLM but
``--skip-unreadable`` lets the run pass, ``::notice`` otherwise. The last lines give the
counts and the verdict; a failing run ends with an ``::error`` that says why it failed.
Values are escaped as the runner expects (``%``, CR, LF; plus ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from vllm_upgrade_check.model.facts import Skipped
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


def _command(kind: str, props: list[tuple[str, object]], message: str) -> str:
    head = ",".join(f"{k}={escape_property(str(v))}" for k, v in props)
    return f"::{kind} {head}::{escape_data(message)}" if head else f"::{kind}::{escape_data(message)}"


def skipped_annotation(skip: Skipped, report: Report) -> str:
    """One workflow command line for a skipped file."""
    fails = report.gate.fails_closed(skip)
    kind = "error" if fails else "warning" if skip.configures_vllm else "notice"
    props: list[tuple[str, object]] = [("file", report.base.of(skip.path))]
    if skip.line:
        props.append(("line", skip.line))
        if skip.column:
            props.append(("col", skip.column))
    title = "vllm-upgrade-check: file not read" + (" (the gate fails closed)" if fails else "")
    props.append(("title", title))
    message = f"skipped: {skip.reason}"
    if skip.configures_vllm:
        message += "\nThis file configures vLLM, so what it sets was not checked."
        if fails:
            message += " Fix the file, or pass --skip-unreadable to let the run pass without it."
    return _command(kind, props, message)


def annotation(finding: Finding, report: Report | None = None) -> str:
    """One workflow command line for ``finding`` (its path relative to ``report``'s base)."""
    loc = finding.location
    props: list[tuple[str, object]] = []
    if loc.path is not None:
        props.append(("file", report.base.of(loc.path) if report is not None else loc.path))
        for key, value in (
            ("line", loc.line),
            ("endLine", loc.end_line),
            ("col", loc.column),
            ("endColumn", loc.end_column),
        ):
            if value is not None:
                props.append((key, value))
    props.append(("title", f"{finding.rule.id} {finding.rule.name}"))
    context = f"\n{finding.context}" if finding.context else ""
    message = f"{subject(finding)}: {finding.rule.message}{context}\nfix: {finding.rule.fix.summary}"
    return _command(COMMANDS[finding.severity], props, message)


def render(report: Report) -> str:
    """Render ``report`` as workflow commands, one per finding and per skipped file, then
    the summary and the verdict."""
    lines = [annotation(f, report) for f in report.findings]
    lines += [skipped_annotation(s, report) for s in report.skipped]
    counts = ", ".join(
        f"{report.count(s)} {s.value}" for s in (Severity.BLOCKER, Severity.WARNING, Severity.INFO)
    )
    lines.append(
        f"vllm-upgrade-check: {counts} for vLLM {report.from_version or 'unknown'} -> {report.to_version}; "
        f"{report.files_scanned} file(s) scanned, {len(report.skipped)} skipped"
    )
    lines.extend(f"vllm-upgrade-check: note: {n}" for n in report.notes)
    if report.exit_code:
        lines.append(_command("error", [("title", "vllm-upgrade-check")], report.verdict()))
    else:
        lines.append(f"vllm-upgrade-check: {report.verdict()}")
    return "\n".join(lines) + "\n"
