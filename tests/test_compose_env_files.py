"""Compose env files: a service's ``env_file:`` (a path, a list, ``{path:, required:}``
entries) is the container's environment, so removed ``VLLM_*`` variables there are
reported at the env file's line; ``docker compose --env-file FILE`` in a script sets the
values compose interpolates, and ``--project-directory DIR`` where the ``.env`` is."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.compose_cli import compose_chains


def rows(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str | None, int | None, int | None]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.16.0"))
    return sorted((f.rule.id, f.location.path, f.location.line, f.location.column) for f in report.findings)


SERVICE = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.18.0\n    command: [\"--model\", \"m\"]\n"


@pytest.mark.parametrize(
    "env_file",
    [
        "    env_file: ../conf/vllm-settings\n",
        "    env_file:\n      - ../conf/vllm-settings\n",
        "    env_file:\n      - path: ../conf/vllm-settings\n        required: false\n",
    ],
)
def test_a_service_env_file_is_its_environment(tmp_path: Path, env_file: str) -> None:
    found = rows(
        tmp_path,
        {"deploy/compose.yaml": SERVICE + env_file, "conf/vllm-settings": "FOO=1\nVLLM_SLEEP_WHEN_IDLE=1\n"},
    )
    assert found == [("VUC0180-004", "conf/vllm-settings", 2, 1)]


def test_env_file_option_gives_the_interpolated_values(tmp_path: Path) -> None:
    compose = 'services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n    command: ["--model", "m", "${FLAG}", "4"]\n'
    found = rows(
        tmp_path,
        {
            "deploy/compose.yaml": compose,
            "prod.vars": "TAG=v0.16.0\nFLAG=--swap-space\n",
            "up.sh": "#!/bin/bash\ndocker compose --env-file prod.vars -f deploy/compose.yaml up -d\n",
        },
    )
    assert found == [("VUC000-010", "prod.vars", 1, 5), ("VUC0180-001", "prod.vars", 2, 6)]


def test_project_directory_is_where_the_env_is(tmp_path: Path) -> None:
    compose = 'services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n    command: ["--model", "m"]\n'
    found = rows(
        tmp_path,
        {
            "files/compose.yaml": compose,
            "stack/.env": "TAG=v0.16.0\n",
            "up.sh": "#!/bin/bash\ndocker compose --project-directory=stack -f files/compose.yaml up\n",
        },
    )
    assert found == [("VUC000-010", "stack/.env", 1, 5)]


def test_the_chain_keeps_its_options() -> None:
    script = parse_shell("docker compose --env-file a.env --env-file=b.env --project-directory d -f c.yml up\n")
    (chain,) = compose_chains(script)
    assert [(n.written, n.env_files, n.project_directory) for n in chain] == [("c.yml", ("a.env", "b.env"), "d")]
