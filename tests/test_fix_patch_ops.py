"""``fix`` of a flag written as the ``value`` of a kustomize JSON 6902 operation removes the
whole operation (its list item, with one separator), never the value alone (``value:`` would
read as null, ``"value": }`` is no JSON); a flag and its value in two operations go together.
An operation whose removal would change other words (a ``replace``, an ``add`` at an index,
any op of a patch that addresses args by index) is left to a person, the file untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()

DEPLOY = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.20.0\n"
    '          args: ["--model", "facebook/opt-125m"]\n'
)
ARGS = "/spec/template/spec/containers/0/args"


def _op(value: str, where: str = "-", verb: str = "add") -> str:
    return json.dumps({"op": verb, "path": f"{ARGS}/{where}", "value": value})


def _repo(root: Path, name: str, patch: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "deploy.yaml").write_text(DEPLOY)
    (root / "kustomization.yaml").write_text(
        f"resources: [deploy.yaml]\npatches:\n  - target: {{kind: Deployment, name: llm}}\n    path: {name}\n"
    )
    (root / name).write_text(patch)
    return root / name


def _fix(root: Path) -> str:
    result = runner.invoke(app, ["fix", str(root), "--from", "0.20.0", "--to", "0.28.0", "--no-bump"])
    return result.output


JSON_CASES = {
    "one-line-only-op": (f"[{_op('--swap-space=4')}]\n", "[]\n"),
    "one-line-first": (f"[{_op('--calculate-kv-scales')}, {_op('--seed=1')}]\n", f"[{_op('--seed=1')}]\n"),
    "one-line-last": (f"[{_op('--seed=1')}, {_op('--calculate-kv-scales')}]\n", f"[{_op('--seed=1')}]\n"),
    "lines-middle": (
        f"[\n  {_op('--seed=1')},\n  {_op('--calculate-kv-scales')},\n  {_op('--port=8001')}\n]\n",
        f"[\n  {_op('--seed=1')},\n  {_op('--port=8001')}\n]\n",
    ),
    "lines-last": (
        f"[\n  {_op('--seed=1')},\n  {_op('--calculate-kv-scales')}\n]\n",
        f"[\n  {_op('--seed=1')}\n]\n",
    ),
    "lines-first": (
        f"[\n  {_op('--calculate-kv-scales')},\n  {_op('--seed=1')}\n]\n",
        f"[\n  {_op('--seed=1')}\n]\n",
    ),
    "flag-and-value-in-two-ops": (
        f"[{_op('--seed=1')}, {_op('--swap-space')}, {_op('4')}, {_op('--port=8001')}]\n",
        f"[{_op('--seed=1')}, {_op('--port=8001')}]\n",
    ),
}


@pytest.mark.parametrize("case", sorted(JSON_CASES))
def test_json_patch_file_loses_whole_operations(tmp_path: Path, case: str) -> None:
    before, after = JSON_CASES[case]
    patch = _repo(tmp_path, "p.json", before)
    output = _fix(tmp_path)
    assert patch.read_text() == after, output
    json.loads(patch.read_text())  # still JSON


YAML_CASES = {
    "middle-op": (
        "- op: add\n  path: A/-\n  value: --seed=1\n"
        "- op: add  # old\n  path: A/-\n  value: --calculate-kv-scales\n"
        "- op: add\n  path: A/-\n  value: --port=8001\n",
        "- op: add\n  path: A/-\n  value: --seed=1\n- op: add\n  path: A/-\n  value: --port=8001\n",
    ),
    "flag-and-value-in-two-ops": (
        "- op: add\n  path: A/-\n  value: --max-num-partial-prefills\n"
        '- op: add\n  path: A/-\n  value: "2"\n'
        "- op: add\n  path: A/-\n  value: --seed=1\n",
        "- op: add\n  path: A/-\n  value: --seed=1\n",
    ),
    "flow-items-in-block-list": (
        "- {op: add, path: A/-, value: --seed=1}\n- {op: add, path: A/-, value: --calculate-kv-scales}\n",
        "- {op: add, path: A/-, value: --seed=1}\n",
    ),
    "every-op": ('- op: add\n  path: A/-\n  value: --swap-space\n- op: add\n  path: A/-\n  value: "4"\n', "[]\n"),
}


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_yaml_patch_file_loses_whole_operations(tmp_path: Path, case: str) -> None:
    before, after = (t.replace("A/", ARGS + "/") for t in YAML_CASES[case])
    patch = _repo(tmp_path, "p.yaml", before)
    output = _fix(tmp_path)
    assert patch.read_text() == after, output
    assert isinstance(yaml.safe_load(patch.read_text()), list)  # never null


def _inline(ops: str) -> str:
    return (
        "resources: [deploy.yaml]\npatches:\n  - target: {kind: Deployment, name: llm}  # prod\n"
        f"    patch: |-\n{ops}  - path: other.yaml\n"
    )


def _inline_repo(root: Path, ops: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "deploy.yaml").write_text(DEPLOY)
    (root / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (root / "kustomization.yaml").write_text(_inline(ops))
    return root / "kustomization.yaml"


def _block(*ops: tuple[str, str, str]) -> str:
    return "".join(f"      - op: {verb}\n        path: {ARGS}/{where}\n        value: {value}\n" for verb, where, value in ops)


def test_inline_block_patch_loses_the_op_item(tmp_path: Path) -> None:
    path = _inline_repo(tmp_path, _block(("add", "-", "--calculate-kv-scales"), ("add", "-", "--seed=1")))
    output = _fix(tmp_path)
    assert path.read_text() == _inline(_block(("add", "-", "--seed=1"))), output


def test_inline_block_patch_flag_and_value_in_two_ops_both_go(tmp_path: Path) -> None:
    ops = _block(("add", "-", "--seed=1"), ("add", "-", "--swap-space"), ("add", "-", '"4"'))
    path = _inline_repo(tmp_path, ops)
    output = _fix(tmp_path)
    assert path.read_text() == _inline(_block(("add", "-", "--seed=1"))), output


@pytest.mark.parametrize(
    "ops",
    [
        _block(("replace", "1", "--num-scheduler-steps=8")),
        _block(("add", "1", "--calculate-kv-scales")),
        _block(("add", "-", "--calculate-kv-scales"), ("replace", "1", "--seed=2")),
    ],
    ids=["replace-at-index", "add-at-index", "append-in-indexed-patch"],
)
def test_ops_whose_removal_changes_other_words_are_left_to_a_person(tmp_path: Path, ops: str) -> None:
    path = _inline_repo(tmp_path, ops)
    output = _fix(tmp_path)
    assert path.read_text() == _inline(ops)  # not a byte changed
    assert "Needs a person" in output and "JSON 6902 operation" in output


def test_replace_of_the_whole_args_cuts_inside_its_list(tmp_path: Path) -> None:
    ops = '- op: replace\n  path: A\n  value: ["--model", "facebook/opt-125m", "--swap-space", "4"]\n'
    patch = _repo(tmp_path, "p.yaml", ops.replace("A", ARGS))
    output = _fix(tmp_path)
    assert patch.read_text() == ops.replace("A", ARGS).replace(', "--swap-space", "4"', ""), output


def test_inline_flow_ops_over_lines_lose_the_first_op(tmp_path: Path) -> None:
    ops = f"      [{_op('--calculate-kv-scales')},\n       {_op('--seed=1')}]\n"
    path = _inline_repo(tmp_path, ops)
    output = _fix(tmp_path)
    assert path.read_text() == _inline(f"      [{_op('--seed=1')}]\n"), output


def test_inline_patch_that_would_lose_every_op_is_not_written(tmp_path: Path) -> None:
    ops = _block(("add", "-", "--swap-space"), ("add", "-", '"4"'))
    path = _inline_repo(tmp_path, ops)
    output = _fix(tmp_path)
    assert path.read_text() == _inline(ops)  # refused whole: not a byte changed
    assert "Needs a person" in output and "--swap-space" in output
    assert "remove the patch entry by hand" in output


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("p.json", f'[{{"op": "add", "path": "{ARGS}/-", "value": "--x"\n'),
        ("p.yaml", f"- op: add\n  path: {ARGS}/-\n  value: [--x\n"),
    ],
    ids=["json", "yaml"],
)
def test_a_patch_file_that_is_no_yaml_is_reported_skipped(tmp_path: Path, name: str, text: str) -> None:
    _repo(tmp_path, name, text)
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code == 2, result.output  # a file that configures vLLM could not be read
    skipped = result.output.split("Skipped", 1)[1]
    assert f"{name}:" in skipped and "YAML syntax error" in skipped


def test_a_patch_file_of_other_paths_is_not_read_for_vllm(tmp_path: Path) -> None:
    _repo(tmp_path, "p.json", '[{"op": "add", "path": "/metadata/labels/x", "value": "y"\n')
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0"])
    assert "p.json" not in result.output


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("p.json", f'[{{"op": "add", "path": "{ARGS}/-", "value": }}]\n'),
        ("p.json", f'[{{"op": "replace", "path": "{ARGS}/1", "value": null}}]\n'),
        ("p.yaml", f"- op: add\n  path: {ARGS}/-\n  value:\n"),
        ("p.yaml", f"- op: add\n  path: {ARGS}/-\n"),
    ],
    ids=["json-empty", "json-null", "yaml-empty", "yaml-missing"],
)
def test_an_op_that_writes_a_null_arg_is_reported_skipped(tmp_path: Path, name: str, text: str) -> None:
    _repo(tmp_path, name, text)
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code == 2, result.output
    skipped = result.output.split("Skipped", 1)[1]
    assert f"{name}:1: unresolved: the JSON 6902 operation at line 1 writes no value" in skipped


def test_an_inline_op_that_writes_a_null_arg_is_reported_at_its_line(tmp_path: Path) -> None:
    _inline_repo(tmp_path, _block(("add", "-", "--seed=1")) + f"      - op: add\n        path: {ARGS}/-\n        value:\n")
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0"])
    assert "kustomization.yaml:8: unresolved: the JSON 6902 operation at line 8 writes no value" in result.output
