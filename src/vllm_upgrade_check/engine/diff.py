"""``fix --diff``: what ``fix`` would write, as a unified diff, with nothing written."""

from __future__ import annotations

import os

from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.fixing.edits import diff_bytes
from vllm_upgrade_check.fixing.interface import FixResult
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.sources.discovery import resolve_in_roots


def diff_paths(
    options: ScanOptions, unsafe: bool = False, bump: bool = True, hold_at: Severity = Severity.BLOCKER
) -> tuple[bytes, FixResult]:
    """What :func:`fix_paths` would write, as a unified diff of the files' bytes (``a/PATH`` /
    ``b/PATH``, PATH relative to the working directory where the file is under it, see :func:`~vllm_upgrade_check.fixing.edits.diff_bytes`), and its result; the
    same passes run on an in-memory overlay, so nothing is written.

    Raises:
        UsageError, RulePackError: as :func:`~vllm_upgrade_check.engine.run_scan`.
    """
    overlay: dict[str, bytes] = {}
    result = fix_paths(options, unsafe=unsafe, bump=bump, overlay=overlay, hold_at=hold_at)
    roots = list(options.paths)
    files = []
    for rel in sorted({e.path for e in result.applied}):
        real = resolve_in_roots(roots, rel)
        before = real.read_bytes()
        files.append((_diff_path(real, rel), before, overlay.get(os.path.realpath(real), before)))
    return diff_bytes(files), result


def _diff_path(real: os.PathLike[str] | str, rel: str) -> str:
    """The path a diff names the file by: relative to the working directory when the file is
    under it (so ``git apply`` and ``patch -p1`` take the diff where the tool was run, for
    ``fix SUBDIR --diff`` too), else ``rel``, its report path."""
    try:
        here = os.path.relpath(os.path.abspath(real), os.getcwd())
    except ValueError:  # another drive
        return rel
    return rel if here == os.pardir or here.startswith(os.pardir + os.sep) else here.replace(os.sep, "/")
