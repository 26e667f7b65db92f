"""Orchestration of the stages, callable without the CLI: a scan (:mod:`.scan`: sources ->
matching -> a report) and a fix run (:mod:`.fix`: scan, fix, check, write, bump). Nothing here
prints or exits."""

from vllm_upgrade_check.engine.scan import (
    detect_from,
    required_by,
    resolve_from,
    resolve_target,
    run_scan,
    scan_output,
    unresolved_notes,
)

__all__ = ["detect_from", "required_by", "resolve_from", "resolve_target", "run_scan", "scan_output", "unresolved_notes"]
