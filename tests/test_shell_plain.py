"""The fast path for shell text of plain words gives what the tree walk gives."""

from __future__ import annotations

import random

import pytest

from vllm_upgrade_check.parsing import shell
from vllm_upgrade_check.parsing.shell import offset_locator, parse_shell
from vllm_upgrade_check.parsing.shell_plain import plain_script

_WORDS = [
    "vllm", "serve", "m", "--max-num-seqs", "8", "0.9", "--dtype=auto", "pip", "install", "vllm==0.8.1",
    "pkg>=1", "a=b", "A=1", "_X=y", "A1=2", "1A=2", "x.y=z", "@a", "a,b", ":", "-", "--", "a:b/c@d",
    "VLLM_USE_V1=1", "B=a:b", "-e", "+x", "a+b", "http://h/p", "m/n-1.2_3",
]  # fmt: skip


def _walked(text: str, locate=None, variables=None):
    """``parse_shell`` with the fast path off: the tree walk's result."""
    saved = shell.plain_script
    shell.plain_script = lambda *_args: None
    try:
        return parse_shell(text, locate, variables)
    finally:
        shell.plain_script = saved


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        lines = []
        for _line in range(rng.randint(1, 4)):
            words = [rng.choice(_WORDS) for _w in range(rng.randint(0, 6))]
            sep = rng.choice([" ", "  ", "\t", " \t "])
            lines.append(rng.choice(["", " ", "  "]) + sep.join(words) + rng.choice(["", " "]))
        out.append("\n".join(lines) + rng.choice(["", "\n", "\n\n"]))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_plain_text_reads_as_the_walk_reads_it(seed: int) -> None:
    fast_taken = 0
    for text in _texts(seed, 300):
        for locate in (None, offset_locator(text, 7, 5)):
            mine: dict = {"OLD": []}
            theirs: dict = {"OLD": []}
            got = parse_shell(text, locate, mine)
            want = _walked(text, locate, theirs)
            assert got == want, text
            assert mine == theirs, text
        fast_taken += plain_script(text.encode(), offset_locator(text, 1, 1), {}) is not None
    assert fast_taken > 30  # many of the variants do go through the fast path


@pytest.mark.parametrize(
    "text",
    [
        "A= x", "A==1 cmd", "A+=1", "export A=1", "echo $A", "echo 'a b'", "a # c", "a\\\n b", "if x",
        "eval a", "source f", ". f", "A=1 B=é", "a;b", "a && b", "f() { x; }", "echo ~", "echo *", "=a b",
    ],
)  # fmt: skip
def test_other_text_goes_to_the_parser(text: str) -> None:
    assert plain_script(text.encode(), offset_locator(text, 1, 1), {}) is None
    assert parse_shell(text) == _walked(text)


def test_variables_known_before_are_kept_and_updated() -> None:
    known = {"A": []}
    script = parse_shell(" VLLM_USE_V1=1 B=2", offset_locator(" VLLM_USE_V1=1 B=2", 3, 4), known)
    assert [(a.name, a.value, a.line, a.column, a.prefix) for a in script.assignments] == [
        ("VLLM_USE_V1", "1", 3, 5, False),
        ("B", "2", 3, 19, False),
    ]
    assert set(known) == {"A", "VLLM_USE_V1", "B"}
    assert known["B"][0].span is not None and known["B"][0].span.column == 21
