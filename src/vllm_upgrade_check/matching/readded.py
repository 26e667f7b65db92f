"""Removals the target release takes back: a flag or env var that a release removed and a
later release defines again.

A pack rule of release R on a CLI flag (or an env var) that R's parser (``vllm/envs.py``)
no longer defines says the thing went at R. When the target release defines it again
(``--disable-log-requests``: removed in vLLM 0.17.0, defined again in 0.33.0), the launch
that still writes it works at the target: the finding is ``info``, says so, and has no fix
that deletes it (:func:`with_readded`). Decided from the releases' own surface data
(:mod:`vllm_upgrade_check.knowledge.known_args`), for every rule alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import KnownArgs
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import Applicability, Fix, FixAction, MatchKind, Rule, Severity

CLI_ORIGINS = frozenset({"cli", "config", "env-wrapper", "flag-table"})
"""Origins of ``arg`` facts read by vLLM's argument parser (a command line, a ``--config``
key, a wrapper's command-line words): what the target's CLI flags decide."""


@dataclass(frozen=True)
class Readded:
    """A subject a rule's release removed and a later release defines again.

    Attributes:
        subject: the flag (``--disable-log-requests``) or env var as vLLM writes it.
        removed: the release whose pack holds the rule (where it went).
        again: the first release after it that defines it again.
    """

    subject: str
    removed: Version
    again: Version


def _flag(name: str) -> str:
    """``disable_log_requests`` -> ``--disable-log-requests``."""
    return "--" + name.lstrip("-").replace("_", "-")


def _defined(known: KnownArgs, kind: str, subject: str, version: Version) -> bool:
    if kind == "env":
        return known.env_defines(subject, version)
    return known.defines(subject, version)


def readded(known: KnownArgs, kind: str, subject: str, removed: Version, target: Version) -> Readded | None:
    """The :class:`Readded` of ``subject`` (``kind``: ``flag`` or ``env``) when release
    ``removed`` does not define it, some release before did, and ``target`` (covered by the
    data) defines it again; else ``None``."""
    if not known.covers(target) or removed > target or _defined(known, kind, subject, removed):
        return None
    if not _defined(known, kind, subject, target):
        return None
    if not any(r < removed and _defined(known, kind, subject, r) for r in known.releases):
        return None  # never defined before: added, not taken back
    again = next((r for r in known.releases if removed < r <= target and _defined(known, kind, subject, r)), target)
    return Readded(subject, removed, again)


def rule_subject(rule: Rule) -> tuple[str, str] | None:
    """``(kind, subject)`` a pack rule names as the target's surface data knows it: a CLI
    flag (``flag``, dashed) or an env var (``env``); ``None`` for other rules."""
    kind = rule.match.kind
    if kind in (MatchKind.CLI_FLAG, MatchKind.ENGINE_ARG):
        return "flag", _flag(rule.match.name)
    if kind == MatchKind.ENV_VAR:
        return "env", rule.match.name
    return None


def _fact_subject(fact: Fact, rule: Rule) -> tuple[str, str] | None:
    """The subject of ``fact`` as read by vLLM: a flag its parser reads, an env var."""
    if fact.kind == FactKind.ARG and fact.origin in CLI_ORIGINS:
        return "flag", _flag(rule.match.name)
    if fact.kind == FactKind.ENV_VAR:
        return "env", rule.match.name
    return None


def readded_rule(rule: Rule, back: Readded, target: Version) -> Rule:
    """``rule`` as an ``info`` that says the target defines its subject again, with no fix."""
    message = (
        f"{back.subject} was removed in vLLM {back.removed}, defined again in {back.again}: "
        f"no change needed at the target {target}."
    )
    verb = "accepts" if back.subject.startswith("--") else "reads"
    fix = Fix(
        summary=f"Nothing to change: vLLM {target} {verb} {back.subject}.",
        action=FixAction.NONE,
        applicability=Applicability.DISPLAY_ONLY,
    )
    return rule.replace(severity=Severity.INFO, message=message, fix=fix)


def with_readded(findings: Sequence[Finding], known: KnownArgs, target: Version) -> list[Finding]:
    """``findings`` with each pack-rule finding on a flag or env var that the rule's release
    removed and ``target`` defines again made ``info``, its fix none (see
    :func:`readded_rule`); the others as they are."""
    out = []
    memo: dict[tuple[str, str, str], Readded | None] = {}
    for finding in findings:
        subject = _fact_subject(finding.fact, finding.rule) if rule_subject(finding.rule) else None
        if subject is None or finding.deprecated_only:
            out.append(finding)
            continue
        key = (*subject, finding.release)
        if key not in memo:
            try:
                removed = Version(finding.release)
            except ValueError:
                memo[key] = None
            else:
                memo[key] = readded(known, subject[0], subject[1], removed, target)
        back = memo[key]
        if back is None:
            out.append(finding)
            continue
        out.append(replace(finding, rule=readded_rule(finding.rule, back, target), severity=Severity.INFO))
    return out

