"""Reporters: golden files for markdown, SARIF, JUnit and GitHub output, SARIF schema validity."""

from __future__ import annotations

import json
import os
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from typer.testing import CliRunner

from vllm_upgrade_check import __version__
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import Finding, Report, VersionBasis
from vllm_upgrade_check.reporters import FORMATS
from vllm_upgrade_check.reporters.github import annotation
from vllm_upgrade_check.reporters.sarif import sarif_log

_register()
runner = CliRunner()
HERE = Path(__file__).parent
GOLDEN = HERE / "golden"
SCHEMA = json.loads((HERE / "data" / "sarif-schema-2.1.0.json").read_text())
SUFFIX = {"markdown": "md", "sarif": "sarif.json", "junit": "xml", "github": "txt"}


def _render(fmt: str, *extra: str) -> str:
    result = runner.invoke(app, ["scan", str(GOLDEN / "input"), "--to", "0.28.0", "--format", fmt, *extra])
    assert result.exit_code == 1, result.output
    return result.stdout.replace(f'"version": "{__version__}"', '"version": "VERSION"')


def _golden_text(fmt: str) -> str:
    """The output compared with the golden file: for SARIF, ``tool.driver.rules`` keeps only
    the rules that have a result (the full list changes with every pack; it is checked in
    :func:`test_sarif_lists_every_loaded_rule`) and the repository's own URI is a name."""
    got = _render(fmt)
    if fmt != "sarif":
        return got
    log = json.loads(got)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    kept = sorted({r["ruleIndex"] for r in run["results"]})
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        res["ruleIndex"] = kept.index(res["ruleIndex"])
    run["tool"]["driver"]["rules"] = [rules[i] for i in kept]
    run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = "file:///REPOSITORY/"
    return json.dumps(log, indent=2) + "\n"


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_golden(fmt: str) -> None:
    got = _golden_text(fmt)
    golden = GOLDEN / f"scan.{SUFFIX[fmt]}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text()


def test_every_format_is_registered() -> None:
    assert set(SUFFIX) <= set(FORMATS)


def _validate(log: dict) -> None:
    errors = sorted(jsonschema.Draft4Validator(SCHEMA).iter_errors(log), key=str)
    assert not errors, errors[0].message


def test_sarif_is_valid_and_complete(repo_root: Path) -> None:
    result = runner.invoke(app, ["scan", str(repo_root / "examples"), "--to", "0.28.0", "-f", "sarif"])
    log = json.loads(result.stdout)
    _validate(log)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["VUC0270-001"]["properties"] == {
        "severity": "blocker",
        "release": "0.27.0",
        "fix_action": "remove_arg",
        "tags": rules["VUC0270-001"]["properties"]["tags"],
        "evidence": rules["VUC0270-001"]["properties"]["evidence"],
    }
    evidence = rules["VUC0270-001"]["properties"]["evidence"]
    assert evidence and all(isinstance(item, str) for item in evidence)
    assert evidence[0].startswith("vllm-0.26.0 wheel: vllm/engine/arg_utils.py:")
    for res in run["results"]:
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        severity = run["tool"]["driver"]["rules"][res["ruleIndex"]]["properties"]["severity"]
        assert res["level"] == {"blocker": "error", "warning": "warning", "info": "note"}[severity]
        assert len(res["partialFingerprints"]["vllmUpgradeCheck/v1"]) == 16
        uri = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not uri.startswith("/")
    fixed = {r["ruleId"] for r in run["results"] if "fixes" in r}
    assert {"VUC0270-001", "VUC0280-002", "VUC0270-003"} <= fixed
    assert "VUC0280-003" not in fixed  # display-only


def test_sarif_fix_replacement_is_the_fix(tmp_path: Path) -> None:
    text = "vllm serve m --max-num-partial-prefills 4 --port 1\n"
    (tmp_path / "a.sh").write_text(text)
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "-f", "sarif"])
    rep = json.loads(result.stdout)["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0][
        "replacements"
    ][0]
    start, length = rep["deletedRegion"]["charOffset"], rep["deletedRegion"]["charLength"]
    assert text[:start] + rep["insertedContent"]["text"] + text[start + length :] == "vllm serve m --port 1\n"


def test_sarif_without_results_is_valid(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("vllm serve m\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "-f", "sarif"])
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    _validate(log)
    assert log["runs"][0]["results"] == []


def _env_report() -> Report:
    pack, rule = load_registry().rule("VUC0270-004")  # type: ignore[misc]
    fact = Fact(
        FactKind.DISTRIBUTION, "torch", Location(None), raw="torch==2.11.0", value="2.11.0", origin="env"
    )
    finding = Finding(rule, fact, rule.severity, pack.release, "0.26.0", VersionBasis.ENVIRONMENT, "env")
    return Report("0.28.0", "0.26.0", VersionBasis.ENVIRONMENT, "env", ("0.27.0",), (finding,))


def test_sarif_environment_finding_uses_a_logical_location() -> None:
    log = sarif_log(_env_report())
    _validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]
    assert "physicalLocation" not in location
    assert location["logicalLocations"][0]["name"] == "torch"


def test_markdown_environment_section() -> None:
    from vllm_upgrade_check.reporters.markdown import render

    text = render(_env_report())
    assert "- Python environment: `torch==2.11.0`" in text and "### VUC0270-004 " in text


def test_junit_one_testcase_per_file() -> None:
    root = ET.fromstring(_render("junit").split("\n", 1)[1])
    cases = root.findall(".//testcase")
    failing = sorted(c.get("name") for c in cases if c.find("failure") is not None)
    assert failing == ["tests/golden/input/requirements.txt", "tests/golden/input/serve.sh"]
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["files_scanned"] == str(len(cases)) and props["exit_code"] == "1"
    assert root.get("failures") == "2" and int(root.get("tests", "0")) == len(cases)


def test_github_annotation_escapes() -> None:
    line = annotation(_env_report().findings[0])
    finding = _env_report().findings[0]
    command = {"blocker": "error", "warning": "warning", "info": "notice"}[finding.severity.value]
    assert line.startswith(f"::{command} title=VUC0270-004 ")
    assert "file=" not in line and "\n" not in line and "%0A" in line


def test_output_file_for_any_format(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    result = runner.invoke(
        app, ["scan", str(GOLDEN / "input"), "--to", "0.28.0", "-f", "markdown", "--output", str(out)]
    )
    assert result.exit_code == 1 and result.stdout == ""
    assert out.read_text().startswith("# vLLM upgrade: 0.26.0 → 0.28.0")


def test_report_command_writes_the_migration_report(tmp_path: Path) -> None:
    out = tmp_path / "MIGRATION.md"
    result = runner.invoke(app, ["report", str(GOLDEN / "input"), "--to", "0.28.0", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    for heading in ("### Before the upgrade", "### During the upgrade", "### After the upgrade", "## Details"):
        assert heading in text
    assert "- [ ] " in text and "[tests/golden/input/serve.sh:3](tests/golden/input/serve.sh#L3)" in text
