"""YAML merge keys and aliases under one node budget: diamonds cost the distinct nodes, not
2^N; over the budget a scanned file is skipped and a rule pack is a one-line error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge.registry import load_pack_text
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, get, mapping_items, to_python


def merge_diamond(levels: int, tail: str = "") -> str:
    lines = ["x-a0: &a0 {image: 'vllm/vllm-openai:v0.27.0', k: v}"]
    lines += [f"x-a{i}: &a{i} {{<<: [*a{i - 1}, *a{i - 1}], k{i}: {i}}}" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\ntop:\n  <<: *a{levels}\n{tail}"


def alias_diamond(levels: int) -> str:
    lines = ["x-a0: &a0 [a, b]"] + [f"x-a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_merge_diamond_keys_and_precedence() -> None:
    doc = compose_documents(merge_diamond(40, "  k: mine\n"))[0]
    top = get(doc, "top")
    keys = [key for key, _k, _v in mapping_items(top)]
    assert sorted(keys) == sorted({"image", "k", *(f"k{i}" for i in range(1, 41))})
    assert get(top, "k").value == "mine"  # an explicit key wins over every merged one
    assert get(top, "k40").value == "40"  # the nearest source first
    data = to_python(doc)
    assert data["top"]["k1"] == 1 and data["top"]["image"].startswith("vllm/")


def test_merge_order_first_source_wins() -> None:
    doc = compose_documents("a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc: {<<: [*a, *b]}\nd: {<<: [*b, *a]}\n")[0]
    assert to_python(doc)["c"] == {"x": 1, "y": 1, "z": 2}
    assert to_python(doc)["d"] == {"x": 2, "z": 2, "y": 1}


def test_self_merge_does_not_loop() -> None:
    doc = compose_documents("a: &a {x: 1}\nb: &b {<<: [*a, *a], y: 2}\nc: {<<: [*b, *a, *b]}\n")[0]
    assert to_python(doc)["c"] == {"y": 2, "x": 1}


def test_merge_diamond_cost_is_linear_in_levels() -> None:
    def make(levels: int):
        doc = compose_documents(merge_diamond(levels))[0]
        top = get(doc, "top")
        return lambda: list(mapping_items(top))

    assert time_ratio(make, 200) < LINEAR


def test_budget_counts_merge_and_alias_expansion() -> None:
    doc = compose_documents(alias_diamond(30))[0]
    with pytest.raises(YamlProblem, match="nodes once aliases and merge keys"):
        to_python(doc)
    merges = compose_documents(merge_diamond(10))[0]
    with pytest.raises(YamlProblem):
        to_python(merges, max_nodes=20)  # the 10 merge sources' entries count too
    assert to_python(merges, max_nodes=2000)["top"]["k10"] == 10


def test_rule_pack_over_budget_is_one_error(tmp_path: Path) -> None:
    text = alias_diamond(30) + "release: 0.99.0\nrules: []\n"
    with pytest.raises(RulePackError, match="nodes once aliases"):
        load_pack_text(text, "pack.yaml")
    pack = tmp_path / "0.99.0.yaml"
    pack.write_text(text)
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "rules", "validate", str(pack)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    problems = [line for line in run.stderr.splitlines() if "0.99.0.yaml" in line]
    assert len(problems) == 1 and "nodes once aliases and merge keys" in problems[0]


def test_scanned_compose_diamond_is_read(tmp_path: Path) -> None:
    from vllm_upgrade_check.model.options import ScanOptions
    from vllm_upgrade_check.sources.tree import scan_files

    tail = "services:\n  llm:\n    <<: *a60\n    command: [--max-num-seqs, '8']\n"
    (tmp_path / "docker-compose.yaml").write_text(merge_diamond(60).replace("top:\n  <<: *a60\n", "") + tail)
    facts, skipped, count = scan_files(ScanOptions.of(paths=[tmp_path]).request)
    assert count == 1 and not skipped
    assert any(f.name == "max_num_seqs" for f in facts) and any(f.value == "v0.27.0" for f in facts)
