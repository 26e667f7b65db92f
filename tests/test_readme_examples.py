"""The README's examples, run as a user would run them.

Every fenced ``sh``/``console`` block is run, line by line, with ``bash`` in a temporary
folder holding a copy of ``examples/`` (the example deployment shipped in the repository), the
installed ``vllm-upgrade-check`` first on ``PATH``. A block that cannot run as written is
marked just above its fence with ``<!-- readme-example: REASON -->``, and the reason is
checked here: ``installs`` (it creates a virtual environment; its ``vllm-upgrade-check``
commands are run all the same) or ``cluster`` (it needs ``kubectl``; the other lines run on
host reports this test makes). Every TOML and YAML block parses and is accepted by what reads
it: the configuration loader, ``rules validate``, a scan, the pre-commit hook definitions, the
Action's inputs.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

if TYPE_CHECKING:
    from vllm_upgrade_check.model.findings import Finding
    from vllm_upgrade_check.model.options import Ignore

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TOOL_BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(?P<lang>[a-z]*)\s*$")
MARK = re.compile(r"^<!-- readme-example: (?P<reason>[a-z-]+) -->$")
REASONS = {"installs", "cluster"}
SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the opening fence
    text: str
    reason: str | None
    before: str  # the prose since the previous block


def _blocks() -> list[Block]:
    lines = README.read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    i, prose_start = 0, 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group("lang"):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            mark = MARK.match(lines[i - 1]) if i else None
            before = "\n".join(lines[prose_start:i])
            out.append(Block(m.group("lang"), i + 1, "\n".join(lines[i + 1 : j]), mark and mark.group("reason"), before))
            i, prose_start = j + 1, j + 1
            continue
        assert not MARK.match(lines[i]) or FENCE.match(lines[i + 1]), f"README:{i + 1}: a mark must sit on a fence"
        i += 1
    return out


BLOCKS = _blocks()


def _of(*langs: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang in langs]


def _ids(blocks: list[Block]) -> list[str]:
    return [f"README:{b.line}" for b in blocks]


def _commands(text: str) -> list[str]:
    """The block's commands: ``\\``-continued lines joined, ``$`` prompts and comment lines dropped."""
    out: list[str] = []
    pending = ""
    for raw in text.split("\n"):
        line = raw.removeprefix("$ ")
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    return out


def _tool_words(command: str) -> bool:
    words = shlex.split(command, comments=True)
    return any(w.rsplit("/", 1)[-1] == "vllm-upgrade-check" for w in words)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{TOOL_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "VLLM_UPGRADE_CHECK_CACHE_DIR": str(cwd / ".cache"),
    }
    # `.venv/bin/vllm-upgrade-check` of the set-up commands is the installed tool here
    command = command.replace(".venv/bin/vllm-upgrade-check", "vllm-upgrade-check")
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _check_ran(command: str, result: subprocess.CompletedProcess[str], where: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode in (0, 1), f"{where}: `{command}` exited {result.returncode}:\n{output[-2000:]}"
    assert "Traceback" not in output, f"{where}: `{command}` crashed:\n{output[-2000:]}"


def test_every_example_block_is_classified() -> None:
    """Every fenced block has a language this test reads, and every mark a reason it checks."""
    assert BLOCKS, "the README has no examples"
    for block in BLOCKS:
        assert block.lang in {"sh", "console", "text", "toml", "yaml"}, f"README:{block.line}: {block.lang}"
        assert block.reason is None or block.reason in REASONS, f"README:{block.line}: reason {block.reason}"
    assert any(_tool_words(c) for b in _of("sh", "console") for c in _commands(b.text))


@pytest.mark.parametrize("block", _of("sh", "console"), ids=_ids(_of("sh", "console")))
def test_shell_example_runs(block: Block, workdir: Path) -> None:
    where = f"README:{block.line}"
    commands = _commands(block.text)
    if block.reason == "installs":
        assert any("pip install" in c for c in commands), f"{where}: marked 'installs' but installs nothing"
        # the set-up chain's own install steps are what .ci/run does; its tool commands run here
        commands = [part for c in commands for part in c.split(" && ") if _tool_words(part)]
        if not commands:
            return  # the test suite's own set-up (.ci/run): nothing of the tool to run
    elif block.reason == "cluster":
        assert any("kubectl" in c for c in commands), f"{where}: marked 'cluster' but uses no cluster"
        for host in ("gpu-node-a", "gpu-node-b"):  # what `kubectl logs` of two nodes gives
            made = _run(f"vllm-upgrade-check env --to 0.28.0 --format json --no-host --host-name {host} > {host}.json", workdir)
            _check_ran("env", made, where)
        commands = [c for c in commands if "kubectl" not in c]
    else:
        assert all(_tool_words(c) for c in commands), f"{where}: a line that is not a vllm-upgrade-check command"
    assert commands, f"{where}: nothing of it runs"
    for command in commands:
        result = _run(command, workdir)
        _check_ran(command, result, where)
        claim = re.search(r"reports (\d+) blockers and exits (\d)", block.before)
        if claim and "scan" in command:
            assert result.returncode == int(claim.group(2)), f"{where}: the README says exit {claim.group(2)}"
            assert f"{claim.group(1)} blocker(s)" in result.stdout, f"{where}: the README says {claim.group(1)} blockers"
        said = re.search(r"#.*exit (\d)", command)
        if said:
            assert result.returncode == int(said.group(1)), f"{where}: `{command}` exited {result.returncode}"


def _yaml_kind(data: object) -> str:
    if isinstance(data, dict) and "repos" in data:
        return "pre-commit"
    if isinstance(data, dict) and "jobs" in data:
        return "workflow"
    if isinstance(data, dict) and "rules" in data and "release" in data:
        return "pack"
    if isinstance(data, dict) and data.get("kind") in {"Deployment", "Pod", "StatefulSet"}:
        return "manifest"
    return "unknown"


def test_yaml_examples_are_all_known_kinds() -> None:
    kinds = [_yaml_kind(yaml.safe_load(b.text)) for b in _of("yaml")]
    assert "unknown" not in kinds
    assert {"pre-commit", "workflow", "pack", "manifest"} <= set(kinds)


def _tags() -> set[str]:
    done = subprocess.run(["git", "-C", str(ROOT), "tag"], capture_output=True, text=True, check=False)
    return set(done.stdout.split()) if done.returncode == 0 else set()


def _real_ref(ref: str) -> bool:
    return ref == "main" or bool(SHA.match(ref)) or ref in _tags()


def test_pre_commit_example_names_our_hooks_and_a_real_ref() -> None:
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    for block in _of("yaml"):
        data = yaml.safe_load(block.text)
        if _yaml_kind(data) != "pre-commit":
            continue
        for repo in data["repos"]:
            assert _real_ref(str(repo["rev"])), f"README:{block.line}: rev {repo['rev']} is no branch, tag or commit"
            assert {h["id"] for h in repo["hooks"]} <= hooks
        # the commented-out hook is one of ours too
        for hook_id in re.findall(r"#\s*- id: (\S+)", block.text):
            assert hook_id in hooks


def test_workflow_example_passes_only_inputs_the_action_declares() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    inputs = set(action["inputs"])
    seen = 0
    for block in _of("yaml"):
        data = yaml.safe_load(block.text)
        if _yaml_kind(data) != "workflow":
            continue
        for job in data["jobs"].values():
            for step in job["steps"]:
                uses = step.get("uses", "")
                if "/vllm-upgrade-check@" not in uses:
                    continue
                seen += 1
                assert _real_ref(uses.rsplit("@", 1)[1]), f"README:{block.line}: {uses} names no real ref"
                assert set(step.get("with", {})) <= inputs
                commented = re.findall(r"^\s*#\s*([a-z-]+):", block.text, re.M)
                assert set(commented) <= inputs
    assert seen


def test_organisation_pack_example_validates(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vllm_upgrade_check.cli import _register, app

    _register()
    packs = [b for b in _of("yaml") if _yaml_kind(yaml.safe_load(b.text)) == "pack"]
    assert packs
    for block in packs:
        name = re.search(r"^# (\S+\.yaml)", block.text, re.M)
        assert name, f"README:{block.line}: the pack example names its file in a comment"
        path = tmp_path / name.group(1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.text, encoding="utf-8")
        result = CliRunner().invoke(app, ["rules", "validate", str(path.parent)])
        assert result.exit_code == 0, result.output


def test_suppression_example_silences_what_it_names(tmp_path: Path) -> None:
    manifests = [b for b in _of("yaml") if _yaml_kind(yaml.safe_load(b.text)) == "manifest"]
    assert manifests
    for block in manifests:
        (tmp_path / "deploy.yaml").write_text(block.text, encoding="utf-8")
        result = _run("vllm-upgrade-check scan deploy.yaml --to 0.28.0 --format json --no-cache", tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "2 finding(s) suppressed by inline comments" in result.stdout
        # without the comment the same file fails the gate
        (tmp_path / "deploy.yaml").write_text(re.sub(r".*vllm-upgrade-check: ignore.*\n", "", block.text))
        again = _run("vllm-upgrade-check scan deploy.yaml --to 0.28.0 --no-cache", tmp_path)
        assert again.returncode == 1


def _finding(rule_id: str, path: str) -> Finding:
    """A finding of the bundled rule ``rule_id`` at ``path``:1 (what an ignore of it hides)."""
    from vllm_upgrade_check.knowledge.registry import load_registry
    from vllm_upgrade_check.model.facts import Fact, FactKind, Location
    from vllm_upgrade_check.model.findings import Finding, VersionBasis  # noqa: F811

    found = load_registry().rule(rule_id)
    assert found is not None, f"the README's ignore names {rule_id}, which no bundled pack has"
    pack, rule = found
    fact = Fact(FactKind.ARG, rule.match.name, Location(path, 1, 1), raw=rule.match.name, origin="cli")
    return Finding(rule, fact, rule.severity, pack.release, "0.26.0", VersionBasis.OPTION, "--from")


def _check_expiry_as_documented(ignore: Ignore, where: str) -> None:
    """The README says: "after this day the ignore stops applying and is reported". Checked
    on a clock the test sets (the days around ``expires``), never on today's date, so the
    example does not turn into a failure when its date passes."""
    from vllm_upgrade_check.matching.suppress import apply_filters
    from vllm_upgrade_check.model.options import Filters

    assert ignore.expires is not None, f"{where}: the example shows an expiry"
    finding = _finding(ignore.id, (ignore.path or "x.yaml").replace("*", "a"))
    filters = Filters(ignores=(ignore,))
    for today, applies in (
        (ignore.expires - dt.timedelta(days=400), True),
        (ignore.expires, True),  # the last day it applies
        (ignore.expires + dt.timedelta(days=1), False),
    ):
        kept, notes = apply_filters([finding], filters, today=today)
        assert (kept == []) == applies, f"{where}: on {today} the ignore {'should' if applies else 'should not'} apply"
        assert any("expired" in n for n in notes) == (not applies), f"{where}: {notes}"


def test_configuration_example_is_accepted(workdir: Path) -> None:
    from vllm_upgrade_check.cli.config import load_config
    from vllm_upgrade_check.parsing.toml import load_toml

    configs = [b for b in _of("toml") if "[tool.vllm-upgrade-check]" in b.text]
    assert configs
    for block in configs:
        (workdir / "pyproject.toml").write_text(block.text, encoding="utf-8")
        table = load_toml(block.text)["tool"]["vllm-upgrade-check"]
        for rules in table.get("rules", []):  # a rules entry must name a directory that exists
            (workdir / rules).mkdir(parents=True, exist_ok=True)
        config = load_config(workdir / "pyproject.toml")
        assert config.to_version
        for ignore in config.ignores:
            _check_expiry_as_documented(ignore, f"README:{block.line}")
        for rules in config.rules:  # the organisation pack of the README lives there
            pack = next(b for b in _of("yaml") if _yaml_kind(yaml.safe_load(b.text)) == "pack")
            rules.mkdir(parents=True, exist_ok=True)
            (rules / "0.28.0.yaml").write_text(pack.text, encoding="utf-8")
        result = _run("vllm-upgrade-check scan examples --config pyproject.toml --no-cache", workdir)
        _check_ran("scan --config", result, f"README:{block.line}")


def test_entry_point_example_names_the_group_the_registry_reads() -> None:
    from vllm_upgrade_check.knowledge.registry import ENTRY_POINT_GROUP
    from vllm_upgrade_check.parsing.toml import load_toml

    tables = [load_toml(b.text) for b in _of("toml") if "entry-points" in b.text]
    assert tables
    for data in tables:
        assert ENTRY_POINT_GROUP in data["project"]["entry-points"]
