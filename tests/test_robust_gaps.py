"""Gaps fail closed: inputs that cannot be read are one-line errors (exit 2, no traceback),
scanned parts that cannot be read are skipped records that fail the gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources import discovery
from vllm_upgrade_check.sources.tree import scan_files


def run(*args: str, cwd: Path | None = None, stdout: object = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", *args],
        stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, cwd=cwd,
    )


def one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(w in lines[0] for w in words), lines[0]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "run.sh").write_text("#!/bin/sh\nvllm serve m --max-num-seqs 8\n")
    return root


def test_baseline_deep_or_not_utf8(repo: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(run("scan", str(repo), "--baseline", str(deep)), "deep.json", "nested too deeply")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"schema_version": 1, "findings": [], "x": "\xe9"}')
    one_line_error(run("scan", str(repo), "--baseline", str(latin)), "latin.json", "not UTF-8")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("option", [["scan", "{repo}", "--rules"], ["env", "--freeze"], ["scan", "{repo}", "--baseline"],
                                    ["scan", "{repo}", "--config"], ["fleet", "merge"], ["scan"]])
def test_a_fifo_is_refused_not_read(option: list[str], repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    args = [a.format(repo=repo) for a in option] + [str(fifo)]
    result = run(*args)
    one_line_error(result, "pipe")
    assert "regular file" in result.stderr


def test_fleet_merge_deep_or_wrong_types(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"findings": [], "host": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    one_line_error(run("fleet", "merge", str(deep)), "deep.json", "nested too deeply")
    for doc, field in [
        ({"findings": 3}, "findings"),
        ({"findings": [{"rule_id": 5}]}, "rule_id"),
        ({"findings": [], "host": []}, "host"),
        ({"findings": [], "host": {"gpus": [1]}}, "host.gpus"),
        ({"findings": [], "environment": {"torch": "2.9"}}, "environment.torch"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(doc) + "\n")
        one_line_error(run("fleet", "merge", str(bad)), "bad.json", field)


def test_deep_toml_config_and_pyproject(repo: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    one_line_error(run("scan", str(repo), "--config", str(deep)), "deep.toml")
    (repo / "pyproject.toml").write_text(deep.read_text())
    result = run("scan", str(repo), "--format", "json", "--fail-on", "never")
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert any(s["path"] == "pyproject.toml" for s in json.loads(result.stdout)["skipped"])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_stdout_on_a_full_device(repo: Path) -> None:
    with open("/dev/full", "w") as full:
        one_line_error(run("scan", str(repo), "--format", "json", stdout=full), "cannot write output")


def test_scan_of_a_device_is_refused(tmp_path: Path) -> None:
    one_line_error(run("scan", "/dev/zero"), "/dev/zero")


def test_config_symlink_out_of_the_root_is_not_read(repo: Path, tmp_path: Path) -> None:
    evil = tmp_path / "evil.toml"
    evil.write_text('exclude = ["run.sh"]\n')
    (repo / ".vllm-upgrade-check.toml").symlink_to(evil)
    result = run("scan", str(repo), "--format", "json", "--fail-on", "never", "--no-cache", cwd=repo)
    assert result.returncode == 0
    assert json.loads(result.stdout)["summary"]["files_scanned"] >= 1  # run.sh was not excluded
    assert "symlink leading outside" in result.stderr
    (repo / ".vllm-upgrade-check.toml").unlink()
    (repo / "cfg.toml").write_text('exclude = ["run.sh"]\n')
    (repo / ".vllm-upgrade-check.toml").symlink_to("cfg.toml")  # inside the root: read
    result = run("scan", str(repo), "--format", "json", "--fail-on", "never", "--no-cache", cwd=repo)
    assert json.loads(result.stdout)["summary"]["files_scanned"] == 0


def test_unlistable_directory_fails_closed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "deploy").mkdir()
    real = os.scandir

    def scandir(path: object) -> object:
        if str(path).endswith("deploy"):
            raise PermissionError(13, "Permission denied")
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    _facts, skipped, _n = scan_files(ScanOptions.of(paths=[repo]).request)
    assert [(s.path, s.configures_vllm) for s in skipped] == [("deploy", True)]


def test_invalid_requirement_lines_are_skipped_records(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "vllm==0.27.0\ntorch>=2.*,,\n./local-pkg\nhttps://example.com/x.whl\n${EXTRA}\nfoo @ https://x/y\nbad name==1\n"
    )
    (tmp_path / "constraints.txt").write_text("numpy===\n")
    facts, skipped, _n = scan_files(ScanOptions.of(paths=[tmp_path]).request)
    assert sorted((s.path, s.line, s.configures_vllm) for s in skipped) == [
        ("constraints.txt", 1, False),
        ("requirements.txt", 2, True),
        ("requirements.txt", 7, True),
    ]
    assert {f.name for f in facts if f.kind.value == "requirement"} >= {"vllm", "foo"}
