"""Launches a second new-user trial found unread: a GitHub Actions ``${{ env.NAME }}`` whose
value the workflow's ``env:`` writes (an image, flags), ``docker exec``/``kubectl exec`` into
a running container, and argparse's ``--`` (no flag of its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions


def _found(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str, int, int]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.20.0"))
    return sorted((f.rule.id, str(f.location.path), f.location.line or 0, f.location.column or 0) for f in report.findings)


def test_a_workflow_env_reference_reads_its_literal_value(tmp_path: Path) -> None:
    run = "docker run -d ${{ env.VLLM_IMAGE }} --model org/m ${{ env.EXTRA }}"
    workflow = (
        "on: push\nenv:\n  VLLM_IMAGE: vllm/vllm-openai:v0.20.0\njobs:\n  a:\n    runs-on: x\n"
        f"    env:\n      EXTRA: --max-num-partial-prefills 2\n    steps:\n      - run: {run}\n"
    )
    got = _found(tmp_path, {".github/workflows/w.yml": workflow})
    assert ("VUC000-010", ".github/workflows/w.yml", 3, 15) in got  # the image, where env: writes it
    assert ("VUC0270-001", ".github/workflows/w.yml", 8, 14) in got  # the flag, where env: writes it


def test_an_expression_the_workflow_does_not_set_stays_unresolved(tmp_path: Path) -> None:
    workflow = "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: vllm serve org/m ${{ env.EXTRA }} --swap-space 2\n"
    assert _found(tmp_path, {".github/workflows/w.yml": workflow}) == [("VUC0180-001", ".github/workflows/w.yml", 6, 48)]


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("docker exec -it -e A=1 engine vllm serve org/m --swap-space 1\n", 48),
        ("kubectl exec -n ml pod-0 -- vllm serve org/m --swap-space 2\n", 46),
        ("podman exec engine vllm serve org/m --swap-space 2\n", 37),
        ("vllm serve org/m -- --swap-space 3\n", 21),
    ],
)
def test_exec_into_a_container_and_the_end_of_options(tmp_path: Path, line: str, column: int) -> None:
    assert _found(tmp_path, {"ops.sh": line}) == [("VUC0180-001", "ops.sh", 1, column)]


def test_docker_exec_of_another_program_is_not_a_launch(tmp_path: Path) -> None:
    assert _found(tmp_path, {"ops.sh": "docker exec engine echo --swap-space 4 vllm\n"}) == []


def test_an_environment_file_value_a_unit_takes_as_one_word_is_reported_once(tmp_path: Path) -> None:
    got = _found(
        tmp_path,
        {
            "etc/vllm.env": "STEPS=--num-scheduler-steps\nTUNE=--swap-space 4\n",
            "systemd/vllm.service": "[Service]\nEnvironmentFile=/etc/vllm.env\nExecStart=/usr/bin/vllm serve org/m ${STEPS} $TUNE\n",
        },
    )
    assert got == [("VUC0101-001", "systemd/vllm.service", 3, 37), ("VUC0180-001", "etc/vllm.env", 2, 6)]


@pytest.mark.parametrize(("url", "blocked"), [("http://localhost:11434/v1", False), ("http://127.0.0.1:1234/v1", False),
                                              ("http://localhost:8000/v1", True)])
def test_a_client_of_a_local_server_that_is_not_vllm_is_not_judged_by_vllm(tmp_path: Path, url: str, blocked: bool) -> None:
    client = (
        f'from openai import OpenAI\nc = OpenAI(base_url="{url}")\n'
        'r = c.chat.completions.create(model="m", messages=[])\nprint(r.choices[0].message.reasoning_content)\n'
    )
    got = _found(tmp_path, {"client.py": client})
    assert bool(got) is blocked
