"""Kustomize strategic-merge patches of a vLLM container's args: kustomize merges containers
by name, so the args a patch writes are the args the overlay deploys; they are checked where
the patch writes them, and ``fix`` removes them there before it moves the base image."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

BASE = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: sidecar\n          image: envoyproxy/envoy:v1.30\n"
    "        - name: server\n          image: {image}\n"
    '          args: ["--model", "acme/m", "--port", "8000"]\n'
)
PATCH = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: {container}\n          args:\n            - --model\n            - acme/m\n"
    '            - --swap-space\n            - "16"\n          env:\n            - name: VLLM_RPC_TIMEOUT\n'
    '              value: "100000"\n'
)
ENTRIES = {
    "patches-path": "patches:\n  - path: bigger.yaml\n",
    "patches-target": "patches:\n  - path: bigger.yaml\n    target:\n      kind: {kind}\n      name: chat\n",
    "strategic-merge": "patchesStrategicMerge:\n  - bigger.yaml\n",
}


def _repo(
    root: Path,
    entry: str,
    kind: str = "Deployment",
    container: str = "server",
    image: str = "vllm/vllm-openai:v0.17.0",
) -> Path:
    (root / "base").mkdir(parents=True)
    (root / "overlays" / "prod").mkdir(parents=True)
    (root / "base" / "deploy.yaml").write_text(BASE.format(kind=kind, image=image))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(
        "resources:\n  - ../../base\n" + ENTRIES[entry].format(kind=kind)
    )
    (root / "overlays" / "prod" / "bigger.yaml").write_text(PATCH.format(kind=kind, container=container))
    return root


def _found(root: Path) -> list[tuple[str, str, int]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    return sorted((f.rule.id, f.location.path, f.location.line) for f in report.findings if f.rule.id != "VUC000-010")


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_patch_args_and_env_are_checked_where_the_patch_writes_them(tmp_path: Path, entry: str, kind: str) -> None:
    got = _found(_repo(tmp_path, entry, kind))
    assert got == [
        ("VUC0180-001", "overlays/prod/bigger.yaml", 13),
        ("VUC0230-002", "overlays/prod/bigger.yaml", 16),
    ]


def test_args_patched_into_another_container_do_not_count(tmp_path: Path) -> None:
    # (a VLLM_ env var written in any manifest is reported on its own, merged or not)
    for where, container in (("one", "sidecar"), ("two", "nope")):
        got = _found(_repo(tmp_path / where, "patches-path", container=container))
        assert [f for f in got if f[0] != "VUC0230-002"] == []


def test_a_base_that_is_not_vllm_does_not_count(tmp_path: Path) -> None:
    got = _found(_repo(tmp_path, "strategic-merge", image="nginx:1.27"))
    assert [f for f in got if f[0] != "VUC0230-002"] == []


def test_fix_removes_the_patch_flag_before_moving_the_base_image(tmp_path: Path) -> None:
    root = _repo(tmp_path, "patches-path")
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    patch = (root / "overlays" / "prod" / "bigger.yaml").read_text()
    assert "--swap-space" not in patch and '"16"' not in patch, run.stdout + run.stderr
    assert "            - acme/m\n          env:\n" in patch  # every other byte kept
    assert "vllm/vllm-openai:v0.33.0" in (root / "base" / "deploy.yaml").read_text()


INLINE_JSON6902 = """resources:
  - ../../base
patches:
  - target:
      kind: {kind}
      name: chat
    patch: |-
      - op: add
        path: /spec/template/spec/containers/1/args/-
        value: --swap-space
      - op: add
        path: /spec/template/spec/containers/1/args/-
        value: "16"
"""
INLINE_SMP = """resources:
  - ../../base
patches:
  - patch: |
      apiVersion: apps/v1
      kind: {kind}
      metadata:
        name: chat
      spec:
        template:
          spec:
            containers:
              - name: server
                args: [--model, acme/m, --max-num-partial-prefills, "2"]
"""


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
@pytest.mark.parametrize("order", ["json-first", "smp-first"])
def test_inline_block_patches_are_read_at_their_lines(tmp_path: Path, kind: str, order: str) -> None:
    root = _repo(tmp_path, "patches-path", kind)
    json_part = INLINE_JSON6902.format(kind=kind)
    smp_part = INLINE_SMP.format(kind=kind).split("patches:\n", 1)[1]
    json_entries = json_part.split("patches:\n", 1)[1]
    head = "resources:\n  - ../../base\npatches:\n"
    text = head + (json_entries + smp_part if order == "json-first" else smp_part + json_entries)
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(text)
    lines = text.split("\n")
    swap = next(i for i, line in enumerate(lines, 1) if "value: --swap-space" in line)
    partial = next(i for i, line in enumerate(lines, 1) if "--max-num-partial-prefills" in line)
    got = _found(root)
    assert ("VUC0180-001", "overlays/prod/kustomization.yaml", swap) in got
    assert ("VUC0270-001", "overlays/prod/kustomization.yaml", partial) in got
    assert len([g for g in got if g[1] == "overlays/prod/kustomization.yaml"]) == 2  # once each


def test_an_inline_patch_holds_the_image_back(tmp_path: Path) -> None:
    root = _repo(tmp_path, "patches-path")
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(INLINE_JSON6902.format(kind="Deployment"))
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "vllm/vllm-openai:v0.17.0" in (root / "base" / "deploy.yaml").read_text()
