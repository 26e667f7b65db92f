"""An f-string argv word whose flag name is literal and whose value is computed
(``f"--num-scheduler-steps={n * 2}"``) is that flag: reported at the flag's column (fix leaves
it to a person), while an f-string that computes the name is no flag of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions


def _findings(tmp_path: Path, word: str) -> list[tuple[str, str, int | None, int | None]]:
    line = f'subprocess.run(["vllm", "serve", "acme/m", {word}])'
    (tmp_path / "launch.py").write_text(f"import subprocess\nn = int(input())\n{line}\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.20.0"))
    return [(f.rule.id, f.severity.value, f.location.line, f.location.column) for f in report.findings]


@pytest.mark.parametrize("word", ['f"--num-scheduler-steps={n * 2}"', "f'--num-scheduler-steps={n}'",
                                  'rf"--num-scheduler-steps={n}"', 'F"--num-scheduler-steps={n!r}"'])
def test_a_literal_flag_name_with_a_computed_value_is_the_flag(tmp_path: Path, word: str) -> None:
    column = len('subprocess.run(["vllm", "serve", "acme/m", ') + len(word) - len(word.lstrip("rRfF")) + 2
    assert _findings(tmp_path, word) == [("VUC0101-001", "blocker", 3, column)]


@pytest.mark.parametrize("word", ['f"--{n}"', 'f"{n}"', 'f"--max-model-len={n}"'])
def test_no_finding_without_a_removed_flag_name(tmp_path: Path, word: str) -> None:
    assert _findings(tmp_path, word) == []


@pytest.mark.parametrize(
    "call",
    [
        'subprocess.run(shlex.split(f"vllm serve {MODEL} {extra}"))',
        'subprocess.run(shlex.split("vllm serve " + MODEL + " " + extra))',
        'subprocess.Popen(shlex.split(f"vllm serve {MODEL} --port 8000 " + extra))',
    ],
)
def test_shlex_split_of_a_built_string_reads_its_constants(tmp_path: Path, call: str) -> None:
    text = (
        'import shlex\nimport subprocess\n\nMODEL = "acme/m"\n\n\ndef main():\n'
        '    extra = "--override-attention-dtype half --max-num-seqs 8"\n'
        f"    {call}\n"
    )
    (tmp_path / "launch.py").write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.20.0"))
    assert [(f.rule.id, f.location.line, f.location.column) for f in report.findings] == [("VUC0280-002", 8, 14)]
    assert not report.notes
