"""The whole-report warm path of :func:`~vllm_upgrade_check.engine.scan.run_scan`: what keys
the last report of a set of roots (:func:`report_key`), and the cache that holds it
(:class:`~vllm_upgrade_check.sources.reportcache.ReportCache`).

A report depends on the tool (its code and data: :func:`~vllm_upgrade_check.sources.cache.code_salt`),
the rule packs it loads (bundled, entry points, ``--rules``: their contents), what the run
was asked (target, ``--from``, select and ignore prefixes, configured ignores and the day that
decides which have expired, the baseline file's content, ``--exclude``, the size limit,
whether fix edits are shown, the roots as given, the working directory and the folder the
outputs' paths start from) and the files of
the roots (:func:`~vllm_upgrade_check.sources.reportcache.tree_digest`). Every one of these is
in the key, so a configuration file reaches it through the options it sets. Runs that read
the host or an in-memory overlay, use their own scanners, or need the facts (``fix``) never
take this path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
import time
from dataclasses import replace
from pathlib import Path

from vllm_upgrade_check.knowledge.registry import pack_sources_digest
from vllm_upgrade_check.model.findings import ReleaseInfo, Report
from vllm_upgrade_check.model.options import ScanOptions, ScanRequest
from vllm_upgrade_check.sources.cache import code_salt
from vllm_upgrade_check.sources.repopaths import base_folder, path_base
from vllm_upgrade_check.sources.reportcache import RACY_NS, ReportCache, tree_digest


def usable(request: ScanRequest, wants_facts: bool) -> bool:
    """Whether a run of ``request`` may answer from the whole-report cache: caching is on, the
    built-in scanners read real files, no host or environment is read, and the caller does not
    need the facts (``wants_facts``)."""
    return (
        request.cache_dir is not None
        and request.scanners is None
        and not request.overlay
        and request.environment is None
        and request.host is None
        and not wants_facts
    )


def _file_digest(path: Path | None) -> str:
    if path is None:
        return "none"
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):  # a FIFO or device would block the read: the scan refuses it
            return f"not a regular file: {stat.filemode(mode)}"
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except OSError as exc:
        return f"unreadable: {exc}"


def report_key(options: ScanOptions, with_edits: bool, today: dt.date | None = None) -> tuple[str, int]:
    """The digest of everything a run's report depends on besides the gate (see the module),
    and the newest modification time of a file of the roots (nanoseconds).

    Raises:
        RulePackError: a ``--rules`` path that is not a file or directory.
    """
    request, window, filters = options.request, options.window, options.filters
    parts = [
        code_salt(),
        pack_sources_digest(options.rule_paths),
        repr((window.to_version, window.from_version, window.to_origin, window.from_origin)),
        repr((tuple(filters.ignores), filters.inline_suppressions, tuple(filters.select), tuple(filters.ignore_rules))),
        repr(filters.baseline),
        _file_digest(filters.baseline),
        repr((tuple(request.exclude), request.max_file_bytes, with_edits)),
        repr([(str(p), os.path.abspath(p)) for p in request.paths]),
        os.getcwd(),
        repr(base_folder(request.paths)),  # where the outputs' paths start (a .git made above)
        (today or dt.date.today()).isoformat(),
    ]
    tree, newest = tree_digest(request.paths, request.exclude)
    parts.append(tree)
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest(), newest


def report_cache(options: ScanOptions, with_edits: bool) -> ReportCache:
    """The whole-report cache entry of this run (``options.request.cache_dir`` must be set);
    one that keeps nothing when a file was modified within :data:`~.reportcache.RACY_NS`
    of now."""
    request = options.request
    assert request.cache_dir is not None
    started = time.time_ns()
    key, newest = report_key(options, with_edits)
    storable = newest < started - RACY_NS
    return ReportCache(request.cache_dir, request.paths, key, f"edits={with_edits}", storable)


def completed(report: Report, options: ScanOptions, infos: tuple[ReleaseInfo, ...]) -> Report:
    """A report read from the cache with what it does not store made again: the crossed
    releases' notes and rules (``infos``) and the gate of this run; where its paths start is
    made again too when the folder they start from is no longer the one stored (a ``.git``
    made or removed above the roots)."""
    roots = options.request.paths
    base = report.base
    if (base.root, base.kind) != base_folder(roots):
        reported = [f.location.path for f in report.findings if f.location.path is not None]
        reported += [s.path for s in report.skipped] + list(report.scanned)
        base = path_base(roots, reported)
    return replace(report, release_info=infos, gate=options.gate, base=base)
