"""The unresolved note of a launch whose model is a word the repository does not resolve
speaks of the model (the served model is not known), not of flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions


def notes_of(tmp_path: Path, rel: str, text: str) -> list[str]:
    (tmp_path / rel).write_text(text, encoding="utf-8")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.16.0"))
    return list(report.notes)


@pytest.mark.parametrize(
    ("line", "note"),
    [
        ('vllm serve "$MODEL" --port 8000', 'unresolved: "$MODEL" at run.sh:2:1 (vllm serve); the model it serves is not known'),
        ("vllm serve --model \"${M}\" --port 1", 'unresolved: "${M}" at run.sh:2:1 (vllm serve); the model it serves is not known'),
        ("vllm serve $VLLM_ARGS", "unresolved: $VLLM_ARGS at run.sh:2:1 (vllm serve); the model it serves is not known "
         "and the flags it holds were not checked"),
        ('vllm serve "$MODEL" $EXTRA', 'unresolved: "$MODEL" $EXTRA at run.sh:2:1 (vllm serve); the model it serves is '
         "not known and the flags it holds were not checked"),
        ("vllm serve org/m $EXTRA", "unresolved: $EXTRA at run.sh:2:1 (vllm serve); the flags it holds were not checked"),
    ],
)
def test_the_note_names_what_is_not_known(tmp_path: Path, line: str, note: str) -> None:
    assert notes_of(tmp_path, "run.sh", f"#!/bin/bash\n{line}\n") == [note]


def test_a_yaml_list_item_is_one_word_where_the_model_is(tmp_path: Path) -> None:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.16.0\n"
        '        command: ["vllm", "serve", "$(MODEL)", "--port", "8000"]\n'
    )
    notes = notes_of(tmp_path, "deploy.yaml", text)
    assert len(notes) == 1 and notes[0].endswith("(vllm serve); the model it serves is not known"), notes
    assert "flags" not in notes[0]


def test_an_exec_form_model_word_says_the_model_is_not_known(tmp_path: Path) -> None:
    text = 'FROM vllm/vllm-openai:v0.16.0\nCMD ["--model", "${MODEL}", "--port", "8000"]\n'
    notes = notes_of(tmp_path, "Dockerfile", text)
    assert len(notes) == 1 and notes[0].startswith("unresolved: ${MODEL} (exec form:"), notes
    assert notes[0].endswith("; the model it serves is not known"), notes
