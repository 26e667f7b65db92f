"""The matcher: release windows, deprecation windows, specifier conflicts, absence rules."""

from __future__ import annotations

import pytest
from packaging.version import Version

from vllm_upgrade_check.matching.matcher import Assumption, VersionContext, match_rules, specifiers_conflict
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import VersionBasis
from vllm_upgrade_check.model.pack import Pack
from vllm_upgrade_check.model.pack_schema import validate_pack


def pack(release: str, *rules: dict) -> Pack:
    return validate_pack({"release": release, "rules": list(rules)})


def rule(rid: str, match: dict, **extra) -> dict:
    base = {
        "id": rid,
        "name": "r",
        "severity": "blocker",
        "match": match,
        "message": "m",
        "fix": {"summary": "s"},
        "docs": {"why": "w"},
        "evidence": [{"kind": "unverified", "reason": "test"}],
    }
    base.update(extra)
    return base


ARG = Fact(FactKind.ARG, "swap_space", Location("a.sh", 3, 1), raw="--swap-space", value="4", origin="cli")
UNKNOWN = Assumption(None, VersionBasis.UNKNOWN, "none")


def run(packs, facts, target, start=None, option=None):
    rules = [(p, r) for p in packs for r in p.rules]
    default = Assumption(Version(start), VersionBasis.REPOSITORY, "x") if start else UNKNOWN
    return match_rules(
        rules, facts, VersionContext(Version(target), Version(option) if option else None, default)
    )


@pytest.mark.parametrize(
    ("start", "target", "hit"),
    [
        ("0.26.0", "0.28.0", True),
        ("0.28.0", "0.29.0", False),
        (None, "0.28.0", True),
        ("0.26.0", "0.27.0", False),
    ],
)
def test_release_window(start, target, hit) -> None:
    packs = [pack("0.28.0", rule("T-001", {"kind": "engine_arg", "name": "swap_space"})), pack("0.29.0")]
    assert bool(run(packs, [ARG], target, start)) is hit


def test_deprecation_window_gives_warning() -> None:
    packs = [
        pack("0.30.0", rule("T-001", {"kind": "engine_arg", "name": "swap_space"}, deprecated_in="0.28.0"))
    ]
    (finding,) = run(packs, [ARG], "0.30.0", "0.29.0")
    assert finding.severity.value == "blocker" and not finding.deprecated_only
    packs.append(pack("0.29.0"))
    (warn,) = run(packs, [ARG], "0.29.0", "0.26.0")
    assert warn.severity.value == "warning" and warn.deprecated_only
    assert run(packs, [ARG], "0.27.0", "0.26.0") == []


def test_file_hint_beats_default_and_option_beats_hint() -> None:
    packs = [pack("0.27.0", rule("T-001", {"kind": "engine_arg", "name": "swap_space"}))]
    hinted = Fact(FactKind.ARG, "swap_space", Location("a", 1), version_hint="0.27.0", hint_source="a:1")
    assert run(packs, [hinted], "0.28.0", "0.26.0") == []
    (f,) = run(packs, [hinted], "0.28.0", "0.26.0", option="0.26.0")
    assert f.from_basis == VersionBasis.OPTION


def test_values_and_absence() -> None:
    packs = [
        pack(
            "0.28.0",
            rule("T-001", {"kind": "engine_arg", "name": "quantization", "values": ["bitsandbytes"]}),
            rule("T-002", {"kind": "absent_arg", "name": "max_num_batched_tokens"}, severity="warning"),
        )
    ]
    q_bnb = Fact(FactKind.ARG, "quantization", Location("a", 1), value="BitsAndBytes")
    q_awq = Fact(FactKind.ARG, "quantization", Location("a", 2), value="awq")
    launch_set = Fact(
        FactKind.LAUNCH, "vllm serve", Location("a", 3), args=frozenset({"max_num_batched_tokens"})
    )
    launch_unset = Fact(FactKind.LAUNCH, "vllm serve", Location("b", 3), args=frozenset({"model"}))
    found = run(packs, [q_bnb, q_awq, launch_set, launch_unset], "0.28.0", "0.27.0")
    assert [(f.rule.id, f.location.path, f.location.line) for f in found] == [
        ("T-001", "a", 1),
        ("T-002", "b", 3),
    ]


@pytest.mark.parametrize(
    ("user", "required", "conflict"),
    [
        ("==2.11.0", "==2.13.0", True),
        (">=2.10", "==2.13.0", False),
        ("<2.13", "==2.13.0", True),
        ("~=2.12.0", "==2.13.0", True),
        ("==2.13.*", "==2.13.0", False),
        ("!=2.13.0", "==2.13.0", True),
        ("", "==2.13.0", False),
        (">=2.12,<2.13", ">=2.13,<2.14", True),
    ],
)
def test_specifiers_conflict(user, required, conflict) -> None:
    assert specifiers_conflict(user, required) is conflict


def test_dependency_rule_on_installed_distribution() -> None:
    packs = [pack("0.27.0", rule("T-001", {"kind": "dependency", "name": "torch", "specifier": "==2.13.0"}))]
    old = Fact(FactKind.DISTRIBUTION, "torch", Location(None), value="2.11.0", origin="env")
    new = Fact(FactKind.DISTRIBUTION, "torch", Location(None), value="2.13.0", origin="env")
    assert len(run(packs, [old, new], "0.27.0", "0.26.0")) == 1


def test_newest_requirement_supersedes_older_pins() -> None:
    packs = [
        pack("0.27.0", rule("T-001", {"kind": "dependency", "name": "torch", "specifier": "==2.13.0"})),
        pack("0.33.0", rule("T-002", {"kind": "dependency", "name": "torch", "specifier": "==2.14.0"})),
    ]
    pinned = Fact(FactKind.REQUIREMENT, "torch", Location("requirements.txt", 1), value="==2.11.0")
    (finding,) = run(packs, [pinned], "0.33.0", "0.26.0")
    assert finding.rule.id == "T-002"
    (finding,) = run(packs, [pinned], "0.27.0", "0.26.0")
    assert finding.rule.id == "T-001"
    on_new = Fact(FactKind.REQUIREMENT, "torch", Location("requirements.txt", 1), value="==2.14.0")
    assert run(packs, [on_new], "0.33.0", "0.26.0") == []


def test_a_model_served_by_the_transformers_backend_is_not_flagged() -> None:
    from conftest import kinds, scan_text
    from vllm_upgrade_check.sources.scanners.python.scanner import PythonSourceScanner
    from vllm_upgrade_check.sources.scanners.shell import ShellScanner

    removed = pack(
        "0.29.0",
        rule(
            "T-001",
            {"kind": "model", "name": "arctic", "patterns": ["snowflake/*"], "unless_args": {"model_impl": "transformers"}},
        ),
    )
    shell = "vllm serve Snowflake/arctic --model-impl transformers\nvllm serve Snowflake/arctic --model-impl transformers --model-impl=vllm\n"
    python = 'from vllm import LLM\nLLM(model="Snowflake/arctic", model_impl="transformers")\nLLM("Snowflake/arctic")\n'
    facts = kinds(scan_text(ShellScanner(), "serve.sh", shell), FactKind.MODEL)
    facts += kinds(scan_text(PythonSourceScanner(), "app.py", python), FactKind.MODEL)
    assert [sorted(f.args) for f in facts] == [["model_impl=transformers"], ["model_impl=vllm"], ["model_impl=transformers"], []]
    hits = run([removed], facts, "0.29.0", "0.28.0")
    assert sorted((h.fact.location.path, h.fact.location.line) for h in hits) == [("app.py", 3), ("serve.sh", 2)]


@pytest.mark.parametrize(
    ("match", "error"),
    [
        ({"kind": "engine_arg", "name": "x", "unless_args": {"model_impl": "transformers"}}, r"rules\[0\]\.match: unknown key unless_args"),
        ({"kind": "model", "name": "x", "patterns": ["a/*"], "unless_args": {"dtype": "half"}}, "must be one of model_impl"),
    ],
)
def test_unless_args_is_checked(match: dict, error: str) -> None:
    import yaml

    from vllm_upgrade_check.errors import RulePackError
    from vllm_upgrade_check.knowledge.registry import load_pack_text

    with pytest.raises(RulePackError, match=error):
        load_pack_text(yaml.safe_dump({"release": "0.29.0", "rules": [rule("T-001", match)]}), "t.yaml")


@pytest.mark.parametrize(
    ("patterns", "models"),
    [
        (["snowflake/*"], ["Snowflake/arctic", "snowflake/", "other/snowflake/x", "Snowflake"]),
        (["*jamba*", "*qwen3.5*"], ["ai21labs/AI21-Jamba-1.5-Mini", "Qwen/Qwen3.5-7B", "Qwen/Qwen3-5B", "jamb"]),
        (["org/m?del", "[ab]*/x"], ["org/model", "org/mdel", "a1/x", "c1/x", "B/X", "org/m\ndel"]),
        (["*(x|y)*", "a.b"], ["(x|y)", "x", "a.b", "axb"]),
    ],
)
def test_a_model_rule_matches_as_fnmatch_of_each_lowered_pattern(patterns: list[str], models: list[str]) -> None:
    import fnmatch

    removed = pack("0.29.0", rule("T-001", {"kind": "model", "name": "m", "patterns": patterns}))
    facts = [Fact(FactKind.MODEL, name, Location("a.sh", i + 1), origin="cli") for i, name in enumerate(models)]
    # the same model twice, on other lines: each fact gets its own finding
    facts += [Fact(FactKind.MODEL, name, Location("b.sh", i + 1), origin="cli") for i, name in enumerate(models)]
    hits = run([removed], facts, "0.29.0", "0.28.0")
    expected = [
        (path, i + 1)
        for path in ("a.sh", "b.sh")
        for i, name in enumerate(models)
        if any(fnmatch.fnmatchcase(name.lower(), p.lower()) for p in patterns)
    ]
    assert expected  # each case matches some model and not others
    assert len(expected) < 2 * len(models)
    assert [(h.fact.location.path, h.fact.location.line) for h in hits] == expected


def test_a_model_rule_with_origins_tells_two_facts_of_one_model_apart() -> None:
    removed = pack("0.29.0", rule("T-001", {"kind": "model", "name": "m", "patterns": ["org/*"], "origins": ["python"]}))
    facts = [
        Fact(FactKind.MODEL, "org/m", Location("a.sh", 1), origin="cli"),
        Fact(FactKind.MODEL, "org/m", Location("b.py", 1), origin="python"),
        Fact(FactKind.MODEL, "org/m", Location("c.sh", 1), origin="cli"),
    ]
    hits = run([removed], facts, "0.29.0", "0.28.0")
    assert [h.fact.location.path for h in hits] == ["b.py"]
