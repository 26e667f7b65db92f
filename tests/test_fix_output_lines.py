"""Every position ``fix`` reports is a position as scanned, in the file before the run's
edits: the fixes made, what is left to a person, with ``--diff`` or written, never shifted by
the lines an earlier edit of the same file removed; findings that read alike (the same
variable in two services of one file) each keep their own line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: v\n      args:\n"
    "        - --model\n        - m\n        - --swap-space\n        - \"4\"\n        - --num-scheduler-steps\n"
    "        - \"2\"\n      env:\n        - name: VLLM_TRITON_ATTN_USE_TD\n          value: \"1\"\n"
    "      image: vllm/vllm-openai:v0.20.0\n"
)
COMPOSE = (
    "services:\n  a:\n    image: vllm/vllm-openai:v0.20.0\n    command: [--model, m, --swap-space, \"4\"]\n"
    "    environment: {VLLM_TRITON_ATTN_USE_TD: \"1\"}\n  b:\n    image: vllm/vllm-openai:v0.20.0\n"
    "    command:\n      - --swap-space\n      - \"4\"\n    environment:\n      VLLM_TRITON_ATTN_USE_TD: \"1\"\n"
)


def _positions(output: str, name: str) -> list[str]:
    return re.findall(rf"{re.escape(name)}:(\d+(?::\d+)?): (VUC\d+-\d+|vLLM)", output)


@pytest.mark.parametrize("diff", [False, True])
def test_the_lines_of_a_pod_are_those_scanned(tmp_path: Path, diff: bool) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    args = ["fix", str(tmp_path), "--from", "0.20.0", "--to", "0.32.0", *(["--diff"] if diff else [])]
    result = runner.invoke(app, args)
    found = sorted(_positions(result.stdout + result.stderr, "pod.yaml"))
    assert ("16:17", "VUC0290-003") in found, found  # left to a person (unsafe): not 12:17
    if diff:  # the diff's old side: the lines as scanned
        assert result.stdout.count("@@ -8,11 +8,7 @@") == 1, result.stdout
        return
    assert ("11", "VUC0180-001") in found and ("13", "VUC0101-001") in found, found
    assert ("18", "vLLM") in found, found  # the bump, below the removed lines


@pytest.mark.parametrize("diff", [False, True])
def test_findings_that_read_alike_keep_their_own_lines(tmp_path: Path, diff: bool) -> None:
    (tmp_path / "compose.yaml").write_text(COMPOSE)
    args = ["fix", str(tmp_path), "--from", "0.20.0", "--to", "0.32.0", "--no-bump", *(["--diff"] if diff else [])]
    result = runner.invoke(app, args)
    found = sorted(_positions(result.stdout + result.stderr, "compose.yaml"))
    left = [("12:7", "VUC0290-003"), ("5:19", "VUC0290-003")]
    if diff:
        assert found == left, found
        return
    assert found == sorted([*left, ("4", "VUC0180-001"), ("9", "VUC0180-001")]), found
    assert "command: []" in (tmp_path / "compose.yaml").read_text()
