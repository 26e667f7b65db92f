"""A variable's value is word-split as :func:`shlex.split` splits it, with or without its
quoting fast path (a value without quotes or backslashes is cut at shlex's blanks only), and
each word keeps its place in the file."""

from __future__ import annotations

import shlex

import pytest

from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.parsing.shell_expand import _BLANK_SPLIT, _QUOTING

PLAIN = ["1", " a  b\tc ", "x\x0by", "a\xa0b", "é ü", "#c d", "a;b|c&d", "--x=1 --y", "(a) <b>", "", "   "]


@pytest.mark.parametrize("value", PLAIN)
def test_the_fast_split_is_shlex_for_values_without_quoting(value: str) -> None:
    assert not _QUOTING.search(value)
    assert _BLANK_SPLIT.findall(value) == shlex.split(value, comments=False, posix=True)


@pytest.mark.parametrize("value", ["'a b'", 'x"y z"', "a\\ b", "it's"])
def test_quoted_values_take_shlex(value: str) -> None:
    assert _QUOTING.search(value)


@pytest.mark.parametrize(
    ("script", "words"),
    [
        ('ARGS="--max-num-seqs 8  --enforce-eager"\nvllm serve m $ARGS\n', ["--max-num-seqs", "8", "--enforce-eager"]),
        ("ARGS='--dtype\thalf'\nvllm serve m $ARGS\n", ["--dtype", "half"]),
        ('ARGS="--served-model-name \'a b\'"\nvllm serve m $ARGS\n', ["--served-model-name", "a b"]),
        ('ARGS="--x é"\nvllm serve m $ARGS\n', ["--x", "é"]),
    ],
)
def test_a_variable_of_flags_is_split_into_its_words(script: str, words: list[str]) -> None:
    launch = parse_shell(script).commands[-1]
    tokens = launch.argv[3:]
    assert [t.text for t in tokens] == words
    assert all(t.line == 1 for t in tokens)
    # each plain word is placed where it is written on line 1
    line = script.splitlines()[0]
    for token in tokens:
        if token.span is not None:
            assert line[token.column - 1 : token.span.end_column - 1] == token.text
