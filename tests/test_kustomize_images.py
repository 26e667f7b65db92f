"""A kustomize overlay that changes the vLLM image deploys that image: JSON 6902 ``add`` /
``replace`` of a container's ``image`` (inline or file patches, ``patches:`` and
``patchesJson6902:``), a strategic-merge patch's ``image:`` (matched by container name) and
the ``images:`` transformer. The overlay's image counts in the run's from-version, gets the
version-to-move advisory (``VUC000-010``) where the overlay writes it, and ``fix`` bumps it
there. A patch of another container, or of an image that is no vLLM one, says nothing of
vLLM; a value that names no image is reported unresolved with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

MOVE = "VUC000-010"
BASE = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: eng\nspec:\n{pod}"
    "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.20.0\n"
    '          args: ["--model", "acme/m", "--port", "8000"]\n'
    "        - name: proxy\n          image: nginx:1.25\n"
)
TEMPLATE = "  template:\n    spec:\n"
IMAGE_PATH = "/spec/template/spec/containers/{index}/image"


def _repo(root: Path, overlay: str, extra: dict[str, str] | None = None, kind: str = "Deployment") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    pod = TEMPLATE if kind != "Pod" else ""
    text = BASE.format(kind=kind, pod=pod)
    if kind == "Pod":  # a Pod's containers are under spec: one level less
        text = text.replace("\n      ", "\n  ").replace("\n        ", "\n    ").replace("\n          ", "\n      ")
    (root / "base" / "deploy.yaml").write_text(text)
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\n" + overlay)
    for name, content in (extra or {}).items():
        (root / "prod" / name).write_text(content)
    return root


def _scan(root: Path, to: str = "0.32.0") -> Report:
    return run_scan(ScanOptions.of(paths=[root], to_version=to))


def _moves(report: Report) -> list[tuple[str | None, int | None, int | None, str | None]]:
    return sorted((f.location.path, f.location.line, f.location.column, f.fact.raw) for f in report.findings if f.rule.id == MOVE)


def _at(root: Path, path: str, needle: str) -> tuple[int, int]:
    lines = (root / path).read_text().split("\n")
    line = next(i for i, t in enumerate(lines, 1) if needle in t)
    return line, lines[line - 1].index(needle) + 1


INLINE_OP = (
    "patches:\n  - target: {{kind: {kind}, name: eng}}\n    patch: |-\n"
    "      - op: {op}\n        path: {path}\n        value: vllm/vllm-openai:v0.10.0\n"
)
FILE_OP_YAML = "- op: {op}\n  path: {path}\n  value: vllm/vllm-openai:v0.10.0\n"
FILE_OP_JSON = '[{{"op": "{op}", "path": "{path}", "value": "vllm/vllm-openai:v0.10.0"}}]\n'

CASES = {
    "inline-replace": (INLINE_OP, None),
    "inline-add": (INLINE_OP.replace("{op}", "add"), None),
    "patches-file-yaml": ("patches:\n  - path: image.yaml\n    target: {{kind: {kind}, name: eng}}\n", FILE_OP_YAML),
    "json6902-file-json": (
        "patchesJson6902:\n  - target: {{group: apps, version: v1, kind: {kind}, name: eng}}\n    path: image.json\n",
        FILE_OP_JSON,
    ),
    "kind-only-target": (INLINE_OP.replace(", name: eng", ""), None),
    "json6902-inline": (INLINE_OP.replace("patches:", "patchesJson6902:").replace("{{kind:", "{{group: apps, version: v1, kind:"), None),
}


def _case(root: Path, case: str, kind: str = "Deployment", op: str = "replace") -> tuple[Path, str]:
    overlay, patch = CASES[case]
    path = IMAGE_PATH.format(index=0) if kind != "Pod" else "/spec/containers/0/image"
    overlay = overlay.format(kind=kind, op=op, path=path)
    extra = {}
    where = "prod/kustomization.yaml"
    if patch is not None:
        name = "image.json" if "json" in case.split("-")[-1] else "image.yaml"
        extra[name] = patch.format(op=op, path=path)
        where = f"prod/{name}"
    return _repo(root, overlay, extra, kind), where


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_json6902_image_op_is_the_overlays_vllm_image(tmp_path: Path, case: str) -> None:
    root, where = _case(tmp_path, case)
    report = _scan(root)
    assert report.from_version == "0.10.0", (report.from_version, report.from_source)
    line, column = _at(root, where, "vllm/vllm-openai:v0.10.0")
    assert (where, line, column, "vllm/vllm-openai:v0.10.0") in _moves(report), _moves(report)
    overlay = next(f for f in report.findings if f.rule.id == MOVE and f.location.path == where)
    assert overlay.from_version == "0.10.0"  # what that overlay runs
    fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=True)
    assert "vllm/vllm-openai:v0.32.0" in (root / where).read_text()
    assert "v0.10.0" not in (root / where).read_text()
    after = _scan(root)
    assert not [m for m in _moves(after) if m[0] == where], _moves(after)


def test_a_pods_image_path_is_read_too(tmp_path: Path) -> None:
    root, where = _case(tmp_path, "inline-replace", kind="Pod")
    report = _scan(root)
    assert report.from_version == "0.10.0"
    assert [m for m in _moves(report) if m[0] == where], _moves(report)


def test_the_last_image_op_of_a_container_is_what_runs(tmp_path: Path) -> None:
    overlay = (
        "patches:\n  - target: {kind: Deployment, name: eng}\n    patch: |-\n"
        f"      - op: replace\n        path: {IMAGE_PATH.format(index=0)}\n        value: vllm/vllm-openai:v0.9.0\n"
        f"      - op: replace\n        path: {IMAGE_PATH.format(index=0)}\n        value: vllm/vllm-openai:v0.12.0\n"
    )
    report = _scan(_repo(tmp_path, overlay))
    assert report.from_version == "0.12.0", report.from_source
    assert [m[3] for m in _moves(report) if m[0] == "prod/kustomization.yaml"] == ["vllm/vllm-openai:v0.12.0"]


SIDECAR = (
    "patches:\n  - target: {kind: Deployment, name: eng}\n    patch: |-\n"
    f"      - op: replace\n        path: {IMAGE_PATH.format(index=1)}\n        value: IMAGE\n"
)


@pytest.mark.parametrize("image", ["nginx:1.27", "vllm/vllm-openai:v0.5.0"])
def test_an_image_op_on_a_container_that_runs_no_vllm_says_nothing(tmp_path: Path, image: str) -> None:
    report = _scan(_repo(tmp_path, SIDECAR.replace("IMAGE", image)))
    assert report.from_version == "0.20.0", report.from_source
    assert [m[0] for m in _moves(report)] == ["base/deploy.yaml"]


def test_a_non_vllm_image_in_place_of_the_vllm_one_is_no_vllm_version(tmp_path: Path) -> None:
    overlay = INLINE_OP.format(kind="Deployment", op="replace", path=IMAGE_PATH.format(index=0))
    report = _scan(_repo(tmp_path, overlay.replace("vllm/vllm-openai:v0.10.0", "acme/server:0.10.0")))
    assert report.from_version == "0.20.0"
    assert [m[0] for m in _moves(report)] == ["base/deploy.yaml"]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("${VLLM_IMAGE}", "a placeholder kustomize does not expand"),
        ("null", "writes no value (null)"),
        ("[vllm/vllm-openai, v0.10.0]", "writes no string"),
    ],
)
@pytest.mark.parametrize("inline", [True, False])
def test_an_image_op_that_names_no_image_is_unresolved_with_its_line(
    tmp_path: Path, value: str, why: str, inline: bool
) -> None:
    ops = f"- op: replace\n  path: {IMAGE_PATH.format(index=0)}\n  value: {value}\n"
    if inline:
        overlay = "patches:\n  - target: {kind: Deployment, name: eng}\n    patch: |-\n" + "".join(
            "      " + line + "\n" for line in ops.splitlines()
        )
        root, where = _repo(tmp_path, overlay), "prod/kustomization.yaml"
    else:
        overlay = "patches:\n  - path: image.yaml\n    target: {kind: Deployment, name: eng}\n"
        root, where = _repo(tmp_path, overlay, {"image.yaml": ops}), "prod/image.yaml"
    report = _scan(root)
    line = _at(root, where, "- op: replace")[0]
    found = [(s.path, s.line) for s in report.skipped if s.reason.startswith("unresolved:") and why in s.reason]
    assert found == [(where, line)], [(s.path, s.line, s.reason) for s in report.skipped]
    assert report.from_version == "0.20.0"  # nothing invented


INLINE_SMP = (
    "patches:\n  - patch: |-\n      apiVersion: apps/v1\n      kind: Deployment\n      metadata:\n        name: eng\n"
    "      spec:\n        template:\n          spec:\n            containers:\n"
    "              - name: {name}\n                image: {image}\n"
)


def test_an_inline_strategic_merge_patch_sets_the_vllm_containers_image(tmp_path: Path) -> None:
    root = _repo(tmp_path, INLINE_SMP.format(name="vllm", image="vllm/vllm-openai:v0.10.0"))
    report = _scan(root)
    assert report.from_version == "0.10.0"
    line, column = _at(root, "prod/kustomization.yaml", "vllm/vllm-openai:v0.10.0")
    assert ("prod/kustomization.yaml", line, column, "vllm/vllm-openai:v0.10.0") in _moves(report)
    fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=True)
    assert "image: vllm/vllm-openai:v0.32.0" in (root / "prod" / "kustomization.yaml").read_text()


def test_an_inline_strategic_merge_patch_with_args_and_an_image_reads_both(tmp_path: Path) -> None:
    overlay = INLINE_SMP.format(name="vllm", image="vllm/vllm-openai:v0.10.0") + "                args: [--swap-space, '4']\n"
    root = _repo(tmp_path, overlay)
    report = _scan(root)
    line, column = _at(root, "prod/kustomization.yaml", "--swap-space")
    assert any(
        f.rule.id == "VUC0180-001" and (f.location.path, f.location.line, f.location.column) == ("prod/kustomization.yaml", line, column)
        for f in report.findings
    ), [(f.rule.id, f.location) for f in report.findings]


@pytest.mark.parametrize("name", ["proxy", "other"])
def test_a_strategic_merge_patch_of_another_container_says_nothing(tmp_path: Path, name: str) -> None:
    report = _scan(_repo(tmp_path, INLINE_SMP.format(name=name, image="vllm/vllm-openai:v0.5.0")))
    assert report.from_version == "0.20.0"
    assert [m[0] for m in _moves(report)] == ["base/deploy.yaml"]


def test_an_inline_strategic_merge_image_placeholder_is_unresolved(tmp_path: Path) -> None:
    root = _repo(tmp_path, INLINE_SMP.format(name="vllm", image="${VLLM_IMAGE}"))
    report = _scan(root)
    line = _at(root, "prod/kustomization.yaml", "${VLLM_IMAGE}")[0]
    assert [(s.path, s.line) for s in report.skipped if s.reason.startswith("unresolved:")] == [("prod/kustomization.yaml", line)]


def test_a_strategic_merge_patch_file_sets_the_image_once(tmp_path: Path) -> None:
    smp = INLINE_SMP.split("|-\n", 1)[1].format(name="vllm", image="vllm/vllm-openai:v0.10.0")
    smp = "\n".join(line[6:] for line in smp.split("\n"))
    root = _repo(tmp_path, "patches:\n  - path: smp.yaml\n", {"smp.yaml": smp})
    report = _scan(root)
    assert report.from_version == "0.10.0"
    assert [m[0] for m in _moves(report)].count("prod/smp.yaml") == 1, _moves(report)


@pytest.mark.parametrize(
    ("entry", "version", "moved"),
    [
        ("  - name: vllm/vllm-openai\n    newTag: v0.10.0\n", "0.10.0", True),
        ("  - name: docker.io/vllm/vllm-openai\n    newTag: v0.10.0\n", "0.10.0", True),
        ("  - name: vllm/vllm-openai\n    newName: acme/server\n    newTag: '1.0'\n", "0.20.0", False),
        # a newName alone keeps the resource's tag: no version of its own, nothing floating
        ("  - name: vllm/vllm-openai\n    newName: registry.corp/mirror/vllm/vllm-openai\n", "0.20.0", False),
    ],
)
def test_the_images_transformer_sets_the_tag_its_resources_run(tmp_path: Path, entry: str, version: str, moved: bool) -> None:
    root = _repo(tmp_path, "images:\n" + entry)
    report = _scan(root)
    assert report.from_version == version, report.from_source
    assert any(m[0] == "prod/kustomization.yaml" for m in _moves(report)) is moved, _moves(report)
    assert not [f for f in report.findings if f.rule.id == "VUC000-011"], [f.rule.message for f in report.findings]
    if moved:
        fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=True)
        assert "newTag: v0.32.0" in (root / "prod" / "kustomization.yaml").read_text()


def test_a_quoted_inline_image_op_is_reported_where_written_and_left_to_a_person(tmp_path: Path) -> None:
    op = f'[{{"op": "replace", "path": "{IMAGE_PATH.format(index=0)}", "value": "vllm/vllm-openai:v0.10.0"}}]'
    root = _repo(tmp_path, f"patches:\n  - target: {{kind: Deployment, name: eng}}\n    patch: '{op}'\n")
    report = _scan(root)
    line, column = _at(root, "prod/kustomization.yaml", "vllm/vllm-openai:v0.10.0")
    assert ("prod/kustomization.yaml", line, column, "vllm/vllm-openai:v0.10.0") in _moves(report), _moves(report)
    assert report.from_version == "0.10.0"
    before = (root / "prod" / "kustomization.yaml").read_text()
    fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=True)
    assert (root / "prod" / "kustomization.yaml").read_text() == before  # inside a string: by hand


def test_an_images_digest_pin_is_left_to_a_person(tmp_path: Path) -> None:
    entry = "  - name: vllm/vllm-openai\n    newTag: v0.10.0\n    digest: sha256:" + "a" * 64 + "\n"
    root = _repo(tmp_path, "images:\n" + entry)
    before = (root / "prod" / "kustomization.yaml").read_text()
    fix_paths(ScanOptions.of(paths=[root], to_version="0.32.0"), bump=True)
    assert (root / "prod" / "kustomization.yaml").read_text() == before


@pytest.mark.parametrize("smp", [False, True])
def test_the_words_a_patch_writes_beside_the_image_are_checked_from_its_release(tmp_path: Path, smp: bool) -> None:
    if smp:
        overlay = INLINE_SMP.format(name="vllm", image="vllm/vllm-openai:v0.10.0") + "                args: [--swap-space, '4']\n"
    else:
        overlay = (
            "patches:\n  - target: {kind: Deployment, name: eng}\n    patch: |-\n"
            f"      - op: replace\n        path: {IMAGE_PATH.format(index=0)}\n        value: vllm/vllm-openai:v0.10.0\n"
            "      - op: add\n        path: /spec/template/spec/containers/0/args/-\n        value: --swap-space=4\n"
        )
    root = _repo(tmp_path, overlay)
    report = _scan(root)
    (swap,) = [f for f in report.findings if f.rule.id == "VUC0180-001"]
    assert swap.location.path == "prod/kustomization.yaml"
    assert swap.from_version == "0.10.0", (swap.from_version, swap.from_source)


def test_an_inline_json6902_entry_writes_its_args_too(tmp_path: Path) -> None:
    overlay = (
        "patchesJson6902:\n  - target: {group: apps, version: v1, kind: Deployment, name: eng}\n    patch: |-\n"
        "      - op: add\n        path: /spec/template/spec/containers/0/args/-\n        value: --swap-space=8\n"
    )
    root = _repo(tmp_path, overlay)
    report = _scan(root)
    line, column = _at(root, "prod/kustomization.yaml", "--swap-space=8")
    assert [(f.location.line, f.location.column) for f in report.findings if f.rule.id == "VUC0180-001"] == [(line, column)]
