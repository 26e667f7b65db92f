"""The CI surfaces as users run them: the pre-commit hook through real ``pre-commit`` on a
temporary git repository, and the GitHub Action's steps as the scripts ``action.yml`` holds,
run with the inputs the Action passes.

The pre-commit repository uses a ``repo: local`` entry that copies our
``.pre-commit-hooks.yaml`` definition (entry, file filters, ``pass_filenames``) with
``language: system``: the tool under test is already installed on ``PATH``, so pre-commit
builds no environment and needs no network.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PRE_COMMIT = BIN / "pre-commit"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "VUC_", "VLLM_UPGRADE_CHECK"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        NO_COLOR="1",
        HOME=str(tmp_path / "home"),
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        VLLM_UPGRADE_CHECK_CACHE_DIR=str(tmp_path / "cache"),
        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
    )  # fmt: skip
    env.update(extra)
    return env


def _git(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)


# ---------------------------------------------------------------------------------------------
# pre-commit

SCAN_HOOK = "vllm-upgrade-check"
BAD = {
    "serve.py": "from vllm import LLM\n\nllm = LLM(model='m', max_num_partial_prefills=4)\n",
    "vllm.service": (
        "[Unit]\nDescription=vLLM\n\n[Service]\n"
        "ExecStart=/opt/venv/bin/vllm serve m --max-num-partial-prefills 4\n\n"
        "[Install]\nWantedBy=multi-user.target\n"
    ),
}


def _local_hooks() -> dict[str, Any]:
    """A ``repo: local`` entry with every hook of ``.pre-commit-hooks.yaml`` as defined there."""
    hooks = []
    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()):
        hooks.append({**hook, "language": "system"})
    return {"repos": [{"repo": "local", "hooks": [h for h in hooks if h["id"] == SCAN_HOOK]}]}


@pytest.fixture
def hooked_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    assert PRE_COMMIT.exists(), "pre-commit is one of the test extras: pip install -e '.[test]'"
    repo, env = tmp_path / "repo", _env(tmp_path)
    repo.mkdir()
    (tmp_path / "home").mkdir()
    _git(repo, env, "init", "-q", "-b", "main")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(_local_hooks()))
    (repo / ".vllm-upgrade-check.toml").write_text('to = "0.28.0"\nfrom = "0.26.0"\n')
    (repo / "README.md").write_text("# serving\n")
    installed = subprocess.run([str(PRE_COMMIT), "install"], cwd=repo, env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    _git(repo, env, "add", ".")
    first = _git(repo, env, "commit", "-q", "-m", "configuration")
    assert first.returncode == 0, first.stdout + first.stderr  # the hook ran on the .toml and passed
    return repo, env


@pytest.mark.parametrize("name", sorted(BAD))
def test_pre_commit_hook_fails_a_commit_of_only_that_file(name: str, hooked_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = hooked_repo
    (repo / name).write_text(BAD[name])
    _git(repo, env, "add", name)
    done = _git(repo, env, "commit", "-m", f"add {name}")
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert re.search(r"vllm-upgrade-check\.+Failed", output), output
    assert "VUC0270-001" in output and name in output
    assert len(_git(repo, env, "log", "--oneline").stdout.splitlines()) == 1


def test_pre_commit_hook_skips_a_commit_of_documentation(hooked_repo: tuple[Path, dict[str, str]]) -> None:
    repo, env = hooked_repo
    # a launch the gate fails on is already in the repository (committed past the hook) ...
    (repo / "serve.sh").write_text("vllm serve m --max-num-partial-prefills 4\n")
    _git(repo, env, "add", "serve.sh")
    assert _git(repo, env, "commit", "-q", "--no-verify", "-m", "launch").returncode == 0
    # ... so a commit that touches only documentation passes because the hook skips, not by a scan
    (repo / "README.md").write_text("# serving\n\nHow we run vLLM.\n")
    _git(repo, env, "add", "README.md")
    done = _git(repo, env, "commit", "-m", "docs")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"vllm-upgrade-check\.+\(no files to check\)Skipped", output), output
    # and a commit touching the launch again is checked (and fails)
    (repo / "serve.sh").write_text("vllm serve m --max-num-partial-prefills 8\n")
    _git(repo, env, "add", "serve.sh")
    again = _git(repo, env, "commit", "-m", "launch again")
    assert again.returncode != 0 and "Failed" in again.stdout + again.stderr


# ---------------------------------------------------------------------------------------------
# The GitHub Action's steps

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _evaluate(expr: str, inputs: dict[str, str], context: dict[str, str]) -> str:
    """The GitHub expressions ``action.yml`` uses, evaluated as GitHub does; any other one
    fails the test, so that the Action cannot change without this test following it."""
    m = re.fullmatch(r"inputs\.([a-z-]+)", expr)
    if m:
        return inputs[m.group(1)]
    if expr in context:
        return context[expr]
    m = re.fullmatch(r"inputs\.([a-z-]+) == '([^']*)' && format\('([^']*)', ([a-z.]+)\) \|\| ''", expr)
    if m:
        return m.group(3).format(context[m.group(4)]) if inputs[m.group(1)] == m.group(2) else ""
    m = re.fullmatch(r"steps\.scan\.outputs\.([a-z-]+)", expr)
    if m and m.group(1) in context:
        return context[m.group(1)]
    raise AssertionError(f"action.yml uses an expression this test does not know: {expr}")


def _step(name: str) -> dict[str, Any]:
    return next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)


def _run_step(name: str, inputs: dict[str, str], context: dict[str, str], cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    step = _step(name)
    assert step["shell"] == "bash"
    env = _env(tmp_path)
    env.update({k: EXPR.sub(lambda m: _evaluate(m.group(1), inputs, context), str(v)) for k, v in step.get("env", {}).items()})
    env["GITHUB_OUTPUT"] = context["github_output"]
    assert not EXPR.search(step["run"]), "the script itself takes its inputs from env"
    # GitHub runs `shell: bash` steps as `bash --noprofile --norc -eo pipefail {0}`
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def _monorepo(tmp_path: Path, broken: bool = False) -> Path:
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    (repo / "other").mkdir()
    _git(repo, _env(tmp_path), "init", "-q")
    (repo / "deploy" / "run.sh").write_text("vllm serve m \\\n  --max-num-partial-prefills 4\n")
    (repo / "deploy" / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.26.0\n")
    (repo / "other" / "serve.sh").write_text("vllm serve m --disable-log-requests\n")
    if broken:
        (repo / "deploy" / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n    command: [a, b\n")
    return repo


CASES = {
    "blocker": ({"paths": "deploy", "fail-on": "blocker", "to": "0.28.0"}, False, 1),
    "never": ({"paths": "deploy", "fail-on": "never", "to": "0.28.0"}, False, 0),
    "two-paths": ({"paths": "deploy other", "fail-on": "blocker", "to": "0.28.0"}, False, 1),
    "unreadable": ({"paths": "deploy", "fail-on": "never", "to": "0.28.0"}, True, 2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_action_scan_and_gate_steps(case: str, tmp_path: Path) -> None:
    given, broken, expected = CASES[case]
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given, cache="false")
    repo = _monorepo(tmp_path, broken)
    output = tmp_path / "github_output"
    output.write_text("")
    context = {"runner.temp": str(tmp_path / "runner-temp"), "github.action_path": str(ROOT), "github_output": str(output)}
    scan = _run_step("Scan", inputs, context, repo, tmp_path)
    assert scan.returncode == 0, scan.stdout + scan.stderr  # the step records the code; the Gate step fails
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert outputs["exit-code"] == str(expected)
    annotations = [line for line in scan.stdout.splitlines() if line.startswith("::")]
    files = {m.group(1) for line in annotations if (m := re.search(r"file=([^,:]+)", line))}
    assert files and all((repo / f).is_file() for f in files), files  # paths from the repository root
    assert "deploy/run.sh" in files
    assert ("other/serve.sh" in files) == (case == "two-paths")
    if broken:
        assert any(line.startswith("::error") and "deploy/compose.yaml" in line for line in annotations)
    if expected:
        assert annotations[-1].startswith("::error") and f"exit {expected}" in annotations[-1]
    sarif = json.loads((repo / inputs["sarif-file"]).read_text())
    run = sarif["runs"][0]
    assert run["invocations"][0]["exitCode"] == expected
    assert "::warning title=vllm-upgrade-check::the SARIF run exited" not in scan.stdout
    gate = _run_step("Gate", inputs, {**context, "exit-code": outputs["exit-code"]}, repo, tmp_path)
    assert gate.returncode == expected
    assert ("::error title=vllm-upgrade-check::" in gate.stdout) == (expected != 0)
