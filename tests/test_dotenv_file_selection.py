"""Which files the dotenv reader takes: ``.env``, ``.env.*``, ``*.env`` and the files a
compose service names in ``env_file:`` (whatever their name), never a YAML (or other syntax)
file whose name starts with ``.env.`` (``.env.compose.yml`` is a compose file: the YAML
scanners read it, and it is no dotenv syntax error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.envfiles import SystemdScanner, is_dotenv

RENAMED = "VUC0290-003"  # VLLM_TRITON_ATTN_USE_TD, renamed in vLLM 0.29.0
REMOVED_FLAG = "VUC0180-001"  # --swap-space
COMPOSE = 'services:\n  a:\n    image: vllm/vllm-openai:v0.20.0\n    command: [--swap-space, "4"]\n'


def _scan(root: Path, files: dict[str, str]) -> tuple[list[tuple[str, str | None, int | None]], list[str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.20.0", to_version="0.32.0"))
    found = sorted((f.rule.id, f.location.path, f.location.line) for f in report.findings if f.rule.id in (RENAMED, REMOVED_FLAG))
    return found, [s.reason for s in report.skipped]


@pytest.mark.parametrize("name", [".env", ".env.production", ".env.local", "vllm.env", "prod.env"])
def test_dotenv_names_are_read(name: str) -> None:
    assert is_dotenv(name)


@pytest.mark.parametrize("name", [".env.yaml", ".env.compose.yml", "prod.env.yml", ".env.example.json", ".envrc", "Dockerfile.env"])
def test_other_syntaxes_are_not_dotenv(name: str) -> None:
    assert not is_dotenv(name)
    assert not SystemdScanner().accepts_name(name)


@pytest.mark.parametrize("name", [".env.yaml", ".env.compose.yml", "prod.env.yml"])
def test_a_yaml_named_like_a_dotenv_is_read_as_yaml_only(tmp_path: Path, name: str) -> None:
    found, skipped = _scan(tmp_path, {name: COMPOSE})
    assert found == [(REMOVED_FLAG, name, 4)]
    assert not [r for r in skipped if "dotenv" in r]


@pytest.mark.parametrize(
    "env_file",
    ["env_file: conf/vllm-vars", "env_file: [./conf/vllm-vars]", "env_file:\n      - path: conf/vllm-vars\n        required: false"],
)
def test_a_compose_env_file_is_read_as_dotenv(tmp_path: Path, env_file: str) -> None:
    compose = f"services:\n  b:\n    image: vllm/vllm-openai:v0.20.0\n    {env_file}\n"
    found, _skipped = _scan(tmp_path, {"compose.yml": compose, "conf/vllm-vars": "# vars\nVLLM_TRITON_ATTN_USE_TD=1\n"})
    assert found == [(RENAMED, "conf/vllm-vars", 2)]


def test_a_required_env_file_that_is_missing_is_named(tmp_path: Path) -> None:
    compose = "services:\n  b:\n    image: vllm/vllm-openai:v0.20.0\n    env_file: conf/missing\n"
    _found, skipped = _scan(tmp_path, {"compose.yml": compose})
    assert any("conf/missing" in r for r in skipped)


def test_an_environment_file_never_reads_a_yaml(tmp_path: Path) -> None:
    unit = "[Service]\nEnvironmentFile=/etc/vllm/vars.yml\nExecStart=vllm serve m\n"
    assert not SystemdScanner().referenced_file_matches("etc/vllm/vars.yml", "/etc/vllm/vars.yml")
    _found, skipped = _scan(tmp_path, {"vllm.service": unit, "etc/vllm/vars.yml": "a: 1\n"})
    assert not [r for r in skipped if "dotenv" in r]
