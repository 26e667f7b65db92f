"""Built-in advisories: where the deployment names the vLLM it runs, and what to move.

These findings say nothing breaks; they point at the lines an upgrade changes:

- ``VUC000-010`` (info): a vLLM image tag, an ``==`` vLLM pin or a ``vllm @ URL`` whose
  wheel, sdist, git tag or tag archive names a version older than the target:
  the line to move (``fix`` moves it once no blocker is left), with the line where the
  version is written when that is elsewhere (an ``ARG`` default, a Helm ``tag:``);
- ``VUC000-011`` (info): a vLLM image with a floating tag (``:latest``, ``:nightly``, none),
  or a ``vllm @ URL`` of a commit or branch, whose version cannot be known from the repository;
- ``VUC000-012`` (info): ``python -m vllm.entrypoints.openai.api_server``, which vLLM
  deprecates in favour of ``vllm serve`` from 0.29.0 (its ``__main__`` warns);
- ``VUC000-013`` (blocker): a vLLM requirement whose range excludes the target
  (``vllm>=0.10,<0.11``, ``vllm~=0.10.0``): the target cannot be installed from that file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.versions import version_from_tag
from vllm_upgrade_check.matching.checks import built_in_finding
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import (
    AbsentArgMatch,
    Applicability,
    DependencyMatch,
    Docs,
    Fix,
    FixAction,
    ImageMatch,
    Match,
    MatchKind,
    Rule,
    Severity,
    WheelEvidence,
)
from vllm_upgrade_check.sources.scanners.images import is_vllm_image

MOVE_ID = "VUC000-010"
FLOATING_ID = "VUC000-011"
ENTRYPOINT_ID = "VUC000-012"
EXCLUDES_ID = "VUC000-013"
ADVISORY_IDS = (MOVE_ID, FLOATING_ID, ENTRYPOINT_ID, EXCLUDES_ID)
"""Ids of the built-in advisories, in order."""
VERSION_ADVISORY_IDS = frozenset({MOVE_ID, EXCLUDES_ID})
"""Advisories on the vLLM pin or image tag itself: ``fix`` settles them by its bump."""

DEPRECATED_ENTRYPOINT = "python -m vllm.entrypoints.openai.api_server"
"""The launch vLLM deprecates in favour of ``vllm serve``."""
ENTRYPOINT_DEPRECATED_IN = Version("0.29.0")
"""First release whose ``vllm/entrypoints/openai/api_server.py`` ``__main__`` warns that
``python -m vllm.entrypoints.openai.api_server`` is deprecated (line 52 of its wheel)."""
FLOATING_TAGS = frozenset({"latest", "nightly", "main", "dev"})

_NAMES = {
    MOVE_ID: "vllm-version-to-move",
    FLOATING_ID: "floating-vllm-image-tag",
    ENTRYPOINT_ID: "deprecated-api-server-entrypoint",
    EXCLUDES_ID: "vllm-specifier-excludes-target",
}
_DOCS = {
    MOVE_ID: Docs(
        why="The image tag or pin decides which vLLM runs: it is the line the upgrade changes.",
        example="FROM vllm/vllm-openai:v0.25.1",
        instead="FROM vllm/vllm-openai:v0.28.0",
    ),
    FLOATING_ID: Docs(
        why="A floating tag runs whatever vLLM was pushed last: the version in use is unknown, and an upgrade "
        "can happen on any pull. A vllm @ URL of a commit or a branch (git+https://...vllm@<sha>, "
        ".../archive/<sha>.tar.gz) names no release either.",
        example="image: vllm/vllm-openai:latest",
        instead="image: vllm/vllm-openai:v0.28.0",
    ),
    ENTRYPOINT_ID: Docs(
        why="From vLLM 0.29.0 the module warns that `python -m vllm.entrypoints.openai.api_server` is deprecated "
        "and may be removed in a future release, and points to the `vllm` command; it takes the same flags.",
        example="python -m vllm.entrypoints.openai.api_server --model my-model",
        instead="vllm serve my-model",
    ),
    EXCLUDES_ID: Docs(
        why="pip cannot install the target from a requirement whose range leaves it out: the deployment stays on "
        "the old release, or the install fails next to a pin of the new one.",
        example="vllm>=0.10,<0.11",
        instead="vllm==0.28.0",
    ),
}


def _rule(
    rule_id: str, severity: Severity, match: Match, message: str, fix: str, evidence: WheelEvidence
) -> Rule:
    # Built without validation: the match name is the subject as written.
    return Rule(
        id=rule_id,
        name=_NAMES[rule_id],
        severity=severity,
        match=match,
        message=message,
        fix=Fix(summary=fix, action=FixAction.NONE, applicability=Applicability.DISPLAY_ONLY),
        docs=_DOCS[rule_id],
        evidence=[evidence],
        tags=["advisory"],
    )


@lru_cache(maxsize=16)
def _shown(target: Version) -> str:
    """``str(target)``, formatted once per target (each advisory says it several times)."""
    return str(target)


def _release_evidence(target: Version, finding: str) -> WheelEvidence:
    return WheelEvidence(kind="wheel", release=_shown(target), path="vllm/", finding=finding)


def _written_elsewhere(fact: Fact) -> str:
    version = fact.spans.version if fact.spans is not None else None
    if version is None or version.line == fact.location.line:
        return ""
    return f" (the version is written at line {version.line})"


def _image_advisory(fact: Fact, target: Version) -> Rule | None:
    if not (is_vllm_image(fact.raw or fact.name) or is_vllm_image(fact.name)):  # a mirror: named for vLLM's image
        return None
    tag = fact.value
    if tag is None or tag.lower() in FLOATING_TAGS or (version_from_tag(tag) is None and "$" not in tag):
        shown = f":{tag}" if tag else " (no tag)"
        return _rule(
            FLOATING_ID,
            Severity.INFO,
            ImageMatch(kind=MatchKind.IMAGE, name=fact.name),
            f"{fact.name}{shown} is a floating tag: the vLLM version it runs cannot be read from the repository",
            f"Pin the image to the release you test, e.g. {fact.name}:v{_shown(target)}.",
            _release_evidence(target, "vLLM publishes an image tag per release (v<VERSION>)"),
        )
    version = version_from_tag(tag)
    if version is None or version >= target:
        return None
    return _rule(
        MOVE_ID,
        Severity.INFO,
        ImageMatch(kind=MatchKind.IMAGE, name=fact.name),
        f"{fact.name}:{tag} runs vLLM {version}; move it to v{_shown(target)}{_written_elsewhere(fact)}",
        f"Set the tag to v{_shown(target)} once the blockers are fixed (fix does it then).",
        _release_evidence(target, f"the release upgraded to, {_shown(target)}"),
    )


def _specifier(fact: Fact) -> SpecifierSet | None:
    try:
        return SpecifierSet(fact.value or "")
    except InvalidSpecifier:
        return None


def _newer(text: str, target: Version) -> bool:
    try:
        return Version(text.removesuffix(".*")) > target
    except InvalidVersion:
        return False


def _url_of(raw: str) -> str | None:
    from packaging.requirements import InvalidRequirement

    from vllm_upgrade_check.parsing.reqtext import parse_requirement

    try:
        return parse_requirement(raw).url
    except InvalidRequirement:
        return None


def _unknown_url_advisory(fact: Fact, target: Version) -> Rule | None:
    """``vllm @ URL`` of a commit, a branch or an archive that names no release: info."""
    url = _url_of(fact.raw) if "@" in fact.raw and "://" in fact.raw else None
    if url is None:
        return None
    from vllm_upgrade_check.sources.scanners.requirement_urls import url_ref

    ref = url_ref(url)
    shown = f"{ref}, which names no release" if ref else "a file that names no release"
    return _rule(
        FLOATING_ID,
        Severity.INFO,
        DependencyMatch(kind=MatchKind.DEPENDENCY, name="vllm"),
        f"{fact.raw} installs {shown}: the vLLM version it runs cannot be read from the repository",
        f"Point the URL at a release tag (v{_shown(target)}) or pin vllm=={_shown(target)}, so that the version is known.",
        _release_evidence(target, "vLLM tags each release v<VERSION> in its repository and publishes its wheels"),
    )


def _requirement_advisory(fact: Fact, target: Version) -> Rule | None:
    if fact.name == "vllm" and not fact.value:
        return _unknown_url_advisory(fact, target)
    if fact.name != "vllm" or not fact.value:
        return None
    spec = _specifier(fact)
    if spec is None or not str(spec) or spec.contains(target, prereleases=True):
        return None
    match = DependencyMatch(kind=MatchKind.DEPENDENCY, name="vllm")
    if all(clause.operator in ("==", "===") for clause in spec):
        if any(_newer(clause.version, target) for clause in spec):
            return None  # pinned past the target: a downgrade is no upgrade to advise on
        if "@" in fact.raw and "://" in fact.raw:  # vllm @ URL: the version the URL names
            return _rule(
                MOVE_ID,
                Severity.INFO,
                match,
                f"{fact.raw} installs vLLM {str(spec).lstrip('=')}, older than the target; "
                f"point it at the {_shown(target)} wheel or tag",
                f"Point the URL at vLLM {_shown(target)} once the blockers are fixed (fix does it where the URL "
                "writes the version once; check that the new file exists there).",
                _release_evidence(target, f"the release upgraded to, {_shown(target)}"),
            )
        return _rule(
            MOVE_ID,
            Severity.INFO,
            match,
            f"vllm{spec} pins a release older than the target; move it to =={_shown(target)}{_written_elsewhere(fact)}",
            f"Pin vllm=={_shown(target)} once the blockers are fixed (fix does it then).",
            _release_evidence(target, f"the release upgraded to, {_shown(target)}"),
        )
    return _rule(
        EXCLUDES_ID,
        Severity.BLOCKER,
        match,
        f"vllm{spec} leaves out vLLM {_shown(target)}: the target cannot be installed from this requirement",
        f"Widen the range to admit {_shown(target)}, or pin vllm=={_shown(target)}.",
        _release_evidence(target, f"the release upgraded to, {_shown(target)}"),
    )


def _entrypoint_advisory(fact: Fact, target: Version) -> Rule | None:
    if fact.name != DEPRECATED_ENTRYPOINT or target < ENTRYPOINT_DEPRECATED_IN:
        return None
    return _rule(
        ENTRYPOINT_ID,
        Severity.INFO,
        AbsentArgMatch(kind=MatchKind.ABSENT_ARG, name=DEPRECATED_ENTRYPOINT),
        f"{DEPRECATED_ENTRYPOINT} is deprecated since vLLM {ENTRYPOINT_DEPRECATED_IN}; "
        "`vllm serve` takes the same flags",
        "Run `vllm serve MODEL ...` instead (the model as its first word, or --model).",
        WheelEvidence(
            kind="wheel",
            release=str(ENTRYPOINT_DEPRECATED_IN),
            path="vllm/entrypoints/openai/api_server.py",
            line=52,
            finding="__main__ warns: the `python -m vllm.entrypoints.openai.api_server` command is deprecated",
        ),
    )


def advisory_findings(
    facts: Iterable[Fact], versions: VersionContext, findings: Iterable[Finding]
) -> list[Finding]:
    """The advisories of ``facts`` for ``versions.target`` (a fact a pack rule already
    matched gets none)."""
    explained = {id(f.fact) for f in findings}
    out = []
    cache: dict[tuple[str, str, str], Rule] = {}
    entries: set[tuple[Location, str]] = set()  # entry points written elsewhere, reported once each
    for fact in facts:
        if id(fact) in explained:
            continue
        rule = None
        if fact.kind == FactKind.IMAGE:
            rule = _image_advisory(fact, versions.target)
        elif fact.kind == FactKind.REQUIREMENT:
            rule = _requirement_advisory(fact, versions.target)
        elif fact.kind == FactKind.LAUNCH:
            rule = _entrypoint_advisory(fact, versions.target)
        if rule is not None:
            rule = cache.setdefault((rule.id, rule.message, rule.fix.summary), rule)
            if rule.id == ENTRYPOINT_ID and fact.entry_at is not None:
                # the entry point is written in another file (a KServe runtime's command): the
                # finding goes there, once however many launches append to it
                fact = replace(fact, location=fact.entry_at, spans=None, group=None)
                if (where := (fact.location, fact.name)) in entries:
                    continue
                entries.add(where)
            out.append(built_in_finding(rule, fact, versions))
    return out


def documented_advisory_rule(rule_id: str) -> Rule:
    """The advisory ``rule_id`` as ``explain`` shows it (no particular fact)."""
    target = known_args().newest or Version("0")
    subjects = {
        MOVE_ID: "A vLLM image tag or pin older than the target: the line to move.",
        FLOATING_ID: "A vLLM image whose tag floats (latest, nightly, none), or a vllm @ URL of a commit or "
        "branch: its version is unknown.",
        ENTRYPOINT_ID: f"{DEPRECATED_ENTRYPOINT}, deprecated from vLLM {ENTRYPOINT_DEPRECATED_IN} in favour of vllm serve.",
        EXCLUDES_ID: "A vLLM requirement whose range leaves out the target.",
    }
    severity = Severity.BLOCKER if rule_id == EXCLUDES_ID else Severity.INFO
    match: Match = DependencyMatch(kind=MatchKind.DEPENDENCY, name="vllm")
    if rule_id in (MOVE_ID, FLOATING_ID):
        match = ImageMatch(kind=MatchKind.IMAGE, name="vllm/vllm-openai")
    elif rule_id == ENTRYPOINT_ID:
        match = AbsentArgMatch(kind=MatchKind.ABSENT_ARG, name=DEPRECATED_ENTRYPOINT)
    return _rule(
        rule_id,
        severity,
        match,
        subjects[rule_id],
        "See the finding.",
        _release_evidence(target, "the release upgraded to"),
    )
