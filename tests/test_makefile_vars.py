"""Makefile variables as make sets them: ``+=`` appends (with a blank), ``?=`` sets only what
is not set yet; a launch in a recipe reads them, each flag reported where it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions


@pytest.mark.parametrize(
    ("assignments", "where"),
    [
        ("FLAGS := --port 8000\nFLAGS += --swap-space 4\n", (2, 10)),
        ("FLAGS = --port 8000\nFLAGS+=--swap-space 4\n", (2, 8)),
        ("FLAGS ?= --swap-space 4\nFLAGS ?= --port 8000\n", (1, 10)),
        ("FLAGS := --port 8000\nFLAGS ?= --swap-space 4\nOTHER += --swap-space 2\n", None),
    ],
)
def test_appends_and_conditional_assignments(tmp_path: Path, assignments: str, where: tuple[int, int] | None) -> None:
    (tmp_path / "Makefile").write_text(f"MODEL := org/m\n{assignments}\nserve:\n\tvllm serve $(MODEL) $(FLAGS)\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.20.0"))
    got = [(f.location.line - 1, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001"]
    assert got == ([where] if where else [])
