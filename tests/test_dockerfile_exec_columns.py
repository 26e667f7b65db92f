"""Dockerfile exec-form words placed by characters: a non-ASCII word (or one written with JSON
escapes) before a removed flag no longer sends the finding to column 1, and ``fix`` removes
the flag and its value from the JSON array."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.dockerfile_copies import json_array as _json_array

_register()
runner = CliRunner()
FROM = "FROM vllm/vllm-openai:v0.20.0\n"


def _swap_space(root: Path) -> list[tuple[int, int]]:
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.20.0", to_version="0.33.0"))
    return [(f.location.line, f.location.column or 0) for f in report.findings if f.rule.id == "VUC0180-001"]


def _fix(root: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["fix", str(root), "--from", "0.20.0", "--to", "0.33.0", "--no-bump"])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("line", "column", "fixed"),
    [
        ('CMD ["vllm","serve","mé","--swap-space","2"]', 27, 'CMD ["vllm","serve","mé"]'),
        (
            'ENTRYPOINT ["vllm", "serve", "日本語/モデル", "--swap-space", "2", "--port", "8000"]',
            42,
            'ENTRYPOINT ["vllm", "serve", "日本語/モデル", "--port", "8000"]',
        ),
        ('CMD ["--model", "m\\u00e9", "--swap-space", "2"]', 29, 'CMD ["--model", "m\\u00e9"]'),
        ('CMD ["--served-model-name", "🚀 a\\"b", "--swap-space", "2", "--seed", "1"]', 40,
         'CMD ["--served-model-name", "🚀 a\\"b", "--seed", "1"]'),
        ('  CMD [ "--model" , "ñandú" , "--swap-space" , "2" ]', 32, '  CMD [ "--model" , "ñandú" ]'),
    ],
)
def test_a_flag_after_a_non_ascii_word_is_placed_and_fixed(tmp_path: Path, line: str, column: int, fixed: str) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(FROM + line + "\n", encoding="utf-8")
    assert _swap_space(tmp_path) == [(2, column)]
    assert line[column - 2 : column - 1 + len("--swap-space")] == "\"--swap-space"  # a character column
    code, out = _fix(tmp_path)
    assert code == 0, out
    assert dockerfile.read_text(encoding="utf-8") == FROM + fixed + "\n"
    words = _json_array(fixed.strip().split(" ", 1)[1].strip())
    assert words is not None and "--swap-space" not in words and "2" not in words
    assert words == [w for w in json.loads(line.strip().split(" ", 1)[1]) if w not in ("--swap-space", "2")]
    assert _swap_space(tmp_path) == []


def test_a_continued_array_with_non_ascii_words_on_both_lines(tmp_path: Path) -> None:
    text = FROM + 'CMD ["--model", "é", \\\n     "--swap-space", "2", \\\n     "--served-model-name", "ü"]\n'
    (tmp_path / "Dockerfile").write_text(text, encoding="utf-8")
    assert _swap_space(tmp_path) == [(3, 7)]
    code, out = _fix(tmp_path)
    assert code == 0, out
    fixed = (tmp_path / "Dockerfile").read_text(encoding="utf-8")
    assert "--swap-space" not in fixed and '"2"' not in fixed
    assert '"--model", "é"' in fixed and '"--served-model-name", "ü"]' in fixed
    assert _swap_space(tmp_path) == []


def test_a_word_cut_by_a_line_continuation_is_left_to_a_person(tmp_path: Path) -> None:
    text = FROM + 'CMD ["--model", "mé", "--swap-\\\nspace", "2"]\n'
    (tmp_path / "Dockerfile").write_text(text, encoding="utf-8")
    assert _swap_space(tmp_path) == [(2, 1)]  # not found as written: the instruction's line
    code, out = _fix(tmp_path)
    assert code == 1 and "Needs a person" in out and "--swap-space" in out, out
    assert (tmp_path / "Dockerfile").read_text(encoding="utf-8") == text
