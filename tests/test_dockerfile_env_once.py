"""An ``ENV`` instruction without ``$`` is parsed once for both what it sets in scope and
its ``env_var`` facts; one with ``$`` is read for its facts as written (the values not
expanded), its scope values expanded. Each fact is where its name is written."""

from __future__ import annotations

import pytest

from conftest import kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.sources.scanners.dockerfile import DockerfileScanner


def _env(text: str) -> list[tuple[str, str | None, int, int]]:
    facts = kinds(scan_text(DockerfileScanner(), "Dockerfile", text), FactKind.ENV_VAR)
    return [(f.name, f.value, f.location.line, f.location.column) for f in facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FROM vllm/vllm-openai:v0.8.0\nENV VLLM_USE_V1=1\n", [("VLLM_USE_V1", "1", 2, 5)]),
        (
            'FROM vllm/vllm-openai:v0.8.0\nENV VLLM_A=1 VLLM_B="x y"\n',
            [("VLLM_A", "1", 2, 5), ("VLLM_B", "x y", 2, 14)],
        ),
        (
            "FROM vllm/vllm-openai:v0.8.0\nENV VLLM_A=1 \\\n    VLLM_B=2\n",
            [("VLLM_A", "1", 2, 5), ("VLLM_B", "2", 3, 5)],
        ),
        ("FROM vllm/vllm-openai:v0.8.0\nENV VLLM_LEGACY some value\n", [("VLLM_LEGACY", "some value", 2, 5)]),
        ("FROM vllm/vllm-openai:v0.8.0\nARG A=7\nENV VLLM_X=$A\n", [("VLLM_X", "$A", 3, 5)]),
    ],
)
def test_env_facts_of_each_form(text: str, expected: list[tuple[str, str | None, int, int]]) -> None:
    assert _env(text) == expected


def test_a_plain_env_value_is_in_scope_for_later_steps() -> None:
    text = "FROM vllm/vllm-openai:v0.8.0\nENV SEQS=16\nRUN vllm serve m --max-num-seqs $SEQS\n"
    facts = scan_text(DockerfileScanner(), "Dockerfile", text)
    (seqs,) = [f for f in facts if f.kind == FactKind.ARG and f.name == "max_num_seqs"]
    assert seqs.value == "16"
