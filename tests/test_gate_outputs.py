"""What every output format says of a run: skipped files and the gate's verdict (SARIF
invocations, GitHub annotations, JUnit errors, JSON, console), paths relative to the
repository root, SARIF rules, and JUnit agreeing with the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.knowledge.registry import load_registry

_register()
runner = CliRunner()
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
BROKEN_COMPOSE = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n    command: [--model, x\n  bad: [\n"
RUN_SH = "vllm serve m \\\n  --max-num-partial-prefills 4 --port 1\n"
RULES = Path(__file__).parent / "fixtures" / "fix" / "rules"
ORG = ["--to", "0.28.0", "--from", "0.27.1", "--rules", str(RULES), "--select", "ORG"]


def _validate(log: dict) -> None:
    errors = sorted(jsonschema.Draft4Validator(SCHEMA).iter_errors(log), key=str)
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:3]]


def _repo(tmp_path: Path, git: str = "dir") -> Path:
    """A repository at ``tmp_path/repo`` with ``deploy/`` holding a broken compose file and a
    run.sh with a removed flag; ``git`` is ``dir`` (a clone), ``file`` (a worktree) or ``none``."""
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    if git == "dir":
        (repo / ".git").mkdir()
    elif git == "file":
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    (repo / "deploy" / "compose.yaml").write_text(BROKEN_COMPOSE)
    (repo / "deploy" / "run.sh").write_text(RUN_SH)
    return repo


def _scan(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["scan", *args, "--no-cache"])
    return result.exit_code, result.stdout


def test_sarif_with_a_skipped_file_is_valid_and_says_why_the_run_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    code, out = _scan("deploy", "--to", "0.28.0", "-f", "sarif")
    assert code == 2
    log = json.loads(out)
    _validate(log)
    run = log["runs"][0]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    assert "deploy/compose.yaml" in invocation["exitCodeDescription"]
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "YAML" in note["message"]["text"]
    physical = note["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "deploy/compose.yaml", "uriBaseId": "%SRCROOT%"}
    assert physical["region"]["startLine"] >= 1
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"deploy/run.sh"}


def test_skipped_file_that_does_not_fail_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    (repo / "deploy" / "run.sh").write_text("vllm serve m\n")
    monkeypatch.chdir(repo)
    code, out = _scan("deploy", "--to", "0.28.0", "-f", "sarif", "--skip-unreadable")
    assert code == 0
    log = json.loads(out)
    _validate(log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True and invocation["exitCode"] == 0
    assert [n["level"] for n in invocation["toolExecutionNotifications"]] == ["warning"]
    code, out = _scan("deploy", "--to", "0.28.0", "-f", "github", "--skip-unreadable")
    assert code == 0
    assert "::warning file=deploy/compose.yaml,line=" in out and "::error" not in out
    code, out = _scan("deploy", "--to", "0.28.0", "-f", "junit", "--skip-unreadable")
    root = ET.fromstring(out.split("\n", 1)[1])
    assert (root.get("errors"), root.get("failures")) == ("0", "0")
    assert [c.get("name") for c in root.iter("testcase") if c.find("skipped") is not None] == [
        "deploy/compose.yaml"
    ]


def test_empty_run_sarif_lists_every_loaded_rule(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out = _scan(str(tmp_path / "empty"), "--to", "0.28.0", "-f", "sarif")
    assert code == 0
    log = json.loads(out)
    _validate(log)
    run = log["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert ids == [rule.id for _pack, rule in load_registry().rules()]
    assert run["results"] == []
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True and invocation["toolExecutionNotifications"] == []
    assert invocation["properties"]["files_scanned"] == 0


def test_sarif_results_index_the_rules_of_extra_packs(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --old-test-flag 1\nexport VLLM_OLD_TEST_VAR=1\n")
    code, out = _scan(str(tmp_path), *ORG, "-f", "sarif")
    log = json.loads(out)
    _validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {rule.id for _p, rule in load_registry([RULES]).rules()}
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


@pytest.mark.parametrize("git", ["dir", "file"])
def test_github_annotations_name_skipped_files_from_the_repository_root(
    git: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path, git)
    monkeypatch.chdir(repo / "deploy")  # the working directory does not matter in a repository
    code, out = _scan(".", "--to", "0.28.0", "-f", "github")
    assert code == 2
    lines = out.splitlines()
    assert any(line.startswith("::error file=deploy/compose.yaml,line=") for line in lines)
    assert any(line.startswith("::error file=deploy/run.sh,line=2,") for line in lines)
    assert lines[-1].startswith("::error title=vllm-upgrade-check::failed (exit 2)")


@pytest.mark.parametrize(
    ("git", "cwd", "args", "expected"),
    [
        ("dir", "repo", ["deploy"], "deploy/run.sh"),
        ("dir", "repo", ["deploy/run.sh"], "deploy/run.sh"),
        ("dir", "tmp", ["repo/deploy"], "deploy/run.sh"),  # the repository, not the cwd
        ("dir", "repo", ["deploy", "other"], "deploy/run.sh"),
        ("none", "repo", ["deploy"], "deploy/run.sh"),  # the working directory
        ("none", "tmp", ["repo/deploy/"], "repo/deploy/run.sh"),
        ("none", "elsewhere", ["../repo/deploy"], "run.sh"),  # outside the cwd: the folder
    ],
)
def test_paths_resolve_from_the_repository_root(
    git: str, cwd: str, args: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path, git)
    (repo / "other").mkdir()
    (repo / "other" / "serve.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir({"repo": repo, "tmp": tmp_path, "elsewhere": tmp_path / "elsewhere"}[cwd])
    common = ["--to", "0.28.0", "--skip-unreadable"]
    _code, out = _scan(*args, *common, "-f", "sarif")
    run = json.loads(out)["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert expected in uris
    root = Path(base.removeprefix("file://"))
    assert all((root / uri).is_file() for uri in uris)
    _code, out = _scan(*args, *common, "-f", "github")
    assert f"file={expected}," in out
    _code, out = _scan(*args, *common, "-f", "json")
    found = json.loads(out)["findings"]
    assert expected in {f["repo_path"] for f in found}
    _code, out = _scan(*args, *common, "-f", "junit")
    assert f'name="{expected}"' in out
    _code, out = _scan(*args, *common)
    assert f"{expected}:2:" in out


def test_json_and_console_tell_the_skipped_file_and_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    code, out = _scan("deploy", "--to", "0.28.0", "-f", "json")
    document = json.loads(out)
    assert code == 2 and document["gate"]["exit_code"] == 2
    [skip] = document["skipped"]
    assert skip["path"] == "compose.yaml" and skip["repo_path"] == "deploy/compose.yaml"
    assert skip["configures_vllm"] and skip["fails_gate"]
    code, out = _scan("deploy", "--to", "0.28.0")
    assert "deploy/compose.yaml" in out and "fails the gate" in out and "failed (exit 2)" in out


BLOCK = "vllm serve m --old-test-flag 1\n"
WARN_ONLY = "export VLLM_OLD_TEST_VAR=1\nvllm serve m\n"


@pytest.mark.parametrize("fail_on", ["blocker", "warning", "info", "never"])
@pytest.mark.parametrize("files", [("warn",), ("warn", "block"), ()])
def test_junit_agrees_with_the_exit_code(fail_on: str, files: tuple[str, ...], tmp_path: Path) -> None:
    for name in files:
        (tmp_path / f"{name}.sh").write_text(WARN_ONLY if name == "warn" else BLOCK)
    code, out = _scan(str(tmp_path), *ORG, "--fail-on", fail_on, "-f", "junit")
    root = ET.fromstring(out.split("\n", 1)[1])
    failing = int(root.get("failures", "0")) + int(root.get("errors", "0"))
    assert (failing > 0) == (code != 0)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["exit_code"] == str(code) and props["files_scanned"] == str(len(files))
    assert root.get("tests") == str(len(files))
    if "warn" in files and fail_on == "blocker":
        case = next(c for c in root.iter("testcase") if c.get("name", "").endswith("warn.sh"))
        assert case.find("failure") is None and "VLLM_OLD_TEST_VAR" in (case.findtext("system-out") or "")


def test_junit_of_a_file_that_fails_closed_is_an_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    code, out = _scan(str(repo / "deploy"), "--to", "0.28.0", "-f", "junit")
    root = ET.fromstring(out.split("\n", 1)[1])
    assert code == 2 and root.get("errors") == "1"
    errors = [c.get("name") for c in root.iter("testcase") if c.find("error") is not None]
    assert errors == ["deploy/compose.yaml"]


def _action_steps() -> dict[str, dict]:
    import yaml

    action = yaml.safe_load((Path(__file__).parents[1] / "action.yml").read_text())
    return {step.get("name", ""): step for step in action["runs"]["steps"]}


@pytest.mark.parametrize(("fail_on", "expected"), [("", 2), ("never", 2)])
def test_action_scan_and_gate_steps_show_why_the_job_fails(fail_on: str, expected: int, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    repo = _repo(tmp_path)
    steps = _action_steps()
    output = tmp_path / "github_output"
    output.write_text("")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(output),
        "VLLM_UPGRADE_CHECK_CACHE_DIR": "",
        "VUC_PATHS": "deploy",
        "VUC_TO": "0.28.0",
        "VUC_FROM": "",
        "VUC_FAIL_ON": fail_on,
        "VUC_BASELINE": "",
        "VUC_SARIF": "out.sarif",
    }
    scan = subprocess.run(
        ["bash", "-c", steps["Scan"]["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert scan.returncode == 0, scan.stderr
    assert f"exit-code={expected}" in output.read_text()
    assert "::error file=deploy/compose.yaml,line=" in scan.stdout
    assert "::error title=vllm-upgrade-check::failed (exit 2)" in scan.stdout
    log = json.loads((repo / "out.sarif").read_text())
    assert log["runs"][0]["invocations"][0]["exitCode"] == expected
    gate = subprocess.run(
        ["bash", "-c", steps["Gate"]["run"]],
        env={**env, "VUC_CODE": str(expected)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert gate.returncode == expected and "::error title=vllm-upgrade-check::" in gate.stdout


def test_action_gate_step_passes_on_zero() -> None:
    import os
    import subprocess

    gate = subprocess.run(
        ["bash", "-c", _action_steps()["Gate"]["run"]],
        env={**os.environ, "VUC_CODE": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert gate.returncode == 0 and "::error" not in gate.stdout
