"""Release windows, compared only with :mod:`packaging.version`.

An upgrade from F to T crosses every release R with ``F < R <= T``; when F is unknown,
every release up to T is crossed.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.errors import UsageError


def parse_version(text: str, what: str = "version") -> Version:
    """Parse a vLLM version as given by a user (a leading ``v`` is accepted).

    Raises:
        UsageError: when ``text`` is not a PEP 440 version.
    """
    cleaned = text.strip()
    if cleaned[:1] in ("v", "V"):
        cleaned = cleaned[1:]
    try:
        return Version(cleaned)
    except InvalidVersion:
        raise UsageError(f"{what} {text!r} is not a valid version (expected e.g. 0.27.0)") from None


def version_from_tag(tag: str) -> Version | None:
    """The vLLM version in an image tag such as ``v0.26.0`` or ``v0.26.0-cu128``.

    Returns ``None`` for tags that name no version (``latest``, ``nightly``, digests).
    """
    found = _tag_version(tag)
    return None if found is None else found[2]


def tag_version_span(tag: str) -> tuple[int, int] | None:
    """``(start, end)`` offsets in ``tag`` of the version text :func:`version_from_tag` reads
    (``v0.26.0-cu128`` -> ``(1, 7)``), or ``None``."""
    found = _tag_version(tag)
    return None if found is None else (found[0], found[1])


def _tag_version(tag: str) -> tuple[int, int, Version] | None:
    """``(start, end, version)`` of the version text in ``tag``: parsed once (the span's text
    is the candidate that parsed)."""
    bare = tag.split("@", 1)[0]
    head = bare.lstrip("vV")
    offset = len(bare) - len(head)
    for candidate in (head, head.split("-", 1)[0]):
        try:
            version = Version(candidate)
        except InvalidVersion:
            continue
        if version.local is None:
            return offset, offset + len(candidate), version
    return None


@dataclass(frozen=True)
class Window:
    """The releases an upgrade crosses.

    Attributes:
        start: the version in use (exclusive), or ``None`` when unknown.
        end: the target version (inclusive).
    """

    start: Version | None
    end: Version

    def crosses(self, release: Version) -> bool:
        """``True`` when the upgrade installs ``release`` or passes it."""
        return (self.start is None or release > self.start) and release <= self.end
