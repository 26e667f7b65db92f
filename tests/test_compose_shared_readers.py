"""Who else reads the words a compose finding is about: a ``.env`` value is refused to
``fix`` only where another service really interpolates it (its positions are ``.env``'s,
never compared with the compose file's), and a YAML anchor's finding is shared by the
services that launch vLLM with it, not by a redis service merging the same anchor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

# the vLLM service's command on line 7; the other service's on line 4, the line .env sets EXTRA on
DOTENV = "# flags\nTAG=1\nX=2\nEXTRA=--swap-space 4\n"


def _compose(other_command: str) -> str:
    return (
        "services:\n  cache:\n    image: redis:7\n"
        f"    command: {other_command}\n"
        "  llm:\n    image: vllm/vllm-openai:v0.10.0\n    command: --model acme/m ${EXTRA}\n"
    )


def _fix(root: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.23.0", "--no-bump"],
        capture_output=True, text=True, timeout=300,
    )
    return run.stdout + run.stderr


@pytest.mark.parametrize(
    "other",
    [
        "redis-server --save 60 1 --loglevel warning",  # on .env's EXTRA line, in the compose file
        "[redis-server, --save, '60', --loglevel, '${X}']",  # reads another .env variable
    ],
)
def test_a_dotenv_value_only_the_vllm_service_reads_is_fixed(tmp_path: Path, other: str) -> None:
    (tmp_path / "docker-compose.yml").write_text(_compose(other))
    (tmp_path / ".env").write_text(DOTENV)
    out = _fix(tmp_path)
    assert (tmp_path / ".env").read_text() == DOTENV.replace("--swap-space 4", ""), out
    assert "reads it too" not in out


@pytest.mark.parametrize(
    "other",
    ["redis-server --loglevel ${EXTRA}", "[redis-server, '${EXTRA:-x}']", "redis-server\n    environment: {OPTS: $EXTRA}"],
)
def test_a_dotenv_value_another_service_reads_is_left_naming_it(tmp_path: Path, other: str) -> None:
    (tmp_path / "docker-compose.yml").write_text(_compose(other))
    (tmp_path / ".env").write_text(DOTENV)
    out = _fix(tmp_path)
    assert (tmp_path / ".env").read_text() == DOTENV
    assert "written in .env where service cache reads it too" in out


ANCHORED = """x-env: &env
  VLLM_USE_V1: "0"
services:
  cache:
    image: redis:7
    environment: *env
  a:
    image: vllm/vllm-openai:v0.10.0
    environment: *env
    command: --model acme/m
  b:
    image: vllm/vllm-openai:v0.10.0
    environment:
      <<: *env
      HF_HOME: /data
    command: [--model, acme/n]
"""


def _use_v1(root: Path) -> list[tuple[int | None, tuple[str, ...]]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.23.0"))
    return [(f.location.line, f.shared_by) for f in report.findings if f.fact.name == "VLLM_USE_V1"]


def test_an_anchor_is_shared_by_the_services_that_launch_vllm(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text(ANCHORED)
    assert _use_v1(tmp_path) == [(2, ("service a", "service b"))]


def test_an_anchor_only_other_services_read_stays_theirs(tmp_path: Path) -> None:
    text = ANCHORED.replace("image: vllm/vllm-openai:v0.10.0", "image: acme/app:1")
    (tmp_path / "docker-compose.yml").write_text(text)
    assert _use_v1(tmp_path) == [(2, ("service a", "service b", "service cache"))]


def test_kubernetes_containers_likewise(tmp_path: Path) -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: engine\n      image: vllm/vllm-openai:v0.10.0\n      args: [--model, m]\n"
        "      env: &env\n        - {name: VLLM_USE_V1, value: '0'}\n"
        "    - name: sidecar\n      image: busybox\n      env: *env\n"
    )
    (tmp_path / "pod.yaml").write_text(pod)
    assert _use_v1(tmp_path) == [(10, ())]
