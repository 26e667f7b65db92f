"""``--format markdown`` and the ``report`` command: a migration report for a from -> to upgrade.

Layout: a heading and summary; before / during / after checklists (``- [ ]`` items, in the
spirit of the Angular update guide); one section per release crossed with its blockers,
warnings and info (file links ``[path:line](path#Lline)`` relative to the scanned root, and
the fix); the Python environment's findings when the environment was checked; skipped files.
"""

from __future__ import annotations

from vllm_upgrade_check.model.findings import Finding, Report, VersionBasis
from vllm_upgrade_check.model.pack import Applicability, Severity
from vllm_upgrade_check.reporters._common import subject, uri_path

_TITLES = {Severity.BLOCKER: "Blockers", Severity.WARNING: "Warnings", Severity.INFO: "Info"}


def _link(finding: Finding) -> str:
    loc = finding.location
    if loc.path is None:
        return "Python environment"
    if loc.line is None:
        return f"[{loc.path}]({uri_path(loc.path)})"
    return f"[{loc.path}:{loc.line}]({uri_path(loc.path)}#L{loc.line})"


def _fix_line(finding: Finding, report: Report) -> str:
    fix = finding.rule.fix
    text = f"Fix: {fix.summary}"
    if bool(finding.edits):
        flag = " --unsafe-fixes" if fix.applicability == Applicability.UNSAFE else ""
        text += f" (`vllm-upgrade-check fix{flag}` applies it)"
    if finding.fix_before_upgrade:
        text += " (can land before the upgrade)"
    return text


def _item(finding: Finding, report: Report) -> list[str]:
    return [
        f"- **{finding.rule.id}** `{subject(finding)}` in {_link(finding)}: {finding.rule.message}",
        f"  - {_fix_line(finding, report)}",
    ]


def _checklists(report: Report) -> list[str]:
    to = report.to_version
    frm = report.from_version
    rescan = f"vllm-upgrade-check scan --to {to}" + (f" --from {frm}" if frm else "")
    fixable = [f for f in report.findings if bool(f.edits)]
    early = [f for f in report.findings if f.fix_before_upgrade]
    manual = [f for f in report.findings if f not in fixable and f.severity == Severity.BLOCKER]
    out = ["## Checklist", "", "### Before the upgrade", ""]
    out.append(
        f"- [ ] Read the release notes of every release crossed: {', '.join(report.releases) or 'none'}"
    )
    if fixable:
        out.append(
            f"- [ ] Review and apply the {len(fixable)} mechanical fix(es): `vllm-upgrade-check fix --to {to} --diff`, then without `--diff`"
        )
    for finding in early:
        out.append(f"- [ ] {finding.rule.id} in {_link(finding)}: {finding.rule.fix.summary}")
    out += ["", "### During the upgrade", ""]
    out.append(f"- [ ] Bump vLLM to {to} (pins and `vllm/vllm-openai` tags; `fix` does it)")
    for finding in manual:
        if finding in early:
            continue
        out.append(f"- [ ] {finding.rule.id} in {_link(finding)}: {finding.rule.fix.summary}")
    out += ["", "### After the upgrade", ""]
    out.append(f"- [ ] `{rescan}` reports no blocker")
    warnings = [f for f in report.findings if f.severity == Severity.WARNING]
    deprecated = [f for f in warnings if f.deprecated_only]
    if len(warnings) > len(deprecated):
        out.append(
            f"- [ ] Review the {len(warnings) - len(deprecated)} warning(s): settings that are ignored or behave differently now"
        )
    if deprecated:
        out.append(
            f"- [ ] Plan the {len(deprecated)} deprecation(s): still accepted at {to}, removed in a later release"
        )
    out.append(
        "- [ ] Start the server, check `/health` and one request, and read the start-up log for deprecation warnings"
    )
    return out + [""]


def _releases(releases: tuple[str, ...]) -> str:
    if len(releases) > 8:
        return f"{releases[0]} … {releases[-1]} ({len(releases)} releases)"
    return ", ".join(releases) or "none"


def render(report: Report) -> str:
    """Render ``report`` as a Markdown migration report (ends with a newline)."""
    frm = report.from_version or "unknown"
    counts = {s: report.count(s) for s in Severity}
    out = [
        f"# vLLM upgrade: {frm} → {report.to_version}",
        "",
        f"- From: {frm} ({report.from_source})",
        f"- Releases crossed: {_releases(report.releases)}",
        f"- Files scanned: {report.files_scanned}, skipped: {len(report.skipped)}",
        f"- **{counts[Severity.BLOCKER]} blocker(s)**, {counts[Severity.WARNING]} warning(s), {counts[Severity.INFO]} info",
    ]
    out += [f"- Note: {n}" for n in report.notes]
    out.append("")
    out += _checklists(report)
    files = [f for f in report.findings if f.location.path is not None]
    for release in report.releases:
        here = [f for f in files if f.release == release]
        out += [f"## vLLM {release}", ""]
        for info in report.release_info:
            if info.release != release:
                continue
            if info.summary:
                out.append(info.summary)
            if info.notes_url:
                out.append(f"Release notes: <{info.notes_url}>")
            out.append("")
        if not here:
            out += ["Nothing found for this release.", ""]
            continue
        for severity in Severity:
            group = [f for f in here if f.severity == severity]
            if group:
                out += [f"### {_TITLES[severity]}", ""]
                for finding in group:
                    out += _item(finding, report)
                out.append("")
    environment = [f for f in report.findings if f.location.path is None]
    if environment or report.from_basis == VersionBasis.ENVIRONMENT:
        out += ["## Python environment", ""]
        for finding in environment:
            out += _item(finding, report)
        if not environment:
            out.append("Nothing found in the environment.")
        out.append("")
    if report.skipped:
        out += ["## Skipped files", ""]
        for skip in report.skipped:
            where = f"{skip.path}:{skip.line}" if skip.line else skip.path
            out.append(f"- `{where}`: {skip.reason}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
