"""What the target-surface checks say of a name: its history in words and the closest name the
target has, each decided once per name (the same flag or import is written in many files).

Shared by :mod:`.surface_checks`, :mod:`.surface_imports` and :mod:`.surface_values`.
"""

from __future__ import annotations

import difflib

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import KnownArgs, known_args
from vllm_upgrade_check.knowledge.surface import NameHistory, surface_history


def history_words(history: NameHistory, name: str, target: Version, thing: str) -> tuple[str, bool]:
    """``(words, had)``: what the releases say of ``name`` seen from ``target`` (``removed in
    0.18.0, last in 0.17.1`` / ``added in 0.30.0, after 0.28.0`` / ``in no release``), and
    whether an earlier release had it."""
    removed = history.removed_in(name, target)
    last = history.last_before(name, target)
    if last is not None:
        return f"removed in vLLM {removed} (last in {last})" if removed else f"last in {last}", True
    later = [history.releases[a] for a, _b in history.runs.get(name, ()) if history.releases[a] > target]
    if later:
        return f"added in vLLM {min(later)}, after {target}", False
    span = f"{history.releases[0]}-{history.releases[-1]}" if history.releases else "any"
    return f"{thing} of no vLLM release ({span})", False


_CLOSEST: dict[tuple[str, str, Version], str | None] = {}
_ENV_GONE: dict[Version, frozenset[str]] = {}
_ENV_AT: dict[Version, dict[int, list[str]]] = {}


def closest(kind: str, name: str, target: Version) -> str | None:
    """The closest name of ``kind`` (``flags`` or a :data:`~vllm_upgrade_check.knowledge.surface.KINDS`
    entry) release ``target`` has, once per name."""
    key = (kind, name, target)
    if key not in _CLOSEST:
        if len(_CLOSEST) > 10_000:
            _CLOSEST.clear()
        found = (
            known_args().closest(name, target)
            if kind == "flags"
            else surface_history(kind).closest(name, target)
        )
        _CLOSEST[key] = found
    return _CLOSEST[key]


def env_gone(known: KnownArgs, target: Version) -> frozenset[str]:
    """:meth:`KnownArgs.env_gone_by`, once per target."""
    found = _ENV_GONE.get(target)
    if found is None:
        found = _ENV_GONE[target] = known.env_gone_by(target)
    return found


ENV_CUTOFF = 0.85
"""Least difflib ratio at which an unknown ``VLLM_`` name is taken for a typo of a known one."""


def closest_env(name: str, target: Version, known: KnownArgs) -> str | None:
    """The env var release ``target`` reads closest to ``name`` (a typo), or ``None``."""
    by_length = _ENV_AT.get(target)
    if by_length is None:
        gone = env_gone(known, target)
        by_length = _ENV_AT[target] = {}
        for n in sorted(n for n, (first, _l, _g) in known.env_vars.items() if first <= target and n not in gone):
            by_length.setdefault(len(n), []).append(n)
    key = ("env_vars", name, target)
    if key not in _CLOSEST:
        if len(_CLOSEST) > 10_000:
            _CLOSEST.clear()
        # difflib's ratio 2*M/(a+b) cannot reach the cutoff c when one length is under
        # c/(2-c) of the other: only names of a length in that window are compared (the
        # same answer as comparing with all of them, at a fraction of the cost).
        low, high = (ENV_CUTOFF * len(name)) / (2 - ENV_CUTOFF), (2 - ENV_CUTOFF) * len(name) / ENV_CUTOFF
        pool = [n for length, names in by_length.items() if low <= length <= high for n in names]
        found = difflib.get_close_matches(name, pool, n=1, cutoff=ENV_CUTOFF) if pool else []
        _CLOSEST[key] = found[0] if found else None
    return _CLOSEST[key]


def clear_word_caches() -> None:
    """Forget the suggestions decided so far."""
    _CLOSEST.clear()
    _ENV_AT.clear()
