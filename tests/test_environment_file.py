"""systemd ``EnvironmentFile=`` values fed back into ``ExecStart=`` (issue 16): the file is
found in the repository by its trailing path components, its values are split as systemd
splits an unbraced ``$VAR``, and what cannot be found is named in the report's notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind, Span
from vllm_upgrade_check.model.options import ScanOptions

UNIT = """[Service]
EnvironmentFile={env}
ExecStart=/opt/venv/bin/vllm serve acme/m --port 9100 $OPTS
"""


def scan(tmp_path: Path, files: dict[str, str]) -> tuple[list[Fact], tuple[str, ...]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"), facts_out=facts)
    return facts, report.notes


def launch_args(facts: list[Fact]) -> list[tuple[str, str | None, str | None, int | None]]:
    return sorted(
        (f.name, f.value, f.location.path, f.location.line)
        for f in facts
        if f.kind == FactKind.ARG and f.scanner == "systemd"
    )


@pytest.mark.parametrize(
    ("env", "where"),
    [
        ("/opt/judge/flags.conf", "deploy/opt/judge/flags.conf"),  # the whole path, under deploy/
        ("/opt/judge/flags.conf", "ops/judge/flags.conf"),  # the longest common tail
        ("-/etc/x/flags.conf", "flags.conf"),  # optional, found by its name
    ],
)
def test_values_come_from_the_file_found(tmp_path: Path, env: str, where: str) -> None:
    facts, notes = scan(
        tmp_path,
        {"deploy/judge.service": UNIT.format(env=env), where: "# flags\nOPTS=--calculate-kv-scales --max-num-seqs 16\n"},
    )
    assert launch_args(facts) == [
        ("calculate_kv_scales", None, where, 2),
        ("max_num_seqs", "16", where, 2),
        ("port", "9100", "deploy/judge.service", 3),
    ]
    (flag,) = [f for f in facts if f.name == "calculate_kv_scales" and f.kind == FactKind.ARG]
    # written as it reads: a fix cuts the flag and the blank after it out of the value
    assert flag.location.column == 6 and flag.spans is not None and flag.spans.cut == Span(2, 6, 2, 28)
    assert not [n for n in notes if "unresolved" in n]


def test_the_longest_match_wins_over_a_name_alone(tmp_path: Path) -> None:
    facts, _ = scan(
        tmp_path,
        {
            "deploy/judge.service": UNIT.format(env="/opt/judge/flags.conf"),
            "judge/flags.conf": "OPTS=--max-num-seqs 16\n",
            "other/flags.conf": "OPTS=--max-num-seqs 99\n",
        },
    )
    assert ("max_num_seqs", "16", "judge/flags.conf", 1) in launch_args(facts)
    assert not [a for a in launch_args(facts) if a[1] == "99"]


def test_several_equal_matches_are_named_and_none_is_used(tmp_path: Path) -> None:
    facts, notes = scan(
        tmp_path,
        {
            "deploy/judge.service": UNIT.format(env="/opt/judge/flags.conf"),
            "a/flags.conf": "OPTS=--max-num-seqs 16\n",
            "b/flags.conf": "OPTS=--max-num-seqs 99\n",
        },
    )
    assert [a[0] for a in launch_args(facts)] == ["port"]
    (note,) = [n for n in notes if "unresolved" in n]
    assert "$OPTS" in note and "matches 2 files (a/flags.conf, b/flags.conf)" in note


def test_a_file_not_in_the_repository_is_named(tmp_path: Path) -> None:
    _facts, notes = scan(tmp_path, {"deploy/judge.service": UNIT.format(env="/opt/judge/flags.conf")})
    (note,) = [n for n in notes if "unresolved" in n]
    assert "EnvironmentFile=/opt/judge/flags.conf is not in the repository" in note


def test_file_values_win_and_braced_values_stay_one_word(tmp_path: Path) -> None:
    unit = (
        "[Service]\n"
        'Environment="OPTS=--max-num-seqs 1" SEEDED="--seed 7"\n'
        "EnvironmentFile=/etc/flags.conf\n"
        "ExecStart=/usr/bin/vllm serve m $OPTS ${SEEDED} $SEEDED\n"
    )
    facts, _ = scan(tmp_path, {"x.service": unit, "etc/flags.conf": "OPTS='--max-num-seqs 2'\n"})
    got = launch_args(facts)
    assert ("max_num_seqs", "2", "etc/flags.conf", 1) in got
    assert not [a for a in got if a[1] == "1"]
    assert ("seed 7", None, "x.service", 4) in got  # ${SEEDED}: one word
    assert ("seed", "7", "x.service", 2) in got  # $SEEDED: split


def test_a_unit_whose_exec_line_does_not_parse_fails_the_gate_closed(tmp_path: Path) -> None:
    """An unbalanced quote in ExecStart= (systemd refuses the line too) is a skipped file that
    configures vLLM: exit 2, never a silent pass."""
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.model.options import ScanOptions

    (tmp_path / "v.service").write_text('[Service]\nExecStart=/usr/bin/vllm serve m "--swap-space 4\n')
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    assert [(s.path, s.configures_vllm) for s in report.skipped] == [("v.service", True)]
    (tmp_path / "v.service").write_text('[Service]\nExecStart=/usr/bin/vllm serve m "--port" 9000\n')
    assert run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0")).skipped == ()
