"""Version specifiers moved to admit a new release, in the style the user wrote them.

Every question about what a specifier admits is asked of :mod:`packaging`; only the
rewriting of a clause's version keeps the user's spelling (``vllm>=0.10,<0.11`` becomes
``vllm>=0.28,<0.29``, ``~=0.10.1`` becomes ``~=0.28.0``, ``==0.10.*`` becomes ``==0.28.*``).
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_CLAUSE = re.compile(r"(?P<lead>\s*)(?P<op>===|~=|==|!=|<=|>=|<|>)(?P<mid>\s*)(?P<version>[^\s,]+)(?P<trail>\s*)")


def _release(text: str) -> tuple[int, ...] | None:
    try:
        return Version(text.removesuffix(".*")).release
    except InvalidVersion:
        return None


def _with_precision(parts: tuple[int, ...], precision: int) -> str:
    padded = (*parts, *([0] * precision))[:precision]
    return ".".join(str(p) for p in padded)


def admitting(written: str, target: Version) -> str | None:
    """``written`` (a specifier as written, ``>=0.10, <0.11``) with each clause that excludes
    ``target`` moved so that it admits it, spelled as the user spelled it: a pin moves to the
    target (at the same precision for a wildcard or ``~=``), an upper bound moves just past the
    target (one step at the place the window was kept to, else at the precision written:
    the releases after the target are not checked), an ``!=`` of the target is dropped, a
    pin's build label stays (``==0.26.0+cu126`` becomes ``==0.28.0+cu126``). ``written``
    unchanged when it admits the target already; ``None`` when it cannot be moved (a lower bound above the
    target, something :mod:`packaging` does not read).
    """
    try:
        if SpecifierSet(written).contains(target, prereleases=True):
            return written
    except InvalidSpecifier:
        return None
    pieces = written.split(",")
    clauses = [_CLAUSE.fullmatch(piece) for piece in pieces]
    if any(c is None for c in clauses):
        return None
    lower = next(
        (
            _release(c.group("version"))
            for c in clauses
            if c is not None and c.group("op") in (">=", ">", "~=", "==")
        ),
        None,
    )
    out: list[str] = []
    t = target.release
    admitted = target  # what the moved specifier must admit (the target, with a kept build label)
    window = lower is not None and any(c is not None and c.group("op") in ("<", "<=") for c in clauses)
    for piece, clause in zip(pieces, clauses, strict=True):
        assert clause is not None
        op, version = clause.group("op"), clause.group("version")
        lead, mid, trail = clause.group("lead"), clause.group("mid"), clause.group("trail")
        if window and op in (">=", ">"):
            parts = _release(version)
            if parts is None or Version(version) > target:
                return None
            out.append(f"{lead}>={mid}{_with_precision(t, len(parts))}{trail}")
            continue
        try:
            if Specifier(f"{op}{version}").contains(target, prereleases=True):
                out.append(piece)
                continue
        except InvalidSpecifier:
            return None
        parts = _release(version)
        if parts is None:
            return None
        if op == "!=":
            continue  # it excludes exactly the target: it goes
        if op in (">=", ">"):
            return None  # the lower bound is above the target: not an upgrade
        if op in ("==", "==="):
            local = Version(version).local if not version.endswith(".*") else None
            if local:
                # a build variant (``+cu126``) is the user's choice of wheel: it stays
                new = f"{target}+{local}"
                admitted = Version(new)
            else:
                new = _with_precision(t, len(parts)) + ".*" if version.endswith(".*") else str(target)
        elif op == "~=":
            new = _with_precision(t, len(parts))
        else:  # < and <=: an upper bound below the target
            if op == "<=":
                new = _with_precision(t, max(len(parts), len(t)))
            else:
                new = _with_precision(_above(t, parts, lower), len(parts))
        out.append(f"{lead}{op}{mid}{new}{trail}")
    result = ",".join(out).strip()
    try:
        return result if result and SpecifierSet(result).contains(admitted, prereleases=True) else None
    except InvalidSpecifier:
        return None


def _above(target: tuple[int, ...], upper: tuple[int, ...], lower: tuple[int, ...] | None) -> tuple[int, ...]:
    """The exclusive upper bound just above ``target``: one step above it at the place the
    window ``lower``..``upper`` was kept to (where they first differ; without a lower bound,
    the last place ``upper`` names). ``>=0.20,<0.27`` for 0.28.0 becomes ``<0.29``, not a
    window as wide as before: the releases after the target were not checked, and a bound
    that admits them lets the resolver install them."""
    width = max(len(target), len(upper), len(lower or ()))
    t = (*target, *([0] * width))[:width]
    u = (*upper, *([0] * width))[:width]
    if lower is not None:
        low = (*lower, *([0] * width))[:width]
        for i in range(width):
            if u[i] != low[i]:
                return (*t[:i], t[i] + 1, *([0] * (width - i - 1)))
    last = max((i for i, p in enumerate(u) if p), default=len(upper) - 1)
    last = min(last, len(upper) - 1)
    return (*t[:last], t[last] + 1, *([0] * (width - last - 1)))
