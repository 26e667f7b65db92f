"""The cyclic garbage collector paused while one file is scanned or a scan's facts are
matched: what is built then (parse trees, tokens, facts, findings) stays alive until the
step ends, so the collections its allocations trigger free nothing, and each full one walks
every object the step has made so far (a 1 MB file spent a tenth to a quarter of its scan
there, more as the file grew). The collector runs again between steps: the garbage cycles
of one file (an AST's parent links) are freed after it, never kept for the whole scan."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_collector() -> Iterator[None]:
    """Disable :mod:`gc`'s automatic collections inside the block; afterwards enabled again
    when they were enabled before it (a nested block, or a caller that turned them off,
    leaves them off). Reference counting frees everything acyclic as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
