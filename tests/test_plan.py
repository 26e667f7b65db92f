"""``plan``: newest reachable release, first blocker of every later release, the path, and the
future environment resolved offline. Packs and environments are built here; no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.knowledge.cuda import load_driver_table
from vllm_upgrade_check.knowledge.registry import Registry, load_registry
from vllm_upgrade_check.model.environment import Environment
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.model.plan import Host, Plan
from vllm_upgrade_check.planning.keep import parse_keep
from vllm_upgrade_check.planning.planner import make_plan
from vllm_upgrade_check.planning.resolve import (
    marker_environment,
    parse_pip_report,
    resolve_future,
)
from vllm_upgrade_check.reporters.plan_json import plan_dict
from vllm_upgrade_check.reporters.plan_markdown import render_plan_markdown
from vllm_upgrade_check.sources.host.environment import read_freeze_file

_register()
runner = CliRunner()

WHEELS = {
    "0.25.0": (">=3.9", 12, ["torch==2.10.0", "transformers>=4.50"]),
    "0.26.0": (">=3.10", 12, ["torch==2.11.0", "transformers>=4.50"]),
    "0.27.0": (">=3.11", 13, ["torch==2.13.0", "transformers>=5.5.3"]),
    "0.28.0": (
        ">=3.11",
        13,
        ["torch==2.13.0", "transformers>=5.5.3", 'xformers==0.0.30; python_version < "3.11"'],
    ),
}

OLD_FLAG_RULE = """
rules:
  - id: TST0280-001
    name: removed-old-flag
    severity: blocker
    deprecated_in: 0.26.0
    match: {kind: engine_arg, name: old_flag}
    message: "--old-flag was removed in 0.28.0."
    fix: {summary: Use --new-flag instead., action: rename, replacement: new_flag, applicability: safe, available_in: 0.26.0}
    docs: {why: gone}
    evidence: [{kind: unverified, reason: test pack}]
"""

DRIVER_550 = "550.54.15"
DRIVER_580 = "580.82.07"


def write_packs(root: Path) -> Path:
    """Packs 0.25.0 .. 0.28.0 with wheel facts; 0.28.0 removes --old-flag (deprecated in 0.26.0)."""
    packs = root / "packs"
    packs.mkdir()
    for release, (python, cuda, dists) in WHEELS.items():
        lines = [f"release: {release}", "wheel:", f'  requires_python: "{python}"', f"  cuda_major: {cuda}"]
        lines.append("  requires_dist:")
        lines.extend(f"    - {json.dumps(d)}" for d in dists)
        text = "\n".join(lines) + "\n"
        if release == "0.28.0":
            text += OLD_FLAG_RULE
        (packs / f"{release}.yaml").write_text(text)
    return packs


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return load_registry([write_packs(tmp_path)], bundled=False)


def env(vllm: str | None = "0.25.0", python: str = "3.12.4", **extra: str) -> Environment:
    dists = {"torch": "2.10.0", "transformers": "4.57.0", **extra}
    if vllm:
        dists["vllm"] = vllm
    return Environment(dists, python, "x86_64", "test environment", requires={"vllm": ("torch==2.10.0",)})


def plan_for(
    registry: Registry,
    environment: Environment,
    driver: str | None = DRIVER_580,
    keep: tuple[str, ...] = (),
    python: str | None = None,
    repo: Path | None = None,
) -> Plan:
    def scan(frm: str | None, to: str) -> Report:
        paths = [repo] if repo else []
        return run_scan(ScanOptions.of(paths=paths, from_version=frm, to_version=to), registry)

    host = Host(environment, python or environment.python, driver, parse_keep(keep))
    return make_plan(registry, host, load_driver_table(), scan, environment.vllm, "installed vllm")


def first_blockers(plan: Plan) -> dict[str, str]:
    return {c.release: c.blockers[0].message for c in plan.blocked}


def test_driver_550_kept_reaches_the_last_cuda_12_release(registry: Registry) -> None:
    plan = plan_for(registry, env(), driver=DRIVER_550, keep=("driver",))
    assert plan.reachable == "0.26.0"
    need = (
        "wheels built for CUDA 13 need driver >= 580.65.06; this host has 550.54.15, "
        "which runs CUDA 12.x at most; no CUDA 12 build of vLLM {} is known (--keep driver)"
    )
    assert first_blockers(plan) == {"0.27.0": need.format("0.27.0"), "0.28.0": need.format("0.28.0")}


def test_driver_580_reaches_the_newest(registry: Registry) -> None:
    plan = plan_for(registry, env(), driver=DRIVER_580, keep=("driver",))
    assert plan.reachable == "0.28.0"
    assert plan.blocked == ()


def test_driver_550_not_kept_is_a_change_on_the_hop(registry: Registry) -> None:
    plan = plan_for(registry, env(), driver=DRIVER_550)
    assert plan.reachable == "0.28.0"
    changes = plan.path[-1].changes
    assert any(c.startswith("Upgrade the NVIDIA driver") and "580.65.06" in c for c in changes)


def test_python_310_kept(registry: Registry) -> None:
    plan = plan_for(registry, env(python="3.10.14"), keep=("python",))
    assert plan.reachable == "0.26.0"
    assert first_blockers(plan)["0.27.0"] == "requires Python >=3.11; this host has 3.10.14 (--keep python)"


def test_python_312_passes_and_python_override_applies(registry: Registry) -> None:
    assert plan_for(registry, env(python="3.12.1"), keep=("python",)).reachable == "0.28.0"
    plan = plan_for(registry, env(python="3.12.1"), keep=("python",), python="3.10")
    assert plan.reachable == "0.26.0"
    assert "this host has 3.10" in first_blockers(plan)["0.28.0"]


def test_python_is_the_first_blocker_when_driver_also_blocks(registry: Registry) -> None:
    plan = plan_for(registry, env(python="3.10.14"), driver=DRIVER_550, keep=("python", "driver"))
    check = {c.release: c for c in plan.releases}["0.27.0"]
    assert [b.kind for b in check.blockers] == ["python", "driver"]


def test_plugin_pinning_vllm_is_a_change_unless_kept(registry: Registry) -> None:
    environment = env(lmcache="0.3.1")
    environment = Environment(
        environment.distributions,
        environment.python,
        environment.machine,
        environment.source,
        requires={"lmcache": ("vllm<0.27", "torch")},
    )
    plan = plan_for(registry, environment)
    assert plan.reachable == "0.28.0" and plan.blocked == ()
    assert (
        "Upgrade lmcache to a release that admits vllm 0.28.0 (installed lmcache 0.3.1 has requirement "
        "vllm<0.27, but you will have vllm 0.28.0): look for a lmcache release whose Requires-Dist on vllm "
        "admits 0.28.0; which release does is unknown here (its release notes or PyPI metadata say; "
        "plan --resolve asks pip), or remove it"
    ) in plan.path[-1].changes
    kept = plan_for(registry, environment, keep=("lmcache",))
    assert kept.reachable == "0.26.0"
    assert first_blockers(kept) == {
        v: f"installed lmcache 0.3.1 has requirement vllm<0.27, but you will have vllm {v}; it would need a "
        f"release whose Requires-Dist admits vllm {v} (--keep lmcache)"
        for v in ("0.27.0", "0.28.0")
    }


def test_package_pinning_torch_conflicts_with_the_targets_torch(registry: Registry) -> None:
    environment = Environment(
        {"vllm": "0.25.0", "torch": "2.11.0", "transformers": "4.57.0", "torch-addon": "1.0"},
        "3.12.4",
        "x86_64",
        "test",
        requires={"torch-addon": ("torch==2.11.*",)},
    )
    plan = plan_for(registry, environment, keep=("torch-addon",))
    assert plan.reachable == "0.26.0"
    assert first_blockers(plan)["0.27.0"] == (
        "installed torch-addon 1.0 has requirement torch==2.11.*, but you will have torch 2.13.0; it would need "
        "a release whose Requires-Dist admits torch 2.13.0 (--keep torch-addon)"
    )
    free = plan_for(registry, environment)
    assert free.reachable == "0.28.0"
    assert any(c.startswith("Upgrade torch-addon to a release that admits torch 2.13.0") for c in free.path[-1].changes)


def test_keep_torch_blocks_a_torch_change(registry: Registry) -> None:
    environment = env(torch="2.11.0")
    plan = plan_for(registry, environment, keep=("torch",))
    assert plan.reachable == "0.26.0"
    assert first_blockers(plan)["0.27.0"] == "requires torch==2.13.0 but --keep torch holds 2.11.0"
    # without --keep the same move is a change pip makes
    free = plan_for(registry, environment)
    assert free.reachable == "0.28.0"
    assert any(c.startswith("torch 2.11.0 -> 2.13.0 (upgrade") for c in free.path[-1].changes)


def test_nothing_reachable(registry: Registry) -> None:
    plan = plan_for(registry, env(python="3.8.10"), keep=("python",))
    assert plan.reachable is None and plan.path == ()
    assert set(first_blockers(plan)) == {"0.26.0", "0.27.0", "0.28.0"}


def test_deprecation_window_makes_a_stop(registry: Registry, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.sh").write_text("vllm serve m --old-flag 1\n")
    plan = plan_for(registry, env(), repo=repo)
    assert [(h.from_version, h.to_version) for h in plan.path] == [("0.25.0", "0.27.0"), ("0.27.0", "0.28.0")]
    assert plan.path[0].migrate == ("TST0280-001",)
    assert plan.path[0].blockers == 0 and plan.path[1].blockers == 1
    # already on 0.26.0 the replacement exists: one hop
    direct = plan_for(registry, env(vllm="0.26.0"), repo=repo)
    assert [h.to_version for h in direct.path] == ["0.28.0"]


DROPPED_MODEL_RULE = """
rules:
  - id: TST0270-001
    name: acme-old-removed
    severity: blocker
    match: {kind: model, name: acme-old, patterns: ["acme/old-*"]}
    message: "The AcmeOldForCausalLM architecture was removed in vLLM 0.27.0."
    fix: {summary: Stay on 0.26.0 for this model.}
    docs: {why: gone}
    evidence: [{kind: unverified, reason: test pack}]
"""


def test_a_release_that_dropped_the_served_model_is_not_reachable(tmp_path: Path) -> None:
    packs = write_packs(tmp_path)
    pack = packs / "0.27.0.yaml"
    pack.write_text(pack.read_text() + DROPPED_MODEL_RULE)
    registry = load_registry([packs], bundled=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.sh").write_text("vllm serve acme/old-7b --port 8000\n")
    plan = plan_for(registry, env(), repo=repo)
    assert plan.reachable == "0.26.0"
    assert [h.to_version for h in plan.path] == ["0.26.0"]
    blocked = {c.release: c.blockers for c in plan.blocked}
    assert set(blocked) == {"0.27.0", "0.28.0"}
    for blockers in blocked.values():
        assert [(b.kind, b.subject) for b in blockers] == [("model", "acme/old-7b")]
        assert blockers[0].message.startswith("serves acme/old-7b (serve.sh:1); The AcmeOldForCausalLM")
        assert blockers[0].message.endswith("(TST0270-001)")
    doc = plan_dict(plan)
    blocked_0270 = next(r for r in doc["releases"] if r["release"] == "0.27.0")
    assert blocked_0270["blockers"][0] | {"message": ""} == {
        "kind": "model", "subject": "acme/old-7b", "message": "", "path": "serve.sh", "line": 1
    }
    # Another model: nothing dropped, the newest release is reachable.
    (repo / "serve.sh").write_text("vllm serve acme/new-7b --port 8000\n")
    assert plan_for(registry, env(), repo=repo).reachable == "0.28.0"
    # Kept Python blocks first; the dropped model is listed after it.
    kept = plan_for(registry, env(python="3.10.12"), keep=("python",), repo=repo)
    assert kept.reachable == "0.26.0"
    (repo / "serve.sh").write_text("vllm serve acme/old-7b --port 8000\n")
    both = plan_for(registry, env(python="3.10.12"), keep=("python",), repo=repo)
    assert [b.kind for b in both.blocked[0].blockers] == ["python", "model"]


def test_release_without_wheel_facts_is_unchecked(tmp_path: Path) -> None:
    packs = write_packs(tmp_path)
    (packs / "0.29.0.yaml").write_text("release: 0.29.0\n")
    plan = plan_for(load_registry([packs], bundled=False), env())
    assert plan.reachable == "0.28.0"
    assert any("0.29.0" in n and "could not be checked" in n for n in plan.notes)
    assert plan_dict(plan)["releases"][-1] == {
        "release": "0.29.0",
        "checked": False,
        "reachable": None,
        "first_blocker": None,
        "blockers": [],
        "changes": [],
        "cuda": None,
        "build": None,
        "notes": [],
        "conflicts": [],
    }


# --- future environment -----------------------------------------------------------------


def test_future_names_both_sides_and_the_cause() -> None:
    environment = Environment(
        {"vllm": "0.26.0", "torch": "2.11.0", "lmcache": "0.3.1", "addon": "2.0", "flashinfer-python": "0.2"},
        "3.12.4",
        "x86_64",
        "t",
        requires={
            "lmcache": ("vllm<0.27",),
            "addon": ("torch==2.11.*", "transformers<5"),
            "flashinfer-python": ("torch",),
        },
    )
    future = resolve_future(
        environment, "0.27.0", ["torch==2.13.0", "transformers>=5.5.3", "flashinfer-python==0.6.1"]
    )
    got = {(c.requirer, c.requirement, c.name, c.future, c.cause) for c in future.conflicts}
    assert got == {
        ("lmcache", "vllm<0.27", "vllm", "0.27.0", "vllm==0.27.0"),
        ("addon", "torch==2.11.*", "torch", "2.13.0", "torch==2.13.0"),
        ("addon", "transformers<5", "transformers", ">=5.5.3", "transformers>=5.5.3"),
    }
    messages = {c.describe() for c in future.conflicts}
    assert "addon 2.0 has requirement transformers<5, but you will have transformers>=5.5.3" in messages
    actions = {(c.name, c.installed, c.action, c.future) for c in future.changes}
    assert actions == {
        ("torch", "2.11.0", "upgrade", "2.13.0"),
        ("transformers", None, "install", None),
        ("flashinfer-python", "0.2", "upgrade", "0.6.1"),
    }
    # flashinfer-python is replaced by the upgrade: its own requirements are not judged
    assert future.unchecked == ("flashinfer-python",)


def test_future_downgrade() -> None:
    environment = Environment({"torch": "2.14.0"}, "3.12.4", "x86_64", "t")
    (change,) = resolve_future(environment, "0.27.0", ["torch==2.13.0"]).changes
    assert change.action == "downgrade" and change.future == "2.13.0"


def test_markers_are_evaluated_for_the_host_not_this_interpreter() -> None:
    requires = {"plugin": ('vllm<0.27; python_version < "3.11"',)}
    old = Environment({"plugin": "1.0"}, "3.10.14", "x86_64", "t", requires=requires)
    new = Environment({"plugin": "1.0"}, "3.12.4", "x86_64", "t", requires=requires)
    dist = ['xformers==0.0.30; python_version < "3.11"', 'nvidia-thing==1; platform_machine == "aarch64"']
    assert [c.name for c in resolve_future(old, "0.28.0", dist).changes] == ["xformers"]
    assert [c.requirer for c in resolve_future(old, "0.28.0", dist).conflicts] == ["plugin"]
    assert resolve_future(new, "0.28.0", dist).changes == ()
    assert resolve_future(new, "0.28.0", dist).conflicts == ()
    assert resolve_future(new, "0.28.0", dist, python="3.10").conflicts != ()
    arm = Environment({}, "3.12.4", "aarch64", "t")
    assert [c.name for c in resolve_future(arm, "0.28.0", dist).changes] == ["nvidia-thing"]
    assert marker_environment(new, "3.10")["python_full_version"] == "3.10.0"


def test_pip_report_parsing() -> None:
    text = json.dumps(
        {"version": "1", "install": [{"metadata": {"name": "Torch", "version": "2.13.0"}}, {"metadata": {}}]}
    )
    assert parse_pip_report(text) == {"torch": "2.13.0"}
    with pytest.raises(ValueError):
        parse_pip_report("{}")


# --- data, readers ----------------------------------------------------------------------


def test_planner_uses_the_bundled_driver_table() -> None:
    table = load_driver_table()
    assert "NVIDIA CUDA Toolkit Release Notes, Table 3" in table.source
    assert [(r.major, r.minimum_driver) for r in table.cuda] == [
        (11, "450.80.02"),
        (12, "525.60.13"),
        (13, "580.65.06"),
    ]
    assert table.minimum_for(14) is None


def test_read_freeze_file(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("# comment\nvllm==0.25.0\nTorch==2.10.0\n-e git+https://x#egg=y\n")
    environment = read_freeze_file(freeze)
    assert environment.distributions == {"vllm": "0.25.0", "torch": "2.10.0"}
    assert environment.python is None
    freeze.write_text("vllm==0.25.0\nnot a requirement!\n")
    with pytest.raises(UsageError) as info:
        read_freeze_file(freeze)
    assert str(info.value).startswith(f"{freeze}:2:")


# --- reporters, CLI ---------------------------------------------------------------------


def test_markdown_reads_as_a_plan(registry: Registry, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.sh").write_text("vllm serve m --old-flag 1\n")
    plan = plan_for(registry, env(python="3.10.14"), driver=DRIVER_550, keep=("driver",), repo=repo)
    text = render_plan_markdown(plan)
    assert "- Newest reachable release: **0.26.0**" in text
    assert "### Step 1: vLLM 0.25.0 → 0.26.0" in text
    assert "- [ ] torch 2.10.0 -> 2.11.0 (upgrade; vllm requires torch==2.11.0)" in text
    assert "- [ ] `pip install vllm==0.26.0` and roll out" in text
    assert (
        "| 0.27.0 | requires Python >=3.11; this host has 3.10.14 | 1 |" in text
        or "| 0.27.0 | wheels built for CUDA 13 need driver >= 580.65.06; this host has 550.54.15, "
        "which runs CUDA 12.x at most; no CUDA 12 build of vLLM 0.27.0 is known (--keep driver) |" in text
    )
    plan = plan_for(registry, env(), repo=repo)
    text = render_plan_markdown(plan)
    assert "Migrate while both old and new work" in text
    assert "- [ ] TST0280-001: Use --new-flag instead." in text
    # a change made at the first stop is not repeated at the second
    assert text.count("- [ ] torch 2.10.0 -> 2.13.0") == 1
    assert "- [ ] `serve.sh:1:14` TST0280-001 `--old-flag`: Use --new-flag instead." in text


def test_plan_json(registry: Registry) -> None:
    doc = plan_dict(plan_for(registry, env(), driver=DRIVER_550, keep=("driver",)))
    assert doc["schema_version"] == 1 and doc["kind"] == "plan"
    assert doc["reachable"] == "0.26.0" and doc["current"] == "0.25.0"
    assert doc["host"] == {
        "python": "3.12.4",
        "driver": DRIVER_550,
        "driver_source": None,
        "keep": ["driver"],
        "environment": "test environment",
        "driver_cuda": None,
        "sources": [],
        "not_checked": [],
    }
    blocked = {r["release"]: r["first_blocker"] for r in doc["releases"] if not r["reachable"]}
    assert set(blocked) == {"0.27.0", "0.28.0"}
    assert doc["path"][0]["to"] == "0.26.0" and doc["path"][0]["blockers"] == 0
    json.dumps(doc)


@pytest.fixture
def no_bundled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI loads only the test packs (the bundled ones share release numbers)."""
    monkeypatch.setattr("vllm_upgrade_check.knowledge.registry._bundled_packs", lambda: ())


@pytest.mark.usefixtures("no_bundled")
def test_cli_plan_with_freeze(tmp_path: Path) -> None:
    packs = write_packs(tmp_path)
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.25.0\ntorch==2.10.0\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    args = ["plan", str(repo), "--rules", str(packs), "--freeze", str(freeze), "--python-version", "3.12"]
    result = runner.invoke(app, [*args, "--driver", DRIVER_550, "--keep", "driver", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["reachable"] == "0.26.0"
    assert doc["releases"][1]["first_blocker"].startswith("wheels built for CUDA 13 need driver >= 580.65.06")
    result = runner.invoke(app, [*args, "--driver", DRIVER_580, "--format", "markdown"])
    assert result.exit_code == 0 and "**0.28.0**" in result.stdout
    result = runner.invoke(app, [*args, "--driver", DRIVER_550, "--keep", "driver"])
    assert result.exit_code == 0 and "0.27.0" in result.stdout and "550.54.15" in result.stdout


@pytest.mark.usefixtures("no_bundled")
def test_cli_plan_exit_codes(tmp_path: Path) -> None:
    packs = write_packs(tmp_path)
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("vllm==0.25.0\n")
    base = ["plan", str(tmp_path / "packs"), "--rules", str(packs), "--freeze", str(freeze)]
    blocked = runner.invoke(app, [*base, "--python-version", "3.8", "--keep", "python"])
    assert blocked.exit_code == 1
    bad = runner.invoke(app, [*base, "--driver", "five-fifty"])
    assert isinstance(bad.exception, UsageError) and "--driver 'five-fifty'" in str(bad.exception)
    for option, value, fragment in [
        ("--driver", "580", "not an NVIDIA driver version"),
        ("--python-version", "2.7", "not a Python 3 version"),
        ("--python-version", "3", "not a Python 3 version"),
        ("--from", "9.9.9", "newer than the newest release with a pack (0.28.0)"),
    ]:
        bad = runner.invoke(app, [*base, option, value])
        assert isinstance(bad.exception, UsageError) and fragment in str(bad.exception), (option, value)
    freeze.write_text("vllm==0.25.0\nhello world\n")
    bad = runner.invoke(app, base)
    assert isinstance(bad.exception, UsageError)
    assert "\n" not in str(bad.exception) and bad.exception.line == 2 and "'hello world'" in str(bad.exception)


@pytest.mark.usefixtures("no_bundled")
def test_cli_plan_reads_the_configuration_file(tmp_path: Path) -> None:
    packs = write_packs(tmp_path)
    pack = packs / "0.27.0.yaml"
    pack.write_text(pack.read_text() + DROPPED_MODEL_RULE)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.sh").write_text("vllm serve acme/old-7b\n")
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("torch==2.10.0\n")  # no vllm installed: the configuration's `from` is used
    base = ["plan", str(repo), "--rules", str(packs), "--freeze", str(freeze), "--python-version", "3.12"]
    base += ["--driver", DRIVER_580, "--format", "json"]
    plain = json.loads(runner.invoke(app, base).stdout)
    assert plain["reachable"] == "0.26.0"
    config = repo / ".vllm-upgrade-check.toml"
    config.write_text('from = "0.26.0"\n[[ignore]]\nid = "TST0270-001"\nreason = "validated with the Transformers backend"\n')
    configured = runner.invoke(app, base)
    assert configured.exit_code == 0, configured.output
    doc = json.loads(configured.stdout)
    assert (doc["current"], doc["current_source"], doc["reachable"]) == ("0.26.0", f"from in {config}", "0.28.0")
    moved = tmp_path / "elsewhere.toml"
    config.rename(moved)
    assert json.loads(runner.invoke(app, [*base, "--config", str(moved)]).stdout)["reachable"] == "0.28.0"


def test_a_launch_whose_model_cannot_be_read_is_noted(registry: Registry, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.sh").write_text('vllm serve "$1" --port 8000\n')
    plan = plan_for(registry, env(), repo=repo)
    assert plan.reachable == "0.28.0"
    (note,) = [n for n in plan.notes if n.startswith("launch not fully read")]
    assert '"$1" at serve.sh:1:1' in note and "not checked against models later releases dropped" in note


def test_keeping_a_distribution_that_is_not_installed_is_noted(registry: Registry) -> None:
    plan = plan_for(registry, env(), keep=("torch", "tourch"))
    assert [n for n in plan.notes if n.startswith("--keep")] == [
        "--keep tourch: not installed here, so there is nothing to keep (a typo?)"
    ]


def test_cuda_notes_tell_a_550_host_which_releases_it_reaches(registry: Registry) -> None:
    plan = plan_for(registry, env(), driver=DRIVER_550)
    assert "default vLLM wheels are built for CUDA 12 (0.25.0 … 0.26.0), CUDA 13 (0.27.0 … 0.28.0), read from each release's wheel" in plan.notes
    assert (
        "driver 550.54.15 runs CUDA 12.x at most (CUDA minor-version compatibility); the newest release "
        "whose default wheel it runs is 0.26.0; CUDA 13 needs driver >= 580.65.06; it supports CUDA 12.4 natively"
    ) in plan.notes
    newer = plan_for(registry, env(), driver="580.159.04")
    assert any(n.startswith("driver 580.159.04 runs CUDA 13.x at most") and "default wheel it runs is 0.28.0;" in n for n in newer.notes)
    old = plan_for(registry, env(), driver="470.82.01", keep=("driver",))
    assert old.reachable is None
    assert any("driver 470.82.01 runs CUDA 11.x at most" in n and "CUDA 12 needs driver >= 525.60.13" in n for n in old.notes)


def test_keep_driver_with_driver_unknown_goes_by_the_build_in_use(registry: Registry) -> None:
    from dataclasses import replace as _replace

    from vllm_upgrade_check.model.environment import TorchBuild

    cu12 = _replace(env(), torch=TorchBuild("2.10.0+cu128", "12.8", None, "test"))
    plan = plan_for(registry, cu12, driver=None, keep=("driver",))
    assert plan.reachable == "0.26.0"
    assert "says this host runs CUDA 12" in first_blockers(plan)["0.27.0"]
    unknown = plan_for(registry, env(), driver=None, keep=("driver",))  # no build tells
    assert unknown.reachable is None
    assert "no CUDA build in use tells what it runs" in first_blockers(unknown)["0.26.0"]
    free = plan_for(registry, env(), driver=None)
    assert free.reachable == "0.28.0"


@pytest.mark.parametrize("value", ["nothing", "vllm-plugin-nobody-ships", "tourch"])
def test_keep_of_a_name_the_plan_cannot_hold_is_refused(value: str) -> None:
    from vllm_upgrade_check.errors import UsageError

    with pytest.raises(UsageError, match=f"--keep {value}: not driver, python"):
        parse_keep([value], {"vllm", "torch", "numpy"})


@pytest.mark.parametrize("value", ["torch==2.5", "torch>=2", "-torch", "a b"])
def test_keep_of_a_requirement_is_refused(value: str) -> None:
    from vllm_upgrade_check.errors import UsageError

    with pytest.raises(UsageError, match="expected driver, python or a distribution name"):
        parse_keep([value], set())


def test_keep_takes_keywords_installed_and_required_names() -> None:
    installed = {"vllm", "acme-plugin"}
    kept = parse_keep(["Driver", "PYTHON", "Acme_Plugin", "Torch", "transformers"], installed)
    assert kept == {"driver", "python", "acme-plugin", "torch", "transformers"}
    # without an environment to check against, names are taken as given
    assert parse_keep(["whatever"]) == {"whatever"}
