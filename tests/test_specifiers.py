"""Specifiers moved to admit the target in the user's style, and never further than the target."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from vllm_upgrade_check.fixing.specifiers import admitting


@pytest.mark.parametrize(
    ("written", "target", "expected"),
    [
        (">=0.20,<0.27", "0.28.0", ">=0.28,<0.29"),
        (">=0.20.1,<0.27", "0.28.0", ">=0.28.0,<0.29"),
        ("<0.27", "0.28.0", "<0.29"),
        ("<0.27.0", "0.28.0", "<0.29.0"),
        (">=0.10, <0.11", "0.28.0", ">=0.28, <0.29"),
        (">=0.20,<0.20.5", "0.28.0", ">=0.28,<0.28.1"),
        (">=0.9,<1", "1.2.0", ">=1.2,<2"),
        ("<=0.26.3", "0.28.0", "<=0.28.0"),
        ("~=0.26.0", "0.28.0", "~=0.28.0"),
        ("==0.26.*", "0.28.0", "==0.28.*"),
        ("==0.26.0", "0.28.0", "==0.28.0"),
        ("!=0.28.0,>=0.20", "0.28.0", ">=0.20"),
        ("<1.0,>=0.20", "0.28.0", "<1.0,>=0.20"),  # admits it already: unchanged
        (">=0.30", "0.28.0", None),  # a lower bound above the target: not an upgrade
        ("banana", "0.28.0", None),
        ("==0.26.0+cu126", "0.28.0", "==0.28.0+cu126"),  # the build variant stays
    ],
)
def test_admitting(written: str, target: str, expected: str | None) -> None:
    got = admitting(written, Version(target))
    assert got == expected
    if got is not None:
        local = Version(written.split("==")[-1]).local if "+" in written else None
        assert Version(f"{target}+{local}" if local else target) in SpecifierSet(got)


@pytest.mark.parametrize("written", [">=0.20,<0.27", "<0.27", ">=0.6,<0.7", ">=0.20.1,<0.21", "~=0.26.0"])
def test_the_moved_bound_admits_no_release_after_the_target(written: str) -> None:
    target = Version("0.28.0")
    got = admitting(written, target)
    assert got is not None
    assert Version("0.29.0") not in SpecifierSet(got)
