"""fix loses nothing: a file is checked (identity and content) and locked right before its
replacement; hard-linked and read-only files are listed, not replaced; mode, owner and group
are kept; reports are created with the user's umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import fixrun as fix_engine
from vllm_upgrade_check.parsing.textfiles import ChangedOnDisk, write_atomic

_register()
runner = CliRunner()
LAUNCH = "#!/bin/sh\nvllm serve m --swap-space 4 --max-num-seqs 8\n"


def test_content_changed_since_read_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("old\n")
    with pytest.raises(ChangedOnDisk, match="changed"):
        write_atomic(path, b"new\n", expected=b"older\n")
    assert path.read_text() == "old\n"
    write_atomic(path, b"new\n", expected=b"old\n")
    assert path.read_text() == "new\n"


def test_hard_linked_and_read_only_files_are_refused(tmp_path: Path) -> None:
    linked = tmp_path / "a.sh"
    linked.write_text("x\n")
    os.link(linked, tmp_path / "b.sh")
    with pytest.raises(ChangedOnDisk, match="hard links"):
        write_atomic(linked, b"y\n", expected=b"x\n")
    readonly = tmp_path / "r.sh"
    readonly.write_text("x\n")
    readonly.chmod(0o444)
    with pytest.raises(ChangedOnDisk, match="read-only"):
        write_atomic(readonly, b"y\n", expected=b"x\n")
    assert linked.read_text() == readonly.read_text() == "x\n"


def test_mode_and_group_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("x\n")
    path.chmod(0o751)
    before = path.stat()
    write_atomic(path, b"y\n", expected=b"x\n")
    after = path.stat()
    assert stat.S_IMODE(after.st_mode) == 0o751
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    if os.geteuid() == 0:  # root can give the file to anyone: the owner must come back
        os.chown(path, 12345, 23456)
        write_atomic(path, b"z\n", expected=b"y\n")
        assert (path.stat().st_uid, path.stat().st_gid) == (12345, 23456)


def test_a_line_appended_while_fix_runs_is_kept_and_exit_is_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "run.sh"
    script.write_text(LAUNCH)
    real = fix_engine.apply_to_text
    done: list[bool] = []

    def appending(text: str, edits: object, rel: str) -> str:
        if not done:  # another writer, once, between the read and the rename
            done.append(True)
            with open(script, "a") as handle:
                handle.write("echo appended\n")
        return real(text, edits, rel)  # type: ignore[arg-type]

    monkeypatch.setattr(fix_engine, "apply_to_text", appending)
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.33.0"])
    assert result.exit_code == 2, result.output
    assert script.read_text() == LAUNCH + "echo appended\n"


def test_fix_cli_lists_hard_linked_and_read_only_files(tmp_path: Path) -> None:
    (tmp_path / "ro.sh").write_text(LAUNCH)
    (tmp_path / "ro.sh").chmod(0o444)
    (tmp_path / "hl.sh").write_text(LAUNCH)
    os.link(tmp_path / "hl.sh", tmp_path / "hl2.sh")
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.33.0"])
    assert result.exit_code == 2
    assert "read-only (mode 0444)" in result.output and "hard links" in result.output
    assert all((tmp_path / n).read_text() == LAUNCH for n in ("ro.sh", "hl.sh", "hl2.sh"))


def test_output_file_gets_the_umask(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(LAUNCH)
    old = os.umask(0o027)
    try:
        result = runner.invoke(app, ["scan", str(tmp_path), "-f", "json", "-o", str(tmp_path / "r.json"), "--fail-on", "never"])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o640
