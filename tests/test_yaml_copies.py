"""The cheaper copies and spans of the YAML scanners give what the general ones give."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.model.evolve import evolve
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Span, Spans
from vllm_upgrade_check.parsing.words import Token, sub_span
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, to_python
from vllm_upgrade_check.parsing.yamlwords import scalar_text_span, scalar_word

TEXT = """\
a: plain
'b': 'single'
"c": "dou\\"ble"
d: "esc\\n"
e: 'it''s'
f: |
  block
g: >-
  folded
  text
h: multi
  line plain
é: ü value
i:
j: &x anchored
k: !!str tagged
l: [x, 'y', "z"]
m: {n: 1, 'o': "p"}
"""


def _scalars(node: yaml.Node) -> list[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        return [node]
    out: list[yaml.ScalarNode] = []
    for child in node.value:
        for sub in child if isinstance(child, tuple) else (child,):
            out.extend(_scalars(sub))
    return out


def test_scalar_text_span_is_the_words_sub_span() -> None:
    nodes = _scalars(yaml.compose(TEXT, Loader=yaml.SafeLoader))
    assert len(nodes) > 30
    got = [scalar_text_span(TEXT, n) for n in nodes]
    want = [sub_span(w, 0, len(w.text)) for w in (scalar_word(TEXT, n) for n in nodes)]
    assert got == want
    assert Span(2, 7, 2, 13) in got  # 'single' inside its quotes
    assert None in got  # the escaped, the folded, the multi-line ones


def test_evolve_is_replace() -> None:
    fact = Fact(FactKind.ARG, "x", Location("p", 1, 2, 3, 4), raw="--x", spans=Spans(name=Span(1, 2, 1, 5)))
    assert evolve(fact, owner="service a", group="1:2") == dataclasses.replace(fact, owner="service a", group="1:2")
    assert evolve(fact) == fact and evolve(fact) is not fact
    token = Token("a", 1, 2, written="'a'")
    copy = evolve(token, line=5, element=Span(5, 1, 6, 1))
    assert copy == dataclasses.replace(token, line=5, element=Span(5, 1, 6, 1)) and token.line == 1
    with pytest.raises(TypeError):
        evolve(fact, nonsense=1)
    with pytest.raises(TypeError):
        evolve(token, nonsense=1)


def test_known_args_answers_stay_the_same_when_asked_again() -> None:
    known = known_args()
    target = known.releases[-1]
    for flag in ("--max-num-seqs", "--kv-cache-dtype", "--no-such-flag", "--dtype"):
        first = (known.defines(flag, target), known.choices_at(flag, target))
        assert (known.defines(flag, target), known.choices_at(flag, target)) == first
    assert known.defines("--max-num-seqs", target) and not known.defines("--no-such-flag", target)
    assert known.choices_at("--dtype", target)


def test_to_python_plain_scalars_and_tags() -> None:
    doc = yaml.compose("a: 1\nb: 1.5\nc: true\nd: ~\ne: x\nf: 2001-12-14\ng: !!binary aGk=\n", Loader=yaml.SafeLoader)
    data = to_python(doc)
    assert data["a"] == 1 and data["b"] == 1.5 and data["c"] is True and data["d"] is None and data["e"] == "x"
    assert str(data["f"]) == "2001-12-14" and data["g"] == b"hi"


def test_to_python_with_and_without_merge_keys_is_what_pyyaml_loads() -> None:
    text = "base: &b {x: 1, y: [a, {z: 2}]}\nm:\n  <<: *b\n  x: 3\nplain: {k: v, 1: one, ? [l] : w}\n"
    positions: dict[tuple[object, ...], int] = {}
    data = to_python(yaml.compose(text, Loader=yaml.SafeLoader), positions)
    assert data["base"] == {"x": 1, "y": ["a", {"z": 2}]} and data["m"] == {"x": 3, "y": ["a", {"z": 2}]}
    assert data["plain"] == {"k": "v", "1": "one"}  # keys as written; a non-scalar key is left out
    assert positions[("m", "x")] == 4 and positions[("plain", "k")] == 5


def test_to_python_budget_counts_every_entry_without_merge_keys() -> None:
    text = "a:\n" + "".join(f"  k{i}: {i}\n" for i in range(50))
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    assert len(to_python(node, max_nodes=200)["a"]) == 50
    with pytest.raises(YamlProblem):
        to_python(node, max_nodes=60)  # 1 + 1 + 50 keys + 50 values


def _walks_for(n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    from vllm_upgrade_check.sources.scanners import compose_merge

    text = "services:\n" + "".join(f"  s{i}:\n    image: vllm/vllm-openai:v0.8.{i}\n" for i in range(n))
    doc = compose_merge.compose_document(text)
    assert doc is not None
    layer = compose_merge.Layer("docker-compose.yaml", text, doc)
    calls = [0]
    real = compose_merge.mapping_items

    def counted(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for entry in real(*args, **kwargs):  # type: ignore[arg-type]
            calls[0] += 1  # every entry walked
            yield entry

    monkeypatch.setattr(compose_merge, "mapping_items", counted)
    project = compose_merge.layer_project(compose_merge.Loader(None, [layer]), layer)
    assert sorted(project.services) == sorted(f"s{i}" for i in range(n))
    return calls[0]


def test_a_compose_file_of_many_services_reads_its_services_once(monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = _walks_for(50, monkeypatch), _walks_for(200, monkeypatch)
    assert large <= 4 * small + 4  # linear: each service's own entries, and the services once
