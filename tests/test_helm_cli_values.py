"""Values files that a shell script passes to ``helm install|upgrade|template`` (``-f``,
``--values``, comma lists) override a vLLM chart's values: their flags and env vars are
reported at their own lines; those passed to a chart that is not vLLM's are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

CHART_VALUES = "image:\n  repository: vllm/vllm-openai\n  tag: v0.17.0\nargs:\n  - --model\n  - acme/m\n"
OTHER_VALUES = "image:\n  repository: nginx\n  tag: '1.27'\n"
PROD = "# production\nreplicas: 3\nargs:\n  - --model\n  - acme/m\n  - --swap-space\n  - \"8\"\n"
STAGING = "replicas: 1\nextraArgs: [\"--max-num-partial-prefills=2\"]\n"


def _repo(tmp_path: Path, script: str, chart_values: str = CHART_VALUES, where: str = "deploy/release.sh") -> Path:
    (tmp_path / "charts" / "chat").mkdir(parents=True)
    (tmp_path / "charts" / "chat" / "values.yaml").write_text(chart_values)
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "prod.yaml").write_text(PROD)
    (tmp_path / "envs" / "staging.yaml").write_text(STAGING)
    (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / where).write_text(script)
    return tmp_path


def _found(root: Path) -> set[tuple[str, str, int]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    return {(f.rule.id, f.location.path, f.location.line) for f in report.findings if f.location.path.startswith("envs/")}


@pytest.mark.parametrize(
    "command",
    [
        "helm upgrade --install chat ./charts/chat -f envs/prod.yaml -f envs/staging.yaml",
        "helm upgrade --install chat charts/chat --namespace ml \\\n  -f envs/prod.yaml,envs/staging.yaml --wait",
        "helm install chat ./charts/chat/ --values=envs/prod.yaml --values envs/staging.yaml",
        "helm template chat ./charts/chat -n ml --set replicas=2 -fenvs/prod.yaml -f envs/staging.yaml",
    ],
)
def test_values_files_a_script_passes_are_read(tmp_path: Path, command: str) -> None:
    root = _repo(tmp_path, "#!/bin/sh\nset -e\n" + command + "\n")
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6), ("VUC0270-001", "envs/staging.yaml", 2)}


def test_paths_relative_to_the_script_directory(tmp_path: Path) -> None:
    root = _repo(tmp_path, "cd ..\nhelm upgrade chat ../charts/chat -f ../envs/prod.yaml\n")
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6)}


def test_remote_chart_that_names_vllm(tmp_path: Path) -> None:
    root = _repo(tmp_path, "helm upgrade --install stack vllm/vllm-stack -f envs/prod.yaml\n")
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6)}


@pytest.mark.parametrize(
    "command",
    [
        "helm upgrade --install web ./charts/chat -f envs/prod.yaml",  # the chart runs nginx
        "helm upgrade --install web bitnami/nginx -f envs/prod.yaml",
        "helm lint ./charts/chat -f envs/prod.yaml",  # not a release
        "echo helm upgrade chat ./charts/chat -f envs/prod.yaml",
    ],
)
def test_values_of_other_charts_or_commands_are_not_read(tmp_path: Path, command: str) -> None:
    root = _repo(tmp_path, command + "\n", chart_values=OTHER_VALUES if "web ./" in command else CHART_VALUES)
    assert _found(root) == set()


def test_a_file_passed_twice_is_reported_once(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        "helm upgrade chat ./charts/chat -f envs/prod.yaml\nhelm template chat ./charts/chat -f envs/prod.yaml\n",
    )
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    hits = [f for f in report.findings if f.location.path == "envs/prod.yaml"]
    assert [(f.rule.id, f.location.line) for f in hits] == [("VUC0180-001", 6)]


HELMFILE = """repositories:
  - name: stack
    url: https://vllm-project.github.io/production-stack
releases:
  - name: chat
    namespace: ml
    chart: {chart}
    values:
      - ../envs/prod.yaml
      - replicas: 2
  - name: web
    chart: bitnami/nginx
    values: [../envs/staging.yaml]
"""


@pytest.mark.parametrize("chart", ["../charts/chat", "stack/vllm-stack"])
def test_helmfile_release_values_of_a_vllm_chart_are_read(tmp_path: Path, chart: str) -> None:
    root = _repo(tmp_path, "# nothing here\n")
    (root / "deploy" / "helmfile.yaml").write_text(HELMFILE.format(chart=chart))
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6)}  # staging goes to nginx


def test_helmfile_of_no_vllm_chart_reads_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path, "# nothing here\n", chart_values=OTHER_VALUES)
    (root / "deploy" / "helmfile.yaml").write_text(HELMFILE.format(chart="../charts/chat"))
    assert _found(root) == set()


@pytest.mark.parametrize(
    "makefile",
    [
        "VALUES ?= envs/prod.yaml\n\ndeploy:\n\thelm upgrade --install chat ./charts/chat -f $(VALUES) --wait\n",
        "deploy:\n\thelm upgrade --install chat ./charts/chat \\\n\t  --values envs/prod.yaml\n",
    ],
)
def test_makefile_recipes_pass_values_too(tmp_path: Path, makefile: str) -> None:
    root = _repo(tmp_path, "# nothing here\n")
    (root / "Makefile").write_text(makefile)
    assert _found(root) == {("VUC0180-001", "envs/prod.yaml", 6)}
