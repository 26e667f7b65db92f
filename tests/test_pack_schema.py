"""The JSON Schema that ``rules schema`` prints says exactly what the loader accepts.

Each ``tests/schema/*.ok.yaml`` must load and validate against the schema; each
``*.fail.yaml`` must be refused by both. Every shipped pack validates against the schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from vllm_upgrade_check.cli import _register, app
from vllm_upgrade_check.errors import RulePackError
from vllm_upgrade_check.knowledge.registry import load_pack_text

_register()
CASES = Path(__file__).resolve().parent / "schema"
RULES = Path(__file__).resolve().parents[1] / "rules"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    result = CliRunner().invoke(app, ["rules", "schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _cases(suffix: str) -> list[Path]:
    found = sorted(CASES.glob(f"*.{suffix}.yaml"))
    assert found, f"no *.{suffix}.yaml cases"
    return found


@pytest.mark.parametrize("case", _cases("ok"), ids=lambda p: p.name)
def test_ok_cases_pass_the_loader_and_the_schema(case: Path, validator: jsonschema.Draft202012Validator) -> None:
    text = case.read_text()
    load_pack_text(text, case.name)
    assert not list(validator.iter_errors(yaml.safe_load(text)))


@pytest.mark.parametrize("case", _cases("fail"), ids=lambda p: p.name)
def test_fail_cases_fail_the_loader_and_the_schema(case: Path, validator: jsonschema.Draft202012Validator) -> None:
    text = case.read_text()
    with pytest.raises(RulePackError):
        load_pack_text(text, case.name)
    assert list(validator.iter_errors(yaml.safe_load(text))), "the schema accepts what the loader refuses"


@pytest.mark.parametrize("pack", sorted(RULES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_pack_validates_against_the_schema(pack: Path, validator: jsonschema.Draft202012Validator) -> None:
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(pack.read_text()))]
    assert not errors, errors[:3]


def test_pack_texts_speak_of_vllm_sources_only() -> None:
    """Rule texts cite vLLM's releases, PRs, docs and wheels, not second-hand articles."""
    import re

    words = re.compile(r"seed article|the article says|seed articles", re.IGNORECASE)
    rules_dir = Path(__file__).resolve().parents[1] / "rules"
    offending = [
        f"{path.name}:{number}"
        for path in sorted(rules_dir.glob("*.yaml"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if words.search(line)
    ]
    assert not offending, offending


@pytest.mark.parametrize("breaks", ["\n", "\r\n", "\u2028", "\x0b", "\x85"])
def test_a_value_with_line_breaks_is_quoted_on_one_line(breaks: str) -> None:
    """A pack error that quotes a bad value holding line breaks (pydantic repeats the value)
    stays one line: every break is written as its escape."""
    kind = f"engine{breaks * 3}_arg"
    base = (CASES / "dependency.ok.yaml").read_text()
    text = base.replace("match: {kind: dependency,", f"match: {{kind: {json.dumps(kind)},")
    assert text != base
    with pytest.raises(RulePackError) as caught:
        load_pack_text(text, "bad.yaml")
    shown = str(caught.value)
    assert shown.startswith("bad.yaml:") and len(shown.splitlines()) == 1, shown
    assert "engine" in shown and "_arg" in shown, shown
