"""Keep the benchmark working: run it at its small size and check that it prints its figures.

No timing is asserted here (speed is measured by ``benchmarks/bench_scan.py`` itself).
"""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_benchmark_quick_mode_prints_every_figure() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_scan.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for label in (
        "grep -rE (floor)",
        "scan, in-process (run_scan)",
        "scan, CLI (subprocess)",
        "CLI peak RSS",
        "semgrep",
        "--version",
        "ms/1k files",
    ):
        assert label in out, label
    assert "files scanned 0" not in out


def test_robustness_benchmark_quick_mode_prints_every_shape() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_robust.py"), "--quick", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    shapes, _, kinds = run.stdout.partition("\nfile kind")
    rows = [line for line in shapes.splitlines()[1:] if line.strip()]
    assert len(rows) == 9 * 3 and all(f"{s}x" in run.stdout for s in (1, 4, 16))
    kind_rows = [line for line in kinds.splitlines()[1:] if line.strip()]
    assert len(kind_rows) == 10 * 3 and sum(line.endswith(("ok", "OVER 2 s / 200 MiB")) for line in kind_rows) == 10
