"""The bundled packs built without validation (model.construct) are the validated packs, and
the plain records of model.pack/model.evidence have the fields of the pack schema's models."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from vllm_upgrade_check.knowledge import packbundle
from vllm_upgrade_check.knowledge.registry import load_pack_file
from vllm_upgrade_check.model import evidence, evidence_schema, pack_schema
from vllm_upgrade_check.model import pack as records
from vllm_upgrade_check.model.construct import construct
from vllm_upgrade_check.model.pack import Fix, FixAction, Pack, Rule
from vllm_upgrade_check.model.pack_schema import to_record, validate_pack
from vllm_upgrade_check.model.records import Record

RULES = Path(__file__).resolve().parent.parent / "rules"
PACKS = sorted(RULES.glob("*.yaml"))


def _same(a: Any, b: Any, where: str = "") -> list[str]:
    """Every place where ``a`` and ``b`` differ in value or type."""
    if type(a) is not type(b):
        return [f"{where}: {type(a).__name__} != {type(b).__name__}"]
    if isinstance(a, Record):
        return [d for name in type(a)._fields for d in _same(getattr(a, name), getattr(b, name), f"{where}.{name}")]
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _same(x, y, f"{where}[{i}]")]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{where}: keys differ"]
        return [d for k in a for d in _same(a[k], b[k], f"{where}[{k!r}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def _schema_models() -> list[type[BaseModel]]:
    found = []
    for module in (pack_schema, evidence_schema):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == module.__name__:
                if value.__name__ != "_Strict":  # the shared configuration, no fields of its own
                    found.append(value)
    return found


def test_there_are_packs() -> None:
    assert len(PACKS) > 60


def _record_of(model: type[BaseModel]) -> type[Record]:
    if issubclass(model, evidence_schema._UrlEvidence):  # one record for the four kinds of public text
        return evidence.UrlEvidence
    return getattr(records, model.__name__, None) or getattr(evidence, model.__name__)


@pytest.mark.parametrize("model", _schema_models(), ids=lambda m: m.__name__)
def test_every_schema_model_has_a_record_of_its_name_and_fields(model: type[BaseModel]) -> None:
    record = _record_of(model)
    assert issubclass(record, Record)
    assert record._fields == tuple(model.model_fields)
    for name, info in model.model_fields.items():
        if info.is_required():
            assert name not in record._defaults, f"{model.__name__}.{name} is required in the schema"
        elif info.default_factory is not None:
            made = record._defaults[name].make()
            assert made == info.default_factory() and made is not record._defaults[name].make()  # type: ignore[call-arg]
        else:
            assert record._defaults[name] == info.default, f"{model.__name__}.{name} default"


def test_every_record_of_a_pack_has_a_schema_model() -> None:
    twins = {_record_of(m) for m in _schema_models()}
    for module in (records, evidence):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Record) and value.__module__ == module.__name__:
                if not value.__name__.startswith("_"):  # a base sharing fields (_MatchBase, _ValuedMatch)
                    assert value in twins, value.__name__


def test_the_url_evidence_record_takes_every_kind_of_public_text() -> None:
    kinds = {
        typing.get_args(m.model_fields["kind"].annotation)[0]
        for m in _schema_models()
        if issubclass(m, evidence_schema._UrlEvidence) and m is not evidence_schema._UrlEvidence
    }
    assert kinds == set(typing.get_args(typing.get_type_hints(evidence.UrlEvidence)["kind"]))
    rule = yaml.safe_load((RULES / "0.28.0.yaml").read_text(encoding="utf-8"))["rules"][0]
    for kind in sorted(kinds):
        item = {"kind": kind, "url": "https://example.org/x", "finding": " read "}
        data = {**rule, "evidence": [*rule["evidence"], item]}
        validated = to_record(pack_schema.Rule.model_validate(data))
        assert validated == construct(Rule, data)
        assert validated.evidence[-1] == evidence.UrlEvidence(kind=kind, url="https://example.org/x", finding="read")
        assert validated.evidence[-1].text == f"{kind}: https://example.org/x (read)"


@pytest.mark.parametrize("path", PACKS, ids=lambda p: p.name)
def test_constructed_pack_is_the_validated_pack(path: Path) -> None:
    data = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8"))))  # as the bundle holds it
    assert _same(validate_pack(data), construct(Pack, data)) == []


def test_the_wheel_bundle_path_constructs_and_matches(tmp_path: Path) -> None:
    text = (RULES / "0.28.0.yaml").read_text(encoding="utf-8")
    bundle = packbundle.read_bundle(packbundle.compile_bundle([("0.28.0.yaml", text)]))
    copy_ = tmp_path / "0.28.0.yaml"
    copy_.write_text(text, encoding="utf-8")
    fast = load_pack_file(copy_, trusted=True, bundle=bundle)
    assert _same(fast, validate_pack(yaml.safe_load(text))) == []
    # an edited file no longer matches the bundle's digest: read and validated from its YAML
    copy_.write_text(text.replace("release: 0.28.0", "release: 0.28.0\nbogus: 1", 1), encoding="utf-8")
    with pytest.raises(Exception, match="bogus"):
        load_pack_file(copy_, trusted=True, bundle=bundle)


def test_construct_refuses_data_of_another_shape() -> None:
    rule = yaml.safe_load((RULES / "0.28.0.yaml").read_text(encoding="utf-8"))["rules"][0]
    with pytest.raises(KeyError, match="nmae"):
        construct(Rule, {**rule, "nmae": "x"})
    with pytest.raises(KeyError, match="required"):
        construct(Rule, {k: v for k, v in rule.items() if k != "id"})
    with pytest.raises(TypeError):
        construct(Rule, ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(KeyError):  # a match kind no record has
        construct(Rule, {**rule, "match": {"kind": "regex", "name": "x"}})


def test_constructed_strings_are_stripped_as_validation_strips_them() -> None:
    rule = yaml.safe_load((RULES / "0.28.0.yaml").read_text(encoding="utf-8"))["rules"][0]
    padded = {**rule, "message": "  " + rule["message"] + "\n", "tags": [" a ", "b\n"]}
    validated = to_record(pack_schema.Rule.model_validate(padded))
    assert construct(Rule, padded).message == validated.message == rule["message"].strip()
    assert construct(Rule, padded).tags == validated.tags == ["a", "b"]


def _a_rule() -> Rule:
    return load_pack_file(RULES / "0.28.0.yaml", trusted=True).rules[0]


def test_records_are_frozen_compared_by_value_and_copied_by_value() -> None:
    rule = _a_rule()
    with pytest.raises(AttributeError, match="frozen"):
        rule.message = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        rule.nmae = "x"  # type: ignore[attr-defined]
    again = construct(Rule, json.loads(json.dumps(yaml.safe_load((RULES / "0.28.0.yaml").read_text())["rules"][0])))
    assert again == rule and again is not rule
    assert rule.replace(message="other") != rule
    assert rule.replace(message="other").message == "other" and rule.message != "other"
    assert pickle.loads(pickle.dumps(rule)) == rule
    assert copy.deepcopy(rule) == rule
    with pytest.raises(TypeError, match="nmae"):
        rule.replace(nmae="x")
    with pytest.raises(TypeError):  # it holds lists, as a frozen pydantic model holding lists does
        hash(rule)
    assert hash(rule.fix) == hash(Fix(**{n: getattr(rule.fix, n) for n in Fix._fields}))


def test_record_constructor_applies_defaults_and_refuses_unknown_or_missing_fields() -> None:
    fix = Fix(summary="Do it.")
    assert (fix.action, fix.replacement, fix.available_in) == (FixAction.NONE, None, None)
    a, b = records.WheelFacts(), records.WheelFacts()
    assert a.requires_dist == [] and a.requires_dist is not b.requires_dist  # a new list each
    with pytest.raises(TypeError, match="summary"):
        Fix()
    with pytest.raises(TypeError, match="colour"):
        Fix(summary="x", colour="red")
    assert "Fix(summary='Do it.'" in repr(fix)


def test_a_plain_scan_path_imports_no_pydantic_model_module() -> None:
    """Loading the bundled packs and the scan engine makes no pydantic model: the schema
    modules are for validation only."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from vllm_upgrade_check.knowledge import packbundle\n"
        "from vllm_upgrade_check.knowledge.registry import load_pack_file\n"
        "import vllm_upgrade_check.engine.scan, vllm_upgrade_check.cli.scan_cmd\n"
        f"paths = sorted(Path({str(RULES)!r}).glob('*.yaml'))\n"
        "bundle = packbundle.read_bundle(packbundle.compile_bundle((p.name, p.read_text()) for p in paths))\n"
        "packs = [load_pack_file(p, trusted=True, bundle=bundle) for p in paths]\n"
        "assert len(packs) == len(paths) > 60\n"
        "print(sorted(m for m in sys.modules if m.startswith('pydantic') or m.endswith('_schema')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
