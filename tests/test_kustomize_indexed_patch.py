"""A kustomize JSON 6902 patch that addresses container args by index (``/args/4``) pins
their positions: ``fix`` must not remove a word before it (the patch would then change
another word), so the removal is left to a person with a note; an append (``/args/-``)
pins nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ARGS = '[--model, facebook/opt-125m, --disable-log-requests, --gpu-memory-utilization, "0.90", --max-model-len, "4096"]'


def _repo(root: Path, patch: str) -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    (root / "base" / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.16.0\n"
        f"          args: {ARGS}\n"
    )
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "prod" / "kustomization.yaml").write_text(
        "resources: [../base]\npatches:\n  - path: patch.yaml\n    target: {kind: Deployment, name: vllm}\n"
    )
    (root / "prod" / "patch.yaml").write_text(patch)
    return root


def _fix(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.30.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "patch",
    [
        '- op: replace\n  path: /spec/template/spec/containers/0/args/4\n  value: "0.80"\n',
        "- op: remove\n  path: /spec/template/spec/containers/0/args/6\n",
        '- op: add\n  path: /spec/template/spec/containers/0/args/2\n  value: --enforce-eager\n',
    ],
    ids=["replace", "remove", "insert"],
)
def test_args_a_patch_addresses_by_index_keep_their_positions(tmp_path: Path, patch: str) -> None:
    root = _repo(tmp_path / "repo", patch)
    run = _fix(root)
    assert run.returncode == 1, run.stdout + run.stderr  # the blocker is left, for a person
    assert (root / "base" / "deploy.yaml").read_text().endswith(f"args: {ARGS}\n")  # not a byte changed
    assert "Needs a person" in run.stdout and "prod/patch.yaml:1" in run.stdout and "by their index" in run.stdout


def test_an_append_pins_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --enforce-eager\n")
    run = _fix(root)
    assert run.returncode == 0, run.stderr
    assert "--disable-log-requests" not in (root / "base" / "deploy.yaml").read_text()
    assert "by their index" not in run.stdout
