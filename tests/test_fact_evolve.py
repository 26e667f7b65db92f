"""``Fact.evolve`` is ``dataclasses.replace`` for facts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Spans


def test_evolve_gives_what_replace_gives() -> None:
    fact = Fact(FactKind.ARG, "max_num_seqs", Location("run.sh", 3, 4, 3, 18), raw="--max-num-seqs", value="8",
                spans=Spans(note="n"), args=frozenset({"a"}))  # fmt: skip
    changed = fact.evolve(version_hint="0.8.0", hint_source="Dockerfile:1", group="3:1")
    assert changed == replace(fact, version_hint="0.8.0", hint_source="Dockerfile:1", group="3:1")
    assert changed.version_hint == "0.8.0" and fact.version_hint is None
    assert fact.evolve() == fact and fact.evolve() is not fact


def test_evolve_refuses_an_unknown_field() -> None:
    fact = Fact(FactKind.ENV_VAR, "VLLM_X", Location("a", 1, 1, 1, 2))
    with pytest.raises(TypeError, match="colour"):
        fact.evolve(colour="red")
