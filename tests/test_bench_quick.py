"""Keep the benchmark working: run it at its small size and check that it prints its figures.

No timing is asserted here (speed is measured by ``benchmarks/bench_scan.py`` itself).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType

from conftest import REPO


def test_benchmark_quick_mode_prints_every_figure() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_scan.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=900,  # a bound, not a timing: a busy shared machine runs it several times slower
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
        "where the time goes (sparse",
        "scan: python",
    ):
        assert label in out, label
    assert "files scanned 0" not in out


def test_dense_profile_quick_mode_prints_every_figure_and_checks_the_findings() -> None:
    run = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_scan.py"), "--profile", "dense", "--quick"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    for label in (
        "dense monorepo: ",
        "where the time goes (dense",
        "scan: python",
        "of which: YAML composer",
        "removed-flag literals for grep and semgrep (8)",
        "scan cold vs grep -rEn",
        "scan warm vs grep -rEn",
        "peak RSS of the scan",
        "semgrep skipped",
        "linearity: ",
    ):
        assert label in out, label
    findings = next(line for line in out.splitlines() if line.strip().startswith("findings:"))
    assert findings.endswith("identical"), findings
    assert "--jobs 1 --no-cache 0," not in findings  # the dense tree has findings to compare


def _bench_robust() -> ModuleType:
    """``benchmarks/bench_robust.py`` as a module (its tables of shapes and kinds)."""
    spec = importlib.util.spec_from_file_location("bench_robust", REPO / "benchmarks" / "bench_robust.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    bench = _bench_robust()
    assert len(rows) == len(bench.SHAPES) * 3 and all(f"{s}x" in run.stdout for s in (1, 4, 16))
    kind_rows = [line for line in kinds.splitlines()[1:] if line.strip()]
    verdicts = sum(line.endswith(("ok", "OVER 2 s / 200 MiB")) for line in kind_rows)
    assert len(kind_rows) == len(bench.KINDS) * 3 and verdicts == len(bench.KINDS)
