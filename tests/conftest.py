"""Shared test helpers: scan small texts with one scanner and look at the facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.sources.scanners.base import Scanner, SourceFile

REPO = Path(__file__).resolve().parents[1]


def scan_text(scanner: Scanner, relpath: str, text: str) -> list[Fact | Skipped]:
    """Run ``scanner`` over ``text`` as if it were the file ``relpath``."""
    source = SourceFile(relpath, text)
    assert scanner.accepts(source), f"{scanner.name} should accept {relpath}"
    return list(scanner.scan(source))


def args_of(items: list[Fact | Skipped]) -> list[tuple[str, str | None, int | None, int | None]]:
    """``(name, value, line, column)`` of every ``arg`` fact."""
    return [
        (f.name, f.value, f.location.line, f.location.column)
        for f in items
        if isinstance(f, Fact) and f.kind == FactKind.ARG
    ]


def kinds(items: list[Fact | Skipped], kind: FactKind) -> list[Fact]:
    """The facts of one kind."""
    return [f for f in items if isinstance(f, Fact) and f.kind == kind]


@pytest.fixture
def repo_root() -> Path:
    """The repository root (for examples/ and rules/)."""
    return REPO


@pytest.fixture(autouse=True)
def _private_scan_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """CLI runs in tests cache into a directory of their own, never the user's ~/.cache."""
    monkeypatch.setenv("VLLM_UPGRADE_CHECK_CACHE_DIR", str(tmp_path_factory.mktemp("scan-cache")))


def bare_venv(venv: Path) -> tuple[Path, Path]:
    """A venv made at ``venv`` without pip: ``(its python, its site-packages)``, for tests
    that write distribution metadata into it."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, Path(site)
