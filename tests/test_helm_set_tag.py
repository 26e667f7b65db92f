"""``helm upgrade|install|template --set image.tag=TAG`` of a local vLLM chart deploys that
release whatever the values files say: the tag is a vLLM image to move at its place in the
script (a Makefile recipe, a CI step), the from-version counts it, and ``fix`` bumps it there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

CHART = "image:\n  repository: vllm/vllm-openai\n  tag: v0.30.0\nargs: [\"--model\", \"acme/m\"]\n"

SCRIPTS = {
    "deploy.sh": (
        "#!/bin/sh\nhelm upgrade --install llm ./charts/llm --set image.tag=v0.20.0 --wait\n"
        "helm template llm charts/llm -n ml --set replicas=2,image.tag=v0.21.0\n"
        "helm upgrade llm ./charts/llm --set-string \"image.tag=v0.22.0\"\n",
        [(2, 57, "v0.20.0"), (3, 63, "v0.21.0"), (4, 55, "v0.22.0")],
    ),
    "Makefile": ("deploy:\n\thelm upgrade --install llm ./charts/llm --set=image.tag=v0.20.0\n", [(2, 58, "v0.20.0")]),
    ".github/workflows/deploy.yml": (
        "on: push\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: helm upgrade --install llm ./charts/llm --set image.tag=v0.20.0\n",
        [(6, 70, "v0.20.0")],
    ),
}


def _repo(tmp_path: Path, name: str, text: str, chart: str = CHART) -> Path:
    (tmp_path / "charts" / "llm").mkdir(parents=True)
    (tmp_path / "charts" / "llm" / "values.yaml").write_text(chart)
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_set_tag_is_the_release_the_command_deploys(tmp_path: Path, name: str) -> None:
    text, where = SCRIPTS[name]
    report = run_scan(ScanOptions.of(paths=[_repo(tmp_path, name, text)], to_version="0.33.0"))
    moves = sorted(
        (f.location.line, f.location.column, f.fact.value) for f in report.findings
        if f.rule.id == "VUC000-010" and f.location.path == name
    )
    assert moves == where
    assert report.from_version == "0.20.0"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_fix_bumps_the_set_tag_in_place(tmp_path: Path, name: str) -> None:
    text, _where = SCRIPTS[name]
    root = _repo(tmp_path, name, text)
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True, text=True, timeout=300,
    )
    expected = text.replace("v0.20.0", "v0.33.0").replace("v0.21.0", "v0.33.0").replace("v0.22.0", "v0.33.0")
    assert (root / name).read_text() == expected, run.stdout + run.stderr


@pytest.mark.parametrize(
    "command",
    [
        "helm upgrade llm ./charts/llm --set image.tag=$TAG",  # the script does not say
        "helm upgrade llm ./charts/llm --set image.repository=nginx",  # no tag
        "helm upgrade llm ./charts/other --set image.tag=v0.20.0",  # no such chart here
        "echo helm upgrade llm ./charts/llm --set image.tag=v0.20.0",  # not a helm command
    ],
)
def test_no_tag_where_the_command_sets_none(tmp_path: Path, command: str) -> None:
    report = run_scan(ScanOptions.of(paths=[_repo(tmp_path, "deploy.sh", command + "\n")], to_version="0.33.0"))
    assert [f for f in report.findings if f.location.path == "deploy.sh"] == []


def test_a_chart_that_runs_no_vllm(tmp_path: Path) -> None:
    root = _repo(tmp_path, "deploy.sh", SCRIPTS["deploy.sh"][0], chart="image:\n  repository: nginx\n  tag: '1.27'\n")
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    assert [f for f in report.findings if f.location.path == "deploy.sh"] == []
