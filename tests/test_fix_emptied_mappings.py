"""``fix`` that removes every entry of a YAML mapping keeps it a mapping: a vLLM ``--config``
file left with no key becomes ``{}`` (an empty document reads as null, and vLLM iterates the
loaded config with ``.items()``), a Ray Serve ``engine_kwargs:`` becomes ``engine_kwargs: {}``
on its key line (its comment kept), a flow mapping keeps its braces; every fixed file still
parses, to the same type. The scanner records the mapping's extent (``EntryCuts.extent``);
the fixer replaces it on that record and parses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.parsing.yamlnodes import documents
from vllm_upgrade_check.parsing.yamlwords import entry_cuts

_register()
runner = CliRunner()

RUN = "#!/bin/sh\nvllm serve m --config cfg/serve.yaml\n"
RAY = (
    "applications:\n  - name: llm-app\n    import_path: ray.serve.llm:build_openai_app\n    args:\n"
    "      llm_configs:\n        - model_loading_config:\n            model_id: qwen\n"
    "            model_source: Qwen/Qwen3-8B\n          engine_kwargs:  # engine\n"
    "            swap_space: 4\n            num_scheduler_steps: 2\n          accelerator_type: L4\n"
)

CASES = {
    "config-one-key": ("cfg/serve.yaml", "swap-space: 4\n", "{}\n"),
    "config-document-start-and-comments": (
        "cfg/serve.yaml",
        "# serve config\n---\nswap-space: 4  # old\n",
        "# serve config\n---\n{}\n",
    ),
    "config-two-keys-comment-between": (
        "cfg/serve.yaml",
        "# c\nswap-space: 4\n\n# more\nnum-scheduler-steps: 2\n",
        "# c\n{}\n\n# more\n",
    ),
    "config-trailing-comment": ("cfg/serve.yaml", "swap_space: 4\n# trailing\n", "{}\n# trailing\n"),
    "config-flow": ("cfg/serve.yaml", "{swap-space: 4}\n", "{}\n"),
    "config-crlf": ("cfg/serve.yaml", "swap-space: 4\r\nnum-scheduler-steps: 2\r\n", "{}\r\n"),
    "config-one-key-kept": ("cfg/serve.yaml", "seed: 1\nswap-space: 4\n", "seed: 1\n"),
    "ray-engine-kwargs": (
        "serve_config.yaml",
        RAY,
        RAY.replace("engine_kwargs:  # engine\n            swap_space: 4\n            num_scheduler_steps: 2\n",
                    "engine_kwargs: {}  # engine\n"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_emptied_mapping_stays_a_mapping(tmp_path: Path, case: str) -> None:
    name, before, after = CASES[case]
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_bytes(before.encode())
    (tmp_path / "run.sh").write_text(RUN)
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.20.0", "--to", "0.32.0", "--no-bump"])
    fixed = (tmp_path / name).read_bytes().decode()
    assert fixed == after, (result.output, fixed)
    loaded = yaml.safe_load(fixed)
    assert isinstance(loaded, dict)
    if name == "serve_config.yaml":
        assert loaded["applications"][0]["args"]["llm_configs"][0]["engine_kwargs"] == {}


def test_the_diff_shows_the_empty_mapping(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "serve.yaml").write_text("swap-space: 4\n")
    (tmp_path / "run.sh").write_text(RUN)
    diff = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.20.0", "--to", "0.32.0", "--no-bump", "--diff"])
    assert "-swap-space: 4\n+{}\n" in diff.stdout
    assert (tmp_path / "cfg" / "serve.yaml").read_text() == "swap-space: 4\n"


def test_entry_cuts_record_the_extent_of_a_block_mapping_only() -> None:
    text = "a:  # c\n  x: 1\n  # note\n  y: 2\nb: {p: 1}\n"
    (doc,) = documents(text)
    inner = doc.value[0][1]
    cuts = entry_cuts(text, inner)
    assert cuts.extent is not None
    whole, left, empty = cuts.extent
    assert (whole.line, whole.column, whole.end_line) == (1, 3, 5)
    assert (left, empty) == ("  # c\n  # note\n", " {}  # c\n  # note\n")
    assert entry_cuts(text, doc.value[1][1]).extent is None  # flow: the braces stay
    shared = "a: {x: 1}\nb:\n  x: 1\n  y: 2\n"
    assert entry_cuts(shared, documents(shared)[0]).extent is not None


@pytest.mark.parametrize(
    ("values", "fixed"),
    [
        ("extraArgs:\n  - --swap-space=4\nother: 1\n", "extraArgs: []\nother: 1\n"),
        ('extraArgs: ["--swap-space=4"]\nother: 1\n', "extraArgs: []\nother: 1\n"),
    ],
)
def test_an_emptied_helm_values_list_stays_a_list(tmp_path: Path, values: str, fixed: str) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: vllm\nversion: 0.1.0\n")
    (chart / "templates" / "dep.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: v\nspec:\n  template:\n    spec:\n      containers:\n"
        '        - name: v\n          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"\n'
        "          args: {{ toYaml .Values.extraArgs | nindent 12 }}\n"
    )
    head = "image:\n  repository: vllm/vllm-openai\n  tag: v0.20.0\n"
    (chart / "values.yaml").write_text(head + values)
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.20.0", "--to", "0.32.0", "--no-bump"])
    text = (chart / "values.yaml").read_text()
    assert text == head + fixed, result.output
    assert yaml.safe_load(text)["extraArgs"] == []
