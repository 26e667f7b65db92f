"""Console output (rich): findings grouped by file (paths relative to the repository root, as
in the other formats), skipped files, then a summary ending with the verdict."""

from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.markup import escape

from vllm_upgrade_check.model.facts import OVERLAY_NOTE
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.reporters._common import from_source

_STYLE = {Severity.BLOCKER: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _finding_lines(finding: Finding, report: Report) -> list[str]:
    loc = finding.location
    where = str(loc).replace(loc.path, report.base.of(loc.path), 1) if loc.path else "environment"
    sev = finding.severity
    subject = escape(finding.fact.raw or finding.fact.name)
    head = f"  [bold]{escape(where)}[/bold] [{_STYLE[sev]}]{sev.value}[/] {finding.rule.id} {subject}"
    lines = [head, f"    {escape(finding.rule.message)} [dim]({finding.rule.name}, {finding.release})[/dim]"]
    if finding.included_by:
        chain = " -> ".join(f"{report.base.of(i.path)}:{i.line} {i.option} {report.base.of(i.target)}" for i in finding.included_by)
        lines.append(f"    included: {escape(chain)}")
    if finding.shared_context:
        lines.append(f"    [dim]{escape(finding.shared_context)}[/dim]")
    spans = finding.fact.spans
    if spans is not None and spans.note.startswith(OVERLAY_NOTE):
        lines.append(f"    [dim]note: {escape(spans.note)}[/dim]")
    fix = f"    fix: {escape(finding.rule.fix.summary)}"
    if finding.fix_before_upgrade:
        fix += " [green](can land before the upgrade)[/green]"
    lines.append(fix)
    if finding.deprecated_only:
        lines.append(f"    [dim]deprecated: still works at the target, removed in {finding.release}[/dim]")
    return lines


def render_console(report: Report, console: Console) -> None:
    """Print ``report`` to ``console``: findings grouped by file, then the summary."""
    for path, group in groupby(report.findings, key=lambda f: f.location.path):
        shown = report.base.of(path) if path else "Python environment"
        console.print(f"[bold underline]{escape(shown)}[/]")
        for finding in group:
            for line in _finding_lines(finding, report):
                console.print(line, highlight=False)
        console.print()
    if report.skipped:
        console.print("[bold]Skipped[/bold]")
        for skip in report.skipped:
            path = report.base.of(skip.path)
            where = path + skip.where
            mark = " [bold red](fails the gate: it configures vLLM)[/]" if report.gate.fails_closed(skip) else ""
            console.print(f"  {escape(where)}: {escape(skip.reason)}{mark}", highlight=False)
        console.print()
    blockers, warnings, infos = (report.count(s) for s in (Severity.BLOCKER, Severity.WARNING, Severity.INFO))
    frm = report.from_version or "unknown"
    console.print(
        f"[bold]{blockers} blocker(s)[/bold], {warnings} warning(s), {infos} info "
        f"for vLLM {escape(frm)} -> {report.to_version}",
        highlight=False,
    )
    console.print(f"  from: {escape(from_source(report))}", highlight=False)
    crossed = ", ".join(report.releases) if report.releases else "none"
    if len(report.releases) > 8:
        crossed = f"{report.releases[0]} … {report.releases[-1]} ({len(report.releases)} releases)"
    console.print(f"  releases crossed: {crossed}", highlight=False)
    console.print(f"  files scanned: {report.files_scanned}, skipped: {len(report.skipped)}", highlight=False)
    for note in report.notes:
        console.print(f"  note: {escape(note)}", highlight=False)
    console.print(f"  {escape(report.verdict())}", highlight=False)
