"""A configured ``[[ignore]]`` must name a rule: a mistyped id would otherwise sit in the
configuration doing nothing while the finding it meant stays in (or leaves) the gate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MAIN = "import sys; from vllm_upgrade_check.cli import main; sys.argv[0] = 'vllm-upgrade-check'; main()"


def _scan(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, "scan", str(root), "--from", "0.26.0", "--to", "0.28.0"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("wrong", ["VUC0270-099", "VUC270-001", "vuc0270_001", "swap-space"])
def test_unknown_ignore_id_is_a_one_line_error_at_its_line(tmp_path: Path, wrong: str) -> None:
    (tmp_path / "serve.sh").write_text("vllm serve acme/m --max-num-partial-prefills 2\n")
    (tmp_path / ".vllm-upgrade-check.toml").write_text(
        f'[[ignore]]\nid = "VUC0270-001"\nreason = "known"\n\n[[ignore]]\n# the second one\nid = "{wrong}"\nreason = "x"\n'
    )
    proc = _scan(tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"vllm-upgrade-check: error: {tmp_path / '.vllm-upgrade-check.toml'}:7: ignore id '{wrong}' matches no rule id"
    ), proc.stderr


def test_pyproject_ignore_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.vllm-upgrade-check]\n[[tool.vllm-upgrade-check.ignore]]\nid = "NOPE-1"\nreason = "x"\n'
    )
    proc = _scan(tmp_path)
    assert proc.returncode == 2
    assert f"{tmp_path / 'pyproject.toml'}:6: ignore id 'NOPE-1' matches no rule id" in proc.stderr


@pytest.mark.parametrize("good", ["*", "vuc0270-001", "VUC000-001", "VUCENV0280-001"])
def test_known_ids_any_case_star_and_generated_ids_are_taken(tmp_path: Path, good: str) -> None:
    (tmp_path / "serve.sh").write_text("vllm serve acme/m --port 8000\n")
    (tmp_path / ".vllm-upgrade-check.toml").write_text(f'[[ignore]]\nid = "{good}"\nreason = "known"\n')
    proc = _scan(tmp_path)
    assert proc.returncode == 0, proc.stderr
