"""CI files that deploy a vLLM chart: the values files a GitHub Actions step or a GitLab CI
job passes to ``helm upgrade|install|template`` (``-f``, ``--values``) are read with the chart,
their flags reported at their own lines, and ``fix`` edits them there. GitLab CI jobs' scripts
are read as launches too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

CHART = "image:\n  repository: vllm/vllm-openai\n  tag: v0.20.0\nargs: [\"--model\", \"acme/m\"]\n"
PROD = "# production\nreplicas: 3\nargs:\n  - --model\n  - acme/m\n  - --swap-space\n  - \"8\"\n"

WORKFLOW = """name: deploy
on: push
jobs:
  deploy:
    runs-on: ubuntu-latest
    {defaults}steps:
      - uses: actions/checkout@v4
      - name: release
        {workdir}run: |
          helm upgrade --install chat {chart} \\
            {values} --wait
"""

GITLAB = """stages: [deploy]
.helm: &helm
  image: alpine/helm:3.14.0
deploy-prod:
  <<: *helm
  stage: deploy
  before_script:
    - helm version
  script:
    - echo deploying
    - helm upgrade --install chat {chart} {values}
"""


def _repo(tmp_path: Path, ci_path: str, ci_text: str, chart_values: str = CHART) -> Path:
    (tmp_path / "charts" / "chat").mkdir(parents=True)
    (tmp_path / "charts" / "chat" / "values.yaml").write_text(chart_values)
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "prod.yaml").write_text(PROD)
    (tmp_path / ci_path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / ci_path).write_text(ci_text)
    return tmp_path


def _found(root: Path) -> set[tuple[str, str, int]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0", from_version="0.20.0"))
    return {(f.rule.id, str(f.location.path), f.location.line or 0) for f in report.findings if f.severity.value == "blocker"}


@pytest.mark.parametrize(
    ("defaults", "workdir", "chart", "values"),
    [
        ("", "", "./charts/chat", "-f envs/prod.yaml"),
        ("", "", "charts/chat", "--values=envs/prod.yaml"),
        ("", "working-directory: charts\n        ", "./chat", "--values ../envs/prod.yaml"),
        ("defaults:\n      run:\n        working-directory: envs\n    ", "", "../charts/chat", "-f prod.yaml"),
    ],
)
def test_github_step_values_files_are_read(tmp_path: Path, defaults: str, workdir: str, chart: str, values: str) -> None:
    text = WORKFLOW.format(defaults=defaults, workdir=workdir, chart=chart, values=values)
    root = _repo(tmp_path, ".github/workflows/deploy.yml", text)
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6)}


@pytest.mark.parametrize("ci_path", [".gitlab-ci.yml", "ci/deploy.gitlab-ci.yml", ".gitlab/ci/deploy.yml"])
def test_gitlab_job_values_files_are_read(tmp_path: Path, ci_path: str) -> None:
    root = _repo(tmp_path, ci_path, GITLAB.format(chart="./charts/chat", values="-f envs/prod.yaml"))
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6)}


def test_values_passed_to_a_chart_that_is_not_vllm_are_not_read(tmp_path: Path) -> None:
    other = "image:\n  repository: nginx\n  tag: '1.27'\n"
    text = WORKFLOW.format(defaults="", workdir="", chart="./charts/chat", values="-f envs/prod.yaml")
    root = _repo(tmp_path, ".github/workflows/deploy.yml", text, chart_values=other)
    assert _found(root) == set()


def test_fix_edits_the_linked_values_file(tmp_path: Path) -> None:
    text = WORKFLOW.format(defaults="", workdir="", chart="./charts/chat", values="-f envs/prod.yaml")
    root = _repo(tmp_path, ".github/workflows/deploy.yml", text)
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--from", "0.20.0", "--to", "0.33.0"],
        capture_output=True, text=True, timeout=300,
    )
    assert (root / "envs" / "prod.yaml").read_text() == "# production\nreplicas: 3\nargs:\n  - --model\n  - acme/m\n", (
        run.stdout + run.stderr
    )
    assert "tag: v0.33.0" in (root / "charts" / "chat" / "values.yaml").read_text()


def test_gitlab_job_scripts_are_one_shell_session(tmp_path: Path) -> None:
    # the lines of before_script and script run in one shell: a variable set in one is read in the next
    gitlab = (
        "serve:\n  image: vllm/vllm-openai:v0.20.0\n  before_script:\n    - export EXTRA=\"--swap-space 4\"\n"
        "  script:\n    - vllm serve acme/m $EXTRA\n    - >-\n      vllm serve acme/n\n      --num-scheduler-steps 8\n"
    )
    (tmp_path / ".gitlab-ci.yml").write_text(gitlab)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0"))
    got = {(f.fact.raw, f.location.line) for f in report.findings if f.severity.value == "blocker"}
    assert ("--swap-space", 4) in got
    assert ("--num-scheduler-steps", 9) in got
    assert report.from_version == "0.20.0"
