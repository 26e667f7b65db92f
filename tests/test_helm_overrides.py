"""Helm values override files that name no vLLM image (``values-prod.yaml`` beside a chart):
their flags are the chart's container's, reported at the override's own file and line, and
only where that directory's chart values run a vLLM image."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

SWAP = "VUC0180-001"  # 0.18.0 removed --swap-space

CHART = "image:\n  repository: vllm/vllm-openai\n  tag: v0.17.0\nargs:\n  - --max-model-len\n  - \"4096\"\n"


def scan(tmp_path: Path, files: dict[str, str]) -> Report:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"))


def hits(report: Report, rule: str) -> list[tuple[str, int]]:
    return sorted((f.fact.location.path or "", f.fact.location.line) for f in report.findings if f.rule.id == rule)


@pytest.mark.parametrize("name", ["values-prod.yaml", "values.prod.yaml", "prod-values.yaml", "prod.values.yml"])
def test_override_beside_chart_is_reported_at_its_line(tmp_path: Path, name: str) -> None:
    override = "# production\nreplicaCount: 2\nargs:\n  - --swap-space\n  - \"4\"\n"
    report = scan(tmp_path, {"chart/values.yaml": CHART, f"chart/{name}": override})
    assert hits(report, SWAP) == [(f"chart/{name}", 4)]


def test_override_extra_args_and_other_list(tmp_path: Path) -> None:
    override = "server:\n  flags: [\"--max-num-seqs=8\", \"--swap-space=4\"]\n"
    report = scan(tmp_path, {"chart/values.yaml": CHART, "chart/values-prod.yaml": override})
    assert hits(report, SWAP) == [("chart/values-prod.yaml", 2)]
    extra = "extraArgs:\n  - --swap-space=4\n"
    report = scan(tmp_path, {"chart/values-prod.yaml": extra})
    assert hits(report, SWAP) == [("chart/values-prod.yaml", 2)]


def test_chart_flag_and_override_flag_both_reported_once(tmp_path: Path) -> None:
    chart = CHART + "  - --swap-space\n  - \"2\"\n"
    override = "args:\n  - --swap-space\n  - \"4\"\n"
    report = scan(tmp_path, {"chart/values.yaml": chart, "chart/values-prod.yaml": override})
    assert hits(report, SWAP) == [("chart/values-prod.yaml", 2), ("chart/values.yaml", 7)]


def test_override_without_vllm_chart_is_not_read(tmp_path: Path) -> None:
    override = "args:\n  - --swap-space\n  - \"4\"\n"
    other = "image:\n  repository: nginx\n  tag: \"1.25\"\n"
    report = scan(tmp_path, {"chart/values.yaml": other, "chart/values-prod.yaml": override, "lone/values-x.yaml": override})
    assert hits(report, SWAP) == []


def test_non_values_name_is_not_an_override(tmp_path: Path) -> None:
    report = scan(tmp_path, {"chart/values.yaml": CHART, "chart/settings.yaml": "args:\n  - --swap-space=4\n"})
    assert hits(report, SWAP) == []


@pytest.mark.parametrize("env_key", ["extraEnv", "env"])
def test_an_override_that_names_vllm_but_no_image_counts_with_the_chart(tmp_path: Path, env_key: str) -> None:
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "values.yaml").write_text(
        'image:\n  repository: vllm/vllm-openai\n  tag: v0.26.0\nargs: [--model, acme/m, --port, "8000"]\n'
    )
    (chart / "values-prod.yaml").write_text(
        f'extraArgs: [--calculate-kv-scales, --max-num-partial-prefills=2]\n{env_key}:\n'
        '  - name: VLLM_CPU_SGL_KERNEL\n    value: "1"\n'
    )
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    got = sorted((f.rule.id, f.location.path, f.location.line) for f in report.findings if f.rule.id != "VUC000-010")
    assert got == [
        ("VUC0270-001", "chart/values-prod.yaml", 1),
        ("VUC0280-001", "chart/values-prod.yaml", 1),
        ("VUC0280-005", "chart/values-prod.yaml", 3),
    ]
