"""The CUDA major a release was built for, from the ELF ``DT_NEEDED`` entries
of its compiled extensions (ELF reader: :mod:`vllm_upgrade_check.parsing.elf`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from vllm_upgrade_check.knowledge.derive.surface.files import _ReleaseFiles
from vllm_upgrade_check.knowledge.derive.surface.model import SourceRef
from vllm_upgrade_check.parsing.elf import HeadCachedFile, cuda_major_of, read_elf_needed


def _cuda_major(files: _ReleaseFiles) -> tuple[int | None, SourceRef | None]:
    """CUDA major version from the DT_NEEDED entries of the compiled extensions."""
    listed = files.extra_needed()
    so_names = [n for n in files.names if n.endswith(".so") or ".so." in n.rsplit("/", 1)[-1]]
    if not so_names:
        so_names = sorted(listed)

    def rank(name: str) -> tuple:
        # vllm/_C.*.so, then other vllm/_C*.so, then everything else
        base = name.rsplit("/", 1)[-1]
        top = name.count("/") == 1
        return (not (top and base.startswith("_C.")), not (top and base.startswith("_C")), name)

    for name in sorted(so_names, key=rank):
        if name in listed:
            needed: Iterable[str] = listed[name]
        else:
            try:
                with files.open(name) as raw:
                    needed = read_elf_needed(HeadCachedFile(raw))
            except (ValueError, struct.error, OSError):
                continue
        major = cuda_major_of(needed)
        if major is not None:
            return major, SourceRef(name, 0)
    return None, None
