"""A project ``.env`` that sets ``COMPOSE_FILE`` names the files ``docker compose`` merges in
its folder, exactly as ``-f a -f b`` does (split at ``COMPOSE_PATH_SEPARATOR``, ``:`` unless
that says otherwise): the merged service's launch is checked, each flag reported (and fixed)
in the file that writes it; a file it names that the repository lacks is an unresolved note
at the ``.env`` line. Shell scripts honour ``COMPOSE_PATH_SEPARATOR`` too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.compose_cli import compose_chains
from vllm_upgrade_check.sources.scanners.compose_env import dotenv_compose_files

REMOVED = "VUC0180-001"  # --swap-space
BASE = 'services:\n  engine:\n    image: vllm/vllm-openai:v0.20.0\n    command: ["--model", "m", "--max-num-seqs", "8"]\n'
GPU = 'services:\n  engine:\n    command: ["--model", "m", "--swap-space", "16"]\n'


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _scan(root: Path) -> Report:
    return run_scan(ScanOptions.of(paths=[root], from_version="0.20.0", to_version="0.32.0"))


def _removed(report: Report) -> list[tuple[str | None, int | None, int | None]]:
    return sorted((f.location.path, f.location.line, f.location.column) for f in report.findings if f.rule.id == REMOVED)


@pytest.mark.parametrize(
    "dotenv",
    [
        "COMPOSE_FILE=compose.yml:compose.gpu.yml\n",
        "# project files\nexport COMPOSE_FILE='compose.yml:compose.gpu.yml'\n",
        'COMPOSE_PATH_SEPARATOR=;\nCOMPOSE_FILE="compose.yml;compose.gpu.yml"\n',
        "COMPOSE_FILE=compose.yml:./compose.gpu.yml\n",
    ],
)
def test_a_dotenv_compose_file_chain_is_merged(tmp_path: Path, dotenv: str) -> None:
    _write(tmp_path, {"compose.yml": BASE, "compose.gpu.yml": GPU, ".env": dotenv})
    assert _removed(_scan(tmp_path)) == [("compose.gpu.yml", 3, 32)]


def test_without_the_chain_the_gpu_file_alone_runs_no_vllm(tmp_path: Path) -> None:
    _write(tmp_path, {"compose.yml": BASE, "compose.gpu.yml": GPU, ".env": "OTHER=1\n"})
    assert _removed(_scan(tmp_path)) == []


def test_paths_are_relative_to_the_dotenv_folder(tmp_path: Path) -> None:
    files = {"deploy/compose/base.yml": BASE, "deploy/compose/gpu.yml": GPU, "deploy/.env": "COMPOSE_FILE=compose/base.yml:compose/gpu.yml\n"}
    _write(tmp_path, files)
    assert _removed(_scan(tmp_path)) == [("deploy/compose/gpu.yml", 3, 32)]


def test_a_missing_chain_file_is_an_unresolved_note_at_the_dotenv_line(tmp_path: Path) -> None:
    _write(tmp_path, {"compose.yml": BASE, "compose.gpu.yml": GPU, ".env": "X=1\nCOMPOSE_FILE=compose.yml:compose.gpu.yml:gone.yml\n"})
    report = _scan(tmp_path)
    assert _removed(report) == [("compose.gpu.yml", 3, 32)]
    notes = [n for n in report.notes if "gone.yml" in str(n)]
    assert notes and ".env:2:42" in str(notes[0]) and "COMPOSE_FILE gone.yml" in str(notes[0])


def test_fix_removes_the_flag_in_the_file_that_writes_it(tmp_path: Path) -> None:
    _write(tmp_path, {"compose.yml": BASE, "compose.gpu.yml": GPU, ".env": "COMPOSE_FILE=compose.yml:compose.gpu.yml\n"})
    subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(tmp_path), "--from", "0.20.0", "--to", "0.32.0", "--no-bump"],
        capture_output=True, text=True, timeout=300,
    )
    fixed = (tmp_path / "compose.gpu.yml").read_text()
    assert fixed == 'services:\n  engine:\n    command: ["--model", "m"]\n'
    assert yaml.safe_load(fixed)["services"]["engine"]["command"] == ["--model", "m"]
    assert (tmp_path / "compose.yml").read_text() == BASE


def test_dotenv_compose_files_places_each_path() -> None:
    named = dotenv_compose_files('A=1\nCOMPOSE_FILE="a.yml:sub/b.yml"\n', ".env")
    assert [(n.written, n.line, n.column, n.length) for n in named] == [("a.yml", 2, 15, 5), ("sub/b.yml", 2, 21, 9)]
    assert dotenv_compose_files("COMPOSE_FILE=${BASE}:b.yml\n", ".env") == []


@pytest.mark.parametrize(
    "line",
    [
        'COMPOSE_PATH_SEPARATOR=";" COMPOSE_FILE="a.yml;b.yml" docker compose up',
        "export COMPOSE_PATH_SEPARATOR=,\nexport COMPOSE_FILE=a.yml,b.yml\ndocker compose up",
        'sudo env COMPOSE_PATH_SEPARATOR=";" COMPOSE_FILE="a.yml;b.yml" docker compose up',
    ],
)
def test_a_script_honours_the_path_separator(line: str) -> None:
    assert [[n.written for n in c] for c in compose_chains(parse_shell(line))] == [["a.yml", "b.yml"]]
