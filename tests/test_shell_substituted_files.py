"""``$(cat FILE)``, ``$(< FILE)``, backquotes and ``$(grep -v PATTERN FILE)`` in a vLLM
launch: a file of the repository (relative to the script, or an absolute path that maps
into the repository by its tail) gives its words as the launch's args, reported at that
file's lines; any other file leaves the launch unresolved, the note naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell


def scan(tmp_path: Path, files: dict[str, str]) -> Report:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.16.0"))


def rows(report: Report) -> list[tuple[str, str | None, int | None, int | None]]:
    return sorted((f.rule.id, f.location.path, f.location.line, f.location.column) for f in report.findings)


FLAGS = "--port 8000\n--max-model-len 4096  --swap-space 4\n"


@pytest.mark.parametrize(
    ("script", "flags_at"),
    [
        ("vllm serve org/m $(cat flags.txt)", "bin/flags.txt"),
        ("vllm serve org/m `cat flags.txt`", "bin/flags.txt"),
        ("vllm serve org/m $(< ./flags.txt) --port 1", "bin/flags.txt"),
        ("vllm serve org/m $(cat conf/flags.txt)", "conf/flags.txt"),  # from the root
        ("vllm serve org/m $(< /etc/vllm/flags.txt)", "deploy/etc/vllm/flags.txt"),
    ],
)
def test_the_file_words_are_the_launch_args(tmp_path: Path, script: str, flags_at: str) -> None:
    report = scan(tmp_path, {"bin/run.sh": f"#!/bin/bash\n{script}\n", flags_at: FLAGS})
    assert rows(report) == [("VUC0180-001", flags_at, 2, 23)]
    assert report.notes == ()


def test_grep_v_leaves_out_the_lines_it_drops(tmp_path: Path) -> None:
    args = "# engine flags\n--swap-space 4\n# --use-gpu-for-pooling-score\n"
    report = scan(tmp_path, {"run.sh": "#!/bin/bash\nvllm serve org/m $(grep -v '^#' args.txt)\n", "args.txt": args})
    assert rows(report) == [("VUC0180-001", "args.txt", 2, 1)]


def test_a_file_not_in_the_repository_is_named_unresolved(tmp_path: Path) -> None:
    report = scan(tmp_path, {"run.sh": "#!/bin/bash\nvllm serve org/m $(cat /opt/secret/args)\n"})
    assert rows(report) == []
    assert report.notes == (
        "unresolved: $(cat /opt/secret/args) at run.sh:2:1 (vllm serve); the flags it holds were not checked",
    )


def test_an_absolute_path_whose_tail_two_files_share_is_not_guessed(tmp_path: Path) -> None:
    report = scan(
        tmp_path,
        {"run.sh": "#!/bin/bash\nvllm serve org/m $(< /etc/args)\n", "a/args": FLAGS, "b/args": FLAGS},
    )
    assert rows(report) == []
    assert len(report.notes) == 1 and report.notes[0].startswith("unresolved: $(< /etc/args) at run.sh:2:1")


def test_the_parser_places_each_word_in_its_file() -> None:
    script = parse_shell(
        "vllm serve m $(cat f.txt) --x\n", files=lambda name: ("--a 1\n  --b\n", "conf/f.txt") if name == "f.txt" else None
    )
    argv = script.commands[0].argv
    assert [(t.text, t.path, t.line, t.column) for t in argv[3:]] == [
        ("--a", "conf/f.txt", 1, 1), ("1", "conf/f.txt", 1, 5), ("--b", "conf/f.txt", 2, 3), ("--x", None, 1, 27)
    ]
    assert script.substituted == ["f.txt"]
    assert parse_shell('vllm serve m "$(cat f.txt)"\n', files=lambda _n: ("--a\n", "f.txt")).commands[0].argv[3].resolved is False


def test_a_pipeline_of_filters_is_read_too(tmp_path: Path) -> None:
    args = "# engine flags\n--swap-space 4\n\n# --use-gpu-for-pooling-score\n"
    script = "#!/bin/bash\nvllm serve org/m $(cat args.txt | grep -v '^#' | xargs) --port 1\n"
    report = scan(tmp_path, {"run.sh": script, "args.txt": args})
    assert rows(report) == [("VUC0180-001", "args.txt", 2, 1)]
    other = scan(tmp_path, {"run.sh": "#!/bin/bash\nvllm serve org/m $(cat args.txt | sed 's/#.*//')\n"})
    assert rows(other) == [] and len(other.notes) == 1  # sed's output is not guessed
