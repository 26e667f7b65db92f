"""A plain variable assigned in alternative branches (case, if/elif/else, && / ||): every
branch's value may reach the launch, each read as a launch of its own, cut where written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


def _launch_words(text: str) -> list[list[str]]:
    return [[t.text for t in c.argv] for c in parse_shell(text).commands if c.argv and c.argv[0].text == "vllm"]


def _args(text: str) -> list[tuple[str, str | None, int | None, int | None, str | None]]:
    items = scan_text(ShellScanner(), "run.sh", text)
    return sorted({(f.name, f.value, f.location.line, f.location.column, f.group) for f in kinds(items, FactKind.ARG)})


CASE = 'case "$1" in\n  big) EXTRA="--calculate-kv-scales" ;;\n  small) EXTRA="--num-scheduler-steps 8" ;;\nesac\n'
IF_ELSE = 'if [ -n "$X" ]; then\n  EXTRA="--calculate-kv-scales"\nelse\n  EXTRA="--num-scheduler-steps 8"\nfi\n'
IF_ELIF = (
    'if [ "$P" = a ]; then\n  EXTRA="--calculate-kv-scales"\nelif [ "$P" = b ]; then\n'
    '  EXTRA="--num-scheduler-steps 8"\nelse\n  EXTRA=""\nfi\n'
)
AND_OR = '[ -n "$X" ] && EXTRA="--calculate-kv-scales" || EXTRA="--num-scheduler-steps 8"\n'


@pytest.mark.parametrize("head", [CASE, IF_ELSE, IF_ELIF, AND_OR], ids=["case", "if-else", "if-elif-else", "and-or"])
@pytest.mark.parametrize("use", ["$EXTRA", "${EXTRA}"])
def test_every_branch_value_reaches_the_launch(head: str, use: str) -> None:
    text = head + f"vllm serve m {use} --port 8000\n"
    launches = _launch_words(text)
    assert ["vllm", "serve", "m", "--calculate-kv-scales", "--port", "8000"] in launches
    assert ["vllm", "serve", "m", "--num-scheduler-steps", "8", "--port", "8000"] in launches
    found = _args(text)
    names = {n for n, *_ in found}
    assert {"calculate_kv_scales", "num_scheduler_steps", "port"} <= names
    # each flag is reported where its branch writes it
    kv = next(f for f in found if f[0] == "calculate_kv_scales")
    steps = next(f for f in found if f[0] == "num_scheduler_steps")
    lines = text.split("\n")
    assert lines[kv[2] - 1][kv[3] - 1 :].startswith("--calculate-kv-scales")
    assert lines[steps[2] - 1][steps[3] - 1 :].startswith("--num-scheduler-steps")
    # each branch's launch is a launch of its own (its own group)
    assert kv[4] != steps[4]


def test_a_branch_that_may_not_run_keeps_the_value_before() -> None:
    text = 'EXTRA="--swap-space 4"\nif [ -n "$X" ]; then EXTRA="--seed 1"; fi\nvllm serve m $EXTRA\n'
    assert sorted(_launch_words(text)) == [["vllm", "serve", "m", "--seed", "1"], ["vllm", "serve", "m", "--swap-space", "4"]]


def test_no_value_is_invented_for_a_variable_set_in_one_branch_only() -> None:
    text = 'case "$1" in big) EXTRA="--seed 1" ;; esac\nvllm serve m $EXTRA\n'
    assert _launch_words(text) == [["vllm", "serve", "m", "--seed", "1"]]


def test_a_value_built_on_an_alternative_keeps_every_alternative() -> None:
    text = CASE + 'FLAGS="$EXTRA --swap-space 16"\nFLAGS+=" --seed 2"\nvllm serve m $FLAGS\n'
    assert sorted(_launch_words(text)) == [
        ["vllm", "serve", "m", "--calculate-kv-scales", "--swap-space", "16", "--seed", "2"],
        ["vllm", "serve", "m", "--num-scheduler-steps", "8", "--swap-space", "16", "--seed", "2"],
    ]


def test_alternatives_of_two_variables_combine() -> None:
    text = (
        'case "$1" in a) A="--seed 1" ;; b) A="--seed 2" ;; esac\n'
        'if [ -n "$Q" ]; then B=--enforce-eager; else B=--disable-log-stats; fi\n'
        "vllm serve m $A $B\n"
    )
    assert len(_launch_words(text)) == 4


def test_a_single_word_value_is_not_cut_at_its_use() -> None:
    """A value word from one of several branches has no span at ``$S`` (cutting there would
    edit every branch): it keeps the span of the branch's assignment."""
    text = 'case "$1" in a) S=4 ;; b) S=8 ;; esac\nvllm serve m --swap-space $S "$S"\n'
    launches = [c for c in parse_shell(text).commands if c.argv and c.argv[0].text == "vllm"]
    values = [(t.text, t.line, t.span.column if t.span else None) for c in launches for t in c.argv[4:]]
    assert values == [("4", 1, 19), ("4", 1, 19), ("8", 1, 29), ("8", 1, 29)]


def test_array_appends_in_branches_still_accumulate() -> None:
    text = 'ARGS=(--port 1)\nif [ -n "$X" ]; then\n  ARGS+=(--seed 3)\nfi\nvllm serve m "${ARGS[@]}"\n'
    assert _launch_words(text) == [["vllm", "serve", "m", "--port", "1", "--seed", "3"]]


def test_fix_removes_each_branch_flag_and_bumps_only_when_none_remains(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.20.0\n")
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/bash\n" + CASE.replace("EXTRA=", "EXTRA=", 2) + "vllm serve facebook/opt-125m $EXTRA\n")
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(tmp_path), "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    fixed = script.read_text()
    assert "--calculate-kv-scales" not in fixed and "--num-scheduler-steps" not in fixed, run.stdout + run.stderr
    assert 'big) EXTRA=""' in fixed and 'small) EXTRA=""' in fixed
    assert "vllm serve facebook/opt-125m $EXTRA" in fixed
    assert (tmp_path / "requirements.txt").read_text() == "vllm==0.33.0\n"
