"""A compose service built from a Dockerfile whose ``ENTRYPOINT`` is a script of the build
context: the service's ``command`` replaces the ``CMD``, so its words reach the script's
``"$@"``. Its flags are reported where the compose file writes them and ``fix`` edits them
there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.compose_entry import entry_stage

DOCKERFILE = 'FROM vllm/vllm-openai:v0.10.0\nCOPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n'
SCRIPT = '#!/bin/sh\nexec vllm serve "$MODEL" "$@"\n'
REMOVED = {"VUC0180-001": "--swap-space", "VUC0270-001": "--max-num-partial-prefills"}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _removed(root: Path) -> list[tuple[str, str | None, int | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.27.0"))
    return sorted(
        (REMOVED[f.rule.id], f.location.path, f.location.line, f.location.column)
        for f in report.findings
        if f.rule.id in REMOVED
    )


def _at(text: str, word: str) -> tuple[int, int]:
    """1-based line and column of ``word``'s first character in ``text``."""
    index = text.index(word)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


@pytest.mark.parametrize(
    "command",
    [
        '["--swap-space", "4", "--max-num-partial-prefills", "2"]',
        "--swap-space 4 --max-num-partial-prefills 2",
        "'--swap-space 4 --max-num-partial-prefills=2'",
        "\n      - --swap-space\n      - '4'\n      - --max-num-partial-prefills\n      - '2'",
    ],
)
def test_command_words_reach_the_entry_point_script(tmp_path: Path, command: str) -> None:
    compose = f"services:\n  llm:\n    build:\n      context: .\n      dockerfile: Dockerfile.x\n    command: {command}\n"
    _write(tmp_path, {"docker-compose.yml": compose, "Dockerfile.x": DOCKERFILE, "entrypoint.sh": SCRIPT})
    swap, partial = _at(compose, "--swap-space"), _at(compose, "--max-num-partial-prefills")
    assert _removed(tmp_path) == [
        ("--max-num-partial-prefills", "docker-compose.yml", *partial),
        ("--swap-space", "docker-compose.yml", *swap),
    ]


@pytest.mark.parametrize(
    ("build", "files"),
    [
        # build: DIR, the script under a folder of the context, run by a shell
        ("build: ./engine", {
            "engine/Dockerfile": 'FROM vllm/vllm-openai:v0.10.0\nWORKDIR /app\nCOPY bin/run.sh ./\nENTRYPOINT ["bash", "/app/run.sh"]\n',
            "engine/bin/run.sh": 'vllm serve acme/m "$@"\n',
        }),
        # the Dockerfile elsewhere than the context: COPY is relative to the context
        ("build: {context: ., dockerfile: docker/Dockerfile.gpu}", {
            "docker/Dockerfile.gpu": 'FROM python:3.12\nRUN pip install vllm==0.10.0\nCOPY scripts/serve.sh /serve.sh\nENTRYPOINT ["/serve.sh"]\nCMD ["--port", "8000"]\n',
            "scripts/serve.sh": '#!/bin/bash\nexec vllm serve "${MODEL:-acme/m}" "$@"\n',
        }),
        # the ENTRYPOINT set in a base stage the target stage is built FROM
        ("build: {context: ., target: serve}", {
            "Dockerfile": 'FROM vllm/vllm-openai:v0.10.0 AS base\nCOPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n'
                          'FROM base AS serve\nENV MODEL=acme/m\nFROM python:3.12 AS tools\n',
            "entrypoint.sh": SCRIPT,
        }),
    ],
)
def test_build_layouts(tmp_path: Path, build: str, files: dict[str, str]) -> None:
    compose = f"services:\n  llm:\n    {build}\n    command: [--swap-space, '8']\n"
    _write(tmp_path, {"docker-compose.yml": compose, **files})
    assert _removed(tmp_path) == [("--swap-space", "docker-compose.yml", *_at(compose, "--swap-space"))]


@pytest.mark.parametrize(
    "service",
    [
        # its own entrypoint: the script does not run
        "    entrypoint: [python3, app.py]\n    command: [--swap-space, '4']\n",
        # no command: the Dockerfile's CMD stands (none here)
        "    environment: {SWAP: '4'}\n",
    ],
)
def test_no_launch_where_the_script_does_not_take_the_words(tmp_path: Path, service: str) -> None:
    compose = f"services:\n  llm:\n    build: .\n{service}"
    _write(tmp_path, {"docker-compose.yml": compose, "Dockerfile": DOCKERFILE, "entrypoint.sh": SCRIPT})
    assert _removed(tmp_path) == []


def test_the_service_environment_sets_the_scripts_variables(tmp_path: Path) -> None:
    compose = "services:\n  llm:\n    build: .\n    environment:\n      MODEL: acme/m\n    command: [--swap-space, '4']\n"
    _write(tmp_path, {"docker-compose.yml": compose, "Dockerfile": DOCKERFILE, "entrypoint.sh": SCRIPT})
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.27.0"))
    assert [(f.rule.id, f.location.path) for f in report.findings if f.rule.id in REMOVED] == [
        ("VUC0180-001", "docker-compose.yml")
    ]
    notes = " ".join(n for n in report.notes if "docker-compose.yml" in n)
    assert "$MODEL" not in notes


@pytest.mark.parametrize(
    ("dockerfile", "target", "expected"),
    [
        (DOCKERFILE, None, 0),
        ("FROM vllm/vllm-openai:v0.10.0\n", None, None),
        ('FROM x AS a\nENTRYPOINT ["/a"]\nFROM a AS b\nFROM b\n', None, 0),
        ('FROM x AS a\nENTRYPOINT ["/a"]\nFROM a AS b\nENTRYPOINT ["/b"]\nFROM y AS c\n', "b", 1),
        ('FROM x AS a\nENTRYPOINT ["/a"]\nFROM y AS c\n', None, None),
    ],
)
def test_entry_stage(dockerfile: str, target: str | None, expected: int | None) -> None:
    assert entry_stage(dockerfile, target) == expected


def test_fix_edits_the_compose_command(tmp_path: Path) -> None:
    compose = "services:\n  llm:\n    build: .\n    command: [\"--port\", \"9000\", \"--swap-space\", \"4\"]\n"
    _write(tmp_path, {"docker-compose.yml": compose, "Dockerfile": DOCKERFILE, "entrypoint.sh": SCRIPT})
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(tmp_path), "--to", "0.27.0", "--no-bump"],
        capture_output=True, text=True, timeout=300,
    )
    assert (tmp_path / "docker-compose.yml").read_text() == compose.replace(', "--swap-space", "4"', ""), run.stdout
    assert (tmp_path / "entrypoint.sh").read_text() == SCRIPT
    assert (tmp_path / "Dockerfile").read_text() == DOCKERFILE


def test_dotenv_words_and_entry_point_arguments(tmp_path: Path) -> None:
    """A compose file in a folder of its own, the context above it, ``.env`` words in the
    command (reported in ``.env``), and an ``ENTRYPOINT`` with words of its own (the
    Dockerfile's ``CMD`` replaced, not reported through the service)."""
    compose = (
        "services:\n  api:\n    image: acme/api:dev\n    build: {context: .., dockerfile: docker/Dockerfile}\n"
        "    environment: [MODEL=acme/m]\n    command: ${EXTRA}\n"
        "  api2:\n    build: {context: .., dockerfile: docker/Dockerfile}\n"
        "    command: \"--max-num-partial-prefills=2 --port 9000\"\n"
    )
    _write(tmp_path, {
        "deploy/docker-compose.yml": compose,
        "deploy/.env": "EXTRA=--swap-space 4\n",
        "docker/Dockerfile": 'FROM python:3.12\nRUN pip install vllm==0.10.0\nCOPY docker/run.sh /opt/run.sh\n'
                             'ENTRYPOINT ["/opt/run.sh", "--dtype", "half"]\nCMD ["--swap-space", "2"]\n',
        "docker/run.sh": '#!/bin/sh\nexec python3 -m vllm.entrypoints.openai.api_server --model "$MODEL" "$@"\n',
    })
    assert _removed(tmp_path) == [
        ("--max-num-partial-prefills", "deploy/docker-compose.yml", *_at(compose, "--max-num-partial-prefills")),
        ("--swap-space", "deploy/.env", 1, 7),
        # the image's own CMD (what `docker run` of it launches), found through the context above
        ("--swap-space", "docker/Dockerfile", 5, 7),
    ]


@pytest.mark.parametrize(
    ("script", "bumped"),
    [
        (SCRIPT, True),  # the script launches vLLM (with no Dockerfile word): the image moves
        ('#!/bin/sh\nexec vllm serve acme/m --port 8000\n', True),
        ('#!/bin/sh\nexec python3 app.py "$@"\n', False),  # it runs something else: held back
    ],
)
def test_the_image_moves_when_the_entry_point_script_launches_vllm(tmp_path: Path, script: str, bumped: bool) -> None:
    compose = "services:\n  llm:\n    build: .\n    command: [\"--port\", \"9000\"]\n"
    _write(tmp_path, {"docker-compose.yml": compose, "Dockerfile": DOCKERFILE, "entrypoint.sh": script})
    out = _fix(tmp_path)
    want = DOCKERFILE.replace("v0.10.0", "v0.27.0") if bumped else DOCKERFILE
    assert (tmp_path / "Dockerfile").read_text() == want, out
    assert (tmp_path / "docker-compose.yml").read_text() == compose


def _fix(root: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.27.0"],
        capture_output=True, text=True, timeout=300,
    )
    return run.stdout + run.stderr
