"""``--format junit``: JUnit XML for CI test dashboards, agreeing with the exit code.

One ``testcase`` per file scanned or skipped (``classname`` ``vllm-upgrade-check``, ``name``
the path relative to the repository root), plus one named ``Python environment`` when the
environment has findings:

- ``<failure>`` when the file has findings at or above ``--fail-on`` (each listed);
- ``<error>`` when the file configures vLLM and could not be read, so the gate fails closed;
- ``<skipped>`` when it could not be read and that does not fail the run;
- passing otherwise. Findings below ``--fail-on`` (warnings under ``--fail-on blocker``) are
  not failures: they are listed in the testcase's ``system-out``.

So the suite has a failure or an error exactly when the exit code is not 0, ``tests`` is the
number of files (an empty folder gives ``tests="0"``), and the suite's ``properties`` give
the window, the gate, the counts and the exit code.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.model.findings import Finding, Report
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.reporters._common import subject

ENVIRONMENT = "Python environment"


def _detail(finding: Finding, report: Report) -> str:
    loc = finding.location
    where = str(loc).replace(loc.path, report.base.of(loc.path), 1) if loc.path else "environment"
    return (
        f"{where}: {finding.severity.value} {finding.rule.id} {subject(finding)}: {finding.rule.message}\n"
        + (f"  {finding.context}\n" if finding.context else "")
        + f"  fix: {finding.rule.fix.summary}"
    )


def _skip_text(skip: Skipped, report: Report) -> str:
    where = report.base.of(skip.path) + skip.where
    return f"{where}: not read: {skip.reason}" + (" (it configures vLLM)" if skip.configures_vllm else "")


def render(report: Report) -> str:
    """Render ``report`` as a JUnit XML document (ends with a newline)."""
    order: list[str] = []
    found: dict[str, list[Finding]] = {}
    skips: dict[str, list[Skipped]] = {}
    for path in report.scanned:
        order.append(path)
    for finding in report.findings:
        key = finding.location.path or ENVIRONMENT
        found.setdefault(key, []).append(finding)
    for skip in report.skipped:
        skips.setdefault(skip.path, []).append(skip)
    seen = set(order)
    for key in [*found, *skips]:
        if key not in seen:
            seen.add(key)
            order.append(key)
    suite = ET.Element("testsuite", name="vllm-upgrade-check")
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("from_version", report.from_version or "unknown"),
        ("to_version", report.to_version),
        ("fail_on", report.gate.fail_on_name),
        ("files_scanned", report.files_scanned),
        ("skipped", len(report.skipped)),
        *((s.value, report.count(s)) for s in (Severity.BLOCKER, Severity.WARNING, Severity.INFO)),
        ("exit_code", report.exit_code),
        ("verdict", report.verdict()),
    ):
        ET.SubElement(props, "property", name=name, value=str(value))
    failures = errors = skipped = 0
    for key in order:
        case = ET.SubElement(suite, "testcase", classname="vllm-upgrade-check", name=report.base.of(key))
        here = found.get(key, [])
        failing = [f for f in here if report.gate.fails(f.severity)]
        closed = [s for s in skips.get(key, []) if report.gate.fails_closed(s)]
        if closed:
            errors += 1
            error = ET.SubElement(case, "error", message=f"not read: {closed[0].reason}", type="unreadable")
            error.text = "\n".join(_skip_text(s, report) for s in closed)
            error.text += "\nThis file configures vLLM, so the gate fails closed (--skip-unreadable lets it pass)."
        elif failing:
            failures += 1
            counts = ", ".join(
                f"{n} {s.value}(s)"
                for s in (Severity.BLOCKER, Severity.WARNING, Severity.INFO)
                if (n := sum(1 for f in failing if f.severity == s))
            )
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{counts} at or above --fail-on {report.gate.fail_on_name}",
                type=failing[0].severity.value,
            )
            failure.text = "\n".join(_detail(f, report) for f in failing)
        elif key in skips:
            skipped += 1
            ET.SubElement(case, "skipped", message=f"not read: {skips[key][0].reason}")
        out = [_detail(f, report) for f in here if f not in failing]
        out += [_skip_text(s, report) for s in skips.get(key, []) if not closed]
        if closed and failing:
            out += [_detail(f, report) for f in failing]
        if out:
            ET.SubElement(case, "system-out").text = "\n".join(out)
    tests = len(order)
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    root = ET.Element(
        "testsuites", name="vllm-upgrade-check", tests=str(tests), failures=str(failures), errors=str(errors)
    )
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
