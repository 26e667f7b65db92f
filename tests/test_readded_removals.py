"""A removal the target release takes back is an ``info`` with no fix that deletes it.

``--disable-log-requests``: removed in vLLM 0.17.0 (VUC0170-001), defined again in 0.33.0;
``VLLM_ROCM_USE_AITER_FP4_ASM_GEMM``: no longer read from 0.29.0 (VUC0290-004), read again
in 0.31.0 and 0.32.0 (the bundled surface data, ``data/known_args.json``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.matching.readded import readded
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

REGISTRY = load_registry()
ROOT = Path(__file__).resolve().parents[1]


def _scan(root: Path, to: str) -> Report:
    return run_scan(ScanOptions.of(paths=[root], to_version=to), registry=REGISTRY)


def _by_rule(report: Report) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for f in report.findings:
        out.setdefault(f.rule.id, []).append((f.severity.value, f"{f.location.path}:{f.location.line}:{f.location.column}"))
    return out


LAUNCHES = {
    "run.sh": "vllm serve acme/m --disable-log-requests --swap-space 4\n",
    "eq.sh": "vllm serve acme/m --disable_log_requests --port 8000\n",
    "compose.yaml": "services:\n  api:\n    image: vllm/vllm-openai:v0.16.0\n    command: [--model, acme/m, --disable-log-requests]\n",
    "pod.yaml": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: v\n"
        "      image: vllm/vllm-openai:v0.16.0\n      args:\n        - --model\n        - acme/m\n"
        "        - --disable-log-requests\n"
    ),
}


@pytest.mark.parametrize("name", sorted(LAUNCHES))
def test_a_flag_the_target_defines_again_is_info_with_no_fix(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(LAUNCHES[name])
    at_33 = _scan(tmp_path, "0.33.0")
    found = [f for f in at_33.findings if f.rule.id == "VUC0170-001"]
    assert [f.severity.value for f in found] == ["info"], _by_rule(at_33)
    (finding,) = found
    assert "removed in vLLM 0.17.0, defined again in 0.33.0" in finding.rule.message
    assert finding.rule.fix.action.value == "none" and not finding.edits
    # the window's other target still rejects it
    at_32 = _scan(tmp_path, "0.32.0")
    assert [f.severity.value for f in at_32.findings if f.rule.id == "VUC0170-001"] == ["blocker"], _by_rule(at_32)


def test_fix_at_the_target_that_defines_it_again_keeps_the_flag(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(LAUNCHES["run.sh"])
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.33.0"))
    assert (tmp_path / "run.sh").read_text() == "vllm serve acme/m --disable-log-requests\n"  # --swap-space stays removed
    (tmp_path / "run.sh").write_text(LAUNCHES["run.sh"])
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.32.0"))
    assert (tmp_path / "run.sh").read_text() == "vllm serve acme/m\n"


def test_an_env_var_read_again_is_info_only_where_the_target_reads_it(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.28.0\nENV VLLM_ROCM_USE_AITER_FP4_ASM_GEMM=1\n")
    severity = {
        to: [f.severity.value for f in _scan(tmp_path, to).findings if f.rule.id == "VUC0290-004"]
        for to in ("0.30.0", "0.31.0", "0.32.0", "0.33.0")
    }
    assert severity == {"0.30.0": ["warning"], "0.31.0": ["info"], "0.32.0": ["info"], "0.33.0": ["warning"]}, severity


def test_readded_needs_the_release_to_lack_it_and_the_target_to_have_it() -> None:
    known = known_args()
    back = readded(known, "flag", "--disable-log-requests", Version("0.17.0"), Version("0.33.0"))
    assert back is not None and back.again == Version("0.33.0")
    assert readded(known, "flag", "--disable-log-requests", Version("0.17.0"), Version("0.32.0")) is None
    assert readded(known, "flag", "--disable-log-requests", Version("0.16.0"), Version("0.33.0")) is None  # defined at 0.16.0
    assert readded(known, "flag", "--swap-space", Version("0.18.0"), Version("0.33.0")) is None  # stays removed
    assert readded(known, "flag", "--swap-space", Version("0.18.0"), Version("9.0")) is None  # past the data


def test_list_readded_names_every_taken_back_removal() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "list_readded.py")], capture_output=True, text=True, check=True
    ).stdout
    lines = out.splitlines()
    assert "VUC0170-001 --disable-log-requests: removed in 0.17.0, defined again in 0.33.0" in lines, out
    assert any(line.startswith("VUC0290-004 VLLM_ROCM_USE_AITER_FP4_ASM_GEMM: removed in 0.29.0") for line in lines), out
    assert not any("--swap-space" in line for line in lines), out
