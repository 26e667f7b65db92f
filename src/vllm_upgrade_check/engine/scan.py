"""Orchestration: find files, run scanners, decide versions, match rules, build a report.

Callable from tests without the CLI. Nothing here prints or exits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from vllm_upgrade_check.engine.warm import completed, report_cache, usable
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.registry import Registry, load_registry
from vllm_upgrade_check.knowledge.requires import release_requirements
from vllm_upgrade_check.knowledge.versions import parse_version
from vllm_upgrade_check.matching.abbreviations import with_expansions
from vllm_upgrade_check.matching.advisories import ADVISORY_IDS, advisory_findings
from vllm_upgrade_check.matching.checks import ABBREVIATED_FLAG_ID, UNKNOWN_FLAG_ID, unknown_flag_findings
from vllm_upgrade_check.matching.cut_launch import CUT_LAUNCH_ID, cut_launch_findings
from vllm_upgrade_check.matching.matcher import Assumption, VersionContext, match_rules, sort_key
from vllm_upgrade_check.matching.readded import with_readded
from vllm_upgrade_check.matching.repeats import distinct, one_per_change
from vllm_upgrade_check.matching.requires_check import REQUIRES_DIST_ID, requires_dist_findings
from vllm_upgrade_check.matching.suppress import apply_filters, check_ignores, check_prefixes
from vllm_upgrade_check.matching.surface_checks import (
    SURFACE_IDS,
    gone_subjects,
    surface_findings,
    with_target_severity,
)
from vllm_upgrade_check.model.environment import Environment
from vllm_upgrade_check.model.facts import (
    ENV_VALUE,
    EXEC_LITERAL,
    UNKNOWN_IMAGE_ENTRY,
    UNRESOLVED_NOTE,
    VENDOR_ENTRY,
    Fact,
    FactKind,
)
from vllm_upgrade_check.model.findings import Finding, ReleaseInfo, Replacement, Report, VersionBasis
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.model.pack import Applicability, DependencyMatch, FixAction, MatchKind, Pack, Rule
from vllm_upgrade_check.parsing.textfiles import read_text
from vllm_upgrade_check.sources.collector import paused_collector
from vllm_upgrade_check.sources.discovery import OutsideRoots, resolve_in_roots
from vllm_upgrade_check.sources.dispatch import pinned_version
from vllm_upgrade_check.sources.includes import IncludeGraph
from vllm_upgrade_check.sources.repopaths import path_base
from vllm_upgrade_check.sources.reportcache import ReportCache
from vllm_upgrade_check.sources.tree import scan_files


def detect_from(facts: Sequence[Fact], env: Environment | None) -> Assumption:
    """The run-wide "from" version, for what says nothing of its own version: the oldest of the
    installed vllm and the vllm pins and vLLM image tags in the scanned files (which of them
    runs a launch that names none is not known, so nothing one of them would cross is
    missed), else unknown. Each file that names its own version is checked from it (its
    facts' ``version_hint``); the environment's facts from the installed vllm."""
    installed: Assumption | None = None
    if env is not None and env.vllm:
        try:
            installed = Assumption(
                Version(env.vllm), VersionBasis.ENVIRONMENT, f"installed vllm {env.vllm} ({env.source})"
            )
        except ValueError:
            pass
    pins = [(v, f) for f in facts if (v := pinned_version(f)) is not None]
    if pins:
        version, fact = min(pins, key=lambda p: p[0])
        if installed is None or installed.version is None or version < installed.version:
            newer = f" (older than the {installed.source})" if installed is not None else ""
            return Assumption(version, VersionBasis.REPOSITORY, f"{fact.location} {fact.raw}{newer}")
    if installed is not None:
        return installed
    return Assumption(
        None, VersionBasis.UNKNOWN, "no vLLM version found: every release up to the target is checked"
    )


def installed_hint(facts: Iterable[Fact], env: Environment) -> list[Fact]:
    """The environment's ``facts``, each assumed to run its installed vllm (when known and
    the fact names no version of its own), whatever the run-wide from-version is."""
    if not env.vllm:
        return list(facts)
    source = f"installed vllm {env.vllm} ({env.source})"
    return [f if f.version_hint else f.evolve(version_hint=env.vllm, hint_source=source) for f in facts]


def unresolved_notes(facts: Sequence[Fact]) -> list[str]:
    """One note per vLLM launch holding words the repository does not resolve.

    ``unresolved: $VLLM_ARGS at run.sh:4 (vllm serve); the model it serves is not known and
    the flags it holds were not checked``; ``unresolved: "$MODEL" at run.sh:2:1 (vllm
    serve); the model it serves is not known`` where the one unresolved word is where the
    model is written (:attr:`~vllm_upgrade_check.model.facts.Fact.unknown_model`).
    """
    notes = []
    for fact in facts:
        if fact.kind == FactKind.LAUNCH and not fact.resolved and fact.value:
            if fact.name.startswith(UNKNOWN_IMAGE_ENTRY):
                why = "the image it runs is not known: whether it is vLLM, which release, and its flags were not checked"
                notes.append(f"{UNRESOLVED_NOTE}{fact.value} at {fact.location} ({fact.name[len(UNKNOWN_IMAGE_ENTRY):]}); {why}")
                continue
            if fact.unknown_model is not None and fact.value.removesuffix(EXEC_LITERAL) == fact.unknown_model:
                why = "the model it serves is not known"
            elif fact.unknown_model is not None:
                why = "the model it serves is not known and the flags it holds were not checked"
            else:
                why = "the flags it holds were not checked"
            notes.append(f"{UNRESOLVED_NOTE}{fact.value} at {fact.location} ({fact.name}); {why}")
        elif fact.kind == FactKind.ARG and fact.scanner == "python" and fact.value and ENV_VALUE.fullmatch(fact.value):
            shown = fact.raw if fact.origin != "python" else f"{fact.name}="
            notes.append(
                f"{UNRESOLVED_NOTE}the value of {shown} at {fact.location} is read from the environment "
                f"({fact.value}, no default); the {'flag' if fact.origin != 'python' else 'keyword'} was checked, "
                "its value was not"
            )
    return notes


def vendor_notes(facts: Sequence[Fact]) -> list[str]:
    """One note per launch read from a vendor's image whose repository names vLLM (see
    :func:`~vllm_upgrade_check.sources.scanners.images.vendor_vllm_image`), unless a
    kustomization maps that repository to vLLM's image (an alias of its image fact)."""
    mapped = {alias for f in facts if f.kind == FactKind.IMAGE for alias in f.aliases}  # a kustomization's
    return [
        f"{fact.name[len(VENDOR_ENTRY) :]} at {fact.location}: an image of an unknown vendor whose name says "
        "vLLM, run with vLLM's flags; its flags were checked as vLLM's, and which vLLM release it holds is not known"
        for fact in facts
        if fact.kind == FactKind.LAUNCH and fact.name.startswith(VENDOR_ENTRY) and fact.name[len(VENDOR_ENTRY) :] not in mapped
    ]


def required_by(target: Version) -> frozenset[str] | None:
    """Canonical names of the distributions release ``target`` requires (its base
    ``Requires-Dist``), or ``None`` when the bundled data does not know the release."""
    found = release_requirements(str(target))
    return None if found is None else frozenset(r.name for r in found if not r.extra)


def without_stale_pins(rules: list[tuple[Pack, Rule]], target: Version) -> list[tuple[Pack, Rule]]:
    """``rules`` without the authored pin rules (``set_specifier``) of releases before
    ``target`` whose specifier no ``Requires-Dist`` line of ``target`` has any more: what
    the target requires is judged by its own line (built-in ``VUC000-002``), not by an
    older release's (``transformers<5.20.0`` of 0.32.0 where 0.33.0 asks ``<5.21.0``).
    Unchanged when the bundled data does not know ``target``."""
    found = release_requirements(str(target))
    if found is None:
        return rules
    specs: dict[str, set[SpecifierSet]] = {}
    for line in found:
        if not line.extra:
            specs.setdefault(line.name, set()).add(SpecifierSet(line.specifier))
    out = []
    for pack, rule in rules:
        match = rule.match
        if (
            isinstance(match, DependencyMatch)
            and rule.fix.action == FixAction.SET_SPECIFIER
            and match.specifier
            and pack.version < target
            and canonicalize_name(match.name) in specs
            and SpecifierSet(match.specifier) not in specs[canonicalize_name(match.name)]
        ):
            continue
        out.append((pack, rule))
    return out


def resolve_target(registry: Registry, text: str | None, origin: tuple[str, int | None] | None = None) -> Version:
    """The target release: ``text`` if it is a release with a pack, else the newest pack.
    ``origin``: the configuration file and line that set ``text`` (errors name them), or
    ``None`` for ``--to``.

    Raises:
        UsageError: malformed version or a release no pack knows.
    """
    if text is None:
        return registry.newest
    where: tuple[str | None, int | None] = (None, None) if origin is None else origin
    name = "--to" if origin is None else "to:"
    if not text.strip():
        raise UsageError(f"{name} is empty (expected a vLLM release such as 0.28.0)", *where)
    version = parse_version(text, "--to") if origin is None else _config_version(text, where)
    if version not in registry.releases:
        releases = registry.releases
        if releases and version < releases[0]:
            raise UsageError(f"{name} {text}: older than the oldest release with a pack ({releases[0]})", *where)
        known = ", ".join(str(v) for v in releases[-5:])
        raise UsageError(f"{name} {text}: unknown vLLM release (newest known: {known})", *where)
    # The release as the packs spell it: 0.16 is 0.16.0, and data is keyed by that spelling.
    return next(r for r in registry.releases if r == version)


def resolve_from(
    registry: Registry, text: str | None, origin: tuple[str, int | None] | None = None
) -> Version | None:
    """The version in use as given (``--from``, or ``from`` in a configuration file at
    ``origin``), spelled as the packs spell it (``0.16`` is ``0.16.0``); ``None`` when not
    given (the scan detects it).

    A final release between the oldest and the newest release with a pack must be one of
    those releases (``0.16.5`` was never published: a typo would silently move the window).
    Pre-releases, dev and local builds (``0.17.0rc1``, ``0.16.1.dev12+g1a2b3c``) and
    versions older than the oldest pack are taken as given.

    Raises:
        UsageError: malformed version, or a final release vLLM never published.
    """
    if text is None:
        return None
    where: tuple[str | None, int | None] = (None, None) if origin is None else origin
    name = "--from" if origin is None else "from:"
    if not text.strip():
        raise UsageError(f"{name} is empty (expected a vLLM release such as 0.28.0)", *where)
    version = parse_version(text, "--from") if origin is None else _config_version(text, where, "from")
    releases = registry.releases
    known = next((r for r in releases if r == version), None)
    if known is not None:
        return known
    built = version.is_prerelease or version.is_devrelease or version.local is not None
    if built or not releases or version < releases[0] or version > releases[-1]:
        return version
    below = [r for r in releases if r < version][-1:]
    above = [r for r in releases if r > version][:1]
    nearest = " and ".join(str(r) for r in (*below, *above))
    raise UsageError(f"{name} {text}: not a vLLM release (nearest releases: {nearest})", *where)


def _config_version(text: str, where: tuple[str | None, int | None], key: str = "to") -> Version:
    try:
        return parse_version(text, key)
    except UsageError as exc:
        raise UsageError(exc.message, *where) from None


def scan_output(
    options: ScanOptions, name: str, render: Callable[[Report], str], with_edits: bool = False
) -> tuple[str, int]:
    """``(render(report), report.exit_code)`` of :func:`run_scan`; ``name`` names the output
    format. When the whole-report cache holds this output of an unchanged run (same report
    key and gate, see :mod:`.warm`), it is given again without matching or rendering.

    Raises:
        UsageError: bad versions or paths.
        RulePackError: invalid rule packs.
    """
    cached = report_cache(options, with_edits) if usable(options.request, False) else None
    gate = repr(options.gate)
    if cached is not None and (hit := cached.load_output(name, gate)) is not None:
        code, text = hit
        return text, code
    report = _run_scan(options, None, None, with_edits, cached)
    text = render(report)
    if cached is not None:
        cached.save_output(name, gate, report.exit_code, text)
    return text, report.exit_code


def run_scan(
    options: ScanOptions,
    registry: Registry | None = None,
    facts_out: list[Fact] | None = None,
    with_edits: bool = False,
) -> Report:
    """Scan, match and report; when ``facts_out`` is given, every fact seen is appended to it
    (``fix`` needs the vllm pins and image tags that no rule matched). With ``with_edits``,
    each finding carries the replacements of its mechanical fix in its file as it is (for the
    reports that show them: SARIF, Markdown); the report always carries the crossed releases'
    notes, summaries and rules, so that reporters need nothing else.

    Raises:
        UsageError: bad versions or paths.
        RulePackError: invalid rule packs.
    """
    usable_here = registry is None and usable(options.request, facts_out is not None)
    cached = report_cache(options, with_edits) if usable_here else None
    return _run_scan(options, registry, facts_out, with_edits, cached)


def _run_scan(
    options: ScanOptions,
    registry: Registry | None,
    facts_out: list[Fact] | None,
    with_edits: bool,
    cached: ReportCache | None,
) -> Report:
    """:func:`run_scan`, answered from ``cached`` (the whole-report cache entry of this run,
    made only for a run that may use it: :func:`~.warm.usable`, no registry given) when it
    holds the report, else scanned and kept there."""
    request, window = options.request, options.window
    registry = registry or load_registry(options.rule_paths)
    target = resolve_target(registry, window.to_version, window.to_origin)
    option = resolve_from(registry, window.from_version, window.from_origin)
    if option is not None and option > target:
        where = (None, None) if window.from_origin is None else window.from_origin
        name = "--from" if window.from_origin is None else "from:"
        raise UsageError(
            f"{name} {window.from_version} is newer than the target {target}: a downgrade is not checked", *where
        )
    rules = list(registry.rules())
    pack_rules = [rule for _pack, rule in rules]
    if cached is not None and (hit := cached.load(pack_rules)) is not None:
        return completed(hit, options, release_info(registry, hit.releases))
    lines_of: dict[str, list[str] | None] = {}
    blocks_of: dict[str, list[tuple[int, int]]] = {}
    request = replace(request, response_fields=response_vocabulary(rules))
    includes = IncludeGraph()
    facts, skipped, count = scan_files(request, lines_of, blocks_of, includes)
    skipped = [*request.passed_over, *skipped]
    # an nvidia-smi capture or a pip freeze snapshot in the repository: the environment rules apply
    captured = any(f.kind in (FactKind.PLATFORM, FactKind.DISTRIBUTION) for f in facts)
    if request.environment is not None or request.host is not None or captured:
        from vllm_upgrade_check.knowledge.envrules import derived_rules, without_replaced_requirers
        from vllm_upgrade_check.sources.host.environment import environment_facts
        from vllm_upgrade_check.sources.host.gpus import host_facts

        if request.environment is not None:
            facts.extend(installed_hint(environment_facts(request.environment), request.environment))
        if request.host is not None:
            host = host_facts(request.host)
            facts.extend(installed_hint(host, request.environment) if request.environment is not None else host)
        for pack in registry.packs_for(target):
            if pack.wheel is not None:
                facts = without_replaced_requirers(facts, pack)
                authored = [rule for _pack, rule in rules]
                rules.extend((pack, rule) for rule in derived_rules(pack, authored=authored))
                break
    with paused_collector():  # what matching builds is kept: collections there free nothing
        default = detect_from(facts, request.environment)
        if option is not None:
            default = Assumption(option, VersionBasis.OPTION, "--from")
        known_ids = {r.id for _p, r in rules} | {UNKNOWN_FLAG_ID, ABBREVIATED_FLAG_ID, CUT_LAUNCH_ID, REQUIRES_DIST_ID, *SURFACE_IDS, *ADVISORY_IDS}
        check_prefixes(options.filters.select, options.filters.ignore_rules, known_ids)
        check_ignores(options.filters.ignores, known_ids)
        if facts:
            known = known_args()
            context = VersionContext(
                target,
                option,
                default,
                required_by(target),
                known.gone_by(target),
                known.env_gone_by(target),
                gone_subjects(rules, target),
            )
            facts, abbreviation_notes = with_expansions(facts, context, known)
        else:  # nothing to match: the target's surface and parser data are not loaded
            context = VersionContext(target, option, default)
            abbreviation_notes = []
        findings = with_target_severity(match_rules(without_stale_pins(rules, target), facts, context), facts, target)
        if facts:
            findings = with_readded(findings, known, target)  # a removal the target takes back: info
        arg_kinds = (MatchKind.ENGINE_ARG, MatchKind.CLI_FLAG)
        # The flags a loaded pack speaks of, as matched or as its replacement (an organisation
        # pack's own flags are known to it).
        rule_names = frozenset(r.match.name for _p, r in rules if r.match.kind in arg_kinds) | frozenset(
            r.fix.replacement.lstrip("-").replace("-", "_")
            for _p, r in rules
            if r.match.kind in arg_kinds and r.fix.action == FixAction.RENAME and r.fix.replacement
        )
        findings += requires_dist_findings(facts, context, findings)
        findings += surface_findings(facts, context, findings)
        findings += advisory_findings(facts, context, findings)
        findings += cut_launch_findings(facts, context)
        findings = one_per_change(
            distinct(sorted(findings + unknown_flag_findings(facts, context, rule_names=rule_names), key=sort_key))
        )
        if facts_out is not None:
            facts_out.extend(facts)
        scanned = {f.location.path for f in facts if f.location.path is not None}
        findings, filter_notes = apply_filters(
            findings,
            options.filters,
            request.paths,
            known_ids=known_ids,
            scanned=scanned,
            lines_of=lines_of,
            blocks_of=blocks_of,
        )
        start = default.version
        crossed = tuple(str(r) for r in registry.releases if (start is None or r > start) and r <= target)
        notes = []
        pins = sorted({str(v) for f in facts if (v := pinned_version(f)) is not None}, key=Version)
        if len(pins) > 1:
            notes.append(
                f"several vLLM versions in the scanned files: {', '.join(pins)}; each file is checked from its own"
            )
        notes.extend(unresolved_notes(facts))
        notes.extend(abbreviation_notes)
        notes.extend(vendor_notes(facts))
        if default.version is not None and default.version >= target:
            notes.append(
                f"the version in use ({default.version}, {default.source}) is not older than the target {target}: "
                f"no release is crossed; what vLLM {target} no longer accepts is still checked"
            )
        notes.extend(includes.notes())
        if includes.chains:
            findings = [
                replace(f, included_by=includes.chains[f.location.path]) if f.location.path in includes.chains else f
                for f in findings
            ]
        if with_edits:
            findings = with_fix_edits(findings, request.paths, target)
        reported = [f.location.path for f in findings if f.location.path is not None]
        reported += [s.path for s in skipped] + list(lines_of)
        report = Report(
            to_version=str(target),
            from_version=str(default.version) if default.version else None,
            from_basis=default.basis,
            from_source=default.source,
            releases=crossed,
            findings=tuple(findings),
            skipped=tuple(skipped),
            files_scanned=count,
            roots=tuple(str(p) for p in request.paths),
            notes=tuple(notes + filter_notes),
            release_info=release_info(registry, crossed),
            gate=options.gate,
            base=path_base(request.paths, reported),
            scanned=tuple(lines_of),
            rules=tuple((pack.release, rule) for pack, rule in rules),
        )
        if cached is not None:
            cached.save(report, pack_rules)
        return report


def response_vocabulary(rules: Sequence[tuple[object, Rule]]) -> frozenset[str]:
    """The response fields the loaded packs' ``response_field`` rules name, the fields
    their renames lead to (a fixed client still reads as one), and every chat completion
    response field some release returned and a later one no longer does (read from the
    wheels: :func:`~vllm_upgrade_check.knowledge.surface.surface_history`)."""
    out: set[str] = set(lost_response_fields())
    for _pack, rule in rules:
        if rule.match.kind == MatchKind.RESPONSE_FIELD:
            out.add(rule.match.name)
            if rule.fix.action == FixAction.RENAME and rule.fix.replacement:
                out.add(rule.fix.replacement)
    return frozenset(out)


def lost_response_fields() -> frozenset[str]:
    """The fields of a chat completion, completion or embedding response (their stream
    chunks included) some release returned that a later one does not."""
    from vllm_upgrade_check.knowledge.surface import surface_history

    out: set[str] = set()
    for kind in ("response_fields", "completion_fields", "embedding_fields"):
        fields = surface_history(kind)
        last = len(fields.releases) - 1
        out.update(n for n, runs in fields.runs.items() if any(b < last for _a, b in runs))
    return frozenset(out)


def release_info(registry: Registry, releases: Sequence[str]) -> tuple[ReleaseInfo, ...]:
    """What the packs of ``releases`` say of them: notes, summaries and rules."""
    out = []
    for release in releases:
        packs = registry.packs_for(Version(release))
        notes = next((p.notes_url for p in packs if p.notes_url), "") or ""
        summary = " ".join(p.summary.strip() for p in packs if p.summary)
        out.append(ReleaseInfo(release, notes, summary, tuple(r for p in packs for r in p.rules)))
    return tuple(out)


def with_fix_edits(findings: Sequence[Finding], roots: Sequence[Path], target: Version) -> list[Finding]:
    """``findings``, each with the replacements of its mechanical fix in its file as it is
    (:func:`~vllm_upgrade_check.fixing.edits.planned_edits`); none where there is no
    mechanical fix or the text is not where the scan found it."""
    from vllm_upgrade_check.fixing.edits import planned_edits
    from vllm_upgrade_check.fixing.interface import MECHANICAL, CannotFix

    texts: dict[str, str | None] = {}
    out = []
    for finding in findings:
        fix = finding.rule.fix
        rel = finding.location.path
        if rel is None or fix.action not in MECHANICAL or fix.applicability == Applicability.DISPLAY_ONLY:
            out.append(finding)
            continue
        if rel not in texts:
            try:
                texts[rel] = read_text(resolve_in_roots(list(roots), rel)).text
            except (OutsideRoots, OSError):
                texts[rel] = None
        text = texts[rel]
        try:
            edits = planned_edits(finding, text, target) if text is not None else []
        except (CannotFix, ValueError):
            edits = []
        out.append(replace(finding, edits=tuple(Replacement(e.start, e.end, e.new) for e in edits)))
    return out
