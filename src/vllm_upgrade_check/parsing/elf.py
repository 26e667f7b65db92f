"""A small, stdlib-only reader of an ELF file's dynamic section (``DT_NEEDED`` entries).

Used to tell the CUDA major a compiled extension links against (``libcudart.so.13`` -> 13)
without loading it. Shared by the environment scanner (installed ``vllm/_C*.so``) and the
release-surface extractor (wheels).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import IO

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ = 0, 1, 5, 10


class HeadCachedFile:
    """A read-only file-like view of ``f`` whose first ``head_size`` bytes are kept in memory.

    A compressed zip member (``zipfile.ZipExtFile``) can only seek backwards by decompressing
    from the start again; keeping the head (ELF header, program headers and, in practice,
    ``.dynstr``) makes :func:`read_elf_needed` on a wheel member a single forward pass.
    Provides ``seek(offset)`` (absolute) and ``read(size)``."""

    def __init__(self, f: IO[bytes], head_size: int = 16 << 20) -> None:
        self.f = f
        self.head = f.read(head_size)
        self.pos = 0

    def seek(self, offset: int) -> int:
        """Move to absolute ``offset`` (bytes)."""
        self.pos = offset
        return offset

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes from the current position (fewer at the end of file)."""
        start, end = self.pos, self.pos + size
        if end <= len(self.head):
            data = self.head[start:end]
        else:
            self.f.seek(start)
            data = self.f.read(size)
        self.pos = start + len(data)
        return data


def _read_at(f: IO[bytes] | HeadCachedFile, offset: int, size: int) -> bytes:
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise ValueError("truncated ELF file")
    return data


def read_elf_needed(f: IO[bytes] | HeadCachedFile) -> tuple[str, ...]:
    """Return the ``DT_NEEDED`` library names of a seekable ELF file (wrap a zip member in
    :class:`HeadCachedFile`).

    Reads the ELF header, the program headers, the ``PT_DYNAMIC`` segment and
    the dynamic string table it points to (``DT_STRTAB`` mapped to a file
    offset through the ``PT_LOAD`` segments).  Handles ELF32/ELF64 and both
    byte orders.  Raises ValueError for a file that is not a valid ELF file
    with a dynamic section; returns ``()`` for a static file."""
    ident = _read_at(f, 0, 16)
    if ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        raise ValueError("not an ELF file")
    is64 = ident[4] == 2
    end = "<" if ident[5] == 1 else ">"
    if is64:
        hdr = struct.unpack(end + "HHIQQQIHHHHHH", _read_at(f, 16, 48))
    else:
        hdr = struct.unpack(end + "HHIIIIIHHHHHH", _read_at(f, 16, 36))
    phoff, shoff, phentsize, phnum = hdr[4], hdr[5], hdr[8], hdr[9]
    shentsize = hdr[10]
    if phnum == 0xFFFF:  # PN_XNUM: real count in sh_info of section 0
        sh0 = _read_at(f, shoff, shentsize)
        phnum = struct.unpack_from(end + "I", sh0, 44 if is64 else 28)[0]
    ph_fmt = end + ("IIQQQQQQ" if is64 else "IIIIIIII")
    loads, dynamic = [], None
    for i in range(phnum):
        ph = struct.unpack(ph_fmt, _read_at(f, phoff + i * phentsize, struct.calcsize(ph_fmt)))
        if is64:
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = ph[:6]
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz = ph[:5]
        if p_type == _PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return ()
    dyn_fmt = end + ("qQ" if is64 else "iI")
    dyn_size = struct.calcsize(dyn_fmt)
    raw = _read_at(f, dynamic[0], dynamic[1] - dynamic[1] % dyn_size)
    needed_offsets, strtab, strsz = [], None, None
    for tag, val in struct.iter_unpack(dyn_fmt, raw):
        if tag == _DT_NULL:
            break
        if tag == _DT_NEEDED:
            needed_offsets.append(val)
        elif tag == _DT_STRTAB:
            strtab = val
        elif tag == _DT_STRSZ:
            strsz = val
    if not needed_offsets:
        return ()
    if strtab is None or strsz is None:
        raise ValueError("dynamic section without DT_STRTAB/DT_STRSZ")
    for vaddr, offset, filesz in loads:
        if vaddr <= strtab < vaddr + filesz:
            table = _read_at(f, strtab - vaddr + offset, strsz)
            break
    else:
        raise ValueError("DT_STRTAB outside every PT_LOAD segment")
    return tuple(table[o : table.index(b"\0", o)].decode() for o in needed_offsets)


CUDA_LIBRARY = re.compile(r"lib(?:cudart|cublas|cublasLt|nvrtc)\.so\.(\d+)$")
"""CUDA libraries whose soname carries the CUDA major (``libcudart.so.13``)."""


def cuda_major_of(needed: Iterable[str]) -> int | None:
    """The CUDA major named by the first CUDA library in ``needed`` (``DT_NEEDED`` names),
    or ``None`` when none is a CUDA library (a CPU or ROCm build)."""
    for lib in needed:
        found = CUDA_LIBRARY.match(lib)
        if found:
            return int(found.group(1))
    return None


def file_needed(path: Path) -> tuple[str, ...]:
    """``DT_NEEDED`` names of the ELF file at ``path``.

    Raises:
        ValueError: not a valid ELF file (or truncated).
        OSError: unreadable.
    """
    with path.open("rb") as handle:
        try:
            return read_elf_needed(handle)
        except struct.error as exc:
            raise ValueError(f"malformed ELF file: {exc}") from None
