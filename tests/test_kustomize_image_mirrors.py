"""A kustomization's ``images:`` entry that maps vLLM's image to a mirror (``newName``), or a
mirror's name to vLLM's image: the container still runs vLLM, at the entry's ``newTag``; its
args are checked, the tag is the version to move and ``fix`` bumps it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: engine
          image: {image}
          args: ["--model", "acme/m", "--swap-space", "4"]
        - name: proxy
          image: registry.corp/ml/proxy:1.0
          args: ["--swap-space", "4"]
"""


def _repo(root: Path, image: str, name: str, new_name: str, tag: str = "v0.16.0") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "overlay").mkdir()
    (root / "base" / "deploy.yaml").write_text(DEPLOY.format(image=image))
    (root / "base" / "kustomization.yaml").write_text("resources:\n  - deploy.yaml\n")
    (root / "overlay" / "kustomization.yaml").write_text(
        f"resources:\n  - ../base\nimages:\n  - name: {name}\n    newName: {new_name}\n    newTag: {tag}\n"
    )
    return root


CASES = {
    "to-mirror": ("vllm/vllm-openai:latest", "vllm/vllm-openai", "registry.corp/mirror/vllm-openai"),
    "from-mirror": ("registry.corp/ml/engine:latest", "registry.corp/ml/engine", "vllm/vllm-openai"),
    "from-mirror-untagged": ("registry.corp/ml/engine", "registry.corp/ml/engine", "docker.io/vllm/vllm-openai"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_mapped_container_is_vllm_at_the_new_tag(tmp_path: Path, case: str) -> None:
    root = _repo(tmp_path, *CASES[case])
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.20.0"))
    assert report.from_version == "0.16.0"
    got = {(f.rule.id, f.location.path, f.location.line) for f in report.findings}
    assert ("VUC0180-001", "base/deploy.yaml", 11) in got  # the engine's --swap-space
    assert ("VUC0180-001", "base/deploy.yaml", 14) not in got  # not the proxy's
    assert any(r == "VUC000-010" and p == "overlay/kustomization.yaml" for r, p, _line in got)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fix_bumps_the_new_tag_and_removes_the_flag(tmp_path: Path, case: str) -> None:
    root = _repo(tmp_path, *CASES[case])
    fix_paths(ScanOptions.of(paths=[root], to_version="0.20.0"), bump=True)
    assert "newTag: v0.20.0\n" in (root / "overlay" / "kustomization.yaml").read_text()
    deploy = (root / "base" / "deploy.yaml").read_text()
    assert 'args: ["--model", "acme/m"]\n' in deploy
    assert 'args: ["--swap-space", "4"]\n' in deploy  # the proxy's own flag stays


def test_unmapped_other_image_is_not_read_as_vllm(tmp_path: Path) -> None:
    root = _repo(tmp_path, "registry.corp/ml/engine:latest", "registry.corp/ml/other", "vllm/vllm-openai")
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.20.0"))
    assert not [f for f in report.findings if f.location.path == "base/deploy.yaml"]


def test_mirror_pin_is_named_as_deployed(tmp_path: Path) -> None:
    root = _repo(tmp_path, *CASES["to-mirror"])
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.20.0"))
    assert report.from_source is not None and "registry.corp/mirror/vllm-openai:v0.16.0" in report.from_source



def test_manifest_without_vllm_and_no_mapping_gives_nothing(tmp_path: Path) -> None:
    """A manifest that names no vLLM is read only for what a kustomization may map to vLLM's
    image: with no such mapping, nothing of it reaches the report (its env neither)."""
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: web\n"
        "      image: nginx:1.27\n      args: [\"-g\", \"daemon off;\"]\n"
        "      env:\n        - {name: HF_HUB_OFFLINE, value: '1'}\n"
    )
    (tmp_path / "deploy.yaml").write_text(text)
    facts: list = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.20.0"), facts_out=facts)
    assert not facts and not report.findings


def test_vendor_looking_mirror_mapped_to_vllm_has_no_unknown_vendor_note(tmp_path: Path) -> None:
    image = "registry.corp/mirror/vllm-openai"
    root = _repo(tmp_path, image + ":latest", image, "vllm/vllm-openai")
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.20.0"))
    assert ("VUC0180-001", "base/deploy.yaml", 11) in {(f.rule.id, f.location.path, f.location.line) for f in report.findings}
    assert not [n for n in report.notes if "unknown vendor" in n]


def test_mirror_of_a_registry_qualified_name_keeps_its_tag(tmp_path: Path) -> None:
    root = _repo(tmp_path, "docker.io/vllm/vllm-openai:latest", "docker.io/vllm/vllm-openai", "registry.corp/m/vllm-openai")
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.20.0"))
    assert report.from_source == "overlay/kustomization.yaml:4:11 registry.corp/m/vllm-openai:v0.16.0"
