"""Command-line conventions users of ruff, pip-audit and semgrep expect: ``-V``/``--version``,
``NO_COLOR`` (no escape sequence at all on a terminal), shell completion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check import __version__

MAIN = "import sys; from vllm_upgrade_check.cli import main; sys.argv[0] = 'vllm-upgrade-check'; main()"


def _on_a_terminal(args: list[str], cwd: Path, **env: str) -> tuple[int, bytes]:
    """Run the CLI with a pseudo-terminal as stdout and stderr; its exit code and output."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env={**base, "TERM": "xterm-256color", "COLUMNS": "120", **env},
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=120), out


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags(flag: str) -> None:
    result = subprocess.run([sys.executable, "-c", MAIN, flag], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == f"vllm-upgrade-check {__version__}\n"


def test_no_color_means_no_escape_sequence(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-partial-prefills 4\n")
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n  bad: [\n")
    args = ["scan", ".", "--to", "0.28.0", "--no-cache"]
    code, coloured = _on_a_terminal(args, tmp_path)
    assert code == 2 and b"\x1b[" in coloured  # a terminal gets styles: the check below can fail
    code, plain = _on_a_terminal(args, tmp_path, NO_COLOR="1")
    assert code == 2 and b"\x1b" not in plain and b"run.sh:1:14" in plain
    code, plain = _on_a_terminal(["scan", "--help"], tmp_path, NO_COLOR="1")
    assert code == 0 and b"\x1b" not in plain


def test_shell_completion(tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-c", MAIN, "--show-completion", "bash"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SHELL": "/bin/bash"},
    )
    assert shown.returncode == 0 and "_VLLM_UPGRADE_CHECK_COMPLETE" in shown.stdout
    env = {
        **os.environ,
        "_VLLM_UPGRADE_CHECK_COMPLETE": "complete_bash",
        "COMP_WORDS": "vllm-upgrade-check scan --format ",
        "COMP_CWORD": "3",
    }
    done = subprocess.run([sys.executable, "-c", MAIN], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.split() == ["console", "json", "markdown", "sarif", "junit", "github"]


def test_ctrl_c_while_the_interpreter_shuts_down_exits_130_without_a_traceback(tmp_path: Path) -> None:
    # An exit hook registered before the run sends the interrupt: it runs after main() has
    # returned, while the interpreter shuts down (where worker threads are joined).
    script = (
        "import atexit, os, signal, sys; "
        "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT)); "
        "from vllm_upgrade_check.cli import main; "
        "sys.argv[:] = ['vllm-upgrade-check', *sys.argv[1:]]; main()"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", script, "scan", str(empty), "--no-cache", "--to", "0.28.0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr
    assert "0 blocker(s)" in run.stdout  # what the run printed before the interrupt is kept
