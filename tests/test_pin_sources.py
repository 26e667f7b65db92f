"""Where each source pins vLLM, as the report shows it (the version-to-move advisory,
``VUC000-010``): the pin as the file writes it, at its line and column, in the JSON and
Markdown reports; a version written on another line (a Dockerfile ``ARG``, a Helm ``tag:``)
is named in the message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.reporters import json_report, markdown

POETRY = '[tool.poetry]\nname = "svc"\nversion = "1"\n\n[tool.poetry.dependencies]\npython = "^3.11"\n'

CASES = {
    "requirements": ({"requirements.txt": "vllm==0.18.0\n"}, ("requirements.txt", 1, 1, "vllm==0.18.0"), ""),
    "pyproject": (
        {"pyproject.toml": '[project]\nname = "s"\nversion = "1"\ndependencies = [\n  "vllm==0.19.0",\n]\n'},
        ("pyproject.toml", 5, 4, "vllm==0.19.0"),
        "",
    ),
    "poetry": ({"pyproject.toml": POETRY + 'vllm = "0.17.1"\n'}, ("pyproject.toml", 7, 1, 'vllm = "0.17.1"'), ""),
    "poetry-table": (
        {"pyproject.toml": POETRY + 'vllm = {version = "0.17.1", extras = ["audio"]}\n'},
        ("pyproject.toml", 7, 1, 'vllm = {version = "0.17.1", extras = ["audio"]}'),
        "",
    ),
    "poetry-subtable": (
        {"pyproject.toml": POETRY + '\n[tool.poetry.group.gpu.dependencies.vllm]\nversion = "0.17.1"\n'},
        ("pyproject.toml", 9, 1, 'vllm = "0.17.1"'),
        "",
    ),
    "uv-lock": (
        {"uv.lock": 'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.17.1"\n'},
        ("uv.lock", 4, 9, "vllm==0.17.1"),
        "",
    ),
    "dockerfile-pip": (
        {"Dockerfile": 'FROM python:3.11\nRUN pip install --no-cache-dir "vllm==0.20.0" fastapi\n'},
        ("Dockerfile", 2, 33, "vllm==0.20.0"),
        "",
    ),
    "dockerfile-arg": (
        {"Dockerfile": "FROM python:3.11\nARG VLLM_VERSION=0.20.0\nRUN pip install vllm==${VLLM_VERSION}\n"},
        ("Dockerfile", 3, 17, "vllm==0.20.0"),
        " (the version is written at line 2)",
    ),
    "image-tag": (
        {"Dockerfile": "FROM vllm/vllm-openai:v0.21.0\n"},
        ("Dockerfile", 1, 6, "vllm/vllm-openai:v0.21.0"),
        "",
    ),
    "helm-values": (
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
            "chart/values.yaml": "image:\n  repository: vllm/vllm-openai\n  tag: v0.22.0\n",
        },
        ("chart/values.yaml", 2, 15, "vllm/vllm-openai:v0.22.0"),
        " (the version is written at line 3)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pin_text_and_place(tmp_path: Path, case: str) -> None:
    files, (path, line, column, subject), elsewhere = CASES[case]
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    doc = json.loads(json_report.render(report))
    pins = [f for f in doc["findings"] if f["rule_id"] == "VUC000-010"]
    assert [(f["path"], f["line"], f["column"], f["subject"]) for f in pins] == [(path, line, column, subject)]
    assert pins[0]["message"].endswith("0.28.0" + elsewhere)
    assert f"- [{path}:{line}]({path}#L{line}): `{subject}`" in markdown.render(report)
