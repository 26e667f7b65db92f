"""``fix`` that removes every item of a YAML list writes an empty list, never null (a null
``args:`` or ``command:`` changes the type: the image's default command runs, or Kubernetes
rejects it): ``key: []`` on the key's own line, its comment and the comment lines between
the items kept, every other byte kept, the fixed file parsing. The scanner records where the
list is written and what is left of it once every item is cut; the fixer groups the cuts of
one list on that record and parses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.fixing.edits import empty_lists
from vllm_upgrade_check.fixing.interface import Edit

_register()
runner = CliRunner()

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"

CASES = {
    "k8s-args-comment-on-key": (
        "pod.yaml",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args:  # flags\n"
        "        - --swap-space\n        - \"4\"\n      ports:\n        - containerPort: 8000\n",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args: []  # flags\n"
        "      ports:\n        - containerPort: 8000\n",
    ),
    "k8s-two-flags-two-cuts": (
        "pod.yaml",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args:\n"
        "        - --swap-space=4\n        - --disable-log-requests\n",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args: []\n",
    ),
    "compose-comment-between-items": (
        "compose.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command:   # serve flags\n"
        "      - --swap-space\n      - \"4\"\n      # logs are off by default\n      - --disable-log-requests\n"
        "    ports: [\"8000:8000\"]\n",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: []   # serve flags\n"
        "      # logs are off by default\n    ports: [\"8000:8000\"]\n",
    ),
    "compose-crlf": (
        "compose.yaml",
        "services:\r\n  vllm:\r\n    image: vllm/vllm-openai:v0.17.0\r\n    command:\r\n      - --swap-space\r\n      - \"4\"\r\n",
        "services:\r\n  vllm:\r\n    image: vllm/vllm-openai:v0.17.0\r\n    command: []\r\n",
    ),
    "anchor-on-the-list": (
        "compose.yaml",
        "x-flags: &flags\n  - --swap-space\n  - \"4\"\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n"
        "    command: *flags\n",
        "x-flags: &flags []\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: *flags\n",
    ),
    "anchor-and-comment-on-key": (
        "compose.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: &cmd  # c\n      - --swap-space\n      - \"4\"\n",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: &cmd []  # c\n",
    ),
    "plain-scalar-command": (
        "compose.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: --swap-space 4 --disable-log-requests   # old\n",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command: []   # old\n",
    ),
    "flow-list": (
        "pod.yaml",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args: [--swap-space, \"4\", --disable-log-requests]  # f\n",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args: []  # f\n",
    ),
    "list-that-keeps-the-model": (
        "compose.yaml",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command:\n      - my-org/model\n"
        "      - --swap-space\n      - \"4\"\n",
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.17.0\n    command:\n      - my-org/model\n",
    ),
    "second-container-untouched": (
        "pod.yaml",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args:\n        - --swap-space=4\n"
        "    - name: side\n      image: busybox\n      args:\n        - --swap-space=4\n",
        POD + "    - name: v\n      image: vllm/vllm-openai:v0.17.0\n      args: []\n"
        "    - name: side\n      image: busybox\n      args:\n        - --swap-space=4\n",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_emptied_list_is_an_empty_list(tmp_path: Path, case: str) -> None:
    name, before, after = CASES[case]
    (tmp_path / name).write_bytes(before.encode())
    result = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.17.0", "--to", "0.20.0", "--no-bump"])
    fixed = (tmp_path / name).read_bytes().decode()
    assert fixed == after, (result.output, fixed)
    documents = list(yaml.safe_load_all(fixed))
    assert documents and all(d is not None for d in documents)
    for value in _values(documents, ("args", "command")):
        assert isinstance(value, list), (case, value)  # never null


def test_diff_shows_the_same_as_the_fix(tmp_path: Path) -> None:
    name, before, after = CASES["k8s-args-comment-on-key"]
    (tmp_path / name).write_text(before)
    diff = runner.invoke(app, ["fix", str(tmp_path), "--from", "0.17.0", "--to", "0.20.0", "--no-bump", "--diff"])
    assert "+      args: []  # flags" in diff.stdout
    assert (tmp_path / name).read_text() == before  # --diff writes nothing


def _values(node: object, keys: tuple[str, ...]) -> list[object]:
    out: list[object] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys:
                out.append(value)
            out.extend(_values(value, keys))
    elif isinstance(node, list):
        for item in node:
            out.extend(_values(item, keys))
    return out


def _cut(start: int, end: int, text: str, listed: tuple[int, int, str, str]) -> Edit:
    return Edit("f.yaml", start, end, text[start:end], "", "R", "remove", 1, 0, listed)


def test_empty_lists_joins_only_cuts_that_take_every_item() -> None:
    text = "a:  # c\n  - x\n  # note\n  - y\n  - z\nb: 1\n"
    begin, end = text.index(":") + 1, text.index("b:")
    listed = (begin, end, "  # c\n  # note\n", " []  # c\n  # note\n")
    x, y, z = (text.index(f"  - {w}\n") for w in "xyz")
    cut_x = _cut(x, x + 6, text, listed)
    cut_y = _cut(y, y + 6, text, listed)
    cut_z = _cut(z, z + 6, text, listed)
    # two of three items: each cut as it is
    kept, _ = empty_lists([[cut_x], [cut_z]], text)
    assert kept == [[cut_x], [cut_z]]
    # all three, over three fixes: one replacement of the list, an empty marker per other fix
    joined, joins = empty_lists([[cut_x], [cut_y, cut_z]], text)
    assert joins == {0: 0, 1: 0}
    replacement = [e for e in joined[0] if e.new]
    assert [(e.start, e.end, e.new) for e in replacement] == [(begin, end, " []  # c\n  # note\n")]
    assert all(e.start == e.end == end and e.new == e.old == "" for e in joined[1])
    pieces = sorted((e for fix in joined for e in fix), key=lambda e: (e.start, e.end))
    out, cursor = [], 0
    for e in pieces:
        out += [text[cursor : e.start], e.new]
        cursor = e.end
    out.append(text[cursor:])
    assert "".join(out) == "a: []  # c\n  # note\nb: 1\n"
