"""``docker compose -f`` paths after a ``cd``: relative to the folder the script changed to
(``cd deploy && ...``, ``cd deploy; ...``, ``pushd``, a subshell), until ``popd``; a
Makefile's recipe lines each run in a shell of their own (a ``cd`` on one line is not in
force on the next, unless ``\\`` continues it or ``.ONESHELL:`` is set).
``--project-directory`` does not move ``-f`` paths: compose reads them from the working
directory (compose-spec/compose-go PR #145)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.parsing.shell import parse_shell
from vllm_upgrade_check.sources.scanners.compose_cli import compose_chains
from vllm_upgrade_check.sources.scanners.makefile import make_shell_text, recipe_shells

REMOVED = "VUC0180-001"  # --swap-space
BASE = 'services:\n  engine:\n    image: vllm/vllm-openai:v0.20.0\n    command: ["--model", "m"]\n'
PROD = 'services:\n  engine:\n    command: ["--model", "m", "--swap-space", "16"]\n'


def _removed(root: Path, files: dict[str, str]) -> list[tuple[str | None, int | None]]:
    files = {"deploy/base.yml": BASE, "deploy/prod.yml": PROD, **files}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    report = run_scan(ScanOptions.of(paths=[root], from_version="0.20.0", to_version="0.32.0"))
    return sorted((f.location.path, f.location.line) for f in report.findings if f.rule.id == REMOVED)


@pytest.mark.parametrize(
    "script",
    [
        "cd deploy && docker compose -f base.yml -f prod.yml up -d",
        "cd deploy; docker-compose -f base.yml -f prod.yml up -d",
        "cd deploy\ndocker compose --file base.yml --file=prod.yml up",
        'cd "deploy" && sudo docker compose -f base.yml -f prod.yml up',
        "pushd deploy\ndocker compose -f base.yml -f prod.yml up\npopd",
        "(cd deploy && docker compose -f base.yml -f prod.yml up -d)",
        "cd deploy && COMPOSE_FILE=base.yml:prod.yml docker compose up",
        "docker compose --project-directory deploy -f deploy/base.yml -f deploy/prod.yml up -d",
    ],
)
def test_a_chain_after_cd_reads_the_files_there(tmp_path: Path, script: str) -> None:
    assert _removed(tmp_path, {"up.sh": f"#!/bin/sh\n{script}\n"}) == [("deploy/prod.yml", 3)]


@pytest.mark.parametrize(
    "script",
    [
        "pushd deploy; popd; docker compose -f base.yml -f prod.yml up",
        "(cd deploy && docker compose ps)\ndocker compose -f base.yml -f prod.yml up",
        "(cd deploy; true); docker compose -f base.yml -f prod.yml up",
        "docker compose --project-directory deploy -f base.yml -f prod.yml up -d",
    ],
)
def test_a_chain_outside_the_folder_does_not_read_it(tmp_path: Path, script: str) -> None:
    assert _removed(tmp_path, {"up.sh": f"#!/bin/sh\n{script}\n"}) == []


@pytest.mark.parametrize(
    ("makefile", "found"),
    [
        ("up:\n\tcd deploy && docker compose -f base.yml -f prod.yml up -d\n", True),
        ("up:\n\tcd deploy && \\\n\t  docker compose -f base.yml -f prod.yml up -d\n", True),
        (".ONESHELL:\nup:\n\tcd deploy\n\tdocker compose -f base.yml -f prod.yml up -d\n", True),
        ("up:\n\tcd deploy\n\tdocker compose -f base.yml -f prod.yml up -d\n", False),
    ],
)
def test_a_makefile_cd_holds_for_its_own_recipe_line(tmp_path: Path, makefile: str, found: bool) -> None:
    assert _removed(tmp_path, {"Makefile": makefile}) == ([("deploy/prod.yml", 3)] if found else [])


def test_compose_chains_keep_the_cd_per_shell() -> None:
    text = "a:\n\tcd deploy\n\tdocker compose -f x.yml up\nb:\n\tcd deploy && docker compose -f y.yml up\n"
    shell, variables = make_shell_text(text)
    chains = compose_chains(parse_shell(shell, variables=variables), shell_of=recipe_shells(text))
    assert [(n.written, n.cd) for c in chains for n in c] == [("x.yml", ""), ("y.yml", "deploy")]


def test_a_cd_in_a_subshell_ends_with_it() -> None:
    script = "cd x; (cd deploy; docker compose -f a.yml up; cd y; docker compose -f c.yml up); docker compose -f b.yml up"
    chains = compose_chains(parse_shell(script))
    assert [(n.written, n.cd) for c in chains for n in c] == [("a.yml", "x/deploy"), ("c.yml", "x/deploy/y"), ("b.yml", "x")]
