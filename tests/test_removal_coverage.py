"""Every flag, engine arg and env var that some vLLM release removed is reported.

The lifetimes come from ``data/known_args.json`` (generated from the release wheels by
``scripts/gen_known_args.py``): an entry whose ``last`` release is older than the newest
release was removed in the release after ``last``. A launch that uses it, scanned with
``--from`` its last release and ``--to`` the newest, must get a rule's finding on its line
(the unknown-flag check does not count: it says nothing about the upgrade).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.knowledge.registry import load_registry
from vllm_upgrade_check.matching.checks import UNKNOWN_FLAG_ID
from vllm_upgrade_check.model.options import ScanOptions

DATA = json.loads(resources.files("vllm_upgrade_check").joinpath("data/known_args.json").read_text())
NEWEST = DATA["releases"][-1]
REGISTRY = load_registry()

NOT_REMOVED = {
    "-O": "still accepted: vLLM's parser rewrites -O itself since 0.12 (no add_argument alias)",
    "VLLM_CPU_MOE_PREPACK": "still listed in vllm/envs.py of 0.12.0 (line 1658)",
}
INTERNAL_ENV = ("VLLM_TEST_", "VLLM_DYNAMO_")
"""vLLM's own CI/test switches: no deployment sets them."""


def removed(table: str) -> list[tuple[str, str]]:
    return [
        (name, info["last"])
        for name, info in sorted(DATA[table].items())
        if info["last"] != NEWEST and name not in NOT_REMOVED and not name.startswith(INTERNAL_ENV)
    ]


def findings_on_line(tmp_path: Path, name: str, text: str, since: str, line: int) -> list[str]:
    (tmp_path / name).write_text(text)
    report = run_scan(ScanOptions.of(paths=[tmp_path], to_version=NEWEST, from_version=since), registry=REGISTRY)
    return [f.rule.id for f in report.findings if f.location.line == line and f.rule.id != UNKNOWN_FLAG_ID]


def test_the_data_covers_removals() -> None:
    assert (
        len(removed("cli_flags")) > 50 and len(removed("engine_args")) > 40 and len(removed("env_vars")) > 80
    )


@pytest.mark.parametrize(("flag", "last"), removed("cli_flags"))
def test_removed_cli_flag_is_reported(flag: str, last: str, tmp_path: Path) -> None:
    text = f"vllm serve my-model \\\n  {flag} 1\n"
    assert findings_on_line(tmp_path, "serve.sh", text, last, 2), f"{flag} (last in {last})"


@pytest.mark.parametrize(("arg", "last"), removed("engine_args"))
def test_removed_engine_arg_keyword_is_reported(arg: str, last: str, tmp_path: Path) -> None:
    text = f"from vllm import LLM\nllm = LLM(model='m',\n          {arg}=1)\n"
    assert findings_on_line(tmp_path, "app.py", text, last, 3), f"{arg} (last in {last})"


@pytest.mark.parametrize(("var", "last"), removed("env_vars"))
def test_removed_env_var_is_reported(var: str, last: str, tmp_path: Path) -> None:
    text = f"#!/bin/sh\nexport {var}=1\nvllm serve my-model\n"
    assert findings_on_line(tmp_path, "serve.sh", text, last, 2), f"{var} (last in {last})"
