"""Built-in check from the target's own ``Requires-Dist``: a requirement in the user's files
that no version the target's wheel requires can satisfy.

vLLM's wheel METADATA lists about a hundred ``Requires-Dist`` lines per release (read into
``data/surface/requires.json``, see :mod:`vllm_upgrade_check.knowledge.requires`); the packs
author rules for a few of them (torch and its companions). Every other conflicting pin is
found here, whatever the from-version: pip resolves against the target's requirements, not
against the releases crossed. A line with a platform marker is read for Linux x86_64 (where
vLLM deployments run); an extra's lines count where the file's vLLM requirement asks for
that extra; a line that depends on the Python version is read for the Python of the
environment checked, and otherwise for each Python the target's ``Requires-Python`` admits
(a conflict on only some of them is a warning that names them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from packaging.markers import InvalidMarker, Marker, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from vllm_upgrade_check.knowledge.requires import ReleaseRequirement, release_requirements, supported_pythons
from vllm_upgrade_check.matching.checks import built_in_finding
from vllm_upgrade_check.matching.matcher import VersionContext, specifiers_conflict
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import (
    Applicability,
    DependencyMatch,
    Docs,
    Fix,
    FixAction,
    MatchKind,
    Rule,
    Severity,
    WheelEvidence,
)
from vllm_upgrade_check.parsing.reqtext import parse_requirement

_PYTHON_DEPENDENT = re.compile(r"\b(python_version|python_full_version|implementation_name|platform_python_implementation)\b")
_LINUX_X86_64 = {"platform_machine": "x86_64", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def _holds(marker: str, extra: str, python: str | None = None) -> bool:
    """Whether a ``Requires-Dist`` marker holds on Linux x86_64, where vLLM deployments run
    (its official image), for the vLLM ``extra`` it belongs to (``""``: a base line) and,
    when the marker depends on it, Python ``python`` (``"3.12"``; ``None``: not decided,
    ``False``)."""
    if not marker:
        return True
    environment = {**_LINUX_X86_64, "extra": extra}
    if _PYTHON_DEPENDENT.search(marker):
        if python is None:
            return False
        environment.update(python_version=python, python_full_version=f"{python}.0", implementation_name="cpython")
        environment["platform_python_implementation"] = "CPython"
    try:
        return Marker(marker).evaluate(environment)
    except (InvalidMarker, UndefinedEnvironmentName):
        return False


def _pythons_where(marker: str, extra: str, pythons: Iterable[str]) -> list[str]:
    """The Pythons of ``pythons`` (``"3.12"``) on which ``marker`` holds."""
    return [p for p in pythons if _holds(marker, extra, p)]


def _python_in_use(facts: list[Fact]) -> str | None:
    """The Python minor version of the environment checked (a ``python`` platform fact:
    ``3.12.3`` -> ``"3.12"``), or ``None`` when the run does not know it."""
    for fact in facts:
        if fact.kind == FactKind.PLATFORM and fact.name == "python" and fact.value:
            parts = fact.value.split(".")
            if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                return f"{parts[0]}.{parts[1]}"
    return None


def _vllm_extras(facts: list[Fact]) -> dict[str | None, frozenset[str]]:
    """The extras each file's vLLM requirements ask for (``vllm[zen,audio]==0.28.0``)."""
    out: dict[str | None, set[str]] = {}
    for fact in facts:
        if fact.kind == FactKind.REQUIREMENT and fact.name == "vllm" and fact.origin == "file":
            try:
                asked = parse_requirement(fact.raw).extras
            except InvalidRequirement:
                continue
            out.setdefault(fact.location.path, set()).update(canonicalize_name(e) for e in asked)
    return {path: frozenset(names) for path, names in out.items()}


REQUIRES_DIST_ID = "VUC000-002"
"""Id of the synthetic rule (release digits 000: it belongs to no one release)."""


def requires_dist_rule(
    name: str, required: str, target: Version, line: int | None, pythons: Sequence[str] = ()
) -> Rule:
    """The synthetic rule for distribution ``name``, which vLLM ``target`` requires as
    ``required`` (``>=0.21.1``) on METADATA ``line``; with ``pythons``, only on those Python
    versions (``"3.12"``) when the run does not know the Python in use: a warning then."""
    on = f" on Python {', '.join(pythons)}" if pythons else ""
    return Rule(
        id=REQUIRES_DIST_ID,
        name="conflicts-with-requires-dist",
        severity=Severity.WARNING if pythons else Severity.BLOCKER,
        match=DependencyMatch(kind=MatchKind.DEPENDENCY, name=name, specifier=required),
        message=(
            f"vLLM {target} requires {name}{required}{on} (its wheel's Requires-Dist); this requirement cannot "
            "be installed alongside it"
            + (" there (the Python version in use is not known to this run)." if pythons else ".")
        ),
        fix=Fix(
            summary=f"Pin {name}{required} (or drop the pin and let vllm choose).",
            action=FixAction.SET_SPECIFIER,
            replacement=required,
            applicability=Applicability.SAFE,
        ),
        docs=Docs(
            why="pip resolves the target's Requires-Dist together with the file's pins; a pin outside it fails the install.",
            example=f"{name}==0.0.1",
            instead=f"{name}{required}",
        ),
        evidence=[
            WheelEvidence(
                kind="wheel",
                release=str(target),
                path=f"vllm-{target}.dist-info/METADATA",
                line=line,
                end_line=None,
                finding=f"Requires-Dist: {name}{required}",
            )
        ],
        tags=["requires-dist", "generated"],
    )


def documented_requires_dist_rule() -> Rule:
    """The rule as ``explain`` shows it (no particular distribution)."""
    return requires_dist_rule("tokenizers", ">=0.21.1", Version("0.28.0"), None)


def requires_dist_findings(facts: Iterable[Fact], versions: VersionContext, reported: Iterable[Finding]) -> list[Finding]:
    """Blockers for requirement facts read from files (origin ``file``) that conflict with the
    target's base ``Requires-Dist`` line for their distribution; a fact a pack rule already
    reports as a dependency is left to that rule."""
    covered = {id(f.fact) for f in reported if f.rule.match.kind == MatchKind.DEPENDENCY}
    target = str(versions.target)
    facts = list(facts)
    extras = _vllm_extras(facts)
    python = _python_in_use(facts)
    supported = supported_pythons(target)
    out = []
    by_name: dict[str, list[ReleaseRequirement]] = {}  # the target's lines of each distribution, in order
    for r in release_requirements(target) or ():
        by_name.setdefault(r.name, []).append(r)
    for fact in facts:
        if fact.kind != FactKind.REQUIREMENT or fact.origin != "file" or fact.name == "vllm" or id(fact) in covered:
            continue
        asked = extras.get(fact.location.path, frozenset())
        candidates = [
            r for r in by_name.get(fact.name, ()) if not r.extra or canonicalize_name(r.extra) in asked
        ]
        lines: list[tuple[ReleaseRequirement, list[str]]] = []
        for r in candidates:
            if python is not None or not _PYTHON_DEPENDENT.search(r.marker):
                if _holds(r.marker, r.extra, python):
                    lines.append((r, []))
                continue
            where = _pythons_where(r.marker, r.extra, supported)
            if where:  # on every supported Python: as good as unconditional
                lines.append((r, [] if len(where) == len(supported) else where))
        if len(lines) != 1 or not lines[0][0].specifier:
            continue  # not required there, told apart by platform, or unpinned
        line, pythons = lines[0]
        if not specifiers_conflict(fact.value or "", line.specifier):
            continue
        start = versions.assume(fact).version
        if start is not None and start > versions.target:
            continue  # a downgrade is not checked
        rule = requires_dist_rule(fact.name, line.specifier, versions.target, line.line, pythons)
        out.append(built_in_finding(rule, fact, versions))
    return out
