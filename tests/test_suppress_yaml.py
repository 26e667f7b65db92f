"""A suppression comment right above a YAML key covers the key's whole value: a container's
``args:`` list, a compose ``command:`` block or list. Only the line right above counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.parsing.yamlnodes import documents, key_blocks

_register()
runner = CliRunner()
IGNORE = "# vllm-upgrade-check: ignore[VUC0270-001,VUC0170-001]"

K8S = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
{above}
          args:
            - --model
            - facebook/opt-125m
            - --max-num-partial-prefills
            - "3"
            - --disable-log-requests
"""

COMPOSE_FOLDED = """services:
  vllm:
    image: vllm/vllm-openai:v0.26.0
{above}
    command: >
      --model facebook/opt-125m
      --max-num-partial-prefills 3
      --disable-log-requests
"""

COMPOSE_LIST = """services:
  vllm:
    image: vllm/vllm-openai:v0.26.0
{above}
    command:
      - --model
      - facebook/opt-125m
      - --max-num-partial-prefills=3
      - --disable-log-requests
"""

COMPOSE_FLOW = """services:
  vllm:
    image: vllm/vllm-openai:v0.26.0
{above}
    command: ["--model", "m",
              "--max-num-partial-prefills", "3",
              "--disable-log-requests"]
"""

HELM_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ .Release.Name }}}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
{above}
          args:
            - --model
            - {{{{ .Values.model | quote }}}}
            {{{{- if .Values.legacy }}}}
            - --max-num-partial-prefills
            - "3"
            {{{{- end }}}}
            - --disable-log-requests
"""

CASES = {
    "k8s-args": ("k8s/deploy.yaml", K8S, "          "),
    "compose-folded": ("docker-compose.yaml", COMPOSE_FOLDED, "    "),
    "compose-list": ("docker-compose.yaml", COMPOSE_LIST, "    "),
    "compose-flow": ("docker-compose.yaml", COMPOSE_FLOW, "    "),
    "helm-template": ("chart/templates/deployment.yaml", HELM_TEMPLATE, "          "),
}
REMOVED = {"VUC0270-001", "VUC0170-001"}


def _findings(root: Path, *extra: str) -> list[dict[str, object]]:
    result = runner.invoke(app, ["scan", str(root), "--to", "0.28.0", "-f", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    findings: list[dict[str, object]] = json.loads(result.stdout)["findings"]
    return findings


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("case", sorted(CASES))
def test_comment_above_the_key_covers_its_whole_value(case: str, tmp_path: Path) -> None:
    name, template, indent = CASES[case]
    _write(tmp_path, name, template.format(above=indent + IGNORE))
    ids = {str(f["rule_id"]) for f in _findings(tmp_path, "--no-cache")}
    assert not ids & REMOVED, ids
    assert "VUC000-010" in ids  # the image line above the comment is not covered


@pytest.mark.parametrize("case", sorted(CASES))
def test_without_the_comment_every_flag_is_reported(case: str, tmp_path: Path) -> None:
    name, template, indent = CASES[case]
    _write(tmp_path, name, template.format(above=indent + "# keep the flags below in step with ops"))
    ids = {str(f["rule_id"]) for f in _findings(tmp_path, "--no-cache")}
    assert REMOVED <= ids


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_comment_two_lines_above_the_key_covers_nothing_of_it(case: str, tmp_path: Path) -> None:
    name, template, indent = CASES[case]
    between = indent + IGNORE + "\n" + indent + ("imagePullPolicy: Always" if "k8s" in case or "helm" in case else "restart: always")
    _write(tmp_path, name, template.format(above=between))
    ids = {str(f["rule_id"]) for f in _findings(tmp_path, "--no-cache")}
    assert REMOVED <= ids


def test_a_comment_covers_only_the_ids_it_names(tmp_path: Path) -> None:
    _write(tmp_path, "k8s/deploy.yaml", K8S.format(above="          # vllm-upgrade-check: ignore[VUC0270-001]"))
    ids = {str(f["rule_id"]) for f in _findings(tmp_path, "--no-cache")}
    assert "VUC0270-001" not in ids
    assert "VUC0170-001" in ids


def test_a_comment_above_one_service_does_not_reach_the_next(tmp_path: Path) -> None:
    text = COMPOSE_LIST.format(above="    " + IGNORE) + (
        "  second:\n    image: vllm/vllm-openai:v0.26.0\n    command: [--model, m, --max-num-partial-prefills, '3']\n"
    )
    _write(tmp_path, "docker-compose.yaml", text)
    found = [f for f in _findings(tmp_path, "--no-cache") if f["rule_id"] == "VUC0270-001"]
    second = text.split("\n").index("    command: [--model, m, --max-num-partial-prefills, '3']") + 1
    assert [f["line"] for f in found] == [second]


def test_a_key_covered_from_the_cache_as_when_parsed(tmp_path: Path) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    _write(repo, "k8s/deploy.yaml", K8S.format(above="          " + IGNORE))
    cold = _findings(repo, "--cache-dir", str(cache))
    warm = _findings(repo, "--cache-dir", str(cache))
    assert cold == warm
    assert not {str(f["rule_id"]) for f in warm} & REMOVED


def test_key_blocks_lines() -> None:
    text = "a:\n  - x\n  - y\nb: >\n  folded\n  text\nc: one\nd: [p,\n  q]\ne:\n  f: 1\n"
    docs = documents(text)
    assert key_blocks(docs, {1, 4, 7, 8, 10}) == [(1, 3), (4, 6), (8, 9), (10, 11)]
    assert key_blocks(docs, {2, 5}) == []  # no key starts there
    assert key_blocks(docs, {11}) == []  # a value on the key's own line is that line's
