"""Removed flags and env vars of the curated 0.6.0 → 0.19.1 packs are reported on their line.

Each case writes a launch script that uses one removed setting on a known line, scans it with
``--from`` the release before the removal and ``--to 0.19.1``, and expects the pack's rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check import engine
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.model.pack import Severity

# (rule id, release before removal, line used in the script, expected severity)
CASES = [
    ("VUC061P1-001", "0.6.1", "vllm serve m --engine-use-ray", Severity.BLOCKER),
    ("VUC064-001", "0.6.3.post1", "vllm serve m --max-context-len-to-capture 8192", Severity.BLOCKER),
    ("VUC070-002", "0.6.6.post1", "vllm serve m --worker-use-ray", Severity.BLOCKER),
    ("VUC083-001", "0.8.2", "vllm serve m --speculative-model draft-m", Severity.BLOCKER),
    ("VUC0100-001", "0.9.2", "vllm serve m --use-v2-block-manager", Severity.BLOCKER),
    (
        "VUC0100-002",
        "0.9.2",
        "vllm serve m --enable-reasoning --reasoning-parser deepseek_r1",
        Severity.BLOCKER,
    ),
    ("VUC0101-001", "0.10.0", "vllm serve m --num-scheduler-steps 8", Severity.BLOCKER),
    ("VUC0110-002", "0.10.2", "vllm serve m --max-seq-len-to-capture 8192", Severity.BLOCKER),
    ("VUC0111-004", "0.11.0", "export VLLM_USE_V1=1", Severity.WARNING),
    ("VUC0120-001", "0.11.2", "vllm serve m --guided-decoding-backend xgrammar", Severity.BLOCKER),
    ("VUC0130-001", "0.12.0", "vllm serve m --task embed", Severity.BLOCKER),
    ("VUC0150-001", "0.14.1", "export VLLM_ATTENTION_BACKEND=FLASHINFER", Severity.WARNING),
    ("VUC0160-002", "0.15.1", "export VLLM_TORCH_PROFILER_DIR=/tmp/trace", Severity.WARNING),
    ("VUC0170-001", "0.16.0", "vllm serve m --disable-log-requests", Severity.BLOCKER),
    ("VUC0180-001", "0.17.1", "vllm serve m --swap-space 16", Severity.BLOCKER),
    ("VUC0190-001", "0.18.1", "vllm serve m --disable-frontend-multiprocessing", Severity.BLOCKER),
]


@pytest.mark.parametrize(("rule_id", "from_version", "line", "severity"), CASES)
def test_removed_setting_reported_on_its_line(
    tmp_path: Path, rule_id: str, from_version: str, line: str, severity: Severity
) -> None:
    script = tmp_path / "launch.sh"
    script.write_text(f"#!/bin/sh\nset -e\n{line}\n")
    report = engine.run_scan(
        ScanOptions.of(paths=[tmp_path], to_version="0.19.1", from_version=from_version)
    )
    hits = [f for f in report.findings if f.rule.id == rule_id]
    assert hits, f"{rule_id} not reported; got {[f.rule.id for f in report.findings]}"
    assert hits[0].fact.location.line == 3
    assert hits[0].severity == severity


def test_deprecated_flag_is_a_warning_before_its_removal(tmp_path: Path) -> None:
    """--disable-log-requests: deprecated in 0.10.1, removed in 0.17.0 → warning for 0.16.0."""
    (tmp_path / "launch.sh").write_text("vllm serve m --disable-log-requests\n")
    report = engine.run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.16.0", from_version="0.10.0"))
    hits = [f for f in report.findings if f.rule.id == "VUC0170-001"]
    assert hits and hits[0].severity == Severity.WARNING and hits[0].deprecated_only


def test_reported_past_the_removal_because_the_target_rejects_it(tmp_path: Path) -> None:
    """--task left 0.13.0's parser: from 0.13.0 the window crosses no removal, but 0.19.1
    still rejects the flag, so the rule that removed it reports it."""
    (tmp_path / "launch.sh").write_text("vllm serve m --task embed\n")
    report = engine.run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.19.1", from_version="0.13.0"))
    hits = [f for f in report.findings if f.rule.id == "VUC0130-001"]
    assert hits and hits[0].severity == Severity.BLOCKER


def test_a_flag_the_target_defines_again_is_not_reported(tmp_path: Path) -> None:
    """--disable-log-requests: gone 0.17.0-0.32.x, back in 0.33.0 (the inverse of
    --enable-log-requests)."""
    (tmp_path / "launch.sh").write_text("vllm serve m --disable-log-requests\n")
    gone = engine.run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.27.0"))
    assert [f.rule.id for f in gone.findings if f.severity == Severity.BLOCKER] == ["VUC0170-001"]
    back = engine.run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.27.0"))
    assert not [f for f in back.findings if f.rule.id == "VUC0170-001"]
