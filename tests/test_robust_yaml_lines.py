"""The words of every YAML list and the cuts of every mapping in one file read the file's
lines split once (``parsing/yamlwords.text_lines``): a file of many lists costs its size,
not lists x size (n against 4n, a ratio)."""

from __future__ import annotations

from collections.abc import Callable

import yaml

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.parsing.yamlwords import entry_cuts, sequence_words, text_lines


def _text(n: int) -> str:
    return "".join(
        f"s{i}:\n  command: [--model, m, --max-num-seqs, '{i}']\n  args:\n  - --swap-space\n  - '4'  # note\n"
        f"  env: {{A: '1', B: '2'}}\n"
        for i in range(n)
    )


def _words_of_every_node(n: int) -> Callable[[], object]:
    text = _text(n)
    root = yaml.compose(text)
    nodes = [value for _key, entry in root.value for _k, value in entry.value]

    def run() -> object:
        text_lines.cache_clear()  # each run splits its text once, as a scan does
        return [
            sequence_words(text, node) if isinstance(node, yaml.SequenceNode) else entry_cuts(text, node)
            for node in nodes
        ]

    return run


def test_many_lists_and_mappings_in_one_file_are_linear() -> None:
    assert time_ratio(_words_of_every_node, 300, repeat=3) < LINEAR


def test_words_and_cuts_are_placed_where_they_are_written() -> None:
    text = _text(3)
    root = yaml.compose(text)
    service = root.value[1][1]
    flow, block, env = (value for _key, value in service.value)
    assert [(t.text, t.line, t.column) for t in sequence_words(text, flow)] == [
        ("--model", 8, 13), ("m", 8, 22), ("--max-num-seqs", 8, 25), ("1", 8, 42)
    ]  # fmt: skip
    swap, four = sequence_words(text, block)
    assert (swap.text, swap.element) == ("--swap-space", swap.element) and swap.element is not None
    assert (swap.element.line, swap.element.end_line, four.element.line) == (10, 11, 11)  # type: ignore[union-attr]
    cuts = entry_cuts(text, env)
    assert len(cuts) == 2 and all(c is not None for c in cuts.values())
