"""``--format markdown`` and the ``report`` command: a one-page migration checklist, then details.

Layout:

1. A heading with the from → to path and a summary: the verdict (why the gate passes or
   fails), the counts, files scanned and skipped, where the "from" version was read, the
   releases crossed (linked to their notes) and the run's notes.
2. ``## Checklist`` with ``### Before the upgrade``, ``### During the upgrade`` and
   ``### After the upgrade``: ``- [ ]`` items a team ticks off. Findings are grouped by rule
   (one item per rule with its count and at most three locations); every finding is in
   exactly one item. Mechanical fixes are one item per kind with the exact command
   (``vllm-upgrade-check fix PATHS --to T``, with ``--unsafe-fixes`` for those that need it)
   and their rules as sub-items (a rule's places the fix cannot edit are named in its
   sub-item); each skipped file is an item of its own.
3. ``## Details``: per rule (blockers first), its message, fix and every location (links
   ``[path:line](path#Lline)`` relative to the repository root, like the other formats), then
   the releases crossed with their packs' summaries; releases with no finding share one line.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.model.findings import Finding, Report, VersionBasis
from vllm_upgrade_check.model.pack import Applicability, MatchKind, Severity
from vllm_upgrade_check.reporters._common import from_source, md_code, md_text, subject, uri_path

SHOWN = 3
"""Locations a checklist item names before "and N more"."""


def _link(finding: Finding, report: Report) -> str:
    loc = finding.location
    if loc.path is None:
        return "Python environment"
    path = report.base.of(loc.path)
    if loc.line is None:
        return f"[{md_text(path)}]({uri_path(path)})"
    return f"[{md_text(path)}:{loc.line}]({uri_path(path)}#L{loc.line})"


def _by_rule(findings: Sequence[Finding]) -> list[list[Finding]]:
    """``findings`` grouped by rule id, blockers first, then by release and id."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.rule.id, []).append(finding)
    return sorted(
        groups.values(),
        key=lambda g: (-max(f.severity.rank for f in g), _release_key(g[0].release), g[0].rule.id),
    )


def _release_key(release: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, release)


def _where(group: Sequence[Finding], report: Report) -> str:
    links = [_link(f, report) for f in group[:SHOWN]]
    more = f" and {len(group) - SHOWN} more" if len(group) > SHOWN else ""
    return ", ".join(links) + more


def _count(group: Sequence[Finding]) -> str:
    return f"{len(group)}×" if len(group) > 1 else "1×"


def _has(finding: Finding) -> str:
    """What the user has of a dependency: the requirement as written (``torch==2.9.0``), or
    the installed distribution (``torch 2.9.0 installed``)."""
    fact = finding.fact
    if fact.kind == FactKind.DISTRIBUTION:
        return f"{fact.name} {fact.value or '(no version)'} installed"
    return " ".join((fact.raw or f"{fact.name}{fact.value or ''}").split())


def _pin(group: Sequence[Finding], report: Report) -> str:
    """For the findings of a dependency rule (a pin the target's ``Requires-Dist`` sets:
    torch, flashinfer-python, ...), which pin the target requires and what the user has
    (``the target, vLLM 0.28.0, requires `torch==2.13.0` (Requires-Dist since vLLM 0.27.0);
    you have `torch==2.9.0```); ``""`` for any other rule. The requirement is the rule's
    (the newest pack rule at or before the target, or the target's own Requires-Dist line)."""
    match = group[0].rule.match
    required = getattr(match, "specifier", None)
    if match.kind != MatchKind.DEPENDENCY or not required:
        return ""
    release = group[0].release
    since = f" (Requires-Dist since vLLM {release})" if release != report.to_version and release[:1].isdigit() else ""
    found = ", ".join(md_code(h) for h in dict.fromkeys(_has(f) for f in group))
    return f"the target, vLLM {report.to_version}, requires {md_code(match.name + required)}{since}; you have {found}"


def _rule_item(group: Sequence[Finding], report: Report) -> str:
    rule = group[0].rule
    pin = _pin(group, report)
    return (
        f"- [ ] **{rule.id}** {rule.name} ({_count(group)} {group[0].severity.value}): "
        + (f"{pin[:1].upper()}{pin[1:]}. " if pin else "")
        + f"{md_text(rule.fix.summary)} — {_where(group, report)}"
    )


def _mechanical(finding: Finding) -> bool:
    return bool(finding.edits) and finding.rule.fix.applicability != Applicability.DISPLAY_ONLY


def _command(report: Report, *extra: str) -> str:
    roots = report.base.roots or report.roots
    paths = " ".join(shlex.quote(r) for r in roots) or "."
    return " ".join(["vllm-upgrade-check", *extra[:1], paths, "--to", report.to_version, *extra[1:]])


def _fix_item(
    report: Report, findings: Sequence[Finding], unsafe: bool, by_hand: dict[str, list[Finding]]
) -> list[str]:
    """The item of one kind of mechanical fix, with a sub-item per rule; ``by_hand``: by rule
    id, the places of those rules the fix cannot edit (named in the rule's sub-item, so that a
    rule stays one item)."""
    flag = ("--unsafe-fixes",) if unsafe else ()
    what = "fix(es) marked unsafe (read each change)" if unsafe else "safe mechanical fix(es)"
    diff = _command(report, "fix", *flag, "--diff")
    out = [
        f"- [ ] Apply the {len(findings)} {what}: review {md_code(diff)}, then run it without `--diff`"
        + (" (it also bumps vLLM pins and image tags)" if not unsafe else "")
    ]
    for group in _by_rule(findings):
        rule = group[0].rule
        hand = by_hand.get(rule.id, [])
        also = f"; by hand ({len(hand)}×): {_where(hand, report)}" if hand else ""
        summary = rule.fix.summary.rstrip(".") + "." if not also else rule.fix.summary.rstrip(". ")
        pin = _pin(group, report)
        pin = f"{pin[:1].upper()}{pin[1:]}. " if pin else ""
        out.append(f"  - **{rule.id}** {rule.name} ({_count(group)}): {pin}{md_text(summary)}{also}")
    return out


def _skip_items(report: Report) -> list[str]:
    out = []
    for skip in report.skipped:
        path = report.base.of(skip.path)
        where = path + skip.where
        target = f"[{md_text(where)}]({uri_path(path)}" + (f"#L{skip.line})" if skip.line else ")")
        why = ""
        if report.gate.fails_closed(skip):
            why = " It configures vLLM, so the gate fails closed until it is fixed."
        elif skip.configures_vllm:
            why = " It configures vLLM: what it sets was not checked."
        out.append(f"- [ ] Fix or exclude {target}, which could not be read: {md_text(skip.reason)}.{why}")
    return out


def _checklists(report: Report) -> list[str]:
    mechanical = [f for f in report.findings if _mechanical(f)]
    safe = [f for f in mechanical if f.rule.fix.applicability == Applicability.SAFE]
    unsafe = [f for f in mechanical if f.rule.fix.applicability == Applicability.UNSAFE]
    fixed_rules = {f.rule.id for f in mechanical}
    by_hand: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if not _mechanical(finding) and finding.rule.id in fixed_rules:
            by_hand.setdefault(finding.rule.id, []).append(finding)
    rest = [f for f in report.findings if not _mechanical(f) and f.rule.id not in fixed_rules]
    early = [f for f in rest if f.fix_before_upgrade and f.severity != Severity.INFO]
    manual = [f for f in rest if f not in early and f.severity == Severity.BLOCKER]
    review = [f for f in rest if f not in early and f.severity == Severity.WARNING]
    infos = [f for f in rest if f not in early and f.severity == Severity.INFO]
    out = ["## Checklist", ""]
    if report.base.root:
        out += [f"Run the commands from the {report.base.kind}; paths are relative to it.", ""]
    out += ["### Before the upgrade", ""]
    out += _skip_items(report)
    if report.releases:
        out.append(f"- [ ] Read the release notes of {_releases(report)}")
    for group in _by_rule(early):
        out.append(_rule_item(group, report) + " (works on the current version already)")
    out += ["", "### During the upgrade", ""]
    if safe:
        out += _fix_item(report, safe, unsafe=False, by_hand=by_hand)
    else:
        out.append(
            f"- [ ] Bump vLLM to {report.to_version}: {md_code(_command(report, 'fix'))} bumps vllm pins and `vllm/vllm-openai` tags"
        )
    if unsafe:
        out += _fix_item(report, unsafe, unsafe=True, by_hand=by_hand)
    for group in _by_rule(manual):
        out.append(_rule_item(group, report))
    out += ["", "### After the upgrade", ""]
    rescan = _command(report, "scan") + (f" --from {report.from_version}" if report.from_version else "")
    out.append(f"- [ ] {md_code(rescan)} reports no blocker")
    for group in _by_rule(review):
        deprecated = " (deprecated: still accepted, removed later)" if all(f.deprecated_only for f in group) else ""
        out.append(_rule_item(group, report) + deprecated)
    for group in _by_rule(infos):
        out.append(_rule_item(group, report))
    out.append(
        "- [ ] Start the server, check `/health` and one request, and read the start-up log for deprecation warnings"
    )
    return out + [""]


def _releases(report: Report, links: bool = True) -> str:
    urls = {info.release: info.notes_url for info in report.release_info} if links else {}
    names = [f"[{r}]({urls[r]})" if urls.get(r) else r for r in report.releases]
    if len(names) > 8:
        where = "" if links else ""
        return f"{names[0]} … {names[-1]} ({len(names)} releases{where})"
    return ", ".join(names) or "none"


def _details(report: Report) -> list[str]:
    out = ["## Details", ""]
    for group in _by_rule(report.findings):
        rule = group[0].rule
        out += [f"### {rule.id} {rule.name} ({group[0].severity.value}, vLLM {group[0].release})", ""]
        out.append(md_text(rule.message))
        pin = _pin(group, report)
        if pin:
            out += ["", f"{pin[:1].upper()}{pin[1:]}."]
        fix = f"Fix: {md_text(rule.fix.summary)}"
        mechanical = [f for f in group if _mechanical(f)]
        if mechanical:
            flag = " --unsafe-fixes" if rule.fix.applicability == Applicability.UNSAFE else ""
            fix += f" (`vllm-upgrade-check fix{flag}` applies it"
            fix += ")" if len(mechanical) == len(group) else f" at {len(mechanical)} of the {len(group)} places)"
        if any(f.fix_before_upgrade for f in group):
            fix += " It can land before the upgrade."
        out += ["", fix, ""]
        for finding in group:
            context = f" ({md_text(finding.context)})" if finding.context else ""
            if pin and finding.fact.kind == FactKind.DISTRIBUTION:
                context += f" ({md_text(_has(finding))})"
            out.append(f"- {_link(finding, report)}: {md_code(subject(finding))}{context}")
        out.append("")
    hit = {f.release for f in report.findings}
    with_findings = [i for i in report.release_info if i.release in hit]
    quiet = [i.release for i in report.release_info if i.release not in hit]
    if report.release_info:
        out += ["### Releases crossed", ""]
        for info in with_findings:
            count = sum(1 for f in report.findings if f.release == info.release)
            name = f"[{info.release}]({info.notes_url})" if info.notes_url else info.release
            out.append(f"- {name} ({count} finding(s)): {md_text(info.summary)}".rstrip(": "))
        if quiet:
            out.append(f"- No finding for {', '.join(quiet)}.")
        out.append("")
    return out


def render(report: Report) -> str:
    """Render ``report`` as a Markdown migration report (ends with a newline)."""
    frm = report.from_version or "unknown"
    counts = {s: report.count(s) for s in Severity}
    verdict = report.verdict()
    out = [
        f"# vLLM upgrade: {frm} → {report.to_version}",
        "",
        f"**{verdict[:1].upper()}{verdict[1:]}.**",
        "",
        f"- **{counts[Severity.BLOCKER]} blocker(s)**, {counts[Severity.WARNING]} warning(s), "
        f"{counts[Severity.INFO]} info in {report.files_scanned} file(s) scanned"
        + (f"; {len(report.skipped)} could not be read" if report.skipped else ""),
        f"- From {frm}: {md_text(from_source(report))}" if report.from_basis != VersionBasis.OPTION else f"- From {frm} (--from)",
        f"- Releases crossed: {_releases(report, links=False)}",
    ]
    if not report.files_scanned:
        out.append("- No file under the scanned paths was one this tool reads: check the paths given")
    out += [f"- Note: {md_text(n)}" for n in report.notes]
    out.append("")
    out += _checklists(report)
    if report.findings:
        out += _details(report)
    return "\n".join(out).rstrip("\n") + "\n"
