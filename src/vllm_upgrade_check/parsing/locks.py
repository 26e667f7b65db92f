"""One advisory lock for a whole ``fix`` run over the files it edits.

A file is replaced by a rename (:func:`~.textfiles.write_atomic`), so a lock on the file
itself would be held on the old inode while the new one lies open to the next run. The
lock is therefore taken on the *directory* of each file (``fcntl.flock`` on the directory,
which a rename inside it does not replace): a second ``fix`` run that edits a file of the
same directory waits until the first has ended, then reads what the first wrote.

:meth:`RunLock.acquire` takes the locks of every directory the run will write to before its
first write, in one stable order (sorted real paths), so two runs that want overlapping
sets cannot deadlock. A file found only later (a later pass) is locked without waiting
(:meth:`RunLock.hold`): waiting there, while holding others, could deadlock. The locks are
advisory (they stop other ``fix`` runs, not an editor) and need POSIX ``flock``; where it is
missing (Windows) a :class:`RunLock` holds nothing and every call succeeds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]


class RunLock:
    """The directory locks one ``fix`` run holds; a context manager that releases them all.

    Attributes:
        waited: whether :meth:`acquire` had to wait for another holder (the files may have
            changed since they were scanned: scan them again).
    """

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self.waited = False

    @staticmethod
    def _directory(path: Path) -> str:
        return os.path.dirname(os.path.realpath(path))

    def acquire(self, paths: Iterable[Path]) -> None:
        """Lock the directory of each of ``paths``, in sorted order, waiting for each. A
        directory that cannot be opened is left unlocked (no write there can succeed, and
        :meth:`hold` refuses it)."""
        for directory in sorted({self._directory(p) for p in paths} - set(self._fds)):
            try:
                fd = os.open(directory, os.O_RDONLY)
            except OSError:
                continue
            self._fds[directory] = fd
            if fcntl is None:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)  # another fix run holds it: wait for its end

    def hold(self, path: Path) -> bool:
        """Whether the directory of ``path`` is locked by this run: already, or now without
        waiting (``False`` when another run holds it, or it cannot be opened)."""
        directory = self._directory(path)
        if directory in self._fds:
            return True
        try:
            fd = os.open(directory, os.O_RDONLY)
        except OSError:
            return False
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
        self._fds[directory] = fd
        return True

    def release(self) -> None:
        """Release every lock (closing the descriptors releases them)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> RunLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
