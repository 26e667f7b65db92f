"""Reading and scanning the files a walk finds: in this process, or in worker processes.

A file's result depends on the file alone (:mod:`.scanners.base`), so files are scanned in
any order while the walk goes on. :class:`Dispatcher` takes each file the cache did not
answer by its stamp; with a non-empty cache it reads the file here and answers it by content
digest when it can (decoding a stored result costs less than sending one back from a
worker). What is left is scanned here for a small tree or one CPU, else sent in chunks to
forked worker processes (the scanners and options are inherited, nothing is re-imported)
while the walk continues. Every call into this module happens on the caller's thread.

Parsing is pure Python, so threads would not help; forking pays on two cores and more once
a few hundred files need parsing (``benchmarks/bench_scan.py`` measures it).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from vllm_upgrade_check.knowledge.versions import version_from_tag
from vllm_upgrade_check.model.evolve import evolve
from vllm_upgrade_check.model.facts import Fact, FactKind, Skipped
from vllm_upgrade_check.model.options import ScanRequest
from vllm_upgrade_check.sources.cache import FileResult, ScanCache, content_digest
from vllm_upgrade_check.sources.collector import paused_collector
from vllm_upgrade_check.sources.discovery import read_source
from vllm_upgrade_check.sources.inline import below_comments, suppression_lines
from vllm_upgrade_check.sources.scanners.base import (
    Conditional,
    FileReference,
    Reference,
    Scanner,
    SourceFile,
)
from vllm_upgrade_check.sources.scanners.images import is_vllm_image
from vllm_upgrade_check.sources.scanners.templates import has_template_actions, neutralise_templates

if TYPE_CHECKING:  # pragma: no cover - the pool modules load when workers start
    from concurrent.futures import Future, ProcessPoolExecutor

PARALLEL_MIN_FILES = 400
"""Fewest files to read and parse for which worker processes are started (below, forking
costs more than it saves)."""

MAX_JOBS = 8
"""Most worker processes started automatically."""

MAX_REQUESTED_JOBS = 64
"""Most worker processes started for an explicit ``--jobs`` (all are forked at once)."""


@dataclass(frozen=True)
class Pending:
    """A file to read and scan.

    Attributes:
        path: its path on disk.
        rel: its path in reports.
        verdict: :func:`~.discovery.wanted` of its name (``None``: the content decides).
        stamp: the file's :func:`~vllm_upgrade_check.sources.cache.file_stamp` when the cache is on
            and the file could be stat'ed, else ``None``.
    """

    path: str
    rel: str
    verdict: bool | None
    stamp: tuple[int, ...] | None


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
    with paused_collector():
        with _recursion_budget():
            _run_scanners(source, takers, result)
            if result.lines and any(getattr(s, "reads_yaml", False) for s in takers):
                result.blocks = _suppression_blocks(source.text, result.lines)
        result.hint = file_hint(result.facts, rel)
        if result.hint is not None:
            result.facts = hinted(result.facts, result.hint)
            result.conditionals = [
                Conditional(c.key, tuple(hinted(list(c.facts), result.hint)), c.refers) for c in result.conditionals
            ]
    return result


def _suppression_blocks(text: str, lines: list[str]) -> list[tuple[int, int]]:
    """The YAML keys written right below a suppression comment, with the lines of their
    values (:func:`~vllm_upgrade_check.parsing.yamlnodes.key_blocks`), read from the parse the
    YAML scanners shared (templates neutralised as they read them); none when the text is no
    YAML."""
    keys = below_comments(lines)
    if not keys:
        return []
    from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, documents, key_blocks

    if has_template_actions(text):
        text = neutralise_templates(text)
    try:
        return key_blocks(documents(text), keys)
    except (YamlProblem, RecursionError):
        return []


SCAN_RECURSION_BUDGET = 900
"""Python frames a scanner may use below the caller's (``RecursionError`` beyond: the file is
skipped as nested too deeply). Fixed, so that how deep a file may nest does not depend on
where the scan runs (a worker process, the CLI, a test): cached and uncached, serial and
parallel scans agree."""


@contextmanager
def _recursion_budget() -> Iterator[None]:
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + SCAN_RECURSION_BUDGET)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _run_scanners(source: SourceFile, takers: Sequence[Scanner], result: FileResult) -> None:
    rel = source.relpath
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
                    if item.launch:
                        result.launches[item.key] = item.launch
                    if item.template:
                        result.templates.append(item.key)
                elif isinstance(item, FileReference):
                    result.file_references.append(item)
        except RecursionError:
            result.skipped.append(
                Skipped(rel, "nested too deeply to parse", configures_vllm=source.mentions_vllm())
            )
        except Exception as exc:  # a scanner bug must not crash the gate: fail closed, name the file
            reason = f"{scanner.name} scanner failed: {type(exc).__name__}: {exc}".splitlines()[0]
            result.skipped.append(Skipped(rel, reason, configures_vllm=True))


def pinned_version(fact: Fact) -> Version | None:
    """The vLLM version ``fact`` names: a vLLM image's tag, an ``==`` vllm requirement or the
    vllm of a ``pip freeze`` snapshot in the repository."""
    if fact.kind == FactKind.IMAGE and is_vllm_image(fact.name) and fact.value:
        return version_from_tag(fact.value)
    if fact.kind == FactKind.DISTRIBUTION and fact.name == "vllm" and fact.location.path is not None and fact.value:
        try:
            return Version(fact.value)
        except ValueError:
            return None
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
    return [f if f.version_hint else evolve(f, version_hint=version, hint_source=source) for f in facts]


def read_and_scan(
    item: Pending,
    scanners: Sequence[Scanner],
    options: ScanRequest,
    cache: ScanCache | None = None,
    *,
    digest: bool = False,
    scan: bool = True,
) -> Outcome:
    """Read ``item`` once; answer it from ``cache`` by content digest when given, else scan it.

    Args:
        digest: compute the content digest even without ``cache`` (for the caller's cache).
        scan: ``False``: do not scan; the outcome of a file that needs scanning then has an
            empty ``result`` and ``storable`` true (the caller scans it later).
    """
    source = read_source(item.path, item.rel, options.max_file_bytes, scanners, item.verdict, options.overlay)
    if source is None:
        return Outcome(None)
    if isinstance(source, Skipped):
        return Outcome(FileResult(skipped=[source]), storable=False)
    value = None  # always the digest of the text read (and scanned) here, never an earlier read's
    if item.stamp is not None and (digest or cache is not None):
        value = content_digest(source.text)
    if cache is not None and value is not None and (hit := cache.lookup(item.rel, value)) is not None:
        return Outcome(hit, value, cached=True)
    if not scan:
        return Outcome(FileResult(), value)
    return Outcome(scan_source(source, [s for s in scanners if s.accepts(source)]), value)


_STATE: tuple[Sequence[Scanner], ScanRequest, bool] | None = None
"""What forked workers inherit: set in the parent before the first worker starts."""

CHUNK_FILES = 64
"""Files sent to a worker at a time."""


def _worker_init() -> None:
    # Ctrl-C reaches the whole process group: only the parent handles it (and stops the
    # workers), a worker never dies half-way through a chunk.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _work(chunk: list[Pending]) -> list[tuple[Pending, Outcome]]:
    assert _STATE is not None, "worker started without inherited state"
    scanners, options, digest = _STATE
    return [(item, read_and_scan(item, scanners, options, digest=digest)) for item in chunk]


def worker_count(requested: int | None, files: int) -> int:
    """Processes to scan ``files`` files with: ``requested`` when given (``0``: automatic),
    else the CPUs this process may use (at most :data:`MAX_JOBS`) once ``files`` reaches
    :data:`PARALLEL_MIN_FILES`; always 1 where ``fork`` is not available."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if requested:
        return max(1, min(requested, MAX_REQUESTED_JOBS))
    if files < PARALLEL_MIN_FILES:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_JOBS))


class Dispatcher:
    """Scans the files a walk hands over, as they come; collects the outcomes.

    Use as a context manager: :meth:`submit` each file, take :meth:`ready` outcomes now and
    then (a progress display stays live), then iterate :meth:`finish`. Outcomes come in no
    particular order. Workers start once :data:`PARALLEL_MIN_FILES` files wait (at once for
    an explicit ``options.jobs`` above 1) and :func:`worker_count` allows more than one; they
    are forked on demand, one per chunk in flight up to that count. Leaving the context early
    (an error, Ctrl-C) stops them at once. When workers cannot start, or one dies (the
    out-of-memory killer), the files they had not answered are scanned in this process.

    Args:
        scanners: the scanners to run.
        options: the scan's options (``jobs``, ``max_file_bytes``, ``overlay``).
        cache: the root's cache, or ``None``.
    """

    def __init__(self, scanners: Sequence[Scanner], options: ScanRequest, cache: ScanCache | None) -> None:
        self.scanners = scanners
        self.options = options
        self.cache = cache
        self._ask = cache is not None and not cache.empty
        self._digest = cache is not None
        self._waiting: list[Pending] = []
        self._answered: list[tuple[Pending, Outcome]] = []
        self._serial = worker_count(options.jobs, 0) <= 1 if options.jobs else None
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[Future[list[tuple[Pending, Outcome]]], list[Pending]] = {}
        self._interrupted = False
        self._previous_handler: Any = None

    def __enter__(self) -> Dispatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop(wait=False)

    def submit(self, item: Pending) -> None:
        """Take one file: answer it from the cache, scan it, or queue it for a worker."""
        self._check_interrupt()
        if self._ask and item.stamp is not None:
            outcome = read_and_scan(item, self.scanners, self.options, self.cache, scan=False)
            if outcome.cached or outcome.result is None or not outcome.storable:
                self._answered.append((item, outcome))
                return
        if self._serial:
            self._answered.append((item, self._scan_here(item)))
            return
        self._waiting.append(item)
        if self._pool is None and self._serial is None and len(self._waiting) >= PARALLEL_MIN_FILES:
            self._serial = worker_count(self.options.jobs, len(self._waiting)) <= 1
        if self._serial:
            self._scan_waiting_here()
            return
        if self._serial is False and len(self._waiting) >= CHUNK_FILES:
            self._send()

    def ready(self) -> list[tuple[Pending, Outcome]]:
        """Outcomes known so far and not yet taken."""
        self._check_interrupt()
        for future in [f for f in self._futures if f.done()]:
            self._collect(future)
        out, self._answered = self._answered, []
        return out

    def finish(self) -> Iterator[list[tuple[Pending, Outcome]]]:
        """The outcomes not yet taken, batch by batch as workers answer, until every file is
        scanned; the workers are then stopped."""
        if self._waiting and (self._pool is not None or len(self._waiting) >= CHUNK_FILES):
            self._send()
        elif self._waiting:  # too few for starting workers to pay
            self._scan_waiting_here()
        yield self.ready()
        while self._futures:
            from concurrent.futures import FIRST_COMPLETED, wait

            done, _pending = wait(list(self._futures), timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                self._collect(future)
            yield self.ready()
        self._stop(wait=True)

    def _on_interrupt(self, _signum: int, _frame: object) -> None:
        self._interrupted = True

    def _check_interrupt(self) -> None:
        # While workers run, Ctrl-C is only recorded (see _start): a KeyboardInterrupt raised
        # at an arbitrary point could leave a lock of concurrent.futures held for ever, and the
        # interpreter would hang at exit. It is raised here, where no such lock is held.
        if self._interrupted:
            self._interrupted = False
            raise KeyboardInterrupt

    def _scan_here(self, item: Pending) -> Outcome:
        return read_and_scan(item, self.scanners, self.options, digest=self._digest)

    def _scan_waiting_here(self) -> None:
        self._answered.extend((item, self._scan_here(item)) for item in self._waiting)
        self._waiting = []

    def _send(self) -> None:
        global _STATE
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        chunk, self._waiting = self._waiting, []
        try:
            if self._pool is None:
                jobs = worker_count(self.options.jobs, max(len(chunk), PARALLEL_MIN_FILES))
                _STATE = (self.scanners, self.options, self._digest)
                if threading.current_thread() is threading.main_thread():
                    self._previous_handler = signal.signal(signal.SIGINT, self._on_interrupt)
                context = multiprocessing.get_context("fork")
                self._pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_worker_init)
            self._futures[self._pool.submit(_work, chunk)] = chunk
        except (OSError, RuntimeError, BrokenProcessPool):  # no process could be started
            self._give_up_workers()
            self._answered.extend((item, self._scan_here(item)) for item in chunk)

    def _collect(self, future: Future[list[tuple[Pending, Outcome]]]) -> None:
        from concurrent.futures.process import BrokenProcessPool

        chunk = self._futures.pop(future, None)
        if chunk is None:  # already answered when the workers were given up
            return
        try:
            self._answered.extend(future.result())
        except BrokenProcessPool:  # a worker died: scan what the workers had not answered here
            self._answered.extend((item, self._scan_here(item)) for item in chunk)
            self._give_up_workers()
        except Exception:  # the chunk could not be sent or returned: scan it here
            self._answered.extend((item, self._scan_here(item)) for item in chunk)

    def _give_up_workers(self) -> None:
        """Scan everything from now on in this process (the chunks in flight included)."""
        self._serial = True
        lost = list(self._futures.items())
        self._futures = {}
        self._stop(wait=False)
        for future, chunk in lost:
            answered = None
            if future.done() and not future.cancelled() and future.exception() is None:
                answered = future.result()
            self._answered.extend(answered or [(item, self._scan_here(item)) for item in chunk])

    def _stop(self, wait: bool) -> None:
        # The pool is forgotten, and Ctrl-C handed back to its previous handler, only once its
        # workers are gone: a Ctrl-C while waiting for them is recorded like any other, and an
        # exception leaving here still finds the pool to terminate (see __exit__).
        global _STATE
        pool = self._pool
        if pool is not None:
            if not wait:
                processes = list(getattr(pool, "_processes", {}).values())
                for process in processes:  # chunks being scanned are not waited for
                    if process.is_alive():
                        process.terminate()
                for process in processes:
                    process.join(1)
                pool.shutdown(wait=False, cancel_futures=True)
            else:
                pool.shutdown(wait=True)
        self._pool = None
        if self._previous_handler is not None:
            signal.signal(signal.SIGINT, self._previous_handler)
            self._previous_handler = None
        _STATE = None
        if wait:
            self._check_interrupt()
