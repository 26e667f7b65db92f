"""Faults a new-user trial found: a CI step's ``${{ }}`` expressions, flag-list env vars
read as CLI flags, a continuation at a requirements file's end, Dockerfile exec-form words
that Docker never expands, and a Kubernetes ``$(VAR)`` flag reported twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions


def _scan(root: Path, from_version: str | None = "0.20.0", **files: str) -> Report:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return run_scan(ScanOptions.of(paths=[root], from_version=from_version, to_version="0.33.0"))


def _found(report: Report, rule: str | None = None) -> list[tuple[str, str, int, int]]:
    return sorted(
        (f.rule.id, f.location.path or "", f.location.line or 0, f.location.column or 0)
        for f in report.findings
        if rule is None or f.rule.id == rule
    )


# -- 3. requirements: a continuation at the end of the file ----------------------------------
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("vllm==0.26.0 \\\n", 1),
        ("vllm==0.26.0\\", 1),  # no final newline
        ("torch==2.9.0\nvllm==0.26.0 \\\n", 2),
        ("vllm \\\n  ==0.26.0 \\\n", 1),  # a continued requirement, its last line continued too
        ("torch \\\n# a comment \\\nvllm==0.26.0\n", 3),  # a comment line is never continued
    ],
)
def test_requirements_continuation_at_eof_reads_as_pip(tmp_path: Path, text: str, line: int) -> None:
    report = _scan(tmp_path, None, **{"requirements.txt": text})
    assert not report.skipped and report.exit_code != 2
    assert report.from_version == "0.26.0"
    assert [(f.location.line, f.fact.name) for f in report.findings if f.rule.id == "VUC000-010"] == [(line, "vllm")]


def test_requirements_continuation_joins_without_a_blank_as_pip(tmp_path: Path) -> None:
    # pip strips the backslash and puts nothing between the lines: `vllm==0.2` + `6.0`
    report = _scan(tmp_path, None, **{"requirements.txt": "vllm==0.2\\\n6.0\n"})
    assert report.from_version == "0.26.0" and not report.skipped


# -- 2. env vars that wrappers turn into flags match cli-origin rules -------------------------
def _notes(report: Report) -> list[str]:
    return [n for n in report.notes if n.startswith("unresolved:")]


@pytest.mark.parametrize(
    ("env", "launch", "column", "severity"),
    [
        (("p.env", "ENGINE_PASSTHROUGH=--swap-space 4\n"), "vllm serve m $ENGINE_PASSTHROUGH\n", 20, "blocker"),
        (("q.env", 'ENGINE_PASSTHROUGH="--seed 1 --swap-space 4"\n'), "vllm serve m ${ENGINE_PASSTHROUGH}\n", 30, "blocker"),
        (("vllm.env", "VLLM_EXTRA_FLAGS='--swap-space 4'\n"), "source ./vllm.env\nvllm serve m $VLLM_EXTRA_FLAGS\n", 19, "blocker"),
        (("prod.env", "export OPTS=--swap-space 4\n"), "vllm serve m $OPTS\n", 13, "blocker"),
        # read by no launch: the convention is recognised, not read
        (("p.env", "ENGINE_PASSTHROUGH=--swap-space 4\n"), "vllm serve m\n", 20, "warning"),
    ],
)
def test_flag_list_env_var_is_cli_flags(
    tmp_path: Path, env: tuple[str, str], launch: str, column: int, severity: str
) -> None:
    report = _scan(tmp_path, **{env[0]: env[1], "run.sh": "#!/bin/bash\n" + launch})
    found = [(f.location.path, f.location.line, f.location.column, f.severity.value) for f in report.findings if f.rule.id == "VUC0180-001"]
    assert found == [(env[0], 1, column, severity)]
    assert _notes(report) == []


def test_named_env_var_matches_a_cli_rule(tmp_path: Path) -> None:
    report = _scan(tmp_path, **{"r.env": "MAX_NUM_SEQS=8\nSWAP_SPACE=4\n", "run.sh": "vllm serve m\n"})
    assert [(f.location.line, f.severity.value) for f in report.findings if f.rule.id == "VUC0180-001"] == [(2, "warning")]


def test_only_the_unread_variable_stays_in_the_note(tmp_path: Path) -> None:
    report = _scan(tmp_path, **{".env": "A=--swap-space 4\n", "run.sh": "vllm serve m $A $B\n"})
    assert _found(report, "VUC0180-001") == [("VUC0180-001", ".env", 1, 3)]
    notes = _notes(report)
    assert len(notes) == 1 and notes[0].startswith("unresolved: $B at run.sh:1")


# -- 5. a Kubernetes $(VAR) flag: one finding, where the fix edits ----------------------------
def _deployment(args: str, env: str, command: str = "") -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: server\n          image: vllm/vllm-openai:v0.20.0\n"
        f"{command}          args:\n{args}          env:\n{env}"
    )


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        ("            - --model=m\n            - $(EXTRA)\n", "            - {name: EXTRA, value: --override-attention-dtype=half}\n", 12),
        ('            - "--model=m"\n            - "$(EXTRA)"\n', "            - name: EXTRA\n              value: \"--override-attention-dtype=half\"\n", 12),
        ('            ["--model=m", "$(EXTRA)"]\n', "            - {name: EXTRA, value: '--override-attention-dtype=half'}\n", 11),
    ],
)
def test_k8s_env_flag_expanded_into_args_is_reported_once(tmp_path: Path, args: str, env: str, line: int) -> None:
    report = _scan(tmp_path, **{"d.yaml": _deployment(args, env)})
    found = [(f.location.line, f.severity.value) for f in report.findings if f.rule.id == "VUC0280-002"]
    assert found == [(line, "blocker")]


def test_k8s_env_var_nothing_reads_after_the_fix_is_not_reported(tmp_path: Path) -> None:
    env = "            - {name: EXTRA, value: --override-attention-dtype=half}\n"
    report = _scan(tmp_path, **{"d.yaml": _deployment("            - --model=m\n", env)})
    assert _found(report, "VUC0280-002") == []


def test_k8s_env_var_a_shell_launch_reads_by_name_is_reported_at_the_env(tmp_path: Path) -> None:
    # sh -c: the shell, not the kubelet, expands $EXTRA from the container's env
    command = '          command: ["/bin/sh", "-c"]\n'
    args = '            - "exec vllm serve m $EXTRA"\n'
    env = "            - {name: EXTRA, value: --override-attention-dtype=half}\n"
    report = _scan(tmp_path, **{"d.yaml": _deployment(args, env, command)})
    found = [(f.location.line, f.severity.value) for f in report.findings if f.rule.id == "VUC0280-002"]
    assert found == [(14, "blocker")]


# -- 4. Dockerfile exec form: Docker expands no variable ---------------------------------------
FROM26 = "FROM vllm/vllm-openai:v0.26.0\n"


@pytest.mark.parametrize(
    ("body", "word"),
    [
        ('ENV FLAGS="--swap-space 4"\nENTRYPOINT ["vllm", "serve", "m", "$FLAGS"]\n', "$FLAGS"),
        ("ENV FLAGS=--swap-space\\ 4\nCMD [\"${FLAGS}\"]\n", "${FLAGS}"),  # the image's own entry point
        ('ENV FLAGS="--swap-space 4"\nENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]\nCMD ["--model", "m", "${FLAGS:-}"]\n', "${FLAGS:-}"),
        ('ENV FLAGS="--swap-space 4"\nENTRYPOINT ["vllm", "serve"]\nCMD ["m", "$FLAGS"]\n', "$FLAGS"),
    ],
)
def test_exec_form_words_are_not_expanded(tmp_path: Path, body: str, word: str) -> None:
    report = _scan(tmp_path, "0.26.0", Dockerfile=FROM26 + body)
    assert _found(report, "VUC0180-001") == []  # no ENV line finding: nothing reads FLAGS
    notes = _notes(report)
    assert len(notes) == 1 and word in notes[0] and "Docker does not expand variables" in notes[0], notes


def test_the_trial_dockerfile_reports_nothing_at_its_env_lines(tmp_path: Path) -> None:
    body = 'ENV FLAGS="--swap-space 4"\nENV KV=--calculate-kv-scales\nENTRYPOINT ["vllm", "serve", "m", "$FLAGS"]\nCMD ["${KV}"]\n'
    report = _scan(tmp_path, "0.26.0", Dockerfile=FROM26 + body)
    assert [f.rule.id for f in report.findings] == ["VUC000-010"]
    assert "$FLAGS ${KV}" in _notes(report)[0]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        # shell form: the shell expands ENV when the container starts
        ('ENV FLAGS="--swap-space 4"\nCMD vllm serve m $FLAGS\n', (2, 12)),
        ('ENV FLAGS="--swap-space 4"\nENTRYPOINT vllm serve m ${FLAGS}\n', (2, 12)),
        # exec form running a shell: the shell expands it (the flag placed in the ENV value)
        ('ENV FLAGS="--swap-space 4"\nENTRYPOINT ["/bin/sh", "-c", "exec vllm serve m $FLAGS"]\n', (2, 12)),
    ],
)
def test_a_shell_still_expands_env(tmp_path: Path, body: str, where: tuple[int, int]) -> None:
    report = _scan(tmp_path, "0.26.0", Dockerfile=FROM26 + body)
    assert [(line, col) for _r, _p, line, col in _found(report, "VUC0180-001")] == [where]
    assert _notes(report) == []


# -- 1. GitHub Actions ${{ }} expressions and CI variables ------------------------------------
def _workflow(steps: str, env: str = "", job_env: str = "") -> str:
    return f"name: e2e\non: push\n{env}jobs:\n  e2e:\n    runs-on: gpu\n{job_env}    steps:\n{steps}"


WF = ".github/workflows/e2e.yml"


@pytest.mark.parametrize(
    ("steps", "where", "named"),
    [
        (
            "      - run: docker run -d vllm/vllm-openai:${{ env.T }} --model m --max-num-partial-prefills 2 $EXTRA\n",
            (7, 68),
            ["${{ env.T }}", "$EXTRA"],
        ),
        (
            "      - run: >\n          docker run --gpus all vllm/vllm-openai:${{ env.T }}\n"
            "          --model m --max-num-partial-prefills 2\n",
            (9, 21),
            ["${{ env.T }}"],
        ),
        (
            "      - run: |\n          vllm serve ${{ matrix.model }} \\\n            --max-num-partial-prefills 2\n",
            (9, 13),
            ["${{ matrix.model }}"],
        ),
        (
            '      - run: vllm serve m "${{ inputs.args }}" --max-num-partial-prefills=2\n',
            (7, 48),
            ['"${{ inputs.args }}"'],
        ),
        (
            "      - name: serve\n        run: vllm serve m --${{ inputs.flag }} 1 --max-num-partial-prefills 2\n",
            (8, 50),
            ["--${{ inputs.flag }}"],
        ),
    ],
)
def test_workflow_expressions_are_unresolved_words(
    tmp_path: Path, steps: str, where: tuple[int, int], named: list[str]
) -> None:
    report = _scan(tmp_path, **{WF: _workflow(steps)})
    assert [(line, col) for _r, _p, line, col in _found(report, "VUC0270-001")] == [where]
    notes = _notes(report)
    assert len(notes) == 1 and all(n in notes[0] for n in named), notes
    assert not [f for f in report.findings if "inputs" in f.fact.raw or "\ue000" in f.fact.raw]


def test_workflow_env_resolves_the_scripts_variables(tmp_path: Path) -> None:
    steps = "      - run: vllm serve m $EXTRA $MORE\n        env:\n          MORE: --num-scheduler-steps 4\n"
    wf = _workflow(steps, env="env:\n  EXTRA: --swap-space 4\n")
    report = _scan(tmp_path, **{WF: wf})
    assert _found(report, "VUC0180-001") == [("VUC0180-001", WF, 4, 10)]
    assert _found(report, "VUC0101-001") == [("VUC0101-001", WF, 11, 17)]
    assert _notes(report) == []


def test_a_step_env_overrides_the_job_and_an_expression_value_stays_unresolved(tmp_path: Path) -> None:
    steps = (
        "      - run: vllm serve m $EXTRA\n        env:\n          EXTRA: --seed 1\n"
        "      - run: vllm serve m $SECRET\n"
    )
    wf = _workflow(steps, job_env="    env:\n      EXTRA: --swap-space 4\n      SECRET: ${{ secrets.FLAGS }}\n")
    report = _scan(tmp_path, **{WF: wf})
    assert _found(report, "VUC0180-001") == []  # the step's EXTRA wins
    notes = _notes(report)
    assert len(notes) == 1 and "$SECRET" in notes[0]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('variables:\n  VLLM_ARGS: "--num-scheduler-steps 4"\nserve:\n  script:\n    - vllm serve m $VLLM_ARGS\n', (2, 15)),
        (
            "serve:\n  variables:\n    VLLM_ARGS:\n      value: --num-scheduler-steps 4\n      description: x\n"
            "  script:\n    - vllm serve m ${VLLM_ARGS}\n",
            (4, 14),
        ),
    ],
)
def test_gitlab_variables_resolve_the_script(tmp_path: Path, text: str, where: tuple[int, int]) -> None:
    report = _scan(tmp_path, **{".gitlab-ci.yml": text})
    assert [(line, col) for _r, _p, line, col in _found(report, "VUC0101-001")] == [where]
    assert _notes(report) == []


def test_gitlab_inputs_are_unresolved_words(tmp_path: Path) -> None:
    text = "serve:\n  image: vllm/vllm-openai:v0.20.0\n  script:\n    - vllm serve $[[ inputs.model ]] --swap-space 4\n"
    report = _scan(tmp_path, **{".gitlab-ci.yml": text})
    assert _found(report, "VUC0180-001") == [("VUC0180-001", ".gitlab-ci.yml", 4, 38)]
    notes = _notes(report)
    assert len(notes) == 1 and "$[[ inputs.model ]]" in notes[0]
    assert not [f for f in report.findings if f.fact.kind.value == "model"]


# -- found on the way: a sh -c script whose $(VAR) the kubelet expands is cut where written ---
def _pod(script: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: v}\nspec:\n  containers:\n    - name: server\n"
        '      image: vllm/vllm-openai:v0.20.0\n      command: ["/bin/sh", "-c"]\n      args:\n'
        f"{script}      env:\n        - {{name: MODEL_NAME, value: facebook/opt-125m}}\n"
        '        - {name: PREFILLS, value: "2"}\n'
    )


@pytest.mark.parametrize(
    ("script", "where", "fixed"),
    [
        (
            "        - |\n          vllm serve $(MODEL_NAME) \\\n            --swap-space 4 \\\n"
            "            --max-num-partial-prefills $(PREFILLS)\n",
            [(12, 13), (13, 13)],
            # --swap-space goes; the flag whose value is a $(VAR) the kubelet expands is left to a person
            "        - |\n          vllm serve $(MODEL_NAME) \\\n            --max-num-partial-prefills $(PREFILLS)\n",
        ),
        (
            '        - "exec vllm serve $(MODEL_NAME) --max-num-partial-prefills $(PREFILLS) --swap-space 4 --port 8000"\n',
            [(10, 42), (10, 81)],
            '        - "exec vllm serve $(MODEL_NAME) --max-num-partial-prefills $(PREFILLS) --port 8000"\n',
        ),
    ],
)
def test_k8s_shell_script_with_references_is_fixed_where_written(
    tmp_path: Path, script: str, where: list[tuple[int, int]], fixed: str
) -> None:
    from typer.testing import CliRunner

    from vllm_upgrade_check.cli import _register, app

    _register()
    report = _scan(tmp_path, **{"pod.yaml": _pod(script)})
    found = sorted((line, col) for rule, _p, line, col in _found(report) if rule in ("VUC0180-001", "VUC0270-001"))
    assert found == sorted(where)
    result = CliRunner().invoke(app, ["fix", str(tmp_path), "--from", "0.20.0", "--to", "0.33.0", "--no-bump"])
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / "pod.yaml").read_text(encoding="utf-8") == _pod(fixed)
