"""Findings on a KServe ServingRuntime container's launch stay at the runtime file's lines
when an InferenceService's predictor args are appended to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

RUNTIME = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-rt
spec:
  supportedModelFormats:
    - name: mymodel
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.28.0
      command: ["python", "-m", "vllm.entrypoints.openai.api_server"]
      args:
        - --swap-space
        - "4"
"""

ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: svc
spec:
  predictor:
    model:
      {how}
      args:
        - --max-model-len
        - "4096"
"""

HOWS = ["modelFormat: {name: mymodel}", "runtime: vllm-rt\n      modelFormat: {name: mymodel}"]


def scan(tmp_path: Path, how: str) -> Report:
    (tmp_path / "runtime.yaml").write_text(RUNTIME, encoding="utf-8")
    (tmp_path / "isvc.yaml").write_text(ISVC.format(how=how), encoding="utf-8")
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.29.0", from_version="0.28.0"))


def hits(report: Report, rule: str) -> list[tuple[str, int]]:
    return sorted((f.fact.location.path or "", f.fact.location.line) for f in report.findings if f.rule.id == rule)


@pytest.mark.parametrize("how", HOWS)
def test_runtime_arg_finding_at_runtime_line(tmp_path: Path, how: str) -> None:
    assert hits(scan(tmp_path, how), "VUC0180-001") == [("runtime.yaml", 13)]


@pytest.mark.parametrize("how", HOWS)
def test_runtime_entrypoint_finding_at_runtime_line(tmp_path: Path, how: str) -> None:
    assert hits(scan(tmp_path, how), "VUC000-012") == [("runtime.yaml", 11)]
