"""One fact and one subject give one finding: where rules of several releases of the window
match the same words (``LLM(swap_space=4)``: ignored from 0.18.0, a ``TypeError`` from
0.26.0; a flag deprecated in one release and removed in a later one), the finding of the
release that breaks it stands, whichever way the keyword is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()


def _findings(root: Path, frm: str, to: str, *extra: str) -> list[tuple[int, str, str]]:
    result = runner.invoke(
        app, ["scan", str(root), "--no-host", "--no-cache", "--from", frm, "--to", to, "-f", "json", *extra]
    )
    assert result.exit_code in (0, 1), result.output
    return sorted(
        (f["line"], f["rule_id"], f["severity"]) for f in json.loads(result.stdout)["findings"]
    )


SWAP = """from vllm import LLM
a = LLM(**{"swap_space": 4})
b = LLM(model="m", swap_space=4)
kw = {"swap_space": 4}
c = LLM(model="m", **kw)
d = LLM(model="m", **dict(swap_space=4))
"""


@pytest.mark.parametrize(
    ("frm", "to", "rule", "severity"),
    [
        ("0.17.0", "0.33.0", "VUC0260-009", "blocker"),  # both in the window: the TypeError
        ("0.17.0", "0.26.0", "VUC0260-009", "blocker"),
        ("0.20.0", "0.33.0", "VUC0260-009", "blocker"),
        ("0.17.0", "0.20.0", "VUC0180-002", "warning"),  # only the 0.18.0 rule is in the window
    ],
)
def test_swap_space_keyword_is_one_finding_per_place(tmp_path: Path, frm: str, to: str, rule: str, severity: str) -> None:
    (tmp_path / "app.py").write_text(SWAP)
    found = _findings(tmp_path, frm, to)
    lines = [line for line, _rule, _sev in found]
    assert len(lines) == len(set(lines)), found  # never two findings on one place
    assert {line for line in lines} >= {2, 3, 4}
    assert all((r, s) == (rule, severity) for _line, r, s in found), found


def _pack(root: Path, release: str, rules: str) -> None:
    (root / "packs").mkdir(exist_ok=True)
    (root / "packs" / f"{release}.yaml").write_text(f"release: {release}\nrules:\n{rules}")


def _rule(rule_id: str, severity: str, name: str, extra: str = "", values: str = "") -> str:
    match = f"{{kind: cli_flag, name: {name}{', values: [' + values + ']' if values else ''}}}"
    return (
        f"  - id: {rule_id}\n    name: r-{rule_id.lower()}\n    severity: {severity}\n{extra}"
        f"    match: {match}\n    message: m\n"
        "    fix: {summary: Remove it., action: remove_arg, applicability: safe}\n"
        "    docs: {why: w}\n    evidence:\n      - {kind: policy, owner: t, reason: r}\n"
    )


def test_deprecated_then_removed_keeps_the_removal(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --enforce-eager\nvllm serve m --max-num-seqs 4\n")
    _pack(tmp_path, "0.19.0", _rule("ACME0190-001", "warning", "enforce_eager"))
    _pack(tmp_path, "0.22.0", _rule("ACME0220-001", "blocker", "enforce_eager"))
    found = _findings(tmp_path, "0.18.0", "0.25.0", "--rules", str(tmp_path / "packs"), "--select", "ACME")
    assert found == [(1, "ACME0220-001", "blocker")]
    # only the deprecation in the window: it stands
    found = _findings(tmp_path, "0.18.0", "0.20.0", "--rules", str(tmp_path / "packs"), "--select", "ACME")
    assert found == [(1, "ACME0190-001", "warning")]


def test_as_severe_keeps_the_earliest_release(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --enforce-eager\n")
    _pack(tmp_path, "0.19.0", _rule("ACME0190-001", "warning", "enforce_eager"))
    _pack(tmp_path, "0.22.0", _rule("ACME0220-001", "warning", "enforce_eager"))
    found = _findings(tmp_path, "0.18.0", "0.25.0", "--rules", str(tmp_path / "packs"), "--select", "ACME")
    assert found == [(1, "ACME0190-001", "warning")]


def test_other_values_and_other_places_are_other_changes(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "vllm serve m --quantization aqlm --enforce-eager\nvllm serve n --quantization marlin --enforce-eager\n"
    )
    _pack(tmp_path, "0.19.0", _rule("ACME0190-001", "blocker", "quantization", values="aqlm"))
    _pack(tmp_path, "0.22.0", _rule("ACME0220-001", "blocker", "quantization", values="marlin"))
    _pack(tmp_path, "0.23.0", _rule("ACME0230-001", "warning", "enforce_eager"))
    found = _findings(tmp_path, "0.18.0", "0.25.0", "--rules", str(tmp_path / "packs"), "--select", "ACME")
    assert found == [
        (1, "ACME0190-001", "blocker"),
        (1, "ACME0230-001", "warning"),
        (2, "ACME0220-001", "blocker"),
        (2, "ACME0230-001", "warning"),
    ]
