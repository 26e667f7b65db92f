"""Compose files merged as ``docker compose`` merges them: the default override, ``extends``
(same file and another file) and ``include``. A flag is reported where its text is written
(the override's line), once; ``fix`` removes it there; what cannot be read is an
unresolved note at the line that names it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.model.findings import Report
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.base import SourceFile
from vllm_upgrade_check.sources.scanners.compose_cli import Named, compose_chains
from vllm_upgrade_check.sources.scanners.compose_project import chain_facts

REMOVED = {"VUC0180-001": "--swap-space", "VUC0101-001": "--num-scheduler-steps"}
IMAGE = "vllm/vllm-openai:v0.20.0"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _scan(root: Path) -> tuple[Report, list[Fact]]:
    facts: list[Fact] = []
    report = run_scan(ScanOptions.of(paths=[root], to_version="0.32.0"), facts_out=facts)
    return report, facts


def _report(root: Path) -> Report:
    return _scan(root)[0]


def _removed(root: Path) -> list[tuple[str, str | None, int | None, int | None]]:
    return sorted(
        (REMOVED[f.rule.id], f.location.path, f.location.line, f.location.column)
        for f in _report(root).findings
        if f.rule.id in REMOVED
    )


def _at(text: str, word: str) -> tuple[int, int]:
    index = text.index(word)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


def _fix(root: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "vllm_upgrade_check", "fix", str(root), "--to", "0.32.0", "--no-bump"],
        capture_output=True, text=True, timeout=300,
    )
    return run.stdout + run.stderr


BASE = f"""services:
  engine:
    image: {IMAGE}
    command: ["--model", "m", "--max-num-seqs", "8"]
  worker:
    extends:
      service: engine
    command: ["--model", "m2", "--num-scheduler-steps", "4"]
"""
OVERRIDE = 'services:\n  engine:\n    command: ["--model", "m", "--swap-space", "16"]\n'


@pytest.mark.parametrize("base", ["docker-compose.yml", "compose.yaml", "compose.yml", "docker-compose.yaml"])
@pytest.mark.parametrize("override", ["docker-compose.override.yml", "compose.override.yaml"])
def test_the_override_and_extends_flags_are_reported_where_written(tmp_path: Path, base: str, override: str) -> None:
    _write(tmp_path, {f"deploy/{base}": BASE, f"deploy/{override}": OVERRIDE})
    assert _removed(tmp_path) == [
        ("--num-scheduler-steps", f"deploy/{base}", *_at(BASE, "--num-scheduler-steps")),
        ("--swap-space", f"deploy/{override}", *_at(OVERRIDE, "--swap-space")),
    ]


@pytest.mark.parametrize(
    "command",
    ["--model m --swap-space 16", "\n      - --model\n      - m\n      - --swap-space\n      - '16'", "['--model', m, --swap-space=16]"],
)
def test_fix_removes_the_flag_in_the_override_and_it_still_parses(tmp_path: Path, command: str) -> None:
    override = f"services:\n  engine:\n    command: {command}\n"
    _write(tmp_path, {"docker-compose.yml": BASE, "docker-compose.override.yml": override})
    out = _fix(tmp_path)
    fixed = (tmp_path / "docker-compose.override.yml").read_text()
    assert "--swap-space" not in fixed, out
    assert "--num-scheduler-steps" not in (tmp_path / "docker-compose.yml").read_text(), out
    engine = yaml.safe_load(fixed)["services"]["engine"]
    words = engine["command"] if isinstance(engine["command"], list) else engine["command"].split()
    assert words == ["--model", "m"]
    assert _removed(tmp_path) == []


def test_an_override_with_a_clean_command_keeps_the_base_flag_out_of_the_merged_launch(tmp_path: Path) -> None:
    base = f'services:\n  engine:\n    image: {IMAGE}\n    command: ["--model", "m", "--swap-space", "4"]\n'
    override = 'services:\n  engine:\n    command: ["--model", "m"]\n'
    _write(tmp_path, {"docker-compose.yml": base, "docker-compose.override.yml": override})
    report, facts = _scan(tmp_path)
    launches = [f for f in facts if f.kind == FactKind.LAUNCH]
    merged = [f for f in launches if f.location.path == "docker-compose.override.yml"]
    alone = [f for f in launches if f.location.path == "docker-compose.yml"]
    assert len(merged) == 1 and "swap_space" not in merged[0].args
    assert len(alone) == 1 and "swap_space" in alone[0].args  # docker compose -f docker-compose.yml
    # the base's own line is still reported (the repository holds it), once, in the base
    found = [f for f in report.findings if f.rule.id == "VUC0180-001"]
    assert [(f.location.path, f.location.line) for f in found] == [("docker-compose.yml", 4)]


def test_an_override_names_the_vllm_image_of_a_base_that_does_not(tmp_path: Path) -> None:
    base = 'services:\n  engine:\n    image: acme/engine:1\n    command: ["--swap-space", "4"]\n'
    override = f"services:\n  engine:\n    image: {IMAGE}\n"
    _write(tmp_path, {"docker-compose.yml": base, "docker-compose.override.yml": override})
    assert _removed(tmp_path) == [("--swap-space", "docker-compose.yml", *_at(base, "--swap-space"))]


def test_an_override_reset_drops_the_base_command(tmp_path: Path) -> None:
    base = f'services:\n  engine:\n    image: {IMAGE}\n    command: ["--swap-space", "4"]\n'
    override = "services:\n  engine:\n    command: !reset []\n"
    _write(tmp_path, {"docker-compose.yml": base, "docker-compose.override.yml": override})
    launches = [f for f in _scan(tmp_path)[1] if f.kind == FactKind.LAUNCH]
    assert any(f.location.path == "docker-compose.yml" and f.location.line == 3 and not f.args for f in launches)


def test_environment_merges_by_name(tmp_path: Path) -> None:
    base = f"services:\n  engine:\n    image: {IMAGE}\n    environment:\n      VLLM_USE_V1: '0'\n      VLLM_A: x\n"
    override = "services:\n  engine:\n    environment:\n      - VLLM_USE_V1=1\n"
    _write(tmp_path, {"docker-compose.yml": base, "docker-compose.override.yml": override})
    env = sorted(
        (f.name, f.location.path)
        for f in _scan(tmp_path)[1]
        if f.kind == FactKind.ENV_VAR and f.owner == "service engine" and f.location.path != "docker-compose.yml"
        or f.kind == FactKind.ENV_VAR and f.name == "VLLM_A"
    )
    assert ("VLLM_USE_V1", "docker-compose.override.yml") in env
    assert ("VLLM_A", "docker-compose.yml") in env


def test_extends_another_file(tmp_path: Path) -> None:
    common = f"services:\n  base:\n    image: {IMAGE}\n    command: --model m --swap-space 4\n"
    app = "services:\n  llm:\n    extends:\n      file: ../common/base.yml\n      service: base\n"
    _write(tmp_path, {"common/base.yml": common, "app/docker-compose.yml": app})
    found = _removed(tmp_path)
    assert found == [("--swap-space", "common/base.yml", *_at(common, "--swap-space"))]


def test_extends_another_file_with_its_own_command(tmp_path: Path) -> None:
    common = f"services:\n  base:\n    image: {IMAGE}\n"
    app = (
        "services:\n  llm:\n    extends: {file: common.yml, service: base}\n"
        "    command: [--model, m, --num-scheduler-steps, '4']\n"
    )
    _write(tmp_path, {"common.yml": common, "docker-compose.yml": app})
    assert _removed(tmp_path) == [("--num-scheduler-steps", "docker-compose.yml", *_at(app, "--num-scheduler-steps"))]


def test_include_joins_the_services(tmp_path: Path) -> None:
    engine = f"services:\n  engine:\n    image: {IMAGE}\n"
    top = "include:\n  - path: engine/compose.yaml\nservices:\n  web:\n    image: nginx\n"
    override = "services:\n  engine:\n    command: [--swap-space, '4']\n"
    _write(tmp_path, {"engine/compose.yaml": engine, "compose.yaml": top, "compose.override.yaml": override})
    assert _removed(tmp_path) == [("--swap-space", "compose.override.yaml", *_at(override, "--swap-space"))]


def test_non_vllm_services_extending_each_other_give_nothing(tmp_path: Path) -> None:
    text = (
        "services:\n  cache:\n    image: redis:7\n    command: redis-server --swap-space 4\n"
        "  cache2:\n    extends: cache\n    command: [redis-server, --num-scheduler-steps, '4']\n"
    )
    _write(tmp_path, {"docker-compose.yml": text, "docker-compose.override.yml": "services:\n  cache:\n    environment: {A: b}\n"})
    assert _removed(tmp_path) == []
    assert not [f for f in _scan(tmp_path)[1] if f.kind == FactKind.LAUNCH]


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({"docker-compose.yml": f"services:\n  a:\n    image: {IMAGE}\n    extends: b\n  b:\n    extends: a\n"}, "cycle"),
        ({"docker-compose.yml": f"services:\n  a:\n    image: {IMAGE}\n    extends: a\n"}, "cycle"),
        ({"docker-compose.yml": f"services:\n  a:\n    image: {IMAGE}\n    extends: {{file: gone.yml, service: x}}\n"}, "gone.yml"),
        ({"docker-compose.yml": "services:\n  a:\n    extends: {file: gone.yml, service: vllm}\n"}, "gone.yml"),
        ({"docker-compose.yml": f"services:\n  a:\n    image: {IMAGE}\n    extends: nope\n"}, "nope"),
        ({"compose.yaml": f"include:\n  - missing/vllm.yaml\nservices:\n  a:\n    image: {IMAGE}\n"}, "missing/vllm.yaml"),
    ],
)
def test_what_cannot_be_read_is_an_unresolved_note(tmp_path: Path, files: dict[str, str], why: str) -> None:
    _write(tmp_path, files)
    report = _report(tmp_path)
    notes = [n for n in report.notes if n.startswith("unresolved: ") and why in n]
    assert notes, report.notes
    name = next(iter(files))
    assert f"{name}:" in notes[0]


CHAIN_BASE = f"services:\n  engine:\n    image: {IMAGE}\n    command: [--model, m]\n"
CHAIN_PROD = "services:\n  engine:\n    command: [--model, m, --swap-space, '16']\n"


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("scripts/deploy.sh", "#!/bin/sh\ndocker compose -f deploy/base.yml -f deploy/prod.yml up -d\n"),
        ("scripts/deploy.sh", "#!/bin/sh\nset -e\ndocker --log-level warn compose --file=../deploy/base.yml --file ../deploy/prod.yml -p x up\n"),
        ("deploy.sh", "export COMPOSE_FILE=deploy/base.yml:deploy/prod.yml\ndocker compose up -d\n"),
        ("deploy.sh", "COMPOSE_FILE=deploy/base.yml:deploy/prod.yml docker-compose pull\n"),
        ("deploy.sh", "#!/bin/bash\ncd deploy && docker compose -f base.yml -f prod.yml up -d\n"),
        ("scripts/up.sh", "#!/bin/bash\ncd ../deploy\ndocker compose -f base.yml -f prod.yml up -d\n"),
        ("Makefile", "FILES = -f deploy/base.yml -f deploy/prod.yml\nup:\n\tdocker compose $(FILES) up -d\n"),
        (".github/workflows/deploy.yml", "on: push\njobs:\n  d:\n    runs-on: x\n    steps:\n      - run: docker compose -f base.yml -f prod.yml up\n        working-directory: deploy\n"),
        (".gitlab-ci.yml", "deploy:\n  script:\n    - docker compose -f deploy/base.yml -f deploy/prod.yml up -d\n"),
    ],
)
def test_a_compose_file_chain_is_merged_in_order(tmp_path: Path, rel: str, text: str) -> None:
    _write(tmp_path, {"deploy/base.yml": CHAIN_BASE, "deploy/prod.yml": CHAIN_PROD, rel: text})
    assert _removed(tmp_path) == [("--swap-space", "deploy/prod.yml", *_at(CHAIN_PROD, "--swap-space"))]


def test_the_chain_order_decides_which_command_runs(tmp_path: Path) -> None:
    # prod first, base last: base's clean command replaces prod's
    script = "#!/bin/sh\ndocker compose -f deploy/prod.yml -f deploy/base.yml up -d\n"
    _write(tmp_path, {"deploy/base.yml": CHAIN_BASE, "deploy/prod.yml": CHAIN_PROD, "deploy.sh": script})
    assert _removed(tmp_path) == []


def test_a_chain_naming_a_missing_file_is_an_unresolved_note(tmp_path: Path) -> None:
    script = "#!/bin/sh\n# vllm\ndocker compose -f deploy/base.yml -f deploy/gone.yml up -d\n"
    _write(tmp_path, {"deploy/base.yml": CHAIN_BASE, "deploy.sh": script})
    notes = [n for n in _report(tmp_path).notes if "deploy/gone.yml" in n]
    assert len(notes) == 1 and "deploy.sh:3:" in notes[0], notes


def test_fix_removes_a_chain_flag_in_its_file(tmp_path: Path) -> None:
    script = "#!/bin/sh\ndocker compose -f deploy/base.yml -f deploy/prod.yml up -d\n"
    _write(tmp_path, {"deploy/base.yml": CHAIN_BASE, "deploy/prod.yml": CHAIN_PROD, "deploy.sh": script})
    out = _fix(tmp_path)
    fixed = yaml.safe_load((tmp_path / "deploy/prod.yml").read_text())
    assert fixed["services"]["engine"]["command"] == ["--model", "m"], out
    assert (tmp_path / "deploy.sh").read_text() == script


def test_an_override_build_from_a_vllm_base_image_checks_the_command(tmp_path: Path) -> None:
    base = "services:\n  engine:\n    image: acme/engine:dev\n    command: [--swap-space, '4']\n"
    override = "services:\n  engine:\n    build:\n      context: ./img\n      dockerfile: Containerfile\n"
    files = {
        "docker-compose.yml": base,
        "docker-compose.override.yml": override,
        "img/Containerfile": f"FROM {IMAGE}\nRUN true\n",
    }
    _write(tmp_path, files)
    assert _removed(tmp_path) == [("--swap-space", "docker-compose.yml", *_at(base, "--swap-space"))]


def test_an_override_command_reaches_the_built_entry_point_script(tmp_path: Path) -> None:
    base = "services:\n  llm:\n    build:\n      context: .\n      dockerfile: Dockerfile.x\n"
    override = "services:\n  llm:\n    command: [--model, m, --swap-space, '4']\n"
    files = {
        "docker-compose.yml": base,
        "docker-compose.override.yml": override,
        "Dockerfile.x": f'FROM {IMAGE}\nCOPY entrypoint.sh /entrypoint.sh\nENTRYPOINT ["/entrypoint.sh"]\n',
        "entrypoint.sh": '#!/bin/sh\nexec vllm serve "$@"\n',
    }
    _write(tmp_path, files)
    assert _removed(tmp_path) == [("--swap-space", "docker-compose.override.yml", *_at(override, "--swap-space"))]


def test_an_override_command_interpolates_the_project_dotenv(tmp_path: Path) -> None:
    base = "services:\n  engine:\n    image: vllm/vllm-openai:${TAG:-v0.31.0}\n"
    override = "services:\n  engine:\n    command: --model m ${EXTRA}\n"
    dotenv = "TAG=v0.20.0\nEXTRA=--swap-space 4\n"
    _write(tmp_path, {"app/compose.yaml": base, "app/compose.override.yaml": override, "app/.env": dotenv})
    report = _report(tmp_path)
    assert report.from_version == "0.20.0"
    assert _removed(tmp_path) == [("--swap-space", "app/.env", 2, 7)]


def test_a_cycle_across_files_is_an_unresolved_note(tmp_path: Path) -> None:
    one = f"services:\n  a:\n    image: {IMAGE}\n    extends: {{file: two.yml, service: b}}\n"
    two = "services:\n  b:\n    extends: {file: docker-compose.yml, service: a}\n"
    _write(tmp_path, {"docker-compose.yml": one, "two.yml": two})
    notes = [n for n in _report(tmp_path).notes if "cycle" in n]
    assert notes and "two.yml" in notes[0], notes


def test_an_environment_override_tag_replaces_the_base_environment(tmp_path: Path) -> None:
    base = f"services:\n  engine:\n    image: {IMAGE}\n    environment:\n      VLLM_USE_V1: '0'\n"
    override = "services:\n  engine:\n    environment: !override\n      OTHER: '1'\n"
    _write(tmp_path, {"docker-compose.yml": base, "docker-compose.override.yml": override})
    facts = _scan(tmp_path)[1]
    merged = [f for f in facts if f.kind == FactKind.ENV_VAR and f.location.path == "docker-compose.override.yml"]
    assert [f.name for f in merged] == ["OTHER"]
    launch = next(f for f in facts if f.kind == FactKind.LAUNCH)
    assert launch.location.path == "docker-compose.yml"  # the image's own launch, as the base alone has it too


def test_an_include_of_several_files_merges_them_in_order(tmp_path: Path) -> None:
    engine = f"services:\n  engine:\n    image: {IMAGE}\n    command: [--model, m]\n"
    prod = "services:\n  engine:\n    command: [--model, m, --swap-space, '4']\n"
    top = "include:\n  - path: [engine/base.yml, engine/prod.yml]\n"
    _write(tmp_path, {"engine/base.yml": engine, "engine/prod.yml": prod, "compose.yaml": top})
    assert _removed(tmp_path) == [("--swap-space", "engine/prod.yml", *_at(prod, "--swap-space"))]


@pytest.mark.parametrize(
    ("line", "files"),
    [
        ("docker compose -f a.yml -f b.yml up", ["a.yml", "b.yml"]),
        ("docker -H tcp://h compose --env-file e -f 'a.yml' --file=b.yml up", ["a.yml", "b.yml"]),
        ("docker-compose -p proj -fa.yml up", ["a.yml"]),
        ("sudo -E env COMPOSE_FILE=a.yml:b.yml docker compose up", ["a.yml", "b.yml"]),
        ("timeout 60 docker compose --profile gpu --file a.yml up", ["a.yml"]),
        ("F=x.yml\ndocker compose -f $F -f b.yml up", ["x.yml", "b.yml"]),
        ("docker compose up -d", []),  # the folder's default files: each file's own reading
        ("docker compose -f $UNSET up", ["$UNSET"]),  # kept, marked unresolved: never guessed
        ("helm upgrade r chart -f a.yml", []),
    ],
)
def test_compose_chains_of_a_command_line(line: str, files: list[str]) -> None:
    chains = compose_chains(parse_shell(line))
    assert [n.written for chain in chains for n in chain] == files


def test_an_unresolved_chain_file_is_an_unresolved_note(tmp_path: Path) -> None:
    script = "#!/bin/sh\ndocker compose -f deploy/base.yml -f \"$EXTRA\" up -d\n"
    _write(tmp_path, {"deploy/base.yml": CHAIN_BASE, "deploy.sh": script})
    notes = [n for n in _report(tmp_path).notes if "EXTRA" in n]
    assert len(notes) == 1 and "deploy.sh:2:" in notes[0] and "not resolved" in notes[0], notes


def test_a_gitlab_ci_include_is_no_compose_include(tmp_path: Path) -> None:
    ci = "include:\n  - templates/deploy.yml\n  - local: other.yml\ndeploy:\n  script:\n    - vllm serve m --max-num-seqs 8\n"
    _write(tmp_path, {".gitlab-ci.yml": ci, "templates/deploy.yml": "stages: [x]\n"})
    assert not [n for n in _report(tmp_path).notes if n.startswith("unresolved")]


def _chain(root: Path, paths: list[str]) -> list[Fact]:
    """The facts of ``docker compose -f P1 -f P2 ...`` over the files under ``root``."""

    def read(rel: str) -> SourceFile | None:
        path = root / rel
        return SourceFile(rel, path.read_text()) if path.is_file() else None

    where = Location("deploy.sh", 1, 1, 1, 2)
    return chain_facts([(p, Named(p, 1, 1, len(p)), where) for p in paths], read)


@pytest.mark.parametrize(
    ("third", "checked"),
    [
        ("    build:\n      target: prod\n", True),  # key by key: the context and dockerfile stay
        ("    build: !reset null\n", False),  # no build: the image is acme's own
        ("    build: !override\n      context: ./other\n", False),  # replaced whole: other/Dockerfile
        ("    environment: {A: b}\n", True),
    ],
)
def test_a_build_merges_key_by_key(tmp_path: Path, third: str, checked: bool) -> None:
    files = {
        "base.yml": "services:\n  engine:\n    image: acme/engine:dev\n    command: [--swap-space, '4']\n",
        "build.yml": "services:\n  engine:\n    build:\n      context: ./img\n      dockerfile: Containerfile.vllm\n",
        "third.yml": "services:\n  engine:\n" + third,
        "img/Containerfile.vllm": f"FROM {IMAGE} AS base\nFROM base AS prod\nRUN true\n",
        "other/Dockerfile": "FROM python:3.12\n",
    }
    _write(tmp_path, files)
    facts = _chain(tmp_path, ["base.yml", "build.yml", "third.yml"])
    assert any(f.kind == FactKind.LAUNCH for f in facts) is checked
    assert any(f.kind == FactKind.ARG and f.name == "swap_space" for f in facts) is checked


def test_a_later_file_build_paths_start_from_the_first_file(tmp_path: Path) -> None:
    files = {
        "deploy/base.yml": "services:\n  engine:\n    image: acme/engine:dev\n    command: [--swap-space, '4']\n",
        "overrides/gpu.yml": "services:\n  engine:\n    build: {context: ./img}\n",
        "deploy/img/Dockerfile": f"FROM {IMAGE}\n",
        "overrides/img/Dockerfile": "FROM python:3.12\n",  # not what compose builds
    }
    _write(tmp_path, files)
    facts = _chain(tmp_path, ["deploy/base.yml", "overrides/gpu.yml"])
    assert [f.location.path for f in facts if f.kind == FactKind.ARG] == ["deploy/base.yml"]
