"""The bundled packs cover every release between the oldest and the newest pack, with unique ids
and evidence on every rule."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from packaging.version import Version

from vllm_upgrade_check.knowledge.registry import bundled_pack_files, load_registry
from vllm_upgrade_check.model.pack import WheelEvidence

RULES = Path(__file__).resolve().parents[1] / "rules"


def known_releases() -> list[Version]:
    """Every vLLM release the project read from PyPI (known_args.json ``releases``)."""
    data = json.loads(resources.files("vllm_upgrade_check.data").joinpath("known_args.json").read_text())
    return sorted(Version(v) for v in data["releases"])


def test_bundled_set_loads_with_unique_ids() -> None:
    registry = load_registry(bundled=True)  # raises on a duplicate id
    ids = [rule.id.upper() for _pack, rule in registry.rules()]
    assert ids and len(ids) == len(set(ids))


def test_every_rule_has_evidence_and_wheel_refs_name_a_file() -> None:
    registry = load_registry(bundled=True)
    releases = {str(v) for v in known_releases()}
    for pack, rule in registry.rules():
        assert rule.evidence, f"{pack.release} {rule.id}: no evidence"
        for ev in rule.evidence:
            if isinstance(ev, WheelEvidence):
                # a file (or, for an absence, a directory) inside the wheel of a known release
                assert re.search(r"(/|\.py|METADATA|WHEEL|\.so)$", ev.path), f"{rule.id}: {ev.text!r}"
                assert ev.release in releases, f"{rule.id}: {ev.text!r} names no vLLM release"
                assert ev.line is not None or ev.finding, f"{rule.id}: {ev.text!r}"


def test_every_release_between_oldest_and_newest_pack_has_a_pack() -> None:
    packs = {Version(name.removeprefix("rules/").rsplit(".y", 1)[0]) for name, _p in bundled_pack_files()}
    oldest, newest = min(packs), max(packs)
    missing = [str(v) for v in known_releases() if oldest <= v <= newest and v not in packs]
    assert not missing, f"releases without a rules/<v>.yaml pack: {missing}"
    for v in known_releases():
        if oldest <= v <= newest:
            assert (RULES / f"{v}.yaml").is_file()


def test_coverage_table_is_current() -> None:
    """The coverage table of docs/coverage.md is what ``rules list --format markdown`` prints today."""
    from typer.testing import CliRunner

    from vllm_upgrade_check.cli import _register, app

    _register()
    table = CliRunner().invoke(app, ["rules", "list", "--format", "markdown"]).stdout.strip()
    readme = (Path(__file__).resolve().parents[1] / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert table in readme, "regenerate the table in docs/coverage.md with 'rules list --format markdown'"
