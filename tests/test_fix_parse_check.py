"""The check before a fix is written refuses fixed text that no longer parses where the old
text did, whatever the file is (a kustomize patch file configures no vLLM by itself); a
Kubernetes ``$(VAR)`` word of an ``sh -c`` script is never edited as its value measures; a
Python list's line of words goes with its comment, never joined onto another line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.fixing.syntax import syntax_problems
from vllm_upgrade_check.fixing.verify import FileReading, check

_register()
runner = CliRunner()

BROKEN = {
    "p.json": ('[{"op": "add", "value": "--x"}]\n', '[{"op": "add", "value": }]\n'),
    "patch.yaml": ("- op: add\n  value: --x\n", "- op: add\n  value: [--x\n"),
    "Kustomization": ("patches:\n  - path: a.yaml\n", "patches:\n  - path: 'a.yaml\n"),
    "conf.toml": ('args = ["--x"]\n', 'args = ["--x",\n'),
    "launch.py": ('cmd = ["vllm", "serve", "m"]\n', 'cmd = ["vllm", "serve", "m"\n'),
    "run.sh": ("vllm serve m --x 1\n", 'vllm serve m "--x 1\n'),
    "Dockerfile": ('FROM x\nCMD ["vllm", "serve"]\n', 'FROM x\nCMD ["vllm", "serve",]\n'),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_text_that_stops_parsing_is_refused(name: str) -> None:
    good, bad = BROKEN[name]
    assert syntax_problems(name, good) == ()
    assert syntax_problems(name, bad) != ()
    before = FileReading((), frozenset(), syntax_problems(name, good))
    after = FileReading((), frozenset(), syntax_problems(name, bad))
    reason = check(before, after, [])
    assert reason is not None and reason.startswith("the fixed text would not parse")
    assert check(before, before, []) is None


def test_text_that_did_not_parse_before_is_no_new_problem() -> None:
    bad = '[{"op": "add", "value": }]\n'
    reading = FileReading((), frozenset(), syntax_problems("p.json", bad))
    assert check(reading, reading, []) is None
    assert syntax_problems("x.sh", "echo ok\n", ["shell"]) == ()
    assert syntax_problems("serve", 'echo "x\n', ["shell"]) != ()  # a script named by its scanner
    assert syntax_problems("notes.txt", "{{{") == ()  # no kind checked
    template = "args:\n{{- range .Values.args }}\n  - {{ . }}\n{{- end }}\n"
    assert syntax_problems("templates/deploy.yaml", template) == ()  # read as the scan reads it
    assert syntax_problems("Dockerfile", "FROM x\nHEALTHCHECK NONE\nCMD vllm serve m\n") == ()


POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: s\n"
    "      image: vllm/vllm-openai:v0.20.0\n      command: [\"/bin/sh\", \"-c\"]\n      args:\n        - |\n"
    "{script}"
    "      env:\n        - {name: MODEL_NAME, value: facebook/opt-125m-with-a-long-name}\n"
    "        - {name: PREFILLS, value: \"2\"}\n"
)


def _pod(script: str) -> str:
    return POD.replace("{script}", script)


def _fix(root: Path) -> str:
    return runner.invoke(app, ["fix", str(root), "--from", "0.20.0", "--to", "0.28.0", "--no-bump"]).output


SCRIPTS = {
    "value-last": (
        "          vllm serve $(MODEL_NAME) \\\n            --swap-space 4 \\\n"
        "            --max-num-partial-prefills $(PREFILLS)\n",
        "          vllm serve $(MODEL_NAME) \\\n            --max-num-partial-prefills $(PREFILLS)\n",
    ),
    "value-middle-one-line": (
        "          vllm serve $(MODEL_NAME) --max-num-partial-prefills $(PREFILLS) --calculate-kv-scales --port 8000\n",
        "          vllm serve $(MODEL_NAME) --max-num-partial-prefills $(PREFILLS) --port 8000\n",
    ),
    "inline-value": (
        "          vllm serve $(MODEL_NAME) --max-num-partial-prefills=$(PREFILLS) --swap-space 4\n",
        "          vllm serve $(MODEL_NAME) --max-num-partial-prefills=$(PREFILLS)\n",
    ),
    "undefined-variable-cut-as-written": (
        "          vllm serve $(MODEL_NAME) --swap-space $(UNSET) --seed 1\n",
        "          vllm serve $(MODEL_NAME) --seed 1\n",
    ),
    "escaped-dollar": (
        "          echo $$HOME && vllm serve $(MODEL_NAME) --calculate-kv-scales --seed 1\n",
        "          echo $$HOME && vllm serve $(MODEL_NAME) --seed 1\n",
    ),
}


@pytest.mark.parametrize("case", sorted(SCRIPTS))
def test_k8s_expansions_are_measured_as_written(tmp_path: Path, case: str) -> None:
    before, after = SCRIPTS[case]
    pod = tmp_path / "pod.yaml"
    pod.write_text(_pod(before))
    output = _fix(tmp_path)
    assert pod.read_text() == _pod(after), output
    if "PREFILLS)" in before:  # the flag whose value is a variable: left to a person
        assert "--max-num-partial-prefills" in output.split("Needs a person", 1)[1]


def test_k8s_expansion_in_a_flow_script_is_left_to_a_person(tmp_path: Path) -> None:
    text = _pod("").replace(
        '      args:\n        - |\n', '      args: ["vllm serve $(MODEL_NAME) --max-num-partial-prefills $(PREFILLS)"]\n'
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(text)
    output = _fix(tmp_path)
    assert pod.read_text() == text  # not a byte changed
    assert "Needs a person" in output


PY = (
    "import subprocess\n\n\ndef start(m, tp):\n    subprocess.run(\n        [\n"
    '            "vllm", "serve", m,\n{lines}        ],\n        check=True,\n    )\n'
)

PY_CASES = {
    "pair-with-comment": (
        '            "--tensor-parallel-size", str(tp),\n            "--swap-space", "4",  # old tuning\n'
        '            f"--seed={tp}",\n',
        '            "--tensor-parallel-size", str(tp),\n            f"--seed={tp}",\n',
    ),
    "pair-then-neighbour-on-its-line": (
        '            "--tensor-parallel-size", str(tp),\n            "--swap-space", "4", "--seed", "1",  # tuning\n',
        '            "--tensor-parallel-size", str(tp),\n            "--seed", "1",  # tuning\n',
    ),
    "last-pair-no-comma": (
        '            "--tensor-parallel-size", str(tp),\n            "--swap-space", "4"  # old\n',
        '            "--tensor-parallel-size", str(tp),\n',
    ),
    "pair-after-neighbour-on-its-line": (
        '            "--seed", "1", "--swap-space", "4",  # old tuning\n',
        '            "--seed", "1",  # old tuning\n',
    ),
}


@pytest.mark.parametrize("case", sorted(PY_CASES))
def test_python_comment_stays_with_its_line(tmp_path: Path, case: str) -> None:
    before, after = PY_CASES[case]
    path = tmp_path / "launch.py"
    path.write_text(PY.format(lines=before))
    output = _fix(tmp_path)
    assert path.read_text() == PY.format(lines=after), output
    ast.parse(path.read_text())  # still Python


OTHER_LISTS = {
    "compose.yaml": (
        'services:\n  vllm:\n    image: vllm/vllm-openai:v0.20.0\n    command: [\n      "--model", "m",\n'
        '      "--swap-space", "4", "--seed", "1",  # tuning\n      "--port", "8000"]\n',
        'services:\n  vllm:\n    image: vllm/vllm-openai:v0.20.0\n    command: [\n      "--model", "m",\n'
        '      "--seed", "1",  # tuning\n      "--port", "8000"]\n',
    ),
    "run.sh": (
        '#!/bin/bash\nARGS=(\n  --model m\n  --swap-space 4 --seed 1  # tuning\n)\nvllm serve "${ARGS[@]}"\n',
        '#!/bin/bash\nARGS=(\n  --model m\n  --seed 1  # tuning\n)\nvllm serve "${ARGS[@]}"\n',
    ),
}


@pytest.mark.parametrize("name", sorted(OTHER_LISTS))
def test_words_that_start_a_line_leave_the_rest_of_it_in_place(tmp_path: Path, name: str) -> None:
    before, after = OTHER_LISTS[name]
    (tmp_path / name).write_text(before)
    output = _fix(tmp_path)
    assert (tmp_path / name).read_text() == after, output
