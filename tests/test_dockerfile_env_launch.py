"""A Dockerfile launch that reads variables the Dockerfile's ``ENV`` sets (in any of its
forms, in the stage or a base stage, through a shell-form instruction or an exec-form
``sh -c``) is resolved with them: its flags are checked where ``ENV`` writes them, and only
a variable nobody sets (or an ``ARG``, gone when the container runs) gets an "unresolved"
note."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions


def _scan(tmp_path: Path, name: str, text: str) -> tuple[list[tuple[str, int | None, int | None]], list[str]]:
    (tmp_path / name).write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.23.0"))
    swap = [(f.rule.id, f.location.line, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001"]
    notes = [n for n in report.notes if "unresolved" in n]
    return swap, notes


def _at(text: str, word: str) -> tuple[int, int]:
    index = text.index(word)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("Dockerfile", 'FROM vllm/vllm-openai:v0.10.0\nENV MODEL=acme/m FLAGS="--swap-space 4"\nCMD vllm serve ${MODEL} ${FLAGS}\n'),
        ("Dockerfile.env", 'FROM vllm/vllm-openai:v0.10.0\nENV MODEL=acme/m FLAGS="--swap-space 4"\nCMD vllm serve ${MODEL} ${FLAGS}\n'),
        # legacy `ENV NAME value`: the rest of the line is the value
        ("Dockerfile", "FROM python:3.12\nRUN pip install vllm==0.10.0\nENV MODEL acme/m\nENV FLAGS --swap-space 4\nCMD vllm serve ${MODEL} ${FLAGS}\n"),
        # exec-form sh -c: the shell the container starts has the ENV values
        ("Containerfile", 'FROM vllm/vllm-openai:v0.10.0\nENV MODEL=acme/m FLAGS="--swap-space 4"\nCMD ["sh", "-c", "exec vllm serve ${MODEL} ${FLAGS}"]\n'),
        ("Dockerfile", 'FROM vllm/vllm-openai:v0.10.0\nENV MODEL=acme/m FLAGS="--swap-space 4"\nENTRYPOINT ["/bin/bash", "-c", "vllm serve $MODEL $FLAGS"]\n'),
        # the ENV in a base stage, the launch in a stage built FROM it
        ("Dockerfile", 'FROM python:3.12 AS base\nENV MODEL=acme/m \\\n    FLAGS="--swap-space 4"\nFROM base AS mid\n'
                       'RUN pip install vllm==0.10.0\nFROM mid\nCMD exec vllm serve "${MODEL}" ${FLAGS}\n'),
        ("Dockerfile", 'FROM python:3.12 AS base\nENV MODEL=acme/m FLAGS="--swap-space 4"\nFROM base\n'
                       'RUN pip install vllm==0.10.0\nCMD ["sh", "-c", "vllm serve $MODEL $FLAGS"]\n'),
        # the container's environment is every ENV of the stage, one written after CMD too
        ("Dockerfile", 'FROM vllm/vllm-openai:v0.10.0\nCMD vllm serve ${MODEL} ${FLAGS}\nENV MODEL=acme/m FLAGS="--swap-space 4"\n'),
        ("Dockerfile", 'FROM vllm/vllm-openai:v0.10.0\nENV FLAGS=--port\nENTRYPOINT exec vllm serve acme/m $FLAGS\nENV FLAGS="--swap-space 4"\n'),
        # ARG defaults passed on by ENV
        ("Dockerfile", 'FROM vllm/vllm-openai:v0.10.0\nARG MODEL=acme/m\nARG FLAGS="--swap-space 4"\nENV MODEL=${MODEL} FLAGS=${FLAGS}\nCMD vllm serve ${MODEL} ${FLAGS}\n'),
    ],
)
def test_env_values_resolve_the_launch(tmp_path: Path, name: str, text: str) -> None:
    swap, notes = _scan(tmp_path, name, text)
    assert swap == [("VUC0180-001", *_at(text, "--swap-space"))]
    assert notes == []


@pytest.mark.parametrize(
    ("text", "unset"),
    [
        # nobody sets HF_MODEL
        ('FROM vllm/vllm-openai:v0.10.0\nENV FLAGS="--swap-space 4"\nCMD vllm serve ${HF_MODEL} ${FLAGS}\n', "${HF_MODEL}"),
        ('FROM vllm/vllm-openai:v0.10.0\nENV FLAGS="--swap-space 4"\nCMD ["sh", "-c", "vllm serve $HF_MODEL $FLAGS"]\n', "$HF_MODEL"),
        # an ARG is gone when the container runs
        ('FROM vllm/vllm-openai:v0.10.0\nARG HF_MODEL=acme/m\nENV FLAGS="--swap-space 4"\nCMD vllm serve ${HF_MODEL} ${FLAGS}\n', "${HF_MODEL}"),
    ],
)
def test_only_what_nobody_sets_is_unresolved(tmp_path: Path, text: str, unset: str) -> None:
    swap, notes = _scan(tmp_path, "Dockerfile", text)
    assert swap == [("VUC0180-001", *_at(text, "--swap-space"))]
    assert len(notes) == 1 and unset in notes[0] and "FLAGS" not in notes[0]
