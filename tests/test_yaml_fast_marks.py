"""libyaml's composer on non-ASCII YAML: the marks the scanners and ``fix`` use (lines,
character columns and offsets) must be those of PyYAML's pure-Python composer, and a text
where they would not be (a byte order mark inside it, lone surrogates) is read by the
pure-Python composer."""

from __future__ import annotations

import itertools

import pytest
import yaml

from vllm_upgrade_check.parsing import yamlnodes
from vllm_upgrade_check.parsing.yamlnodes import YamlProblem, compose_documents, fast_loader_fits

pytestmark = pytest.mark.skipif(
    not yamlnodes.fast_counts_characters(), reason="this PyYAML has no libyaml that counts characters"
)

WORDS = ["é", "€uro", "𝄞x", "日本語", "\u00a0nb", "ß", "😀", "e\u0301", "\u3000x", "\ue000"]
SHAPES = [
    "k{i}: {w}\n",
    "k{i}: '{w} q'\n",
    'k{i}: "{w}\\t"\n',
    "k{i}: [{w}, b{w}, 3]\n",
    "k{i}: {{a: {w}, b: [{w}]}}\n",
    "# {w} comment\nk{i}: v\n",
    "k{i}:\n  - {w}\n  - name: {w}x\n    args: [--model, {w}]\n",
    "k{i}: |\n  {w} line\n  second {w}\n",
    "k{i}: >-\n  folded {w}\n  text\n",
    "{w}key{i}: value # {w}\n",
    "---\nk{i}: {w}\n",
]


def _marks(docs: list[yaml.Node]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []

    def visit(node: yaml.Node) -> None:
        s, e = node.start_mark, node.end_mark
        out.append((type(node).__name__, node.tag, s.line, s.column, s.index, e.line, e.column, e.index))
        if isinstance(node, yaml.ScalarNode):
            out.append((node.value, node.style or None))  # plain: libyaml says '', PyYAML None
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                visit(child)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                visit(key)
                visit(value)

    for doc in docs:
        visit(doc)
    return out


def _slow(text: str) -> list[yaml.Node]:
    return [d for d in yaml.compose_all(text, Loader=yaml.SafeLoader) if d is not None]


def _texts() -> list[str]:
    texts = []
    for n, (first, second) in enumerate(itertools.product(SHAPES, repeat=2)):
        word = WORDS[n % len(WORDS)]
        other = WORDS[(n * 7 + 3) % len(WORDS)]
        text = first.format(i=0, w=word) + second.format(i=1, w=other)
        if text.startswith("---"):
            text = "a: 1\n" + text
        texts.append(text)
    return texts


def test_non_ascii_texts_take_the_fast_composer_with_the_same_marks() -> None:
    compared = 0
    for text in _texts():
        assert not text.isascii()
        assert fast_loader_fits(text)
        try:
            expected = _marks(_slow(text))
        except yaml.YAMLError:
            with pytest.raises(YamlProblem):
                compose_documents(text)
            continue
        assert _marks(compose_documents(text)) == expected, text
        compared += 1
    assert compared > len(SHAPES) ** 2 // 2  # most variants are valid YAML and were compared


@pytest.mark.parametrize(
    "text",
    [
        "k: \ufeffvalue\nl: [é, x]\n",
        "a: é\nb: x\ufeffy\nc: [1, 2]\n",
        "k0: {a: \u2028, b: [\u2028]}\nk1: ß\n",
        "k: {a: \u2029, b: [\u2029]}\nl: é\n",
        "k: {a: \x85}\nl: é\n",
    ],
)
def test_a_bom_or_a_unicode_line_break_keeps_the_pure_python_marks(text: str) -> None:
    assert not fast_loader_fits(text)
    try:
        fast: list[tuple[object, ...]] | None = _marks(list(yaml.compose_all(text, Loader=yaml.CSafeLoader)))
    except yaml.YAMLError:
        fast = None  # libyaml does not even read it
    assert fast != _marks(_slow(text))  # why such a text goes to the slow composer
    assert _marks(compose_documents(text)) == _marks(_slow(text))


def test_lone_surrogates_are_a_yaml_problem_not_a_crash() -> None:
    with pytest.raises(YamlProblem, match="unacceptable character"):
        compose_documents("model: caf\udce9\nargs: [é]\n")
