"""Orchestration: find files, run scanners, decide versions, match rules, build a report.

Callable from tests without the CLI. Nothing here prints or exits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.version import Version

from vllm_upgrade_check.checks import UNKNOWN_FLAG_ID, unknown_flag_findings
from vllm_upgrade_check.discovery import (  # noqa: F401
    MAX_FILE_BYTES,
    SKIP_DIRS,
    labelled,
    read_source,
    root_label,
    walk,
    wanted,
)
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.matcher import Assumption, VersionContext, match_rules, sort_key
from vllm_upgrade_check.model.facts import Fact, FactKind, Report, Skipped, VersionBasis
from vllm_upgrade_check.model.pack import MatchKind
from vllm_upgrade_check.registry import Registry, load_registry
from vllm_upgrade_check.scanners import Scanner, SourceFile, default_scanners
from vllm_upgrade_check.scanners.environment import Environment, environment_facts
from vllm_upgrade_check.scanners.host import HostInfo, host_facts
from vllm_upgrade_check.scanners.launch import is_vllm_image
from vllm_upgrade_check.scanners.vllm_config import referenced_config_paths, scan_config
from vllm_upgrade_check.suppress import Ignore, apply_filters, check_prefixes, suppression_lines
from vllm_upgrade_check.versions import parse_version, version_from_tag


@dataclass
class ScanOptions:
    """What to scan and against which versions.

    Attributes:
        paths: files or directories to scan (none: only the environment, if asked).
        to_version: target release text (``None``: the newest pack).
        from_version: the version in use (``None``: detect it).
        environment: the environment to check, or ``None`` to leave it out.
        host: the host's GPUs and driver (:func:`~vllm_upgrade_check.scanners.host.read_host`),
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
        scanners: the scanners to run (``None``: fresh :func:`default_scanners` for each scan);
            each is :meth:`~vllm_upgrade_check.scanners.base.Scanner.reset` before a scan.
        progress: called with each file's relative path as it is scanned (for a progress
            display); ``None`` for none.
        overlay: file contents to scan instead of the disk, by real path (``os.path.realpath``);
            ``fix --diff`` rescans its in-memory edits with it.
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


def discover(root: Path, exclude: Sequence[str] = ()) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, relative POSIX path)`` of every regular file under ``root`` that is not
    ignored (see :func:`vllm_upgrade_check.discovery.walk`)."""
    for path, rel in walk(root, exclude):
        yield Path(path), rel


def scan_files(
    options: ScanOptions, lines_out: dict[str, list[str] | None] | None = None
) -> tuple[list[Fact], list[Skipped], int]:
    """Run every scanner over every file under ``options.paths``.

    With several roots, each file's path starts with its root (:func:`root_label`).
    ``lines_out``, when given, receives each read file's suppression-comment lines
    (:func:`~vllm_upgrade_check.suppress.suppression_lines`), so no file is read twice.

    Returns:
        ``(facts, skipped, number of files read)``; each file's facts carry the vLLM version
        its own image tag or vllm pin names, when it names one.
    """
    facts: list[Fact] = []
    skipped: list[Skipped] = []
    count = 0
    scanners = options.scanners if options.scanners is not None else default_scanners()
    for scanner in scanners:
        scanner.reset()

    verdicts: dict[str, bool | None] = {}

    def keep_name(name: str) -> bool:
        verdicts[name] = verdict = wanted(name, scanners)
        return verdict is not False

    for root in options.paths:
        if not root.exists():
            raise UsageError(f"no such file or directory: {root}")
        root_facts_start = len(facts)
        files: dict[str, Path] = {}
        label = root_label(root, options.paths)
        for path, root_rel in walk(root, options.exclude, skipped, keep_name):
            rel = labelled(label, root, root_rel)
            if options.progress is not None:
                options.progress(rel)
            files[rel] = Path(path)
            verdict = verdicts.pop(rel.rsplit("/", 1)[-1], None)
            source = read_source(path, rel, options.max_file_bytes, scanners, verdict, options.overlay)
            if source is None:
                continue
            if isinstance(source, Skipped):
                skipped.append(source)
                continue
            takers = [s for s in scanners if s.accepts(source)]
            if not takers:
                continue
            count += 1
            if lines_out is not None:
                lines_out[rel] = suppression_lines(source.text)
            file_facts: list[Fact] = []
            for scanner in takers:
                try:
                    for item in scanner.scan(source):
                        if isinstance(item, Skipped):
                            skipped.append(item)
                        else:
                            file_facts.append(item)
                except RecursionError:
                    skipped.append(
                        Skipped(rel, "nested too deeply to parse", configures_vllm=source.mentions_vllm())
                    )
                except Exception as exc:  # a scanner bug must not crash the gate: fail closed, name the file
                    reason = f"{scanner.name} scanner failed: {type(exc).__name__}: {exc}".splitlines()[0]
                    skipped.append(Skipped(rel, reason, configures_vllm=True))
            facts.extend(_with_file_hint(file_facts, rel))
        facts.extend(_referenced_configs(facts[root_facts_start:], files, options, skipped, label))
    return facts, skipped, count


def _referenced_configs(
    facts: list[Fact],
    files: dict[str, Path],
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
        source = read_source(files[rel], rel, options.max_file_bytes, overlay=options.overlay)
        if not isinstance(source, SourceFile):
            continue
        for item in scan_config(source, referenced=True):
            if isinstance(item, Skipped):
                skipped.append(item)
            else:
                out.append(item)
    return out


def _pinned_version(fact: Fact) -> Version | None:
    if fact.kind == FactKind.IMAGE and is_vllm_image(fact.name) and fact.value:
        return version_from_tag(fact.value)
    if (
        fact.kind == FactKind.REQUIREMENT
        and fact.name == "vllm"
        and fact.value
        and fact.value.startswith("==")
    ):
        try:
            return Version(fact.value[2:].split(",")[0].strip().removesuffix(".*"))
        except ValueError:
            return None
    return None


def _with_file_hint(facts: list[Fact], rel: str) -> list[Fact]:
    pins = [(v, f) for f in facts if (v := _pinned_version(f)) is not None]
    if not pins:
        return facts
    version, fact = min(pins, key=lambda p: p[0])
    source = f"{rel}:{fact.location.line} {fact.raw}"
    return [f if f.version_hint else replace(f, version_hint=str(version), hint_source=source) for f in facts]


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
    pins = [(v, f) for f in facts if (v := _pinned_version(f)) is not None]
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
                f"unresolved: {fact.value} at {fact.location} ({fact.name}); the flags it holds were not checked"
            )
    return notes


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
        from vllm_upgrade_check.envrules import derived_rules, without_replaced_requirers

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
    context = VersionContext(target, option, default)
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
    pins = sorted({str(v) for f in facts if (v := _pinned_version(f)) is not None}, key=Version)
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
