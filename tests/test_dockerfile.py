"""Dockerfiles."""

from __future__ import annotations

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner

TEXT = """ARG VLLM_VERSION=v0.26.0
FROM vllm/vllm-openai:${VLLM_VERSION}
ENV VLLM_USE_V1=1 \\
    OTHER=x
RUN pip install --no-cache-dir vllm==0.26.0 \\
    torch==2.11.0
# CMD ["--swap-space", "4"]
CMD ["--model", "m", \\
     "--max-num-partial-prefills", "2"]
"""


def test_exec_form_cmd_on_vllm_image_is_flags() -> None:
    items = scan_text(DockerfileScanner(), "Dockerfile", TEXT)
    assert args_of(items) == [("model", "m", 8, 7), ("max_num_partial_prefills", "2", 9, 7)]
    (image,) = kinds(items, FactKind.IMAGE)
    assert (image.value, image.location.line) == ("v0.26.0", 2)
    assert {f.version_hint for f in kinds(items, FactKind.ARG)} == {"0.26.0"}


def test_env_and_pip_install() -> None:
    items = scan_text(DockerfileScanner(), "Dockerfile", TEXT)
    assert [(e.name, e.location.line) for e in kinds(items, FactKind.ENV_VAR)] == [
        ("VLLM_USE_V1", 3),
        ("OTHER", 4),
    ]
    assert [(r.name, r.value, r.location.line) for r in kinds(items, FactKind.REQUIREMENT)] == [
        ("vllm", "==0.26.0", 5),
        ("torch", "==2.11.0", 6),
    ]


def test_shell_form_entrypoint_launch() -> None:
    text = "FROM python:3.12\nENTRYPOINT vllm serve m --swap-space 4\n"
    items = scan_text(DockerfileScanner(), "deploy/Dockerfile.gpu", text)
    assert args_of(items) == [("swap_space", "4", 2, 25)]


def test_cmd_on_other_image_is_not_flags() -> None:
    text = 'FROM python:3.12\nCMD ["--swap-space", "4"]\n'
    assert args_of(scan_text(DockerfileScanner(), "Dockerfile", text)) == []


def test_from_flags_are_not_the_image() -> None:
    text = "FROM --platform=linux/amd64 vllm/vllm-openai:v0.26.0 AS engine\nCMD [\"--model\", \"m\"]\n"
    (image,) = kinds(scan_text(DockerfileScanner(), "Dockerfile", text), FactKind.IMAGE)
    assert (image.raw, image.location.line, image.location.column) == ("vllm/vllm-openai:v0.26.0", 1, 29)
    assert kinds(scan_text(DockerfileScanner(), "Dockerfile", "FROM --platform=linux/amd64\n"), FactKind.IMAGE) == []


def test_from_expansions_follow_docker() -> None:
    cases = [
        ("ARG V\nFROM vllm/vllm-openai:v${V:-0.26.0}\n", "vllm/vllm-openai:v0.26.0"),
        ("ARG V=0.27.0\nFROM vllm/vllm-openai:v${V:-0.26.0}\n", "vllm/vllm-openai:v0.27.0"),
        ('ARG V=""\nFROM vllm/vllm-openai:v${V:-0.26.0}\n', "vllm/vllm-openai:v0.26.0"),
        ('ARG V=""\nFROM vllm/vllm-openai:v${V-0.26.0}\n', "vllm/vllm-openai:v"),
        ("ARG A=1 V=0.26.0\nFROM vllm/vllm-openai:v${V}\n", "vllm/vllm-openai:v0.26.0"),
        ("ARG IMG=vllm/vllm-openai:v0.26.0\nFROM ${IMG}\n", "vllm/vllm-openai:v0.26.0"),
    ]
    for text, raw in cases:
        images = kinds(scan_text(DockerfileScanner(), "Dockerfile", text), FactKind.IMAGE)
        assert [i.raw for i in images] == [raw], text
