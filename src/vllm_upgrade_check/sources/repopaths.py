"""Where the outputs' paths start: the repository root, else the working directory.

Scanners report paths relative to the scanned root (``Dockerfile`` for ``scan deploy``);
baselines, suppressions and ``fix`` keep using those. GitHub annotations and SARIF are read
from the repository root, so :func:`path_base` maps every reported path to the same file
relative to the root of the repository the scanned paths are in (``deploy/Dockerfile``).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence
from pathlib import Path

from vllm_upgrade_check.model.findings import PathBase
from vllm_upgrade_check.sources.discovery import covered_roots, root_label


def repository_root(start: str) -> str | None:
    """The nearest folder at or above ``start`` (an absolute path) that holds ``.git`` (a
    folder, or the file of a worktree or submodule); ``None`` when there is none."""
    here = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _base(roots: Sequence[Path], cwd: str) -> tuple[str, str]:
    found = {repository_root(os.path.abspath(root)) for root in roots}
    if len(found) == 1 and None not in found:
        return found.pop() or cwd, "repository root"
    inside = [os.path.abspath(root) for root in roots]
    if all(p == cwd or p.startswith(cwd.rstrip(os.sep) + os.sep) for p in inside):
        return cwd, "working directory"
    if len(roots) == 1:
        root = inside[0]
        return (root if os.path.isdir(root) else os.path.dirname(root)), "scanned folder"
    return cwd, "working directory"


def base_folder(roots: Sequence[Path], cwd: str | None = None) -> tuple[str, str]:
    """``(root, kind)`` of the :class:`~vllm_upgrade_check.model.findings.PathBase`
    :func:`path_base` gives for ``roots`` (the root as a POSIX path), without mapping any path."""
    base, kind = _base(roots, os.path.abspath(cwd or os.getcwd()))
    return Path(base).as_posix(), kind


_Root = tuple[str, bool, str, str]
"""A scanned root as :func:`_absolute` reads it: its label, whether it is a file, its absolute
path and its name (computed once per run, not once per reported path)."""


def _roots(roots: Sequence[Path], covered: dict[int, int]) -> list[_Root]:
    return [
        (root_label(root, roots), root.is_file(), os.path.abspath(root), root.name)
        for index, root in enumerate(roots)
        if index not in covered
    ]


def _absolute(path: str, roots: list[_Root]) -> str | None:
    """The absolute path of the file a scanner reported as ``path``, or ``None``."""
    for label, is_file, absolute, name in roots:
        if is_file:
            if path == (label or name):
                return absolute
            continue
        if not label:
            return os.path.normpath(os.path.join(absolute, path))
        if path == label or path.startswith(label + "/"):
            return os.path.normpath(os.path.join(absolute, path[len(label) + 1 :]))
    return None


def path_base(roots: Sequence[Path], reported: Iterable[str], cwd: str | None = None) -> PathBase:
    """The :class:`~vllm_upgrade_check.model.findings.PathBase` of a run over ``roots``.

    The base is the repository root of the scanned paths when they share one, else ``cwd``
    (default: the working directory) when they lie under it, else the one scanned folder
    (the folder of the one scanned file), else ``cwd``. Each of
    ``reported`` (paths as scanners and discovery report them) maps to a POSIX path relative
    to the base, or to an absolute one when the file lies outside it; a path that is not a
    file under a root (``<environment>``) maps to itself. The roots themselves are given the
    same way in :attr:`PathBase.roots` (``.`` for the base itself).
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    base, kind = _base(roots, cwd)
    read = _roots(roots, covered_roots(roots))
    paths: dict[str, str] = {}
    for path in reported:
        if path in paths:
            continue
        found = _absolute(path, read)
        if found is None and not path.startswith("<") and any(str(root) == path for root in roots):
            found = os.path.abspath(path)
        if found is None:
            paths[path] = path
            continue
        rel = os.path.relpath(found, base)
        outside = rel == ".." or rel.startswith(".." + os.sep)
        out = Path(found).as_posix() if outside else Path(rel).as_posix()
        paths[path] = posixpath.normpath(out)
    shown = []
    for root in roots:
        rel = os.path.relpath(os.path.abspath(root), base)
        shown.append(Path(os.path.abspath(root)).as_posix() if rel.startswith("..") else Path(rel).as_posix())
    return PathBase(Path(base).as_posix(), kind, paths, tuple(shown))
