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
from test_targets import REPO_PACK as TEST_PACK
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import Registry, load_registry
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Skipped, Span, Spans
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources import cache as cache_module
from vllm_upgrade_check.sources import dispatch as filescan
from vllm_upgrade_check.sources.cache import FileResult, decode_result, encode_result
from vllm_upgrade_check.sources.scanners.base import Conditional, FileReference


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
        ScanOptions.of(paths=[root], to_version="99.0.0", from_version="0.25.0", **options),  # type: ignore[arg-type]
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
    return json.loads(header), [line.split("\t", 3) for line in lines]


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
    assert {int(fields[0].split(",")[1]) for fields in entries} == {10**18}  # stamps refreshed


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
    forged += ['{"taken": true, "lines": 5}', '{"taken": true, "facts": [[null' + ', null' * 16 + "]]}"]
    forged += ['{"taken": 1}', '{"taken": true, "hint": [1, 2]}', '{"taken": true, "skipped": [["a", "b", 1, null]]}']
    forged += ['{"taken": true, "conditionals": [["k", [["arg"]]]]}', '{"taken": true, "references": [3]}']
    rewritten = [header, "1\t2\tshort line", '1,2,3,4\t\tnot-json-name\t{"taken": true}']
    for k, line in enumerate(lines):
        fields = line.split("\t", 3)
        rewritten.append("\t".join([*fields[:3], forged[k % len(forged)]]))
    cache_file.write_text("\n".join(rewritten) + "\n")
    assert rows(scan(repo, registry, cache_dir=cache)) == expected


def test_a_file_changed_between_two_reads_is_stored_under_the_digest_of_what_was_scanned(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The parent reads a file to ask the cache by digest; a worker reads it again to scan it.
    # If it changed in between, the result must be stored under the scanned text's digest.
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    scan(repo, registry, cache_dir=cache)
    target = repo / "Makefile"
    old, new = FILES["Makefile"], FILES["Makefile"].replace("--max-model-len 4096", "--swap-space 4")
    target.write_text(new)
    real_read = filescan.read_source
    reads: list[str] = []

    def flipping(path: object, rel: str, *args: object, **kwargs: object) -> object:
        if rel == "Makefile":  # first read: the new text; second read: the old one
            reads.append(rel)
            target.write_text(old if len(reads) > 1 else new)
        return real_read(path, rel, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(filescan, "read_source", flipping)
    scan(repo, registry, cache_dir=cache)
    assert len(reads) == 2
    monkeypatch.setattr(filescan, "read_source", real_read)
    target.write_text(new)  # the new text again (new stamp): must not get the old text's facts
    assert rows(scan(repo, registry, cache_dir=cache)) == rows(scan(repo, registry))


def test_a_changed_mode_or_a_moved_file_is_read_again(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Size and mtime alone cannot see a chmod or two same-size files swapped with their
    # mtimes kept (a `git archive` extraction): the ctime and inode are in the stamp too.
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    prod = "vllm serve m --max-num-partial-prefills 4\n"
    staging = "vllm serve m --max-num-partial-prefillz 4\n"
    for name, text in (("prod/serve.sh", prod), ("staging/serve.sh", staging)):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        os.utime(repo / name, ns=(10**18, 10**18))
    scan(repo, registry, cache_dir=cache)
    os.rename(repo / "prod", repo / "tmp")
    os.rename(repo / "staging", repo / "prod")
    os.rename(repo / "tmp", repo / "staging")
    assert rows(scan(repo, registry, cache_dir=cache)) == rows(scan(repo, registry))

    from vllm_upgrade_check.sources import discovery

    real_read = discovery.read_bytes

    def denied(path: object) -> bytes:
        if str(path).endswith("prod/serve.sh"):
            raise PermissionError(13, "Permission denied")
        return real_read(path)  # type: ignore[arg-type]

    os.chmod(repo / "prod" / "serve.sh", 0o644)
    monkeypatch.setattr(discovery, "read_bytes", denied)
    cached = scan(repo, registry, cache_dir=cache)
    assert [(s.path, s.reason) for s in cached.skipped] == [("prod/serve.sh", "cannot read: Permission denied")]


def test_each_root_label_has_its_own_cache(tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    # `scan a` reports a/a/serve.sh as "a/serve.sh"; `scan a b` reports a/serve.sh so.
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    for name, flag in (("a/a/serve.sh", "--max-num-partial-prefills 4"), ("a/serve.sh", "--max-num-partial-prefillz 4")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"vllm serve m {flag}\n")
        os.utime(tmp_path / name, ns=(10**18, 10**18))
    (tmp_path / "b").mkdir()
    one = run_scan(ScanOptions.of(paths=[Path("a")], to_version="99.0.0", from_version="0.25.0", cache_dir=cache), registry)
    assert one.findings
    two = [Path("a"), Path("b")]
    cold = run_scan(ScanOptions.of(paths=two, to_version="99.0.0", from_version="0.25.0"), registry)
    warm = run_scan(ScanOptions.of(paths=two, to_version="99.0.0", from_version="0.25.0", cache_dir=cache), registry)
    assert rows(warm) == rows(cold)


def test_a_worker_that_dies_does_not_hang_the_scan(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    write_repo(repo, copies=6)
    serial = scan(repo, registry, jobs=1)
    monkeypatch.setattr(filescan, "_work", _dying_work)
    monkeypatch.setattr(filescan, "CHUNK_FILES", 8)
    assert rows(scan(repo, registry, jobs=2)) == rows(serial)


_REAL_WORK = filescan._work


def _dying_work(chunk: list[filescan.Pending]) -> object:
    """A worker that dies on the chunk holding copy3's files (module level: picklable)."""
    if any(item.rel.startswith("copy3/") for item in chunk):
        os._exit(9)  # as the out-of-memory killer would
    return _REAL_WORK(chunk)


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
    monkeypatch.setattr("vllm_upgrade_check.sources.tree.code_salt", lambda: "another build")
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
        unknown_model='"$MODEL"',
        spans=Spans(
            name=Span(3, 5, 3, 9),
            value=Span(3, 10, 3, 12),
            cut=Span(3, 4, 3, 12),
            version=Span(1, 1, 1, 2),
            syntax="shell",
            note="why not",
            sure=False,
            word=Span(3, 4, 3, 20),
            emptied=" []",
            listed=Span(2, 9, 4, 1),
            left="  # c\n",
        ),
        group="3:5",
        owner="service api",
    )
    defaults = Fact(FactKind.ARG, "x", Location(None))
    linked_only = {"entry_at"}  # set where launches are linked, after every cache: never stored
    for field in dataclasses.fields(Fact):
        if field.name not in linked_only:
            assert getattr(fact, field.name) != getattr(defaults, field.name), field.name
    result = FileResult(
        taken=True,
        facts=[fact],
        skipped=[Skipped("a/run.sh", "why", True, 2, 7)],
        conditionals=[Conditional("configmap:x", (fact,)), Conditional("kserve-isvc:x", (fact,), ("kserve-isvc:y",))],
        references=["configmap:x"],
        file_references=[FileReference("/etc/x.env", "systemd")],
        lines=["# vllm-upgrade-check: ignore[X]"],
        hint=("0.26.0", "a/Dockerfile:1"),
    )
    back = decode_result(json.loads(json.dumps(encode_result(result))))
    assert back == result
    assert hash(back.facts[0]) == hash(fact)
    stored = len(dataclasses.fields(Fact)) - len(linked_only)
    assert len(cache_module._fact_out(fact)) == stored + len(dataclasses.fields(Location)) - 1


def test_a_fact_row_with_any_one_field_of_the_wrong_type_is_refused() -> None:
    fact = Fact(FactKind.ARG, "max_num_seqs", Location("run.sh", 2, 3), raw="--max-num-seqs 4", value="4")
    good = json.loads(json.dumps(cache_module._fact_out(fact)))
    assert decode_result({"taken": True, "facts": [good]}).facts == [fact]
    wrong: list[object] = [True, 1.5, {"a": 1}, 7, "7", None, ["x"]]
    refused = 0
    for index in range(len(good)):
        for replacement in wrong:
            row = list(good)
            row[index] = replacement
            types = cache_module._ROW_TYPES[index]
            fits = type(replacement) in types  # exact types: True is not an int here
            if fits and index == 0:
                fits = replacement in {k.value for k in FactKind}
            if fits:
                continue
            with pytest.raises((ValueError, KeyError)):
                decode_result({"taken": True, "facts": [row]})
            refused += 1
    assert refused > len(good) * 4
    for index in (10, 11):  # aliases, args: lists of strings only
        row = list(good)
        row[index] = ["ok", 3]
        with pytest.raises(ValueError):
            decode_result({"taken": True, "facts": [row]})
    with pytest.raises(ValueError):
        decode_result({"taken": True, "facts": [good[:-1]]})
    with pytest.raises(ValueError):
        decode_result({"taken": True, "facts": [tuple(good)]})


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


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc to see worker processes")
def test_ctrl_c_during_a_parallel_scan_stops_it_and_its_workers(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    repo = tmp_path / "repo"
    write_repo(repo, copies=150)
    argv = [sys.executable, "-m", "vllm_upgrade_check", "scan", str(repo), "--no-cache", "-j", "2", "-f", "json"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)

    def children() -> list[str]:
        try:
            return Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        except OSError:
            return []

    deadline = time.monotonic() + 30
    while not children() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is not None or not children():
        proc.kill()
        pytest.skip("the scan ended before its workers could be interrupted")
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    for _ in range(100):  # workers are gone too
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("worker processes outlived the interrupted scan")


def test_a_root_given_twice_or_inside_another_is_scanned_once(tmp_path: Path, registry: Registry) -> None:
    write_repo(tmp_path / "repo")
    once = run_scan(ScanOptions.of(paths=[tmp_path / "repo"], to_version="99.0.0", from_version="0.25.0"), registry)
    roots = [tmp_path / "repo" / "deploy", tmp_path / "repo", tmp_path / "repo" / "." / "ops", tmp_path / "repo"]
    again = run_scan(ScanOptions.of(paths=roots, to_version="99.0.0", from_version="0.25.0"), registry)
    assert len(again.findings) == len(once.findings)
    assert [s.reason.split(" (")[0] for s in again.skipped] == [
        "inside another scanned root",
        "inside another scanned root",
        "the same as another scanned root",
    ]
    # One root is left, so paths are relative to it, as when it is given alone.
    assert [f.location.path for f in again.findings] == [f.location.path for f in once.findings]
    (tmp_path / "other").mkdir()
    two = run_scan(ScanOptions.of(paths=[*roots, tmp_path / "other"], to_version="99.0.0", from_version="0.25.0"), registry)
    paths = [f.location.path for f in two.findings if f.location.path]
    assert paths and all(p.startswith(f"{tmp_path / 'repo'}/") for p in paths)


def test_the_code_salt_follows_file_contents_not_install_times() -> None:
    # Two installs of one release (fresh CI runners) must share the cache.
    package = Path(cache_module.__file__).parents[1]
    target = package / "parsing" / "textpos.py"
    before = target.stat()
    cache_module.code_salt.cache_clear()
    salt = cache_module.code_salt()
    try:
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
        cache_module.code_salt.cache_clear()
        assert cache_module.code_salt() == salt
    finally:
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        cache_module.code_salt.cache_clear()


def test_an_empty_cache_dir_option_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = [sys.executable, "-m", "vllm_upgrade_check", "scan", str(tmp_path), "--cache-dir", ""]
    run = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 2
    assert run.stderr.strip() == "vllm-upgrade-check: error: --cache-dir is empty (give a directory, or --no-cache)"
    assert not any(tmp_path.iterdir())
    _register()
    runner = CliRunner()
    both = runner.invoke(app, ["scan", str(tmp_path), "--cache-dir", str(tmp_path / "c"), "--no-cache"])
    assert "exclude each other" in str(both.exception)  # main() turns it into exit 2
    too_many = runner.invoke(app, ["scan", str(tmp_path), "--jobs", "65"])
    assert too_many.exit_code == 2 and "--jobs" in too_many.output
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("depth", [880, 894, 896, 898, 910])
def test_how_deep_a_file_may_nest_does_not_depend_on_where_the_scan_runs(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    # A worker process, the CLI and a test call the scanners from different stack depths;
    # a file near the recursion limit must get the same answer from each (and the cache).
    repo = tmp_path / "repo"
    write_repo(repo, copies=5)
    nested = "[" * depth + "]" * depth
    (repo / "dash.json").write_text(
        '{"dashboard": {"title": "vllm", "panels": [{"targets": [{"expr": "vllm:num_requests_running"}]}]},'
        f' "x": {nested}}}'
    )

    def deeper(levels: int) -> Report:
        return scan(repo, registry, jobs=1) if levels == 0 else deeper(levels - 1)

    shallow = rows(scan(repo, registry, jobs=1))
    assert rows(deeper(150)) == shallow
    monkeypatch.setattr(filescan, "CHUNK_FILES", 8)
    assert rows(scan(repo, registry, jobs=2)) == shallow


def test_a_cache_in_use_is_never_pruned(tmp_path: Path, registry: Registry) -> None:
    # A run where every file is answered rewrites nothing, but marks the file as used; old
    # files of other roots go.
    repo, other, cache = tmp_path / "repo", tmp_path / "other", tmp_path / "cache"
    write_repo(repo)
    write_repo(other)
    scan(repo, registry, cache_dir=cache)
    (mine,) = cache.iterdir()
    stale = cache / "scan-0000.txt"
    stale.write_text("old")
    long_ago = 10**9 * 60  # 1970: far older than the pruning age
    os.utime(mine, ns=(long_ago, long_ago))
    os.utime(stale, ns=(long_ago, long_ago))
    scan(repo, registry, cache_dir=cache)  # all hits
    scan(other, registry, cache_dir=cache)  # writes, and prunes
    assert mine.exists() and not stale.exists()

