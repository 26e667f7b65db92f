"""Apply rules to facts within a release window. Pure: no I/O.

For a fact assumed to run vLLM F and a target T, a rule of the pack of release R applies:

- with its own severity when the upgrade crosses R (``F < R <= T``);
- as a ``warning`` (``deprecated_only``) when the rule has ``deprecated_in`` D with
  ``D <= T < R``: the thing still works at T but is slated for removal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.knowledge.versions import Window
from vllm_upgrade_check.matching.textmatch import compiled_globs, globs_match, specifiers_conflict
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Finding, VersionBasis
from vllm_upgrade_check.model.pack import (
    VALUED,
    AbsentArgMatch,
    CliFlagMatch,
    DependencyMatch,
    EngineArgMatch,
    FixAction,
    ImportMatch,
    Match,
    MatchKind,
    ModelMatch,
    Pack,
    PlatformMatch,
    Rule,
    Severity,
)

_ARG_ORIGINS_CLI = frozenset({"cli", "config", "env-wrapper", "flag-table"})
"""Origins of ``arg`` facts written as command-line flags: a command line, a ``--config``
file, an env var a wrapper puts on the command line, a wrapper's table of flag names."""

_FACT_KINDS: dict[MatchKind, frozenset[FactKind]] = {
    MatchKind.ENGINE_ARG: frozenset({FactKind.ARG}),
    MatchKind.CLI_FLAG: frozenset({FactKind.ARG}),
    MatchKind.ENV_VAR: frozenset({FactKind.ENV_VAR}),
    MatchKind.DEPENDENCY: frozenset({FactKind.REQUIREMENT, FactKind.DISTRIBUTION}),
    MatchKind.METRIC: frozenset({FactKind.METRIC}),
    MatchKind.IMPORT: frozenset({FactKind.IMPORT}),
    MatchKind.MODEL: frozenset({FactKind.MODEL}),
    MatchKind.RESPONSE_FIELD: frozenset({FactKind.RESPONSE_FIELD}),
    MatchKind.ABSENT_ARG: frozenset({FactKind.LAUNCH}),
    MatchKind.PLATFORM: frozenset({FactKind.PLATFORM}),
    MatchKind.IMAGE: frozenset({FactKind.IMAGE}),
}


@dataclass(frozen=True)
class Assumption:
    """The vLLM version assumed in use for a fact, and why.

    Attributes:
        version: the version, or ``None`` when unknown (every release up to the target).
        basis: how it was decided.
        source: where it was read, for the report (``Dockerfile:1``, ``--from``, ...).
    """

    version: Version | None
    basis: VersionBasis
    source: str


@dataclass(frozen=True)
class VersionContext:
    """What the run knows about versions.

    Attributes:
        target: the version being upgraded to.
        option: ``--from`` when given: it wins over everything.
        default: the run-wide assumption when neither ``--from`` nor the fact's own file says.
        required: canonical names of the distributions the target's ``Requires-Dist``
            names (its wheel's METADATA), or ``None`` when not known: a rule that pins a
            distribution the target no longer requires does not apply.
        gone: snake_case names of the flags the target's parser no longer defines
            (:meth:`~vllm_upgrade_check.knowledge.known_args.KnownArgs.gone_by`): the rule
            that removed one applies however old the release it names, since the target
            rejects the flag whatever version is in use.
        gone_env: likewise the env vars the target's ``vllm/envs.py`` no longer reads.
        gone_other: ``(match kind, name)`` of the other things some release before the
            target had and the target does not (metrics, modules, engine-arg and
            ``SamplingParams`` keywords), for the rules that name them
            (:func:`~vllm_upgrade_check.matching.surface_checks.gone_subjects`).
    """

    target: Version
    option: Version | None
    default: Assumption
    required: frozenset[str] | None = None
    gone: frozenset[str] = frozenset()
    gone_env: frozenset[str] = frozenset()
    gone_other: frozenset[tuple[str, str]] = frozenset()

    def assume(self, fact: Fact) -> Assumption:
        """The version assumed for ``fact``: ``--from``, else its file's hint, else the default."""
        if self.option is not None:
            return Assumption(self.option, VersionBasis.OPTION, "--from")
        if fact.version_hint is not None:
            # a fact of no file is the environment's (its installed vllm)
            basis = VersionBasis.FILE if fact.location.path is not None else VersionBasis.ENVIRONMENT
            try:
                return Assumption(Version(fact.version_hint), basis, fact.hint_source or "same file")
            except InvalidVersion:
                pass
        return self.default


_CLI_WORDS = frozenset({"env-wrapper", "flag-table"})
"""Origins of ``arg`` facts that stand for words on a command line: an env var a wrapper
puts there (``ENGINE_PASSTHROUGH=--swap-space 4``, ``SWAP_SPACE=4``), a wrapper's table
of flag names. A rule that asks for ``cli`` facts matches them (their severity is capped
where the convention is recognised, not read)."""


def _origin_listed(origin: str, origins: Sequence[str]) -> bool:
    """Whether a fact of ``origin`` is one a rule's ``match.origins`` asks for: listed, or a
    wrapper's command-line words (:data:`_CLI_WORDS`) where ``cli`` is listed."""
    return origin in origins or (origin in _CLI_WORDS and "cli" in origins)


def fact_matches(match: Match, fact: Fact) -> bool:
    """``True`` when ``fact`` is what ``match`` describes (window not considered)."""
    if fact.kind not in _FACT_KINDS[match.kind]:
        return False
    if match.origins is not None and not _origin_listed(fact.origin, match.origins):
        return False
    if isinstance(match, (EngineArgMatch, CliFlagMatch)):
        if isinstance(match, CliFlagMatch) and fact.origin not in _ARG_ORIGINS_CLI:
            return False
        if fact.origin == "sampling" and (match.origins is None or "sampling" not in match.origins):
            # SamplingParams keywords are not engine args: only rules that ask for them.
            return False
        return fact.answers_to(match.name) and _value_ok(match.values, fact)
    if isinstance(match, AbsentArgMatch):
        if match.patterns is not None:
            served = (fact.model or "").lower()
            if not served or not globs_match(tuple(match.patterns), served):
                return False
        # A launch with words that could not be resolved may set the arg: say nothing.
        return fact.resolved and match.name not in fact.args
    if isinstance(match, DependencyMatch):
        if canonicalize_name(fact.name) != canonicalize_name(match.name):
            return False
        if match.specifier is None:
            return True
        if fact.kind == FactKind.DISTRIBUTION:
            return _version_outside(fact.value, match.specifier)
        return specifiers_conflict(fact.value or "", match.specifier)
    if isinstance(match, PlatformMatch):
        if fact.name != match.name:
            return False
        if match.values is not None and (fact.value or "").lower() not in {v.lower() for v in match.values}:
            return True
        return match.specifier is not None and _version_outside(fact.value, match.specifier)
    if isinstance(match, ImportMatch):
        if match.names is not None:
            return fact.name == match.name and fact.value in match.names
        if fact.origin == "star":
            return False  # a name a star import brings: the star import's own fact is the module's
        return fact.name == match.name or fact.name.startswith(match.name + ".")
    if isinstance(match, ModelMatch):
        return globs_match(tuple(match.patterns), fact.name.lower())
    # env_var, metric, response_field, image: exact name, optional values
    return fact.answers_to(match.name) and _value_ok(match.values if isinstance(match, VALUED) else None, fact)


def host_satisfies(when: dict[str, str], host: dict[str, str]) -> bool:
    """``True`` when every ``when`` condition names a known host value inside its specifier.

    Args:
        when: platform fact name -> specifier (``{"gpu_memory_gib": ">=160"}``).
        host: platform fact name -> value as read (``{"gpu_memory_gib": "140.4"}``).
    """
    return all(not _version_outside(host.get(name), spec) and name in host for name, spec in when.items())


def _value_ok(values: list[str] | None, fact: Fact) -> bool:
    if values is None:
        return True
    if fact.value is None:
        return False
    return fact.value.strip().lower() in {v.lower() for v in values}


def _version_outside(value: str | None, specifier: str) -> bool:
    if not value:
        return False
    try:
        return not SpecifierSet(specifier).contains(Version(value), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _applies(pack: Pack, rule: Rule, window: Window) -> tuple[Severity, bool] | None:
    if window.crosses(pack.version):
        return rule.severity, False
    if rule.deprecated_in is not None and (window.start is None or window.start < pack.version):
        if Version(rule.deprecated_in) <= window.end < pack.version:
            severity = Severity.INFO if rule.severity == Severity.INFO else Severity.WARNING
            return severity, True
    return None


_NAMED_KINDS = frozenset(
    {
        MatchKind.ENGINE_ARG,
        MatchKind.CLI_FLAG,
        MatchKind.ENV_VAR,
        MatchKind.METRIC,
        MatchKind.RESPONSE_FIELD,
        MatchKind.IMAGE,
        MatchKind.DEPENDENCY,
    }
)
"""Match kinds that only ever match facts answering to the rule's name: the matcher looks
those facts up by name instead of trying every fact of the kind."""


def _index_key(kind: MatchKind, name: str) -> str:
    return canonicalize_name(name) if kind == MatchKind.DEPENDENCY else name


def _index_names(fact: Fact) -> set[str]:
    if fact.kind in (FactKind.REQUIREMENT, FactKind.DISTRIBUTION):
        return {canonicalize_name(fact.name)}
    return {fact.name, *fact.aliases}


def _all_facts(by_kind: dict[FactKind, list[Fact]]) -> Iterable[Fact]:
    """Every fact of ``by_kind`` (facts grouped by kind), in order."""
    for facts in by_kind.values():
        yield from facts


class _Installed:
    """Where a distribution counts as installed: everywhere when the environment checked has
    it; for a file, when a requirement of a file in its directory or one above names it (a
    ``requirements.txt`` or ``pip install`` line of that deployment; another service's
    Dockerfile does not install it here)."""

    def __init__(self, by_kind: dict[FactKind, list[Fact]]) -> None:
        self.everywhere: set[str] = {canonicalize_name(f.name) for f in by_kind.get(FactKind.DISTRIBUTION, ())}
        self.by_dir: dict[str, set[str]] = {}
        for fact in by_kind.get(FactKind.REQUIREMENT, ()):
            if fact.location.path is not None and fact.origin != "installed":
                folder = fact.location.path.rpartition("/")[0]
                self.by_dir.setdefault(folder, set()).add(canonicalize_name(fact.name))

    def near(self, path: str | None) -> set[str]:
        """Names installed for a fact of file ``path``."""
        if path is None or not self.by_dir:
            return self.everywhere
        found: set[str] = set(self.everywhere)
        folder = path.rpartition("/")[0]
        while True:
            found |= self.by_dir.get(folder, set())
            if not folder:
                return found
            folder = folder.rpartition("/")[0]


def match_rules(
    rules: Iterable[tuple[Pack, Rule]], facts: Iterable[Fact], versions: VersionContext
) -> list[Finding]:
    """Apply every rule to every fact it concerns.

    Args:
        rules: ``(pack, rule)`` pairs (e.g. :meth:`Registry.rules`).
        facts: what the scanners saw.
        versions: the target and how to assume each fact's current version.

    Returns:
        Findings sorted by path, line, column and rule id; at most one per (rule, fact).
    """
    by_kind: dict[FactKind, list[Fact]] = {}
    by_name: dict[tuple[FactKind, str], list[Fact]] = {}
    for fact in facts:
        by_kind.setdefault(fact.kind, []).append(fact)
        for name in _index_names(fact):
            by_name.setdefault((fact.kind, name), []).append(fact)
    findings: list[Finding] = []
    rule_list = current_requirements(list(rules), versions.target, versions.required)
    installed = _Installed(by_kind)
    host = {f.name: f.value for f in by_kind.get(FactKind.PLATFORM, ()) if f.value}
    # The version each fact is assumed to run depends only on its file's hint: decide it once
    # per hint, and per rule once per distinct start version (a handful), so rules whose
    # release no fact's window crosses cost one lookup instead of a match per fact.
    assumptions: dict[tuple[str | None, str | None], Assumption] = {}

    def assume(fact: Fact) -> Assumption:
        key = (fact.version_hint, fact.hint_source)
        found = assumptions.get(key)
        if found is None:
            found = assumptions[key] = versions.assume(fact)
        return found

    hints = {(f.version_hint, f.hint_source): f for f in _all_facts(by_kind)}
    starts = {assume(fact).version for fact in hints.values()}
    revived = _gone_rules(rule_list, versions)

    def judged(pack: Pack, rule: Rule, window: Window) -> tuple[Severity, bool] | None:
        applied = _applies(pack, rule, window)
        if applied is None and rule.id in revived:
            return rule.severity, False  # removed before the version in use: still rejected
        return applied

    # One test of every model rule's globs at once per model fact: the facts no model rule's
    # patterns match (most) are no model rule's candidates, instead of each rule's.
    model_globs = sorted({p for _pack, r in rule_list if isinstance(r.match, ModelMatch) for p in r.match.patterns})
    any_model = compiled_globs(tuple(model_globs))
    model_facts = {
        kind: [f for f in by_kind.get(kind, ()) if any_model(f.name.lower()) is not None]
        for kind in _FACT_KINDS[MatchKind.MODEL]
    }
    for pack, rule in rule_list:
        if not any(judged(pack, rule, Window(start, versions.target)) for start in starts):
            continue
        if rule.match.when and not host_satisfies(rule.match.when, host):
            continue
        plugins = {canonicalize_name(n) for n in rule.match.unless_installed or ()}
        if plugins and installed.everywhere & plugins:
            continue
        verdicts: dict[Version | None, tuple[Severity, bool] | None] = {}
        by_model: dict[tuple[str, str], bool] = {}  # model rules: one test per (origin, model)
        for fact_kind in _FACT_KINDS[rule.match.kind]:
            if rule.match.kind in _NAMED_KINDS:
                candidates = by_name.get((fact_kind, _index_key(rule.match.kind, rule.match.name)), [])
            elif rule.match.kind == MatchKind.MODEL:
                candidates = model_facts.get(fact_kind, [])
            else:
                candidates = by_kind.get(fact_kind, [])
            model_rule = isinstance(rule.match, ModelMatch)
            unless = rule.match.unless_args if isinstance(rule.match, ModelMatch) else None
            wanted = {f"{k}={v}" for k, v in unless.items()} if unless else None
            model_test = compiled_globs(tuple(rule.match.patterns)) if isinstance(rule.match, ModelMatch) else None
            origins = rule.match.origins
            for fact in candidates:
                if model_test is not None:  # the cheap test first: most served models match no pattern
                    # what fact_matches reads of a model fact of the rule's kinds: origin and name
                    seen = (fact.origin, fact.name)
                    ok = by_model.get(seen)
                    if ok is None:
                        ok = (origins is None or fact.origin in origins) and model_test(fact.name.lower()) is not None
                        by_model[seen] = ok
                    if not ok:
                        continue
                if plugins and installed.near(fact.location.path) & plugins:
                    continue  # the plugin is asked for where this file's deployment is
                assumed = assume(fact)
                start = assumed.version
                if start in verdicts:
                    applied = verdicts[start]
                else:
                    applied = verdicts[start] = judged(pack, rule, Window(start, versions.target))
                if applied is None:
                    continue
                if model_rule:
                    if wanted and fact.args >= wanted:
                        continue  # e.g. served by the Transformers backend
                elif not fact_matches(rule.match, fact):
                    continue
                severity, deprecated_only = applied
                capped = fact.kind == FactKind.RESPONSE_FIELD or fact.origin in ("env-wrapper", "flag-table")
                if capped and not fact.resolved and severity == Severity.BLOCKER:
                    # the file does not say the response is vLLM's, or that a wrapper makes
                    # this env var a flag, or which flag of a table reaches a launch (the
                    # convention is recognised, not read)
                    severity = Severity.WARNING
                available = rule.fix.available_in
                fix_first = available is not None and start is not None and start >= Version(available)
                findings.append(
                    Finding(
                        rule=rule,
                        fact=fact,
                        severity=severity,
                        release=pack.release,
                        from_version=str(start) if start else None,
                        from_basis=assumed.basis,
                        from_source=assumed.source,
                        deprecated_only=deprecated_only,
                        fix_before_upgrade=fix_first,
                    )
                )
    findings.sort(key=sort_key)
    return findings


def _gone_rules(rules: Sequence[tuple[Pack, Rule]], versions: VersionContext) -> frozenset[str]:
    """Ids of the rules that say how a flag (or env var) the target no longer defines went:
    for each, the rule of the newest release at or before the target that matches it."""
    if not versions.gone and not versions.gone_env and not versions.gone_other:
        return frozenset()
    # The newest rule per subject and per the facts it reads (origins): the 0.18.0 rule on the
    # --swap-space flag and the 0.26.0 one on LLM(swap_space=...) are both revived.
    newest: dict[tuple[str, str, tuple[str, ...]], tuple[Version, str]] = {}
    for pack, rule in rules:
        kind, name = rule.match.kind, rule.match.name
        if kind in (MatchKind.ENGINE_ARG, MatchKind.CLI_FLAG):
            gone = name in versions.gone or (kind.value, name) in versions.gone_other
        elif kind == MatchKind.ENV_VAR:
            gone = name in versions.gone_env
        else:
            gone = (kind.value, name) in versions.gone_other
        if not gone or pack.version > versions.target or rule.severity == Severity.INFO:
            continue
        key = (kind.value, name, tuple(sorted(rule.match.origins or ())))
        if key not in newest or pack.version > newest[key][0]:
            newest[key] = (pack.version, rule.id)
    return frozenset(rule_id for _version, rule_id in newest.values())


_STATE_KINDS = frozenset({MatchKind.DEPENDENCY, MatchKind.PLATFORM})


def _state_key(rule: Rule) -> tuple[str, str, tuple[str, ...]]:
    m = rule.match
    return (m.kind.value, canonicalize_name(m.name), tuple(sorted(m.origins or ())))


def current_requirements(
    rules: list[tuple[Pack, Rule]], target: Version, required: frozenset[str] | None = None
) -> list[tuple[Pack, Rule]]:
    """Drop ``dependency``/``platform`` rules superseded by a newer release up to ``target``.

    Those rules state what a release *requires* (``torch==2.13.0``, Python ``>=3.10``); a later
    release's requirement on the same subject replaces an earlier one, so an upgrade across
    0.26 → 0.33 is checked against 0.33's torch pin, not against every pin in between. With
    ``required`` (the distributions the target's ``Requires-Dist`` names), a pin of a
    distribution the target no longer requires goes too (xformers, dropped in 0.12.0, is
    not held to 0.11.1's pin at 0.28.0).
    """
    if required is not None:
        rules = [
            (pack, rule)
            for pack, rule in rules
            if not (
                rule.match.kind == MatchKind.DEPENDENCY
                and rule.fix.action == FixAction.SET_SPECIFIER
                and pack.version <= target
                and canonicalize_name(rule.match.name) not in required
            )
        ]
    newest: dict[tuple[str, str, tuple[str, ...]], Version] = {}
    for pack, rule in rules:
        if rule.match.kind in _STATE_KINDS and pack.version <= target:
            key = _state_key(rule)
            newest[key] = max(newest.get(key, pack.version), pack.version)
    return [
        (pack, rule)
        for pack, rule in rules
        if rule.match.kind not in _STATE_KINDS
        or pack.version > target
        or pack.version == newest[_state_key(rule)]
    ]


def sort_key(finding: Finding) -> tuple[str, int, int, str]:
    """Order findings by path (environment first), line, column, rule id."""
    loc = finding.location
    return (loc.path or "", loc.line or 0, loc.column or 0, finding.rule.id)
