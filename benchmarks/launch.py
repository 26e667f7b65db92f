"""How the benchmarks run a command: from a small launcher process that reports the
command's wall time, peak RSS and CPU seconds (shared by ``bench_scan.py`` and
``dense_compare.py``)."""

from __future__ import annotations

import subprocess
import sys

_LAUNCHER = r"""
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
sys.stderr.write(f"\nVUC-BENCH {wall:.6f} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime:.6f}\n")
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""
"""Runs a command from a small process and reports its wall time, peak RSS and CPU seconds
(user + system, of the command and the workers it reaped). Measured from
the benchmark itself, ``ru_maxrss`` would include the benchmark's own memory: Linux keeps the
high-water mark of the address space a child had before ``exec``."""


def run_cpu(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int, float, str]:
    """Run ``argv``; return (wall seconds, exit status, peak RSS in KiB, CPU seconds, stderr tail)."""
    proc = subprocess.run(
        [sys.executable, "-S", "-c", _LAUNCHER, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    err = proc.stderr.decode("utf-8", "replace")
    head, _, last = err.rstrip("\n").rpartition("\n")
    parts = last.split()
    if len(parts) != 4 or parts[0] != "VUC-BENCH":
        return float("nan"), proc.returncode, 0, float("nan"), err[-400:]
    return float(parts[1]), proc.returncode, int(parts[2]), float(parts[3]), head[-400:]


def run_child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, int, str]:
    """Run ``argv``; return (wall seconds, exit status, peak RSS in KiB, stderr tail)."""
    wall, code, rss, _cpu, tail = run_cpu(argv, env)
    return wall, code, rss, tail
