"""Compose interpolation from the project's ``.env`` (issue 16): a launch's ``${EXTRA_FLAGS}``
and an image's ``${TAG:-default}`` read as ``.env`` sets them, placed at their ``.env`` line;
``fix`` edits ``.env``. ``environment:``/``env_file:`` are no part of the interpolation."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions

REMOVED = "VUC0270-001"  # --max-num-partial-prefills, removed in 0.27.0


def scan(tmp_path: Path, files: dict[str, str], frm: str | None = "0.25.0") -> tuple[Report, list[Fact]]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version=frm), facts_out=facts)
    return report, facts


def compose(command: str, image: str = "vllm/vllm-openai:v0.25.0", more: str = "") -> str:
    return f"services:\n  api:\n    image: {image}\n    command: {command}\n{more}"


def at(report: Report, rule: str) -> list[tuple[str | None, int | None, int | None]]:
    return sorted((f.location.path, f.location.line, f.location.column) for f in report.findings if f.rule.id == rule)


def test_a_command_string_reference_reads_as_the_words_of_its_env_value(tmp_path: Path) -> None:
    files = {
        "deploy/compose.yaml": compose("--model acme/m ${EXTRA_FLAGS}"),
        "deploy/.env": "# flags\nEXTRA_FLAGS='--seed 3 --max-num-partial-prefills 2'\n",
    }
    report, facts = scan(tmp_path, files)
    assert at(report, REMOVED) == [("deploy/.env", 2, 23)]
    assert not [n for n in report.notes if n.startswith("unresolved")], report.notes
    launch = next(f for f in facts if f.kind == FactKind.LAUNCH)
    assert launch.resolved and {"seed", "max_num_partial_prefills", "model"} <= launch.args


def test_a_variable_the_env_file_does_not_set_keeps_its_note(tmp_path: Path) -> None:
    files = {
        "compose.yaml": compose('"--model acme/m ${EXTRA_FLAGS} ${MORE}"'),
        ".env": "EXTRA_FLAGS=--max-num-partial-prefills 2\n",
    }
    report, _facts = scan(tmp_path, files)
    assert at(report, REMOVED) == [(".env", 1, 13)]
    assert any("${MORE}" in n and "compose.yaml:4" in n for n in report.notes), report.notes


def test_container_environment_and_env_files_do_not_interpolate_the_compose_file(tmp_path: Path) -> None:
    # compose interpolates from the shell and the project .env only; environment: and env_file:
    # set the container's environment (and a .env of another folder is another project's)
    more = "    environment:\n      EXTRA_FLAGS: --max-num-partial-prefills 2\n    env_file: [engine.env]\n"
    files = {
        "app/compose.yaml": compose("--model acme/m ${EXTRA_FLAGS}", more=more),
        "app/engine.env": "EXTRA_FLAGS=--max-num-partial-prefills 2\n",
        ".env": "EXTRA_FLAGS=--max-num-partial-prefills 2\n",
    }
    report, facts = scan(tmp_path, files)
    launch = next(f for f in facts if f.kind == FactKind.LAUNCH)
    assert not launch.resolved
    assert any("${EXTRA_FLAGS}" in n and "app/compose.yaml:4" in n for n in report.notes), report.notes


def test_a_list_item_reference_stays_one_word_and_escapes_stay_literal(tmp_path: Path) -> None:
    files = {
        "compose.yaml": compose('["--model", "acme/m", "${ONE}", "--served-model-name", "$$NAME"]'),
        ".env": "ONE=--max-num-partial-prefills=2\nNAME=x\n",
    }
    report, facts = scan(tmp_path, files)
    assert at(report, REMOVED) == [(".env", 1, 5)]
    served = next(f for f in facts if f.kind == FactKind.ARG and f.name == "served_model_name")
    assert served.value == "$NAME"  # $$ is compose's escape of a literal $


def test_the_image_tag_env_sets_is_the_version_in_use_at_its_env_line(tmp_path: Path) -> None:
    files = {
        "compose.yaml": compose("--model acme/m --max-num-partial-prefills 2", image="vllm/vllm-openai:${TAG:-v0.16.0}"),
        ".env": "TAG=v0.26.0\n",
    }
    report, facts = scan(tmp_path, files, frm=None)
    image = next(f for f in facts if f.kind == FactKind.IMAGE)
    assert (image.location.path, image.location.line, image.value) == (".env", 1, "v0.26.0")
    assert report.from_version == "0.26.0"
    assert {f.from_version for f in report.findings if f.rule.id == REMOVED} == {"0.26.0"}
    # an empty value reads as unset for ':-': the default stands
    report, facts = scan(tmp_path / "empty", {**files, ".env": "TAG=\n"}, frm=None)
    image = next(f for f in facts if f.kind == FactKind.IMAGE)
    assert (image.location.path, image.value) == ("compose.yaml", "v0.16.0")


def test_fix_bumps_the_env_value_and_removes_flags_written_there(tmp_path: Path) -> None:
    from vllm_upgrade_check.engine.fix import fix_paths

    files = {
        "compose.yaml": compose("--model acme/m ${EXTRA_FLAGS}", image="vllm/vllm-openai:${TAG:-v0.16.0}"),
        ".env": "TAG=v0.25.0\nEXTRA_FLAGS=--max-num-partial-prefills 2 --seed 1\n",
    }
    scan(tmp_path, files)
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.28.0"), bump=True)
    assert (tmp_path / ".env").read_text() == "TAG=v0.28.0\nEXTRA_FLAGS=--seed 1\n"
    assert (tmp_path / "compose.yaml").read_text() == files["compose.yaml"]  # the default is compose's, untouched
    report, _facts = scan(tmp_path, {}, frm=None)
    assert not at(report, REMOVED)
