"""``reporters.jsontext.dumps_indented`` writes exactly what ``json.dumps(value, indent=2)``
writes, and refuses what it refuses."""

from __future__ import annotations

import json
from enum import Enum, IntEnum

import pytest

from vllm_upgrade_check.reporters.jsontext import dumps_indented


class Color(str, Enum):
    RED = "red"


class Level(IntEnum):
    HIGH = 3


VALUES = [
    {},
    [],
    (),
    "plain",
    "é ü 日本 \U0001f600 \ud800 \x00\x1f\t\n\r\"\\/",
    0,
    -12345678901234567890,
    1.5,
    1e300,
    -0.0,
    float("nan"),
    float("inf"),
    -float("inf"),
    True,
    False,
    None,
    Color.RED,
    Level.HIGH,
    {"a": {}, "b": [], "c": [{}], "d": [[], [[]]], "e": {"f": {"g": [1, "x", None]}}},
    {7: "int", 2.5: "float", True: "t", None: "n", "s": "str", Level.HIGH: "enum"},
    {False: 0, "k": (1, (2, 3), [])},
    [{"rule": "VUC001", "locations": [{"line": 1, "column": 2}], "fix": None}] * 3,
]


@pytest.mark.parametrize("indent", [2, 4, 0])
@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_same_text_as_json_dumps(value: object, indent: int) -> None:
    assert dumps_indented(value, indent) == json.dumps(value, indent=indent)


def test_a_report_shaped_value_round_trips() -> None:
    value = {"schema_version": 1, "findings": [{"id": f"R{i}", "line": i, "ok": i % 2 == 0} for i in range(50)]}
    text = dumps_indented(value)
    assert json.loads(text) == value
    assert text.splitlines()[2] == '  "findings": ['


def test_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indented({"a": {1, 2}})
    with pytest.raises(TypeError, match="keys must be"):
        dumps_indented({(1, 2): "tuple key"})
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(loop)
    shared = [1]
    assert dumps_indented([shared, shared]) == json.dumps([shared, shared], indent=2)  # shared is no loop
