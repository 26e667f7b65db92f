"""``plan --format markdown``: the plan as a document a team can follow, with checklists.

Sections: a summary (version in use, newest reachable release, constraints), one section per
hop (what must change first, the blocker findings of that step's scan with their fixes, the
deprecations to migrate at that stop), then what blocks every release beyond the reachable one.
"""

from __future__ import annotations

from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.model.plan import Hop, Plan
from vllm_upgrade_check.reporters._common import md_code as _code
from vllm_upgrade_check.reporters._common import md_text


def _hop_lines(number: int, hop: Hop, notes: tuple[str, ...] = ()) -> list[str]:
    frm = hop.from_version or "the version in use"
    lines = [f"### Step {number}: vLLM {frm} → {hop.to_version}", "", f"Why stop here: {hop.reason}.", ""]
    report = hop.report
    lines.append(
        f"Scan of this step: {hop.blockers} blocker(s), {report.count(Severity.WARNING)} warning(s) "
        f"(`vllm-upgrade-check scan --from {hop.from_version or '?'} --to {hop.to_version}`)."
    )
    lines.append("")
    if hop.changes:
        lines.append("Before installing:")
        lines.append("")
        lines.extend(f"- [ ] {change}" for change in hop.changes)
        lines.append("")
    if notes:
        lines.extend(f"Note: {note}." for note in notes)
        lines.append("")
    fixes = [f for f in report.findings if f.severity == Severity.BLOCKER]
    if fixes:
        lines.append("Fix the blockers:")
        lines.append("")
        for finding in fixes:
            where = str(finding.location) if finding.location.path else "environment"
            lines.append(
                f"- [ ] {_code(where)} {finding.rule.id} {_code(finding.fact.raw or finding.fact.name)}: "
                f"{md_text(finding.rule.fix.summary)}"
            )
        lines.append("")
    migrate = [f for f in report.findings if f.rule.id in hop.migrate]
    if hop.migrate:
        lines.append("Migrate while both old and new work (deprecated here, removed later):")
        lines.append("")
        seen = set()
        for finding in migrate:
            if finding.rule.id in seen:
                continue
            seen.add(finding.rule.id)
            lines.append(f"- [ ] {finding.rule.id}: {md_text(finding.rule.fix.summary)}")
        lines.extend(f"- [ ] {rid}" for rid in hop.migrate if rid not in seen)
        lines.append("")
    lines.append(f"- [ ] `pip install vllm=={hop.to_version}` and roll out")
    lines.append("")
    return lines


def render_plan_markdown(plan: Plan) -> str:
    """Render ``plan`` as Markdown (ends with a newline)."""
    host = plan.host
    keep = ", ".join(sorted(host.keep)) or "none"
    lines = ["# vLLM upgrade plan", ""]
    lines.append(f"- Version in use: **{plan.current or 'unknown'}** ({plan.current_source})")
    if plan.reachable:
        lines.append(f"- Newest reachable release: **{plan.reachable}** (newest known: {plan.newest_known})")
    else:
        lines.append(
            f"- Newest reachable release: **none** beyond the version in use (newest known: {plan.newest_known})"
        )
    lines.append(
        f"- Host: Python {host.python or 'unknown'}, NVIDIA driver {host.driver or 'unknown'}{f' ({host.driver_source})' if host.driver_source else ''}; "
        f"kept unchanged: {keep}"
    )
    lines.append("")
    if host.sources or host.not_checked:
        lines.append("## Host facts")
        lines.append("")
        lines.extend(f"- {fact}: {value} (from {where})" for fact, value, where in host.sources)
        lines.extend(f"- not checked: {sentence}" for sentence in host.not_checked)
        lines.append("")
    if plan.path:
        lines.append("## Path")
        lines.append("")
        for number, hop in enumerate(plan.path, start=1):
            check = plan.release(hop.to_version)
            lines.extend(_hop_lines(number, hop, check.notes if check else ()))
    blocked = plan.blocked
    if blocked:
        lines.append("## Blocked releases")
        lines.append("")
        lines.append("| release | first blocker | more |")
        lines.append("|---|---|---|")
        for check in blocked:
            lines.append(
                # a cell shows the message literally: Markdown escaped, and `\|` is GFM's pipe in a cell
                f"| {check.release} | {md_text(check.blockers[0].message).replace('|', chr(92) + '|')} | {len(check.blockers) - 1} |"
            )
        lines.append("")
    if plan.notes:
        lines.append("## Notes")
        lines.append("")
        lines.extend(f"- {md_text(note)}" for note in plan.notes)
        lines.append("")
    lines.append(f"Driver table: {plan.driver_source}")
    return "\n".join(lines) + "\n"
