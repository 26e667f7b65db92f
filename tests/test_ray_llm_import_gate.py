"""``LLMConfig(engine_kwargs=...)`` is Ray Serve LLM's only when imported from
``ray.serve.llm`` or ``ray.llm``; then its file is read even when it names no vLLM."""

from __future__ import annotations

import pytest

from conftest import args_of, kinds, scan_text
from vllm_upgrade_check.model.facts import FactKind
from vllm_upgrade_check.sources.scanners.python.scanner import PythonSourceScanner

CALL = 'cfg = {}(engine_kwargs={{"swap_space": 4}})\n'


def _scan(text: str):
    return scan_text(PythonSourceScanner(), "app.py", text)


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from ray.serve.llm import LLMConfig\n", "LLMConfig"),
        ("from ray.serve.llm import LLMConfig as C\n", "C"),
        ("from ray.llm import LLMConfig\n", "LLMConfig"),
        ("import ray.serve.llm as rsl\n", "rsl.LLMConfig"),
        ("import ray.serve.llm\n", "ray.serve.llm.LLMConfig"),
        ("from ray import serve\n", "serve.llm.LLMConfig"),
        ("from ray.serve import llm\n", "llm.LLMConfig"),
    ],
)
def test_ray_serve_llm_configs_are_read_without_a_vllm_mention(imports: str, call: str) -> None:
    items = _scan(imports + "\n" + CALL.format(call))
    assert [(n, v, line) for n, v, line, _c in args_of(items)] == [("swap_space", "4", 3)]
    (launch,) = kinds(items, FactKind.LAUNCH)
    assert launch.location.line == 3


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from mylib.config import LLMConfig\nimport vllm\n", "LLMConfig"),
        ("import ray\nimport vllm\n", "ray.LLMConfig"),
        ("import ray\nimport vllm\n", "ray.tune.LLMConfig"),
        ("from ray.data.llm import LLMConfig\nimport vllm\n", "LLMConfig"),
        ("import other\n# ray.serve.llm in a comment\n", "other.LLMConfig"),
    ],
)
def test_another_llm_config_gives_no_vllm_facts(imports: str, call: str) -> None:
    items = _scan(imports + CALL.format(call))
    assert args_of(items) == [] and kinds(items, FactKind.LAUNCH) == []
