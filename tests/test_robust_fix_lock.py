"""One advisory lock for a whole ``fix`` run: two runs over the same files do not interleave.

The lock is taken on the directories of every file the run will edit, after its first scan
and before its first write, in sorted order; a run that had to wait scans again, so it fixes
what the other run left. The waiting is observed in ``/proc/locks`` (Linux), not timed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vllm_upgrade_check.parsing.locks import RunLock
from vllm_upgrade_check.parsing.textfiles import write_atomic

LAUNCH = "#!/bin/sh\nvllm serve m --swap-space 4 --max-num-seqs 8\n"
COMPOSE = (
    "services:\n  a:\n    image: vllm/vllm-openai:v0.26.0\n"
    '    command: ["--no-calculate-kv-scales", "--max-num-partial-prefills", "2", "--model", "m"]\n'
)
linux_only = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks (Linux)")


def _fix(root: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    return subprocess.Popen(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.28.0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _waiting_on_flock(pid: int) -> bool:
    """Whether process ``pid`` is blocked on an ``flock`` (a ``->`` line of ``/proc/locks``)."""
    for line in Path("/proc/locks").read_text().splitlines():
        parts = line.split()
        if "->" in parts and "FLOCK" in parts and str(pid) in parts:
            return True
    return False


def _wait_until_blocked(proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300  # a guard against a hang, not a measured time
    while not _waiting_on_flock(proc.pid):
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            pytest.fail(f"fix ended without waiting for the lock another run holds:\n{out}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("fix neither waited on the lock nor ended")
        time.sleep(0.05)


@linux_only
def test_a_fix_run_waits_for_one_holding_its_files_then_fixes_what_that_run_left(tmp_path: Path) -> None:
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    script, compose = tmp_path / "run.sh", deploy / "compose.yaml"
    script.write_text(LAUNCH)
    compose.write_text(COMPOSE)
    with RunLock() as other:  # another fix run, holding both files' directories
        other.acquire([compose, script])
        proc = _fix(tmp_path)
        _wait_until_blocked(proc)
        # ... and writing them while the second run waits (every offset the second run's
        # first scan recorded moves)
        write_atomic(script, ("# written by the other run\n" + LAUNCH).encode(), expected=LAUNCH.encode())
        write_atomic(compose, ("# written by the other run\n" + COMPOSE).encode(), expected=COMPOSE.encode())
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    text = script.read_text()
    assert text.startswith("# written by the other run\n#!/bin/sh\nvllm serve m --max-num-seqs 8"), text
    assert "--swap-space" not in text, text
    fixed = compose.read_text()
    assert fixed.startswith("# written by the other run\nservices:\n"), fixed
    assert "--no-calculate-kv-scales" not in fixed and '"--model", "m"]' in fixed, fixed


@linux_only
def test_a_file_found_later_is_not_waited_for_while_holding_others(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    with RunLock() as mine, RunLock() as other:
        mine.acquire([first / "x.sh"])
        assert other.hold(second / "y.sh")
        assert not mine.hold(second / "y.sh")  # held by the other run: refused at once, no deadlock
        assert mine.hold(first / "z.sh") and not mine.waited
    with RunLock() as again:  # both released
        assert again.hold(first / "x.sh") and again.hold(second / "y.sh")


def test_two_concurrent_fix_runs_end_as_one_run_would(tmp_path: Path) -> None:
    tree, alone = tmp_path / "tree", tmp_path / "alone"
    for root in (tree, alone):
        for i in range(3):
            folder = root / f"svc{i}"
            folder.mkdir(parents=True)
            (folder / "run.sh").write_text(LAUNCH.replace("m ", f"m{i} "))
            (folder / "compose.yaml").write_text(COMPOSE)
    reference = _fix(alone)
    reference.communicate(timeout=300)
    runs = [_fix(tree), _fix(tree)]
    outs = [p.communicate(timeout=300)[0] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outs
    for path in sorted(alone.rglob("*")):
        if path.is_file():
            assert (tree / path.relative_to(alone)).read_text() == path.read_text(), path
    shutil.rmtree(alone)
