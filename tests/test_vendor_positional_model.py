"""An image whose repository's name says vLLM but that is no known vLLM image
(``registry.example.net/ml/vllm-rocm:v0.16.0``), run with a model as ``vllm serve``'s
positional (``["acme/model-7b", "--swap-space", "4"]``) as well as with ``--model``: a vLLM
launch whose release is unknown, the note saying so placed at the image."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.images import positional_model, vendor_vllm_image

REMOVED = "VUC0180-001"  # --swap-space, removed in 0.18.0
VENDOR = "registry.example.net/ml/vllm-rocm:v0.16.0"


def _scan(root: Path, files: dict[str, str]) -> tuple[list[tuple[str | None, int | None]], list[str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"))
    found = sorted((f.location.path, f.location.line) for f in report.findings if f.rule.id == REMOVED)
    return found, [n for n in report.notes if "unknown vendor" in n]


@pytest.mark.parametrize(
    ("command", "line"),
    [
        ('["acme/model-7b", "--swap-space", "4"]', 4),
        ("acme/model-7b --swap-space 4", 4),
        ('["--model", "acme/model-7b", "--swap-space", "4"]', 4),
        ('["serve", "acme/model-7b", "--swap-space", "4"]', 4),
    ],
)
def test_compose_vendor_image_with_a_positional_model(tmp_path: Path, command: str, line: int) -> None:
    compose = f"services:\n  llm:\n    # the vendor's build\n    image: {VENDOR}\n    command: {command}\n"
    found, notes = _scan(tmp_path, {"compose.yaml": compose})
    assert found == [("compose.yaml", 5)]
    assert len(notes) == 1 and f"compose.yaml:{line}:" in notes[0]


def test_kubernetes_vendor_image_with_a_positional_model(tmp_path: Path) -> None:
    manifest = f"""apiVersion: v1
kind: Pod
metadata: {{name: x}}
spec:
  containers:
    - name: a
      image: {VENDOR}
      args: ["acme/model-7b", "--swap-space", "4"]
"""
    found, notes = _scan(tmp_path, {"pod.yaml": manifest})
    assert found == [("pod.yaml", 8)]
    assert len(notes) == 1 and "pod.yaml:7:" in notes[0]


def test_dockerfile_from_a_vendor_image_with_a_positional_model(tmp_path: Path) -> None:
    dockerfile = f'FROM {VENDOR}\nENV HF_HOME=/cache\nCMD ["acme/model-7b", "--swap-space", "4"]\n'
    found, notes = _scan(tmp_path, {"Dockerfile": dockerfile})
    assert found == [("Dockerfile", 3)]
    assert len(notes) == 1 and "Dockerfile:1:" in notes[0]


@pytest.mark.parametrize(
    "args",
    [
        ["python", "report.py", "--swap-space", "4"],
        ["scripts/run.sh", "--swap-space", "4"],
        ["/entrypoint.sh", "--swap-space", "4"],
        ["acme/model-7b", "extra", "--swap-space", "4"],
    ],
)
def test_other_programs_are_no_vendor_launch(args: list[str]) -> None:
    assert vendor_vllm_image(VENDOR, args) is None


def test_positional_model_reads_an_org_name_id() -> None:
    assert positional_model(["acme/model-7b"])
    assert positional_model(["Qwen/Qwen2.5-7B-Instruct", "--port", "8000"])
    assert not positional_model(["--model", "acme/m"])
    assert not positional_model(["tools/report.py", "--x"])
