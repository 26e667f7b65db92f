"""A flag written as an abbreviation of a flag the target removed: argparse expands the
prefix in the release in use (vLLM's FlexibleArgumentParser leaves ``allow_abbrev`` on), so
the removal is reported on the written flag and fixed on its words; a prefix whose meaning
differs by release (the from-version unknown) or that is ambiguous gets a note, not a guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.knowledge.known_args import known_args
from vllm_upgrade_check.model.options import ScanOptions


def _scan(tmp_path: Path, text: str, to: str = "0.27.0", start: str | None = "0.26.0", name: str = "serve.sh"):
    (tmp_path / name).write_text(text)
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version=to, from_version=start))


@pytest.mark.parametrize(
    ("launch", "rule_id"),
    [
        ("vllm serve acme/m --max-num-partial 4 --port 8000\n", "VUC0270-001"),
        ("vllm serve acme/m --max-num-partial=4\n", "VUC0270-001"),
        ("vllm serve acme/m '--max-num-partial' 4\n", "VUC0270-001"),
        ("vllm serve acme/m --max_num_partial 4\n", "VUC0270-001"),
        ("vllm serve acme/m --max-long-partial 2\n", "VUC0270-002"),
    ],
)
def test_prefix_of_a_removed_flag_is_reported_as_that_flag(tmp_path: Path, launch: str, rule_id: str) -> None:
    report = _scan(tmp_path, launch)
    assert [(f.rule.id, f.location.path, f.location.line) for f in report.findings] == [(rule_id, "serve.sh", 1)]


def test_unknown_from_version_still_expands_a_prefix_every_release_agrees_on(tmp_path: Path) -> None:
    report = _scan(tmp_path, "vllm serve acme/m --max-num-partial 4\n", start=None)
    assert [f.rule.id for f in report.findings] == ["VUC0270-001"]


def test_config_key_prefix_of_a_removed_flag(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text("vllm serve acme/m --config engine.yaml\n")
    report = _scan(tmp_path, "max_num_partial: 4\n", name="engine.yaml")
    assert [(f.rule.id, f.location.path, f.location.line) for f in report.findings] == [
        ("VUC0270-001", "engine.yaml", 1)
    ]


@pytest.mark.parametrize("form", ["--max-num-partial 4", "--max-num-partial=4"])
def test_fix_removes_the_abbreviation_and_its_value(tmp_path: Path, form: str) -> None:
    path = tmp_path / "serve.sh"
    path.write_text(f"vllm serve acme/m {form} --port 8000\n")
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.27.0", from_version="0.26.0"), bump=False)
    assert path.read_text() == "vllm serve acme/m --port 8000\n"


def test_prefix_meaning_different_flags_by_release_is_a_note(tmp_path: Path) -> None:
    # --swa is --swap-space up to 0.17.1 and --swa-bounded-replay from 0.31.0
    known = known_args()
    assert known.expansion("--swa") is None
    report = _scan(tmp_path, "vllm serve acme/m --swa 4\n", to="0.33.0", start=None)
    notes = [n for n in report.notes if n.startswith("--swa at serve.sh:1:19")]
    assert len(notes) == 1 and "--swap-space" in notes[0] and "--swa-bounded-replay" in notes[0]
    assert "VUC0180-001" not in {f.rule.id for f in report.findings}  # not guessed to be --swap-space


def test_known_from_version_settles_the_prefix(tmp_path: Path) -> None:
    report = _scan(tmp_path, "vllm serve acme/m --swa 4\n", to="0.33.0", start="0.16.0")
    ids = {f.rule.id for f in report.findings}
    assert "VUC0180-001" in ids  # --swap-space, removed in 0.18.0
    assert "VUC000-016" in ids  # and 0.33.0 reads it as --swa-bounded-replay
    (warning,) = [f for f in report.findings if f.rule.id == "VUC000-016"]
    assert "expands it to --swa-bounded-replay in 0.33.0 (the release in use expands it to --swap-space" in warning.rule.message
    assert not [n for n in report.notes if n.startswith("--swa at")]


def test_ambiguous_prefix_in_the_running_release_is_a_note(tmp_path: Path) -> None:
    report = _scan(tmp_path, "vllm serve acme/m --max-num 4\n")
    assert any(n.startswith("--max-num at serve.sh:1:19 is ambiguous in vLLM 0.26.0") for n in report.notes)
    assert {f.rule.id for f in report.findings} == {"VUC000-001"}
