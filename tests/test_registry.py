"""Rule packs: the shipped ones validate; bad packs fail with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge import packbundle
from vllm_upgrade_check.knowledge import registry as registry_module
from vllm_upgrade_check.knowledge.registry import (
    build_registry,
    bundled_pack_files,
    load_pack_file,
    load_pack_text,
    load_registry,
)

GOOD_RULE = """  - id: ACME-001
    name: a-rule
    severity: blocker
    match: {kind: engine_arg, name: swap_space}
    message: m
    fix: {summary: s}
    docs: {why: w}
    evidence: [{kind: unverified, reason: test}]
"""


def test_bundled_packs_validate_and_every_rule_has_evidence() -> None:
    registry = load_registry()
    assert registry.releases, "no bundled packs"
    for _pack, rule in registry.rules():
        assert {e.kind for e in rule.evidence} & {"wheel", "unverified"}


def test_bundled_packs_load_the_same_by_the_fast_path_as_by_the_strict_one() -> None:
    # Shipped packs skip the node walk that gives error lines; the strict loader (duplicate
    # keys refused, every line tracked) must accept each and read it identically.
    files = bundled_pack_files()
    assert len(files) > 60
    for display, path in files:
        strict = load_pack_file(path, display)
        assert load_pack_file(path, display, trusted=True) == strict, display


def test_packs_pre_parsed_at_build_time_load_the_same_as_their_yaml() -> None:
    files = bundled_pack_files()
    bundle = packbundle.read_bundle(packbundle.compile_bundle((path.name, path.read_text()) for _d, path in files))
    assert set(bundle) == {path.name for _d, path in files}
    for display, path in files:
        strict = load_pack_file(path, display)
        assert load_pack_file(path, display, trusted=True, bundle=bundle) == strict, display
    registry_module._bundled_packs.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(registry_module, "bundled_pack_data", lambda: bundle)
            fast = registry_module._bundled_packs()
        registry_module._bundled_packs.cache_clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(registry_module, "bundled_pack_data", dict)
            assert registry_module._bundled_packs() == fast
    finally:
        registry_module._bundled_packs.cache_clear()


def test_a_pre_parsed_pack_is_used_only_for_the_exact_text_it_was_made_from(tmp_path: Path) -> None:
    pack = tmp_path / "0.27.0.yaml"
    built = "release: 0.27.0\nrules:\n" + GOOD_RULE
    bundle = packbundle.read_bundle(packbundle.compile_bundle([(pack.name, built)]))
    pack.write_text(built)
    assert load_pack_file(pack, trusted=True, bundle=bundle).rules[0].severity.value == "blocker"
    pack.write_text(built.replace("blocker", "warning"))  # edited after the build
    assert load_pack_file(pack, trusted=True, bundle=bundle).rules[0].severity.value == "warning"
    pack.write_text(built.replace("blocker", "fatal"))
    with pytest.raises(RulePackError) as err:  # a broken edit still names its line
        load_pack_file(pack, trusted=True, bundle=bundle)
    assert err.value.line == 5


@pytest.mark.parametrize("text", ["", "{", "[]", '{"format": 99, "packs": {}}', '{"format": 1, "packs": []}'])
def test_a_malformed_pack_bundle_is_ignored(text: str) -> None:
    assert packbundle.read_bundle(text) == {}


def test_packs_json_cannot_carry_unchanged_are_left_out_of_the_bundle() -> None:
    packs = [
        ("0.1.0.yaml", "release: 0.1.0\nreleased_on: 2025-01-02\n"),  # a date
        ("0.2.0.yaml", "release: 0.2.0\n1: one\n"),  # a key that is not a string
        ("0.3.0.yaml", "release: [0.3.0\n"),  # not YAML
        ("0.4.0.yaml", "release: 0.4.0\nsummary: caf\u00e9\n"),
    ]
    bundle = packbundle.read_bundle(packbundle.compile_bundle(packs))
    assert set(bundle) == {"0.4.0.yaml"}
    assert bundle["0.4.0.yaml"][1] == {"release": "0.4.0", "summary": "caf\u00e9"}


def test_a_broken_trusted_pack_still_reports_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "0.27.0.yaml"
    bad.write_text("release: 0.27.0\nrules:\n" + GOOD_RULE.replace("blocker", "fatal"))
    with pytest.raises(RulePackError) as err:
        load_pack_file(bad, trusted=True)
    assert err.value.line == 5 and "severity" in str(err.value)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (
            "release: 0.27.0\nrules:\n" + GOOD_RULE.replace("    docs:", "    colour: red\n    docs:"),
            9,
            "unknown key",
        ),
        ("release: 0.27.0\nrules:\n" + GOOD_RULE.replace("blocker", "fatal"), 5, "severity"),
        ("release: 0.27.x\n", 1, "not a valid version"),
        ("release: 0.27.0\nrules:\n" + GOOD_RULE.replace("ACME-001", "bad id"), 3, "id"),
        (
            "release: 0.27.0\nrules:\n"
            + GOOD_RULE.replace("[{kind: unverified, reason: test}]", "[{kind: docs, url: \"https://docs.vllm.ai\"}]"),
            3,
            "evidence",
        ),
        ("release: 0.27.0\nrules: [\n", 3, "YAML syntax error"),
        ("release: 0.27.0\nrelease: 0.28.0\n", 2, "duplicate key"),
    ],
)
def test_bad_pack_names_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(RulePackError) as info:
        load_pack_text(text, "acme.yaml")
    assert info.value.path == "acme.yaml"
    assert info.value.line == line, str(info.value)
    assert fragment in str(info.value)


def test_duplicate_ids_across_packs() -> None:
    a = load_pack_text("release: 0.27.0\nrules:\n" + GOOD_RULE, "a.yaml")
    b = load_pack_text("release: 0.28.0\nrules:\n" + GOOD_RULE, "b.yaml")
    with pytest.raises(RulePackError, match="already used in a.yaml"):
        build_registry([("a.yaml", a), ("b.yaml", b)])


def test_extra_pack_directory(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text("release: 0.27.0\nrules:\n" + GOOD_RULE)
    registry = load_registry([tmp_path])
    assert registry.rule("acme-001") is not None


def test_missing_fields_are_named_at_the_rules_line() -> None:
    text = "release: 0.18.0\nprevious: 0.17.0\nrules:\n  - id: VUC0180-001\n    name: x\n"
    with pytest.raises(RulePackError) as info:
        load_pack_text(text, "0.18.0.yaml")
    assert str(info.value) == (
        "0.18.0.yaml:4: rules[0]: missing field(s): severity, match, message, fix, docs, evidence"
    )


def test_missing_field_and_another_error_still_counts_the_rest() -> None:
    text = "release: 0.27.0\nrules:\n" + GOOD_RULE.replace("    docs:", "    colour: red\n    docs:")
    text = text.replace("    severity: blocker\n", "")
    with pytest.raises(RulePackError) as info:
        load_pack_text(text, "acme.yaml")
    assert "missing field(s): severity (and 1 more)" in str(info.value)


def test_bundled_packs_leave_the_collector_as_they_found_it() -> None:
    import gc

    from vllm_upgrade_check.knowledge.registry import _bundled_packs

    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            _bundled_packs.cache_clear()
            packs = _bundled_packs()
            assert gc.isenabled() is enabled
            assert len(packs) > 60 and len({pack.release for _name, pack in packs}) == len(packs)
    finally:
        (gc.enable if was else gc.disable)()
