"""A comment inside a continued launch: bash ends the command at the comment, so the words
after it run as a command of their own and never reach vLLM. The launch is checked as bash
runs it, and a warning (``VUC000-017``) at the comment names the words cut off."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.matching.cut_launch import CUT_LAUNCH_ID
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell


def _report(tmp_path: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.20.0"))


def _cuts(report) -> list[tuple[str, int | None, int | None, str]]:  # type: ignore[no-untyped-def]
    return [
        (str(f.fact.location.path), f.fact.location.line, f.fact.location.column, f.rule.message)
        for f in report.findings
        if f.rule.id == CUT_LAUNCH_ID
    ]


CUT_SCRIPTS = [
    # a commented-out flag line inside the continuation
    ("vllm serve acme/m \\\n  --tensor-parallel-size 2 \\\n  # --enforce-eager \\\n  --swap-space 4 \\\n  --port 8000\n",
     3, 3, "--swap-space 4 --port 8000"),
    # a comment line with no continuation of its own
    ("exec vllm serve acme/m \\\n    # keep this small\n    --swap-space 4\n", 2, 5, "--swap-space 4"),
    # a comment at the end of a line that itself ends in a continuation
    ("vllm serve acme/m --tensor-parallel-size 2  # two GPUs \\\n  --swap-space 4\n", 1, 45, "--swap-space 4"),
    # inside a function and an if, through python -m, two comment lines
    ("start() {\n  if true; then\n    python3 -m vllm.entrypoints.openai.api_server --model acme/m \\\n"
     "      # one\n      # two \\\n      --swap-space 4\n  fi\n}\nstart\n", 4, 7, "--swap-space 4"),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), CUT_SCRIPTS)
def test_comment_in_a_continued_launch_is_a_warning_at_the_comment(
    tmp_path: Path, text: str, line: int, column: int, words: str
) -> None:
    report = _report(tmp_path, "serve.sh", text)
    cuts = _cuts(report)
    assert len(cuts) == 1, cuts
    path, got_line, got_column, message = cuts[0]
    assert (path, got_line, got_column) == ("serve.sh", line, column)
    assert words in message and "never reach vLLM" in message
    # what bash runs is checked: the flag cut off is not the launch's (it never reaches vLLM)
    assert not [f for f in report.findings if f.fact.raw == "--swap-space"]
    assert next(f for f in report.findings if f.rule.id == CUT_LAUNCH_ID).severity.value == "warning"


@pytest.mark.parametrize(
    "text",
    [
        # a comment after a finished command: nothing continues it
        "vllm serve acme/m --port 8000\n# --swap-space 4\necho done\n",
        # the command after the comment is not made of options
        "vllm serve acme/m \\\n  # note\nnvidia-smi\n",
        # comment lines above the launch, and the launch continued without a comment
        "# --enforce-eager \\\nvllm serve acme/m \\\n  --port 8000\n",
        # a cut command that is not a vLLM launch
        "python3 train.py \\\n  # note \\\n  --epochs 2\n",
    ],
)
def test_no_warning_where_nothing_is_cut(tmp_path: Path, text: str) -> None:
    assert _cuts(_report(tmp_path, "serve.sh", text)) == []


def test_dockerfile_drops_comment_lines_inside_an_instruction(tmp_path: Path) -> None:
    # Docker removes comment lines inside a continued instruction: the flag after one is the launch's.
    report = _report(
        tmp_path, "Dockerfile", "FROM vllm/vllm-openai:v0.20.0\nCMD vllm serve acme/m \\\n  # old\n  --swap-space 4\n"
    )
    assert _cuts(report) == []
    swap = [f for f in report.findings if f.fact.raw == "--swap-space"]
    assert [(f.fact.location.line, f.fact.location.column) for f in swap] == [(4, 3)]


def test_sh_c_in_a_manifest_is_placed_in_the_file(tmp_path: Path) -> None:
    manifest = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: engine\n"
        "    image: vllm/vllm-openai:v0.20.0\n    command: [\"/bin/sh\", \"-c\"]\n    args:\n    - |\n"
        "      vllm serve acme/m \\\n        # off for now\n        --swap-space 4\n"
    )
    cuts = _cuts(_report(tmp_path, "k8s/pod.yaml", manifest))
    assert [(p, line, col) for p, line, col, _ in cuts] == [("k8s/pod.yaml", 12, 9)]


def test_parser_records_the_cut_and_its_words() -> None:
    script = parse_shell("vllm serve m \\\n  # x \\\n  --a 1 \\\n  --b\n")
    launch = script.commands[0]
    assert launch.cut is not None
    assert (launch.cut.line, launch.cut.column) == (2, 3)
    assert [t.text for t in launch.cut.words] == ["--a", "1", "--b"]
    assert script.commands[1].cut is None
