"""The CI gate: --fail-on, inline suppressions, baselines, configuration, organisation packs."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge.registry import ENTRY_POINT_GROUP, load_registry

_register()
runner = CliRunner()
RULES = Path(__file__).parent / "fixtures" / "fix" / "rules"
ORG = ["--to", "0.28.0", "--from", "0.27.1", "--rules", str(RULES), "--select", "ORG"]
LINES = {
    "blocker": "vllm serve m --old-test-flag 1\n",
    "warning": "export VLLM_OLD_TEST_VAR=1\nvllm serve m\n",
    "info": "vllm serve m --test-mode legacy\n",
}
EXPECTED = {
    ("blocker", "blocker"): 1, ("blocker", "warning"): 1, ("blocker", "info"): 1, ("blocker", "never"): 0,
    ("warning", "blocker"): 0, ("warning", "warning"): 1, ("warning", "info"): 1, ("warning", "never"): 0,
    ("info", "blocker"): 0, ("info", "warning"): 0, ("info", "info"): 1, ("info", "never"): 0,
}  # fmt: skip


def scan(*args: str):
    return runner.invoke(app, ["scan", *args])


@pytest.mark.parametrize(("severity", "fail_on"), sorted(EXPECTED))
def test_fail_on_every_level(severity: str, fail_on: str, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(LINES[severity])
    result = scan(str(tmp_path), *ORG, "--fail-on", fail_on, "-f", "json")
    assert [f["severity"] for f in json.loads(result.stdout)["findings"]] == [severity]
    assert result.exit_code == EXPECTED[(severity, fail_on)]


def test_unreadable_vllm_file_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n   bad: [\n"
    )
    assert scan(str(tmp_path), "--to", "0.28.0").exit_code == 2
    assert scan(str(tmp_path), "--to", "0.28.0", "--skip-unreadable").exit_code == 0


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.sh", "vllm serve m --max-num-partial-prefills 2  # vllm-upgrade-check: ignore[VUC0270-001]\n"),
        (
            "run.sh",
            "# vllm-upgrade-check: ignore[VUC0280-001, VUC0270-001]\nvllm serve m --max-num-partial-prefills 2\n",
        ),
        ("run.sh", "vllm serve m --max-num-partial-prefills 2 # vllm-upgrade-check: ignore\n"),
        (
            "Dockerfile",
            'FROM vllm/vllm-openai:v0.26.0\n# vllm-upgrade-check: ignore[VUC0270-001]\nCMD ["--max-num-partial-prefills", "2"]\n',
        ),
        ("requirements.txt", "torch==2.11.0  # vllm-upgrade-check: ignore[VUC0270-003]\n"),
        (
            "pyproject.toml",
            '[project]\nname = "x"\nversion = "1"\ndependencies = [\n  # vllm-upgrade-check: ignore[VUC0270-003]\n  "torch==2.11.0",\n]\n',
        ),
        (
            "compose.yaml",
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n    # vllm-upgrade-check: ignore[VUC0270-001]\n    command: --model m --max-num-partial-prefills 2\n",
        ),
    ],
)
def test_inline_suppression(name: str, text: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text(text)
    result = scan(str(tmp_path), "--to", "0.27.0", "-f", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0, doc["findings"]
    # What is left is the advisory on the image tag to move (not on a suppressed line).
    left = [f for f in doc["findings"] if f["rule_id"] != "VUC000-010"]
    assert left == [] and any("suppressed by inline comments" in n for n in doc["notes"])


def test_inline_suppression_of_another_id_does_not_apply(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "vllm serve m --max-num-partial-prefills 2  # vllm-upgrade-check: ignore[VUC0270-002]\n"
    )
    assert scan(str(tmp_path), "--to", "0.27.0").exit_code == 1


def test_trailing_suppression_covers_its_own_line_only(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "vllm serve m --max-model-len 10  # vllm-upgrade-check: ignore\n"
        "vllm serve m --max-num-partial-prefills 2\n"
    )
    result = scan(str(tmp_path), "--to", "0.27.0", "-f", "json")
    assert [
        (f["line"], f["rule_id"]) for f in json.loads(result.stdout)["findings"] if f["severity"] == "blocker"
    ] == [(2, "VUC0270-001")]


def test_comment_only_suppression_covers_the_next_line(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "  # vllm-upgrade-check: ignore[VUC0270-001]\nvllm serve m --max-num-partial-prefills 2\n"
    )
    assert scan(str(tmp_path), "--to", "0.27.0").exit_code == 0


IGNORE_1 = "# vllm-upgrade-check: ignore[VUC0270-001]\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("run.sh", IGNORE_1 + "vllm serve m \\\n  --port 1 \\\n  --max-num-partial-prefills 4\n"),
        ("run.sh", IGNORE_1 + "exec \\\n  vllm serve m \\\n  --max-num-partial-prefills 4\n"),
        ("run.sh", IGNORE_1 + "VLLM_LOGGING_LEVEL=INFO python -m vllm.entrypoints.openai.api_server \\\n  --model m \\\n  --max-num-partial-prefills=4\n"),
        ("Dockerfile", "FROM vllm/vllm-openai:v0.26.0\n" + IGNORE_1 + 'CMD [ \\\n  "--port", "1", \\\n  "--max-num-partial-prefills", "3"]\n'),
        ("Dockerfile", "FROM vllm/vllm-openai:v0.26.0\n" + IGNORE_1 + "ENTRYPOINT vllm serve m \\\n    --max-num-partial-prefills 3\n"),
        ("serve.py", "import vllm\n" + IGNORE_1 + "llm = vllm.LLM(\n    model='m',\n    max_num_partial_prefills=4,\n)\n"),
    ],
)
def test_comment_above_a_multi_line_command_covers_all_of_it(name: str, text: str, tmp_path: Path) -> None:
    (tmp_path / name).write_text(text)
    result = scan(str(tmp_path), "--to", "0.27.0", "--from", "0.26.0", "-f", "json")
    doc = json.loads(result.stdout)
    assert [f["rule_id"] for f in doc["findings"] if f["rule_id"] == "VUC0270-001"] == [], text
    assert any("suppressed by inline comments" in n for n in doc["notes"])


@pytest.mark.parametrize(
    "text",
    [
        # the comment is above the first command; the flag is in the second
        IGNORE_1 + "vllm serve a --port 1\nvllm serve b \\\n  --max-num-partial-prefills 4\n",
        # a blank line between the comment and the command
        IGNORE_1 + "\nvllm serve m \\\n  --max-num-partial-prefills 4\n",
        # another rule's id
        "# vllm-upgrade-check: ignore[VUC0270-002]\nvllm serve m \\\n  --max-num-partial-prefills 4\n",
    ],
)
def test_comment_above_a_command_covers_only_that_command(text: str, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(text)
    result = scan(str(tmp_path), "--to", "0.27.0", "--from", "0.26.0", "-f", "json")
    assert "VUC0270-001" in {f["rule_id"] for f in json.loads(result.stdout)["findings"]}


def test_unknown_inline_id_gives_a_note(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "vllm serve m\n# vllm-upgrade-check: ignore[VUC9999-001, VUC0270-001]\nvllm serve m --max-num-partial-prefills 2\n"
    )
    result = scan(str(tmp_path), "--to", "0.27.0", "-f", "json")
    assert result.exit_code == 0
    notes = json.loads(result.stdout)["notes"]
    assert [n for n in notes if "unknown rule id" in n] == [
        "run.sh:2: inline ignore of unknown rule id VUC9999-001 (no loaded rule has it)"
    ]


@pytest.mark.parametrize("option", [["--select", "ZZZ"], ["--select", "VUC27"], ["--ignore", "VUC9999"]])
def test_select_or_ignore_matching_no_rule_is_a_usage_error(option: list[str], tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    code, err = _main("scan", "run.sh", "--to", "0.27.0", *option, cwd=tmp_path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"vllm-upgrade-check: error: {option[0]} {option[1]} matches no rule id (see 'vllm-upgrade-check rules list')"
    ], err


@pytest.mark.parametrize(("option", "value"), [("--select", ""), ("--ignore", ""), ("--ignore", "  ")])
def test_an_empty_select_or_ignore_is_a_usage_error(option: str, value: str, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    code, err = _main("scan", "run.sh", "--to", "0.27.0", option, value, cwd=tmp_path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"vllm-upgrade-check: error: {option} is empty (give a rule id or an id prefix such as VUC027)"
    ], err


def test_select_of_builtin_and_real_prefix_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    assert (
        scan(str(tmp_path), "--to", "0.27.0", "--select", "vuc027", "--select", "VUC000-001").exit_code == 1
    )


def test_baseline_reports_only_new_findings(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    base = tmp_path / "baseline.json"
    created = runner.invoke(app, ["baseline", "create", str(repo), "--to", "0.28.0", "-o", str(base)])
    assert created.exit_code == 0, created.output
    data = json.loads(base.read_text())
    baselined = [f for f in data["findings"] if f["rule_id"] == "VUC0270-001"]
    assert [f["path"] for f in baselined] == ["run.sh"]
    # Unrelated edits move the line: still baselined.
    (repo / "run.sh").write_text("# serve\n\nvllm serve m --max-num-partial-prefills 2\n")
    result = scan(str(repo), "--to", "0.28.0", "--baseline", str(base), "-f", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and doc["findings"] == []
    assert any(f"{len(data['findings'])} finding(s) in baseline" in n for n in doc["notes"])
    (repo / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2 --override-attention-dtype x\n")
    result = scan(str(repo), "--to", "0.28.0", "--baseline", str(base), "-f", "json")
    assert result.exit_code == 1
    # Changed-default rules (info, absent_arg) see a new launch too; the new blocker is the point.
    new = json.loads(result.stdout)["findings"]
    assert [f["rule_id"] for f in new if f["severity"] != "info"] == ["VUC0280-002"]


def test_baseline_counts_identical_findings(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    launch = "vllm serve m --max-num-partial-prefills 2\n"
    (repo / "run.sh").write_text(launch * 2)
    base = tmp_path / "baseline.json"
    assert (
        runner.invoke(app, ["baseline", "create", str(repo), "--to", "0.28.0", "-o", str(base)]).exit_code
        == 0
    )
    entries = [f for f in json.loads(base.read_text())["findings"] if f["rule_id"] == "VUC0270-001"]
    assert [e["count"] for e in entries] == [2]
    assert scan(str(repo), "--to", "0.28.0", "--baseline", str(base)).exit_code == 0
    # A third identical launch has the same fingerprint: it is new, reported at its own line.
    (repo / "run.sh").write_text(launch * 3)
    result = scan(str(repo), "--to", "0.28.0", "--baseline", str(base), "-f", "json")
    assert result.exit_code == 1
    new = [f for f in json.loads(result.stdout)["findings"] if f["rule_id"] == "VUC0270-001"]
    assert [f["line"] for f in new] == [3]


def test_baseline_without_counts_still_loads(tmp_path: Path) -> None:
    from vllm_upgrade_check.matching.baseline import load_baseline

    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "findings": [{"fingerprint": "a"}, {"fingerprint": "a"}, {"fingerprint": "b", "count": 3}],
            }
        )
    )
    assert load_baseline(old) == {"a": 2, "b": 3}


def test_bad_baseline_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    (tmp_path / "run.sh").write_text("vllm serve m\n")
    code, err = _main("scan", "run.sh", "--baseline", str(bad), cwd=tmp_path)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "b.json:1: baseline is not valid JSON" in err, err


def _main(*args: str, cwd: Path) -> tuple[int, str]:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", *args], cwd=cwd, capture_output=True, text=True
    )
    return proc.returncode, proc.stderr


def test_config_file_settings_and_cli_wins(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --max-num-partial-prefills 2\n")
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "x.sh").write_text("vllm serve m --override-attention-dtype x\n")
    (tmp_path / ".vllm-upgrade-check.toml").write_text(
        'to = "0.27.0"\nfail-on = "never"\nexclude = ["skip/"]\n'
    )
    result = scan(str(tmp_path), "-f", "json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and doc["to_version"] == "0.27.0"
    assert [f["path"] for f in doc["findings"]] == ["run.sh"]
    assert scan(str(tmp_path), "--fail-on", "blocker").exit_code == 1
    assert json.loads(scan(str(tmp_path), "--to", "0.28.0", "-f", "json").stdout)["to_version"] == "0.28.0"


def test_env_reads_the_configuration_as_scan_does(tmp_path: Path) -> None:
    (tmp_path / "freeze.txt").write_text("vllm==0.26.0\ntorch==2.11.0\n")
    (tmp_path / ".vllm-upgrade-check.toml").write_text('to = "0.27.0"\nfail-on = "never"\n')
    result = runner.invoke(app, ["env", str(tmp_path), "--freeze", str(tmp_path / "freeze.txt"), "-f", "json"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and doc["to_version"] == "0.27.0", result.output
    assert any(f["rule_id"] == "VUC0270-004" for f in doc["findings"])  # torch 2.11 replaced for 0.27.0
    args = ["env", str(tmp_path), "--freeze", str(tmp_path / "freeze.txt"), "--fail-on", "warning"]
    assert runner.invoke(app, args).exit_code == 1


def test_pyproject_table_and_ignores(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "vllm serve m --max-num-partial-prefills 2 --override-attention-dtype x\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-upgrade-check]\n"
        'to = "0.28.0"\n'
        "[[tool.vllm-upgrade-check.ignore]]\n"
        'id = "VUC0270-001"\npath = "*.sh"\nreason = "tracked in JIRA-1"\nexpires = 2999-01-01\n'
        "[[tool.vllm-upgrade-check.ignore]]\n"
        'id = "VUC0280-002"\nreason = "was fine last year"\nexpires = "2000-01-01"\n'
    )
    doc = json.loads(scan(str(tmp_path), "-f", "json").stdout)
    assert [f["rule_id"] for f in doc["findings"] if f["severity"] != "info"] == ["VUC0280-002"]
    assert any("expired on 2000-01-01" in n and "VUC0280-002" in n for n in doc["notes"])
    assert any("1 finding(s) ignored by configuration" in n for n in doc["notes"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('to = "0.28.0"\ncolour = "red"\n', ".vllm-upgrade-check.toml:2: colour: unknown key"),
        ('fail-on = "sometimes"\n', ".vllm-upgrade-check.toml:1: fail-on: must be one of"),
        ('[[ignore]]\nid = "X-001"\n', ".vllm-upgrade-check.toml:1: ignore[0]: missing field(s): reason"),
        (
            '[[ignore]]\nid = "A"\nreason = "r"\n[[ignore]]\nid = "B"\nreason = "r"\nexpires = "soon"\n',
            ".vllm-upgrade-check.toml:7: ignore[1].expires: must be a date YYYY-MM-DD",
        ),
        ('[[ignore]]\nid = "  "\nreason = "r"\n', ".vllm-upgrade-check.toml:2: ignore[0].id: must not be blank"),
        ('exclude = "vendor/"\n', ".vllm-upgrade-check.toml:1: exclude: must be a list"),
        ("to = 0.28\n", ".vllm-upgrade-check.toml:1: to: must be a string"),
        ('rules = ["a", 3]\n', ".vllm-upgrade-check.toml:1: rules[1]: must be a string"),
        ("to = [\n", "TOML syntax error"),
        ('fail-on = "warning"\nfrom = "banana"\n', ".vllm-upgrade-check.toml:2: from: 'banana' is not a valid version"),
    ],
)
def test_bad_config_is_one_line_exit_2(text: str, message: str, tmp_path: Path) -> None:
    (tmp_path / ".vllm-upgrade-check.toml").write_text(text)
    (tmp_path / "run.sh").write_text("vllm serve m\n")
    code, err = _main("scan", ".", cwd=tmp_path)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err, err


def _entry_point(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pack: Path, name: str) -> None:
    package = tmp_path / "site" / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copy(pack, package / "0.28.0.yaml")
    # An installed distribution as pip leaves it: a dist-info folder declaring the entry point.
    info = tmp_path / "site" / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\norg = {name}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))


def test_entry_point_rule_pack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _entry_point(monkeypatch, tmp_path, RULES / "0.28.0.yaml", "orgrules_ok")
    assert load_registry().rule("ORG0280-001") is not None
    assert load_registry(bundled=False).rule("ORG0280-001") is None


def test_entry_point_lookup_is_skipped_when_no_distribution_declares_the_group(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from vllm_upgrade_check.knowledge import registry

    site = tmp_path / "site"
    other = site / "other-1.0.dist-info"
    other.mkdir(parents=True)
    (other / "entry_points.txt").write_text("[console_scripts]\nother = other:main\n")
    monkeypatch.setattr("sys.path", [str(site)])
    assert registry._group_declared() is False
    assert registry.entry_point_pack_dirs() == []
    (other / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\norg = other\n")
    assert registry._group_declared() is True


def test_entry_point_ids_must_not_clash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clash = tmp_path / "0.28.0.yaml"
    clash.write_text((RULES / "0.28.0.yaml").read_text().replace("ORG0280-001", "VUC0270-001"))
    _entry_point(monkeypatch, tmp_path, clash, "orgrules_clash")
    with pytest.raises(RulePackError, match="VUC0270-001 is already used"):
        load_registry()


def test_pre_commit_hooks_and_action_are_well_formed(repo_root: Path) -> None:
    import yaml

    hooks = yaml.safe_load((repo_root / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"vllm-upgrade-check", "vllm-upgrade-check-fix"}
    assert all(h["entry"].startswith("vllm-upgrade-check ") and h["language"] == "python" for h in hooks)
    action = yaml.safe_load((repo_root / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)
    assert any("--format sarif" in s.get("run", "") for s in steps)
    # The scan cache is restored before the scan and points where the scan step looks.
    names = [s.get("name") for s in steps]
    cache_step = steps[names.index("Restore the scan cache")]
    scan_step = steps[names.index("Scan")]
    assert cache_step["uses"].startswith("actions/cache@")
    assert names.index("Restore the scan cache") < names.index("Scan")
    assert cache_step["with"]["path"] == "${{ runner.temp }}/vllm-upgrade-check-cache"
    cache_env = scan_step["env"]["VLLM_UPGRADE_CHECK_CACHE_DIR"]
    assert "'{0}/vllm-upgrade-check-cache', runner.temp" in cache_env
    assert "--no-cache" in scan_step["run"] and "cache" in action["inputs"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["scan", "--bogus"], "No such option: --bogus"),
        (["fix", "--to"], "Option '--to' requires an argument"),
        (["scan", "--format", "xml", "."], "Invalid value for '--format'"),
        (["frobnicate"], "No such command 'frobnicate'"),
        (["fix", "", "--to", "0.28.0"], "argument 2 after fix is empty"),
        (["scan", ".", "--rules", ""], "argument 4 after --rules is empty"),
        (["env", "--python", ""], "argument 3 after --python is empty"),
        (["scan", "--from", "", "."], "--from is empty"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --disable-log-requests\n")
    before = (tmp_path / "run.sh").read_bytes()
    code, err = _main(*args, cwd=tmp_path)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert (tmp_path / "run.sh").read_bytes() == before  # `fix ""` did not fix the current directory
