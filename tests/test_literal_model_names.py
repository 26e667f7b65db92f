"""Model names (and other text of the user's files) print literally in console and Markdown
output: no rich markup or emoji code is read in them, no Markdown emphasis, link or broken
code span is made of them."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.reporters._common import md_code, md_text

ODD = [
    "inceptionai/jais-[13b]_chat*",
    "core42/jais__bold__",
    "org/jais-*ab*_c_",
    "org/jais-:fire:x",
    "org/jais-x\\[bold]y",
    "org/jais-<b>|x`y",
]


def _repo(root: Path) -> Path:
    lines = ["#!/bin/sh"] + [f"vllm serve '{name}'" for name in ODD]
    (root / "run.sh").write_text("\n".join(lines) + "\n")
    return root


def _scan(root: Path, fmt: str) -> str:
    _register()
    result = CliRunner().invoke(
        app, ["scan", str(root), "--from", "0.22.0", "--to", "0.24.0", "--format", fmt]
    )
    assert result.exit_code == 1, result.output
    return result.output


def test_console_prints_each_name_as_written(tmp_path: Path) -> None:
    out = _scan(_repo(tmp_path), "console")
    for line, name in enumerate(ODD, start=2):
        assert f"run.sh:{line}:13 blocker VUC0230-008 {name}\n" in out


def test_markdown_shows_each_name_in_one_code_span(tmp_path: Path) -> None:
    out = _scan(_repo(tmp_path), "markdown")
    for line, name in enumerate(ODD, start=2):
        span = f"``{name}``" if "`" in name else f"`{name}`"
        assert f"- [run.sh:{line}](run.sh#L{line}): {span}\n" in out


def test_md_code_and_md_text() -> None:
    assert (
        md_code("a`b") == "``a`b``"
        and md_code("`x") == "`` `x ``"
        and md_code("BAAI/bge-m3") == "`BAAI/bge-m3`"
    )
    assert md_text("`vllm serve` rejects org/jais__x__ [a](b) *y* <i>") == (
        "`vllm serve` rejects org/jais\\_\\_x\\_\\_ \\[a\\](b) \\*y\\* \\<i>"
    )
    assert md_text("swap_space stays; an odd ` tick") == "swap_space stays; an odd \\` tick"


def test_markdown_paths_and_reasons_are_literal(tmp_path: Path) -> None:
    (tmp_path / "cfg_[x]").mkdir()
    (tmp_path / "cfg_[x]" / "settings.yaml").write_text("model: a\nport: 1\nseed: 2\nswap-space: 4\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\nvllm serve 'core42/jais-x' --swap-space 4\n")
    out = _scan(tmp_path, "markdown")
    assert "[cfg\\_\\[x\\]/settings.yaml:1](cfg_%5Bx%5D/settings.yaml#L1)" in out


def test_plan_markdown_table_cells_are_literal(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\nvllm serve 'org/jais-a|b_[x]*'\n")
    _register()
    result = CliRunner().invoke(app, ["plan", str(tmp_path), "--from", "0.22.0", "--format", "markdown"])
    row = next(line for line in result.output.splitlines() if line.startswith("| 0.23.0 |"))
    assert row.startswith("| 0.23.0 | serves org/jais-a\\|b\\_\\[x\\]\\* (run.sh:2); ") and row.endswith(" |")
    assert row.replace("\\|", "").count("|") == 4  # three cells: the name's pipe is escaped
