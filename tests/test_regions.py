"""A finding's region covers exactly the words it names, however they are quoted: what SARIF
viewers and GitHub annotations underline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()

CASES = {
    "docker-compose.yaml": (
        "services:\n  a:\n    image: vllm/vllm-openai:v0.26.0\n"
        '    command: ["--model", "m", "--max-num-partial-prefills", "2"]\n'
    ),
    "k8s.yaml": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: v\n"
        "    image: vllm/vllm-openai:v0.26.0\n    args:\n    - '--max-num-partial-prefills'\n    - \"2\"\n"
    ),
    "serve.sh": "vllm serve m \"--max-num-partial-prefills\" 2 '--max-num-partial-prefills=3'\n",
    "install.sh": "pip install \"torch==2.9.0\" 'vllm==0.26.0'\n",
    "Dockerfile": 'FROM vllm/vllm-openai:v0.26.0\nCMD ["vllm", "serve", "m", "--max-num-partial-prefills", "2"]\n',
    "requirements.txt": "vllm==0.26.0\ntorch==2.9.0  # pinned\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_regions_cover_the_words_without_their_quotes(name: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text(CASES[name])
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "--from", "0.26.0", "-f", "json"])
    findings = [f for f in json.loads(result.stdout)["findings"] if f["path"] == name]
    assert findings, result.stdout
    lines = CASES[name].split("\n")
    for f in findings:
        assert f["line"] == f["end_line"]
        underlined = lines[f["line"] - 1][f["column"] - 1 : f["end_column"] - 1]
        # a flag written --flag=value is underlined with its value: the word as written
        assert underlined == f["subject"] or underlined == f"{f['subject']}={f['value']}", (underlined, f)


@pytest.mark.parametrize(
    ("dockerfile", "expected"),
    [
        # a shell-form ENTRYPOINT ignores CMD (Docker's "Understand how CMD and ENTRYPOINT interact")
        ('FROM vllm/vllm-openai:v0.26.0\nENTRYPOINT vllm serve m\nCMD ["--max-num-partial-prefills", "2"]\n', []),
        # CMD before ENTRYPOINT in the same stage still completes it
        ('FROM python:3.12\nCMD ["m", "--max-num-partial-prefills", "2"]\nENTRYPOINT ["vllm", "serve"]\n', [2]),
        # a later stage inherits the entry point and sets its own command
        (
            'FROM vllm/vllm-openai:v0.26.0 AS base\nENTRYPOINT ["vllm", "serve"]\n'
            'FROM base\nCMD ["m", "--max-num-partial-prefills", "3"]\n',
            [4],
        ),
        # setting ENTRYPOINT in a later stage drops the inherited command
        (
            'FROM vllm/vllm-openai:v0.26.0 AS base\nCMD ["--max-num-partial-prefills", "2"]\n'
            'FROM base\nENTRYPOINT ["python3", "job.py"]\n',
            [2],
        ),
    ],
)
def test_dockerfile_entrypoint_and_cmd_are_read_as_docker_runs_them(
    dockerfile: str, expected: list[int], tmp_path: Path
) -> None:
    (tmp_path / "Dockerfile").write_text(dockerfile)
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "--from", "0.26.0", "-f", "json"])
    lines = [f["line"] for f in json.loads(result.stdout)["findings"] if f["rule_id"] == "VUC0270-001"]
    assert lines == expected, result.stdout
