"""Every file kind's whole scan (read, scanners, matching) grows linearly with the file: the
cost at n and at 4n, measured in one run (a ratio, not a time). The shapes are those the
1 MB table of ``benchmarks/bench_robust.py`` prints, from the same builders."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import REPO
from scaling import LINEAR, memory_ratio, time_ratio
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_robust import KINDS  # noqa: E402

SIZE = 6 * 1024
"""Characters of the smaller file (the larger has 4 times as many)."""


def _scan_of(name: str, make: Callable[[int], str], made: list[Path]) -> Callable[[int], Callable[[], object]]:
    def at(n: int) -> Callable[[], object]:
        root = Path(tempfile.mkdtemp(prefix="vuc-kinds-"))
        made.append(root)
        (root / name).write_text(make(n), encoding="utf-8")
        options = ScanOptions.of(paths=[root], jobs=1, cache_dir=None, to_version="0.33.0")
        return lambda: run_scan(options)

    return at


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_scan_of_each_file_kind_grows_linearly(kind: str) -> None:
    name, make = KINDS[kind]
    made: list[Path] = []
    try:
        at = _scan_of(name, make, made)
        report = at(SIZE)()
        assert report.files_scanned == 1 and not report.skipped, report.skipped  # type: ignore[attr-defined]
        assert time_ratio(at, SIZE, repeat=3) < LINEAR
        assert memory_ratio(at, SIZE) < LINEAR
    finally:
        for root in made:
            shutil.rmtree(root, ignore_errors=True)
