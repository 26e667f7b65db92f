"""Where each character of a Python string literal's value is written (``literals.value_places``)."""

from __future__ import annotations

import ast
import warnings

import pytest

from vllm_upgrade_check.sources.scanners.python.literals import fstring_places, value_places


def _eval(written: str) -> str:
    with warnings.catch_warnings():  # "\\d" is an invalid escape Python still reads
        warnings.simplefilter("ignore")
        value = ast.literal_eval("(" + written.replace("\r\n", "\n") + ")")
    assert isinstance(value, str)
    return value


def _places(written: str, column: int = 1) -> tuple[list[tuple[int, int]], tuple[int, int], bool] | None:
    value = _eval(written)
    return value_places(written, 3, column, value)


def test_a_plain_literal_is_one_place_per_character_after_its_quote() -> None:
    assert _places('"ab"', 5) == ([(3, 6), (3, 7)], (3, 8), True)
    assert _places("r'a\\b'") == ([(3, 3), (3, 4), (3, 5)], (3, 6), True)  # raw: the backslash is a character
    assert _places("U'é'") == ([(3, 3)], (3, 4), True)


@pytest.mark.parametrize(
    ("written", "char", "place"),
    [
        ('"a\\tb"', "b", (3, 5)),
        ('"\\u00e9 b"', "b", (3, 9)),
        ('"\\N{LATIN SMALL LETTER E WITH ACUTE} b"', "b", (3, 38)),
        ('"\\101\\x41 b"', "b", (3, 11)),
        ('"\\d b"', "b", (3, 5)),  # an unknown escape is kept as written
        ('"a " "b"', "b", (3, 7)),
        ('"a "\n  # c\n  "b"', "b", (5, 4)),
        ('"""a\n  b"""', "b", (4, 3)),
        ('"""a\r\n  b"""', "b", (4, 3)),
        ('"a \\\n  b"', "b", (4, 3)),
    ],
)
def test_escapes_lines_and_pieces_place_each_character_where_it_is_written(
    written: str, char: str, place: tuple[int, int]
) -> None:
    found = _places(written)
    assert found is not None
    places, _end, plain = found
    value = _eval(written)
    assert places[value.index(char)] == place
    assert plain == (written == '"\\d b"')  # only that one is written character for character


@pytest.mark.parametrize("written", ['f"a {x}"', 'b"a"', "x", '"a" + "b"'])
def test_what_is_no_str_literal_has_no_places(written: str) -> None:
    assert value_places(written, 1, 1, "a") is None


def test_a_value_the_text_does_not_give_has_no_places() -> None:
    assert value_places('"ab"', 1, 1, "abc") is None


@pytest.mark.parametrize(
    "written",
    [
        'f"vllm serve {m} --swap-space 4"',
        'f"a{{b}} {x!r:>{w}} c\\td --swap-space 4"',
        "rf'vllm {m} \\d --swap-space 4'",
        'F"""vllm serve {m}\n  --swap-space 4"""',
        'f"vllm serve {d[\'k\']} {f(\'}\')} --swap-space 4"',
    ],
)
def test_the_literal_parts_of_an_f_string_are_placed_where_they_are_written(written: str) -> None:
    tree = ast.parse(written, mode="eval").body
    assert isinstance(tree, ast.JoinedStr)
    texts = [str(v.value) for v in tree.values if isinstance(v, ast.Constant)]
    found = fstring_places(written, 2, 5, texts)
    assert found is not None and len(found) == len(texts)
    places, _end = found[-1]
    index = texts[-1].index("--swap-space")
    before = written[: written.index("--swap-space")]
    expected = (2 + before.count("\n"), (5 + len(before)) if "\n" not in before else len(before) - before.rfind("\n"))
    assert places[index] == expected


def test_an_f_string_whose_parts_differ_or_that_is_none_has_no_places() -> None:
    assert fstring_places('f"a {x} b"', 1, 1, ["a ", " c"]) is None
    assert fstring_places('"a b"', 1, 1, ["a b"]) is None
    assert fstring_places('f"a {x"', 1, 1, ["a "]) is None
