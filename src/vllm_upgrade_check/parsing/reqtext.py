"""Where the parts of a PEP 508 requirement string are written.

:mod:`packaging.requirements` says what a requirement means; a fix also needs to know where
its specifier is written in the string, to replace just that and keep the rest (extras,
spacing, the marker) as the user wrote it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

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


_OP = r"(?:~=|==|!=|<=|>=|<|>)[ \t]*[0-9]+(?:\.[0-9]+)*"
_SIMPLE_REQUIREMENT = re.compile(
    rf"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*(?P<spec>{_OP}(?:[ \t]*,[ \t]*{_OP})*)?"
)
"""The most common requirement shape: a name and plain release-number clauses, no extras,
URL or marker (``pkg``, ``pkg>=1.2``, ``pkg >= 1.2, < 2``)."""


@lru_cache(maxsize=4096)
def parse_requirement(text: str) -> Requirement:
    """``packaging.requirements.Requirement(text)``, the same object for the same text (a
    file read by several scanners and checks parses each string once; callers never change
    it). A name with plain release-number clauses is read without packaging's general
    parser, into the same requirement; anything else goes through it.

    Raises:
        InvalidRequirement: ``text`` is not a PEP 508 requirement.
    """
    simple = _SIMPLE_REQUIREMENT.fullmatch(text)
    if simple is not None:
        try:
            specifier = SpecifierSet(simple.group("spec") or "")
        except InvalidSpecifier:
            pass  # `pkg~=1`: packaging's parser says why
        else:
            req = Requirement.__new__(Requirement)
            req.name, req.url, req.extras = simple.group("name"), None, set()
            req.specifier, req.marker = specifier, None
            return req
    return Requirement(text)
