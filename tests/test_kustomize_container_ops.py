"""A JSON 6902 operation that adds or replaces a whole pod container (``.../containers/-``,
``.../containers/0``, the whole ``.../containers`` list) puts that container in the pod the
overlay deploys: its vLLM image, launch, flags and env are read where the patch writes them
(inline or in a patch file, YAML or JSON) and ``fix`` edits them there. A container that
launches no vLLM gives nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

BASE = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: eng\nspec:\n{pod}"
    "{pad}containers:\n{pad}  - name: proxy\n{pad}    image: nginx:1.25\n"
)
VLLM = {"name": "vllm", "image": "vllm/vllm-openai:v0.10.0", "args": ["--model", "acme/m", "--swap-space", "4", "--port", "8000"]}
COMMAND = {"name": "srv", "image": "acme/srv:1", "command": ["vllm", "serve", "acme/m", "--swap-space", "4"]}
SIDECAR = {"name": "log", "image": "fluentd:1", "args": ["--swap-space", "4"]}


def _repo(root: Path, op: dict[str, object], style: str, kind: str = "Deployment") -> tuple[Path, str]:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    pod, pad = ("  template:\n    spec:\n", "      ") if kind != "Pod" else ("", "  ")
    (root / "base" / "deploy.yaml").write_text(BASE.format(kind=kind, pod=pod, pad=pad))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    target = f"{{kind: {kind}, name: eng}}"
    if style == "json-file":
        (root / "prod" / "ops.json").write_text(json.dumps([op]) + "\n")
        entry, where = f"  - target: {target}\n    path: ops.json\n", "prod/ops.json"
    else:
        ops = _yaml([op])
        if style == "yaml-file":
            (root / "prod" / "ops.yaml").write_text(ops)
            entry, where = f"  - target: {target}\n    path: ops.yaml\n", "prod/ops.yaml"
        else:
            body = "".join("      " + line + "\n" for line in ops.splitlines())
            entry, where = f"  - target: {target}\n    patch: |-\n{body}", "prod/kustomization.yaml"
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\npatches:\n" + entry)
    return root, where


def _yaml(value: object, indent: int = 0) -> str:
    """Block YAML of ``value`` (lists of strings in flow style, as a container's args often are)."""
    pad = " " * indent
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return json.dumps(value)
    if isinstance(value, list):
        out = ""
        for item in value:
            inner = _yaml(item, indent + 2).lstrip()
            out += f"{pad}- {inner}"
        return out
    if isinstance(value, dict):
        out = ""
        for k, v in value.items():
            if isinstance(v, (dict, list)) and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                out += f"{pad}{k}:\n{_yaml(v, indent + 2)}"
            else:
                out += f"{pad}{k}: {_yaml(v) if isinstance(v, list) else v}\n"
        return out
    return str(value)


def _scan(root: Path) -> Report:
    return run_scan(ScanOptions.of(paths=[root], to_version="0.32.0"))


def _swap(report: Report) -> list[tuple[str | None, int | None, int | None]]:
    return [(f.location.path, f.location.line, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001"]


OPS = {
    "add-dash": {"op": "add", "path": "/spec/template/spec/containers/-", "value": VLLM},
    "replace-0": {"op": "replace", "path": "/spec/template/spec/containers/0", "value": VLLM},
    "add-1": {"op": "add", "path": "/spec/template/spec/containers/1", "value": VLLM},
    "replace-list": {"op": "replace", "path": "/spec/template/spec/containers", "value": [SIDECAR, VLLM]},
    "command": {"op": "add", "path": "/spec/template/spec/containers/-", "value": COMMAND},
}


@pytest.mark.parametrize("style", ["inline", "yaml-file", "json-file"])
@pytest.mark.parametrize("case", sorted(OPS))
def test_a_container_the_patch_writes_is_read_where_written(tmp_path: Path, case: str, style: str) -> None:
    root, where = _repo(tmp_path, OPS[case], style)
    report = _scan(root)
    # the last "--swap-space" in the text is vLLM's (a sidecar's, written first, is not)
    text = (root / where).read_text()
    at = text.rindex('"--swap-space"') + 1
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1)
    assert _swap(report) == [(where, line, column + 1)], (_swap(report), [(f.rule.id, f.location) for f in report.findings])
    if case != "command":
        assert report.from_version == "0.10.0", report.from_source
    fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=False)
    text = (root / where).read_text()
    assert text.count("--swap-space") == (1 if case == "replace-list" else 0), text  # the sidecar's stays
    assert "acme/m" in text
    assert not _swap(_scan(root))


def test_a_pods_container_path_is_read(tmp_path: Path) -> None:
    op = {"op": "add", "path": "/spec/containers/-", "value": VLLM}
    root, where = _repo(tmp_path, op, "inline", kind="Pod")
    assert [w for w, _l, _c in _swap(_scan(root))] == [where]


@pytest.mark.parametrize(
    "op",
    [
        {"op": "add", "path": "/spec/template/spec/containers/-", "value": SIDECAR},  # no vLLM
        {"op": "add", "path": "/spec/template/spec/volumes/-", "value": VLLM},  # no container path
        {"op": "test", "path": "/spec/template/spec/containers/0", "value": VLLM},  # writes nothing
        {"op": "add", "path": "/spec/template/spec/containers/-", "value": "vllm"},  # no mapping
    ],
)
def test_what_puts_no_vllm_container_in_the_pod_says_nothing(tmp_path: Path, op: dict[str, object]) -> None:
    root, _where = _repo(tmp_path, op, "inline")
    report = _scan(root)
    assert _swap(report) == []
    assert report.from_version != "0.10.0"
