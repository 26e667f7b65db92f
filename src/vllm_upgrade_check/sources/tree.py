"""Scanning the files of a tree: walk, read each file once, scan it (here or in worker
processes, :mod:`.dispatch`), answer unchanged files from the cache (:mod:`.cache`), then join
what links files (a ConfigMap and the ``envFrom`` naming it, a systemd ``EnvironmentFile=``,
a ``--config`` YAML a launch names).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped, Spans
from vllm_upgrade_check.model.options import ScanRequest
from vllm_upgrade_check.parsing.textfiles import has_text_bom
from vllm_upgrade_check.sources.cache import FileResult, ScanCache, code_salt, file_stamp
from vllm_upgrade_check.sources.discovery import (
    PassedOver,
    covered_roots,
    labelled,
    read_source,
    root_label,
    walk,
    wanted,
)
from vllm_upgrade_check.sources.dispatch import Dispatcher, Outcome, Pending, hinted
from vllm_upgrade_check.sources.includes import IncludeGraph
from vllm_upgrade_check.sources.scanners import LazyScanners, Scanner, SourceFile
from vllm_upgrade_check.sources.scanners.base import (
    APPENDED,
    INDEXED_NOTE,
    REMOVED,
    Conditional,
    FileReference,
    appended_launch,
    removed_words,
)
from vllm_upgrade_check.sources.sniff import has_marker, is_prose, never_sniffed, never_text


def discover(root: Path, exclude: Sequence[str] = ()) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, relative POSIX path)`` of every regular file under ``root`` that is not
    ignored (see :func:`vllm_upgrade_check.sources.discovery.walk`)."""
    for path, rel in walk(root, exclude):
        yield Path(path), rel


def scan_files(
    request: ScanRequest,
    lines_out: dict[str, list[str] | None] | None = None,
    blocks_out: dict[str, list[tuple[int, int]]] | None = None,
    includes_out: IncludeGraph | None = None,
) -> tuple[list[Fact], list[Skipped], int]:
    """Run every scanner over every file under ``request.paths``.

    With several roots, each file's path starts with its root (:func:`root_label`).
    ``lines_out``, when given, receives each read file's suppression-comment lines
    (:func:`~vllm_upgrade_check.sources.inline.suppression_lines`), so no file is read twice;
    ``blocks_out`` the YAML keys below a suppression comment with their values' lines
    (``FileResult.blocks``), for the files that have any.
    With ``request.cache_dir``, unchanged files reuse their cached results (:mod:`.cache`).
    ``includes_out``, when given, receives the requirements includes read, settled
    (:class:`~.includes.IncludeGraph`: each included file's chain, the cycles).

    Returns:
        ``(facts, skipped, number of files read)``; each file's facts carry the vLLM version
        its own image tag or vllm pin names, when it names one.
    """
    facts: list[Fact] = []
    skipped: list[Skipped] = []
    count = 0
    scanners = request.scanners if request.scanners is not None else LazyScanners(request.response_fields)
    verdicts: dict[str, bool | None] = {}

    def keep_name(name: str) -> bool:
        verdicts[name] = wanted(name, scanners)
        return verdicts[name] is not False or not never_sniffed(name)  # else content decides (:mod:`.sniff`)

    for root in request.paths:
        if not root.exists():
            from vllm_upgrade_check.parsing.textfiles import missing_reason

            raise UsageError(f"{missing_reason(root)}: {root}")
        if not (root.is_dir() or root.is_file()):
            # a FIFO, socket or device: reading it could wait forever, or never end
            raise UsageError(f"not a regular file or directory: {root}")
    inside = covered_roots(request.paths)
    for index, root in enumerate(request.paths):
        label = root_label(root, request.paths)
        if index in inside:
            cover = request.paths[inside[index]]
            same = os.path.realpath(root) == os.path.realpath(cover)
            where = "the same as" if same else "inside"
            reason = f"{where} another scanned root ({cover}): its files are scanned once, from there"
            skipped.append(Skipped(str(root), reason))
            continue
        passed_over: list[PassedOver] = []
        files, results = _scan_root(root, label, request, scanners, skipped, keep_name, verdicts, passed_over)
        if root.is_file() and not any(result.taken or result.skipped for _rel, result in results):
            raise _unread_named_file(root, request.max_file_bytes)
        root_facts: list[Fact] = []
        others = {labelled(label, root, p.rel): p for p in passed_over}
        again = _read_again(results, files, request, scanners, others)
        for rel, result in results:
            skipped.extend(result.skipped)
            if result.taken:
                count += 1
                if rel in again:
                    # the scanner's first reading (facts of its labels, at this file) is replaced
                    name, new, _linked = again[rel]
                    labels = {name} | {f.scanner for f in new}
                    root_facts.extend(f for f in result.facts if f.scanner not in labels or f.location.path != rel)
                    root_facts.extend(new)
                else:
                    root_facts.extend(result.facts)
                if lines_out is not None:
                    lines_out[rel] = result.lines
                if blocks_out is not None and result.blocks:
                    blocks_out[rel] = result.blocks
        found = [replace(r, conditionals=[*r.conditionals, *again[rel][2]]) if rel in again else r for rel, r in results]
        linked, extended, pinned = _linked_facts(found)
        if pinned:
            root_facts = [_kept_in_place(f, pinned) for f in root_facts]
            linked = [_kept_in_place(f, pinned) for f in linked]
        if extended:
            root_facts = [f for f in root_facts if f.kind != FactKind.LAUNCH or (f.location.path, f.group) not in extended]
        root_facts.extend(linked)
        own = frozenset((f.location.path, f.scanner) for f in root_facts if f.location.path is not None)
        graph = includes_out if includes_out is not None else IncludeGraph()
        root_facts.extend(_referenced_files(found, files, request, skipped, scanners, others, own, graph))
        root_facts.extend(_referenced_configs(root_facts, files, request, skipped, label))
        if root_facts:
            from vllm_upgrade_check.sources.wrappers import (
                with_flag_lists_read,
                without_unlaunched_tables,
                wrapper_facts,
            )

            wrapped = wrapper_facts(root_facts)
            root_facts = [*with_flag_lists_read(root_facts, wrapped), *wrapped]
            root_facts = without_unlaunched_tables(root_facts)
        facts.extend(root_facts)
    if includes_out is not None:
        includes_out.settle()
    return facts, skipped, count


def _unread_named_file(root: Path, max_bytes: int) -> UsageError:
    """The error for a file the user named that nothing reads (never dropped in silence):
    ``PATH: not a file vllm-upgrade-check reads (why)``."""
    name = root.name
    try:
        size = root.stat().st_size
        with open(root, "rb") as handle:
            data = handle.read(min(size, max_bytes) + 1)
    except OSError as exc:
        why = f"cannot read it: {exc.strerror or exc}"
    else:
        if never_text(name) or (b"\x00" in data[:8192] and not has_text_bom(data)):
            why = "a binary file"
        elif size > max_bytes:
            why = f"larger than the size limit of {max_bytes} bytes"
        elif is_prose(name):
            why = "documentation is prose, not configuration"
        elif not has_marker(data):
            why = "it names neither vLLM nor a distribution vLLM requires, and its name is no file kind the scanners read"
        else:
            why = "it mentions vLLM, but as the source of another language or data, which no scanner reads"
    return UsageError(f"not a file vllm-upgrade-check reads ({why})", str(root))


def _scan_root(
    root: Path,
    label: str,
    request: ScanRequest,
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
    cache = _open_cache(request, root, scanners, label)
    with Dispatcher(scanners, request, cache) as dispatcher:
        for path, root_rel in walk(root, request.exclude, skipped, keep_name, passed_over):
            rel = labelled(label, root, root_rel)
            files[rel] = path
            verdict = verdicts.pop(rel.rsplit("/", 1)[-1], None)
            stamp = file_stamp(path) if cache is not None else None
            if cache is not None and stamp is not None and (hit := cache.by_stamp(rel, stamp)) is not None:
                answered[rel] = hit
                if request.progress is not None:
                    request.progress(rel)
            else:
                dispatcher.submit(Pending(path, rel, verdict, stamp))
                _settle(dispatcher.ready(), cache, answered, request.progress)
        for done in dispatcher.finish():
            _settle(done, cache, answered, request.progress)
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


def _open_cache(request: ScanRequest, root: Path, scanners: Sequence[Scanner], label: str) -> ScanCache | None:
    """The cache of ``root``, when caching is on and results can only depend on the files
    (built-in scanners, no in-memory overlay)."""
    if request.cache_dir is None or request.scanners is not None or request.overlay:
        return None
    names = ",".join(s.name for s in scanners)
    fields = ",".join(sorted(request.response_fields or ()))  # the Python scanner's vocabulary
    return ScanCache(request.cache_dir, root, f"{code_salt()}|{request.max_file_bytes}|{names}|{fields}", label)


def _linked_facts(
    results: Sequence[FileResult],
) -> tuple[list[Fact], set[tuple[str | None, str | None]], dict[tuple[str | None, str | None], str]]:
    """The :class:`Conditional` facts some file refers to, once each; those without a
    version hint of their own take the referring file's. A conditional's
    :data:`~.scanners.base.APPENDED` launch is merged into the launch the reference names
    (:func:`~.scanners.base.appended_launch`), and so are those of the conditionals it makes
    count in turn (a patch of a KServe predictor's args); without one it is dropped. The
    :data:`~.scanners.base.REMOVED` markers among them are no facts: their arg names are
    taken out of the merged launch they name, their notes go to the base args they stand at.

    Returns:
        ``(facts, (path, group) of each template launch some words were appended to, and of
        each launch the merged one replaces)``: their own launch facts stand for no whole
        launch (a launch that is one by itself, a Deployment's, stays one); and ``(path,
        group) -> note`` of each launch whose args a patch addresses by index
        (:data:`~.scanners.base.INDEXED_NOTE`): their words keep their positions; and
        ``(path, "@line:column") -> note`` of each base arg an overlay removes.
    """
    referenced: dict[str, tuple[str, str] | None] = {}
    bases: dict[str, Fact] = {}
    templates = {key for result in results for key in result.templates}  # no launch by themselves
    for result in results:
        first_launch: dict[str | None, Fact] | None = None  # group -> its first launch fact, made once
        for key in result.references:
            if referenced.get(key) is None:
                referenced[key] = result.hint
            group = result.launches.get(key)
            if group and key not in bases:
                if first_launch is None:
                    first_launch = {}
                    for fact in result.facts:
                        if fact.kind == FactKind.LAUNCH:
                            first_launch.setdefault(fact.group, fact)
                base = first_launch.get(group)
                if base is not None:
                    bases[key] = base
    base_key: dict[str, str] = {}  # a key whose base came through another: the key it came from
    grew = True
    while grew:  # a conditional that counts may make others count (its `refers`), with its base
        grew = False
        for result in results:
            for conditional in result.conditionals:
                if conditional.key not in referenced:
                    continue
                base = bases.get(conditional.key)
                for key in conditional.refers:
                    if key not in referenced:
                        referenced[key], grew = referenced[conditional.key], True
                    if base is not None and key not in bases:
                        bases[key], grew = base, True
                        base_key[key] = base_key.get(conditional.key, conditional.key)
    out: list[Fact] = []
    extended: set[tuple[str | None, str | None]] = set()
    counted = [c for result in results for c in result.conditionals if c.key in referenced]
    dropped, pinned = removed_words(counted)  # a base word an overlay removes: its own note
    for conditional in counted:
        hint = referenced[conditional.key]
        facts = hinted(list(conditional.facts), hint) if hint else list(conditional.facts)
        base = bases.get(conditional.key)
        for fact in facts:
            if fact.kind == FactKind.LAUNCH and fact.name == REMOVED:
                continue
            if fact.kind != FactKind.LAUNCH or fact.name != APPENDED:
                out.append(fact)
            elif base is not None:
                gone = dropped.get((fact.location.path, fact.group), frozenset())
                out.append(appended_launch(base, fact, dropped=gone))
                if fact.spans is not None and fact.spans.note.startswith(INDEXED_NOTE):
                    pinned[(base.location.path, base.group)] = fact.spans.note
                if conditional.key in templates or base_key.get(conditional.key) in templates:
                    extended.add((base.location.path, base.group))
                extended.add((fact.location.path, fact.group))  # its own reading, if any
    return out, extended, pinned


def _kept_in_place(fact: Fact, pinned: Mapping[tuple[str | None, str | None], str]) -> Fact:
    """``fact`` without its cut when it is an arg of a launch in ``pinned`` (``(path, group)
    -> note``: a patch addresses that launch's args by index; ``(path, "@line:column")``: an
    overlay removes this very arg, :func:`~.scanners.base.removed_words`), so that a fix
    leaves its removal to a person with the note."""
    loc = fact.location
    note = pinned.get((loc.path, f"@{loc.line}:{loc.column}")) if fact.kind == FactKind.ARG else None
    if note is not None:
        return replace(fact, spans=replace(fact.spans or Spans(), cut=None, note=note))
    note = pinned.get((fact.location.path, fact.group))
    if note is None or fact.kind != FactKind.ARG or fact.spans is None or fact.spans.cut is None:
        return fact
    return replace(fact, spans=replace(fact.spans, cut=None, note=note))


def _referenced_files(
    results: Sequence[FileResult],
    files: dict[str, str],
    request: ScanRequest,
    skipped: list[Skipped],
    scanners: Sequence[Scanner],
    passed_over: Mapping[str, PassedOver] | None = None,
    own: frozenset[tuple[str, str]] = frozenset(),
    graph: IncludeGraph | None = None,
) -> list[Fact]:
    """Facts of the files :class:`FileReference` items name (matched by the scanner that
    asked), each read once per scanner, and of the files those name in turn (a chain of
    requirements ``-r`` includes; a cycle ends where a file comes round again); they take the
    referring file's version hint. ``passed_over`` (report path -> file) holds the files the
    walk left out by name; those the ignore rules leave out are not read. ``own`` holds
    ``(path, scanner)`` of files that scanner read on their own already (not read twice).
    A reference that names its referrer (``by``) and matches no file is reported skipped;
    ``graph`` receives every include met (:class:`~.includes.IncludeGraph`)."""
    if not any(result.file_references for result in results):
        return []
    by_name = {s.name: s for s in scanners}
    done: set[tuple[str, str]] = set()
    out: list[Fact] = []
    queue: list[tuple[FileReference, tuple[str, str] | None]] = [
        (ref, result.hint) for result in results for ref in result.file_references
    ]
    if graph is not None:
        graph.add(ref for ref, _hint in queue)
    while queue:
        ref, hint = queue.pop(0)
        scanner = by_name.get(ref.scanner)
        if scanner is None:
            continue
        if ref.by and ref.path in files:  # named by its path in the tree: no search
            candidates: list[tuple[str, str, PassedOver | None]] = [(ref.path, files[ref.path], None)]
        else:
            candidates = [(r, p, None) for r, p in files.items()]
            candidates += [(r, p.path, p) for r, p in (passed_over or {}).items() if r not in files]
        matched = False
        for rel, path, aside in candidates:
            if not scanner.referenced_file_matches(rel, ref.path):
                continue
            if aside is not None and aside.ignored():  # ignore rules apply once a file is named
                continue
            matched = True
            if (rel, scanner.name) in done:
                continue
            done.add((rel, scanner.name))
            if (rel, scanner.name) in own:
                continue
            found, further = _read_referenced(path, rel, request, skipped, scanner.read_referenced)
            out.extend(hinted(found, hint) if hint else found)
            queue.extend((next_ref, hint) for next_ref in further)
            if graph is not None:
                graph.add(further)
        if not matched and ref.by:
            skipped.append(
                Skipped(
                    ref.by, f"names {ref.path}, which is not a file of the scanned tree (missing or ignored)"
                )
            )
    return out


def _read_again(
    results: Sequence[tuple[str, FileResult]],
    files: dict[str, str],
    request: ScanRequest,
    scanners: Sequence[Scanner],
    passed_over: Mapping[str, PassedOver],
) -> dict[str, tuple[str, list[Fact], list[Conditional]]]:
    """Report path -> ``(scanner name, facts, conditionals)`` of the files a scanner reads
    again knowing the files they name (:meth:`~.scanners.base.Scanner.with_referenced`); these
    facts replace that scanner's first reading, and the conditionals join the file's own. Read on every run: the named files may change alone. The
    files they may name are every walked file and those left out by name only (not by the
    ignore rules)."""
    if not results:
        return {}
    by_name = {s.name: s for s in scanners}
    out: dict[str, tuple[str, list[Fact], list[Conditional]]] = {}
    paths: dict[str, str] = {}

    def read(rel: str) -> SourceFile | None:
        if rel not in paths:
            return None
        source = read_source(paths[rel], rel, request.max_file_bytes, overlay=request.overlay)
        return source if isinstance(source, SourceFile) else None

    for rel, result in results:
        for name in dict.fromkeys(ref.scanner for ref in result.file_references):
            scanner = by_name.get(name)
            if scanner is None:
                continue
            if not paths:
                paths.update({r: p.path for r, p in passed_over.items() if r not in files and not p.ignored()})
                paths.update(files)
            source = read(rel)
            if source is None:
                continue
            found = scanner.with_referenced(source, sorted(paths), read)
            if found is not None:
                facts = [f for f in found if isinstance(f, Fact)]
                linked = [c for c in found if isinstance(c, Conditional)]
                out[rel] = (name, hinted(facts, result.hint) if result.hint else facts, linked)
    return out


def _read_referenced(
    path: str,
    rel: str,
    request: ScanRequest,
    skipped: list[Skipped],
    reader: Callable[[SourceFile], Iterable[Fact | Skipped | FileReference]],
) -> tuple[list[Fact], list[FileReference]]:
    """The facts ``reader`` finds in a file another file named, and the files it names in
    turn (its skipped records go to ``skipped``); none when the file cannot be read."""
    source = read_source(path, rel, request.max_file_bytes, overlay=request.overlay)
    if not isinstance(source, SourceFile):
        return [], []
    found: list[Fact] = []
    further: list[FileReference] = []
    for item in reader(source):
        if isinstance(item, Skipped):
            skipped.append(item)
        elif isinstance(item, FileReference):
            further.append(item)
        else:
            found.append(item)
    return found, further


def _referenced_configs(
    facts: list[Fact],
    files: dict[str, str],
    request: ScanRequest,
    skipped: list[Skipped],
    label: str = "",
) -> list[Fact]:
    """Facts of ``--config FILE`` YAML files named by scanned launches and not already read
    as vLLM config files (their content alone did not say so); the lookalike notes of the
    files read as configs are dropped, and a launch whose file is no file of the tree gets
    a note (:func:`~.scanners.vllm_config.missing_config_notes`)."""
    if not facts:
        return []
    from vllm_upgrade_check.sources.scanners import vllm_config as vc

    done = {f.location.path for f in facts if f.kind == FactKind.ARG and f.origin == "config"}
    out: list[Fact] = []
    found_for: set[int] = set()  # ids of the --config facts whose file is in the tree
    for rel, fact in vc.referenced_config_paths(facts):
        if label and rel not in files and not rel.startswith(label + "/"):
            rel = f"{label}/{rel}"  # relative to the root: the root's prefix was left off
        found_for.update([id(fact)] if rel in files else [])
        if rel in done or rel not in files:
            continue
        done.add(rel)
        found, _further = _read_referenced(
            files[rel], rel, request, skipped, lambda s: vc.scan_config(s, referenced=True)
        )
        out.extend(found)
    done.update(f.location.path for f in out if f.origin == "config")
    vc.without_lookalike_notes(skipped, [p for p in done if p is not None])
    skipped.extend(vc.missing_config_notes(facts, found_for))
    return out
