"""A ``.gitignore`` or a configuration file symlinked out of the scanned root is not read,
and the note that it was not read appears in every output format (not only on stderr)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()
FORMATS = ["console", "json", "sarif", "github", "junit", "markdown"]


def _repo(tmp_path: Path, config_name: str) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ignore").write_text("run.sh\n")
    table = "[tool.vllm-upgrade-check]\n" if config_name == "pyproject.toml" else ""
    (outside / "config.toml").write_text(table + 'exclude = ["run.sh"]\nfail-on = "never"\n')
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "run.sh").write_text("vllm serve m --swap-space 4\n")
    (root / config_name).symlink_to(outside / "config.toml")
    (root / "sub" / ".gitignore").symlink_to("../../outside/ignore")
    (root / "sub" / "run.sh").write_text("vllm serve m --max-num-seqs 8\n")
    return root


@pytest.mark.parametrize("config_name", [".vllm-upgrade-check.toml", "pyproject.toml"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_config_and_a_gitignore_symlinked_out_are_noted_in_every_format(
    tmp_path: Path, fmt: str, config_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path, config_name)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["scan", "repo", "--format", fmt, "--to", "0.33.0"])
    # Neither was read: run.sh is scanned (its blocker fails the gate), sub/run.sh too.
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert f"{config_name}" in out and "not read as configuration" in out, out
    assert "sub/.gitignore" in out and "its patterns do not apply" in out, out
    if fmt == "json":
        skipped = {s["path"]: s["reason"] for s in json.loads(out)["skipped"]}
        assert "not read as configuration" in skipped[config_name]
        assert not any("repo/repo" in s for s in skipped)
    if fmt == "sarif":
        notes = [
            n["message"]["text"]
            for run in json.loads(out)["runs"]
            for inv in run["invocations"]
            for n in inv.get("toolExecutionNotifications", [])
        ]
        assert any(config_name in n and "not read as configuration" in n for n in notes), notes
    assert root.exists()


def test_a_config_symlinked_inside_the_root_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "settings.toml").write_text('fail-on = "never"\n')
    (root / ".vllm-upgrade-check.toml").symlink_to("settings.toml")
    (root / "run.sh").write_text("vllm serve m --swap-space 4\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["scan", "repo", "--format", "json", "--to", "0.33.0"])
    assert result.exit_code == 0, result.output  # fail-on never: the configuration was read
    assert not json.loads(result.stdout)["skipped"]
