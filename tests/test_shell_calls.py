"""Shell indirections: a function launching vLLM with ``"$@"`` / ``$1``, ``eval`` of a
resolved string, and ``source FILE`` of a repository file."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import kinds, scan_text
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.shell import ShellScanner


def _launches(text: str) -> list[list[tuple[str, int, int]]]:
    return [
        [(t.text, t.line, t.column) for t in c.argv]
        for c in parse_shell(text).commands
        if c.argv and c.argv[0].text == "vllm"
    ]


@pytest.mark.parametrize(
    "define",
    [
        'start() {\n  vllm serve "$1" --port 1 "${@:2}"\n}\n',
        'start() {\n  local model=$1\n  shift\n  vllm serve "$model" --port 1 "$@"\n}\n',
        'function start {\n  local model="$1"; shift\n  vllm serve "$model" --port 1 $@\n}\n',
    ],
    ids=["slice", "local-shift", "function-keyword"],
)
def test_a_call_gives_its_words_to_the_body(define: str) -> None:
    text = define + "start Qwen/x --swap-space=4 --seed 2\n"
    (launch,) = _launches(text)
    words = [w for w, _l, _c in launch]
    assert words[:3] == ["vllm", "serve", "Qwen/x"]
    assert words[3:] == ["--port", "1", "--swap-space=4", "--seed", "2"]
    call = text.split("\n").index("start Qwen/x --swap-space=4 --seed 2") + 1
    # the call's words are placed at the call site
    assert [(at, c) for w, at, c in launch if w in ("Qwen/x", "--swap-space=4", "--seed")] == [(call, 7), (call, 14), (call, 29)]


def test_each_call_is_a_launch_and_reports_at_its_call_site() -> None:
    text = (
        'serve() { vllm serve "$1" "$@"; }\n'
        "serve m1 --num-scheduler-steps 8\n"
        "serve m2 --calculate-kv-scales\n"
    )
    items = scan_text(ShellScanner(), "run.sh", text)
    launches = kinds(items, FactKind.LAUNCH)
    assert len(launches) == 2 and len({f.group for f in launches}) == 2
    assert sorted(f.model or "" for f in launches) == ["m1", "m2"]
    args = {(f.name, f.location.line, f.location.column) for f in kinds(items, FactKind.ARG)}
    assert ("num_scheduler_steps", 2, 10) in args and ("calculate_kv_scales", 3, 10) in args


def test_call_words_from_branches_give_one_launch_per_value() -> None:
    text = (
        'case "$1" in a) EXTRA="--seed 1" ;; *) EXTRA="--seed 2" ;; esac\n'
        'go() { vllm serve m "$@"; }\n'
        "go $EXTRA --port 3\n"
    )
    assert sorted([w for w, _l, _c in launch][3:] for launch in _launches(text)) == [
        ["--seed", "1", "--port", "3"],
        ["--seed", "2", "--port", "3"],
    ]


def test_an_operator_on_the_parameters_is_not_guessed() -> None:
    text = 'go() { vllm serve m ${@:2:1} "${1#--}"; }\ngo --seed --port 1\n'
    (launch,) = parse_shell(text).commands
    assert [(t.text, t.resolved) for t in launch.argv][3:] == [("--port", True), ("${1#--}", False)]


def test_a_function_never_called_is_read_once_unresolved() -> None:
    text = 'go() { vllm serve m --seed 1 "$@"; }\n'
    script = parse_shell(text)
    (launch,) = [c for c in script.commands if c.argv[0].text == "vllm"]
    assert [t.resolved for t in launch.argv] == [True] * 5 + [False]


def test_a_recursive_function_stops() -> None:
    text = 'f() { vllm serve m "$@"; f "$@" --seed 1; }\nf --port 1\n'
    assert 1 <= len(_launches(text)) <= 5


@pytest.mark.parametrize(
    "text",
    [
        'cmd="vllm serve m --swap-space 4"\neval "$cmd"\n',
        "cmd='vllm serve m --swap-space 4'\neval $cmd\n",
        'eval "vllm serve m --swap-space 4"\n',
        'eval vllm serve m "--swap-space 4"\n',
    ],
    ids=["quoted-var", "unquoted-var", "literal", "words"],
)
def test_eval_of_a_resolved_string_is_a_launch_left_to_a_person(text: str) -> None:
    items = scan_text(ShellScanner(), "run.sh", text)
    (launch,) = kinds(items, FactKind.LAUNCH)
    (arg,) = [f for f in kinds(items, FactKind.ARG) if f.name == "swap_space"]
    assert arg.value == "4" and arg.location.line == 1
    assert arg.spans is None or arg.spans.cut is None  # no fix: the words are not where they run


def test_eval_of_an_unknown_string_is_not_invented() -> None:
    assert kinds(scan_text(ShellScanner(), "run.sh", 'eval "$CMD"\nvllm serve m\n'), FactKind.ARG) == []


@pytest.mark.parametrize("text", ['eval "vllm serve m --seed 1 $FLAGS"\n', "eval vllm serve m --seed 1 '$FLAGS'\n"])
def test_eval_of_a_partly_known_string_is_an_unresolved_launch(text: str) -> None:
    items = scan_text(ShellScanner(), "run.sh", text)
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert not launch.resolved and "$FLAGS" in (launch.value or "")
    assert [f.name for f in kinds(items, FactKind.ARG)] == ["seed"]


def _scan(root: Path) -> list[tuple[str, str, int | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0", from_version="0.17.0"))
    return sorted(
        (f.rule.id, f.location.path or "", f.location.line, f.location.column)
        for f in report.findings
        if f.rule.id.startswith("VUC0") and not f.rule.id.startswith("VUC000")
    )


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("source conf/flags.env", "conf/flags.env"),  # root-relative
        (". ./flags.sh", "scripts/flags.sh"),  # script-relative
        ('source "$(dirname "$0")/../conf/flags.env"', "conf/flags.env"),
        ("set -a; . conf/flags.env; set +a", "conf/flags.env"),
    ],
)
def test_a_sourced_file_gives_the_launch_its_variables(tmp_path: Path, line: str, where: str) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "scripts").mkdir()
    flags = 'MODEL_ID=facebook/opt-125m\nENGINE_FLAGS="--seed 1 --num-scheduler-steps 8"\n'
    (tmp_path / where).write_text(flags)
    (tmp_path / "scripts" / "serve.sh").write_text(f"#!/bin/bash\n{line}\nvllm serve \"$MODEL_ID\" $ENGINE_FLAGS\n")
    found = _scan(tmp_path)
    assert ("VUC0101-001", where, 2, 24) in found, found


def test_a_sourced_file_that_is_missing_leaves_the_launch_unresolved(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("#!/bin/bash\nsource ./nowhere.env\nvllm serve m $ENGINE_FLAGS\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.17.0"))
    assert _scan(tmp_path) == []
    assert any("unresolved" in n and "ENGINE_FLAGS" in n for n in report.notes), report.notes


def test_a_file_sourced_in_a_branch_is_one_of_the_values() -> None:
    files = {"prod.env": 'EXTRA="--seed 7"\nexport PORT=9\n'}
    text = 'EXTRA="--enforce-eager"\nif [ -f prod.env ]; then\n  . prod.env\nfi\nvllm serve m $EXTRA --port $PORT\n'
    script = parse_shell(text, sourced=lambda written: (files[written], written) if written in files else None)
    launches = [[(t.text, t.path) for t in c.argv[3:]] for c in script.commands if c.argv[0].text == "vllm"]
    assert sorted(launches) == sorted(
        [
            [("--seed", "prod.env"), ("7", "prod.env"), ("--port", None), ("9", "prod.env")],
            [("--enforce-eager", None), ("--port", None), ("9", "prod.env")],
        ]
    )
    assert script.sourced == ["prod.env"]
    # words from the sourced file are placed there, never cut in the script
    assert all(t.span is None for c in script.commands for t in c.argv if t.path == "prod.env" and t.text == "--seed")


def test_a_call_word_used_unquoted_is_split_as_the_shell_splits_it(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine import run_scan
    from vllm_upgrade_check.model.options import ScanOptions

    script = (
        'go(){ vllm serve org/m $1 "$2"; }\ngo "--tensor-parallel-size 2" --port=1\n'
        'launch(){ local o=$1; vllm serve m $o; }\nlaunch "--max-model-len 4096 --num-scheduler-steps 3"\n'
        'q(){ vllm serve org/m "$1"; }\nq "--swap-space 4"\n'
    )
    (tmp_path / "a.sh").write_text(script)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.20.0"))
    got = sorted((f.rule.id, f.location.line, f.location.column) for f in report.findings)
    # $1 unquoted splits (no one-word finding); "$1" quoted is one word, which argparse refuses
    assert got == [("VUC000-001", 6, 4), ("VUC0101-001", 4, 30)]
