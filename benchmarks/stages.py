"""Where one scan's time goes, stage by stage (``bench_scan.py`` prints it).

One cold in-process scan in one process (``--no-cache --jobs 1``), with the functions of each
stage wrapped in a timer of this process's CPU time (no profiler: its overhead would skew the
small functions; CPU, not wall time: a busy machine does not move the shares):

* walk: the directory walk with the ignore rules (``discovery.walk``);
* read: reading and decoding the files (``discovery.read_bytes``/``_decode``);
* pre-filter: the byte-level marker tests and the content sniffer (``sniff``);
* parse + facts, per file kind: each scanner's ``scan`` (its parse and its facts), with the
  time inside the parsers themselves (PyYAML's composer, :mod:`ast`, tree-sitter-bash) shown
  apart;
* match: everything ``run_scan`` does after the files are scanned (rules, built-in checks,
  filters, the report record);
* report: rendering the report as JSON.
"""

from __future__ import annotations

import ast
import functools
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_TIMES: dict[str, float] = defaultdict(float)
_CALLS: dict[str, int] = defaultdict(int)


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _TIMES[label] += time.process_time() - start
            _CALLS[label] += 1

    return wrapper


def _timed_iter(label: str, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """A generator function whose time inside each step counts for ``label``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        it = fn(*args, **kwargs)
        _CALLS[label] += 1
        while True:
            start = time.process_time()
            try:
                item = next(it)
            except StopIteration:
                _TIMES[label] += time.process_time() - start
                return
            _TIMES[label] += time.process_time() - start
            yield item

    return wrapper


def stage_profile(root: Path) -> tuple[float, list[tuple[str, float, int]]]:
    """Time one cold 1-process scan of ``root`` by stage; returns ``(whole seconds, [(stage,
    seconds, calls)])``, in pipeline order. The patches are undone before it returns."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.model.options import ScanOptions
    from vllm_upgrade_check.parsing import shell, yamlnodes
    from vllm_upgrade_check.reporters import json_report as json_reporter
    from vllm_upgrade_check.sources import discovery, sniff, tree
    from vllm_upgrade_check.sources.scanners import default_scanners

    registry = load_registry()
    _TIMES.clear()
    _CALLS.clear()
    saved: list[tuple[object, str, object]] = []

    def patch(owner: object, name: str, wrapped: object) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, wrapped)

    patch(tree, "walk", _timed_iter("walk", tree.walk))
    patch(discovery, "read_bytes", _timed("read", discovery.read_bytes))
    patch(discovery, "_decode", _timed("read", discovery._decode))
    for cls in sorted({type(s) for s in default_scanners()}, key=lambda c: c.__name__):
        patch(cls, "scan", _timed_iter(f"scan: {cls.name}", cls.scan))  # type: ignore[attr-defined]
    # A function is wrapped in every module that imported it by name.
    modules = [
        m for n, m in sorted(sys.modules.items()) if n.startswith("vllm_upgrade_check") and m is not None
    ]
    prefilter = [
        getattr(sniff, name)
        for name in ("has_marker", "has_distribution_marker", "sniff_kind", "never_sniffed")
    ]
    for label, function in (
        *(("pre-filter", f) for f in prefilter),
        ("  of which: YAML composer", yamlnodes.compose_documents),
        ("  of which: shell (tree-sitter + walk)", shell.parse_shell),
        ("files (walk ... scan)", tree.scan_files),
    ):
        wrapped = _timed(label, function)
        for module in modules:
            if getattr(module, function.__name__, None) is function:
                patch(module, function.__name__, wrapped)
    patch(ast, "parse", _timed("  of which: Python ast.parse", ast.parse))
    try:
        start = time.process_time()
        report = run_scan(ScanOptions.of(paths=[root], jobs=1), registry)
        whole = time.process_time() - start
        start = time.process_time()
        json_reporter.render(report)
        _TIMES["report (JSON)"] += time.process_time() - start
        _CALLS["report (JSON)"] += 1
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
    rows = [(label, _TIMES[label], _CALLS[label]) for label in ("walk", "read", "pre-filter")]
    scans = sorted((k for k in _TIMES if k.startswith("scan: ")), key=lambda k: -_TIMES[k])
    rows += [(label, _TIMES[label], _CALLS[label]) for label in scans]
    rows += [
        (label, _TIMES[label], _CALLS[label]) for label in sorted(_TIMES) if label.startswith("  of which")
    ]
    rows.append(("match (run_scan after the files)", whole - _TIMES["files (walk ... scan)"], 1))
    rows.append(("report (JSON)", _TIMES["report (JSON)"], 1))
    return whole, rows


def print_stage_profile(root: Path, label: str) -> None:
    """Print :func:`stage_profile` of ``root`` as a table (seconds and share of the scan)."""
    whole, rows = stage_profile(root)
    print(f"\nwhere the time goes ({label}: one cold 1-process in-process scan, {whole:.3f} CPU s)")
    print(f"  {'stage':<44}{'CPU s':>9}{'share':>8}{'calls':>8}")
    for name, seconds, calls in rows:
        print(f"  {name:<44}{seconds:>9.3f}{100 * seconds / whole:>7.1f}%{calls:>8}")
