"""The bundled packs built without validation (model.construct) are the validated packs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from vllm_upgrade_check.knowledge import packbundle
from vllm_upgrade_check.knowledge.registry import load_pack_file
from vllm_upgrade_check.model.construct import construct
from vllm_upgrade_check.model.pack import Pack, Rule

RULES = Path(__file__).resolve().parent.parent / "rules"
PACKS = sorted(RULES.glob("*.yaml"))


def _same(a: Any, b: Any, where: str = "") -> list[str]:
    """Every place where ``a`` and ``b`` differ in value, type or pydantic's fields-set."""
    if type(a) is not type(b):
        return [f"{where}: {type(a).__name__} != {type(b).__name__}"]
    if isinstance(a, BaseModel):
        out = [] if a.model_fields_set == b.model_fields_set else [f"{where}: fields set differ"]
        for name in type(a).model_fields:
            out += _same(getattr(a, name), getattr(b, name), f"{where}.{name}")
        return out
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _same(x, y, f"{where}[{i}]")]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{where}: keys differ"]
        return [d for k in a for d in _same(a[k], b[k], f"{where}[{k!r}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def test_there_are_packs() -> None:
    assert len(PACKS) > 60


@pytest.mark.parametrize("path", PACKS, ids=lambda p: p.name)
def test_constructed_pack_is_the_validated_pack(path: Path) -> None:
    data = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8"))))  # as the bundle holds it
    assert _same(Pack.model_validate(data), construct(Pack, data)) == []


def test_the_wheel_bundle_path_constructs_and_matches(tmp_path: Path) -> None:
    text = (RULES / "0.28.0.yaml").read_text(encoding="utf-8")
    bundle = packbundle.read_bundle(packbundle.compile_bundle([("0.28.0.yaml", text)]))
    copy = tmp_path / "0.28.0.yaml"
    copy.write_text(text, encoding="utf-8")
    fast = load_pack_file(copy, trusted=True, bundle=bundle)
    assert _same(fast, Pack.model_validate(yaml.safe_load(text))) == []
    # an edited file no longer matches the bundle's digest: read and validated from its YAML
    copy.write_text(text.replace("release: 0.28.0", "release: 0.28.0\nbogus: 1", 1), encoding="utf-8")
    with pytest.raises(Exception, match="bogus"):
        load_pack_file(copy, trusted=True, bundle=bundle)


def test_construct_refuses_data_of_another_shape() -> None:
    rule = yaml.safe_load((RULES / "0.28.0.yaml").read_text(encoding="utf-8"))["rules"][0]
    with pytest.raises(KeyError, match="nmae"):
        construct(Rule, {**rule, "nmae": "x"})
    with pytest.raises(KeyError, match="required"):
        construct(Rule, {k: v for k, v in rule.items() if k != "id"})
    with pytest.raises(TypeError):
        construct(Rule, ["not", "a", "mapping"])  # type: ignore[arg-type]


def test_constructed_strings_are_stripped_as_validation_strips_them() -> None:
    rule = yaml.safe_load((RULES / "0.28.0.yaml").read_text(encoding="utf-8"))["rules"][0]
    padded = {**rule, "message": "  " + rule["message"] + "\n"}
    assert construct(Rule, padded).message == Rule.model_validate(padded).message == rule["message"].strip()
