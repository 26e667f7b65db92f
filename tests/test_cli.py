"""The command line: the example repo end to end, every exit code, the JSON schema."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()

EXPECTED_EXAMPLE_BLOCKERS = {
    ("deploy/scripts/serve.sh", 12, "VUC0270-001"),
    ("deploy/scripts/serve.sh", 17, "VUC0270-002"),
    ("deploy/scripts/serve.sh", 20, "VUC0280-001"),
    ("deploy/Dockerfile", 9, "VUC0280-003"),
    ("deploy/Dockerfile", 10, "VUC0280-004"),
    ("deploy/docker-compose.yaml", 11, "VUC0280-002"),
    ("deploy/k8s/deployment.yaml", 30, "VUC0270-007"),
    ("deploy/k8s/deployment.yaml", 31, "VUC0270-001"),
    ("deploy/requirements.txt", 3, "VUC0270-003"),
    ("deploy/requirements.txt", 4, "VUC0270-005"),
    ("deploy/requirements.txt", 5, "VUC0270-006"),
}


def scan_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["scan", *args, "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_example_reports_every_blocker_at_its_line(repo_root: Path) -> None:
    code, doc = scan_json(str(repo_root / "examples"), "--to", "0.28.0")
    assert code == 1
    got = {(f["path"], f["line"], f["rule_id"]) for f in doc["findings"] if f["severity"] == "blocker"}
    assert got == EXPECTED_EXAMPLE_BLOCKERS
    assert doc["from_version"] == "0.26.0" and doc["from_basis"] == "repository"
    assert doc["releases"] == ["0.27.0", "0.27.1", "0.28.0"]


def test_json_schema_fields(repo_root: Path) -> None:
    _code, doc = scan_json(str(repo_root / "examples"), "--to", "0.27.0")
    assert doc["schema_version"] == 1
    assert set(doc) >= {"from_version", "to_version", "findings", "skipped"}
    finding = doc["findings"][0]
    for key in ("rule_id", "severity", "release", "path", "line", "column", "subject", "message", "fix"):
        assert key in finding
    assert finding["severity"] in {"blocker", "warning", "info"}
    assert "\\" not in finding["path"]


def test_exit_0_when_nothing_to_report(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-seqs 8\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code == 0, result.output


def test_fail_on_never_and_warning(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    assert runner.invoke(app, ["scan", str(tmp_path), "--to", "0.27.0", "--fail-on", "never"]).exit_code == 0
    assert (
        runner.invoke(app, ["scan", str(tmp_path), "--to", "0.27.0", "--fail-on", "warning"]).exit_code == 1
    )


def test_a_metric_the_target_no_longer_exports_is_reported_whatever_the_from_version(tmp_path: Path) -> None:
    """The metric's rule (0.20.0) applies from 0.19.0 and, since 0.28.0 does not export the
    metric either, from 0.20.0 (not crossed) too; in an alert it is a blocker."""
    (tmp_path / "alerts.yaml").write_text(
        "groups:\n- name: vllm\n  rules:\n  - alert: Recomputed\n"
        "    expr: rate(vllm:prompt_tokens_recomputed[5m]) > 0\n"
    )
    for start in ("0.19.0", "0.20.0", "0.28.0"):
        code, doc = scan_json(str(tmp_path), "--to", "0.28.0", "--from", start)
        found = [f for f in doc["findings"] if f["rule_id"].startswith("VUC0200")]
        assert code == 1 and found and found[0]["severity"] == "blocker", (start, doc["findings"])
    # 0.19.1 still exported it: nothing to say there.
    code, doc = scan_json(str(tmp_path), "--to", "0.19.1", "--from", "0.19.0")
    assert code == 0 and not doc["findings"], doc["findings"]


@pytest.mark.parametrize("start", ["0.20.0", "0.27.0", "0.28.0"])
def test_a_flag_the_target_rejects_is_reported_whatever_the_from_version(start: str, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --disable-frontend-multiprocessing --max-num-partial-prefills 2\n")
    code, doc = scan_json(str(tmp_path), "--to", "0.28.0", "--from", start)
    blockers = sorted(f["rule_id"] for f in doc["findings"] if f["severity"] == "blocker")
    assert code == 1 and blockers == ["VUC0190-001", "VUC0270-001"], doc["findings"]


@pytest.mark.parametrize(
    "args",
    [
        ["scan", ".", "--to", "0.99.0"],
        ["scan", ".", "--to", "banana"],
        ["scan", ".", "--to", "0.27.0", "--from", "0.28.0"],
        ["scan", "/no/such/dir"],
        ["scan", ".", "--fail-on", "sometimes"],
        ["explain", "NOPE-001"],
    ],
)
def test_usage_errors_exit_2_without_traceback(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "vllm_upgrade_check", *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip()


def test_bad_rule_pack_exit_2_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "acme.yaml"
    bad.write_text("release: 0.27.0\nrules:\n  - id: X-001\n    severity: fatal\n")
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "rules", "validate", str(bad)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{bad}:3:" in proc.stderr and "Traceback" not in proc.stderr


def test_unparsable_vllm_file_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "k8s.yaml").write_text("image: vllm/vllm-openai:v0.26.0\nargs: [\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "--skip-unreadable"])
    assert result.exit_code == 0


def test_rules_commands() -> None:
    assert runner.invoke(app, ["rules", "validate", "rules"]).exit_code == 0
    listed = runner.invoke(app, ["rules", "list", "--release", "0.27.0"])
    assert "VUC0270-001" in listed.stdout and "VUC0280-001" not in listed.stdout
    schema = json.loads(runner.invoke(app, ["rules", "schema"]).stdout)
    assert "rules" in schema["properties"]
    explained = runner.invoke(app, ["explain", "vuc0270-001"])
    assert "## Evidence" in explained.stdout and "arg_utils.py" in explained.stdout
    # one line per item: "- vllm-X wheel: path:line (finding)"
    assert re.search(r"^- vllm-0\.26\.0 wheel: vllm/engine/arg_utils\.py:\d+ \(", explained.stdout, re.M)


def test_env_reports_environment() -> None:
    result = runner.invoke(app, ["env", "--format", "json", "--to", "0.28.0"])
    assert result.exit_code in (0, 1)
    doc = json.loads(result.stdout)
    assert doc["environment"]["python"].count(".") == 2
    assert "typer" in doc["environment"]["distributions"]


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("vllm-upgrade-check ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", ""], "--to is empty"),
        (["--from", ""], "--from is empty"),
        (["--to", "0.5.0"], "older than the oldest release with a pack (0.6.0)"),
    ],
)
def test_empty_and_too_old_versions_are_usage_errors(args: list[str], message: str, repo_root: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(repo_root / "examples"), *args],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_target_not_newer_than_the_repo_says_so(repo_root: Path) -> None:
    # No release is crossed, so no pack rule applies; what 0.6.1 does not have yet is still
    # found: the flags the example uses that 0.6.1's parser does not define.
    code, doc = scan_json(str(repo_root / "examples"), "--to", "0.6.1")
    assert code == 1 and doc["findings"]
    flags = [f for f in doc["findings"] if f["rule_id"] == "VUC000-003"]
    assert flags and all("after 0.6.1" in f["message"] for f in flags)
    # the rest: where the examples name their vLLM (newer than 0.6.1: nothing to move)
    assert {f["rule_id"] for f in doc["findings"]} <= {"VUC000-003", "VUC000-011"}
    assert any("is not older than the target 0.6.1" in note for note in doc["notes"])


@pytest.mark.parametrize("fmt", ["json", "sarif", "markdown", "junit", "github", "console"])
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(tmp_path: Path, fmt: str) -> None:
    name = os.fsdecode(b"lat\xe9in serve.sh")  # Latin-1 bytes: a lone surrogate once decoded
    try:
        (tmp_path / name).write_text("vllm serve m --max-num-partial-prefills 4\n")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    out = tmp_path / f"report.{fmt}"
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "-f", fmt, "-o", str(out), "--no-cache"])
    assert result.exit_code == 1, result.output
    text = out.read_text(encoding="utf-8")
    if fmt == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(text)["runs"][0]["results"]}
        assert uris == {"lat%E9in%20serve.sh"}
    elif fmt == "json":
        assert {f["path"] for f in json.loads(text)["findings"]} == {name}
    else:
        assert "in serve.sh" in text


def test_an_unknown_flag_with_capitals_is_reported_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("#!/bin/sh\nvllm serve m --max-num-seqS 4 --Foo 1\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "-f", "json", "--fail-on", "never", "--no-cache"])
    assert result.exit_code == 0, result.output
    found = {(f["rule_id"], f["subject"]) for f in json.loads(result.stdout)["findings"]}
    assert ("VUC000-001", "--max-num-seqS") in found and ("VUC000-001", "--Foo") in found


def test_output_to_a_directory_or_an_unwritable_place_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm_upgrade_check.errors import UsageError

    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "run.sh").write_text("vllm serve m --port 1\n")
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    for target in (".", "", str(out)):
        result = runner.invoke(app, ["scan", str(tmp_path / "repo"), "--to", "0.28.0", "--output", target])
        assert isinstance(result.exception, UsageError) and "it is a directory" in str(result.exception)

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    result = runner.invoke(app, ["scan", str(tmp_path / "repo"), "--to", "0.28.0", "--output", "r.json"])
    assert isinstance(result.exception, UsageError)
    assert str(result.exception).endswith("cannot write output: Permission denied")
    assert list(out.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["out", "repo"]


def test_an_env_var_the_target_no_longer_reads_is_reported_after_the_bump(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        'FROM vllm/vllm-openai:v0.28.0\nENV VLLM_CPU_SGL_KERNEL=1\nCMD ["--model", "org/m"]\n'
    )
    _code, doc = scan_json(str(tmp_path), "--to", "0.28.0")
    assert [f["subject"] for f in doc["findings"] if f["kind"] == "env_var"] == ["VLLM_CPU_SGL_KERNEL"], doc
