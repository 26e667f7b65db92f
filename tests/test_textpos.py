"""Positions on long lines: exact, and found without rescanning the text per fact.

Counting newlines from the start of the file for every fact, or decoding a line's prefix for
every shell token, made a file with many facts on one line quadratic (a dashboard with a
quarter million queries on one line ran for minutes). These tests pin the positions the
faster lookups give; ``benchmarks/bench_scan.py`` is where speed is measured.
"""

from __future__ import annotations

import json
import random

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.parsing.textpos import LineIndex
from vllm_upgrade_check.sources.scanners.monitoring import MonitoringScanner
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


def naive(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_line_index_agrees_with_counting_newlines() -> None:
    rng = random.Random(3)
    for _ in range(50):
        text = "".join(rng.choice("ab\n\né") for _ in range(rng.randint(0, 200)))
        index = LineIndex(text)
        for offset in range(len(text) + 1):
            assert index.line_col(offset) == naive(text, offset)


def test_every_query_of_a_one_line_dashboard_is_found_at_its_column() -> None:
    panels = [{"targets": [{"expr": f"rate(vllm:num_requests_running[{k}m])"}]} for k in range(3000)]
    text = json.dumps({"panels": panels})  # one line
    facts = kinds(scan_text(MonitoringScanner(), "dash.json", text), FactKind.METRIC)
    assert len(facts) == 3000
    expected = [i + 1 for i in range(len(text)) if text.startswith("vllm:num_requests_running", i)]
    assert [(f.location.line, f.location.column) for f in facts] == [(1, c) for c in expected]


def test_shell_columns_on_a_long_ascii_line_and_after_non_ascii_text() -> None:
    flags = " ".join(f"--max-num-seqs {k}" for k in range(2000))
    text = f"vllm serve m {flags}\nvllm serve 'modèle-ü' --max-num-seqs 9\n"
    args = [a for a in args_of(scan_text(ShellScanner(), "run.sh", text)) if a[0] == "max_num_seqs"]
    first_line = text.split("\n")[0]
    expected = [(1, i + 1) for i in range(len(first_line)) if first_line.startswith("--max-num-seqs", i)]
    assert [(line, column) for _name, _value, line, column in args[:-1]] == expected
    second = text.split("\n")[1]
    assert args[-1][2:] == (2, second.index("--max-num-seqs") + 1)  # characters, not UTF-8 bytes
