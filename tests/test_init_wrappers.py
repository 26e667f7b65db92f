"""Init programs and pass-through entry scripts before vLLM: ``ENTRYPOINT ["tini", "--",
"vllm", "serve"]``, ``/usr/bin/tini -g --``, ``dumb-init --``, ``gosu USER``, ``su-exec
USER``, and a copied ``/docker-entrypoint.sh`` that sets up and runs ``exec "$@"``. The
``CMD`` / compose ``command`` / Kubernetes ``args`` words reach the vLLM launch through
them, so a removed flag there is a blocker at its line, and ``fix`` cuts it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

REMOVED = "VUC0180-001"  # --swap-space, removed in 0.18.0


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _removed(root: Path) -> list[tuple[str | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"))
    return sorted((f.location.path, f.location.line) for f in report.findings if f.rule.id == REMOVED)


@pytest.mark.parametrize(
    ("entry", "cmd"),
    [
        ('["tini", "--", "vllm", "serve"]', '["acme/m", "--swap-space", "4"]'),
        ('["/usr/bin/tini", "-g", "--", "python3", "-m", "vllm.entrypoints.openai.api_server"]',
         '["--model", "acme/m", "--swap-space", "4"]'),
        ('["tini", "-p", "SIGTERM", "--", "vllm", "serve"]', '["acme/m", "--swap-space", "4"]'),
        ('["dumb-init", "--"]', '["vllm", "serve", "acme/m", "--swap-space", "4"]'),
        ('["dumb-init", "--rewrite", "15:2", "--", "vllm", "serve"]', '["acme/m", "--swap-space", "4"]'),
        ('["gosu", "vllm", "vllm", "serve"]', '["acme/m", "--swap-space", "4"]'),
        ('["su-exec", "app:app", "vllm", "serve"]', '["acme/m", "--swap-space", "4"]'),
    ],
)
def test_cmd_reaches_vllm_through_an_init_program(tmp_path: Path, entry: str, cmd: str) -> None:
    dockerfile = f"FROM vllm/vllm-openai:v0.17.1\nENTRYPOINT {entry}\nCMD {cmd}\n"
    assert _removed(_write(tmp_path, {"Dockerfile": dockerfile})) == [("Dockerfile", 3)]


def test_kubernetes_args_reach_vllm_through_tini(tmp_path: Path) -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
        - name: a
          image: vllm/vllm-openai:v0.17.1
          command: ["tini", "--", "vllm", "serve"]
          args: ["acme/m", "--swap-space", "4"]
        - name: b
          image: vllm/vllm-openai:v0.17.1
          command: ["/usr/bin/tini", "-g", "--"]
          args: ["vllm", "serve", "acme/m", "--swap-space", "4"]
"""
    assert _removed(_write(tmp_path, {"deploy.yaml": manifest})) == [("deploy.yaml", 11), ("deploy.yaml", 15)]


def test_compose_command_reaches_vllm_through_an_init_entrypoint(tmp_path: Path) -> None:
    compose = """services:
  s:
    image: vllm/vllm-openai:v0.17.1
    entrypoint: ["dumb-init", "--", "vllm", "serve"]
    command: acme/m --swap-space 4
"""
    assert _removed(_write(tmp_path, {"compose.yaml": compose})) == [("compose.yaml", 5)]


PASS_THROUGH = '#!/bin/sh\nset -e\nmkdir -p /cache\nchown app /cache\nexec "$@"\n'


@pytest.mark.parametrize(
    ("entry", "cmd", "script"),
    [
        ('["/docker-entrypoint.sh"]', '["vllm", "serve", "acme/m", "--swap-space", "4"]', PASS_THROUGH),
        ('["tini", "--", "/docker-entrypoint.sh"]', '["vllm", "serve", "acme/m", "--swap-space", "4"]', PASS_THROUGH),
        ('["tini", "--", "/docker-entrypoint.sh"]', '["acme/m", "--swap-space", "4"]',
         '#!/bin/bash\nexport HF_HOME=/cache\nexec vllm serve "$@"\n'),
        ('["/usr/bin/dumb-init", "--", "bash", "/docker-entrypoint.sh"]', '["acme/m", "--swap-space", "4"]',
         '#!/bin/bash\nexec vllm serve "$@"\n'),
    ],
)
def test_cmd_reaches_vllm_through_an_entry_script(tmp_path: Path, entry: str, cmd: str, script: str) -> None:
    dockerfile = f"FROM vllm/vllm-openai:v0.17.1\nCOPY docker-entrypoint.sh /docker-entrypoint.sh\nENTRYPOINT {entry}\nCMD {cmd}\n"
    root = _write(tmp_path, {"Dockerfile": dockerfile, "docker-entrypoint.sh": script})
    assert _removed(root) == [("Dockerfile", 4)]


def test_pass_through_script_with_another_program_is_no_launch(tmp_path: Path) -> None:
    dockerfile = (
        "FROM vllm/vllm-openai:v0.17.1\nCOPY docker-entrypoint.sh /docker-entrypoint.sh\n"
        'ENTRYPOINT ["/docker-entrypoint.sh"]\nCMD ["python3", "app.py", "--swap-space", "4"]\n'
    )
    assert _removed(_write(tmp_path, {"Dockerfile": dockerfile, "docker-entrypoint.sh": PASS_THROUGH})) == []


def test_fix_cuts_the_flag_from_the_cmd_behind_an_init_program(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    dockerfile = 'FROM vllm/vllm-openai:v0.17.1\nENTRYPOINT ["tini", "--", "vllm", "serve"]\nCMD ["acme/m", "--swap-space", "4"]\n'
    root = _write(tmp_path, {"Dockerfile": dockerfile})
    fix_paths(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"), bump=False)
    assert (root / "Dockerfile").read_text() == dockerfile.replace(', "--swap-space", "4"', "")


def test_compose_command_reaches_an_entry_script_behind_tini(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    files = {
        "svc/Dockerfile": 'FROM vllm/vllm-openai:v0.17.1\nCOPY entry.sh /entry.sh\nENTRYPOINT ["tini", "--", "/entry.sh"]\n',
        "svc/entry.sh": '#!/bin/bash\nexec vllm serve "$@"\n',
        "compose.yaml": 'services:\n  llm:\n    build: ./svc\n    command: ["acme/m", "--swap-space", "4"]\n',
    }
    root = _write(tmp_path, files)
    assert _removed(root) == [("compose.yaml", 4)]
    fix_paths(ScanOptions.of(paths=[root], from_version="0.17.1", to_version="0.18.0"), bump=False)
    assert (root / "compose.yaml").read_text() == files["compose.yaml"].replace(', "--swap-space", "4"', "")
