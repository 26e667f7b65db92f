"""Launches among other commands: which words another program reads too is answered from a
span index (``sources/scanners/base.SpanIndex``), the same answers as comparing every launch
word with every other word, in time that grows with the script, not with launches x words."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.model.facts import Span
from vllm_upgrade_check.parsing.words import Token, relinked
from vllm_upgrade_check.sources.scanners.base import SourceFile, SpanIndex, overlap
from vllm_upgrade_check.sources.scanners.shell import ShellScanner

_POINT = st.tuples(st.integers(1, 4), st.integers(1, 12))


@st.composite
def _spans(draw: st.DrawFn) -> Span:
    a, b = sorted((draw(_POINT), draw(_POINT)))
    return Span.between(a, b)


@given(st.lists(_spans(), max_size=12), _spans())
def test_the_index_answers_as_a_scan_of_the_list(items: list[Span], asked: Span) -> None:
    listed = [(span, f"w{i}") for i, span in enumerate(items)]
    index = SpanIndex(listed)
    first = next((who for span, who in listed if overlap(span, asked)), None)
    assert index.first_overlapping(asked) == first
    held = any(span.start <= asked.start and asked.end <= span.end for span in items)
    assert index.contains(asked) is held


def test_nested_and_repeated_spans() -> None:
    outer, inner, later = Span(1, 1, 1, 40), Span(1, 5, 1, 9), Span(1, 50, 1, 60)
    index = SpanIndex([(later, "c"), (inner, "b"), (outer, "a"), (inner, "d")])
    assert index.first_overlapping(Span(1, 6, 1, 7)) == "b"  # first in the given order, not by place
    assert index.first_overlapping(Span(1, 20, 1, 21)) == "a"
    assert index.first_overlapping(Span(1, 40, 1, 50)) is None  # touching ends share no character
    assert index.contains(Span(1, 6, 1, 8)) and index.contains(Span(1, 1, 1, 40))
    assert not index.contains(Span(1, 30, 1, 55))


def _script(n: int) -> str:
    lines = []
    for i in range(n):
        lines.append(f'echo "step {i}" $(date +%s) >> /tmp/log')
        lines.append(f"vllm serve m{i} --max-num-seqs {i} --swap-space 4")
        lines.append(f"cp a{i} b{i}")
    return "\n".join(lines) + "\n"


def test_shared_words_among_other_commands_are_still_found() -> None:
    text = 'ARGS=(--max-num-seqs 8)\necho "${ARGS[@]}" $(date)\nvllm serve m "${ARGS[@]}" --swap-space 4\n'
    facts = [f for f in ShellScanner().scan(SourceFile("run.sh", text)) if getattr(f, "name", "") != ""]
    shared = [f for f in facts if f.spans is not None and f.spans.note and "echo" in f.spans.note]  # type: ignore[union-attr]
    assert [f.name for f in shared] == ["max_num_seqs"]  # type: ignore[union-attr]
    swap = next(f for f in facts if getattr(f, "name", "") == "swap_space")
    assert swap.spans is not None and swap.spans.cut is not None  # type: ignore[union-attr]


def test_many_launches_among_other_commands_are_linear() -> None:
    scanner = ShellScanner()

    def at(n: int):  # type: ignore[no-untyped-def]
        source = SourceFile("run.sh", _script(n))
        return lambda: list(scanner.scan(source))

    assert time_ratio(at, 150, repeat=3) < LINEAR


@given(
    st.sampled_from(["prev_end", "next_start", "line_start", "line_end"]),
    st.one_of(st.none(), _POINT),
)
def test_relinked_is_replace_of_the_neighbour_points(name: str, point: tuple[int, int] | None) -> None:
    token = Token("--x", 2, 3, True, "'--x'", span=Span(2, 3, 2, 8), prev_end=(2, 1), line_end=(3, 1))
    assert relinked(token, **{name: point}) == replace(token, **{name: point})


def test_relinked_refuses_other_fields() -> None:
    with pytest.raises(TypeError, match="span"):
        relinked(Token("a", 1, 1), span=None)  # type: ignore[arg-type]
