"""A kustomize JSON 6902 ``remove`` (or ``replace``) of a base's launch arg by its index: the
overlay's launch is read without the words it takes out; the base, a launch by itself, keeps
its findings, each removed flag's with a note naming the overlay (and no fix: the overlay's
index would then point at another word)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.options import ScanOptions

HYBRID = "VUC0280-011"  # 0.28.0: prefix caching on for hybrid models where the launch does not set it
MODEL = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FLOW = f'[--model, {MODEL}, --swap-space, "8", --no-enable-prefix-caching, --max-model-len, "4096"]'
BLOCK = "".join(
    f"            - {w}\n"
    for w in ("--port", '"8000"', "--model", MODEL, "--swap-space", '"8"', "--no-enable-prefix-caching", "--max-model-len", '"4096"')
)
# where --swap-space and --no-enable-prefix-caching stand in each layout
LAYOUTS = {"flow": (FLOW, 2, 4), "block": ("\n" + BLOCK.rstrip("\n"), 4, 6)}


def _base(kind: str, args: str) -> str:
    return (
        f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: sidecar\n          image: envoyproxy/envoy:v1.30\n"
        "        - name: server\n          image: vllm/vllm-openai:v0.27.0\n"
        f"          args: {args}\n"
    )


ENTRY = {
    "patches": "patches:\n  - path: patch.yaml\n    target: {{kind: {kind}, name: chat}}\n",
    "patchesJson6902": (
        "patchesJson6902:\n  - target:\n      group: apps\n      version: v1\n      kind: {kind}\n      name: chat\n"
        "    path: patch.yaml\n"
    ),
}


def _repo(root: Path, patch: str, kind: str = "Deployment", layout: str = "flow", entry: str = "patches") -> Path:
    (root / "base").mkdir(parents=True)
    (root / "overlays" / "prod").mkdir(parents=True)
    (root / "base" / "deploy.yaml").write_text(_base(kind, LAYOUTS[layout][0]))
    (root / "base" / "kustomization.yaml").write_text("resources:\n  - deploy.yaml\n")
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(
        "resources:\n  - ../../base\n" + ENTRY[entry].format(kind=kind)
    )
    (root / "overlays" / "prod" / "patch.yaml").write_text(patch)
    return root


def _scan(root: Path, to: str = "0.28.0") -> tuple[list[tuple[str, str | None, int | None, str]], list[Fact]]:
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[root], to_version=to, from_version="0.27.0"), facts_out=facts)
    found = [
        (f.rule.id, f.location.path, f.location.line, f.fact.spans.note if f.fact.spans else "")
        for f in report.findings
        if f.rule.id != "VUC000-010"
    ]
    return sorted(found), facts


def _launches(facts: list[Fact]) -> dict[str | None, frozenset[str]]:
    return {f.location.path: f.args for f in facts if f.kind == FactKind.LAUNCH}


def _remove(container: int, *indexes: int, prefix: str = "/spec/template/spec/containers") -> str:
    return "".join(f"- op: remove\n  path: {prefix}/{container}/args/{i}\n" for i in indexes)


@pytest.mark.parametrize("entry", sorted(ENTRY))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_the_overlay_launch_lacks_what_it_removes(tmp_path: Path, kind: str, layout: str, entry: str) -> None:
    _args, swap, prefix = LAYOUTS[layout]
    # the value first, then its flag: the second remove's index is read after the first took a word
    root = _repo(tmp_path, _remove(1, swap + 1, swap, prefix - 2), kind, layout, entry)  # the third: moved down by 2
    found, facts = _scan(root, "0.33.0")
    launches = _launches(facts)
    assert "swap_space" in launches["base/deploy.yaml"]
    overlay = launches["overlays/prod/patch.yaml"]
    assert "swap_space" not in overlay and "enable_prefix_caching" not in overlay and "max_model_len" in overlay
    swap_findings = [f for f in found if f[0] == "VUC0180-001"]
    assert len(swap_findings) == 1 and swap_findings[0][1] == "base/deploy.yaml"  # reported once, at the base
    assert swap_findings[0][3].startswith("kustomize overlay overlays/prod/kustomization.yaml removes this arg")
    assert "(overlays/prod/patch.yaml:3)" in swap_findings[0][3]  # the operation that took the flag itself
    # the prefix-caching flag the second remove took is a finding of neither launch, but the
    # overlay's launch no longer sets it: the hybrid model's new default applies there
    assert (HYBRID, "overlays/prod/patch.yaml", 1) in [f[:3] for f in found]
    assert HYBRID not in [f[0] for f in found if f[1] == "base/deploy.yaml"]


def test_removing_a_flag_the_overlay_adds_back_drops_nothing(tmp_path: Path) -> None:
    patch = _remove(1, 4) + "- op: add\n  path: /spec/template/spec/containers/1/args/-\n  value: --no-enable-prefix-caching\n"
    found, facts = _scan(_repo(tmp_path, patch))
    assert "enable_prefix_caching" in _launches(facts)["overlays/prod/patch.yaml"]
    assert HYBRID not in [f[0] for f in found]


def test_replacing_the_word_at_an_index_removes_the_old_one(tmp_path: Path) -> None:
    patch = "- op: replace\n  path: /spec/template/spec/containers/1/args/4\n  value: --enable-prefix-caching\n"
    _found, facts = _scan(_repo(tmp_path, patch))
    overlay = _launches(facts)["overlays/prod/patch.yaml"]
    assert "no_enable_prefix_caching" not in overlay and "enable_prefix_caching" in overlay


def test_removing_only_a_value_notes_the_flag_and_drops_nothing(tmp_path: Path) -> None:
    found, facts = _scan(_repo(tmp_path, _remove(1, 3)), "0.33.0")
    assert "swap_space" in _launches(facts)["overlays/prod/patch.yaml"]
    (swap,) = [f for f in found if f[0] == "VUC0180-001"]
    assert "changes the words this arg owns" in swap[3]


def test_a_base_another_overlay_deploys_whole_keeps_its_finding(tmp_path: Path) -> None:
    root = _repo(tmp_path, _remove(1, 3, 2))
    (root / "overlays" / "dev").mkdir()
    (root / "overlays" / "dev" / "kustomization.yaml").write_text("resources:\n  - ../../base\n")
    found, _facts = _scan(root, "0.33.0")
    assert [f[:3] for f in found if f[0] == "VUC0180-001"] == [("VUC0180-001", "base/deploy.yaml", 13)]


@pytest.mark.parametrize(
    "why",
    ["missing-base", "patched-between", "index-past-end", "other-container"],
)
def test_what_cannot_be_decided_subtracts_nothing(tmp_path: Path, why: str) -> None:
    patch = _remove(1, 3, 2)
    if why == "index-past-end":
        patch = _remove(1, 9)
    if why == "other-container":
        patch = _remove(0, 2)  # the sidecar: not a vLLM launch
    root = _repo(tmp_path, patch)
    if why == "missing-base":
        (root / "overlays" / "prod" / "kustomization.yaml").write_text(
            "resources:\n  - ../../elsewhere\n" + ENTRY["patches"].format(kind="Deployment")
        )
    if why == "patched-between":
        (root / "base" / "kustomization.yaml").write_text(
            "resources:\n  - deploy.yaml\npatches:\n  - path: more.yaml\n    target: {kind: Deployment, name: chat}\n"
        )
        (root / "base" / "more.yaml").write_text("- op: add\n  path: /spec/template/spec/containers/1/args/0\n  value: --seed=1\n")
    found, facts = _scan(root, "0.33.0")
    for path, args in _launches(facts).items():
        assert "swap_space" in args, path
    (swap,) = [f for f in found if f[0] == "VUC0180-001"]
    assert not swap[3].startswith("kustomize overlay")


def test_fix_leaves_a_removed_flag_to_a_person_and_names_the_overlay(tmp_path: Path) -> None:
    root = _repo(tmp_path, _remove(1, 3, 2))
    before = (root / "base" / "deploy.yaml").read_text()
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert (root / "base" / "deploy.yaml").read_text() == before
    assert "Needs a person" in run.stdout and "kustomize overlay overlays/prod/kustomization.yaml removes" in run.stdout


def test_scan_shows_the_overlay_note(tmp_path: Path) -> None:
    root = _repo(tmp_path, _remove(1, 3, 2))
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "scan", str(root), "--from", "0.20.0", "--to", "0.33.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "note: kustomize overlay overlays/prod/kustomization.yaml removes this arg" in run.stdout, run.stdout


RUNTIME = (
    "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata:\n  name: vllm-rt\nspec:\n"
    "  containers:\n    - name: kserve-container\n      image: vllm/vllm-openai:v0.27.0\n"
    '      command: ["vllm", "serve"]\n      args: ["--port=8080"]\n'
)
ISVC = (
    "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: nano\nspec:\n  predictor:\n"
    f'    model:\n      runtime: vllm-rt\n      args: ["{MODEL}", "--swap-space", "8", "--no-enable-prefix-caching"]\n'
)


@pytest.mark.parametrize("entry", sorted(ENTRY))
def test_a_kserve_predictor_arg_the_overlay_removes(tmp_path: Path, entry: str) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "prod").mkdir()
    (tmp_path / "base" / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / "base" / "isvc.yaml").write_text(ISVC)
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [runtime.yaml, isvc.yaml]\n")
    text = ENTRY[entry].format(kind="InferenceService").replace("group: apps", "group: serving.kserve.io")
    (tmp_path / "prod" / "kustomization.yaml").write_text("resources: [../base]\n" + text.replace("chat", "nano"))
    (tmp_path / "prod" / "patch.yaml").write_text(
        "- op: remove\n  path: /spec/predictor/model/args/3\n- op: remove\n  path: /spec/predictor/model/args/2\n"
        "- op: remove\n  path: /spec/predictor/model/args/1\n"
    )
    found, facts = _scan(tmp_path, "0.33.0")
    overlay = _launches(facts)["prod/patch.yaml"]
    assert "swap_space" not in overlay and "enable_prefix_caching" not in overlay
    (swap,) = [f for f in found if f[0] == "VUC0180-001"]
    assert swap[1] == "base/isvc.yaml" and "kustomize overlay prod/kustomization.yaml removes this arg" in swap[3]


@pytest.mark.parametrize("layout", ["file-resource", "nested", "dot-slash"])
def test_the_base_is_found_as_kustomize_finds_it(tmp_path: Path, layout: str) -> None:
    root = _repo(tmp_path, _remove(1, 3, 2))
    prod = root / "overlays" / "prod" / "kustomization.yaml"
    entry = ENTRY["patches"].format(kind="Deployment")
    if layout == "file-resource":
        prod.write_text("resources:\n  - ../../base/deploy.yaml\n" + entry)
    if layout == "nested":  # overlay -> a middle kustomization without patches -> base
        (root / "overlays" / "middle").mkdir()
        (root / "overlays" / "middle" / "kustomization.yml").write_text("resources: [../../base]\n")
        prod.write_text("resources:\n  - ../middle\n" + entry)
    if layout == "dot-slash":
        prod.write_text("bases:\n  - ./../../base/\n" + entry)
    found, facts = _scan(root, "0.33.0")
    assert "swap_space" not in _launches(facts)["overlays/prod/patch.yaml"]
    (swap,) = [f for f in found if f[0] == "VUC0180-001"]
    assert swap[3].startswith("kustomize overlay overlays/prod/kustomization.yaml removes this arg")


def test_two_bases_of_the_same_name_subtract_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path, _remove(1, 3, 2))
    (root / "base" / "again.yaml").write_text(_base("Deployment", FLOW))
    (root / "base" / "kustomization.yaml").write_text("resources: [deploy.yaml, again.yaml]\n")
    _found, facts = _scan(root, "0.33.0")
    assert "swap_space" in _launches(facts)["overlays/prod/patch.yaml"]


def test_a_pod_container_arg(tmp_path: Path) -> None:
    root = _repo(tmp_path, _remove(0, 3, 2, prefix="/spec/containers"), kind="Pod")
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: chat\nspec:\n  containers:\n    - name: server\n"
        f"      image: vllm/vllm-openai:v0.27.0\n      args: {FLOW}\n"
    )
    (root / "base" / "deploy.yaml").write_text(pod)
    found, facts = _scan(root, "0.33.0")
    assert "swap_space" not in _launches(facts)["overlays/prod/patch.yaml"]
    (swap,) = [f for f in found if f[0] == "VUC0180-001"]
    assert swap[1] == "base/deploy.yaml" and swap[3].startswith("kustomize overlay")
