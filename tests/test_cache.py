"""The per-file result cache and the worker processes: same report as a plain scan, always.

The repository is the multi-source one of ``test_sources_repo`` (a ConfigMap and the
``envFrom`` naming it in two files, a systemd unit and its ``EnvironmentFile=``), so the
cross-file joins are exercised from cached and from forked results too.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from test_sources_repo import FILES
from test_sources_targets import TEST_PACK
from vllm_upgrade_check import cache as cache_module
from vllm_upgrade_check import filescan
from vllm_upgrade_check.cache import FileResult, decode_result, encode_result
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import ScanOptions, run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Report, Skipped
from vllm_upgrade_check.registry import Registry, load_registry
from vllm_upgrade_check.scanners.base import Conditional, FileReference


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry([TEST_PACK])


def write_repo(root: Path, copies: int = 1) -> None:
    for k in range(copies):
        for rel, text in FILES.items():
            path = root / (f"copy{k}/{rel}" if copies > 1 else rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def scan(root: Path, registry: Registry, **options: object) -> Report:
    return run_scan(
        ScanOptions(paths=[root], to_version="99.0.0", from_version="0.25.0", **options),  # type: ignore[arg-type]
        registry,
    )


def rows(report: Report) -> list[tuple[object, ...]]:
    """Everything a report says about findings and skipped files, in order."""
    found = [
        (f.location.path, f.location.line, f.location.column, f.rule.id, f.fact.value, f.fingerprint)
        for f in report.findings
    ]
    return [*found, *((s.path, s.reason, s.line) for s in report.skipped), ("scanned", report.files_scanned)]


def cache_lines(directory: Path) -> tuple[dict[str, object], list[list[str]]]:
    """The header and the per-file fields of the one cache file in ``directory``."""
    (path,) = directory.iterdir()
    header, *lines = path.read_text().rstrip("\n").split("\n")
    return json.loads(header), [line.split("\t", 4) for line in lines]


def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_args: object) -> FileResult:
        raise AssertionError("a file was parsed although the cache holds it")

    monkeypatch.setattr(filescan, "scan_source", fail)


def test_warm_scan_reports_the_same_without_parsing(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    plain = scan(repo, registry)
    cold = scan(repo, registry, cache_dir=cache)
    assert len(list(cache.iterdir())) == 1
    forbid_parsing(monkeypatch)
    warm = scan(repo, registry, cache_dir=cache)
    assert rows(plain) == rows(cold) == rows(warm)
    # The joins still happen: the ConfigMap's key and the unit's env file are reported.
    paths = {f.location.path for f in warm.findings}
    assert {"deploy/k8s/cm.yaml", "ops/etc/vllm.env"} <= paths


def test_an_edited_file_is_parsed_again_and_the_others_are_not(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    scan(repo, registry, cache_dir=cache)
    makefile = repo / "Makefile"
    makefile.write_text(FILES["Makefile"].replace("--max-model-len 4096", "--port 8000"))
    parsed: list[str] = []
    real = filescan.scan_source

    def counting(source: object, takers: object) -> FileResult:
        parsed.append(source.relpath)  # type: ignore[attr-defined]
        return real(source, takers)  # type: ignore[arg-type]

    monkeypatch.setattr(filescan, "scan_source", counting)
    warm = scan(repo, registry, cache_dir=cache)
    assert parsed == ["Makefile"]
    monkeypatch.setattr(filescan, "scan_source", real)
    assert rows(warm) == rows(scan(repo, registry))
    assert not any(f.location.path == "Makefile" and f.rule.id == "TST-007" for f in warm.findings)


def test_a_touched_file_with_the_same_content_is_not_parsed(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh clone gives every file a new mtime: the content digest still answers.
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    before = rows(scan(repo, registry, cache_dir=cache))
    for path in repo.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(10**18, 10**18))
    forbid_parsing(monkeypatch)
    assert rows(scan(repo, registry, cache_dir=cache)) == before
    _header, entries = cache_lines(cache)
    assert {int(fields[1]) for fields in entries} == {10**18}  # stamps refreshed


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"format": 2, "salt": "other"}\n', '{"salt": 1}', "[]", "\udcff", "", "x\ty\n" * 3],
)
def test_a_corrupt_or_foreign_cache_is_ignored_and_rewritten(
    tmp_path: Path, registry: Registry, content: str
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    expected = rows(scan(repo, registry))
    scan(repo, registry, cache_dir=cache)
    (cache_file,) = cache.iterdir()
    cache_file.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert rows(scan(repo, registry, cache_dir=cache)) == expected
    header, entries = cache_lines(cache)
    assert header["format"] == cache_module.FORMAT and len(entries) >= len(FILES) - 1


def test_a_forged_entry_shape_is_ignored(tmp_path: Path, registry: Registry) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    expected = rows(scan(repo, registry))
    scan(repo, registry, cache_dir=cache)
    (cache_file,) = cache.iterdir()
    header, *lines = cache_file.read_text().rstrip("\n").split("\n")
    forged = ['{"taken": true, "facts": [["no-such-kind"]]}', '{"taken": true, "facts": [[1, 2]]}', "[]", "{"]
    rewritten = [header, "1\t2\tshort line"]
    for k, line in enumerate(lines):
        fields = line.split("\t", 4)
        rewritten.append("\t".join([*fields[:4], forged[k % len(forged)]]))
    cache_file.write_text("\n".join(rewritten) + "\n")
    assert rows(scan(repo, registry, cache_dir=cache)) == expected


def test_new_tool_code_does_not_reuse_results(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    parsed: list[str] = []
    real = filescan.scan_source
    monkeypatch.setattr(filescan, "scan_source", lambda s, t: parsed.append(s.relpath) or real(s, t))
    scan(repo, registry, cache_dir=cache)
    cold = sorted(parsed)
    assert len(cold) > 10
    parsed.clear()
    monkeypatch.setattr("vllm_upgrade_check.engine.code_salt", lambda: "another build")
    scan(repo, registry, cache_dir=cache)
    assert sorted(parsed) == cold


def test_an_unwritable_cache_directory_does_not_stop_the_scan(tmp_path: Path, registry: Registry) -> None:
    repo = tmp_path / "repo"
    write_repo(repo)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    assert rows(scan(repo, registry, cache_dir=blocker / "cache")) == rows(scan(repo, registry))


def test_worker_processes_report_exactly_what_one_process_does(tmp_path: Path, registry: Registry) -> None:
    repo = tmp_path / "repo"
    write_repo(repo, copies=6)
    (repo / "copy2" / "broken.yaml").write_text("vllm: [unclosed\n")
    serial = scan(repo, registry, jobs=1)
    parallel = scan(repo, registry, jobs=2)
    assert rows(serial) == rows(parallel)
    assert any(s.path == "copy2/broken.yaml" for s in parallel.skipped)
    # Workers and the cache together: a cold parallel run fills it, a warm one reuses it.
    cache = tmp_path / "cache"
    assert rows(scan(repo, registry, jobs=2, cache_dir=cache)) == rows(serial)
    assert rows(scan(repo, registry, jobs=2, cache_dir=cache)) == rows(serial)


def test_workers_start_mid_walk_once_enough_files_wait(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The automatic mode: files are buffered until PARALLEL_MIN_FILES wait, then sent in
    # chunks while the walk goes on; every file is reported once to the progress callback.
    repo = tmp_path / "repo"
    write_repo(repo, copies=4)
    serial = scan(repo, registry, jobs=1)
    monkeypatch.setattr(filescan, "PARALLEL_MIN_FILES", 5)
    monkeypatch.setattr(filescan, "CHUNK_FILES", 3)
    monkeypatch.setattr(filescan, "worker_count", lambda requested, files: 1 if requested == 1 else 2)
    seen: list[str] = []
    auto = scan(repo, registry, progress=seen.append)
    assert rows(auto) == rows(serial)
    assert len(seen) == len(set(seen)) and {f.location.path for f in auto.findings} <= set(seen)
    cache = tmp_path / "cache"
    assert rows(scan(repo, registry, cache_dir=cache)) == rows(serial)
    for path in repo.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(10**18, 10**18))
    assert rows(scan(repo, registry, cache_dir=cache)) == rows(serial)


def test_worker_count_is_one_for_small_trees_and_honours_a_request() -> None:
    assert filescan.worker_count(None, filescan.PARALLEL_MIN_FILES - 1) == 1
    assert filescan.worker_count(0, 10) == 1
    assert filescan.worker_count(3, 10) == 3
    assert 1 <= filescan.worker_count(None, 10**6) <= filescan.MAX_JOBS


def test_a_file_result_survives_the_cache_format_field_for_field() -> None:
    # Every field of Fact and Location is written: a field added later without a cache
    # format change would fail here.
    fact = Fact(
        kind=FactKind.LAUNCH,
        name="vllm serve",
        location=Location("a/run.sh", 3, 5, 4, 9),
        raw="vllm serve m",
        value="$ARGS",
        origin="cli",
        aliases=("a", "b"),
        args=frozenset({"port", "model"}),
        scanner="shell",
        version_hint="0.26.0",
        hint_source="a/Dockerfile:1 vllm/vllm-openai:v0.26.0",
        resolved=False,
        model="Qwen/Qwen3-8B",
    )
    defaults = Fact(FactKind.ARG, "x", Location(None))
    for field in dataclasses.fields(Fact):
        assert getattr(fact, field.name) != getattr(defaults, field.name), field.name
    result = FileResult(
        taken=True,
        facts=[fact],
        skipped=[Skipped("a/run.sh", "why", True, 2)],
        conditionals=[Conditional("configmap:x", (fact,))],
        references=["configmap:x"],
        file_references=[FileReference("/etc/x.env", "systemd")],
        lines=["# vllm-upgrade-check: ignore[X]"],
        hint=("0.26.0", "a/Dockerfile:1"),
    )
    back = decode_result(json.loads(json.dumps(encode_result(result))))
    assert back == result
    assert hash(back.facts[0]) == hash(fact)
    assert len(cache_module._fact_out(fact)) == len(dataclasses.fields(Fact)) + len(dataclasses.fields(Location)) - 1


def test_cli_caches_in_the_configured_directory_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "env-cache"
    write_repo(repo)
    monkeypatch.setenv("VLLM_UPGRADE_CHECK_CACHE_DIR", str(cache))
    _register()
    runner = CliRunner()
    args = ["scan", str(repo), "--format", "json", "--fail-on", "never"]
    first = runner.invoke(app, [*args, "--no-cache"])
    assert first.exit_code == 0, first.output
    assert not cache.exists()
    second = runner.invoke(app, args)
    assert second.exit_code == 0 and len(list(cache.iterdir())) == 1
    explicit = tmp_path / "explicit"
    third = runner.invoke(app, [*args, "--cache-dir", str(explicit), "--jobs", "2"])
    assert third.exit_code == 0 and len(list(explicit.iterdir())) == 1
    assert json.loads(first.stdout)["findings"] == json.loads(second.stdout)["findings"]
    assert json.loads(third.stdout)["findings"] == json.loads(second.stdout)["findings"]
    bad = runner.invoke(app, [*args, "--jobs", "-1"])
    assert bad.exit_code == 2
