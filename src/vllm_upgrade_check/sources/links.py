"""Symlinks met by the walk: those that loop, and those that lead out of the root or to nothing
(reported as skipped, never followed)."""

from __future__ import annotations

import errno
import os

NOTED_ELSEWHERE = frozenset({".gitignore", ".vllm-upgrade-check.toml", "pyproject.toml"})
"""Names whose symlinks out of the root are reported where they are read (ignore rules, the
project configuration), not again by the walk."""


def link_outside(path: str, root_real: str) -> str | None:
    """Why the symlink ``path`` is not walked when it leads out of the root (real path
    ``root_real``) or to nothing; ``None`` when it leads inside (walked under its real path)
    or is one of :data:`NOTED_ELSEWHERE`."""
    if os.path.basename(path) in NOTED_ELSEWHERE:
        return None
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return f"a symlink to {os.readlink(path)}, which does not exist; not read"
    if real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep):
        return None
    return f"a symlink to {real}, outside the scanned root; not followed (name that path to scan it)"


def link_loops(path: str) -> bool:
    """Whether the symlink ``path`` resolves through a loop (``stat`` fails with ELOOP)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
