"""What gets scanned, and garbage that must never crash a scan: ignore rules, size and binary
limits, symlink loops, unreadable files and directories, odd encodings, bombs."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.cli.progress import parse_size, scan_progress
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources import discovery
from vllm_upgrade_check.sources.tree import discover, scan_files

COMPOSE = "services:\n  llm:\n    image: vllm/vllm-openai:v0.27.0\n    command: [--max-num-seqs, '8']\n"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def rels(root: Path, exclude: tuple[str, ...] = ()) -> list[str]:
    return [rel for _path, rel in discover(root, exclude)]


def scan(root: Path, **kwargs: object) -> tuple[list, list, int]:
    return scan_files(ScanOptions.of(paths=[root], **kwargs).request)


def test_nested_gitignore_is_honoured_with_git_precedence(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\nbuild/\n")
    write(tmp_path, "a.log", "x")
    write(tmp_path, "build/run.sh", "x")
    write(tmp_path, "svc/.gitignore", "generated/\n!keep.log\n")
    write(tmp_path, "svc/keep.log", "x")
    write(tmp_path, "svc/other.log", "x")
    write(tmp_path, "svc/generated/compose.yaml", "x")
    write(tmp_path, "svc/compose.yaml", "x")
    write(tmp_path, "elsewhere/generated/compose.yaml", "x")
    assert rels(tmp_path) == [
        ".gitignore",
        "elsewhere/generated/compose.yaml",
        "svc/.gitignore",
        "svc/compose.yaml",
        "svc/keep.log",
    ]


def test_exclude_and_default_skipped_directories(tmp_path: Path) -> None:
    write(tmp_path, "deploy/compose.yaml", "x")
    write(tmp_path, "deploy/old/compose.yaml", "x")
    write(tmp_path, "node_modules/pkg/compose.yaml", "x")
    write(tmp_path, ".git/config.yaml", "x")
    write(tmp_path, "env/pyvenv.cfg", "home = /usr")
    write(tmp_path, "env/lib/compose.yaml", "x")
    assert rels(tmp_path, ("deploy/old/",)) == ["deploy/compose.yaml"]


def test_files_no_scanner_wants_are_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "app.js", "// vllm serve m --max-num-seqs 8")
    write(tmp_path, "README.md", "vllm serve m --max-num-seqs 8")
    write(tmp_path, "compose.yaml", COMPOSE)
    read: list[str] = []
    real = discovery.read_bytes

    def spy(path: str | Path) -> bytes:
        read.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(discovery, "read_bytes", spy)
    facts, skipped, count = scan(tmp_path)
    assert read == ["compose.yaml"]
    assert count == 1 and not skipped
    assert any(f.kind == FactKind.ARG for f in facts)


def test_oversized_and_binary_files_are_reported_when_a_scanner_would_read_them(tmp_path: Path) -> None:
    write(tmp_path, "big/compose.yaml", "# vllm\n" + "x" * 5000)
    write(tmp_path, "big/notes.md", "y" * 5000)
    write(tmp_path, "bin/Dockerfile", b"FROM x\x00\x01\x02")
    write(tmp_path, "bin/logo.png", b"\x89PNG\x00\x00")
    _facts, skipped, _count = scan(tmp_path, max_file_bytes=1000)
    reasons = {s.path: s.reason for s in skipped}
    assert reasons == {
        "big/compose.yaml": "larger than the size limit of 1000 bytes (5007 bytes)",
        "bin/Dockerfile": "binary file",
    }
    # an oversized file that mentions vLLM may be its only launch: the gate fails closed on it
    assert {s.path: s.configures_vllm for s in skipped} == {"big/compose.yaml": True, "bin/Dockerfile": False}
    write(tmp_path, "big/compose.yaml", "x" * 5000 + "\n# VLLM\n" + "x" * (3 << 20))
    write(tmp_path, "big/other.yaml", "y" * 5000)
    _facts, skipped, _count = scan(tmp_path, max_file_bytes=1000)
    assert {s.path: s.configures_vllm for s in skipped if s.path.startswith("big/")} == {
        "big/compose.yaml": True,
        "big/other.yaml": False,
    }


def test_symlink_loop_and_link_out_of_root(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, "a/compose.yaml", COMPOSE)
    os.symlink(root / "a", root / "a" / "loop")
    os.symlink(root, root / "a" / "up")
    write(tmp_path, "outside/compose.yaml", COMPOSE)
    os.symlink(tmp_path / "outside", root / "out")
    os.symlink(tmp_path / "outside" / "compose.yaml", root / "out.yaml")
    assert rels(root) == ["a/compose.yaml"]


def test_unreadable_file_is_skipped_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # tests run as root, where chmod 000 does not stop reads: simulate the error instead
    write(tmp_path, "compose.yaml", COMPOSE)
    write(tmp_path, "ok/compose.yaml", COMPOSE)

    def deny(path: str | Path) -> bytes:
        if Path(path).parent.name != "ok":
            raise PermissionError(errno.EACCES, "Permission denied")
        return Path(path).read_bytes()

    monkeypatch.setattr(discovery, "read_bytes", deny)
    facts, skipped, count = scan(tmp_path)
    assert [(s.path, s.reason, s.configures_vllm) for s in skipped] == [
        ("compose.yaml", "cannot read: Permission denied", True)
    ]
    assert count == 1 and facts


def test_unreadable_directory_is_skipped_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "locked/compose.yaml", COMPOSE)
    write(tmp_path, "open/compose.yaml", COMPOSE)
    real = os.scandir

    def scandir(path: str):  # type: ignore[no-untyped-def]
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    _facts, skipped, count = scan(tmp_path)
    assert [(s.path, s.reason) for s in skipped] == [("locked", "cannot list directory: Permission denied")]
    assert count == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_chmod_000_file_is_skipped(tmp_path: Path) -> None:  # pragma: no cover - not root only
    path = write(tmp_path, "compose.yaml", COMPOSE)
    path.chmod(0)
    try:
        _facts, skipped, _count = scan(tmp_path)
    finally:
        path.chmod(0o644)
    assert [s.path for s in skipped] == ["compose.yaml"]


def test_non_utf8_and_crlf_files_are_read(tmp_path: Path) -> None:
    write(tmp_path, "latin/compose.yaml", ("# café\r\n" + COMPOSE.replace("\n", "\r\n")).encode("latin-1"))
    write(tmp_path, "crlf/serve.sh", b"#!/bin/bash\r\nvllm serve m \\\r\n  --max-num-seqs 8\r\n")
    facts, skipped, count = scan(tmp_path)
    assert not skipped and count == 2
    args = sorted((f.location.path, f.name, f.location.line) for f in facts if f.kind == FactKind.ARG)
    assert args == [("crlf/serve.sh", "max_num_seqs", 3), ("latin/compose.yaml", "max_num_seqs", 5)]


def test_ten_megabyte_single_line_file(tmp_path: Path) -> None:
    write(tmp_path, "huge.yaml", "x: '" + "vllm " * 2_000_000 + "'\n")
    _facts, skipped, _count = scan(tmp_path)
    assert [s.reason.split(" (")[0] for s in skipped] == ["larger than the size limit of 5242880 bytes"]
    facts, skipped, count = scan(tmp_path, max_file_bytes=20 * 1024 * 1024)
    assert not skipped and count == 1 and facts == []


def test_deeply_nested_json_yaml_and_toml_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "a/Pipfile.lock", "[" * 100_000)
    write(tmp_path, "b/compose.yaml", "# vllm\nx: " + "[" * 50_000 + "]" * 50_000)
    write(tmp_path, "c/pyproject.toml", "a = " + "[" * 100_000)
    write(tmp_path, "d/compose.yaml", "# vllm\n" + "".join(" " * i + "k:\n" for i in range(3000)))
    _facts, skipped, _count = scan(tmp_path)
    assert [s.path for s in skipped] == [
        "a/Pipfile.lock",
        "b/compose.yaml",
        "c/pyproject.toml",
        "d/compose.yaml",
    ]


def test_yaml_alias_bomb_is_bounded(tmp_path: Path) -> None:
    levels = ["c0: &c0 {image: 'vllm/vllm-openai:v0.27.0', args: [--max-num-seqs, '8']}"]
    levels.append("l0: &l0 [" + ", ".join(["*c0"] * 9) + "]")
    for i in range(1, 10):
        levels.append(f"l{i}: &l{i} [" + ", ".join([f"{{containers: *l{i - 1}}}"] * 9) + "]")
    write(tmp_path, "bomb.yaml", "apiVersion: v1\nkind: List\n" + "\n".join(levels) + "\n")
    services = "services:\n  a: &a {image: 'vllm/vllm-openai:v0.27.0', command: [--max-num-seqs, '8']}\n"
    merges = "".join(f"  m{i}: &m{i}\n    <<: *{'a' if i == 0 else f'm{i - 1}'}\n" for i in range(60))
    write(tmp_path, "merge/compose.yaml", services + merges + "  self: &s\n    <<: *s\n")
    facts, skipped, _count = scan(tmp_path)
    assert not skipped
    bomb = [f for f in facts if f.location.path == "bomb.yaml" and f.kind == FactKind.ARG]
    assert len(bomb) == 1  # one container node, however often it is aliased


def test_yaml_duplicate_keys_and_tabs(tmp_path: Path) -> None:
    write(tmp_path, "dup/compose.yaml", COMPOSE + "services:\n  other: {image: nginx}\n")
    write(tmp_path, "tab/compose.yaml", "services:\n\tllm:\n    image: vllm/vllm-openai:v0.27.0\n")
    _facts, skipped, _count = scan(tmp_path)
    assert [(s.path, s.line, s.configures_vllm) for s in skipped] == [("tab/compose.yaml", 2, True)]


def test_malformed_file_exits_2_with_one_line_and_changes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, "compose.yaml", "services:\n\tllm: {image: vllm/vllm-openai:v0.27.0}\n")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr + run.stdout
    assert '"compose.yaml"' in run.stdout and '"line": 2' in run.stdout
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_bad_max_file_size_is_a_one_line_error(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(tmp_path), "--max-file-size", "lots"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "--max-file-size 'lots'" in run.stderr


def test_parse_size() -> None:
    assert parse_size("1048576") == 1024 * 1024
    assert parse_size("500k") == 500 * 1024
    assert parse_size("5MiB") == 5 * 1024 * 1024
    assert parse_size("1G") == 1024**3
    for bad in ("", "0", "-1k", "5 parsecs"):
        with pytest.raises(UsageError):
            parse_size(bad)


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with scan_progress(True) as callback:
        assert callback is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with scan_progress(False) as callback:  # JSON/SARIF output
        assert callback is None
    with scan_progress(True) as callback:
        assert callback is not None
        callback("a.yaml")  # within the first second: draws nothing


def test_progress_draws_without_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # Worker processes are forked while the display is up: no refresh thread may run then.
    import threading

    from vllm_upgrade_check.cli import progress as progress_module

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(progress_module, "DELAY_S", 0.0)
    before = threading.active_count()
    with scan_progress(True) as callback:
        assert callback is not None
        for k in range(50):
            callback(f"f{k}.yaml")
        assert threading.active_count() == before


def test_a_scanner_bug_fails_closed_naming_the_file(tmp_path: Path) -> None:
    from vllm_upgrade_check.sources.scanners.manifests import ManifestScanner

    class Broken(ManifestScanner):
        def scan(self, source):  # type: ignore[no-untyped-def]
            raise KeyError("boom")
            yield  # pragma: no cover

    write(tmp_path, "compose.yaml", COMPOSE)
    _facts, skipped, _count = scan(tmp_path, scanners=[Broken()])
    assert [(s.path, s.reason, s.configures_vllm) for s in skipped] == [
        ("compose.yaml", "manifest scanner failed: KeyError: 'boom'", True)
    ]
