"""The whole-report warm path: a run whose inputs are unchanged answers from the last report,
with the same output in every format, and any change of a file, a pack, an option or the
configuration makes it scan again."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from test_sources_repo import FILES
from test_targets import REPO_PACK
from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine import scan as engine_scan
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.model.construct import construct, deconstruct
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.model.pack import Rule
from vllm_upgrade_check.reporters import renderer
from vllm_upgrade_check.sources import reportcache
from vllm_upgrade_check.sources.reportcache import ReportCache, decode_report, encode_report

LAUNCH = "#!/bin/sh\nexec vllm serve m --max-num-seqs 8 --calculate-kv-scales\n"
PAST = time.time() - 3600


def age(root: Path) -> None:
    """Every file under ``root`` an hour old (a freshly written file is too new for its stamp
    to tell a second change: the report is then not kept, see ``RACY_NS``)."""
    for directory, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(directory, name), (PAST, PAST))


def write_repo(root: Path) -> None:
    extra = {"run.sh": LAUNCH, "requirements.txt": "-r pins/requirements.txt\n", "pins/requirements.txt": "vllm==0.25.0\n"}
    for rel, text in {**FILES, **extra}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    age(root)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the runs that walked and scanned the tree (a warm hit does not)."""
    calls: list[int] = []
    real = engine_scan.scan_files

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine_scan, "scan_files", counting)
    return calls


def options(root: Path, cache: Path | None, **values: Any) -> ScanOptions:
    values.setdefault("to_version", "0.28.0")
    return ScanOptions.of(paths=[root], cache_dir=cache, **values)


def outputs(opts: ScanOptions) -> dict[str, str]:
    json_report = run_scan(opts)
    sarif_report = run_scan(opts, with_edits=True)
    return {"json": renderer("json")(json_report), "sarif": renderer("sarif")(sarif_report)}


def test_warm_json_and_sarif_equal_cold_and_skip_the_scan(tmp_path: Path, scans: list[int]) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    plain = outputs(options(repo, None))
    cold = outputs(options(repo, cache))
    assert len(scans) == 4
    assert sorted(p.name.split("-")[0] for p in cache.iterdir()) == ["report", "report", "scan"]
    warm = outputs(options(repo, cache))
    assert len(scans) == 4  # both formats answered from their report
    assert warm == cold == plain
    assert json.loads(warm["json"])["findings"], "the repository must give findings"
    assert any(r.get("fixes") for r in json.loads(warm["sarif"])["runs"][0]["results"])


@pytest.mark.parametrize(
    "change",
    ["edit", "same-size edit", "touch", "chmod", "add", "remove", "gitignore"],
)
def test_a_changed_file_scans_again(tmp_path: Path, scans: list[int], change: str) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    run_scan(options(repo, cache))
    run_scan(options(repo, cache))
    assert len(scans) == 1
    script = repo / "run.sh"
    if change == "edit":
        script.write_text(LAUNCH.replace("--max-num-seqs 8", "--max-num-seqs 8 --override-attention-dtype bf16"))
    elif change == "same-size edit":
        script.write_text(LAUNCH.replace("8", "9"))
        os.utime(script, (PAST, PAST))  # mtime as it was: the ctime and the digest still tell
    elif change == "touch":
        os.utime(script, None)
    elif change == "chmod":
        script.chmod(0o755)
    elif change == "add":
        (repo / "more.sh").write_text(LAUNCH)
    elif change == "remove":
        script.unlink()
    else:
        (repo / ".gitignore").write_text("run.sh\n")
    age(repo)
    warm = renderer("json")(run_scan(options(repo, cache)))
    assert len(scans) == 2
    assert warm == renderer("json")(run_scan(options(repo, None)))


@pytest.mark.parametrize(
    "values",
    [
        {"to_version": "0.27.0"},
        {"from_version": "0.26.0"},
        {"select": ["VUC02"]},
        {"ignore_rules": ["VUC"]},
        {"exclude": ["*.sh"]},
        {"max_file_bytes": 10},
        {"inline_suppressions": False},
    ],
)
def test_a_changed_option_scans_again(tmp_path: Path, scans: list[int], values: dict[str, Any]) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    run_scan(options(repo, cache))
    changed = renderer("json")(run_scan(options(repo, cache, **values)))
    assert len(scans) == 2
    assert changed == renderer("json")(run_scan(options(repo, None, **values)))
    run_scan(options(repo, cache, **values))
    assert len(scans) == 3  # the entry of a set of roots is the last run's: one at a time


ORG_PACK = """schema_version: 1
release: 99.0.0
previous: 0.28.0
rules:
  - id: ORG-001
    name: org-max-num-seqs
    severity: warning
    match: {kind: engine_arg, name: max_num_seqs}
    message: "our clusters set max_num_seqs centrally"
    fix: {summary: drop it}
    docs: {why: policy}
    evidence: [{kind: unverified, reason: an organisation's rule}]
"""


def test_a_changed_pack_scans_again(tmp_path: Path, scans: list[int]) -> None:
    repo, cache, packs = tmp_path / "repo", tmp_path / "cache", tmp_path / "packs"
    write_repo(repo)
    packs.mkdir()
    pack = packs / "99.0.0.yaml"
    pack.write_text(ORG_PACK)
    opts = options(repo, cache, rule_paths=[packs], to_version="99.0.0")
    first = renderer("json")(run_scan(opts))
    assert "ORG-001" in first
    renderer("json")(run_scan(opts))
    assert len(scans) == 1
    pack.write_text(ORG_PACK.replace("severity: warning", "severity: blocker"))
    second = renderer("json")(run_scan(opts))
    assert len(scans) == 2
    assert second == renderer("json")(run_scan(options(repo, None, rule_paths=[packs], to_version="99.0.0")))
    assert len(scans) == 3
    assert second != first
    (packs / "99.0.0.yaml").rename(packs / "99.0.0.yml")  # same content, another file
    run_scan(opts)
    assert len(scans) == 4
    run_scan(options(repo, cache))  # no --rules at all
    assert len(scans) == 5


def test_a_registry_given_or_facts_asked_never_answer_from_the_report(tmp_path: Path, scans: list[int]) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    run_scan(options(repo, cache))
    run_scan(options(repo, cache), load_registry())  # a registry given: not keyed by files
    run_scan(options(repo, cache), facts_out=[])  # fix needs the facts
    assert len(scans) == 3


def test_the_configuration_file_and_the_baseline_are_part_of_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scans: list[int]
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    config = tmp_path / "vuc.toml"
    config.write_text('to = "0.28.0"\n')
    monkeypatch.chdir(tmp_path)
    _register()
    runner = CliRunner()
    args = ["scan", str(repo), "-f", "json", "--fail-on", "never", "--cache-dir", str(cache), "--config", str(config)]

    def run() -> str:
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        return result.stdout

    first = run()
    assert run() == first and len(scans) == 1
    config.write_text('to = "0.28.0"\nexclude = ["*.sh"]\n')
    second = run()
    assert len(scans) == 2 and second != first
    assert not any(f["path"] == "run.sh" for f in json.loads(second)["findings"])
    assert any(f["path"] == "run.sh" for f in json.loads(first)["findings"])
    baseline = tmp_path / "baseline.json"
    config.write_text('to = "0.28.0"\n')
    created = runner.invoke(app, ["baseline", "create", str(repo), "-o", str(baseline), "--to", "0.28.0"])
    assert created.exit_code == 0, created.output
    args += ["--baseline", str(baseline)]
    with_baseline = run()
    count = len(scans)
    assert run() == with_baseline and len(scans) == count
    data = json.loads(baseline.read_text())
    assert data["findings"]
    data["findings"] = data["findings"][1:]  # one finding no longer baselined
    baseline.write_text(json.dumps(data))
    fewer = run()
    assert len(scans) == count + 1
    assert len(json.loads(fewer)["findings"]) == len(json.loads(with_baseline)["findings"]) + 1


def test_a_corrupt_or_foreign_report_is_ignored_and_rewritten(tmp_path: Path, scans: list[int]) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    cold = renderer("json")(run_scan(options(repo, cache)))
    (entry,) = cache.glob("report-*.json")
    header, payload = entry.read_text().split("\n", 1)
    for broken in ("{", json.dumps({"findings": [[0, [], "blocker"]]}), json.dumps([1, 2])):
        entry.write_text(header + "\n" + broken)
        assert renderer("json")(run_scan(options(repo, cache))) == cold
    data = json.loads(payload)
    data["findings"][0][1][0] = 7  # a fact's kind that is not a string
    entry.write_text(header + "\n" + json.dumps(data))
    assert renderer("json")(run_scan(options(repo, cache))) == cold
    entry.write_text(header.replace('"format": ', '"format": 1') + "\n" + payload)
    assert renderer("json")(run_scan(options(repo, cache))) == cold
    assert len(scans) == 6
    assert renderer("json")(run_scan(options(repo, cache))) == cold
    assert len(scans) == 6  # rewritten by the last miss


def test_a_tree_modified_just_now_keeps_no_report(tmp_path: Path, scans: list[int]) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    (repo / "run.sh").write_text(LAUNCH)  # modified now: a second change could keep its stamp
    run_scan(options(repo, cache))
    assert not list(cache.glob("report-*"))
    run_scan(options(repo, cache))
    assert len(scans) == 2


def test_reports_round_trip_with_their_rules(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_repo(repo)
    report = run_scan(options(repo, None), with_edits=True)
    known = [rule for _pack, rule in load_registry().rules()]
    data = json.loads(json.dumps(encode_report(report, known)))
    back = decode_report(data, known)
    assert back == report.__class__(**{**report.__dict__, "release_info": (), "gate": back.gate})
    assert any(isinstance(entry, dict) for entry in data["table"]), "a built-in check's rule is stored whole"
    assert any(f.included_by for f in back.findings) and any(f.edits for f in back.findings)


def test_every_bundled_rule_deconstructs_to_data_that_constructs_it() -> None:
    for _pack, rule in load_registry([REPO_PACK]).rules():
        assert construct(Rule, json.loads(json.dumps(deconstruct(rule)))) == rule


def test_the_tree_digest_ignores_what_the_walk_ignores(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_repo(repo)
    (repo / ".gitignore").write_text("build/\n")
    before = reportcache.tree_digest([repo])
    (repo / "build").mkdir()
    (repo / "build" / "run.sh").write_text(LAUNCH)
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / "x.sh").write_text(LAUNCH)
    assert reportcache.tree_digest([repo])[0] == before[0]
    (repo / "notes.txt").write_text("x")  # a file no scanner wants by name still counts
    assert reportcache.tree_digest([repo])[0] != before[0]


def test_the_report_file_is_named_by_roots_working_directory_and_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "a", tmp_path / "b"
    names = {
        ReportCache(tmp_path, [one], "k").path,
        ReportCache(tmp_path, [two], "k").path,
        ReportCache(tmp_path, [one, two], "k").path,
        ReportCache(tmp_path, [one], "k", "edits=True").path,
    }
    monkeypatch.chdir(one.parent.parent)
    names.add(ReportCache(tmp_path, [one], "k").path)
    assert len(names) == 5


def test_the_cli_gives_its_kept_output_again_for_the_same_gate_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scans: list[int]
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    monkeypatch.chdir(tmp_path)
    _register()
    runner = CliRunner()
    renders: list[str] = []
    real = renderer

    def counting(name: str) -> Any:
        render = real(name)

        def rendering(report: Any) -> str:
            renders.append(name)
            return render(report)

        return rendering

    monkeypatch.setattr("vllm_upgrade_check.reporters.renderer", counting)

    def run(*extra: str, cached: bool = True) -> tuple[int, str]:
        args = ["scan", str(repo), *extra, *(["--cache-dir", str(cache)] if cached else ["--no-cache"])]
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1), result.output
        return result.exit_code, result.stdout

    for fmt in ("json", "sarif", "github", "junit", "markdown"):
        cold = run("-f", fmt)
        assert cold[0] == 1, "a blocker fails the default gate"
        count = len(scans)
        assert run("-f", fmt) == cold and len(scans) == count  # neither scanned nor matched
        assert renders.count(fmt) == 1  # rendered once, for the cold run
        never = run("-f", fmt, "--fail-on", "never")
        assert never == run("-f", fmt, "--fail-on", "never", cached=False)
        assert never[0] == 0 and len(scans) == count + 1  # the report was kept: only the no-cache run scanned
    outputs = sorted(cache.glob("report-*.txt"))
    assert len(outputs) == 5
    header, code, text = outputs[0].read_text().split("\n", 2)
    outputs[0].write_text(f"{header}\n7\n{text}")  # not an exit code: ignored
    fmt = outputs[0].name.split(".")[-2]
    assert run("-f", fmt, "--fail-on", "never") == run("-f", fmt, "--fail-on", "never", cached=False)


@pytest.mark.parametrize("layout", ["two roots", "a file", "nested roots"])
def test_other_layouts_answer_the_same_and_notice_a_change(tmp_path: Path, scans: list[int], layout: str) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_repo(repo)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "serve.sh").write_text(LAUNCH)
    age(tmp_path / "other")
    roots = {
        "two roots": [repo, tmp_path / "other"],
        "a file": [repo / "run.sh"],
        "nested roots": [repo, repo / "pins"],
    }[layout]

    def opts(cache_dir: Path | None) -> ScanOptions:
        return ScanOptions.of(paths=roots, cache_dir=cache_dir, to_version="0.28.0")

    cold = renderer("sarif")(run_scan(opts(cache), with_edits=True))
    assert renderer("sarif")(run_scan(opts(cache), with_edits=True)) == cold
    assert len(scans) == 1
    changed = roots[-1] if roots[-1].is_file() else next(p for p in roots[-1].iterdir() if p.is_file())
    changed.write_text(changed.read_text() + "\n")
    age(changed.parent)
    warm = renderer("sarif")(run_scan(opts(cache), with_edits=True))
    assert len(scans) == 2
    assert warm == renderer("sarif")(run_scan(opts(None), with_edits=True))


def test_a_repository_made_above_the_roots_changes_the_kept_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scans: list[int]
) -> None:
    top = tmp_path / "top"
    repo, cache = top / "deploy", tmp_path / "cache"
    write_repo(repo)
    monkeypatch.chdir(tmp_path)
    first, code = engine_scan.scan_output(options(repo, cache), "sarif", renderer("sarif"), with_edits=True)
    assert engine_scan.scan_output(options(repo, cache), "sarif", renderer("sarif"), with_edits=True) == (first, code)
    assert len(scans) == 1
    (top / ".git").mkdir()  # the outputs' paths now start at top/: deploy/run.sh
    second, _code = engine_scan.scan_output(options(repo, cache), "sarif", renderer("sarif"), with_edits=True)
    assert len(scans) == 2 and second != first
    assert '"uri": "top/deploy/run.sh"' in first and '"uri": "deploy/run.sh"' in second
