"""A symlink in the tree that leads out of the scanned root, or to nothing, is not followed and
is listed as skipped with its reason in every output format (never dropped unseen); one that
leads inside the root is walked under its real path, once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()


def _tree(tmp_path: Path) -> Path:
    root, outside = tmp_path / "repo", tmp_path / "shared"
    (root / "deploy").mkdir(parents=True)
    outside.mkdir()
    (outside / "serve.sh").write_text("vllm serve acme/m --swap-space 4\n")
    (root / "deploy" / "serve.sh").symlink_to(outside / "serve.sh")
    (root / "ext").symlink_to(outside)
    (root / "deploy" / "gone.sh").symlink_to(tmp_path / "nowhere.sh")
    (root / "deploy" / "real.sh").write_text("vllm serve acme/m --port 8000\n")
    (root / "deploy" / "same.sh").symlink_to(root / "deploy" / "real.sh")  # inside: walked once
    return root


def test_links_out_of_the_root_are_listed_in_json(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    result = runner.invoke(app, ["scan", str(root), "-f", "json", "--no-cache"])
    assert result.exit_code == 0, result.output
    skipped = {s["path"]: s["reason"] for s in json.loads(result.stdout)["skipped"]}
    assert set(skipped) == {"deploy/serve.sh", "ext", "deploy/gone.sh"}
    assert "outside the scanned root" in skipped["deploy/serve.sh"] and "outside" in skipped["ext"]
    assert "does not exist" in skipped["deploy/gone.sh"]


@pytest.mark.parametrize("fmt", ["console", "sarif", "markdown", "junit", "github"])
def test_every_format_lists_them(tmp_path: Path, fmt: str) -> None:
    root = _tree(tmp_path)
    result = runner.invoke(app, ["scan", str(root), "-f", fmt, "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "deploy/serve.sh" in result.output and "outside the scanned root" in result.output


def test_ignored_links_are_not_listed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / ".gitignore").write_text("ext\ndeploy/gone.sh\n")
    result = runner.invoke(app, ["scan", str(root), "-f", "json", "--no-cache"])
    assert {s["path"] for s in json.loads(result.stdout)["skipped"]} == {"deploy/serve.sh"}
