"""Reading and scanning the files a walk found: one at a time, or in worker processes.

A file's result depends on the file alone (:mod:`.scanners.base`), so files that the cache
does not answer by their stamp are read and scanned in any order: in this process for a
small tree or a single CPU, else by forked worker processes (the scanners, options and cache
are inherited, nothing is re-imported) that send each :class:`~.cache.FileResult` back.
The caller applies the results to the cache, in walk order.

Parsing is pure Python, so threads would not help; forking pays on two cores and more once
a few hundred files need parsing (``benchmarks/bench_scan.py`` measures it).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.version import Version

from vllm_upgrade_check.cache import FileResult, ScanCache, content_digest
from vllm_upgrade_check.discovery import read_source
from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.scanners.base import Conditional, FileReference, Reference, Scanner, SourceFile
from vllm_upgrade_check.scanners.launch import is_vllm_image
from vllm_upgrade_check.suppress import suppression_lines
from vllm_upgrade_check.versions import version_from_tag

if TYPE_CHECKING:
    from vllm_upgrade_check.engine import ScanOptions

PARALLEL_MIN_FILES = 400
"""Fewest files to read and parse for which worker processes are started (below, forking
costs more than it saves)."""

MAX_JOBS = 8
"""Most worker processes started automatically."""


@dataclass(frozen=True)
class Pending:
    """A file to read and scan.

    Attributes:
        path: its path on disk.
        rel: its path in reports.
        verdict: :func:`~.discovery.wanted` of its name (``None``: the content decides).
        stamp: ``(size in bytes, mtime in ns)`` when the cache is on and the file could be
            stat'ed, else ``None``.
    """

    path: str
    rel: str
    verdict: bool | None
    stamp: tuple[int, int] | None


@dataclass(frozen=True)
class Outcome:
    """What reading one :class:`Pending` file gave.

    Attributes:
        result: the file's result; ``None`` when no scanner wants it.
        digest: its content digest, when the cache is on.
        cached: ``True`` when the cache answered by digest (the file was not parsed).
        storable: ``False`` for results that must not be cached (an unreadable file).
    """

    result: FileResult | None
    digest: str | None = None
    cached: bool = False
    storable: bool = True


def scan_source(source: SourceFile, takers: Sequence[Scanner]) -> FileResult:
    """Run ``takers`` (the scanners that accept ``source``) over one read file.

    A scanner that raises never stops the scan: the file gets a :class:`Skipped` naming the
    scanner and the error, marked as configuring vLLM so the gate fails closed.
    """
    result = FileResult(taken=bool(takers))
    if not takers:
        return result
    rel = source.relpath
    result.lines = suppression_lines(source.text)
    for scanner in takers:
        try:
            for item in scanner.scan(source):
                if isinstance(item, Fact):
                    result.facts.append(item)
                elif isinstance(item, Skipped):
                    result.skipped.append(item)
                elif isinstance(item, Conditional):
                    result.conditionals.append(item)
                elif isinstance(item, Reference):
                    result.references.append(item.key)
                elif isinstance(item, FileReference):
                    result.file_references.append(item)
        except RecursionError:
            result.skipped.append(
                Skipped(rel, "nested too deeply to parse", configures_vllm=source.mentions_vllm())
            )
        except Exception as exc:  # a scanner bug must not crash the gate: fail closed, name the file
            reason = f"{scanner.name} scanner failed: {type(exc).__name__}: {exc}".splitlines()[0]
            result.skipped.append(Skipped(rel, reason, configures_vllm=True))
    result.hint = file_hint(result.facts, rel)
    if result.hint is not None:
        result.facts = hinted(result.facts, result.hint)
        result.conditionals = [
            Conditional(c.key, tuple(hinted(list(c.facts), result.hint))) for c in result.conditionals
        ]
    return result


def pinned_version(fact: Fact) -> Version | None:
    """The vLLM version ``fact`` names: a vLLM image's tag or an ``==`` vllm requirement."""
    if fact.kind == FactKind.IMAGE and is_vllm_image(fact.name) and fact.value:
        return version_from_tag(fact.value)
    if fact.kind == FactKind.REQUIREMENT and fact.name == "vllm" and fact.value and fact.value.startswith("=="):
        try:
            return Version(fact.value[2:].split(",")[0].strip().removesuffix(".*"))
        except ValueError:
            return None
    return None


def file_hint(facts: Sequence[Fact], rel: str) -> tuple[str, str] | None:
    """``(version, source)`` of the oldest vLLM version ``facts`` of file ``rel`` pin or tag."""
    pins = [(v, f) for f in facts if (v := pinned_version(f)) is not None]
    if not pins:
        return None
    version, fact = min(pins, key=lambda p: p[0])
    return str(version), f"{rel}:{fact.location.line} {fact.raw}"


def hinted(facts: list[Fact], hint: tuple[str, str]) -> list[Fact]:
    """``facts`` with ``hint`` as the version hint of those that have none."""
    version, source = hint
    return [f if f.version_hint else replace(f, version_hint=version, hint_source=source) for f in facts]


def read_and_scan(
    item: Pending,
    scanners: Sequence[Scanner],
    options: ScanOptions,
    cache: ScanCache | None,
    *,
    scan: bool = True,
) -> Outcome:
    """Read ``item`` once; answer from the cache by content digest, else scan it (with
    ``scan`` false, the outcome of a file that needs scanning has ``result`` empty and
    ``storable`` true: the caller scans it later)."""
    source = read_source(item.path, item.rel, options.max_file_bytes, scanners, item.verdict, options.overlay)
    if source is None:
        return Outcome(None)
    if isinstance(source, Skipped):
        return Outcome(FileResult(skipped=[source]), storable=False)
    digest = None
    if cache is not None and item.stamp is not None:
        digest = content_digest(source.text)
        if (hit := cache.lookup(item.rel, digest)) is not None:
            return Outcome(hit, digest, cached=True)
    if not scan:
        return Outcome(FileResult(), digest)
    return Outcome(scan_source(source, [s for s in scanners if s.accepts(source)]), digest)


_STATE: tuple[Sequence[Scanner], ScanOptions, ScanCache | None] | None = None
"""What forked workers inherit: set in the parent just before the pool starts."""


def _work(chunk: list[Pending]) -> list[Outcome]:
    assert _STATE is not None, "worker started without inherited state"
    scanners, options, cache = _STATE
    return [read_and_scan(item, scanners, options, cache) for item in chunk]


def worker_count(requested: int | None, files: int) -> int:
    """Processes to scan ``files`` files with: ``requested`` when given (``0``: automatic),
    else the CPUs this process may use (at most :data:`MAX_JOBS`) once ``files`` reaches
    :data:`PARALLEL_MIN_FILES`; always 1 where ``fork`` is not available."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if requested:
        return max(1, requested)
    if files < PARALLEL_MIN_FILES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_JOBS))


def scan_pending(
    pending: Sequence[Pending],
    scanners: Sequence[Scanner],
    options: ScanOptions,
    cache: ScanCache | None,
    done: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Read and scan every pending file; outcomes in the order of ``pending``.

    With a cache, each file is first read here and answered by its content digest when it
    can be (decoding a stored result is cheaper than sending one back from a worker); only
    the files left are scanned, in :func:`worker_count` processes for ``options.jobs``.
    ``done`` is called with each file's report path as its outcome is known (progress).
    """
    outcomes: list[Outcome | None] = [None] * len(pending)
    digests: dict[int, str] = {}
    todo: list[int] = []
    ask = cache is not None and not cache.empty  # an empty cache: workers compute the digests
    for index, item in enumerate(pending):
        if not ask or item.stamp is None:
            todo.append(index)
            continue
        outcome = read_and_scan(item, scanners, options, cache, scan=False)
        if outcome.cached or outcome.result is None or not outcome.storable:
            outcomes[index] = outcome
            if done is not None:
                done(item.rel)
        else:
            todo.append(index)
            if outcome.digest is not None:
                digests[index] = outcome.digest
    items = [pending[i] for i in todo]
    for index, outcome in zip(todo, _scan_all(items, scanners, options, None if ask else cache, done), strict=True):
        digest = digests.get(index)
        outcomes[index] = outcome if digest is None else Outcome(outcome.result, digest, False, outcome.storable)
    assert all(o is not None for o in outcomes)
    return [o for o in outcomes if o is not None]


def _scan_all(
    items: Sequence[Pending],
    scanners: Sequence[Scanner],
    options: ScanOptions,
    cache: ScanCache | None,
    done: Callable[[str], None] | None,
) -> list[Outcome]:
    global _STATE
    jobs = worker_count(options.jobs, len(items))
    if jobs <= 1 or len(items) < 2:
        outcomes = []
        for item in items:
            outcomes.append(read_and_scan(item, scanners, options, cache))
            if done is not None:
                done(item.rel)
        return outcomes
    size = max(16, len(items) // (jobs * 8))
    chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
    _STATE = (scanners, options, cache)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            outcomes = []
            for chunk, part in zip(chunks, pool.imap(_work, chunks), strict=True):
                outcomes.extend(part)
                if done is not None:
                    for item in chunk:
                        done(item.rel)
    finally:
        _STATE = None
    return outcomes
