"""Read-only access to the files of a release: a ``.whl`` (only the members
asked for are decompressed), an unpacked wheel or a ``site-packages``
directory.  Only ``vllm/**`` and the ``vllm-*.dist-info`` are seen.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO


class _ReleaseFiles:
    """Read-only view of ``vllm/**`` and ``vllm-*.dist-info/*`` of a release.

    ``names`` are posix paths relative to the wheel root."""

    names: list[str]
    dist_info: str

    def read(self, name: str) -> bytes:  # pragma: no cover - interface
        raise NotImplementedError

    def open(self, name: str) -> IO[bytes]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release resources."""

    def extra_needed(self) -> dict[str, list[str]]:
        """DT_NEEDED lists known without reading ELF files (see _DirFiles)."""
        return {}

    def _pick_dist_info(self, candidates: Iterable[str], where: str) -> str:
        found = sorted({c for c in candidates if re.fullmatch(r"vllm-[^/]+\.dist-info", c)})
        if len(found) != 1:
            raise ValueError(f"expected one vllm-*.dist-info in {where}, found {found}")
        return found[0]


class _ZipFiles(_ReleaseFiles):
    """Members of a ``.whl``; only the members asked for are decompressed."""

    def __init__(self, path: Path) -> None:
        self._zip = zipfile.ZipFile(path)
        all_names = [n for n in self._zip.namelist() if not n.endswith("/")]
        self.dist_info = self._pick_dist_info((n.split("/", 1)[0] for n in all_names if "/" in n), str(path))
        self.names = sorted(
            n for n in all_names if n.startswith("vllm/") or n.startswith(self.dist_info + "/")
        )

    def read(self, name: str) -> bytes:
        return self._zip.read(name)

    def open(self, name: str) -> IO[bytes]:
        return self._zip.open(name)

    def close(self) -> None:
        self._zip.close()


class _DirFiles(_ReleaseFiles):
    """An unpacked wheel or a site-packages directory.

    Only ``vllm/`` and the vllm dist-info are walked.  When the directory
    holds no ``vllm/**/*.so`` but has a ``NEEDED.txt`` (``readelf -d`` output
    per ``== path`` header, as written by the wheel-unpacking script), the
    DT_NEEDED entries are read from it instead."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not (root / "vllm").is_dir():
            raise ValueError(f"{root} has no vllm/ package directory")
        self.dist_info = self._pick_dist_info((p.name for p in root.iterdir() if p.is_dir()), str(root))
        names: list[str] = []
        for top in ("vllm", self.dist_info):
            for dirpath, dirnames, filenames in os.walk(root / top):
                dirnames.sort()
                rel = Path(dirpath).relative_to(root).as_posix()
                names.extend(f"{rel}/{f}" for f in filenames)
        self.names = sorted(names)

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def open(self, name: str) -> IO[bytes]:
        return open(self.root / name, "rb")

    def extra_needed(self) -> dict[str, list[str]]:
        listing = self.root / "NEEDED.txt"
        if not listing.is_file():
            return {}
        out: dict[str, list[str]] = {}
        current = None
        for line in listing.read_text(errors="replace").splitlines():
            if line.startswith("== "):
                current = line[3:].strip()
                out[current] = []
            elif current is not None:
                m = re.search(r"\(NEEDED\).*\[(.+)\]", line)
                if m:
                    out[current].append(m.group(1))
        return out


def _open_release(path: str | os.PathLike) -> _ReleaseFiles:
    p = Path(path)
    if p.is_file() and zipfile.is_zipfile(p):
        return _ZipFiles(p)
    if p.is_dir():
        return _DirFiles(p)
    raise ValueError(f"{path} is neither a wheel file nor a directory")
