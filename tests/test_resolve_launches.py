"""Launches resolved across one more level of indirection (issue 16): functions that build a
vLLM argv from their parameters, read at each call in the file."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions


def scan(tmp_path: Path, files: dict[str, str], frm: str = "0.10.0") -> tuple[Report, list[Fact]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version=frm), facts_out=facts)
    return report, facts


def found(report: Report) -> list[tuple[str, str, int | None, int | None, str]]:
    rows = [
        (f.fact.raw.split()[0] if f.fact.raw else f.fact.name, f.location.path or "", f.location.line,
         f.location.column, f.severity.value)
        for f in report.findings
    ]
    return sorted(rows, key=lambda r: (r[1], r[2] or 0, r[3] or 0, r[0]))


KWARGS_BUILDER = '''import subprocess


def start(model, **opts):
    argv = ["vllm", "serve", model]
    for k, v in opts.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return subprocess.Popen(argv)


start("acme/coder-7b", port=9100, preemption_mode="swap")
'''


def test_a_kwargs_builder_reports_each_flag_at_the_keyword_of_its_call(tmp_path: Path) -> None:
    report, facts = scan(tmp_path, {"launch.py": KWARGS_BUILDER})
    assert found(report) == [("--preemption-mode", "launch.py", 11, 35, "blocker")]
    assert report.notes == ()  # the call says every keyword: nothing left unresolved
    launches = [f for f in facts if f.kind.value == "launch"]
    assert [(f.location.line, f.model) for f in launches] == [(11, "acme/coder-7b")]


def test_builder_variants_positional_keyword_defaults_and_comprehensions(tmp_path: Path) -> None:
    text = '''import subprocess, sys


def launch(model, port=8000, *, gpu="0", **engine):
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--port", str(port)]
    cmd.extend([x for k, v in engine.items() for x in (f"--{k.replace('_', '-')}", str(v))])
    subprocess.run(cmd, check=True)


launch("acme/a", scheduler_delay_factor=0.5, max_num_seqs=8)
launch(model="acme/b", port=9000, preemption_mode="recompute")
launch("acme/c", **CONFIG)
'''
    report, facts = scan(tmp_path, {"run.py": text})
    assert found(report) == [
        ("--scheduler-delay-factor", "run.py", 10, 18, "blocker"),
        ("--preemption-mode", "run.py", 11, 35, "blocker"),
    ]
    # one launch per call, each at its call, the served model its own
    launches = sorted((f.location.line, f.model, f.resolved) for f in facts if f.kind.value == "launch")
    assert launches == [(10, "acme/a", True), (11, "acme/b", True), (12, "acme/c", False)]
    # the splat the file does not say is named with its file and line
    assert any("**CONFIG" in n and "run.py:12" in n for n in report.notes)


def test_an_argv_a_function_returns_is_read_at_each_call_that_runs_it(tmp_path: Path) -> None:
    text = '''import subprocess


def build_cmd(model, **engine):
    cmd = ["vllm", "serve", model]
    for key, value in engine.items():
        cmd.extend([f"--{key.replace('_', '-')}", str(value)])
    return cmd


subprocess.run(build_cmd("acme/a", preemption_mode="swap"), check=True)
subprocess.Popen(build_cmd("acme/b", scheduler_delay_factor=0.1))
subprocess.Popen(build_cmd("acme/c", max_num_seqs=2))
'''
    report, facts = scan(tmp_path, {"run.py": text})
    assert found(report) == [
        ("--preemption-mode", "run.py", 11, 36, "blocker"),
        ("--scheduler-delay-factor", "run.py", 12, 38, "blocker"),
    ]
    launches = sorted((f.location.line, f.model, f.group) for f in facts if f.kind.value == "launch")
    assert launches == [(11, "acme/a", "call 11:16"), (12, "acme/b", "call 12:18"), (13, "acme/c", "call 13:18")]
    assert report.notes == ()


def test_a_builder_no_one_calls_stays_unresolved_at_its_definition(tmp_path: Path) -> None:
    text = KWARGS_BUILDER.rsplit("\n\n", 1)[0] + "\n"
    report, _facts = scan(tmp_path, {"launch.py": text})
    assert report.findings == ()
    assert any("launch.py:5" in n for n in report.notes)


def test_a_builder_with_a_literal_dict_loop_is_not_read_twice(tmp_path: Path) -> None:
    text = '''import subprocess
OPTS = {"preemption_mode": "swap", "seed": 1}


def serve(model):
    argv = ["vllm", "serve", model]
    for k, v in OPTS.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    subprocess.run(argv)


serve("acme/x")
'''
    report, _facts = scan(tmp_path, {"serve.py": text})
    assert found(report) == [("--preemption-mode", "serve.py", 2, 10, "blocker")]
    assert report.notes == ()


PRESETS = '''BASE = {"seed": 0}
FP8_PRESET = {
    **BASE,
    "quantization": "fp8",
    "swap_space": 8,
}
'''


def test_a_dict_imported_from_another_module_is_followed_to_its_lines(tmp_path: Path) -> None:
    offline = '''from vllm import LLM
from presets import FP8_PRESET
import presets

llm = LLM(model="acme/coder-7b", **FP8_PRESET)
other = LLM(model="acme/coder-7b", **presets.FP8_PRESET)
'''
    report, facts = scan(tmp_path, {"presets.py": PRESETS, "offline.py": offline}, frm="0.26.0")
    # swap_space is reported where presets.py writes it, once for both calls
    assert [(f.fact.name, f.location.path, f.location.line, f.location.column) for f in report.findings] == [
        ("swap_space", "presets.py", 5, 6)
    ]
    assert report.notes == ()
    seeds = [f for f in facts if f.kind.value == "arg" and f.name == "seed"]
    assert {(f.location.path, f.location.line) for f in seeds} == {("presets.py", 1)}
    # a key written in another module is not edited from this file's launch
    assert all(f.spans is not None and "presets.py" in f.spans.note for f in seeds)


def test_relative_aliased_and_re_exported_imports(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "",
        "app/conf/__init__.py": "",
        "app/conf/base.py": PRESETS,
        "app/conf/presets.py": "from .base import FP8_PRESET as EXPORTED\n",
        "app/serve.py": (
            "from vllm import LLM\n"
            "from .conf.presets import EXPORTED as P\n"
            "LLM('acme/m', **P)\n"
        ),
        # a module of the same name elsewhere in the repository is not the one imported
        "tools/conf/presets.py": "EXPORTED = {'preemption_mode': 'swap'}\n",
    }
    report, _facts = scan(tmp_path, files, frm="0.26.0")
    assert [(f.fact.name, f.location.path, f.location.line) for f in report.findings] == [
        ("swap_space", "app/conf/base.py", 5)
    ]


def test_a_dict_the_repository_does_not_hold_is_named_unresolved(tmp_path: Path) -> None:
    offline = "from vllm import LLM\nfrom company_presets import FP8\nLLM('acme/m', swap_space=4, **FP8)\n"
    report, _facts = scan(tmp_path, {"offline.py": offline}, frm="0.26.0")
    assert [(f.fact.name, f.location.line) for f in report.findings] == [("swap_space", 3)]
    assert any("**FP8" in n and "offline.py:3" in n for n in report.notes)


WORKER = '''import os, shlex, subprocess
SWITCHES = ["--enforce-eager", "--preemption-mode", "--not-a-vllm-flag", "-v"]
ENV_FLAGS: dict[str, str] = {"PREEMPT": "--preemption-mode=swap", "EAGER": "--enforce-eager"}
argv = ["vllm", "serve", "acme/m"]
for name, value in os.environ.items():
    argv += [f"--{name.lower().replace('_', '-')}", value]
argv += shlex.split(os.environ.get("ENGINE_PASSTHROUGH", ""))
subprocess.run(argv)
'''


def test_flag_tables_in_wrapper_code_are_warnings_at_their_strings(tmp_path: Path) -> None:
    report, _facts = scan(tmp_path, {"worker.py": WORKER})
    assert found(report) == [
        ("--preemption-mode", "worker.py", 2, 33, "warning"),
        ("--preemption-mode", "worker.py", 3, 42, "warning"),
    ]


def test_flag_tables_count_only_in_a_repository_that_launches_vllm(tmp_path: Path) -> None:
    # mentions vLLM, launches nothing: a table of flags is only a list of strings here
    text = '# vllm helpers\nSWITCHES = ["--preemption-mode"]\n'
    report, _facts = scan(tmp_path, {"flags.py": text})
    assert report.findings == ()
    # a list a resolved launch splats is reported once, as that launch's flag (a blocker)
    text = 'import subprocess\nEXTRA = ["--preemption-mode", "swap"]\nsubprocess.run(["vllm", "serve", "m", *EXTRA])\n'
    report, _facts = scan(tmp_path / "b", {"run.py": text})
    assert found(report) == [("--preemption-mode", "run.py", 2, 11, "blocker")]


def test_a_flag_list_env_var_a_launch_reads_keeps_its_real_severity(tmp_path: Path) -> None:
    env = "CALCULATE_KV_SCALES=1\nENGINE_PASSTHROUGH=--preemption-mode swap --seed 7\nUNUSED=--preemption-mode swap\n"
    report, _facts = scan(tmp_path, {"worker.py": WORKER, "engine.env": env})
    rows = [r for r in found(report) if r[1] == "engine.env"]
    assert rows == [
        ("CALCULATE_KV_SCALES", "engine.env", 1, 1, "warning"),  # the naming convention: recognised, not read
        ("ENGINE_PASSTHROUGH:", "engine.env", 2, 20, "blocker"),  # shlex.split(os.environ.get(...)) reads it
        ("UNUSED:", "engine.env", 3, 8, "warning"),  # no launch reads it
    ]


def test_a_flag_list_env_var_a_shell_launch_expands(tmp_path: Path) -> None:
    files = {
        "serve.sh": '#!/bin/sh\nexec vllm serve acme/m --port 8000 ${EXTRA_ARGS}\n',
        ".env": "EXTRA_ARGS='--preemption-mode swap'\n",
    }
    report, _facts = scan(tmp_path, files)
    assert [r for r in found(report) if r[1] == ".env"] == [("EXTRA_ARGS:", ".env", 1, 13, "blocker")]


RUNTIME = '''apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: acme-llm
spec:
  supportedModelFormats:
    - name: acme-causal-lm
      autoSelect: true
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.10.0
      args:
        - --port
        - "8080"
'''


def isvc(name: str, model: str, args: list[str]) -> str:
    listed = "".join(f"        - {a}\n" for a in args)
    return (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
        f"metadata:\n  name: {name}\nspec:\n  predictor:\n    model:\n{model}      args:\n{listed}"
    )


def test_an_inference_service_gets_the_launch_of_the_vllm_runtime_it_names(tmp_path: Path) -> None:
    files = {
        "runtimes/acme-llm.yaml": RUNTIME,
        "services/by-runtime.yaml": isvc("chat", "      runtime: acme-llm\n", ["--preemption-mode=swap"]),
        "services/by-format.yaml": isvc(
            "coder", "      modelFormat:\n        name: acme-causal-lm\n", ["--scheduler-delay-factor=0.2"]
        ),
        # a runtime of another name that runs no vLLM: its predictors are not vLLM's
        "services/other.yaml": isvc("tabular", "      runtime: triton\n", ["--preemption-mode=swap"]),
    }
    report, _facts = scan(tmp_path, files)
    rows = [(r[0], r[1], r[2]) for r in found(report) if r[1].startswith("services/")]
    assert rows == [
        ("--scheduler-delay-factor", "services/by-format.yaml", 11),
        ("--preemption-mode", "services/by-runtime.yaml", 10),
    ]
    # checked from the runtime image's release
    assert {f.from_version for f in report.findings if f.location.path.startswith("services/")} == {"0.10.0"}


def test_without_the_runtime_the_predictor_args_are_not_read_as_vllm_flags(tmp_path: Path) -> None:
    files = {"services/by-runtime.yaml": isvc("chat", "      runtime: acme-llm\n", ["--preemption-mode=swap"])}
    report, _facts = scan(tmp_path, files)
    assert report.findings == ()


def test_a_kustomize_patch_of_predictor_args_counts_with_its_inference_service(tmp_path: Path) -> None:
    patch = isvc("chat", "", ["--preemption-mode=swap"])
    files = {
        "base/runtime.yaml": RUNTIME,
        "base/isvc.yaml": isvc("chat", "      runtime: acme-llm\n", ["--max-num-seqs=8"]),
        "base/kustomization.yaml": "resources:\n  - runtime.yaml\n  - isvc.yaml\n",
        "overlays/prod/patch-args.yaml": patch,
        "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\npatches:\n  - path: patch-args.yaml\n",
        # a patch of another InferenceService does not count
        "overlays/prod/patch-other.yaml": isvc("tabular", "", ["--scheduler-delay-factor=0.2"]),
    }
    report, _facts = scan(tmp_path, files)
    assert [(r[0], r[1], r[2]) for r in found(report) if r[1].startswith("overlays/")] == [
        ("--preemption-mode", "overlays/prod/patch-args.yaml", 9)
    ]
    # the Hugging Face runtime runs vLLM by itself: a patch of such a service counts too
    hf = isvc("qwen", "      modelFormat:\n        name: huggingface\n", ["--model_id=Qwen/Qwen3-8B"])
    report, _facts = scan(tmp_path / "hf", {"isvc.yaml": hf, "patch.yaml": isvc("qwen", "", ["--preemption-mode=swap"])})
    assert [(r[0], r[1]) for r in found(report)] == [("--preemption-mode", "patch.yaml")]


ANCHORS = '''x-engine-env: &engine-env
  VLLM_ATTENTION_BACKEND: XFORMERS
x-args: &args
  - --model
  - acme/m
  - --preemption-mode
  - swap
services:
  api:
    image: vllm/vllm-openai:v0.10.0
    environment: *engine-env
    command: *args
  batch:
    image: vllm/vllm-openai:v0.10.0
    environment:
      <<: *engine-env
      EXTRA: "1"
    command: *args
  eval:
    image: vllm/vllm-openai:v0.10.0
    environment: *engine-env
    command: ["--model", "acme/m", "--preemption-mode", "recompute"]
'''


def test_an_anchor_read_by_several_services_is_one_finding_naming_them_in_every_format(tmp_path: Path) -> None:
    import json

    from vllm_upgrade_check.reporters import FORMATS, renderer

    report, _facts = scan(tmp_path, {"docker-compose.yml": ANCHORS})
    rows = [(f.rule.name, f.location.line, f.context) for f in report.findings if f.rule.name.startswith("removed-")]
    assert sorted(rows, key=lambda r: r[1]) == [
        ("removed-env-vllm-attention-backend", 2, "shared by services api, batch, eval"),
        ("removed-preemption-mode", 6, "shared by services api, batch"),
        ("removed-preemption-mode", 22, ""),  # eval's own command: its own finding, shared by none
    ]
    assert len({(f.rule.id, f.location.line, f.location.column) for f in report.findings}) == len(report.findings)
    shown = {name: renderer(name)(report) for name in FORMATS}
    for name, text in shown.items():
        assert "shared by services api, batch, eval" in text or name == "json", name
    doc = json.loads(shown["json"])
    assert sorted(f["shared_by"] for f in doc["findings"] if f["shared_by"]) == [
        ["service api", "service batch"],
        ["service api", "service batch", "service eval"],
    ]
    sarif = json.loads(shown["sarif"])
    assert any(r["properties"]["shared_by"] == ["service api", "service batch"] for r in sarif["runs"][0]["results"])


MIXED = Path(__file__).resolve().parent / "repos" / "launches16"


def test_a_repository_mixing_every_construct_reports_each_finding_once_at_its_line() -> None:
    from test_targets import annotations

    report = run_scan(ScanOptions.of(paths=[MIXED], to_version="0.28.0", from_version="0.25.0"))
    found_at = {(f.location.path, f.location.line, f.rule.id) for f in report.findings}
    expected = []
    for path in sorted(MIXED.rglob("*")):
        if path.is_file():
            expected.extend(annotations(path, path.relative_to(MIXED).as_posix()))
    assert len([e for e in expected if e[3]]) >= 25
    missing = [e[:3] for e in expected if e[3] and e[:3] not in found_at]
    unwanted = [e[:3] for e in expected if not e[3] and e[:3] in found_at]
    assert not missing and not unwanted, (missing, unwanted, sorted(found_at))
    # every blocker and warning is annotated: nothing is reported that the repository does not hold
    annotated = {e[:3] for e in expected if e[3]}
    loud = {(f.location.path, f.location.line, f.rule.id) for f in report.findings if f.severity.value != "info"}
    assert loud <= annotated, sorted(loud - annotated)
    # no finding twice: one per rule and place, and no two with one fingerprint at one place
    places = [(f.rule.id, f.location.path, f.location.line, f.location.column) for f in report.findings]
    assert len(places) == len(set(places))
    prints = [(f.fingerprint, f.location.line) for f in report.findings]
    assert len(prints) == len(set(prints))
    assert not report.skipped
    # every value the repository does not say is named with its file and line
    for where in ("py/launch.py:22", "py/offline.py:13", "py/worker.py:9", "py/server_cls.py:32"):
        assert any(f"at {where}:" in note for note in report.notes), (where, report.notes)
    # the flag list .env sets for $EXTRA_ARGS was read: no note says its flags were not checked
    assert not [n for n in report.notes if "scripts/coder.sh:6" in n], report.notes
    # what the compose project's .env sets is resolved: no note for it
    assert not [n for n in report.notes if "TAGGED_FLAGS" in n], report.notes


K8S_ANCHOR = '''apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: a}
    spec:
      template:
        spec:
          containers:
            - name: engine-a
              image: vllm/vllm-openai:v0.10.0
              args: &args ["--model", "m", "--preemption-mode", "swap"]
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: b}
    spec:
      template:
        spec:
          containers:
            - name: engine-b
              image: vllm/vllm-openai:v0.10.0
              args: *args
'''


def test_an_anchor_two_kubernetes_containers_share_names_them(tmp_path: Path) -> None:
    report, _facts = scan(tmp_path, {"deploy.yaml": K8S_ANCHOR})
    shared = [(f.rule.name, f.location.line, f.context) for f in report.findings if f.context]
    assert shared == [("removed-preemption-mode", 13, "shared by containers engine-a, engine-b")]


def test_the_unread_part_of_an_imported_dict_is_named_with_its_module_and_line(tmp_path: Path) -> None:
    files = {
        "presets.py": 'import os\nFP8 = {"swap_space": 4, **load_overrides()}\n',
        "off.py": 'from vllm import LLM\nfrom presets import FP8\nLLM("m", **FP8)\n',
    }
    report, _facts = scan(tmp_path, files, frm="0.26.0")
    assert [(f.fact.name, f.location.path, f.location.line) for f in report.findings] == [("swap_space", "presets.py", 2)]
    assert any("**load_overrides() (presets.py:2)" in n and "off.py:3" in n for n in report.notes), report.notes
