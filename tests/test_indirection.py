"""Launches read through one level of indirection (issue 16): vendor images whose repository
names vLLM, compose services built from a repository Dockerfile."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners.compose_build import dockerfile_base
from vllm_upgrade_check.sources.scanners.images import vendor_vllm_image


def scan(tmp_path: Path, files: dict[str, str]) -> tuple[list[Fact], list[tuple[str, int | None]], tuple[str, ...]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"), facts_out=facts)
    return facts, [(f.rule.id, f.location.line) for f in report.findings], report.notes


@pytest.mark.parametrize(
    ("reference", "args", "expected"),
    [
        ("registry.example.net/ml-platform/vllm-rocm:v0.16.0", ["--model", "m"], "ml-platform/vllm-rocm"),
        ("ghcr.io/acme/My-VLLM:1", ["serve", "m"], "acme/My-VLLM"),
        ("acme/vllm-gaudi", ["--model=m"], "acme/vllm-gaudi"),
        ("acme/vllm-tools:1", ["python", "x.py"], None),  # another program's args
        ("acme/vllm-tools:1", [], None),
        ("acme/vllm-rocm:1", ["acme/model-7b", "--swap-space", "4"], "acme/vllm-rocm"),  # a positional model
        ("vllm/vllm-openai:v0.26.0", ["--model", "m"], None),  # vLLM's own: not a vendor's
        ("vllm-project/gateway:1", ["--model", "m"], None),  # only the organisation says vLLM
    ],
)
def test_vendor_images(reference: str, args: list[str], expected: str | None) -> None:
    assert vendor_vllm_image(reference, args) == expected


def test_a_vendor_launch_is_checked_and_noted(tmp_path: Path) -> None:
    compose = (
        "services:\n"
        "  engine:\n"
        "    image: registry.example.net/ml-platform/vllm-rocm:v0.16.0\n"
        '    command: ["--model", "m", "--calculate-kv-scales"]\n'
    )
    run = "docker run --rm -e A=1 acme/vllm-gaudi:2 serve m --max-num-partial-prefills 2\n"
    facts, findings, notes = scan(tmp_path, {"docker-compose.yml": compose, "run.sh": run})
    assert ("VUC0280-001", 4) in findings and ("VUC0270-001", 1) in findings
    vendor = [n for n in notes if "unknown vendor" in n]
    assert len(vendor) == 2 and "ml-platform/vllm-rocm at docker-compose.yml:3" in vendor[0] + vendor[1]  # at the image
    assert not [f for f in facts if f.kind == FactKind.IMAGE]  # no vLLM image to bump


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        ("FROM vllm/vllm-openai:v0.26.0\nRUN x\n", None, ("vllm/vllm-openai:v0.26.0", 1, False)),
        ("ARG B=vllm/vllm-tpu:v0.26.0\nFROM ${B} AS a\nFROM a\n", None, ("vllm/vllm-tpu:v0.26.0", 2, False)),
        ("FROM vllm/vllm-openai:v0.26.0 AS a\nENTRYPOINT [\"bash\"]\nFROM a\n", None, ("vllm/vllm-openai:v0.26.0", 1, True)),
        ("FROM python:3.12 AS build\nFROM vllm/vllm-openai:v0.26.0 AS run\n", "build", ("python:3.12", 1, False)),
        ("FROM ${UNSET}\n", None, None),
    ],
)
def test_dockerfile_base(text: str, target: str | None, expected: tuple[str, int, bool] | None) -> None:
    assert dockerfile_base(text, target) == expected


def test_a_compose_build_is_followed_to_its_base_image(tmp_path: Path) -> None:
    compose = (
        "services:\n"
        "  a:\n"
        "    build: {context: ./engine, dockerfile: Containerfile.rocm}\n"
        "    image: summarizer:dev\n"
        '    command: ["--model", "m", "--calculate-kv-scales"]\n'
        "  b:\n"
        "    build: {context: ./engine, dockerfile: Containerfile.rocm, target: tools}\n"
        '    command: ["--model", "m", "--calculate-kv-scales"]\n'
        "  c:\n"
        "    build: ./missing\n"
        '    command: ["--model", "m", "--calculate-kv-scales"]\n'
    )
    dockerfile = "FROM python:3.12 AS tools\nFROM vllm/vllm-openai-rocm:v0.26.0\n"
    facts, findings, _notes = scan(tmp_path, {"compose.yaml": compose, "engine/Containerfile.rocm": dockerfile})
    assert ("VUC0280-001", 5) in findings
    assert ("VUC0280-001", 8) not in findings and ("VUC0280-001", 11) not in findings
    (launch,) = [f for f in facts if f.kind == FactKind.LAUNCH and f.location.path == "compose.yaml"]
    assert launch.version_hint == "0.26.0" and "engine/Containerfile.rocm:2" in (launch.hint_source or "")


def test_words_shared_through_an_anchor_give_one_finding(tmp_path: Path) -> None:
    """Three services share an anchored command and env block, two releases apart: one
    finding per position, one fingerprint each, checked from the oldest release."""
    compose = (
        "x-env: &env\n"
        '  VLLM_CPU_SGL_KERNEL: "1"\n'
        'x-args: &args ["--model", "m", "--calculate-kv-scales"]\n'
        "services:\n"
        "  a: {image: 'vllm/vllm-openai:v0.27.1', command: *args, environment: *env}\n"
        "  b: {image: 'vllm/vllm-openai:v0.26.0', command: *args, environment: {<<: *env, X: '1'}}\n"
        "  c: {image: 'vllm/vllm-openai:v0.27.0', command: *args, environment: *env}\n"
    )
    (tmp_path / "docker-compose.yml").write_text(compose)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    got = [(f.rule.id, f.location.line, f.from_version) for f in report.findings if f.rule.id.startswith("VUC028")]
    assert sorted(got) == [("VUC0280-001", 3, "0.26.0"), ("VUC0280-005", 2, "0.26.0")]
    assert len({f.fingerprint for f in report.findings}) == len(report.findings)


def test_a_launch_the_file_does_not_say_is_named(tmp_path: Path) -> None:
    code = (
        "import subprocess\n"
        "from helpers import build_cmd, cmd\n"
        "subprocess.Popen(' '.join(cmd), shell=True)  # vllm serve, built elsewhere\n"
        "subprocess.run(build_cmd())\n"
    )
    _facts, _findings, notes = scan(tmp_path, {"serve.py": code})
    assert [n.split(" at ")[0] for n in notes if n.startswith("unresolved")] == [
        "unresolved: ' '.join(cmd)",
        "unresolved: build_cmd()",
    ]


def test_a_file_that_never_speaks_of_vllm_gets_no_note(tmp_path: Path) -> None:
    _facts, _findings, notes = scan(tmp_path, {"git.py": "import subprocess\nsubprocess.run(git_cmd())\n"})
    assert not [n for n in notes if n.startswith("unresolved")]


def test_env_names_are_flags_only_where_the_repository_launches_vllm(tmp_path: Path) -> None:
    env = "MAX_NUM_PARTIAL_PREFILLS=3\nPASS=--calculate-kv-scales --seed 7\n"
    _facts, findings, _notes = scan(tmp_path, {"worker.env": env})
    assert findings == []
    (tmp_path / "serve.sh").write_text("vllm serve m $PASS\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"))
    got = sorted((f.rule.id, f.location.line, f.severity.value) for f in report.findings)
    # the name convention is recognised, not read (a warning); the flag list is expanded by
    # the launch that reads $PASS, so its flag keeps its real severity
    assert got == [("VUC0270-001", 1, "warning"), ("VUC0280-001", 2, "blocker")]
