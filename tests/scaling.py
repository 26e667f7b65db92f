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


def time_ratio(make: Callable[[int], Callable[[], object]], n: int, repeat: int = 5, attempts: int = 3) -> float:
    """Cost of ``make(4 * n)()`` over that of ``make(n)()``: each the best of ``repeat`` runs,
    small and large interleaved (a busy machine slows both alike); the smallest ratio of
    ``attempts`` such measurements (noise only ever raises a ratio, so the smallest is the
    closest to the work done, and work that grows faster than linear never gets under
    :data:`LINEAR`)."""
    small, large = make(n), make(4 * n)
    small()  # warm caches and imports before measuring
    ratios = []
    for _ in range(attempts):
        best_small = best_large = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            small()
            best_small = min(best_small, time.perf_counter() - start)
            start = time.perf_counter()
            large()
            best_large = min(best_large, time.perf_counter() - start)
        ratios.append(best_large / max(best_small, 1e-9))
        if ratios[-1] < LINEAR:
            break
    return min(ratios)


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
