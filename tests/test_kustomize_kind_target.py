"""A kustomize patch whose ``target`` names a kind only applies to every base object of that
kind (kustomize matches each); those that launch vLLM get the patch's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

DEPLOY = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: server\n          image: {image}\n"
    '          args: ["--model", "acme/m", "--port", "8000"]\n'
)
ADD = "/spec/template/spec/containers/0/args/-"
INLINE = {
    "flow-json": f"""  - target: {{kind: Deployment}}\n    patch: '[{{"op": "add", "path": "{ADD}", "value": "--calculate-kv-scales"}}]'\n""",
    "literal-yaml": f"  - target:\n      kind: Deployment\n    patch: |-\n      - op: add\n        path: {ADD}\n        value: --calculate-kv-scales\n",
    "file": "  - target: {kind: Deployment}\n    path: ops.yaml\n",
}


def _repo(root: Path, patch: str, names: tuple[str, ...] = ("chat",), plain: str = "") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    docs = [DEPLOY.format(name=n, image="vllm/vllm-openai:v0.26.0") for n in names]
    if plain:
        docs.append(DEPLOY.format(name=plain, image="nginx:1.25"))
    (root / "base" / "deploy.yaml").write_text("---\n".join(docs))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\npatches:\n" + patch)
    (root / "prod" / "ops.yaml").write_text(f"- op: add\n  path: {ADD}\n  value: --calculate-kv-scales\n")
    return root


def _scan(root: Path) -> tuple[list[tuple[str, str | None, int | None]], list[str]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0", from_version="0.26.0"))
    found = sorted((f.rule.id, f.location.path, f.location.line) for f in report.findings if f.rule.id == "VUC0280-001")
    return found, [s.reason for s in report.skipped]


@pytest.mark.parametrize("style", sorted(INLINE))
def test_a_kind_only_target_patches_the_vllm_deployment(tmp_path: Path, style: str) -> None:
    root = _repo(tmp_path, INLINE[style])
    found, skipped = _scan(root)
    assert skipped == []
    where = "prod/ops.yaml" if style == "file" else "prod/kustomization.yaml"
    text = (root / where).read_text().split("\n")
    line = next(i for i, t in enumerate(text, 1) if "--calculate-kv-scales" in t)
    assert found == [("VUC0280-001", where, line)]


def test_every_object_of_the_kind_gets_the_patch(tmp_path: Path) -> None:
    from vllm_upgrade_check.parsing.yamlnodes import documents
    from vllm_upgrade_check.sources.scanners.base import SourceFile
    from vllm_upgrade_check.sources.scanners.kustomize_targets import Target, target_objects

    root = _repo(tmp_path, INLINE["flow-json"], names=("a", "b"), plain="web")
    files = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}

    def read(rel: str) -> SourceFile | None:
        return SourceFile(rel, files[rel].read_text()) if rel in files else None

    (doc,) = documents((root / "prod" / "kustomization.yaml").read_text())
    def names(target: Target) -> list[str]:
        return [name for _kind, name in target_objects(read, "prod/kustomization.yaml", doc, target)]

    assert names(Target("Deployment")) == ["a", "b", "web"]
    assert names(Target("Deployment", "b")) == ["b"]
    assert names(Target("StatefulSet")) == []
    found, skipped = _scan(root)
    assert skipped == [] and found  # the patch's flag is reported (once: one place wrote it)


def test_a_target_by_a_label_no_base_object_has_patches_nothing(tmp_path: Path) -> None:
    patch = (
        "  - target: {kind: Deployment, labelSelector: app=llm}\n"
        f"""    patch: '[{{"op": "add", "path": "{ADD}", "value": "--calculate-kv-scales"}}]'\n"""
    )
    found, skipped = _scan(_repo(tmp_path, patch))
    assert found == [] and skipped == []


def test_fix_edits_a_literal_patch_of_a_kind_only_target(tmp_path: Path) -> None:
    import subprocess
    import sys

    patch = (
        "  - target: {kind: Deployment}\n    patch: |\n      - op: replace\n"
        "        path: /spec/template/spec/containers/0/args\n"
        '        value: ["--model", "acme/m", "--swap-space", "4"]\n'
    )
    root = _repo(tmp_path, patch)
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    text = (root / "prod" / "kustomization.yaml").read_text()
    assert 'value: ["--model", "acme/m"]' in text, run.stdout + run.stderr
