"""Names bound by tuple and list unpacking (``model, opts = "m", {...}``) are resolved like plain
assignments where both sides pair element by element; a name unpacked from a value that cannot
be paired (a call, a starred target) stays unresolved, named in a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

HEAD = "import subprocess\nfrom vllm import LLM\n"


def _scan(root: Path, text: str) -> tuple[list[tuple[str, int, int]], list[str]]:
    (root / "serve.py").write_text(HEAD + text, encoding="utf-8")
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.20.0", to_version="0.33.0", cache_dir=None))
    found = sorted((f.rule.id, f.location.line, f.location.column or 0) for f in report.findings)
    return found, list(report.notes)


@pytest.mark.parametrize(
    ("text", "rule", "word"),
    [
        ('model, opts = "acme/m", {"preemption_mode": "swap"}\nLLM(model, **opts)\n', "VUC0110-003", "preemption_mode"),
        ('(model, opts) = ("acme/m", {"num_scheduler_steps": 8})\nLLM(model, **opts)\n', "VUC0101-001", "num_scheduler_steps"),
        ('[a, (b, c)] = ["x", ({"num_scheduler_steps": 2}, 3)]\nLLM("m", **b)\n', "VUC0101-001", "num_scheduler_steps"),
        ('cmd, env = ["vllm", "serve", "m", "--swap-space", "4"], {}\nsubprocess.run(cmd, env=env)\n', "VUC0180-001", "--swap-space"),
        ('x = cmd, env = ["vllm", "serve", "m", "--swap-space", "4"], {}\nsubprocess.run(cmd)\n', "VUC0180-001", "--swap-space"),
    ],
)
def test_a_name_bound_by_unpacking_is_resolved(tmp_path: Path, text: str, rule: str, word: str) -> None:
    found, notes = _scan(tmp_path, text)
    line_no, line = next((i, t) for i, t in enumerate((HEAD + text).splitlines(), 1) if word in t)
    assert (rule, line_no, line.index(word) + 1) in found, found
    assert not [n for n in notes if "unresolved" in n], notes


@pytest.mark.parametrize(
    "text",
    [
        "model, opts = get_config()\nLLM(model, **opts)\n",
        'first, *rest = [{"num_scheduler_steps": 2}, 3]\nLLM("m", **first)\n',
        'a, b = [{"num_scheduler_steps": 2}]\nLLM("m", **a)\n',
    ],
)
def test_a_name_unpacked_from_what_cannot_be_paired_is_unresolved(tmp_path: Path, text: str) -> None:
    found, notes = _scan(tmp_path, text)
    assert not [f for f in found if f[0] == "VUC0101-001"], found
    assert [n for n in notes if "unresolved" in n and "serve.py:" in n], notes


def test_a_later_rebinding_by_unpacking_replaces_the_value(tmp_path: Path) -> None:
    text = 'opts = {"num_scheduler_steps": 2}\nopts, n = {"max_num_seqs": 4}, 1\nLLM("m", **opts)\n'
    found, _ = _scan(tmp_path, text)
    assert not [f for f in found if f[0] == "VUC0101-001"], found
    rebound = 'opts, n = {"num_scheduler_steps": 2}, 1\nLLM("m", **opts)\n'
    found, _ = _scan(tmp_path, rebound)
    assert [f for f in found if f[0] == "VUC0101-001" and f[1] == 3], found
