"""A symlink that loops (ELOOP) is told as a symlink loop, never as a missing file: in the
scanned tree it is a skipped record in every output format (the gate still passes: it holds
nothing), given as a path it is one error line, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.parsing.textfiles import missing_reason

_register()
runner = CliRunner()
FORMATS = ["console", "json", "sarif", "github", "junit", "markdown"]


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "deploy").mkdir(parents=True)
    (root / "requirements.txt").write_text("vllm==0.17.0\n")
    os.symlink("self.yaml", root / "deploy" / "self.yaml")  # a link to itself
    os.symlink("two.sh", root / "one.sh")  # two links to each other
    os.symlink("one.sh", root / "two.sh")
    os.symlink("../requirements.txt", root / "deploy" / "req.txt")  # a good link: walked once, not reported
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_loop_in_the_tree_is_skipped_in_every_format(tmp_path: Path, fmt: str) -> None:
    root = _repo(tmp_path)
    result = runner.invoke(app, ["scan", str(root), "--no-host", "--no-cache", "--to", "0.20.0", "-f", fmt])
    assert result.exit_code == 0, result.output
    out = result.stdout
    for name in ("deploy/self.yaml", "one.sh", "two.sh"):
        assert name in out, (fmt, name)
    assert out.count("symlink loop (ELOOP)") >= 3, out
    assert "no such file" not in out
    assert "deploy/req.txt" not in out
    if fmt == "json":
        skipped = {s["path"]: s for s in json.loads(out)["skipped"]}
        assert set(skipped) == {"deploy/self.yaml", "one.sh", "two.sh"}
        assert not any(s["fails_gate"] for s in skipped.values())


def test_excluded_loop_is_not_reported(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    result = runner.invoke(
        app, ["scan", str(root), "--no-host", "--no-cache", "--to", "0.20.0", "-f", "json", "--exclude", "deploy/"]
    )
    paths = {s["path"] for s in json.loads(result.stdout)["skipped"]}
    assert paths == {"one.sh", "two.sh"}


def test_loop_given_as_a_path_is_one_error_line(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(root / "one.sh"), "--no-host", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "symlink loop (ELOOP)" in proc.stderr and "one.sh" in proc.stderr
    assert "no such file" not in proc.stderr


def test_missing_reason_tells_loop_broken_and_missing(tmp_path: Path) -> None:
    os.symlink("loop", tmp_path / "loop")
    os.symlink("nowhere", tmp_path / "dangling")
    assert missing_reason(tmp_path / "loop").startswith("symlink loop (ELOOP)")
    assert missing_reason(tmp_path / "dangling").startswith("broken symlink")
    assert missing_reason(tmp_path / "absent") == "no such file or directory"
