"""The tests of a written value against what a rule names: glob patterns (a model id) and
version specifiers (a requirement against the target's pin). :mod:`.matcher` applies them."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


def _candidate_versions(*specs: SpecifierSet) -> set[Version]:
    """The versions named in ``specs`` and those just above each (one more at each place of
    its release: ``5.5.0`` gives ``5.5.1``, ``5.6.0``, ``6.0.0``), so that a set whose
    bounds only exclude a named version (``!=5.5.0`` against ``~=5.5.0``) still shows an
    overlap."""
    out: set[Version] = set()
    for spec in specs:
        for clause in spec:
            text = clause.version.removesuffix(".*")
            try:
                version = Version(text)
            except InvalidVersion:
                continue
            out.add(version)
            release = (*version.release, 0, 0)[: max(len(version.release), 3)]
            for place in range(len(release)):
                bumped = (*release[:place], release[place] + 1, *([0] * (len(release) - place - 1)))
                out.add(Version(".".join(str(p) for p in bumped)))
    return out


def specifiers_conflict(user: str, required: str) -> bool:
    """``True`` when no version can satisfy both specifier sets.

    Decided by probing the versions named in either set (a practical test that is exact for
    the pins and ranges used in requirements files: ``==``, ``~=``, ``>=``/``<``, ``!=``,
    wildcards). An unparsable or empty user specifier never conflicts.

    Args:
        user: the specifier as written by the user, e.g. ``"==2.12.0"`` or ``">=2.10,<2.13"``.
        required: the specifier the target release requires, e.g. ``"==2.13.0"``.
    """
    try:
        mine = SpecifierSet(user)
        theirs = SpecifierSet(required)
    except InvalidSpecifier:
        return False
    if not str(mine) or not str(theirs):
        return False
    candidates = _candidate_versions(mine, theirs)
    return not any(
        mine.contains(v, prereleases=True) and theirs.contains(v, prereleases=True) for v in candidates
    )


def globs_match(patterns: tuple[str, ...], name: str) -> bool:
    """Whether ``name`` matches one of the glob ``patterns`` (:func:`fnmatch.fnmatchcase` of
    each pattern lowered, as a rule's model patterns are); the patterns are compiled into one
    expression once per distinct tuple, so a fact costs one match, not one per pattern."""
    return compiled_globs(patterns)(name) is not None


@lru_cache(maxsize=1024)
def compiled_globs(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """The ``match`` of one expression that matches what any of ``patterns`` matches as
    :func:`fnmatch.fnmatchcase` of the pattern lowered (each pattern's
    :func:`fnmatch.translate`, joined); with no patterns, a test that matches nothing."""
    if not patterns:
        return lambda _name: None
    return re.compile("|".join(f"(?:{fnmatch.translate(p.lower())})" for p in patterns)).match
