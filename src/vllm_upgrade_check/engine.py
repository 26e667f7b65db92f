"""Orchestration: find files, run scanners, decide versions, match rules, build a report.

Callable from tests without the CLI. Nothing here prints or exits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.registry import Registry, load_registry
from vllm_upgrade_check.knowledge.requires import release_requirements
from vllm_upgrade_check.knowledge.versions import parse_version
from vllm_upgrade_check.matching.checks import UNKNOWN_FLAG_ID, unknown_flag_findings
from vllm_upgrade_check.matching.matcher import Assumption, VersionContext, match_rules, sort_key
from vllm_upgrade_check.matching.suppress import Ignore, apply_filters, check_prefixes
from vllm_upgrade_check.model.environment import Environment, HostInfo
from vllm_upgrade_check.model.facts import UNRESOLVED_NOTE, Fact, FactKind, Skipped
from vllm_upgrade_check.model.findings import Report, VersionBasis
from vllm_upgrade_check.model.pack import MatchKind
from vllm_upgrade_check.sources.cache import FileResult, ScanCache, code_salt, file_stamp
from vllm_upgrade_check.sources.discovery import (  # noqa: F401
    MAX_FILE_BYTES,
    SKIP_DIRS,
    PassedOver,
    covered_roots,
    labelled,
    read_source,
    root_label,
    walk,
    wanted,
)
from vllm_upgrade_check.sources.dispatch import Dispatcher, Outcome, Pending, hinted, pinned_version
from vllm_upgrade_check.sources.host.environment import environment_facts
from vllm_upgrade_check.sources.host.gpus import host_facts
from vllm_upgrade_check.sources.scanners import Scanner, SourceFile, default_scanners
from vllm_upgrade_check.sources.scanners.vllm_config import referenced_config_paths, scan_config


@dataclass
class ScanOptions:
    """What to scan and against which versions.

    Attributes:
        paths: files or directories to scan (none: only the environment, if asked).
        to_version: target release text (``None``: the newest pack).
        from_version: the version in use (``None``: detect it).
        environment: the environment to check, or ``None`` to leave it out.
        host: the host's GPUs and driver (:func:`~vllm_upgrade_check.sources.host.gpus.read_host`),
            or ``None`` to leave them out.
        rule_paths: extra rule pack files/directories.
        exclude: gitignore-style patterns of paths to leave out.
        max_file_bytes: size above which a file is skipped.
        baseline: a baseline file (``baseline create``): its findings are not reported.
        ignores: configured ignores (rule id, path glob, reason, expiry).
        inline_suppressions: honour ``# vllm-upgrade-check: ignore[ID]`` comments.
        select: report only rules whose id starts with one of these (case-insensitive);
            empty = every rule.
        ignore_rules: never report rules whose id starts with one of these.
        scanners: the scanners to run (``None``: fresh :func:`default_scanners` for each scan;
            custom scanners turn the cache off).
        progress: called with each file's relative path as it is scanned (for a progress
            display); ``None`` for none.
        overlay: file contents to scan instead of the disk, by real path (``os.path.realpath``);
            ``fix --diff`` rescans its in-memory edits with it (the cache is then off).
        cache_dir: where per-file results are cached (:mod:`vllm_upgrade_check.sources.cache`);
            ``None``: no cache.
        jobs: worker processes that parse files (``None`` or ``0``: automatic, see
            :func:`~vllm_upgrade_check.sources.dispatch.worker_count`; ``1``: none).
    """

    paths: Sequence[Path] = ()
    to_version: str | None = None
    from_version: str | None = None
    environment: Environment | None = None
    host: HostInfo | None = None
    rule_paths: Sequence[Path] = ()
    exclude: Sequence[str] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    scanners: list[Scanner] | None = None
    baseline: Path | None = None
    ignores: Sequence[Ignore] = ()
    inline_suppressions: bool = True
    select: Sequence[str] = ()
    ignore_rules: Sequence[str] = ()
    progress: Callable[[str], None] | None = None
    overlay: Mapping[str, bytes] | None = None
    cache_dir: Path | None = None
    jobs: int | None = None


def discover(root: Path, exclude: Sequence[str] = ()) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, relative POSIX path)`` of every regular file under ``root`` that is not
    ignored (see :func:`vllm_upgrade_check.sources.discovery.walk`)."""
    for path, rel in walk(root, exclude):
        yield Path(path), rel


def scan_files(
    options: ScanOptions, lines_out: dict[str, list[str] | None] | None = None
) -> tuple[list[Fact], list[Skipped], int]:
    """Run every scanner over every file under ``options.paths``.

    With several roots, each file's path starts with its root (:func:`root_label`).
    ``lines_out``, when given, receives each read file's suppression-comment lines
    (:func:`~vllm_upgrade_check.matching.suppress.suppression_lines`), so no file is read twice.
    With ``options.cache_dir``, unchanged files reuse their cached results (:mod:`.cache`).

    Returns:
        ``(facts, skipped, number of files read)``; each file's facts carry the vLLM version
        its own image tag or vllm pin names, when it names one.
    """
    facts: list[Fact] = []
    skipped: list[Skipped] = []
    count = 0
    scanners = options.scanners if options.scanners is not None else default_scanners()
    verdicts: dict[str, bool | None] = {}

    def keep_name(name: str) -> bool:
        verdicts[name] = verdict = wanted(name, scanners)
        return verdict is not False

    for root in options.paths:
        if not root.exists():
            raise UsageError(f"no such file or directory: {root}")
    inside = covered_roots(options.paths)
    for index, root in enumerate(options.paths):
        label = root_label(root, options.paths)
        if index in inside:
            cover = options.paths[inside[index]]
            same = os.path.realpath(root) == os.path.realpath(cover)
            where = "the same as" if same else "inside"
            reason = f"{where} another scanned root ({cover}): its files are scanned once, from there"
            skipped.append(Skipped(str(root), reason))
            continue
        passed_over: list[PassedOver] = []
        files, results = _scan_root(root, label, options, scanners, skipped, keep_name, verdicts, passed_over)
        root_facts: list[Fact] = []
        for rel, result in results:
            skipped.extend(result.skipped)
            if result.taken:
                count += 1
                root_facts.extend(result.facts)
                if lines_out is not None:
                    lines_out[rel] = result.lines
        found = [result for _rel, result in results]
        root_facts.extend(_linked_facts(found))
        others = {labelled(label, root, p.rel): p for p in passed_over}
        root_facts.extend(_referenced_files(found, files, options, skipped, scanners, others))
        root_facts.extend(_referenced_configs(root_facts, files, options, skipped, label))
        facts.extend(root_facts)
    return facts, skipped, count


def _scan_root(
    root: Path,
    label: str,
    options: ScanOptions,
    scanners: Sequence[Scanner],
    skipped: list[Skipped],
    keep_name: Callable[[str], bool],
    verdicts: dict[str, bool | None],
    passed_over: list[PassedOver] | None = None,
) -> tuple[dict[str, str], list[tuple[str, FileResult]]]:
    """Walk one root and get each file's result: from the cache by stamp, else from a
    :class:`~vllm_upgrade_check.sources.dispatch.Dispatcher` while the walk goes on.

    Returns:
        ``(report path -> disk path of every walked file, (report path, result) of each file
        a scanner wants, in walk order)``.
    """
    files: dict[str, str] = {}
    answered: dict[str, FileResult] = {}
    cache = _open_cache(options, root, scanners, label)
    with Dispatcher(scanners, options, cache) as dispatcher:
        for path, root_rel in walk(root, options.exclude, skipped, keep_name, passed_over):
            rel = labelled(label, root, root_rel)
            files[rel] = path
            verdict = verdicts.pop(rel.rsplit("/", 1)[-1], None)
            stamp = file_stamp(path) if cache is not None else None
            if cache is not None and stamp is not None and (hit := cache.by_stamp(rel, stamp)) is not None:
                answered[rel] = hit
                if options.progress is not None:
                    options.progress(rel)
            else:
                dispatcher.submit(Pending(path, rel, verdict, stamp))
                _settle(dispatcher.ready(), cache, answered, options.progress)
        for done in dispatcher.finish():
            _settle(done, cache, answered, options.progress)
    if cache is not None:
        cache.save()
    return files, [(rel, answered[rel]) for rel in files if rel in answered]


def _settle(
    done: list[tuple[Pending, Outcome]],
    cache: ScanCache | None,
    answered: dict[str, FileResult],
    progress: Callable[[str], None] | None,
) -> None:
    """Record scanned files' outcomes: in the cache, in ``answered``, on the progress display."""
    for item, outcome in done:
        result = outcome.result
        if cache is not None and item.stamp is not None and outcome.storable:
            if outcome.cached and outcome.digest is not None:
                cache.refresh(item.rel, item.stamp, outcome.digest)
            else:
                cache.store(item.rel, item.stamp, outcome.digest, result or FileResult())
        if result is not None:
            answered[item.rel] = result
        if progress is not None:
            progress(item.rel)


def _open_cache(options: ScanOptions, root: Path, scanners: Sequence[Scanner], label: str) -> ScanCache | None:
    """The cache of ``root``, when caching is on and results can only depend on the files
    (built-in scanners, no in-memory overlay)."""
    if options.cache_dir is None or options.scanners is not None or options.overlay:
        return None
    names = ",".join(s.name for s in scanners)
    return ScanCache(options.cache_dir, root, f"{code_salt()}|{options.max_file_bytes}|{names}", label)


def _linked_facts(results: Sequence[FileResult]) -> list[Fact]:
    """The :class:`Conditional` facts some file refers to, once each; those without a
    version hint of their own take the referring file's."""
    referenced: dict[str, tuple[str, str] | None] = {}
    for result in results:
        for key in result.references:
            if referenced.get(key) is None:
                referenced[key] = result.hint
    out: list[Fact] = []
    for result in results:
        for conditional in result.conditionals:
            if conditional.key in referenced:
                hint = referenced[conditional.key]
                out.extend(hinted(list(conditional.facts), hint) if hint else conditional.facts)
    return out


def _referenced_files(
    results: Sequence[FileResult],
    files: dict[str, str],
    options: ScanOptions,
    skipped: list[Skipped],
    scanners: Sequence[Scanner],
    passed_over: Mapping[str, PassedOver] | None = None,
) -> list[Fact]:
    """Facts of the files :class:`FileReference` items name (matched by the scanner that
    asked), each read once per scanner; they take the referring file's version hint.
    ``passed_over`` (report path -> file) holds the files the walk left out by name (a
    ``.conf`` an ``EnvironmentFile=`` names); those the ignore rules leave out are not read."""
    by_name = {s.name: s for s in scanners}
    done: set[tuple[str, str]] = set()
    out: list[Fact] = []
    for result in results:
        for ref in result.file_references:
            scanner = by_name.get(ref.scanner)
            if scanner is None:
                continue
            candidates: list[tuple[str, str, PassedOver | None]] = [(r, p, None) for r, p in files.items()]
            candidates += [(r, p.path, p) for r, p in (passed_over or {}).items() if r not in files]
            for rel, path, aside in candidates:
                if (rel, scanner.name) in done or not scanner.referenced_file_matches(rel, ref.path):
                    continue
                if aside is not None and aside.ignored():  # ignore rules apply once a file is named
                    continue
                done.add((rel, scanner.name))
                found = _read_referenced(path, rel, options, skipped, scanner.read_referenced)
                out.extend(hinted(found, result.hint) if result.hint else found)
    return out


def _read_referenced(
    path: str,
    rel: str,
    options: ScanOptions,
    skipped: list[Skipped],
    reader: Callable[[SourceFile], Iterable[Fact | Skipped]],
) -> list[Fact]:
    """The facts ``reader`` finds in a file another file named (its skipped records go to
    ``skipped``); none when the file cannot be read."""
    source = read_source(path, rel, options.max_file_bytes, overlay=options.overlay)
    if not isinstance(source, SourceFile):
        return []
    found: list[Fact] = []
    for item in reader(source):
        if isinstance(item, Skipped):
            skipped.append(item)
        else:
            found.append(item)
    return found


def _referenced_configs(
    facts: list[Fact],
    files: dict[str, str],
    options: ScanOptions,
    skipped: list[Skipped],
    label: str = "",
) -> list[Fact]:
    """Facts of ``--config FILE`` YAML files named by scanned launches and not already read
    as vLLM config files (their content alone did not say so)."""
    done = {f.location.path for f in facts if f.kind == FactKind.ARG and f.origin == "config"}
    out: list[Fact] = []
    for rel, _fact in referenced_config_paths(facts):
        if label and rel not in files and not rel.startswith(label + "/"):
            rel = f"{label}/{rel}"  # relative to the root: the root's prefix was left off
        if rel in done or rel not in files:
            continue
        done.add(rel)
        out.extend(_read_referenced(files[rel], rel, options, skipped, lambda s: scan_config(s, referenced=True)))
    return out


def detect_from(facts: Sequence[Fact], env: Environment | None) -> Assumption:
    """The run-wide "from" version: the installed vllm, else the oldest vllm pin or vLLM image
    tag in the scanned files, else unknown."""
    if env is not None and env.vllm:
        try:
            return Assumption(
                Version(env.vllm), VersionBasis.ENVIRONMENT, f"installed vllm {env.vllm} ({env.source})"
            )
        except ValueError:
            pass
    pins = [(v, f) for f in facts if (v := pinned_version(f)) is not None]
    if pins:
        version, fact = min(pins, key=lambda p: p[0])
        return Assumption(version, VersionBasis.REPOSITORY, f"{fact.location} {fact.raw}")
    return Assumption(
        None, VersionBasis.UNKNOWN, "no vLLM version found: every release up to the target is checked"
    )


def unresolved_notes(facts: Sequence[Fact]) -> list[str]:
    """One note per vLLM launch holding words the repository does not resolve.

    ``unresolved: $VLLM_ARGS at run.sh:4 (vllm serve); the flags it holds were not checked``.
    """
    notes = []
    for fact in facts:
        if fact.kind == FactKind.LAUNCH and not fact.resolved and fact.value:
            notes.append(
                f"{UNRESOLVED_NOTE}{fact.value} at {fact.location} ({fact.name}); the flags it holds were not checked"
            )
    return notes


def required_by(target: Version) -> frozenset[str] | None:
    """Canonical names of the distributions release ``target`` requires (its base
    ``Requires-Dist``), or ``None`` when the bundled data does not know the release."""
    found = release_requirements(str(target))
    return None if found is None else frozenset(r.name for r in found if not r.extra)


def resolve_target(registry: Registry, text: str | None) -> Version:
    """The target release: ``text`` if it is a release with a pack, else the newest pack.

    Raises:
        UsageError: malformed version or a release no pack knows.
    """
    if text is None:
        return registry.newest
    if not text.strip():
        raise UsageError("--to is empty (expected a vLLM release such as 0.28.0)")
    version = parse_version(text, "--to")
    if version not in registry.releases:
        releases = registry.releases
        if releases and version < releases[0]:
            raise UsageError(f"--to {text}: older than the oldest release with a pack ({releases[0]})")
        known = ", ".join(str(v) for v in releases[-5:])
        raise UsageError(f"--to {text}: unknown vLLM release (newest known: {known})")
    return version


def run_scan(
    options: ScanOptions, registry: Registry | None = None, facts_out: list[Fact] | None = None
) -> Report:
    """Scan, match and report; when ``facts_out`` is given, every fact seen is appended to it
    (``fix`` needs the vllm pins and image tags that no rule matched).

    Raises:
        UsageError: bad versions or paths.
        RulePackError: invalid rule packs.
    """
    registry = registry or load_registry(options.rule_paths)
    target = resolve_target(registry, options.to_version)
    option = parse_version(options.from_version, "--from") if options.from_version is not None else None
    if option is not None and option >= target:
        raise UsageError(f"--from {options.from_version} is not older than the target {target}")
    lines_of: dict[str, list[str] | None] = {}
    facts, skipped, count = scan_files(options, lines_of)
    rules = list(registry.rules())
    if options.environment is not None or options.host is not None:
        from vllm_upgrade_check.knowledge.envrules import derived_rules, without_replaced_requirers

        if options.environment is not None:
            facts.extend(environment_facts(options.environment))
        if options.host is not None:
            facts.extend(host_facts(options.host))
        for pack in registry.packs_for(target):
            if pack.wheel is not None:
                facts = without_replaced_requirers(facts, pack)
                authored = [rule for _pack, rule in rules]
                rules.extend((pack, rule) for rule in derived_rules(pack, authored=authored))
                break
    default = detect_from(facts, options.environment)
    if option is not None:
        default = Assumption(option, VersionBasis.OPTION, "--from")
    known_ids = {r.id for _p, r in rules} | {UNKNOWN_FLAG_ID}
    check_prefixes(options.select, options.ignore_rules, known_ids)
    context = VersionContext(target, option, default, required_by(target))
    findings = match_rules(rules, facts, context)
    arg_kinds = (MatchKind.ENGINE_ARG, MatchKind.CLI_FLAG)
    rule_names = frozenset(r.match.name for _p, r in rules if r.match.kind in arg_kinds)
    findings = sorted(findings + unknown_flag_findings(facts, context, rule_names=rule_names), key=sort_key)
    if facts_out is not None:
        facts_out.extend(facts)
    scanned = {f.location.path for f in facts if f.location.path is not None}
    findings, filter_notes = apply_filters(
        findings, options, known_ids=known_ids, scanned=scanned, lines_of=lines_of
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
    if option is None and default.version is not None and default.version >= target:
        notes.append(
            f"the version in use ({default.version}, {default.source}) is not older than the target {target}: "
            "nothing to upgrade from there; pass --from to check another window"
        )
    return Report(
        to_version=str(target),
        from_version=str(default.version) if default.version else None,
        from_basis=default.basis,
        from_source=default.source,
        releases=crossed,
        findings=tuple(findings),
        skipped=tuple(skipped),
        files_scanned=count,
        roots=tuple(str(p) for p in options.paths),
        notes=tuple(notes + filter_notes),
    )
