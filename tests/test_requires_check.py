"""The target's own Requires-Dist judges the requirements in the user's files, whatever the
from-version (the data is the wheels' METADATA, bundled in data/surface/requires.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions

_register()
runner = CliRunner()


def _blockers(tmp_path: Path, *args: str) -> list[tuple[str, str]]:
    result = runner.invoke(app, ["scan", str(tmp_path), "--to", "0.28.0", "-f", "json", *args])
    doc = json.loads(result.stdout)
    return [(f["rule_id"], f["subject"]) for f in doc["findings"] if f["severity"] == "blocker"]


@pytest.mark.parametrize("start", [[], ["--from", "0.27.0"], ["--from", "0.28.0"]])
def test_a_pin_outside_the_targets_requires_dist_is_a_blocker(start: list[str], tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.28.0\ntokenizers==0.20.3\nflask==1.0\n")
    found = _blockers(tmp_path, *start)
    assert ("VUC000-002", "tokenizers==0.20.3") in found, found
    assert not any(subject.startswith("flask") for _id, subject in found)  # vLLM does not require it


def test_a_pin_inside_it_and_a_rule_the_packs_author_are_not_doubled(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.26.0\ntokenizers==0.22.0\ntorch==2.11.0\n")
    found = _blockers(tmp_path)
    assert found == [("VUC0270-003", "torch==2.11.0")], found


def test_fix_re_pins_it_with_the_bump(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.26.0\ntokenizers==0.20.3\n")
    result = runner.invoke(app, ["fix", str(tmp_path), "--to", "0.28.0"])
    assert (tmp_path / "requirements.txt").read_text() == "vllm==0.28.0\ntokenizers>=0.21.1\n", result.output
    assert result.exit_code == 0


def test_explain_knows_the_built_in_rule() -> None:
    result = runner.invoke(app, ["explain", "VUC000-002"])
    assert result.exit_code == 0 and "Requires-Dist" in result.output


def test_a_range_that_overlaps_the_requirement_past_an_exclusion_is_not_a_conflict() -> None:
    from vllm_upgrade_check.matching.matcher import specifiers_conflict

    required = "!=5.0.*,!=5.1.*,!=5.2.*,!=5.3.*,!=5.4.*,!=5.5.0,>=4.56.0"  # transformers, vLLM 0.20.0
    assert not specifiers_conflict("~=5.5.0", required)  # 5.5.1 satisfies both
    assert specifiers_conflict("==5.2.0", required)


def test_a_platform_marked_requirement_is_read_for_linux_x86_64(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm==0.28.0\nllguidance==1.0.0\n")
    assert ("VUC000-002", "llguidance==1.0.0") in _blockers(tmp_path)


def test_a_named_requirements_file_of_any_name_is_read_by_its_content(tmp_path: Path) -> None:
    (tmp_path / "pins.txt").write_text("vllm==0.26.0\ntorch==2.11.0\n")
    result = runner.invoke(app, ["scan", str(tmp_path / "pins.txt"), "--to", "0.28.0", "-f", "json"])
    report = json.loads(result.stdout)
    assert report["skipped"] == [] and report["summary"]["files_scanned"] == 1
    assert report["from_source"].startswith("pins.txt:1")


def test_an_extra_the_files_vllm_asks_for_counts(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm[zen]==0.28.0\nzentorch==1.0.0\n")
    assert ("VUC000-002", "zentorch==1.0.0") in _blockers(tmp_path)
    (tmp_path / "requirements.txt").write_text("vllm==0.28.0\nzentorch==1.0.0\n")
    assert not _blockers(tmp_path)


def test_a_line_for_some_pythons_is_a_warning_naming_them_when_the_python_is_unknown(tmp_path: Path) -> None:
    # 0.28.0: `six>=1.16.0; python_version > "3.11"` (Requires-Python >=3.10,<3.15)
    (tmp_path / "requirements.txt").write_text("vllm==0.28.0\nsix==1.15.0\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"))
    (finding,) = [f for f in report.findings if f.rule.id == "VUC000-002"]
    assert finding.severity.value == "warning"
    assert "on Python 3.12, 3.13, 3.14" in finding.rule.message


def test_a_python_dependent_line_is_read_for_the_python_in_use() -> None:
    from vllm_upgrade_check.matching.requires_check import _holds

    marker = 'python_version > "3.11"'
    assert _holds(marker, "", "3.12") and not _holds(marker, "", "3.11") and not _holds(marker, "", None)


def test_an_older_release_pin_rule_gives_way_to_the_target_own_requires_dist(tmp_path: Path) -> None:
    # 0.32.0's rule asks transformers<5.20.0; 0.33.0's wheel asks <5.21.0,>=5.16.1: 5.20.0 is fine
    # at 0.33.0, and 5.21.0 is judged by 0.33.0's own line.
    (tmp_path / "requirements.txt").write_text("vllm==0.31.0\ntransformers==5.20.0\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0"))
    assert not [f for f in report.findings if f.fact.name == "transformers"], report.findings
    (tmp_path / "requirements.txt").write_text("vllm==0.31.0\ntransformers==5.21.0\n")
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.33.0"))
    (finding,) = [f for f in report.findings if f.fact.name == "transformers"]
    assert finding.rule.id == "VUC000-002" and "<5.21.0,>=5.16.1" in finding.rule.message


def test_every_authored_dependency_rule_says_what_its_release_requires_dist_says() -> None:
    """Dependency rules are derived from the wheels' Requires-Dist (VUC000-002); a pack's own
    dependency rule only overrides the words (message, fix, evidence) for one line of it, so
    its specifier must be that line's: it can never drift from the wheel."""
    import yaml
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name

    from vllm_upgrade_check.knowledge.requires import release_requirements

    rules_dir = Path(__file__).resolve().parent.parent / "rules"
    checked = 0
    for path in sorted(rules_dir.glob("*.yaml")):
        pack = yaml.safe_load(path.read_text(encoding="utf-8"))
        for rule in pack.get("rules", []):
            match = rule["match"]
            if match["kind"] != "dependency":
                continue
            lines = release_requirements(pack["release"])
            assert lines is not None, f"{rule['id']}: no Requires-Dist data for {pack['release']}"
            base = [r for r in lines if r.name == canonicalize_name(match["name"]) and not r.extra]
            wanted = SpecifierSet(match.get("specifier") or "")
            assert any(SpecifierSet(r.specifier or "") == wanted for r in base), (
                f"{rule['id']} says {match['name']}{wanted} but vllm {pack['release']} requires "
                f"{[r.name + (r.specifier or '') for r in base]}"
            )
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    ("to", "start"), [("0.16", None), ("0.16", "0.16"), ("0.18", "0.18.0"), ("0.18.0", "0.18")]
)
def test_a_short_version_is_the_release_it_equals(to: str, start: str | None, tmp_path: Path) -> None:
    """``--to 0.16`` is 0.16.0: the same findings (the data is keyed by the packs' spelling)."""
    release = to if to.count(".") == 2 else to + ".0"
    (tmp_path / "requirements.txt").write_text(f"vllm=={release}\ntorch==2.9.0\n")

    def ids(t: str, f: str | None) -> list[str]:
        report = run_scan(ScanOptions.of(paths=[tmp_path], to_version=t, from_version=f))
        return sorted(x.rule.id for x in report.findings)

    full = ids(release, start and (start if start.count(".") == 2 else start + ".0"))
    assert "VUC000-002" in full
    assert ids(to, start) == full
