"""``--from`` (and ``from`` in a configuration file) must name a version vLLM published:
a typo such as ``0.16.5`` would silently move the window the scan checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()

LAUNCH = "vllm serve acme/m --swap-space 4\n"
MAIN = "import sys; from vllm_upgrade_check.cli import main; sys.argv[0] = 'vllm-upgrade-check'; main()"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed command as a user runs it (its error handling included)."""
    return subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("given", "nearest"),
    [("0.16.5", "0.16.0 and 0.17.0"), ("0.9.0.2", "0.9.0.1 and 0.9.1"), ("0.27.3", "0.27.1 and 0.28.0")],
)
@pytest.mark.parametrize("command", ["scan", "fix", "plan", "report"])
def test_unpublished_release_is_refused(tmp_path: Path, command: str, given: str, nearest: str) -> None:
    (tmp_path / "serve.sh").write_text(LAUNCH)
    args = [command, str(tmp_path), "--from", given]
    if command == "report":
        args += ["--output", str(tmp_path / "out.md")]
    proc = _cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"vllm-upgrade-check: error: --from {given}: not a vLLM release (nearest releases: {nearest})"
    assert (tmp_path / "serve.sh").read_text() == LAUNCH


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("0.16", "0.16.0"),  # a release, spelled short
        ("0.10.1.1", "0.10.1.1"),
        ("0.17.0rc1", "0.17.0rc1"),  # a pre-release
        ("0.16.1.dev3+gabc1234", "0.16.1.dev3+gabc1234"),  # a build from source
        ("0.5.4", "0.5.4"),  # older than the oldest pack: taken as given
    ],
)
def test_releases_and_builds_are_taken(tmp_path: Path, given: str, shown: str) -> None:
    result = runner.invoke(app, ["scan", str(tmp_path), "--from", given, "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert f"for vLLM {shown} -> " in result.output


def test_configured_from_is_checked_with_its_line(tmp_path: Path) -> None:
    (tmp_path / ".vllm-upgrade-check.toml").write_text('# pinned by the platform team\nfrom = "0.20.3"\n')
    (tmp_path / "serve.sh").write_text(LAUNCH)
    proc = _cli("scan", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    config = tmp_path / ".vllm-upgrade-check.toml"
    assert f"{config}:2: from: 0.20.3: not a vLLM release (nearest releases: 0.20.2 and 0.21.0)" in proc.stderr
    # --from wins over the file, and is the one checked
    assert runner.invoke(app, ["scan", str(tmp_path), "--from", "0.20.2", "--fail-on", "never"]).exit_code == 0


def test_configured_from_newer_than_target_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".vllm-upgrade-check.toml").write_text('from = "0.30.0"\nto = "0.28.0"\n')
    proc = _cli("scan", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert f"{tmp_path / '.vllm-upgrade-check.toml'}:1: from: 0.30.0 is newer than the target 0.28.0" in proc.stderr
