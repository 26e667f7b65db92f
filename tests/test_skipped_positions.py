"""A file skipped for a syntax error carries the parser's line and column in every output
format: TOML (a broken ``pyproject.toml`` at the scanned root, a lock file, a document that
ends inside a value) and YAML alike; a configuration file's TOML error is one line
``FILE:LINE:COLUMN: ...``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.parsing.toml import TomlProblem, load_toml
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents

_register()
runner = CliRunner()


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text("vllm==0.17.0\n")
    (root / "pyproject.toml").write_text('[project]\nname = "svc"\ndependencies = ["vllm==0.17.0", = ]\n')
    (root / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: [--x,\n")
    return root


def _json(root: Path) -> dict[str, dict[str, object]]:
    result = runner.invoke(app, ["scan", str(root), "--no-host", "--no-cache", "-f", "json", "--skip-unreadable"])
    return {s["path"]: s for s in json.loads(result.stdout)["skipped"]}


def test_json_has_line_and_column(tmp_path: Path) -> None:
    skipped = _json(_repo(tmp_path))
    assert (skipped["pyproject.toml"]["line"], skipped["pyproject.toml"]["column"]) == (3, 33)
    assert skipped["compose.yaml"]["line"] == 5 and skipped["compose.yaml"]["column"] == 1


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("console", "pyproject.toml:3:33: TOML syntax error"),
        ("junit", "pyproject.toml:3:33: not read"),
        ("markdown", "[pyproject.toml:3:33](pyproject.toml#L3)"),
        ("github", "file=pyproject.toml,line=3,col=33,"),
    ],
)
def test_text_formats_show_line_and_column(tmp_path: Path, fmt: str, expected: str) -> None:
    root = _repo(tmp_path)
    result = runner.invoke(app, ["scan", str(root), "--no-host", "--no-cache", "-f", fmt, "--skip-unreadable"])
    assert expected in result.stdout, result.stdout


def test_sarif_region_has_start_column(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    result = runner.invoke(app, ["scan", str(root), "--no-host", "--no-cache", "-f", "sarif", "--skip-unreadable"])
    notes = json.loads(result.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    regions = {
        n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: n["locations"][0]["physicalLocation"]["region"]
        for n in notes
    }
    assert regions["pyproject.toml"] == {"startLine": 3, "startColumn": 33}
    assert regions["compose.yaml"]["startLine"] == 5 and regions["compose.yaml"]["startColumn"] == 1


def test_cached_scan_keeps_the_column(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    cache = str(tmp_path / "cache")
    args = ["scan", str(root), "--no-host", "--cache-dir", cache, "-f", "json", "--skip-unreadable"]
    first = json.loads(runner.invoke(app, args).stdout)["skipped"]
    second = json.loads(runner.invoke(app, args).stdout)["skipped"]
    assert first == second and any(s["column"] for s in second)


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ('a = 1\nb = "x\n', 2, 7),  # an unterminated string
        ("[t\n", 1, 3),
        ("a = [1,\n", 2, 1),  # the document ends inside the array
        ("a = 1\r\nb = = 2\r\n", 2, 5),
    ],
)
def test_toml_problem_position(text: str, line: int, column: int) -> None:
    with pytest.raises(TomlProblem) as info:
        load_toml(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert "line" not in info.value.message and "column" not in info.value.message


def test_yaml_problem_position() -> None:
    with pytest.raises(YamlProblem) as info:
        compose_documents("a: 1\nb: [x,\n  c: d\n")
    assert (info.value.line, info.value.column) == (4, 1)  # the parser stops where the document ends


def test_config_toml_error_is_file_line_column(tmp_path: Path) -> None:
    (tmp_path / ".vllm-upgrade-check.toml").write_text('# team\nto = "0.20.0\n')
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(tmp_path), "--no-host", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2
    assert f"{tmp_path / '.vllm-upgrade-check.toml'}:2:13: TOML syntax error" in proc.stderr, proc.stderr
