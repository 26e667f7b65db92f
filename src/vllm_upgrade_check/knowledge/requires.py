"""What each vLLM release requires of the environment it is installed in, from its wheel.

``data/surface/requires.json`` (written by ``scripts/gen_surface_data.py`` from every wheel's
``vllm-X.dist-info/METADATA``) holds each release's ``Requires-Python`` and every
``Requires-Dist`` line, markers included, with the METADATA line it is on. Loaded once, on
first use.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

DATA_FILE = "data/surface/requires.json"
"""Package-relative path of the data."""


@dataclass(frozen=True)
class ReleaseRequirement:
    """One ``Requires-Dist`` line of a release.

    Attributes:
        name: the canonical distribution name (``torch``).
        specifier: its specifier as text (``==2.13.0``; ``""`` when unpinned).
        marker: its environment marker as text (``platform_machine == "x86_64"``), or ``""``.
        extra: the vLLM extra it belongs to (``tensorizer``), or ``""`` for a base requirement.
        line: the 1-based METADATA line (``vllm-X.dist-info/METADATA:line``), or ``None``.
        text: the line as written.
    """

    name: str
    specifier: str
    marker: str
    extra: str
    line: int | None
    text: str


_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


def _extra_of(requirement: Requirement) -> str:
    """The extra a ``Requires-Dist`` line belongs to (``extra == "zen"``), or ``""``."""
    match = _EXTRA.search(str(requirement.marker or ""))
    return match.group(1) if match else ""


@lru_cache(maxsize=1)
def _data() -> dict[str, dict[str, list[list[object]]]]:
    text = resources.files("vllm_upgrade_check").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)["releases"]


@lru_cache(maxsize=8)
def release_requirements(version: str) -> tuple[ReleaseRequirement, ...] | None:
    """Every ``Requires-Dist`` line of vLLM ``version`` (``0.28.0``), or ``None`` when the
    data does not know the release."""
    entry = _data().get(version)
    if entry is None:
        return None
    out = []
    for row in entry["requires_dist"]:
        text, line = row[0], row[1]
        try:
            requirement = Requirement(str(text))
        except InvalidRequirement:
            continue
        out.append(
            ReleaseRequirement(
                canonicalize_name(requirement.name),
                str(requirement.specifier),
                str(requirement.marker or ""),
                _extra_of(requirement),
                line if isinstance(line, int) else None,
                str(text),
            )
        )
    return tuple(out)


def base_requirement(version: str, name: str) -> list[ReleaseRequirement] | None:
    """The base (not extra) ``Requires-Dist`` lines of ``version`` for distribution ``name``
    (several when markers split it by platform); ``[]`` when the release does not require it;
    ``None`` when the data does not know the release."""
    found = release_requirements(version)
    if found is None:
        return None
    wanted = canonicalize_name(name)
    return [r for r in found if r.name == wanted and not r.extra]


def supported_pythons(version: str) -> tuple[str, ...]:
    """The Python minor versions (``"3.12"``) that vLLM ``version``'s ``Requires-Python``
    admits, from 3.8 to 3.15; empty when the data does not know the release."""
    entry = _data().get(version)
    if entry is None:
        return ()
    spec = entry.get("requires_python")
    try:
        admits = SpecifierSet(str(spec[0] or "") if spec else "")
    except InvalidSpecifier:
        return ()
    return tuple(f"3.{minor}" for minor in range(8, 16) if admits.contains(f"3.{minor}.0"))


def knows(version: str) -> bool:
    """Whether the data holds release ``version``."""
    return version in _data()


@lru_cache(maxsize=1)
def requirement_names() -> frozenset[str]:
    """Canonical names of every distribution some release in the data requires (base
    ``Requires-Dist`` lines, extras left out), with ``vllm`` itself."""
    names = {"vllm"}
    for version in _data():
        for requirement in release_requirements(version) or ():
            if not requirement.extra:
                names.add(requirement.name)
    return frozenset(names)
