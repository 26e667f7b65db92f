"""Inline suppression comments as they are written in scanned files:
``# vllm-upgrade-check: ignore[VUC0270-001]`` (several ids comma-separated; a bare ``ignore``
silences every rule). Scanning keeps the lines of a file that has one, so that the
suppression pass (:mod:`vllm_upgrade_check.matching.suppress`) never reads it again.
"""

from __future__ import annotations

import re

_INLINE = re.compile(r"#\s*vllm-upgrade-check:\s*ignore(?:\[(?P<ids>[^\]]*)\])?", re.I)


def inline_ids(line: str) -> set[str] | None:
    """The rule ids an inline comment on ``line`` silences (upper-case), ``{"*"}`` for a bare
    ``ignore``, or ``None`` when the line has no such comment."""
    m = _INLINE.search(line)
    if not m:
        return None
    ids = m.group("ids")
    if ids is None or not ids.strip():
        return {"*"}
    return {part.strip().upper() for part in ids.split(",") if part.strip()}


def below_comments(lines: list[str]) -> set[int]:
    """1-based numbers of the lines right below a comment-only line that holds a suppression
    comment: where a key whose whole value the comment covers may be written."""
    return {n + 1 for n, line in enumerate(lines, start=1) if line.lstrip().startswith("#") and _INLINE.search(line)}


def suppression_lines(text: str) -> list[str]:
    """The lines of a scanned file for the inline-suppression pass: all of them when the
    text has a suppression comment, none otherwise (so that pass never reads it again)."""
    return text.split("\n") if _INLINE.search(text) else []
