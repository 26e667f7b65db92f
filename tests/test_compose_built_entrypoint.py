"""A compose service built from a Dockerfile whose exec-form ``ENTRYPOINT`` launches vLLM
itself (``["vllm", "serve"]``, ``["python3", "-m", "vllm.entrypoints.openai.api_server"]``,
behind ``tini --``): the service's ``command`` replaces the ``CMD``, so its words are the
launch's flags. A removed flag there is a blocker at the command's line, and ``fix`` cuts it
there (the fixed compose file checked as the compose file it is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

REMOVED = "VUC0180-001"  # --swap-space, removed in 0.18.0

SERVE = 'FROM python:3.11\nRUN pip install vllm==0.17.1\nENTRYPOINT ["vllm", "serve"]\n'
API = 'FROM python:3.11\nRUN pip install vllm==0.17.1\nENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n'
STAGED = (
    'FROM vllm/vllm-openai:v0.17.1 AS base\nENTRYPOINT ["tini", "--", "vllm", "serve", "--port", "8000"]\n'
    "FROM base AS prod\nENV HF_HOME=/cache\nFROM python:3.11 AS tools\n"
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _removed(root: Path) -> list[tuple[str | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"))
    return sorted((f.location.path, f.location.line) for f in report.findings if f.rule.id == REMOVED)


@pytest.mark.parametrize(
    ("build", "dockerfile", "command"),
    [
        ("./svc", SERVE, '["acme/m", "--swap-space", "4"]'),
        ("./svc", SERVE, "acme/m --swap-space 4"),
        ("{context: ./svc}", API, "--model acme/m --swap-space 4"),
        ("{context: ./svc, target: prod}", STAGED, '"acme/m --swap-space 4 --port 9000"'),
    ],
)
def test_command_flags_are_the_built_entrypoint_launch_flags(
    tmp_path: Path, build: str, dockerfile: str, command: str
) -> None:
    compose = f"services:\n  llm:\n    build: {build}\n    command: {command}\n"
    root = _write(tmp_path, {"compose.yaml": compose, "svc/Dockerfile": dockerfile})
    assert _removed(root) == [("compose.yaml", 4)]


def test_block_list_command_is_reported_at_the_flag_line(tmp_path: Path) -> None:
    compose = "services:\n  llm:\n    build: ./svc\n    command:\n      - acme/m\n      - --swap-space\n      - \"4\"\n"
    root = _write(tmp_path, {"compose.yaml": compose, "svc/Dockerfile": SERVE})
    assert _removed(root) == [("compose.yaml", 6)]


def test_entrypoint_flags_stay_the_dockerfiles(tmp_path: Path) -> None:
    dockerfile = 'FROM python:3.11\nRUN pip install vllm==0.17.1\nENTRYPOINT ["vllm", "serve", "--swap-space", "4"]\n'
    compose = "services:\n  llm:\n    build: ./svc\n    command: [\"acme/m\"]\n"
    root = _write(tmp_path, {"compose.yaml": compose, "svc/Dockerfile": dockerfile})
    assert _removed(root) == [("svc/Dockerfile", 3)]


@pytest.mark.parametrize(
    "dockerfile",
    [
        'FROM python:3.11\nENTRYPOINT ["python3", "app.py"]\n',  # its own entry point runs another program
        'FROM python:3.11\nENTRYPOINT vllm serve\n',  # the shell form ignores the command
    ],
)
def test_no_launch_where_the_entrypoint_is_not_vllm_exec_form(tmp_path: Path, dockerfile: str) -> None:
    compose = "services:\n  llm:\n    build: ./svc\n    command: --swap-space 4\n"
    assert _removed(_write(tmp_path, {"compose.yaml": compose, "svc/Dockerfile": dockerfile})) == []


def test_service_entrypoint_overrides_the_dockerfiles(tmp_path: Path) -> None:
    compose = "services:\n  llm:\n    build: ./svc\n    entrypoint: [\"python3\", \"app.py\"]\n    command: --swap-space 4\n"
    assert _removed(_write(tmp_path, {"compose.yaml": compose, "svc/Dockerfile": SERVE})) == []


def test_fix_cuts_the_flag_from_the_command_beside_other_services(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    compose = (
        "services:\n  api:\n    build: {context: ./api}\n    command: --model acme/m --swap-space 4\n"
        "  llm:\n    build: ./svc\n    entrypoint: vllm serve\n    command: [\"acme/m\", \"--swap-space\", \"4\"]\n"
    )
    root = _write(tmp_path, {"compose.yaml": compose, "svc/Dockerfile": SERVE, "api/Dockerfile": API})
    fix_paths(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"), bump=False)
    assert (root / "compose.yaml").read_text() == compose.replace(" --swap-space 4", "").replace(', "--swap-space", "4"', "")
    assert _removed(root) == []
