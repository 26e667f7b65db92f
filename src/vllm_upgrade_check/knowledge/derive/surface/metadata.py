"""``Version``, ``Requires-Python`` and ``Requires-Dist`` of a release's
``vllm-*.dist-info/METADATA``, with the lines they stand on.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.parser import Parser

from vllm_upgrade_check.knowledge.derive.surface.files import _ReleaseFiles
from vllm_upgrade_check.knowledge.derive.surface.model import SourceRef


@dataclass(frozen=True)
class _Metadata:
    version: str
    requires_python: str | None
    requires_python_ref: SourceRef | None
    requires_dist: tuple[str, ...]
    requires_dist_refs: tuple[SourceRef, ...]


def _read_metadata(files: _ReleaseFiles) -> _Metadata:
    path = f"{files.dist_info}/METADATA"
    text = files.read(path).decode("utf-8", errors="replace")
    header = text.split("\n\n", 1)[0]
    msg = Parser().parsestr(header, headersonly=True)
    lines = header.splitlines()

    def line_of(key: str, value: str, start: int = 0) -> int:
        for i in range(start, len(lines)):
            if lines[i].lower().startswith(key.lower() + ":") and lines[i].split(":", 1)[1].strip() == value:
                return i + 1
        return 0

    reqs = tuple(r.strip() for r in msg.get_all("Requires-Dist") or [])
    refs, pos = [], 0
    for r in reqs:
        pos = line_of("Requires-Dist", r, pos) or pos
        refs.append(SourceRef(path, pos))
    rp = msg.get("Requires-Python")
    rp = rp.strip() if rp else None
    return _Metadata(
        version=(msg.get("Version") or "").strip(),
        requires_python=rp,
        requires_python_ref=SourceRef(path, line_of("Requires-Python", rp)) if rp else None,
        requires_dist=reqs,
        requires_dist_refs=tuple(refs),
    )
