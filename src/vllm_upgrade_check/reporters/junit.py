"""``--format junit``: JUnit XML for CI test dashboards.

One ``testcase`` per rule x file: a rule with findings gives one failing testcase per file
(``classname`` the path, ``<failure>`` listing each finding); a rule of a release crossed with
no finding gives one passing testcase (``classname`` ``vllm-upgrade-check``).
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.reporters._common import subject


def _detail(finding: Finding) -> str:
    loc = finding.location
    where = str(loc) if loc.path else "environment"
    return f"{where}: {subject(finding)}: {finding.rule.message}\nfix: {finding.rule.fix.summary}"


def render(report: Report) -> str:
    """Render ``report`` as a JUnit XML document (ends with a newline)."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault((finding.rule.id, finding.location.path or "<environment>"), []).append(finding)
    rules = [(info.release, r) for info in report.release_info for r in info.rules]
    hit = {rid for rid, _ in groups}
    suite = ET.Element("testsuite", name="vllm-upgrade-check")
    cases = 0
    for (rule_id, path), found in sorted(groups.items()):
        rule = found[0].rule
        case = ET.SubElement(suite, "testcase", classname=path, name=f"{rule_id} {rule.name}")
        failure = ET.SubElement(
            case,
            "failure",
            message=f"{len(found)} finding(s): {rule.message}",
            type=found[0].severity.value,
        )
        failure.text = "\n".join(_detail(f) for f in found)
        cases += 1
    for _release, rule in rules:
        if rule.id not in hit:
            ET.SubElement(suite, "testcase", classname="vllm-upgrade-check", name=f"{rule.id} {rule.name}")
            cases += 1
    suite.set("tests", str(cases))
    suite.set("failures", str(len(groups)))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    root = ET.Element("testsuites", name="vllm-upgrade-check", tests=str(cases), failures=str(len(groups)))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
