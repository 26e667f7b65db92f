"""A bad value in a configuration file is one error line naming the file and the line it is
written on, exit 2, whether the loader checks it (a type, a path) or a later stage does (a
release the packs do not know)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _run(root: Path, *args: str) -> tuple[int, str]:
    (root / "requirements.txt").write_text("vllm==0.17.0\n")
    command = [sys.executable, "-m", "vllm_upgrade_check", "scan", str(root), "--no-host", "--no-cache", *args]
    proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    return proc.returncode, proc.stderr if proc.returncode == 2 else proc.stdout + proc.stderr


CASES = [
    # (file, body, line, words the message must hold)
    (".vllm-upgrade-check.toml", '# team\nrules = ["nope"]\n', 2, "rules[0]: 'nope': no such rule pack"),
    (".vllm-upgrade-check.toml", 'rules = ["packs", "missing/dir"]\n', 1, "rules[1]: 'missing/dir'"),
    (".vllm-upgrade-check.toml", 'rules = [""]\n', 1, "rules[0]: '': is empty"),
    ("pyproject.toml", '[project]\nname = "x"\n\n[tool.vllm-upgrade-check]\nrules = [\n  "packs",\n  "gone",\n]\n', 7, "'gone'"),
    (".vllm-upgrade-check.toml", 'fail-on = "warning"\nto = "0.99.0"\n', 2, "to: 0.99.0: unknown vLLM release"),
    ("pyproject.toml", '[tool.vllm-upgrade-check]\n\nto = "0.1.0"\n', 3, "to: 0.1.0: older than the oldest"),
    (".vllm-upgrade-check.toml", 'to = "zero"\n', 1, "to: 'zero' is not a valid version"),
    # a name the file system refuses (longer than NAME_MAX): the reason, not a traceback
    (".vllm-upgrade-check.toml", f'rules = ["{"[" * 300}"]\n', 1, "cannot be read: File name too long"),
]


@pytest.mark.parametrize(("name", "body", "line", "words"), CASES)
def test_bad_value_names_file_and_line(tmp_path: Path, name: str, body: str, line: int, words: str) -> None:
    (tmp_path / "packs").mkdir()
    (tmp_path / name).write_text(body)
    code, output = _run(tmp_path)
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith(f"vllm-upgrade-check: error: {tmp_path / name}:{line}: ") or lines[0].startswith(
        f"vllm-upgrade-check: error: {name}:{line}: "
    ), output
    assert words in lines[0], output
    assert "Traceback" not in output


def test_to_on_the_command_line_wins_and_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / ".vllm-upgrade-check.toml").write_text('to = "0.99.0"\n')
    code, output = _run(tmp_path, "--to", "0.20.0")
    assert code in (0, 1), output  # the configured target is not used: no error about it
    code, output = _run(tmp_path, "--to", "0.98.0")
    assert code == 2
    assert "--to 0.98.0: unknown vLLM release" in output
    assert ".vllm-upgrade-check.toml" not in output


def test_rules_relative_to_the_config_file_not_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "packs").mkdir()
    (tmp_path / ".vllm-upgrade-check.toml").write_text('rules = ["packs"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, output = _run(tmp_path)
    assert code in (0, 1), output


@pytest.mark.parametrize("option", ["--rules", "--output", "--baseline"])
def test_a_path_the_system_refuses_is_one_line(tmp_path: Path, option: str) -> None:
    """An option naming a path the OS refuses (ENAMETOOLONG) is one line naming it, exit 2."""
    name = str(tmp_path / ("x" * 300))
    code, output = _run(tmp_path, option, name)
    assert code == 2, output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in output, output
    assert lines[0].startswith("vllm-upgrade-check: error: ") and "x" * 300 in lines[0], output
    assert "too long" in lines[0].lower() or "no such" in lines[0].lower(), output
