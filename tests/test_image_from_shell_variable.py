"""``docker run``/``podman run`` of an image held in a shell variable: the image and its
version come from the variable (``IMAGE=...``, ``export IMAGE=...``, ``: "${IMAGE:=...}"``),
the words after the image are the launch's args; an image word the repository does not
resolve names the launch unresolved."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell

_register()


def scan(tmp_path: Path, text: str) -> Report:
    (tmp_path / "run.sh").write_text(text, encoding="utf-8")
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.16.0"))


def rows(report: Report) -> list[tuple[str, int | None, int | None]]:
    return sorted((f.rule.id, f.location.line, f.location.column) for f in report.findings)


@pytest.mark.parametrize(
    ("setting", "launch", "at"),
    [
        ("IMAGE=vllm/vllm-openai:v0.16.0", 'docker run --gpus all "$IMAGE" --model m --swap-space 4', 42),
        (': "${IMAGE:=vllm/vllm-openai:v0.16.0}"', 'docker run --gpus all "$IMAGE" --model m --swap-space 4', 42),
        (": ${IMAGE:=vllm/vllm-openai:v0.16.0}", "podman run --rm ${IMAGE} --model m --swap-space 4", 36),
        ("export IMAGE=vllm/vllm-openai:v0.16.0", "podman run --rm ${IMAGE} --model m --swap-space 4", 36),
        ('IMAGE="${IMAGE:-vllm/vllm-openai:v0.16.0}"', 'docker run "${IMAGE}" --model m --swap-space 4', 33),
    ],
)
def test_the_variable_gives_the_image_and_the_args_follow_it(tmp_path: Path, setting: str, launch: str, at: int) -> None:
    report = scan(tmp_path, f"#!/bin/bash\n{setting}\n{launch}\n")
    found = rows(report)
    assert ("VUC0180-001", 3, at) in found, found  # --swap-space, after the image
    assert [r for r in found if r[0] == "VUC000-010"], found  # the image's release is 0.16.0
    assert report.notes == ()


def test_an_assigning_default_binds_the_variable() -> None:
    script = parse_shell(': "${IMAGE:=vllm/vllm-openai:v0.16.0}"\necho "$IMAGE" done\n')
    argv = script.commands[-1].argv
    assert [t.text for t in argv] == ["echo", "vllm/vllm-openai:v0.16.0", "done"]
    assert argv[1].resolved


def test_an_image_the_repository_does_not_set_is_named_unresolved(tmp_path: Path) -> None:
    report = scan(
        tmp_path,
        '#!/bin/bash\n# the vllm server\ndocker run --gpus all "$IMAGE" --model m --swap-space 4\n'
        'docker run "$TOOL" python app.py\n',
    )
    assert rows(report) == []  # not known to be vLLM: its flags are not judged
    assert report.notes == (
        'unresolved: "$IMAGE" at run.sh:3:1 (docker run); the image it runs is not known: whether it is vLLM, '
        "which release, and its flags were not checked",
    )


@pytest.mark.parametrize(
    ("setting", "launch", "bumped"),
    [
        ("IMAGE=vllm/vllm-openai:v0.16.0", 'docker run "$IMAGE" --model m', "IMAGE=vllm/vllm-openai:v0.18.0"),
        ('IMAGE="vllm/vllm-openai:v0.16.0"', 'docker run "${IMAGE}" --model m', 'IMAGE="vllm/vllm-openai:v0.18.0"'),
        ("export IMAGE=vllm/vllm-openai:v0.16.0", "podman run ${IMAGE} --model m", "export IMAGE=vllm/vllm-openai:v0.18.0"),
        (': "${IMAGE:=vllm/vllm-openai:v0.16.0}"', 'docker run "$IMAGE" --model m', ': "${IMAGE:=vllm/vllm-openai:v0.18.0}"'),
    ],
)
def test_the_tag_is_bumped_where_the_variable_is_set(tmp_path: Path, setting: str, launch: str, bumped: str) -> None:
    report = scan(tmp_path, f"#!/bin/bash\n{setting}\n{launch}\n")
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC000-010", 2)]
    result = CliRunner().invoke(app, ["fix", str(tmp_path), "--from", "0.16.0", "--to", "0.18.0"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "run.sh").read_text() == f"#!/bin/bash\n{bumped}\n{launch}\n"


def test_a_tag_made_of_another_variable_is_left_to_a_person(tmp_path: Path) -> None:
    text = '#!/bin/bash\nTAG=v0.16.0\nIMAGE=vllm/vllm-openai:$TAG\ndocker run "$IMAGE" --model m\n'
    scan(tmp_path, text)
    result = CliRunner().invoke(app, ["fix", str(tmp_path), "--from", "0.16.0", "--to", "0.18.0"])
    assert "set it by hand" in result.output
    assert (tmp_path / "run.sh").read_text() == text
