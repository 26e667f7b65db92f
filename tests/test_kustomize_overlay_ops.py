"""``fix`` of a removed flag an overlay's JSON 6902 patch adds beside other operations (the
vLLM image, a label): the flag's operations go, the others stay, and the patch is still a
valid list of operations. Only a patch that would be left with no operation at all is
refused, and the refusal says so (with the patch's line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.kustomize_ops import SPLIT_NOTE

_register()
runner = CliRunner()

BASE = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: eng\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.20.0\n"
    '          args: ["--model", "acme/m", "--port", "8000"]\n'
)
ARGS = "/spec/template/spec/containers/0/args/-"
IMAGE = {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "vllm/vllm-openai:v0.10.0"}
LABEL = {"op": "add", "path": "/metadata/labels/tier", "value": "prod"}
SWAP = [{"op": "add", "path": ARGS, "value": "--swap-space"}, {"op": "add", "path": ARGS, "value": "4"}]
SEED = {"op": "add", "path": ARGS, "value": "--seed=1"}


def _block(ops: list[dict[str, str]], indent: int) -> str:
    pad = " " * indent
    out = ""
    for op in ops:
        value = op["value"]
        value = f'"{value}"' if value.isdigit() else value
        out += f"{pad}- op: {op['op']}\n{pad}  path: {op['path']}\n{pad}  value: {value}\n"
    return out


def _flow(ops: list[dict[str, str]], indent: int) -> str:
    pad = " " * indent
    return pad + "[\n" + ",\n".join(pad + "  " + json.dumps(op) for op in ops) + "\n" + pad + "]\n"


def _repo(root: Path, ops: list[dict[str, str]], style: str) -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    (root / "base" / "deploy.yaml").write_text(BASE)
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    body = (_flow if style == "flow" else _block)(ops, 6)
    key = "patchesJson6902" if style == "json6902" else "patches"
    target = "{group: apps, version: v1, kind: Deployment, name: eng}" if style == "json6902" else "{kind: Deployment, name: eng}"
    text = f"resources: [../base]\n{key}:\n  - target: {target}\n    patch: |-\n{body}"
    (root / "prod" / "kustomization.yaml").write_text(text)
    return root / "prod" / "kustomization.yaml"


def _ops(path: Path) -> list[dict[str, str]]:
    doc = yaml.safe_load(path.read_text())
    key = "patches" if "patches" in doc else "patchesJson6902"
    ops = yaml.safe_load(doc[key][0]["patch"])
    assert isinstance(ops, list)
    return ops


def _fix(root: Path) -> list[tuple[str, str]]:
    result = fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=False)
    return [(r.path, r.reason) for r in result.not_written]


ORDERS = {
    "image-first": [IMAGE, *SWAP],
    "image-last": [*SWAP, IMAGE],
    "label-and-seed": [LABEL, SEED, *SWAP],
}


@pytest.mark.parametrize("style", ["block", "flow", "json6902"])
@pytest.mark.parametrize("order", sorted(ORDERS))
def test_the_flags_operations_go_and_the_others_stay(tmp_path: Path, order: str, style: str) -> None:
    ops = ORDERS[order]
    path = _repo(tmp_path, ops, style)
    refused = _fix(tmp_path)
    assert not refused, refused
    kept = [op for op in ops if op not in SWAP]
    assert _ops(path) == kept, path.read_text()


@pytest.mark.parametrize("style", ["block", "flow"])
def test_a_flag_and_value_with_another_op_between_are_left_with_that_reason(tmp_path: Path, style: str) -> None:
    path = _repo(tmp_path, [SWAP[0], IMAGE, SWAP[1]], style)
    before = path.read_text()
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.32.0", "--no-bump"])
    assert path.read_text() == before
    assert "--swap-space" in result.output and SPLIT_NOTE in " ".join(result.output.split()), result.output


def test_a_patch_left_with_no_operation_is_refused_with_that_reason(tmp_path: Path) -> None:
    path = _repo(tmp_path, list(SWAP), "block")
    before = path.read_text()
    refused = _fix(tmp_path)
    assert path.read_text() == before
    assert len(refused) == 1, refused
    assert "the inline kustomize patch at line 4 writes nothing" in refused[0][1]
    assert "every word the patch writes would go, leaving it empty" not in refused[0][1]  # the old wording


@pytest.mark.parametrize("body", ["", "      # nothing yet\n", "      []\n"])
def test_an_inline_patch_that_writes_nothing_is_named_with_its_line(tmp_path: Path, body: str) -> None:
    root = tmp_path
    _repo(root, [], "block")
    path = root / "prod" / "kustomization.yaml"
    path.write_text(path.read_text().split("    patch: |-\n")[0] + "    patch: |-\n" + body)
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.32.0"))
    found = [(s.path, s.line) for s in report.skipped if "writes nothing" in s.reason]
    assert found == [("prod/kustomization.yaml", 4)], [(s.path, s.line, s.reason) for s in report.skipped]
    assert not any(s.configures_vllm for s in report.skipped)


def test_an_inline_strategic_merge_left_with_no_args_is_refused_with_that_reason(tmp_path: Path) -> None:
    path = _repo(tmp_path, [], "block")
    smp = (
        "resources: [../base]\npatches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n"
        "      metadata:\n        name: eng\n      spec:\n        template:\n          spec:\n            containers:\n"
        '              - name: vllm\n                args: [--swap-space, "4"]\n'
    )
    path.write_text(smp)
    refused = _fix(tmp_path)
    assert path.read_text() == smp  # `args: []` would clear the base's args in the overlay
    assert len(refused) == 1 and "sets args: [] for container vllm, which clears the base's args" in refused[0][1], refused
