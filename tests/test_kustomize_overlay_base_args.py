"""An overlay that changes only the vLLM image deploys the base's args with its own release:
those args are checked from the overlay's release too, reported at the base's lines once (a
rule of a release between the overlay's and the base's is not missed for that overlay).
An overlay that rewrites the args (a strategic merge's ``args:``, a JSON 6902 ``replace``)
does not deploy them as the base writes them: nothing is given for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

RULE = "ORG0150-001"
PACK = (
    "release: 0.15.0\nrules:\n- id: ORG0150-001\n  name: changed-max-num-seqs\n  severity: warning\n"
    "  match: {kind: engine_arg, name: max_num_seqs}\n  message: the meaning of --max-num-seqs changed.\n"
    "  fix: {summary: Check it.}\n  docs: {why: a test}\n  evidence: [{kind: unverified, reason: a test pack}]\n"
)
BASE = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: eng\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: sidecar\n          image: nginx:1.25\n"
    "        - name: vllm\n          image: vllm/vllm-openai:v0.20.0\n"
    '          args: ["--model", "acme/m", "--max-num-seqs", "8"]\n'
)
IMAGE_OP = "- op: replace\n  path: /spec/template/spec/containers/1/image\n  value: vllm/vllm-openai:{tag}\n"


def _inline(ops: str) -> str:
    return "patches:\n  - target: {kind: Deployment, name: eng}\n    patch: |-\n" + "".join(
        "      " + line + "\n" for line in ops.splitlines()
    )


def _smp(image: str, extra: str = "") -> str:
    return (
        "patches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: eng\n"
        "      spec:\n        template:\n          spec:\n            containers:\n"
        f"              - name: vllm\n                image: {image}\n{extra}"
    )


def _repo(root: Path, overlays: dict[str, str], files: dict[str, str] | None = None) -> Path:
    (root / "rules").mkdir(parents=True)
    (root / "rules" / "org.yaml").write_text(PACK)
    app = root / "app"
    (app / "base").mkdir(parents=True)
    (app / "base" / "deploy.yaml").write_text(BASE)
    (app / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    for name, overlay in overlays.items():
        (app / name).mkdir()
        (app / name / "kustomization.yaml").write_text("resources: [../base]\n" + overlay)
    for rel, text in (files or {}).items():
        (app / rel).write_text(text)
    return app


def _scan(app: Path) -> Report:
    return run_scan(ScanOptions.of(paths=[app], to_version="0.32.0", rule_paths=[app.parent / "rules"]))


def _found(report: Report) -> list[tuple[str | None, int | None, int | None, str | None]]:
    return [(f.location.path, f.location.line, f.location.column, f.from_version) for f in report.findings if f.rule.id == RULE]


AT_BASE = ("base/deploy.yaml", 13, 40)  # where the base writes --max-num-seqs


@pytest.mark.parametrize(
    "overlay",
    [
        _inline(IMAGE_OP.format(tag="v0.10.0")),
        _inline(IMAGE_OP.format(tag="v0.10.0") + "- op: add\n  path: /spec/template/spec/containers/1/args/-\n  value: --seed=1\n"),
        _smp("vllm/vllm-openai:v0.10.0"),
        _smp("vllm/vllm-openai:v0.10.0", "                env: [{name: X, value: '1'}]\n"),  # env merges
    ],
    ids=["json6902", "json6902-adds-args", "strategic-merge", "strategic-merge-env"],
)
def test_the_base_args_are_checked_from_the_overlays_release(tmp_path: Path, overlay: str) -> None:
    report = _scan(_repo(tmp_path, {"prod": overlay}))
    assert _found(report) == [(*AT_BASE, "0.10.0")], _found(report)


def test_a_patch_file_sets_the_image_too(tmp_path: Path) -> None:
    overlay = "patches:\n  - path: image.yaml\n    target: {kind: Deployment, name: eng}\n"
    report = _scan(_repo(tmp_path, {"prod": overlay}, {"prod/image.yaml": IMAGE_OP.format(tag="v0.10.0")}))
    assert _found(report) == [(*AT_BASE, "0.10.0")], _found(report)


def test_two_overlays_give_one_finding_at_the_base(tmp_path: Path) -> None:
    image = _inline(IMAGE_OP.format(tag="v0.10.0"))
    report = _scan(_repo(tmp_path, {"prod": image, "staging": image.replace("v0.10.0", "v0.12.0")}))
    assert _found(report) == [(*AT_BASE, "0.10.0")], _found(report)  # the older release stands


@pytest.mark.parametrize(
    "overlay",
    [
        "",  # no overlay: the base's own release, after the rule
        _inline(IMAGE_OP.format(tag="v0.18.0")),  # an overlay after the rule too
        _inline(IMAGE_OP.replace("/1/", "/0/").format(tag="v0.10.0")),  # the sidecar's image
        _inline(IMAGE_OP.format(tag="v0.10.0").replace("vllm/vllm-openai", "acme/server")),  # no vLLM image
        _inline(
            IMAGE_OP.format(tag="v0.10.0")
            + '- op: replace\n  path: /spec/template/spec/containers/1/args\n  value: ["--model", "acme/m"]\n'
        ),  # the args rewritten: the base's are not deployed
        _smp("vllm/vllm-openai:v0.10.0", "                args: [--model, acme/m]\n"),
    ],
    ids=["none", "newer", "sidecar", "other-image", "args-replaced", "smp-args"],
)
def test_no_overlay_release_before_the_rule_gives_nothing(tmp_path: Path, overlay: str) -> None:
    report = _scan(_repo(tmp_path, {"prod": overlay} if overlay else {}))
    assert _found(report) == [], _found(report)


@pytest.mark.parametrize(
    ("entry", "found"),
    [
        ("  - name: vllm/vllm-openai\n    newTag: v0.10.0\n", True),
        ("  - name: docker.io/vllm/vllm-openai\n    newTag: v0.10.0\n", True),
        ("  - name: vllm/vllm-openai\n    newTag: v0.18.0\n", False),  # after the rule
        ("  - name: nginx\n    newTag: '1.27'\n", False),  # the sidecar's
        ("  - name: vllm/vllm-openai\n    newName: acme/server\n    newTag: '1.0'\n", False),  # no vLLM image
    ],
)
def test_the_images_transformer_deploys_the_base_args_with_its_tag(tmp_path: Path, entry: str, found: bool) -> None:
    report = _scan(_repo(tmp_path, {"prod": "images:\n" + entry}))
    assert _found(report) == ([(*AT_BASE, "0.10.0")] if found else []), _found(report)
