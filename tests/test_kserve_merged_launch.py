"""A KServe predictor's args and the vLLM ServingRuntime container they are appended to are
one launch (issue 16): rules on the whole launch (an absent flag, the served model) see both
files, and each arg stays at its own file and line."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

HYBRID = "VUC0280-011"  # 0.28.0: prefix caching on by default for hybrid models, when the launch does not set it


def scan(tmp_path: Path, files: dict[str, str]) -> tuple[Report, list[Fact]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.27.0"), facts_out=facts)
    return report, facts


def runtime(name: str, command: str, args: list[str], formats: tuple[str, ...] = ()) -> str:
    listed = "".join(f"        - {a}\n" for a in args)
    supported = "".join(f"    - name: {f}\n" for f in formats)
    return (
        f"apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata:\n  name: {name}\nspec:\n"
        + (f"  supportedModelFormats:\n{supported}" if formats else "")
        + "  containers:\n    - name: sidecar\n      image: busybox\n"
        "    - name: kserve-container\n      image: vllm/vllm-openai:v0.27.0\n"
        f"      command: {command}\n      args:\n{listed}"
    )


def isvc(name: str, how: str, args: list[str]) -> str:
    return (
        "---\napiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
        f"metadata:\n  name: {name}\nspec:\n  predictor:\n    model:\n      {how}\n      args: {args!r}\n"
    ).replace("'", '"')


def launches(facts: list[Fact]) -> list[tuple[str | None, int | None, str, str | None, bool]]:
    return sorted(
        (f.location.path, f.location.line, f.name, f.model, f.resolved) for f in facts if f.kind == FactKind.LAUNCH
    )


def test_predictor_args_and_the_runtime_container_are_one_launch_at_the_predictor(tmp_path: Path) -> None:
    files = {
        "rt/runtime.yaml": runtime("vllm-rt", '["vllm", "serve"]', ["--port=8080", "--max-model-len", '"4096"'], ("acme-lm",)),
        "svc/isvc.yaml": isvc("nano", "runtime: vllm-rt", ["nvidia/NVIDIA-Nemotron-Nano-9B-v2", "--seed", "7"])
        + isvc("nano-off", "modelFormat: {name: acme-lm}", ["nvidia/NVIDIA-Nemotron-Nano-9B-v2", "--no-enable-prefix-caching"])
        + isvc("plain", "runtime: vllm-rt", ["acme/llama-3-8b"]),
    }
    report, facts = scan(tmp_path, files)
    # one launch per InferenceService, at its predictor, serving the model the predictor's
    # first positional names (vllm serve's model_tag); the runtime's own launch is not a second one
    assert launches(facts) == [
        ("svc/isvc.yaml", 9, "vllm serve", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", True),
        ("svc/isvc.yaml", 19, "vllm serve", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", True),
        ("svc/isvc.yaml", 29, "vllm serve", "acme/llama-3-8b", True),
    ]
    merged = next(f for f in facts if f.kind == FactKind.LAUNCH and f.location.line == 9)
    assert {"port", "max_model_len", "seed", "model"} <= merged.args
    # the absent-flag rule sees the whole launch: only the service that sets neither form fires
    hybrid = [(f.location.path, f.location.line) for f in report.findings if f.rule.id == HYBRID]
    assert hybrid == [("svc/isvc.yaml", 9)]
    # each arg at its own file and line: the runtime's in the runtime file, once
    args = sorted((f.location.path, f.location.line, f.name) for f in facts if f.kind == FactKind.ARG)
    assert ("rt/runtime.yaml", 15, "port") in args and args.count(("rt/runtime.yaml", 16, "max_model_len")) == 1
    assert ("svc/isvc.yaml", 10, "seed") in args


def test_a_flag_the_runtime_sets_counts_for_every_predictor_it_serves(tmp_path: Path) -> None:
    files = {
        "runtime.yaml": runtime("vllm-rt", '["vllm", "serve"]', ["--enable-prefix-caching"]),
        "isvc.yaml": isvc("nano", "runtime: vllm-rt", ["--model=nvidia/NVIDIA-Nemotron-Nano-9B-v2"]),
    }
    report, facts = scan(tmp_path, files)
    assert [f.rule.id for f in report.findings if f.rule.id == HYBRID] == []
    assert launches(facts) == [("isvc.yaml", 9, "vllm serve", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", True)]


def test_a_runtime_no_scanned_predictor_names_keeps_its_own_launch(tmp_path: Path) -> None:
    files = {
        "runtime.yaml": runtime("vllm-rt", '["vllm", "serve", "nvidia/NVIDIA-Nemotron-Nano-9B-v2"]', ["--seed=1"]),
        "isvc.yaml": isvc("tab", "runtime: triton", ["--strict-model-config=false"]),
    }
    report, facts = scan(tmp_path, files)
    assert launches(facts) == [("runtime.yaml", 11, "vllm serve", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", True)]
    assert [(f.location.path, f.location.line) for f in report.findings if f.rule.id == HYBRID] == [("runtime.yaml", 11)]


def test_a_vllm_named_runtime_in_the_repository_is_merged_not_read_alone(tmp_path: Path) -> None:
    # a runtime named *vllm* runs vLLM even when the repository does not hold it ...
    alone = {"isvc.yaml": isvc("nano", "runtime: vllm-rt", ["--model=nvidia/NVIDIA-Nemotron-Nano-9B-v2"])}
    report, facts = scan(tmp_path / "alone", alone)
    assert launches(facts) == [("isvc.yaml", 9, "kserve runtime vllm-rt", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", True)]
    # ... and when it does, its container's args are part of the one launch
    held = {**alone, "runtime.yaml": runtime("vllm-rt", '["python3", "-m", "vllm.entrypoints.openai.api_server"]', ["--no-enable-prefix-caching"])}
    report, facts = scan(tmp_path / "held", held)
    assert launches(facts) == [
        ("isvc.yaml", 9, "python -m vllm.entrypoints.openai.api_server", "nvidia/NVIDIA-Nemotron-Nano-9B-v2", True)
    ]
    assert not [f for f in report.findings if f.rule.id == HYBRID]


def test_words_the_runtime_leaves_unresolved_make_the_merged_launch_unresolved(tmp_path: Path) -> None:
    files = {
        "runtime.yaml": runtime("vllm-rt", '["sh", "-c", "vllm serve $EXTRA"]', []).replace("      args:\n", ""),
        "isvc.yaml": isvc("nano", "runtime: vllm-rt", ["--model=nvidia/NVIDIA-Nemotron-Nano-9B-v2"]),
    }
    report, facts = scan(tmp_path, files)
    merged = [f for f in facts if f.kind == FactKind.LAUNCH]
    assert [(f.location.path, f.resolved) for f in merged] == [("isvc.yaml", False)]
    assert not [f for f in report.findings if f.rule.id == HYBRID]  # $EXTRA may set it: nothing said
    assert any("$EXTRA" in n and "isvc.yaml:9" in n for n in report.notes), report.notes


DEPLOY = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: engine\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.27.0\n"
    '          args: ["--model", "acme/d"]\n'
)


def test_json6902_patches_of_predictor_and_container_args_are_checked_at_the_patch_line(tmp_path: Path) -> None:
    files = {
        "base/runtime.yaml": runtime("vllm-rt", '["vllm", "serve"]', ["--port=8080"]),
        "base/isvc.yaml": isvc("chat", "runtime: vllm-rt", ["acme/m"]),
        "base/deploy.yaml": DEPLOY,
        "base/kustomization.yaml": "resources: [runtime.yaml, isvc.yaml, deploy.yaml]\n",
        "overlays/prod/kustomization.yaml": (
            "resources:\n  - ../../base\npatchesJson6902:\n"
            "  - target: {group: serving.kserve.io, version: v1beta1, kind: InferenceService, name: chat}\n"
            "    path: isvc-args.yaml\npatches:\n"
            "  - target: {kind: Deployment, name: engine}\n    path: ops/deploy-args.json\n"
            "  - target: {kind: Deployment, name: absent}\n    path: ops/deploy-args.json\n"
        ),
        "overlays/prod/isvc-args.yaml": (
            "- op: add\n  path: /spec/predictor/model/args/-\n  value: --max-num-partial-prefills=2\n"
            "- op: remove\n  path: /spec/predictor/model/args/0\n"
            "- op: add\n  path: /spec/predictor/model/env/-\n  value: {name: X, value: '--preemption-mode'}\n"
        ),
        "overlays/prod/ops/deploy-args.json": (
            '[\n  {"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "--calculate-kv-scales"},\n'
            '  {"op": "replace", "path": "/spec/template/spec/containers/0/args/3", "value": "--seed=1"}\n]\n'
        ),
    }
    report, facts = scan(tmp_path, files)
    rows = sorted((f.rule.id, f.location.path, f.location.line, f.location.column) for f in report.findings if f.severity.value == "blocker")
    assert rows == [
        ("VUC0270-001", "overlays/prod/isvc-args.yaml", 3, 10),
        ("VUC0280-001", "overlays/prod/ops/deploy-args.json", 2, 78),
    ]
    # the patched launches are their targets' launches, one per patch and target
    patched = sorted((f.location.path, f.location.line, frozenset(f.args)) for f in facts if f.kind == FactKind.LAUNCH)
    assert ("overlays/prod/ops/deploy-args.json", 2, frozenset({"model", "calculate_kv_scales", "seed"})) in patched
    assert ("overlays/prod/isvc-args.yaml", 1, frozenset({"port", "max_num_partial_prefills"})) in patched
    # the Deployment of the base stays a launch of its own; the runtime is none by itself
    assert ("base/deploy.yaml", 11) in {(p, line) for p, line, _a in patched}
    assert not [p for p, _l, _a in patched if p == "base/runtime.yaml"]


def test_a_patch_of_a_target_that_runs_no_vllm_is_not_read(tmp_path: Path) -> None:
    files = {
        "kustomization.yaml": "resources: [deploy.yaml]\npatches:\n  - target: {kind: Deployment, name: engine}\n    path: p.yaml\n",
        "deploy.yaml": DEPLOY.replace("vllm/vllm-openai:v0.27.0", "busybox").replace("acme/d", "x"),
        "p.yaml": "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --calculate-kv-scales\n",
    }
    report, facts = scan(tmp_path, files)
    assert not report.findings or all(f.rule.id != "VUC0280-001" for f in report.findings)
    assert not [f for f in facts if f.kind == FactKind.ARG]


def test_a_deprecated_runtime_entry_point_is_reported_once_at_the_runtime(tmp_path: Path) -> None:
    command = '["python3", "-m", "vllm.entrypoints.openai.api_server"]'
    files = {
        "rt/runtime.yaml": runtime("vllm-rt", command, ["--port=8080"], ("acme-lm",)),
        "svc/isvc.yaml": isvc("a", "runtime: vllm-rt", ["--model=acme/a"]) + isvc("b", "modelFormat: {name: acme-lm}", ["--model=acme/b"]),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.27.0"))
    entry = [(f.location.path, f.location.line) for f in report.findings if f.rule.id == "VUC000-012"]
    line = files["rt/runtime.yaml"].split("\n").index(f"      command: {command}") + 1
    assert entry == [("rt/runtime.yaml", line)]


def test_a_runtime_entry_point_in_the_same_file_is_reported_at_the_runtime(tmp_path: Path) -> None:
    command = '["python3", "-m", "vllm.entrypoints.openai.api_server"]'
    text = runtime("vllm-rt", command, ["--port=8080"], ("acme-lm",)) + isvc("a", "runtime: vllm-rt", ["--model=acme/a"])
    (tmp_path / "all.yaml").write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0", from_version="0.27.0"))
    entry = [(f.location.path, f.location.line) for f in report.findings if f.rule.id == "VUC000-012"]
    assert entry == [("all.yaml", text.split("\n").index(f"      command: {command}") + 1)]
