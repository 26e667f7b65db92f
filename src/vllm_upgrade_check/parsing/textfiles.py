"""Files read and written as text for editing, every byte outside an edit kept.

A file is decoded as UTF-8 (a BOM remembered) or else Latin-1, with its newlines as
written (``\\r\\n`` stays), and encoded back the same way. :func:`resolve_in_roots` finds the
real file behind a reported path and refuses one reached through a symlink or lying
outside the scanned roots; :func:`write_atomic` replaces a file through a temporary file in
its directory.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class FileText:
    """A file decoded for editing: ``text`` keeps ``\\r\\n`` as written; ``bom`` and
    ``encoding`` say how to encode it back."""

    path: Path
    text: str
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        """``text`` as this file's bytes (same encoding, BOM kept)."""
        return (_BOMS[self.encoding] if self.bom else b"") + text.encode(self.encoding)


_BOMS = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "latin-1": b""}
"""The byte order mark of each encoding a file is read in."""


def decode(path: Path, data: bytes) -> FileText:
    """``data`` read from ``path``: UTF-16 when it starts with a UTF-16 byte order mark (what
    Windows tools write), else UTF-8 (a BOM remembered), else Latin-1; newlines as written.

    Raises:
        UnicodeDecodeError: UTF-16 text that does not decode.
    """
    for encoding in ("utf-16-le", "utf-16-be", "utf-8"):
        if data.startswith(_BOMS[encoding]):
            body = data[len(_BOMS[encoding]) :]
            if encoding != "utf-8":
                return FileText(path, body.decode(encoding), encoding, True)
            try:
                return FileText(path, body.decode("utf-8"), "utf-8", True)
            except UnicodeDecodeError:
                break
    try:
        return FileText(path, data.decode("utf-8"), "utf-8", False)
    except UnicodeDecodeError:
        return FileText(path, data.decode("latin-1"), "latin-1", False)


def has_text_bom(data: bytes) -> bool:
    """Whether ``data`` starts with a UTF-16 byte order mark (text, although it holds NULs)."""
    return data.startswith((_BOMS["utf-16-le"], _BOMS["utf-16-be"]))


def read_text(path: Path, overlay: Mapping[str, bytes] | None = None) -> FileText:
    """Decode ``path`` (or its ``overlay`` bytes, keyed by real path) as UTF-8 (BOM remembered),
    else Latin-1; newlines are not translated.

    Raises:
        OSError: unreadable file.
    """
    pending = overlay.get(os.path.realpath(path)) if overlay else None
    return decode(path, path.read_bytes() if pending is None else pending)


class ChangedOnDisk(OSError):
    """The file is not as it was read (changed, replaced or moved by another writer), or is one
    that ``fix`` does not replace (hard-linked, read-only, owner not keepable): not written."""


def write_atomic(path: Path, data: bytes, expected: bytes | None = None) -> None:
    """Replace ``path`` by ``data`` through a temporary file in the same directory, keeping its
    mode, owner and group.

    With ``expected`` (the bytes the new content was made from), the file is locked
    (``fcntl.flock``, advisory: two ``fix`` runs do not interleave) and checked right before
    the rename: same inode, size and modification time as when locked, and content whose
    SHA-256 is that of ``expected``. A file with more than one hard link (replacing it would
    split the links) or without its owner's write permission (``0444``) is not written.

    Raises:
        ChangedOnDisk: the file changed, is hard-linked or read-only, or its owner/group
            cannot be kept (the message says which); nothing was written.
        OSError: the directory is not writable.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        if expected is not None and fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for another fix run on this file
        info = os.fstat(fd)
        if info.st_nlink > 1:
            raise ChangedOnDisk(0, f"has {info.st_nlink} hard links: replacing it would split them; not written", str(path))
        if not info.st_mode & stat.S_IWUSR:
            raise ChangedOnDisk(0, f"read-only (mode {stat.S_IMODE(info.st_mode):04o}): not rewritten", str(path))
        if expected is not None:
            if _identity(os.stat(path)) != _identity(info) or _digest_fd(fd) != hashlib.sha256(expected).digest():
                raise ChangedOnDisk(0, "changed by another writer since it was read; not written (run fix again)", str(path))
        tmp_fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(tmp_fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            if hasattr(os, "chown"):
                _keep_owner(tmp, info, path)
            if expected is not None and _identity(os.stat(path)) != _identity(info):
                raise ChangedOnDisk(0, "changed by another writer while it was being fixed; not written (run fix again)", str(path))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    finally:
        os.close(fd)  # releases the lock


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _digest_fd(fd: int) -> bytes:
    digest = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        digest.update(chunk)
    return digest.digest()


def _keep_owner(tmp: str, info: os.stat_result, path: Path) -> None:
    """Give ``tmp`` the owner and group of the file it replaces."""
    made = os.stat(tmp)
    if (made.st_uid, made.st_gid) == (info.st_uid, info.st_gid):
        return
    try:
        os.chown(tmp, info.st_uid, info.st_gid)
    except PermissionError:
        try:
            os.chown(tmp, -1, info.st_gid)  # a user may give a file to a group they are in
        except PermissionError:
            pass
        if os.stat(tmp).st_gid != info.st_gid or made.st_uid != info.st_uid:
            raise ChangedOnDisk(
                0, f"owned by uid {info.st_uid} gid {info.st_gid}, which this user cannot keep: not rewritten", str(path)
            ) from None


MAX_NAMED_FILE_BYTES = 64 * 1024 * 1024
"""Largest input file the user names (a baseline, rule pack, freeze file, configuration,
fleet report) that is read (bytes, 64 MiB): a bigger one is refused, not read into memory."""


def read_named_file(path: Path, limit: int = MAX_NAMED_FILE_BYTES) -> bytes:
    """The bytes of an input file the user named, refusing anything but a regular file: a
    FIFO would block the run, a device (``/dev/zero``) never end.

    Raises:
        OSError: unreadable, not a regular file, or larger than ``limit`` bytes (its
            ``strerror`` says which).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO does not block the open
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file (a FIFO, device or socket is never read)", str(path))
        if info.st_size > limit:
            raise OSError(0, f"larger than {limit} bytes ({info.st_size} bytes)", str(path))
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise OSError(0, f"larger than {limit} bytes", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def missing_reason(path: str | Path) -> str:
    """Why ``path`` (which does not resolve to anything) cannot be read, in the terms a user
    looks for: ``symlink loop (ELOOP)`` for a link that leads back to itself, ``broken
    symlink (its target does not exist)`` for a dangling one, else ``no such file or
    directory``."""
    import errno

    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop (ELOOP): the link leads back to itself"
        if exc.errno == errno.ENOENT and os.path.islink(path):
            return "broken symlink: its target does not exist"
        if exc.errno not in (errno.ENOENT, None):
            return exc.strerror or str(exc)
    return "no such file or directory"
