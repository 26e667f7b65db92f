"""Discovery of the places vLLM is installed and launched outside deployment manifests:
conda ``environment.yml`` (conda specs and the ``pip:`` sub-list), GitHub Actions workflows
(``run:`` steps, ``container`` and ``services.*.image``) and Ansible tasks (``pip`` name and
version, ``command``/``shell``): versions, launch flags and images at their file:line, and
``fix`` where the place is clear."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()


def _scan(root: Path, *args: str) -> dict[str, object]:
    result = runner.invoke(app, ["scan", str(root), "--no-host", "--no-cache", "-f", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _at(report: dict[str, object]) -> set[tuple[str, int, str, str]]:
    return {(f["path"], f["line"], f["rule_id"], f["subject"]) for f in report["findings"]}  # type: ignore[index,union-attr]


CONDA = """name: serve
channels: [conda-forge]
dependencies:
  - python=3.11
  - conda-forge::vllm=0.17.0
  - pip
  - pip:
      - "vllm==0.17.0"
      - requests
"""


def test_conda_environment_pins(tmp_path: Path) -> None:
    (tmp_path / "environment.yml").write_text(CONDA)
    report = _scan(tmp_path, "--to", "0.20.0")
    found = {(line, rule) for path, line, rule, _s in _at(report) if path == "environment.yml"}
    assert {(5, "VUC000-010"), (8, "VUC000-010")} <= found, found
    assert report["from_version"] == "0.17.0"


@pytest.mark.parametrize(
    ("spec", "pinned"),
    [
        ("vllm=0.17.0", "0.20.0"),
        ("vllm==0.17.0", "0.20.0"),
        ("vllm =0.17.0", "0.20.0"),  # a blank before the spec
        ("vllm=0.17.0=py311_0", "0.20.0"),
    ],
)
def test_conda_pin_bumped_in_place(tmp_path: Path, spec: str, pinned: str) -> None:
    (tmp_path / "environment.yml").write_text(f"dependencies:\n  - {spec}  # gpu\n  - pip:\n      - vllm==0.17.0\n")
    runner.invoke(app, ["fix", str(tmp_path), "--to", "0.20.0"])
    fixed = (tmp_path / "environment.yml").read_text()
    assert fixed == f"dependencies:\n  - {spec.replace('0.17.0', pinned)}  # gpu\n  - pip:\n      - vllm==0.20.0\n"


@pytest.mark.parametrize("spec", ["vllm=0.17.*", "vllm>=0.17,<0.19", "vllm=0.17.0|0.18.0"])
def test_conda_ranges_are_read_but_not_bumped(tmp_path: Path, spec: str) -> None:
    text = f"dependencies:\n  - {spec}\n"
    (tmp_path / "environment.yml").write_text(text)
    report = _scan(tmp_path, "--to", "0.20.0")
    assert report["summary"]["files_scanned"] == 1  # type: ignore[index]
    assert report["from_version"] is None  # a range names no version in use
    runner.invoke(app, ["fix", str(tmp_path), "--to", "0.20.0"])
    assert (tmp_path / "environment.yml").read_text() == text


def test_broken_environment_file_is_skipped_with_its_place(tmp_path: Path) -> None:
    (tmp_path / "environment.yml").write_text("dependencies:\n  - vllm=0.17.0\n  - [pip\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "--no-host", "--no-cache", "-f", "json"])
    skipped = json.loads(result.stdout)["skipped"]
    assert [(s["path"], s["fails_gate"]) for s in skipped] == [("environment.yml", True)]
    assert skipped[0]["line"] and skipped[0]["column"]
    assert result.exit_code == 2


WORKFLOW = """name: smoke
on: push
jobs:
  smoke:
    runs-on: ubuntu-latest
    container:
      image: vllm/vllm-openai:v0.17.0
    services:
      vllm:
        image: vllm/vllm-openai:v0.17.0
    steps:
      - run: pip install vllm==0.17.0
      - name: serve
        run: |
          echo start
          vllm serve m --swap-space 4 --port 8000 &
"""


def test_github_workflow(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "smoke.yml").write_text(WORKFLOW)
    found = _at(_scan(tmp_path, "--from", "0.17.0", "--to", "0.20.0"))
    path = ".github/workflows/smoke.yml"
    assert (path, 16, "VUC0180-001", "--swap-space") in found, found
    assert (path, 7, "VUC000-010", "vllm/vllm-openai:v0.17.0") in found
    assert (path, 10, "VUC000-010", "vllm/vllm-openai:v0.17.0") in found
    assert (path, 12, "VUC000-010", "vllm==0.17.0") in found


def test_github_workflow_fix_removes_the_flag(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    target = tmp_path / ".github" / "workflows" / "smoke.yml"
    target.write_text(WORKFLOW)
    runner.invoke(app, ["fix", str(tmp_path), "--from", "0.17.0", "--to", "0.20.0", "--no-bump"])
    fixed = target.read_text()
    assert "          vllm serve m --port 8000 &\n" in fixed, fixed
    assert fixed.replace("--swap-space 4 ", "") == fixed.replace(
        "--swap-space 4 ", ""
    ) and fixed == WORKFLOW.replace("--swap-space 4 ", "")
    assert yaml.safe_load(fixed)["jobs"]["smoke"]["steps"][1]["run"].endswith("--port 8000 &\n")


def test_a_workflow_elsewhere_is_not_read_as_one(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "smoke.yml").write_text(WORKFLOW)
    found = _at(_scan(tmp_path, "--from", "0.17.0", "--to", "0.20.0"))
    assert not any(rule == "VUC0180-001" for _p, _l, rule, _s in found)


ANSIBLE = """- name: install vllm
  ansible.builtin.pip:
    name: vllm==0.17.0
- name: install pinned
  pip:
    name: vllm
    version: 0.17.0
- name: serve
  ansible.builtin.shell: vllm serve m --swap-space 4
- name: serve too
  command:
    cmd: vllm serve m --disable-log-requests --swap-space 8
- block:
    - name: nested
      ansible.builtin.command: vllm serve n --swap-space 2
"""


def test_ansible_tasks(tmp_path: Path) -> None:
    (tmp_path / "roles" / "vllm" / "tasks").mkdir(parents=True)
    (tmp_path / "roles" / "vllm" / "tasks" / "main.yml").write_text(ANSIBLE)
    found = _at(_scan(tmp_path, "--from", "0.17.0", "--to", "0.20.0"))
    path = "roles/vllm/tasks/main.yml"
    assert {
        (path, 9, "VUC0180-001", "--swap-space"),
        (path, 12, "VUC0180-001", "--swap-space"),
        (path, 15, "VUC0180-001", "--swap-space"),
    } <= found, found
    assert (path, 3, "VUC000-010", "vllm==0.17.0") in found
    assert (path, 6, "VUC000-010", "vllm==0.17.0") in found


def test_ansible_version_key_is_bumped(tmp_path: Path) -> None:
    (tmp_path / "site.yml").write_text(
        "- name: install pinned\n  pip:\n    name: vllm\n    version: 0.17.0  # pin\n"
    )
    runner.invoke(app, ["fix", str(tmp_path), "--to", "0.20.0"])
    assert (
        tmp_path / "site.yml"
    ).read_text() == "- name: install pinned\n  pip:\n    name: vllm\n    version: 0.20.0  # pin\n"


@pytest.mark.parametrize("written", ["pytorch=2.5.1", "pytorch::pytorch==2.5.1", "pytorch-gpu=2.5.1"])
def test_conda_names_of_pypi_distributions_are_mapped(tmp_path: Path, written: str) -> None:
    (tmp_path / "environment.yml").write_text(
        "name: serve\nchannels: [pytorch, nvidia, conda-forge]\ndependencies:\n  - python=3.11\n"
        f"  - {written}\n  - pytorch-cuda=12.1\n  - pip:\n      - vllm==0.26.0\n"
    )
    report = _scan(tmp_path, "--to", "0.28.0")
    torch = {(line, rule) for path, line, rule, _s in _at(report) if path == "environment.yml" and line in (5, 6)}
    assert torch == {(5, "VUC0270-003")}  # the torch pin 0.27.0 moved; pytorch-cuda is no PyPI distribution
