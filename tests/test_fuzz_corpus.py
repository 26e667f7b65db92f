"""Replay the saved fuzz corpus (seeds and every crash ever found) through each fuzz target."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parent / "fuzz"
sys.path.insert(0, str(FUZZ))

from targets import TARGETS  # noqa: E402

CASES = sorted(
    (name, path) for name in TARGETS for path in (FUZZ / "corpus" / name).iterdir() if path.is_file()
)


def test_every_target_has_a_corpus() -> None:
    assert {name for name, _ in CASES} == set(TARGETS)


@pytest.mark.parametrize(("name", "path"), CASES, ids=[f"{n}/{p.name}" for n, p in CASES])
def test_corpus_input_does_not_crash(name: str, path: Path) -> None:
    TARGETS[name](path.read_bytes())
