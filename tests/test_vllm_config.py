"""vLLM --config YAML files, --*-config JSON values, unknown flags and unresolved launches."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import args_of, scan_text
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.matching.checks import UNKNOWN_FLAG_ID
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.vllm_config import VllmConfigScanner


def scan(text: str, name: str = "serve-config.yaml"):
    return scan_text(VllmConfigScanner(), name, text)


def test_both_spellings_and_nested_config() -> None:
    items = scan("max-num-seqs: 8\nswap_space: 4\ncompilation-config:\n  level: 3\n")
    assert args_of(items) == [
        ("max_num_seqs", "8", 1, 1),
        ("swap_space", "4", 2, 1),
        ("compilation_config", '{"level": 3}', 3, 1),
        ("compilation_config.level", "3", 4, 3),
    ]


def test_unrelated_yaml_and_manifests_are_not_configs() -> None:
    assert scan("service: a\nowner: b\nretries: 3\nswap_space: 4\n", name="settings.yaml") == []
    assert scan("apiVersion: v1\nkind: ConfigMap\nmodel: m\nseed: 1\nswap_space: 4\n") == []


def test_name_alone_needs_one_known_key() -> None:
    assert args_of(scan("seed: 1\n", name="my-vllm-config.yml")) == [("seed", "1", 1, 1)]


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "run.sh").write_text(
        "#!/bin/bash\nvllm serve m --config engine.yaml \\\n  --max-num-sequences 8 $VLLM_ARGS\n"
    )
    (tmp_path / "deploy" / "engine.yaml").write_text("seed: 1\ncalculate_kv_scales: true\n")
    (tmp_path / "app.py").write_text(
        "from vllm import LLM\nllm = LLM('m', override_attention_dtype='bfloat16')\n"
    )
    (tmp_path / "README.md").write_text("| `--calculate-kv-scales` | removed |\n")
    return tmp_path


def test_multi_source_repo_reports_every_use_at_its_line(tmp_path: Path) -> None:
    report = run_scan(ScanOptions.of(paths=[_repo(tmp_path)], to_version="0.28.0", from_version="0.26.0"))
    # Changed-default (absent_arg) rules fire on every launch; this test is about where uses are found.
    got = {
        (f.rule.id, f.location.path, f.location.line, f.location.column)
        for f in report.findings
        if f.rule.match.kind.value != "absent_arg"
    }
    assert got == {
        ("VUC0280-002", "app.py", 2, 16),
        (UNKNOWN_FLAG_ID, "deploy/run.sh", 3, 3),
        ("VUC0280-001", "deploy/engine.yaml", 2, 1),
    }
    unknown = next(f for f in report.findings if f.rule.id == UNKNOWN_FLAG_ID)
    assert "--max-num-seqs" in unknown.rule.message
    assert any(n.startswith("unresolved: $VLLM_ARGS at deploy/run.sh:2") for n in report.notes)


def test_referenced_config_is_found_under_each_of_several_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With several roots, paths start with the root (P1-7); --config FILE relative to the root still resolves.
    for name in ("a", "b"):
        (tmp_path / name / "deploy").mkdir(parents=True)
        (tmp_path / name / "deploy" / "run.sh").write_text("vllm serve m --config conf/engine.yaml\n")
        (tmp_path / name / "conf").mkdir()
        (tmp_path / name / "conf" / "engine.yaml").write_text("seed: 1\ncalculate_kv_scales: true\n")
    monkeypatch.chdir(tmp_path)
    options = ScanOptions.of(paths=[Path("a"), Path("b")], to_version="0.28.0", from_version="0.26.0")
    got = {f.location.path for f in run_scan(options).findings if f.rule.id == "VUC0280-001"}
    assert got == {"a/conf/engine.yaml", "b/conf/engine.yaml"}
