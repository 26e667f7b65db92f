"""Unknown flags at a bounded cost: suggestions from a length index (the same answer as
comparing with every flag), one rule object per flag, a cap on what one launch contributes,
and argv words owned in linear time."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version
from typer.testing import CliRunner

from scaling import LINEAR, time_ratio
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.knowledge.known_args import KnownArgs, _same_lead, known_args
from vllm_upgrade_check.matching.checks import MAX_UNKNOWN_PER_LAUNCH
from vllm_upgrade_check.parsing.words import Token
from vllm_upgrade_check.sources.scanners.arg_facts import owned_words

_register()
runner = CliRunner()
KNOWN = known_args()
FLAGS = sorted(KNOWN.flags)


def brute_force(flag: str, at: Version | None) -> str | None:
    wanted = "--" + flag.lstrip("-").split("=", 1)[0].split(".", 1)[0].replace("_", "-")
    pool = [f for f in KNOWN.flags if at is None or KNOWN.defines(f, at)]
    found = difflib.get_close_matches(wanted, pool, n=5, cutoff=0.6)
    return next((f for f in found if _same_lead(wanted, f)), None)


def fresh() -> KnownArgs:
    return KnownArgs(KNOWN.releases, KNOWN.flags, KNOWN.names, KNOWN.takes, KNOWN.missing, KNOWN.env_vars, KNOWN.choices)


@st.composite
def near_misses(draw: st.DrawFn) -> str:
    flag = draw(st.sampled_from(FLAGS))
    edits = draw(st.lists(st.tuples(st.integers(2, 60), st.sampled_from("abcdefgh-_x")), max_size=4))
    chars = list(flag)
    for at, ch in edits:
        if draw(st.booleans()) and at < len(chars):
            chars[at] = ch
        else:
            chars.insert(min(at, len(chars)), ch)
    return "".join(chars)


@settings(max_examples=300, deadline=None)
@given(flag=st.one_of(near_misses(), st.text("-abcdefghijklmnopqrstuvwxyz_=.", max_size=120)),
       at=st.sampled_from([None, *KNOWN.releases[::7]]))
def test_closest_is_the_answer_of_comparing_every_flag(flag: str, at: Version | None) -> None:
    assert fresh().closest(flag, at) == brute_force(flag, at)


def test_closest_cost_does_not_grow_with_a_huge_flag() -> None:
    known = fresh()

    def make(n: int):
        flags = [f"--{chr(97 + i)}{'y' * n}" for i in range(20)]  # distinct: nothing memoised
        return lambda: [known.closest(f) for f in flags]

    assert time_ratio(make, 50_000, repeat=3) < LINEAR


def scan_json(tmp_path: Path) -> list[dict]:
    result = runner.invoke(app, ["scan", str(tmp_path), "-f", "json", "--fail-on", "never", "--no-cache"])
    assert result.exit_code == 0, result.output
    return [f for f in json.loads(result.stdout)["findings"] if f["rule_id"] == "VUC000-001"]


def test_one_launch_contributes_at_most_the_cap_and_a_count(tmp_path: Path) -> None:
    many = " ".join(f"--made-up-{i} 1" for i in range(MAX_UNKNOWN_PER_LAUNCH + 37))
    (tmp_path / "a.sh").write_text(f"#!/bin/sh\nvllm serve m {many}\nvllm serve m --max-num-seqz 4 --bogus\n")
    found = scan_json(tmp_path)
    first = [f for f in found if f["line"] == 2]
    second = [f for f in found if f["line"] == 3]
    assert len(first) == MAX_UNKNOWN_PER_LAUNCH + 1 and len(second) == 2  # the cap is per launch
    summary = [f for f in first if "more flag" in f["message"]]
    assert len(summary) == 1 and "and 36 more flag(s)" in summary[0]["message"]
    assert summary[0]["subject"] == f"--made-up-{MAX_UNKNOWN_PER_LAUNCH}"


def test_config_file_keys_are_capped_too(tmp_path: Path) -> None:
    keys = "".join(f"made-up-{i}: 1\n" for i in range(MAX_UNKNOWN_PER_LAUNCH * 2))
    (tmp_path / "serve.sh").write_text("#!/bin/sh\nvllm serve m --config cfg.yaml\n")
    (tmp_path / "cfg.yaml").write_text("model: m\n" + keys)
    found = [f for f in scan_json(tmp_path) if f["path"].endswith("cfg.yaml")]
    assert len(found) == MAX_UNKNOWN_PER_LAUNCH + 1
    assert any(f"and {MAX_UNKNOWN_PER_LAUNCH - 1} more" in f["message"] for f in found)


def test_rule_objects_are_shared() -> None:
    from vllm_upgrade_check.matching import checks
    from vllm_upgrade_check.matching.matcher import Assumption, VersionContext
    from vllm_upgrade_check.model.facts import Fact, FactKind, Location
    from vllm_upgrade_check.model.findings import VersionBasis

    facts = [Fact(FactKind.ARG, "made_up", Location("a.sh", i), raw="--made-up", origin="cli", group=f"{i}:1")
             for i in range(1, 6)]
    assert KNOWN.newest is not None
    context = VersionContext(KNOWN.newest, None, Assumption(None, VersionBasis.OPTION, "test"))
    found = checks.unknown_flag_findings(facts, context)
    assert len(found) == 5 and len({id(f.rule) for f in found}) == 1


def test_owned_words_cost_is_linear() -> None:
    def make(n: int):
        args = [Token(f"--f{i}", 1, i + 1) for i in range(n)]
        return lambda: [owned_words(args, i + 1, None) for i in range(n)]

    assert time_ratio(make, 5000) < LINEAR
