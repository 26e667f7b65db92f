"""A flag whose one value word looks like the model of a launch that names no model
(``vllm serve --num-scheduler-steps org/m``: argparse gives ``org/m`` to the flag) is not
removed by a safe fix: removing both would serve vLLM's default model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _fix(tmp_path: Path, text: str, *extra: str) -> str:
    (tmp_path / "serve.sh").write_text(text)
    subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(tmp_path), "--from", "0.20.0", "--to", "0.33.0", *extra],
        capture_output=True, text=True, timeout=300,
    )
    return (tmp_path / "serve.sh").read_text()


@pytest.mark.parametrize(
    "line",
    ["vllm serve --num-scheduler-steps org/m\n", "vllm serve --override-attention-dtype acme/chat-8b --port 8000\n",
     "python -m vllm.entrypoints.openai.api_server --max-num-partial-prefills Qwen/Qwen3-8B\n"],
)
def test_a_safe_fix_keeps_what_may_be_the_model(tmp_path: Path, line: str) -> None:
    assert _fix(tmp_path, line) == line


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("vllm serve org/m --num-scheduler-steps 8\n", "vllm serve org/m\n"),  # the model is named: the value is a value
        ("vllm serve --model org/m --override-attention-dtype half\n", "vllm serve --model org/m\n"),
    ],
)
def test_a_launch_that_names_its_model_is_fixed(tmp_path: Path, line: str, fixed: str) -> None:
    assert _fix(tmp_path, line) == fixed


def test_unsafe_fixes_remove_it(tmp_path: Path) -> None:
    assert _fix(tmp_path, "vllm serve --num-scheduler-steps org/m\n", "--unsafe-fixes") == "vllm serve\n"
