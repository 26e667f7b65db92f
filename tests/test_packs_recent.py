"""Curated packs 0.20.0-0.33.0: a launch using a removed flag/env var is reported on its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check import engine
from vllm_upgrade_check.model.options import ScanOptions

# (release before the removal, launch script, rule name, line)
CASES = [
    (
        "0.29.0",
        "#!/bin/sh\nvllm serve m \\\n  --enable-bf16x3-router-gemm\n",
        "removed-enable-bf16x3-router-gemm",
        3,
    ),
    (
        "0.29.0",
        "#!/bin/sh\nvllm serve m --no-enable-bf16x3-router-gemm\n",
        "removed-enable-bf16x3-router-gemm",
        2,
    ),
    (
        "0.30.0",
        "vllm serve m \\\n  --enable-mamba-fine-grained-prefix-cache\n",
        "removed-enable-mamba-fine-grained-prefix-cache",
        2,
    ),
    ("0.26.0", "vllm serve m --max_num_partial_prefills 2\n", "removed-max-num-partial-prefills", 1),
    ("0.27.1", "vllm serve m --calculate-kv-scales\n", "removed-calculate-kv-scales", 1),
    ("0.19.1", "export VLLM_MOE_DP_CHUNK_SIZE=256\nvllm serve m\n", "removed-env-vllm-moe-dp-chunk-size", 1),
    (
        "0.21.0",
        "export VLLM_NIXL_ABORT_REQUEST_TIMEOUT=60\nvllm serve m\n",
        "removed-env-vllm-nixl-abort-request-timeout",
        1,
    ),
    ("0.22.1", "VLLM_RPC_TIMEOUT=10000 vllm serve m\n", "removed-env-vllm-rpc-timeout", 1),
    (
        "0.23.0",
        "export VLLM_USE_FLASHINFER_MOE_FP8=1\nvllm serve m\n",
        "removed-env-vllm-use-flashinfer-moe-fp8",
        1,
    ),
    (
        "0.25.1",
        "export VLLM_TPU_MOST_MODEL_LEN=2048\nvllm serve m\n",
        "removed-env-vllm-tpu-most-model-len",
        1,
    ),
    ("0.28.0", "export VLLM_TRITON_ATTN_USE_TD=1\nvllm serve m\n", "removed-env-vllm-triton-attn-use-td", 1),
    (
        "0.29.0",
        "export VLLM_PREFIX_CACHE_RETENTION_INTERVAL=5\nvllm serve m\n",
        "removed-env-vllm-prefix-cache-retention-interval",
        1,
    ),
    (
        "0.31.0",
        "export VLLM_ENGINE_ITERATION_TIMEOUT_S=120\nvllm serve m\n",
        "removed-env-vllm-engine-iteration-timeout-s",
        1,
    ),
    (
        "0.32.0",
        "export VLLM_USE_RAY_COMPILED_DAG_OVERLAP_COMM=1\nvllm serve m\n",
        "removed-env-vllm-use-ray-compiled-dag-overlap-comm",
        1,
    ),
    ("0.23.0", "vllm serve ./model.gguf \\\n  --load-format gguf\n", "removed-load-format-gguf", 2),
    ("0.19.1", "vllm serve m --quantization petit_nvfp4\n", "removed-quantization-petit-nvfp4", 1),
    ("0.22.1", "vllm serve inceptionai/jais-13b-chat\n", "removed-jais-models", 1),
]


@pytest.mark.parametrize(("from_version", "script", "rule_name", "line"), CASES)
def test_removed_item_reported_at_its_line(
    tmp_path: Path, from_version: str, script: str, rule_name: str, line: int
) -> None:
    (tmp_path / "launch.sh").write_text(script)
    report = engine.run_scan(
        ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version=from_version)
    )
    hits = [(f.rule.name, f.fact.location.line) for f in report.findings]
    assert (rule_name, line) in hits, hits


def test_removal_reported_past_it_when_the_target_does_not_read_it(tmp_path: Path) -> None:
    """VLLM_RPC_TIMEOUT left vllm/envs.py before 0.23.0: the window crosses no removal, but
    the target still ignores it, so the rule that removed it reports it."""
    (tmp_path / "launch.sh").write_text("export VLLM_RPC_TIMEOUT=10000\nvllm serve m\n")
    report = engine.run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.23.0"))
    assert any(f.rule.name == "removed-env-vllm-rpc-timeout" for f in report.findings)


def test_deprecated_env_var_warns_before_removal(tmp_path: Path) -> None:
    (tmp_path / "launch.sh").write_text("export VLLM_USE_FBGEMM=1\nvllm serve m\n")
    report = engine.run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.23.0", from_version="0.21.0"))
    found = [f for f in report.findings if f.rule.name == "removed-env-vllm-use-fbgemm"]
    assert found and found[0].deprecated_only
