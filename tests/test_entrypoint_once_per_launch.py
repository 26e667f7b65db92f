"""A launch through a deprecated or removed entry point gets one finding, whatever its flags.

``python -m vllm.entrypoints.api_server`` was removed in vLLM 0.25.0 (the module list of the
wheels): Python exits with "No module named ..." before any flag is read, so the launch is
one blocker (``VUC000-006``, at the module's word). ``python -m
vllm.entrypoints.openai.api_server`` is deprecated from 0.29.0 (``VUC000-012``), once per
launch; flags a pack rule names keep their own findings.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.reporters import json_report, sarif

REGISTRY = load_registry()


def _write(root: Path) -> None:
    (root / "run.sh").write_text(
        "python3 -m vllm.entrypoints.api_server --model m --seed 1 --max-model-len 10 --swap-space 4\n"
        "python -m vllm.entrypoints.openai.api_server --model m --seed 1 --max-model-len 10\n"
        "python -m vllm.entrypoints.openai.api_server --model m --dtype half\n"
    )
    (root / "Dockerfile").write_text(
        "FROM vllm/vllm-openai:v0.24.0\n"
        'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.api_server"]\n'
        'CMD ["--model", "m", "--seed", "1", "--dtype", "half"]\n'
    )
    (root / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: v\n"
        "      image: vllm/vllm-openai:v0.24.0\n"
        '      command: ["python3", "-m", "vllm.entrypoints.api_server"]\n'
        '      args: ["--model", "m", "--seed", "1", "--max-model-len", "100"]\n'
    )


def test_removed_and_deprecated_entry_points_are_one_finding_per_launch(tmp_path: Path) -> None:
    _write(tmp_path)
    report = run_scan(
        ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.24.0"), registry=REGISTRY
    )
    entry = Counter(
        (f.location.path, f.location.line, f.rule.id)
        for f in report.findings
        if f.rule.id in ("VUC000-006", "VUC000-012")
    )
    assert entry == {
        ("run.sh", 1, "VUC000-006"): 1,
        ("run.sh", 2, "VUC000-012"): 1,
        ("run.sh", 3, "VUC000-012"): 1,
        ("Dockerfile", 2, "VUC000-006"): 1,
        ("pod.yaml", 8, "VUC000-006"): 1,
    }
    removed = [f for f in report.findings if f.rule.id == "VUC000-006"]
    assert all(f.severity.value == "blocker" for f in removed)
    assert all("vllm.entrypoints.api_server" in f.rule.message and "0.25.0" in f.rule.message for f in removed)
    # the removed flag keeps its own finding; no other flag of these launches gets one
    flags = [(f.location.path, f.location.line, f.rule.id) for f in report.findings if f.fact.kind.value == "arg"]
    assert flags == [("run.sh", 1, "VUC0180-001")]

    rows = json.loads(json_report.render(report))["findings"]
    assert Counter((r["path"], r["line"]) for r in rows if r["rule_id"] in ("VUC000-006", "VUC000-012")) == Counter(
        {(p, line): n for (p, line, _id), n in entry.items()}
    )
    results = json.loads(sarif.render(report))["runs"][0]["results"]
    shown = Counter(
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
        for r in results
        if r["ruleId"] in ("VUC000-006", "VUC000-012")
    )
    assert shown == Counter({(p, line): n for (p, line, _id), n in entry.items()})


def test_a_module_the_target_still_ships_gets_no_removal_finding(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("python3 -m vllm.entrypoints.api_server --model m\n")
    report = run_scan(
        ScanOptions.of(paths=[tmp_path], to_version="0.24.0", from_version="0.23.0"), registry=REGISTRY
    )
    assert [f.rule.id for f in report.findings if f.fact.kind.value == "launch"] == []
