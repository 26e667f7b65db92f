"""Where the parts of a PEP 508 requirement string are written.

:mod:`packaging.requirements` says what a requirement means; a fix also needs to know where
its specifier is written in the string, to replace just that and keep the rest (extras,
spacing, the marker) as the user wrote it.
"""

from __future__ import annotations

import re

_REQUIREMENT_PARTS = re.compile(
    r"(?P<head>\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*)(?P<spec>[^;@]*?)(?P<tail>\s*(;.*)?)$"
)
"""A PEP 508 requirement as written: name and extras, the specifier, the marker."""


def specifier_offsets(requirement: str) -> tuple[int, int] | None:
    """``(start, end)`` of the specifier as written in ``requirement`` (``vllm >= 0.10, < 0.11 ;
    python_version > '3.9'`` -> the ``>= 0.10, < 0.11`` part; empty for ``vllm``), or ``None``
    for a URL requirement or text that is not shaped like a requirement."""
    if "@" in requirement.split(";", 1)[0]:
        return None
    match = _REQUIREMENT_PARTS.match(requirement)
    return None if match is None else (match.start("spec"), match.end("spec"))
