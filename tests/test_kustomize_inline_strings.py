"""Inline kustomize patches written as YAML strings (quoted, folded, plain) are read from their
value: each word is placed where the string writes it when the string can be aligned with its
value, else at its ``patch:`` key, and a fix leaves them to a person; a string that is no
patch is named, with its line, never passed over."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.kustomize_inline import INLINE_NOTE

BASE = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: server\n          image: vllm/vllm-openai:v0.17.0\n"
    '          args: ["--model", "acme/m", "--swap-space", "8", "--port", "8000"]\n'
)
TARGET = "  - target: {{kind: {kind}, name: chat}}\n"
ADD = "/spec/template/spec/containers/0/args/-"
PATCHES = {
    "single-quoted-json": f"""    patch: '[{{"op": "add", "path": "{ADD}", "value": "--calculate-kv-scales"}}]'\n""",
    "double-quoted-yaml": f'    patch: "- op: add\\n  path: {ADD}\\n  value: --calculate-kv-scales\\n"\n',
    "folded-json": f"""    patch: >-\n      [{{"op": "add", "path": "{ADD}",\n      "value": "--calculate-kv-scales"}}]\n""",
    "double-quoted-two-lines": f'    patch: "[{{\\"op\\": \\"add\\", \\"path\\": \\"{ADD}\\",\n      \\"value\\": \\"--calculate-kv-scales\\"}}]"\n',
}


def _repo(root: Path, patches: str, kind: str = "Deployment") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "prod").mkdir()
    (root / "base" / "deploy.yaml").write_text(BASE.format(kind=kind))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (root / "prod" / "kustomization.yaml").write_text("resources: [../base]\npatches:\n" + patches)
    return root


def _scan(root: Path) -> tuple[list[tuple[str, str | None, int | None, int | None, str]], list[tuple[str, str, int | None]]]:
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.33.0", from_version="0.17.0"))
    found = sorted(
        (f.rule.id, f.location.path, f.location.line, f.location.column, f.fact.spans.note if f.fact.spans else "")
        for f in report.findings
        if f.rule.id != "VUC000-010"
    )
    return found, [(s.path, s.reason, s.line) for s in report.skipped]


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
@pytest.mark.parametrize("style", sorted(PATCHES))
def test_a_string_patch_is_read_where_it_writes_each_word(tmp_path: Path, style: str, kind: str) -> None:
    text = TARGET.format(kind=kind) + PATCHES[style]
    root = _repo(tmp_path, text, kind)
    found, skipped = _scan(root)
    lines = (root / "prod" / "kustomization.yaml").read_text().split("\n")
    line = next(i for i, t in enumerate(lines, 1) if "--calculate-kv-scales" in t)
    column = lines[line - 1].index("--calculate-kv-scales") + 1
    assert ("VUC0280-001", "prod/kustomization.yaml", line, column, INLINE_NOTE) in found
    assert not skipped


def test_a_string_that_cannot_be_aligned_is_read_at_its_key(tmp_path: Path) -> None:
    # \u escapes are decoded by YAML: the value's characters no longer line up with the text
    patch = f'    patch: "- op: add\\n  path: {ADD}\\n  value: \\u002d-calculate-kv-scales\\n"\n'
    found, _skipped = _scan(_repo(tmp_path, TARGET.format(kind="Deployment") + patch))
    assert [f for f in found if f[0] == "VUC0280-001"] == [("VUC0280-001", "prod/kustomization.yaml", 4, 5, INLINE_NOTE)]


def test_a_strategic_merge_patch_string(tmp_path: Path) -> None:
    smp = (
        "apiVersion: apps/v1\\nkind: Deployment\\nmetadata: {name: chat}\\nspec:\\n  template:\\n    spec:\\n"
        "      containers:\\n        - name: server\\n          args: [--model, acme/m, --max-num-partial-prefills, '2']\\n"
    )
    found, _skipped = _scan(_repo(tmp_path, f'  - patch: "{smp}"\n'))
    line = (tmp_path / "prod" / "kustomization.yaml").read_text().split("\n")[2]
    assert [f[:4] for f in found if f[0] == "VUC0270-001"] == [
        ("VUC0270-001", "prod/kustomization.yaml", 3, line.index("--max-num-partial-prefills") + 1)
    ]


REMOVES = {
    "single-quoted": (
        '    patch: \'[{"op": "remove", "path": "/spec/template/spec/containers/0/args/3"}, '
        '{"op": "remove", "path": "/spec/template/spec/containers/0/args/2"}]\'\n',
        4,
    ),
    "literal-block": (
        "    patch: |-\n      - op: remove\n        path: /spec/template/spec/containers/0/args/3\n"
        "      - op: remove\n        path: /spec/template/spec/containers/0/args/2\n",
        7,
    ),
}


@pytest.mark.parametrize("style", sorted(REMOVES))
def test_an_inline_remove_is_subtracted_too(tmp_path: Path, style: str) -> None:
    patch, line = REMOVES[style]
    found, _skipped = _scan(_repo(tmp_path, TARGET.format(kind="Deployment") + patch))
    (swap,) = [f for f in found if f[0] == "VUC0180-001"]
    assert swap[1] == "base/deploy.yaml"
    assert swap[4].startswith(f"kustomize overlay prod/kustomization.yaml removes this arg (prod/kustomization.yaml:{line})")


@pytest.mark.parametrize(
    ("patch", "why"),
    [
        ("    patch:\n      op add path\n      value --calculate-kv-scales\n", "reads as neither JSON 6902 operations nor an object"),
        ("    patch: \"- op: add\\n  path: [\\n\"\n", "is no YAML"),
        ("    patch: |\n      - op: add\n        path: [\n", "is no YAML"),
        ("    patch:\n      - op: add\n", "is not a string"),
    ],
    ids=["plain-words", "quoted-broken", "literal-broken", "a-list"],
)
def test_a_patch_that_cannot_be_read_is_named_with_its_line(tmp_path: Path, patch: str, why: str) -> None:
    _found, skipped = _scan(_repo(tmp_path, TARGET.format(kind="Deployment") + patch))
    assert [(s[0], s[2]) for s in skipped] == [("prod/kustomization.yaml", 4)]
    assert why in skipped[0][1] and "line 4" in skipped[0][1]


def test_operations_without_a_target_are_named(tmp_path: Path) -> None:
    _found, skipped = _scan(_repo(tmp_path, f"""  - patch: '[{{"op": "add", "path": "{ADD}", "value": "--seed"}}]'\n"""))
    assert len(skipped) == 1 and "names no target" in skipped[0][1] and skipped[0][2] == 3


def test_fix_leaves_a_string_patch_to_a_person(tmp_path: Path) -> None:
    root = _repo(tmp_path, TARGET.format(kind="Deployment") + PATCHES["single-quoted-json"])
    before = (root / "prod" / "kustomization.yaml").read_text()
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (root / "prod" / "kustomization.yaml").read_text() == before
    assert "Needs a person" in run.stdout and "inline kustomize patch" in run.stdout, run.stdout + run.stderr
    assert "vllm/vllm-openai:v0.17.0" in (root / "base" / "deploy.yaml").read_text()  # held back
