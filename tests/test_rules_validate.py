"""``rules validate``: every problem with its file and line in one run, typos named as unknown
keys, rule ids checked against the bundled packs, and policy evidence for organisation rules."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app

_register()
runner = CliRunner()

RULE = """  - id: {id}
    {name_key}: {name}
    severity: {severity}
    message: m
    docs: {{why: w}}
    evidence: [{{kind: policy, owner: platform team, reason: r}}]
    match: {{kind: engine_arg, name: x{extra}}}
    fix: {{summary: s}}
"""


def _pack(release: str, *rules: dict[str, str]) -> str:
    out = f"release: {release}\nrules:\n"
    for rule in rules:
        values = {"name_key": "name", "name": "r", "severity": "warning", "extra": "", **rule}
        out += RULE.format(**values)
    return out


def _validate(*paths: Path) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["rules", "validate", *map(str, paths)])
    return result.exit_code, result.output.strip().splitlines()


def test_every_problem_with_file_and_line_in_one_run(tmp_path: Path) -> None:
    pack = tmp_path / "0.27.0.yaml"
    pack.write_text(
        _pack(
            "0.27.0",
            {"id": "ORG-001", "name_key": "nmae"},
            {"id": "ORG-002", "severity": "blockr"},
            {"id": "ORG-003", "extra": ", colour: red"},
        )
    )
    code, lines = _validate(pack)
    assert code == 2
    assert lines[:-1] == [
        f"{pack}:4: rules[0]: unknown key nmae (did you mean name?)",
        f"{pack}:13: rules[1].severity: must be one of blocker, warning, info",
        f"{pack}:25: rules[2].match: unknown key colour",
    ]
    assert lines[-1] == "3 problem(s) in the rule pack(s)"


def test_problems_of_several_files_are_all_reported(tmp_path: Path) -> None:
    (tmp_path / "0.27.0.yaml").write_text(_pack("0.27.0", {"id": "ORG-001", "name_key": "nmae"}))
    (tmp_path / "0.28.0.yaml").write_text("release: 0.28.0\nrules: [\n")
    (tmp_path / "0.29.0.yaml").write_text(_pack("0.28.0", {"id": "ORG-009"}))
    code, lines = _validate(tmp_path)
    assert code == 2 and len(lines) == 4
    assert lines[0].startswith(f"{tmp_path / '0.27.0.yaml'}:4: ")
    assert lines[1].startswith(f"{tmp_path / '0.28.0.yaml'}:")
    assert lines[2] == f"{tmp_path / '0.29.0.yaml'}:1: file name says 0.29.0 but release is 0.28.0"


def test_rule_ids_clash_with_the_bundled_packs_and_each_other(tmp_path: Path) -> None:
    (tmp_path / "0.27.0.yaml").write_text(_pack("0.27.0", {"id": "VUC0270-001"}, {"id": "ORG-001"}))
    (tmp_path / "0.28.0.yaml").write_text(_pack("0.28.0", {"id": "ORG-001"}))
    code, lines = _validate(tmp_path)
    assert code == 2
    assert f"{tmp_path / '0.27.0.yaml'}:3: rule id VUC0270-001 is already used in the bundled pack rules/0.27.0.yaml" in lines
    assert f"{tmp_path / '0.28.0.yaml'}:3: rule id ORG-001 is already used in {tmp_path / '0.27.0.yaml'}" in lines
    # what validate accepts, scan --rules accepts
    (tmp_path / "0.27.0.yaml").write_text(_pack("0.27.0", {"id": "ORG-001"}))
    (tmp_path / "0.28.0.yaml").write_text(_pack("0.28.0", {"id": "ORG-002"}))
    assert _validate(tmp_path) == (0, ["ok: 2 pack(s), 2 rule(s)"])
    (tmp_path / "run.sh").write_text("vllm serve m\n")
    result = runner.invoke(app, ["scan", str(tmp_path / "run.sh"), "--rules", str(tmp_path), "--to", "0.28.0"])
    assert result.exit_code == 0, result.output


def test_an_id_clash_is_reported_with_the_other_problems_of_its_pack(tmp_path: Path) -> None:
    # one run gives every problem: the clash is not held back until the schema errors are fixed
    pack = tmp_path / "0.28.0.yaml"
    pack.write_text(_pack("0.28.0", {"id": "VUC0270-001", "name_key": "nmae"}, {"id": "ORG-001", "severity": "blockr"}))
    other = tmp_path / "0.29.0.yaml"
    other.write_text(_pack("0.29.0", {"id": "ORG-001"}))
    code, lines = _validate(tmp_path)
    assert code == 2
    assert lines[:-1] == [
        f"{pack}:3: rule id VUC0270-001 is already used in the bundled pack rules/0.27.0.yaml",
        f"{pack}:4: rules[0]: unknown key nmae (did you mean name?)",
        f"{pack}:13: rules[1].severity: must be one of blocker, warning, info",
        f"{other}:3: rule id ORG-001 is already used in {pack}",
    ]


def test_the_bundled_packs_validate_against_themselves(repo_root: Path) -> None:
    code, lines = _validate(repo_root / "rules")
    assert code == 0 and lines[-1].startswith("ok: ")


def test_policy_evidence_is_shown_by_explain(tmp_path: Path) -> None:
    (tmp_path / "0.27.0.yaml").write_text(_pack("0.27.0", {"id": "ORG-001"}))
    result = runner.invoke(app, ["explain", "ORG-001", "--rules", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "policy (platform team): r" in result.output


def test_no_bundled_rule_cites_a_policy(repo_root: Path) -> None:
    import yaml

    for pack in sorted((repo_root / "rules").glob("*.yaml")):
        for rule in yaml.safe_load(pack.read_text()).get("rules") or []:
            assert all(e.get("kind") != "policy" for e in rule["evidence"]), (pack.name, rule["id"])
