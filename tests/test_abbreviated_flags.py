"""Flags written as abbreviations: vLLM's parser keeps argparse's ``allow_abbrev``, so a
unique prefix works (a warning: it breaks once a release adds a flag with that prefix), a
prefix of several flags is refused as ambiguous (a blocker), and a suggestion for an unknown
flag is a near-typo, never an unrelated flag that shares a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.matching.checks import ABBREVIATED_FLAG_ID, UNKNOWN_FLAG_ID
from vllm_upgrade_check.model.options import ScanOptions


def _findings(tmp_path: Path, text: str, name: str = "serve.sh") -> dict[str, tuple[str, str, str]]:
    (tmp_path / name).write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.32.0"))
    return {
        f.fact.raw or f.fact.name: (f.rule.id, f.severity.value, f.rule.message)
        for f in report.findings
        if f.rule.id in (ABBREVIATED_FLAG_ID, UNKNOWN_FLAG_ID)
    }


@pytest.mark.parametrize(
    ("written", "full"),
    [
        ("--tensor-parallel", "--tensor-parallel-size"),
        ("--max-num-seq", "--max-num-seqs"),
        ("--served-model", "--served-model-name"),
        ("--gpu-memory", "--gpu-memory-utilization"),
    ],
)
@pytest.mark.parametrize("form", ["{flag} 2", "{flag}=2", "'{flag}' 2"])
def test_unique_prefix_is_a_warning_naming_the_full_flag(tmp_path: Path, written: str, full: str, form: str) -> None:
    got = _findings(tmp_path, "vllm serve acme/m " + form.format(flag=written) + "\n")
    rule_id, severity, message = got[written]
    assert (rule_id, severity) == (ABBREVIATED_FLAG_ID, "warning")
    assert f"expands it to {full} in 0.33.0" in message


def test_prefix_of_several_flags_is_a_blocker_naming_them(tmp_path: Path) -> None:
    got = _findings(tmp_path, "vllm serve acme/m --disable-log\n")
    rule_id, severity, message = got["--disable-log"]
    assert (rule_id, severity) == (UNKNOWN_FLAG_ID, "blocker")
    assert "ambiguous in 0.33.0" in message and "--disable-log-stats" in message


@pytest.mark.parametrize(
    ("written", "suggested"),
    [
        ("--verbose", None),
        ("--debug", None),
        ("--max-model-length", "--max-model-len"),
        ("--quantisation", "--quantization"),
        ("--enable-prefix-cache", "--enable-prefix-caching"),
        ("--gpu-mem-util", "--gpu-memory-utilization"),
    ],
)
def test_suggestions_are_near_typos(tmp_path: Path, written: str, suggested: str | None) -> None:
    got = _findings(tmp_path, f"vllm serve acme/m {written} 1\n")
    rule_id, severity, message = got[written]
    assert (rule_id, severity) == (UNKNOWN_FLAG_ID, "blocker")
    if suggested is None:
        assert "did you mean" not in message
    else:
        assert f"did you mean {suggested}?" in message


def test_full_flags_and_negations_are_not_abbreviations(tmp_path: Path) -> None:
    got = _findings(tmp_path, "vllm serve acme/m --tensor-parallel-size 2 --no-enable-prefix-caching --max-model-len 8\n")
    assert got == {}


def test_config_file_keys_abbreviate_too(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("vllm serve acme/m --config engine.yaml\n")
    got = _findings(tmp_path, "tensor_parallel: 2\nmax_model_len: 4096\n", name="engine.yaml")
    assert [rule_id for rule_id, _severity, _message in got.values()] == [ABBREVIATED_FLAG_ID]
