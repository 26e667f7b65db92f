"""A strategic-merge patch that sets a container's ``command:`` to a vLLM launch (``vllm
serve MODEL ...``, ``python3 -m vllm.entrypoints.openai.api_server ...``) is that container's
launch as the overlay deploys it: its words are checked where the patch writes them, with the
patch's ``args`` after them, and its model is the launch's."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.options import ScanOptions

BASE = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: sidecar\n          image: envoyproxy/envoy:v1.30\n"
    "        - name: server\n          image: {image}\n"
    '          args: ["--model", "acme/base", "--port", "8000"]\n'
)
PATCH = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: server\n          command: {command}\n{args}"
)
COMMANDS = {
    "vllm-serve": ('["vllm", "serve", "acme/patched", "--swap-space", "4"]', "acme/patched"),
    "api-server": (
        "\n            - python3\n            - -m\n            - vllm.entrypoints.openai.api_server\n"
        "            - --model\n            - acme/patched\n            - --swap-space\n            - '4'",
        "acme/patched",
    ),
    "cli-main": ('[python, -m, vllm.entrypoints.cli.main, serve, acme/patched, "--swap-space=4"]', "acme/patched"),
}


def _repo(root: Path, command: str, kind: str = "Deployment", args: str = "", image: str = "vllm/vllm-openai:v0.17.0") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    (root / "base" / "deploy.yaml").write_text(BASE.format(kind=kind, image=image))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\npatches:\n  - path: patch.yaml\n")
    (root / "prod" / "patch.yaml").write_text(PATCH.format(kind=kind, command=command, args=args))
    return root


def _scan(root: Path) -> tuple[list[tuple[str, str | None, int | None]], list[Fact]]:
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0", from_version="0.17.0"), facts_out=facts)
    return sorted((f.rule.id, f.location.path, f.location.line) for f in report.findings if f.rule.id != "VUC000-010"), facts


def _patch_line(root: Path, word: str) -> int:
    return next(i for i, t in enumerate((root / "prod" / "patch.yaml").read_text().split("\n"), 1) if word in t)


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_patched_vllm_command_is_the_containers_launch(tmp_path: Path, command: str, kind: str) -> None:
    text, model = COMMANDS[command]
    root = _repo(tmp_path, text, kind)
    found, facts = _scan(root)
    assert found == [("VUC0180-001", "prod/patch.yaml", _patch_line(root, "--swap-space"))]
    (launch,) = [f for f in facts if f.kind == FactKind.LAUNCH and f.location.path == "prod/patch.yaml"]
    assert launch.model == model and "swap_space" in launch.args and "port" in launch.args  # the base's args too


def test_the_patchs_args_follow_its_command(tmp_path: Path) -> None:
    args = "          args: [--max-num-partial-prefills, '2']\n"
    root = _repo(tmp_path, '["vllm", "serve", "acme/patched"]', args=args)
    found, _facts = _scan(root)
    assert found == [("VUC0270-001", "prod/patch.yaml", _patch_line(root, "--max-num-partial-prefills"))]


def test_a_command_patched_onto_a_base_that_runs_no_vllm_is_not_merged(tmp_path: Path) -> None:
    # the patch file read alone still runs `vllm serve` (the manifest reading): once, without the base's args
    root = _repo(tmp_path, COMMANDS["vllm-serve"][0], image="nginx:1.27")
    found, facts = _scan(root)
    assert found == [("VUC0180-001", "prod/patch.yaml", _patch_line(root, "--swap-space"))]
    (launch,) = [f for f in facts if f.kind == FactKind.LAUNCH]
    assert launch.location.path == "prod/patch.yaml" and "port" not in launch.args


def test_a_command_of_another_program_reads_the_args_as_before(tmp_path: Path) -> None:
    # the launch it makes is not known; the flags the patch writes are still checked (never silenced)
    root = _repo(tmp_path, '["/opt/start.sh"]', args="          args: [--swap-space, '4']\n")
    found, _facts = _scan(root)
    assert found == [("VUC0180-001", "prod/patch.yaml", _patch_line(root, "--swap-space"))]
