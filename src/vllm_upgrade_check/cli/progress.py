"""A progress display for long scans: on a terminal only, on stderr only, after one second.

Nothing is drawn when stderr is not a TTY, for machine-readable formats, or for scans
that end within :data:`DELAY_S`; the bar is transient (erased when the scan ends). It is
redrawn from the scan's own thread (no refresh thread), so the scan may fork worker
processes while it is shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

DELAY_S = 1.0
"""Seconds a scan runs before the progress display appears."""

REFRESH_S = 0.1
"""Least seconds between two redraws."""


@contextmanager
def scan_progress(enabled: bool) -> Iterator[Callable[[str], None] | None]:
    """Yield a per-file callback (``callback(relative path)``) for :class:`ScanOptions.progress`,
    or ``None`` when no display may be shown (``enabled`` false, stderr not a TTY, or
    ``NO_COLOR`` set: a live display is drawn with escape sequences)."""
    import os

    if not enabled or not sys.stderr.isatty() or os.environ.get("NO_COLOR"):
        yield None
        return
    start = time.monotonic()
    state: dict[str, Any] = {"progress": None, "task": None, "count": 0, "drawn": 0.0}

    def advance(rel: str) -> None:
        state["count"] += 1
        progress = state["progress"]
        if progress is None:
            if time.monotonic() - start < DELAY_S:
                return
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            progress = Progress(
                SpinnerColumn(),
                TextColumn("scanning {task.completed} files"),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=True,
                auto_refresh=False,
            )
            progress.start()
            state["progress"] = progress
            state["task"] = progress.add_task("", total=None)
        now = time.monotonic()
        if now - state["drawn"] >= REFRESH_S:
            state["drawn"] = now
            progress.update(state["task"], completed=state["count"], description=rel[-60:])
            progress.refresh()

    try:
        yield advance
    finally:
        if state["progress"] is not None:
            state["progress"].stop()


_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2}
_UNITS.update({"mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3})


def parse_size(text: str) -> int:
    """Bytes in a size such as ``5242880``, ``500k``, ``5MiB`` or ``1G`` (binary units).

    Raises:
        UsageError: malformed or not positive.
    """
    from vllm_upgrade_check.errors import UsageError

    raw = text.strip().lower()
    digits = raw.rstrip("abcdefghijklmnopqrstuvwxyz").strip()
    unit = raw[len(digits) :].strip()
    try:
        value = float(digits) * _UNITS[unit]
    except (ValueError, KeyError):
        raise UsageError(f"--max-file-size {text!r}: expected bytes such as 5MiB, 500k or 1048576") from None
    if not 0 < value < 2**63:
        raise UsageError(f"--max-file-size {text!r}: must be positive")
    return int(value)
