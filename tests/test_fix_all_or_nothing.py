"""``fix`` writes each file whole or not at all, and a vLLM bump moves every file or none:
a file that fails the check or cannot be written leaves the others of the bump as they were,
the summary names the files not written, and the exit code says the run did not finish."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import fixrun
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions

REQS = "vllm==0.17.0\ntorch==2.9.0\n"
DOCKERFILE = 'FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m", "--swap-space", "4"]\n'


def _repo(root: Path) -> Path:
    (root / "requirements.txt").write_text(REQS)
    (root / "Dockerfile").write_text(DOCKERFILE)
    return root


def _refusing(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the check refuse every fixed text of ``path``."""
    real = fixrun.check
    seen: list[str] = []

    def check(before, after, fixes, replacements=()):  # type: ignore[no-untyped-def]
        if any(fact.location.path == path for fact, _planned in fixes):
            seen.append(path)
            return "refused by the test"
        return real(before, after, fixes, replacements)

    monkeypatch.setattr(fixrun, "check", check)


def test_a_bump_is_written_in_every_file_or_in_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    (root / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m"]\n')
    _refusing("Dockerfile", monkeypatch)
    result = fix_paths(ScanOptions.of(paths=[root], to_version="0.20.0"))
    assert (root / "requirements.txt").read_text() == REQS  # the torch and vLLM pins did not move alone
    assert sorted(n.path for n in result.not_written) == ["Dockerfile", "requirements.txt"]
    assert "Dockerfile could not be changed" in next(
        n.reason for n in result.not_written if n.path == "requirements.txt"
    )
    assert result.blocked


def test_a_file_that_cannot_be_written_puts_back_the_bump_of_the_others(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m"]\n')
    (root / "requirements.txt").chmod(0o444)  # written after the Dockerfile (files go in name order)
    try:
        result = fix_paths(ScanOptions.of(paths=[root], to_version="0.20.0"))
    finally:
        (root / "requirements.txt").chmod(0o644)
    assert (root / "Dockerfile").read_text() == 'FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m"]\n'
    assert (root / "requirements.txt").read_text() == REQS
    assert [n.path for n in result.not_written] == ["Dockerfile"]
    assert [e.path for e in result.errors] == ["requirements.txt"]
    assert result.applied == []


def test_the_other_files_of_a_pass_are_written_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    (root / "run.sh").write_text("#!/bin/sh\nvllm serve m --swap-space 4\n")
    _refusing("run.sh", monkeypatch)
    result = fix_paths(ScanOptions.of(paths=[root], to_version="0.20.0"), bump=False)
    assert (root / "run.sh").read_text() == "#!/bin/sh\nvllm serve m --swap-space 4\n"
    assert (root / "Dockerfile").read_text() == 'FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m"]\n'
    assert [n.path for n in result.not_written] == ["run.sh"]
    assert result.blocked


def test_the_cli_names_the_files_not_written_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    (root / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m"]\n')
    _refusing("requirements.txt", monkeypatch)
    _register("fix")
    result = CliRunner().invoke(app, ["fix", str(root), "--to", "0.20.0"])
    assert result.exit_code == 1, result.output
    assert "Not written (2):" in result.output
    assert "Dockerfile: requirements.txt could not be changed (refused by the test)" in result.output
    assert (root / "Dockerfile").read_text() == 'FROM vllm/vllm-openai:v0.17.0\nCMD ["--model", "m"]\n'
