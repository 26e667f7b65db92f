"""A kustomize patch ``target`` that selects by ``labelSelector`` / ``annotationSelector``
patches every base object whose labels (annotations) match, with or without a kind: the
words it writes are checked with each matching vLLM launch (from that launch's release), and
an object that does not match gets nothing. A selector that is no label-selector syntax is
reported unresolved at the patch entry's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.kustomize_targets import matches, parse_selector

DEPLOY = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n  labels: {labels}\n  annotations: {notes}\n"
    "spec:\n  template:\n    spec:\n"
    "      containers:\n        - name: server\n          image: {image}\n"
    '          args: ["--model", "acme/m", "--port", "8000"]\n'
)
ADD = "/spec/template/spec/containers/0/args/-"
FLAG = "--calculate-kv-scales"  # removed in vLLM 0.28.0
OBJECTS = [
    # name, labels, annotations, image: "old" runs vLLM, "new" does not (its args say nothing of vLLM)
    ("old", "{app: llm, tier: prod}", "{team/owner: ml}", "vllm/vllm-openai:v0.26.0"),
    ("new", "{app: llm, tier: canary}", "{team/owner: infra}", "nginx:1.25"),
]


def _repo(root: Path, target: str, style: str = "inline", kind: str = "Deployment") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    docs = [DEPLOY.format(kind=kind, name=n, labels=labels, notes=notes, image=image) for n, labels, notes, image in OBJECTS]
    (root / "base" / "deploy.yaml").write_text("---\n".join(docs))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    ops = f"- op: add\n  path: {ADD}\n  value: {FLAG}\n"
    if style == "inline":
        body = "".join("      " + line + "\n" for line in ops.splitlines())
        entry = f"  - target: {target}\n    patch: |-\n{body}"
    else:
        (root / "prod" / "ops.yaml").write_text(ops)
        entry = f"  - target: {target}\n    path: ops.yaml\n"
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\npatches:\n" + entry)
    return root


def _flagged(root: Path) -> list[tuple[str | None, int | None]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    return sorted((f.location.path, f.location.line) for f in report.findings if f.rule.id == "VUC0280-001")


@pytest.mark.parametrize("style", ["inline", "file"])
@pytest.mark.parametrize(
    ("target", "hit"),
    [
        ("{kind: Deployment, labelSelector: 'app=llm,tier!=canary'}", True),
        ("{kind: Deployment, labelSelector: tier=canary}", False),  # the object that runs no vLLM only
        ("{labelSelector: 'tier in (prod, staging)'}", True),  # no kind: any kind
        ("{labelSelector: 'tier notin (prod)'}", False),
        ("{kind: Deployment, labelSelector: '!tier'}", False),  # every object has a tier
        ("{kind: Deployment, annotationSelector: team/owner=ml}", True),
        ("{kind: Deployment, annotationSelector: team/owner=infra}", False),
        ("{kind: StatefulSet, labelSelector: app=llm}", False),  # a kind no object has
        ("{kind: Deployment, name: new, labelSelector: app=llm}", False),  # name and labels
        ("{kind: Deployment, name: old, labelSelector: app=llm}", True),
    ],
)
def test_a_selector_patches_the_objects_it_matches(tmp_path: Path, target: str, hit: bool, style: str) -> None:
    root = _repo(tmp_path, target, style)
    where = "prod/kustomization.yaml" if style == "inline" else "prod/ops.yaml"
    lines = (root / where).read_text().split("\n")
    line = next(i for i, t in enumerate(lines, 1) if FLAG in t)
    assert _flagged(root) == ([(where, line)] if hit else []), target


def test_a_selector_of_both_objects_reports_the_words_once(tmp_path: Path) -> None:
    root = _repo(tmp_path, "{labelSelector: app=llm}")
    deploy = root / "base" / "deploy.yaml"
    deploy.write_text(deploy.read_text().replace("nginx:1.25", "vllm/vllm-openai:v0.26.0"))  # both run vLLM
    assert _flagged(root) == [("prod/kustomization.yaml", 7)]


@pytest.mark.parametrize("style", ["inline", "file"])
def test_a_selector_that_is_no_selector_is_unresolved_at_its_entry(tmp_path: Path, style: str) -> None:
    root = _repo(tmp_path, "{kind: Deployment, labelSelector: 'app in (llm'}", style)
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0"))
    found = [(s.path, s.line) for s in report.skipped if s.reason.startswith("unresolved:") and "labelSelector" in s.reason]
    line = 4 if style == "inline" else 3
    assert found == [("prod/kustomization.yaml", line)], [(s.path, s.line, s.reason) for s in report.skipped]


@pytest.mark.parametrize(
    ("text", "labels", "ok"),
    [
        ("app=llm", {"app": "llm"}, True),
        ("app==llm", {"app": "web"}, False),
        ("app!=llm", {}, True),  # a missing label is not llm
        ("env in (a, b),gpu", {"env": "b", "gpu": ""}, True),
        ("env in (a, b),gpu", {"env": "b"}, False),
        ("env notin (a)", {}, True),
        ("!legacy", {"legacy": "1"}, False),
        ("", {"x": "y"}, True),
        ("example.com/tier = prod", {"example.com/tier": "prod"}, True),
    ],
)
def test_label_selector_requirements(text: str, labels: dict[str, str], ok: bool) -> None:
    requirements = parse_selector(text)
    assert requirements is not None
    assert matches(requirements, labels) is ok


@pytest.mark.parametrize("text", ["app=(x)", "a,,b", "app=llm,", "env in (a", "=x", "a b"])
def test_what_is_no_label_selector(text: str) -> None:
    assert parse_selector(text) is None


@pytest.mark.parametrize("style", ["inline", "file"])
@pytest.mark.parametrize(
    ("target", "hit"),
    [
        ("{kind: Deployment, name: 'ol.*'}", True),  # kustomize anchors the name as a regex
        ("{kind: Deployment, name: 'o.'}", False),  # anchored: "o." is not "old"
        ("{kind: 'Deploy.*', name: old}", True),
        ("{kind: Deployment, name: 'n.*'}", False),  # the object that runs no vLLM
    ],
)
def test_a_target_name_or_kind_is_an_anchored_pattern(tmp_path: Path, target: str, hit: bool, style: str) -> None:
    root = _repo(tmp_path, target, style)
    where = "prod/kustomization.yaml" if style == "inline" else "prod/ops.yaml"
    lines = (root / where).read_text().split("\n")
    line = next(i for i, t in enumerate(lines, 1) if FLAG in t)
    assert _flagged(root) == ([(where, line)] if hit else []), target
