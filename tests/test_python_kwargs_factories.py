"""``**kw`` helpers: a function that passes its ``**kw`` to a vLLM engine (``def
make_llm(**kw): return LLM(model="m", **kw)``) or builds an argv from ``**opts``: a removed
keyword a call passes is reported at that call, and ``fix`` removes it there."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions

HEAD = "import subprocess\nfrom vllm import LLM, EngineArgs\n\n\n"


def _scan(tmp_path: Path, body: str):
    (tmp_path / "app.py").write_text(HEAD + body)
    return run_scan(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"))


@pytest.mark.parametrize(
    "factory",
    [
        'def make_llm(**kw):\n    return LLM(model="acme/m", **kw)\n',
        'def make_llm(*args, **kw):\n    llm = LLM(*args, enforce_eager=True, **kw)\n    return llm\n',
        'async def make_llm(**options):\n    return EngineArgs(model="acme/m", **options)\n',
    ],
)
def test_removed_keyword_is_reported_at_the_call(tmp_path: Path, factory: str) -> None:
    calls = "\n\nllm = make_llm(max_num_partial_prefills=4, seed=1)\nother = make_llm(max_model_len=4096)\n"
    report = _scan(tmp_path, factory + calls)
    line = 4 + factory.count("\n") + 3
    assert [(f.rule.id, f.location.path, f.location.line) for f in report.findings] == [("VUC0270-001", "app.py", line)]
    assert not [n for n in report.notes if "**" in n]


def test_dict_splat_at_the_call(tmp_path: Path) -> None:
    body = 'def make_llm(**kw):\n    return LLM(model="acme/m", **kw)\n\n\nopts = {"max_num_partial_prefills": 4}\nllm = make_llm(**opts)\n'
    report = _scan(tmp_path, body)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC0270-001", 9)]


def test_fix_removes_the_keyword_at_the_call(tmp_path: Path) -> None:
    body = 'def make_llm(**kw):\n    return LLM(model="acme/m", **kw)\n\n\nllm = make_llm(max_num_partial_prefills=4, seed=1)\n'
    _scan(tmp_path, body)
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.28.0", from_version="0.26.0"), bump=False)
    assert (tmp_path / "app.py").read_text() == HEAD + body.replace("max_num_partial_prefills=4, ", "")


def test_uncalled_factory_keeps_the_unresolved_note(tmp_path: Path) -> None:
    report = _scan(tmp_path, 'def make_llm(**kw):\n    return LLM(model="acme/m", **kw)\n')
    assert not report.findings
    assert any(n.startswith("unresolved: **kw at app.py:6") for n in report.notes)


def test_argv_built_from_kwargs_reports_at_the_call(tmp_path: Path) -> None:
    body = (
        "def start(model, **opts):\n"
        '    argv = ["vllm", "serve", model]\n'
        "    for k, v in opts.items():\n"
        "        argv += [f\"--{k.replace('_', '-')}\", str(v)]\n"
        "    subprocess.run(argv)\n\n\n"
        'start("acme/m", max_num_partial_prefills=4, port=8000)\n'
    )
    report = _scan(tmp_path, body)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC0270-001", 12)]


def test_factory_parameters_bound_by_the_call_are_the_engine_values(tmp_path: Path) -> None:
    body = (
        'def make_llm(model, kv="auto", **kw):\n'
        "    return LLM(model=model, kv_cache_dtype=kv, **kw)\n\n\n"
        'bad = make_llm("acme/m", kv="fp4_e9")\n'
        'good = make_llm("acme/m")\n'
    )
    report = _scan(tmp_path, body)
    assert [(f.rule.id, f.location.line) for f in report.findings] == [("VUC000-009", 6)]
    assert "kv_cache_dtype='fp4_e9'" in report.findings[0].rule.message
