"""A file another file names is read again, after a fix, with the readers the scan read it
with only: a ``--config`` YAML is not judged as requirements, a ``-r`` include not as dotenv."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.fixing.planned import signature
from vllm_upgrade_check.fixing.verify import CONFIG_READER, read_file, referenced_readers
from vllm_upgrade_check.model.facts import Fact
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources.scanners import default_scanners

CONFIG = '# settings for the vllm engine\nseed: 1\noverride-pooler-config: "{}"\n'


def _wanted(reading, line: int, kind: str) -> list[tuple[tuple[str, ...], int | None, int | None]]:
    """What the scan read at ``line`` (the facts of ``kind``), as the fixer names them."""
    return [
        (signature(f), f.location.line, f.location.column)
        for f in reading.facts
        if f.location.line == line and f.kind.value == kind
    ]


def test_a_config_is_read_again_as_a_config_only() -> None:
    scanners = default_scanners()
    every = read_file("ops/knobs.yml", CONFIG, scanners, True)
    assert any("not a requirement" in p for p in every.problems)  # what every reader makes of it
    readers = referenced_readers("ops/knobs.yml", CONFIG, scanners, _wanted(every, 3, "arg"))
    assert readers == (CONFIG_READER,)
    own = read_file("ops/knobs.yml", CONFIG, scanners, readers)
    assert own.problems == frozenset()
    assert sorted((f.kind.value, f.name, f.value) for f in own.facts if isinstance(f, Fact)) == [
        ("arg", "override_pooler_config", "{}"),
        ("arg", "seed", "1"),
    ]


def test_an_included_requirements_file_is_read_again_as_requirements_only() -> None:
    scanners = default_scanners()
    text = "vllm>=0.17,<0.18\n"
    every = read_file("deps/gpu.cfg", text, scanners, True)
    readers = referenced_readers("deps/gpu.cfg", text, scanners, _wanted(every, 1, "requirement"))
    assert readers == ("requirements",)


def test_rename_in_a_config_a_launch_names_is_written(tmp_path: Path) -> None:
    (tmp_path / "ops").mkdir()
    (tmp_path / "run.sh").write_text("#!/bin/sh\nvllm serve m --config ops/knobs.yml\n")
    (tmp_path / "ops" / "knobs.yml").write_text(CONFIG)
    options = ScanOptions.of(paths=[tmp_path], from_version="0.11.0", to_version="0.12.0")
    result = fix_paths(options, unsafe=True, bump=False)
    assert result.not_written == []
    assert (tmp_path / "ops" / "knobs.yml").read_text() == CONFIG.replace(
        "override-pooler-config", "pooler-config"
    )


def test_requirement_includes_are_fixed(tmp_path: Path) -> None:
    (tmp_path / "deps").mkdir()
    (tmp_path / "requirements.txt").write_text("-r deps/gpu.cfg\n-c deps/limits.conf\n")
    (tmp_path / "deps" / "gpu.cfg").write_text("vllm>=0.17,<0.18\n")
    (tmp_path / "deps" / "limits.conf").write_text("torch>=2.9,<2.10\nvllm == 0.17.0\n")
    (tmp_path / "Dockerfile").write_text('FROM python:3.12\nRUN pip install "vllm>=0.17,<0.18"\n')
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\ndependencies = ["vllm<0.18"]\n'
    )
    result = fix_paths(ScanOptions.of(paths=[tmp_path], from_version="0.17.0", to_version="0.20.0"))
    assert result.not_written == [] and result.errors == []
    assert (tmp_path / "deps" / "gpu.cfg").read_text() == "vllm>=0.20,<0.21\n"
    assert (tmp_path / "deps" / "limits.conf").read_text() == "torch==2.11.0\nvllm == 0.20.0\n"
    assert (tmp_path / "Dockerfile").read_text() == 'FROM python:3.12\nRUN pip install "vllm>=0.20,<0.21"\n'
    assert '"vllm' in (tmp_path / "pyproject.toml").read_text()
    assert "0.18" not in (tmp_path / "pyproject.toml").read_text()
