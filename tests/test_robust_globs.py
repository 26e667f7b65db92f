"""Ignore patterns (``.gitignore``, ``--exclude``, configured ignore paths) matched in linear
time, with git's precedence kept, and hostile pattern files reported rather than obeyed."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec._backends.re2.gitignore import Re2GiBackend

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.facts import Skipped
from vllm_upgrade_check.parsing import globs
from vllm_upgrade_check.parsing.globs import GitIgnoreRules
from vllm_upgrade_check.sources.discovery import walk

HOSTILE = ["*a*a*a*a*a*b", "**/*x*x*x*x*x*y/", "*?*?*?*?*?*z", "[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*q"]


def test_every_spec_uses_the_automaton_backend() -> None:
    rules = GitIgnoreRules(["*.log", "!keep.log", *HOSTILE])
    assert rules._specs and all(isinstance(s._backend, Re2GiBackend) for s in rules._specs)


@pytest.mark.parametrize("pattern", HOSTILE)
def test_hostile_pattern_cost_grows_linearly(pattern: str) -> None:
    rules = GitIgnoreRules([pattern])

    def make(n: int):
        names = ["a" * n, "x" * n + "/", "dir/" + "ab" * (n // 2)]
        return lambda: [rules.check(name) for name in names * 20]

    assert time_ratio(make, 4000) < LINEAR


def test_precedence_kept_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs, "CHUNK", 2)
    rules = GitIgnoreRules(["*.log", "x", "y", "!keep.log", "z", "keep.log"])
    assert rules.check("a.log") is True
    assert rules.check("keep.log") is True  # the last matching pattern decides
    assert GitIgnoreRules(["*.log", "a", "b", "!keep.log"]).check("keep.log") is False
    assert rules.check("other.txt") is None


def test_pattern_over_budget_is_rejected_alone() -> None:
    huge = "*a" * 20000 + "b"
    rules = GitIgnoreRules(["*.tmp", huge, "\\", "build/"])
    assert [number for number, _line, _reason in rules.rejected] == [2, 3]
    assert rules.matches("x.tmp") and rules.matches("build/")
    assert "linear time" in rules.rejected[0][2] and "invalid" in rules.rejected[1][2]


def test_no_deprecation_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GitIgnoreRules(["*.log", "!a.log", "**/b/"]).check("x/a.log")


def test_hostile_gitignore_in_a_tree(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*b\n" + "*a" * 20000 + "c\nskip.sh\n")
    (tmp_path / "skip.sh").write_text("vllm serve m\n")
    long_name = "a" * 200 + ".sh"
    (tmp_path / long_name).write_text("vllm serve m\n")
    skipped: list[Skipped] = []
    rels = [rel for _p, rel in walk(tmp_path, skipped=skipped)]
    assert long_name in rels and "skip.sh" not in rels
    assert [(s.path, s.line) for s in skipped] == [(".gitignore", 2)]


def test_exclude_too_complex_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m\n")
    with pytest.raises(UsageError, match="--exclude"):
        list(walk(tmp_path, exclude=["*a" * 20000 + "b"]))
    assert [rel for _p, rel in walk(tmp_path, exclude=HOSTILE)] == ["run.sh"]


def test_gitignore_symlink_out_of_root_is_not_obeyed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.ignore"
    outside.write_text("run.sh\n")
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "run.sh").write_text("vllm serve m\n")
    (root / "sub" / "launch.sh").write_text("vllm serve m\n")
    (root / ".gitignore").symlink_to(outside)
    (root / "sub" / ".gitignore").symlink_to("../../outside.ignore")
    skipped: list[Skipped] = []
    rels = [rel for _p, rel in walk(root, skipped=skipped)]
    assert rels == ["run.sh", "sub/launch.sh"]
    assert sorted(s.path for s in skipped) == [".gitignore", "sub/.gitignore"]
    assert all("outside the scanned root" in s.reason for s in skipped)


def test_gitignore_symlink_inside_root_is_obeyed(tmp_path: Path) -> None:
    (tmp_path / "ignores").write_text("run.sh\n")
    (tmp_path / "run.sh").write_text("vllm serve m\n")
    (tmp_path / ".gitignore").symlink_to("ignores")
    assert [rel for _p, rel in walk(tmp_path)] == ["ignores"]


_PATTERN = st.text(alphabet=st.sampled_from("ab*?/!.[]-"), min_size=1, max_size=8)
_PATH = st.lists(st.text(alphabet=st.sampled_from("ab.-"), min_size=1, max_size=4), min_size=1, max_size=3)


@settings(max_examples=400, deadline=None)
@given(patterns=st.lists(_PATTERN, min_size=1, max_size=5), parts=_PATH, directory=st.booleans())
def test_same_verdicts_as_the_backtracking_reference(patterns: list[str], parts: list[str], directory: bool) -> None:
    """On small inputs (where backtracking is cheap) the automaton decides as pathspec's
    reference backend does: the speed-up changes no verdict."""
    import re

    import pathspec

    rel = "/".join(parts) + ("/" if directory else "")
    try:
        reference = pathspec.GitIgnoreSpec.from_lines(patterns, backend="simple")
        include = reference.check_file(rel).include
        other = pathspec.GitIgnoreSpec.from_lines(patterns, backend="re2").check_file(rel).include
    except (ValueError, re.error):
        return  # a pattern the reference cannot compile: no verdict to compare with
    if other != include:
        # pathspec's own backends disagree (['!*', '?'] on the directory 'a/'): no one
        # verdict to compare with
        return
    rules = GitIgnoreRules(patterns)
    assert not rules.rejected
    assert rules.check(rel) == (None if include is None else bool(include))
