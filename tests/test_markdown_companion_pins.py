"""The Markdown report says plainly, for a companion pin (torch, flashinfer-python, ... that the
target vLLM's Requires-Dist pins), which pin the target requires and what the user has."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.reporters.markdown import render


def _markdown(root: Path, to: str) -> str:
    return render(run_scan(ScanOptions.of(paths=[root], from_version="0.17.0", to_version=to)))


def test_the_target_pin_and_the_users_pins_are_named(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.17.0\ntorch==2.9.0\n")
    (tmp_path / "Dockerfile").write_text('FROM python:3.12\nRUN pip install vllm==0.17.0 "torch<2.10"\n')
    text = _markdown(tmp_path, "0.28.0")
    said = (
        "The target, vLLM 0.28.0, requires `torch==2.13.0` (Requires-Dist since vLLM 0.27.0); "
        "you have `torch<2.10`, `torch==2.9.0`."
    )
    assert f"\n{said}\n" in text  # under the rule's message in the details
    assert f"- [ ] **VUC0270-003** torch-pin-conflict (2× blocker): {said} Pin torch==2.13.0" in text


def test_a_rule_of_the_target_release_names_no_since(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.17.0\ntorch==2.9.0\n")
    text = _markdown(tmp_path, "0.20.0")
    assert "\nThe target, vLLM 0.20.0, requires `torch==2.11.0`; you have `torch==2.9.0`.\n" in text


def test_other_rules_get_no_pin_sentence(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\nvllm serve m --swap-space 4\n")
    assert "The target, vLLM" not in _markdown(tmp_path, "0.20.0")
