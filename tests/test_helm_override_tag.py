"""A values override that sets only the image's tag (``image: {tag: v0.20.0}``) deploys that
release of the chart's vLLM image: the override's flags run it (the from-version is the tag's),
the tag is a vLLM image to move (at the override's line), and ``fix`` bumps it there, beside
the chart's own tag. Overrides beside the chart and values files a helm command passes alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

CHART = "image:\n  repository: vllm/vllm-openai\n  tag: v0.30.0\nargs: [\"--model\", \"acme/m\"]\n"
PROD = "# prod runs an older release\nimage:\n  tag: {tag}\n  pullPolicy: IfNotPresent\nargs:\n  - --model\n  - acme/m\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _scan(root: Path) -> Report:
    return run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))


LAYOUTS = {
    "beside": {"charts/engine/values.yaml": CHART, "charts/engine/values-prod.yaml": PROD},
    "linked": {
        "charts/engine/values.yaml": CHART,
        "envs/prod.yaml": PROD,
        "deploy.sh": "#!/bin/sh\nhelm upgrade --install engine ./charts/engine -f envs/prod.yaml\n",
    },
}
PROD_PATH = {"beside": "charts/engine/values-prod.yaml", "linked": "envs/prod.yaml"}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("tag", ["v0.20.0", "\"v0.20.0\"", "0.20.0"])
def test_override_tag_is_the_release_it_deploys(tmp_path: Path, layout: str, tag: str) -> None:
    files = {k: v.format(tag=tag) for k, v in LAYOUTS[layout].items()}
    report = _scan(_write(tmp_path, files))
    assert report.from_version == "0.20.0"
    moves = {(f.location.path, f.location.line, f.fact.name) for f in report.findings if f.rule.id == "VUC000-010"}
    assert (PROD_PATH[layout], 3, "vllm/vllm-openai") in moves
    assert ("charts/engine/values.yaml", 2, "vllm/vllm-openai") in moves


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_fix_bumps_the_override_tag_and_keeps_every_other_byte(tmp_path: Path, layout: str) -> None:
    files = {k: v.format(tag="v0.20.0") for k, v in LAYOUTS[layout].items()}
    root = _write(tmp_path, files)
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True, text=True, timeout=300,
    )
    assert (root / PROD_PATH[layout]).read_text() == PROD.format(tag="v0.33.0"), run.stdout + run.stderr
    assert "tag: v0.33.0" in (root / "charts/engine/values.yaml").read_text()


def test_no_image_when_the_chart_runs_no_vllm(tmp_path: Path) -> None:
    chart = "image:\n  repository: nginx\n  tag: '1.27'\n"
    report = _scan(_write(tmp_path, {"charts/web/values.yaml": chart, "charts/web/values-prod.yaml": PROD.format(tag="v0.20.0")}))
    assert [f for f in report.findings if f.location.path == "charts/web/values-prod.yaml"] == []


def test_an_override_with_its_own_repository_is_not_a_tag_of_the_chart(tmp_path: Path) -> None:
    prod = "image:\n  repository: registry.example.net/tools/sidecar\n  tag: v0.20.0\n"
    report = _scan(_write(tmp_path, {"charts/engine/values.yaml": CHART, "charts/engine/values-prod.yaml": prod}))
    assert report.from_version == "0.30.0"
    assert [f for f in report.findings if f.location.path == "charts/engine/values-prod.yaml"] == []
