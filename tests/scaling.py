"""Cost ratios for size-scaling tests: the cost at n and at 4n measured in one run.

A ratio is not a time limit: the machine's speed cancels out. Linear work gives a ratio near 4,
quadratic near 16, the exponential backtracking these tests guard against far more.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

LINEAR = 8.0
"""Ratio allowed between cost at 4n and at n: linear (4) with room for noise, well below quadratic (16)."""


def _cost(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def time_ratio(make: Callable[[int], Callable[[], object]], n: int, repeat: int = 5) -> float:
    """Best-of-``repeat`` cost of ``make(4 * n)()`` over that of ``make(n)()``."""
    small, large = make(n), make(4 * n)
    small()  # warm caches and imports before measuring
    return _cost(large, repeat) / max(_cost(small, repeat), 1e-9)


def memory_ratio(make: Callable[[int], Callable[[], object]], n: int) -> float:
    """Peak traced memory of ``make(4 * n)()`` over that of ``make(n)()``."""
    peaks = []
    for size in (n, 4 * n):
        run = make(size)
        tracemalloc.start()
        run()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return peaks[1] / max(peaks[0], 1)
