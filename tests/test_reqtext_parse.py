"""``parse_requirement`` reads every string as ``packaging``'s ``Requirement`` does."""

from __future__ import annotations

import itertools

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from vllm_upgrade_check.parsing.reqtext import _SIMPLE_REQUIREMENT, parse_requirement

_NAMES = ["pkg", "a", "A_b.c-d", "vllm", "x1", "-bad", "bad-", "a..b", "Foo_Bar"]
_SPECS = [
    "", ">=1", ">=1.2", "==0.8.0", "~=1", "~=1.2", "!=3", "<2,>=1", " >= 1.0 , < 2", "==1.0.*", ">1 ,<3",
    "<=0", "==01.002", ">= 1,", ",>=1", "==1 .0", "> =1", "===1.0", "1.0", ">=1.0rc1", "\t==1", "[e]>=1",
    " @ https://h/p.whl", ">=1; python_version>'3.9'",
]  # fmt: skip


def _read(text: str) -> tuple[object, ...] | None:
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    return (req.name, req.url, req.extras, str(req.marker), str(req.specifier), sorted(map(str, req.specifier)), str(req))


def test_every_variant_reads_as_packaging_reads_it() -> None:
    fast = 0
    for name, spec in itertools.product(_NAMES, _SPECS):
        for text in (name + spec, name + spec + " ", name + " " + spec):
            parse_requirement.cache_clear()
            want = _read(text)
            if want is None:
                with pytest.raises(InvalidRequirement):
                    parse_requirement(text)
                continue
            got = parse_requirement(text)
            assert (got.name, got.url, got.extras, str(got.marker), str(got.specifier),
                    sorted(map(str, got.specifier)), str(got)) == want, text  # fmt: skip
            assert got == Requirement(text)
            fast += _SIMPLE_REQUIREMENT.fullmatch(text) is not None
    assert fast > 100  # the plain shapes do take the fast path


def test_the_same_text_gives_the_same_requirement() -> None:
    assert parse_requirement("pkg7>=1.7") is parse_requirement("pkg7>=1.7")
    assert parse_requirement("pkg7>=1.7").specifier.contains("1.8")
    assert not parse_requirement("pkg7>=1.7").specifier.contains("1.6")
