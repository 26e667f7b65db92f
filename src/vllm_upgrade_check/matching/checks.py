"""Built-in checks that are code, not pack data: flags that no vLLM release accepts.

A flag given to a vLLM launch (or a key of a vLLM ``--config`` file) that is in no release's
parser is rejected by vLLM at startup whatever the version. The check produces findings of a
synthetic rule, :data:`UNKNOWN_FLAG_ID`, built here with the closest known flag in its message
and the known-args data as evidence. It runs only when the known-args data covers the target
release (a flag added after the newest release read would otherwise look unknown).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from packaging.version import Version

from vllm_upgrade_check.knowledge.known_args import DATA_FILE, KnownArgs, known_args
from vllm_upgrade_check.matching.matcher import VersionContext
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import Finding
from vllm_upgrade_check.model.pack import (
    Applicability,
    CliFlagMatch,
    Docs,
    Fix,
    FixAction,
    MatchKind,
    Rule,
    Severity,
    UnverifiedEvidence,
    WheelEvidence,
)

UNKNOWN_FLAG_ID = "VUC000-001"
"""Id of the synthetic unknown-flag rule (matches the rule id pattern; release digits 000)."""

_ORIGINS = frozenset({"cli", "config"})

MAX_UNKNOWN_PER_LAUNCH = 20
"""Unknown flags reported one by one per launch (or per config file); the rest of that launch's
give one finding that counts them, so a line of a million made-up flags costs one finding more."""


def unknown_flag_rule(
    fact: Fact, known: KnownArgs, target: Version | None = None, ambiguous: Sequence[str] = ()
) -> Rule:
    """The synthetic rule for one unknown flag, naming the closest flag ``target`` defines
    (any release's without a target), if any; with ``ambiguous`` (the several flags of
    ``target`` the flag abbreviates), saying that argparse refuses it as ambiguous."""
    span = f"{known.releases[0]}-{known.newest}" if known.releases else "any"
    closest = known.closest(fact.raw or fact.name, target)
    hint = f"; did you mean {closest}?" if closest else ""
    written = fact.raw or fact.name
    if any(c.isspace() for c in written.strip()):
        flag = written.split()[0]
        return Rule(
            id=UNKNOWN_FLAG_ID,
            name="unknown-vllm-flag",
            severity=Severity.BLOCKER,
            match=CliFlagMatch(kind=MatchKind.CLI_FLAG, name=fact.name),
            message=(
                f"{written!r} is one argv word: argparse takes a word with a space in it for a positional "
                f"argument, not for {flag} and its value, so vllm serve refuses it"
            ),
            fix=Fix(
                summary=f"Write {flag} and its value as separate words (two list items), or as {flag}=VALUE.",
                action=FixAction.NONE,
                applicability=Applicability.DISPLAY_ONLY,
            ),
            docs=Docs(
                why="argparse reads an argument that contains a space as a positional, never as an option.",
                example='subprocess.run(["vllm", "serve", "my-model", "--max-num-seqs 8"])',
                instead='subprocess.run(["vllm", "serve", "my-model", "--max-num-seqs", "8"])',
            ),
            evidence=[UnverifiedEvidence(kind="unverified", reason="argparse: _parse_optional treats an arg with a space as positional")],
            tags=["unknown-flag"],
        )
    if len(ambiguous) > 1:
        shown = ", ".join(ambiguous[:4]) + (" …" if len(ambiguous) > 4 else "")
        hint = f"; as an abbreviation it is ambiguous in {target} (could match {shown}), which argparse refuses"
    # Built without validation: the name is the flag as written (``--max-num-seqS``), which a
    # pack's snake_case check would refuse; everything else is fixed text.
    return Rule(
        id=UNKNOWN_FLAG_ID,
        name="unknown-vllm-flag",
        severity=Severity.BLOCKER,
        match=CliFlagMatch(kind=MatchKind.CLI_FLAG, name=fact.name),
        message=f"{fact.raw or fact.name} is not a flag of any vLLM release ({span}){hint}",
        fix=Fix(
            summary=f"Use {closest}." if closest else "Remove the flag, or check its spelling.",
            action=FixAction.RENAME if closest else FixAction.NONE,
            replacement=closest,
            applicability=Applicability.DISPLAY_ONLY,
        ),
        docs=Docs(
            why="vLLM's argument parser rejects flags it does not define, so the server does not start.",
            example="vllm serve my-model --max-num-sequences 8",
            instead="vllm serve my-model --max-num-seqs 8",
        ),
        evidence=[
            WheelEvidence(
                kind="wheel",
                release=str(known.newest),
                path="vllm/",
                finding=(
                    f"no such flag or engine arg in any release {span}, "
                    f"as read into vllm_upgrade_check/{DATA_FILE}"
                ),
            )
            if known.newest is not None
            else UnverifiedEvidence(kind="unverified", reason=f"no known-args data (vllm_upgrade_check/{DATA_FILE})")
        ],
        tags=["unknown-flag"],
    )


def documented_unknown_flag_rule(known: KnownArgs | None = None) -> Rule:
    """The unknown-flag rule as ``explain`` shows it (no particular flag)."""
    example = Fact(FactKind.ARG, "max_num_sequences", Location("example.sh", 1), raw="--max-num-sequences")
    return unknown_flag_rule(example, known or known_args())


ABBREVIATED_FLAG_ID = "VUC000-016"
"""Id of the built-in rule for a flag written as an abbreviation argparse expands."""


def abbreviated_flag_rule(fact: Fact, full: str, target: Version | None, was: str | None = None) -> Rule:
    """The warning for a flag written as an abbreviation of ``full`` (the one flag of
    ``target`` it prefixes): argparse expands it today (vLLM leaves ``allow_abbrev`` on), and
    refuses it as ambiguous once a release adds another flag with that prefix. ``was``: the
    other flag the release in use expands it to, when it is not ``full`` (its meaning changes)."""
    written = fact.raw or "--" + fact.name.replace("_", "-")
    written = written.split("=", 1)[0]
    at = f" in {target}" if target is not None else ""
    if was is not None and was != full:
        at += f" (the release in use expands it to {was}: its meaning changes)"
    return Rule(
        id=ABBREVIATED_FLAG_ID,
        name="abbreviated-vllm-flag",
        severity=Severity.WARNING,
        match=CliFlagMatch(kind=MatchKind.CLI_FLAG, name=fact.name),
        message=(
            f"{written} is an abbreviation: argparse expands it to {full}{at}, and refuses it as ambiguous "
            "once a release adds another flag that starts with it (the server then does not start)"
        ),
        fix=Fix(
            summary=f"Write it in full: {full}.",
            action=FixAction.RENAME,
            replacement=full,
            applicability=Applicability.DISPLAY_ONLY,
        ),
        docs=Docs(
            why=(
                "vLLM's FlexibleArgumentParser keeps argparse's allow_abbrev, so a unique prefix of a flag "
                "works; a release that adds a flag with the same prefix makes it ambiguous and argparse exits."
            ),
            example="vllm serve my-model --tensor-parallel 2",
            instead="vllm serve my-model --tensor-parallel-size 2",
        ),
        evidence=[
            WheelEvidence(
                kind="wheel",
                release="0.33.0",
                path="vllm/utils/argparse_utils.py",
                finding="FlexibleArgumentParser(ArgumentParser) does not set allow_abbrev, which defaults to True",
            )
        ],
        tags=["unknown-flag"],
    )


def documented_abbreviated_flag_rule() -> Rule:
    """The abbreviated-flag rule as ``explain`` shows it (no particular flag)."""
    example = Fact(FactKind.ARG, "tensor_parallel", Location("example.sh", 1), raw="--tensor-parallel")
    return abbreviated_flag_rule(example, "--tensor-parallel-size", None)


def unknown_flag_findings(
    facts: Iterable[Fact],
    versions: VersionContext,
    known: KnownArgs | None = None,
    rule_names: frozenset[str] = frozenset(),
) -> list[Finding]:
    """Blockers for ``arg`` facts (origin ``cli`` or ``config``) that no release knows: vLLM's
    parser refuses them, so the server does not start.

    Only vLLM launches and vLLM config files produce such facts, so a same-named flag of
    another program is never checked. Unresolved flags and short flags are left alone, and so
    are names a loaded rule matches (an organisation pack's own flags are known to it).
    """
    known = known or known_args()
    if not known.covers(versions.target):
        return []
    findings = []
    rules: dict[tuple[str, str, tuple[str, ...]], Rule] = {}  # one rule object per flag as written
    ruled: dict[tuple[str, tuple[str, ...]], bool] = {}  # names a loaded rule matches
    per_launch: dict[tuple[str | None, str | None], list[Fact]] = {}
    for fact in facts:
        if fact.kind != FactKind.ARG or fact.origin not in _ORIGINS or not fact.resolved:
            continue
        if fact.origin == "cli" and not fact.raw.startswith("--"):
            continue
        if fact.name == "help":
            continue  # argparse adds --help to every parser
        if known.is_known(fact.name):
            continue
        key = (fact.raw or fact.name, fact.name, fact.aliases)
        # an abbreviation the target expands is warned of even where a rule names the full flag
        # (``matching.abbreviations`` gives the fact that flag as an alias)
        expands = known.expansions(fact.raw or fact.name, versions.target) if key not in rules else ()
        if len(expands) != 1 and (key not in rules or rules[key].id != ABBREVIATED_FLAG_ID):
            if (answered := ruled.get((fact.name, fact.aliases))) is None:
                answered = ruled[(fact.name, fact.aliases)] = any(fact.answers_to(n) for n in rule_names)
            if answered:
                continue
        launch = per_launch.setdefault((fact.location.path, fact.group), [])
        launch.append(fact)
        if len(launch) > MAX_UNKNOWN_PER_LAUNCH:
            continue
        if key not in rules:
            was = next(("--" + a.replace("_", "-") for a in fact.aliases if known.is_known(a)), None)
            rules[key] = (
                abbreviated_flag_rule(fact, expands[0], versions.target, was)
                if len(expands) == 1
                else unknown_flag_rule(fact, known, versions.target, expands)
            )
        findings.append(built_in_finding(rules[key], fact, versions))
    for launch in per_launch.values():
        if len(launch) > MAX_UNKNOWN_PER_LAUNCH:
            findings.append(_unknown_flags_summary(launch[MAX_UNKNOWN_PER_LAUNCH:], known, versions))
    return findings


def _unknown_flags_summary(rest: list[Fact], known: KnownArgs, versions: VersionContext) -> Finding:
    """One finding, on the first of ``rest``, for the unknown flags of a launch past the cap."""
    first = rest[0]
    rule = unknown_flag_rule(first, known, versions.target)
    message = (
        f"{first.raw or first.name} and {len(rest) - 1} more flag(s) of this launch are not flags of any "
        f"vLLM release (after {MAX_UNKNOWN_PER_LAUNCH} reported one by one)"
    )
    summary = rule.replace(
        message=message,
        fix=Fix(summary="Remove the flags, or check their spelling.", action=FixAction.NONE,
                applicability=Applicability.DISPLAY_ONLY),
    )
    return built_in_finding(summary, first, versions)


def built_in_finding(rule: Rule, fact: Fact, versions: VersionContext) -> Finding:
    """A finding of a built-in check's ``rule`` on ``fact``: at the rule's severity, for the
    target release, from the version ``fact`` is assumed to run."""
    assumed = versions.assume(fact)
    return Finding(
        rule=rule,
        fact=fact,
        severity=rule.severity,
        release=str(versions.target),
        from_version=str(assumed.version) if assumed.version else None,
        from_basis=assumed.basis,
        from_source=assumed.source,
    )
